"""Scores per model family for a figure: from our trial records or from the authors' published files."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from data.download import DataMissingError, fetch, file_digest
from experiments.records import load_study
from experiments.space import CONF_DIR, REPO, load_family
from figures.specs import URL, FigureSpec, PaperFile

PAPER_DIR = REPO / "results" / "paper"


@dataclass(frozen=True)
class Group:
    """The observed validation scores (and training durations) of one model family."""

    family: str
    label: str
    scores: np.ndarray
    durations: np.ndarray | None  # seconds per trial; None when not real (e.g. placeholders)

    @property
    def mean_duration(self) -> float | None:
        return None if self.durations is None else float(np.mean(self.durations))


def study_config(study: str) -> dict:
    """The ``study`` block and trial count of conf/study/<study>.yaml."""
    path = CONF_DIR / "study" / f"{study}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"there is no study {study!r} (no {path.relative_to(REPO)})")
    raw = OmegaConf.to_container(OmegaConf.load(path))
    return {**raw["study"], "trials": raw.get("trials")}


def from_records(study: str, results_dir: Path = REPO / "results", labels: dict[str, str] | None = None) -> list[Group]:
    """Our groups: ok trials of results/<study>/<family>.jsonl, labelled by each family file."""
    cfg = study_config(study)
    frame, failed = load_study(Path(results_dir) / study)
    for name, count in failed.items():
        print(f"note: {count} failed trial(s) of {study}/{name} are not part of its curve", file=sys.stderr)
    groups = []
    for name, stem in cfg["families"].items():
        part = frame[frame["family"] == name]
        if part.empty:
            continue
        label = (labels or {}).get(name) or load_family(stem, name=name).label
        groups.append(Group(name, label, part["value"].to_numpy(float), part["duration_seconds"].to_numpy(float)))
    if not groups:
        raise FileNotFoundError(f"no ok trials of {', '.join(cfg['families'])} in {Path(results_dir) / study}")
    return groups


def ensure_paper_file(paper: PaperFile, folder: Path = PAPER_DIR) -> Path:
    """The authors' file in ``folder``, downloaded when missing; its sha256 is checked either way."""
    path = Path(folder) / paper.name
    url = URL.format(name=paper.name)
    if not path.is_file():
        try:
            fetch(url, path, sha256=paper.sha256)
        except DataMissingError as err:
            raise DataMissingError(
                f"the authors' trial file {paper.name} is not in {folder} and could not be downloaded. "
                f"Fetch {url} on a machine with internet and put it in {folder}/ (sha256 {paper.sha256})."
            ) from err
    digest = file_digest(path, "sha256")
    if digest != paper.sha256:
        raise ValueError(f"{path} has sha256 {digest}, expected {paper.sha256}: not the published file; delete it to download again")
    return path


def paper_rows(spec: FigureSpec, folder: Path = PAPER_DIR) -> dict[str, pd.DataFrame]:
    """The rows of the authors' published TSV for each of the figure's families."""
    frame = pd.read_csv(ensure_paper_file(spec.paper, folder), sep="\t")
    out = {}
    for value, name in spec.paper.groups.items():
        out[name] = frame[frame[spec.paper.group_column].astype(str) == value]
        if out[name].empty:
            raise ValueError(f"{spec.paper.name}: no rows with {spec.paper.group_column} == {value!r}")
    return out


def from_paper(spec: FigureSpec, folder: Path = PAPER_DIR, labels: dict[str, str] | None = None) -> list[Group]:
    """The authors' groups for a figure, read from their published TSV (durations are placeholders for DGEM)."""
    cfg = study_config(spec.study)
    groups = []
    for name, part in paper_rows(spec, folder).items():
        durations = part[spec.paper.duration_column].to_numpy(float) if spec.paper.duration_column in part else None
        if durations is not None and np.all(durations == 1.0):
            durations = None  # placeholder durations (DGEM): no time axis
        label = (labels or {}).get(name) or load_family(cfg["families"][name], name=name).label
        groups.append(Group(name, label, part[spec.paper.metric_column].to_numpy(float), durations))
    return groups
