"""Scores per model family for a figure: from our trial records or from the authors' published files."""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.floors import Floor, apply_floor
from syw.analysis.group import Group
from syw.core.errors import DataError, DataMissingError
from syw.core.paths import REPO
from syw.core.records import load_study as load_records
from syw.curve.table import finite_column
from syw.data.fetch import fetch, file_digest
from syw.experiments.study import Study, load_study
from syw.figures.specs import URL, FigureSpec, PaperFile

PAPER_DIR = REPO / "results" / "paper"
AUTHORS_SUBDIR = "authors_trials"  # the authors' files in the data folder ($SYW_DATA_DIR)


def has_records(results: Path, study: str) -> bool:
    """Whether ``results/<study>`` holds a family's records (``<family>.jsonl``; tuner runs and reseeds lie in subfolders)."""
    return any((Path(results) / study).glob("*.jsonl"))


def study_with_records(results: Path, full: str, reduced: str | None) -> str:
    """The study a figure draws: ``full`` when it has records, else ``reduced`` when that has; else a
    ``FileNotFoundError`` naming both folders and the command that writes each (``full`` alone without a reduced study)."""
    if has_records(results, full) or reduced is None:
        return full
    if has_records(results, reduced):
        return reduced
    raise FileNotFoundError(f"no trial records in {Path(results) / full} nor in {Path(results) / reduced}: run "
                            f"`syw run study={reduced}` (sized for a 2-core CPU) or study={full} (the paper's)")


def study_rows(study: str, results_dir: Path = REPO / "results") -> tuple[dict[str, pd.DataFrame], dict[str, int]]:
    """The ok trials of each family of ``study`` (``results/<study>/<family>.jsonl``) and the failed ones per family.

    Every family of the study must have ok trials with finite values and durations: a family file
    that is missing raises ``FileNotFoundError``, one that is empty or holds no ok trial or a bad
    number raises :class:`DataError`, each naming the file. A figure never leaves a family out.
    A value beyond the study's floor (``study.floor``) counts at the floor; ``raw_value`` keeps the recorded one.
    Read and floored once per process while the records files stay the same; each call gets its own copies.
    """
    folder = Path(results_dir) / study
    parts, failed = _rows(load_study(study), folder, _stamp(folder))
    return {name: part.copy() for name, part in parts.items()}, dict(failed)


def _stamp(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """Each records file of ``folder`` (absolute, so a relative folder read from elsewhere differs), its size and
    modification time: what :func:`_rows` is cached by."""
    return tuple((str(p.absolute()), s.st_size, s.st_mtime_ns) for p in sorted(folder.glob("*.jsonl")) for s in [p.stat()])


@functools.lru_cache(maxsize=16)
def _rows(study: Study, folder: Path, stamp: tuple[tuple[str, int, int], ...]) -> tuple[dict[str, pd.DataFrame], dict[str, int]]:
    """:func:`study_rows` of the records files ``stamp`` names."""
    frame, failed = load_records(folder)
    parts = {}
    for name in study.families:
        path = folder / f"{name}.jsonl"
        part = frame[frame["family"] == name]
        if part.empty and not path.is_file():
            raise FileNotFoundError(f"{path}: no records of family {name!r} of study {study.name} "
                                    f"(syw run study={study.name} runs them)")
        if part.empty:
            held = f"{failed[name]} failed trial(s)" if failed.get(name) else "no complete record"
            raise DataError(f"{path}: no ok trial of family {name!r}; the file holds {held}")
        part = part.set_axis([f"trial {t}" for t in part["trial"]])
        for column in ("value", "duration_seconds"):
            finite_column(part, column, str(path))
        parts[name] = floored(part, study.floor, study.maximize)
    return parts, failed


def floored(part: pd.DataFrame, floor: Floor | None, maximize: bool) -> pd.DataFrame:
    """``part`` with each ``value`` beyond ``floor`` set to it, the recorded value kept as ``raw_value``."""
    values, _ = apply_floor(part["value"].to_numpy(float), None if floor is None else floor.value, maximize=maximize)
    return part.assign(raw_value=part["value"].to_numpy(float), value=values)


def floored_counts(parts: dict[str, pd.DataFrame]) -> dict[str, int]:
    """Per family of :func:`study_rows`: how many ok trials count at the study's floor instead of their recorded value."""
    return {name: int((part["value"] != part["raw_value"]).sum()) for name, part in parts.items()}


def floor_text(study: str, counts: dict[str, int]) -> str | None:
    """The study's floor and how many trials of each family count at it (:func:`floored_counts`, or the
    authors' counts in :func:`paper_floor_text`), or None."""
    config = load_study(study)
    if config.floor is None:
        return None
    counted = "; ".join(f"{name} {n}" for name, n in counts.items() if n) or "none"
    return f"Floor (study.floor): {config.floor.describe(config.maximize)}; trials counted at it: {counted}."


_SAID: set[str] = set()  # the notes this process printed: a study's groups are read once per figure or claim


def _once(note: str) -> None:
    """Print ``note`` on stderr the first time this process meets it."""
    if note not in _SAID:
        _SAID.add(note)
        print(note, file=sys.stderr)


def from_records(study: str, results_dir: Path = REPO / "results", labels: dict[str, str] | None = None) -> list[Group]:
    """Our groups: ok trials of results/<study>/<family>.jsonl (see :func:`study_rows`), labelled by each family file."""
    config = load_study(study)
    parts, failed = study_rows(study, results_dir)
    for name, count in failed.items():
        _once(f"note: {count} failed trial(s) of {study}/{name} are not part of its curve")
    floor = config.floor
    for name, count in floored_counts(parts).items():
        if count:
            _once(f"note: {count} trial(s) of {study}/{name} count at the floor {floor.value:g} ({floor.rule})")
    groups = []
    for name, part in parts.items():
        label = (labels or {}).get(name) or config.family(name).label
        groups.append(Group(name, part["value"].to_numpy(float), part["duration_seconds"].to_numpy(float), label))
    return groups


def shared_paper_file(paper: PaperFile) -> Path | None:
    """``$SYW_DATA_DIR/authors_trials/<name>`` when ``SYW_DATA_DIR`` is set and holds the file, else None.

    The data folder beside a clone holds the authors' files for machines without network (CI):
    they are read there, in place, before any download is tried.
    """
    root = os.environ.get("SYW_DATA_DIR")
    path = Path(root) / AUTHORS_SUBDIR / paper.name if root else None
    return path if path is not None and path.is_file() else None


def ensure_paper_file(paper: PaperFile, folder: Path = PAPER_DIR) -> Path:
    """The authors' file: ``folder/<name>`` when there, else the data folder's copy
    (:func:`shared_paper_file`), else downloaded into ``folder``; its sha256 is checked either way."""
    path = Path(folder) / paper.name
    url = URL.format(name=paper.name)
    if not path.is_file():
        path = shared_paper_file(paper) or path
    if not path.is_file():
        try:
            fetch(url, path, sha256=paper.sha256)
        except DataMissingError as err:
            raise DataMissingError(
                f"the authors' trial file {paper.name} is not in {folder} nor in $SYW_DATA_DIR/{AUTHORS_SUBDIR}/ "
                f"and could not be downloaded. Fetch {url} on a machine with internet and put it in {folder}/ "
                f"(sha256 {paper.sha256}), or set SYW_DATA_DIR to a folder holding {AUTHORS_SUBDIR}/{paper.name}."
            ) from err
    digest = file_digest(path, "sha256")
    if digest != paper.sha256:
        fix = "delete it to download again" if path.parent == Path(folder) else "replace it with the published file"
        raise DataError(f"{path} has sha256 {digest}, expected {paper.sha256}: not the published file; {fix}")
    return path


def paper_rows(spec: FigureSpec, folder: Path = PAPER_DIR) -> dict[str, pd.DataFrame]:
    """The rows of the authors' published TSV for each of the figure's families."""
    frame = pd.read_csv(ensure_paper_file(spec.paper, folder), sep="\t")
    out = {}
    for value, name in spec.paper.groups.items():
        out[name] = frame[frame[spec.paper.group_column].astype(str) == value]
        if out[name].empty:
            raise DataError(f"{spec.paper.name}: no rows with {spec.paper.group_column} == {value!r}")
    return out


def from_paper(spec: FigureSpec, folder: Path = PAPER_DIR, labels: dict[str, str] | None = None) -> list[Group]:
    """The authors' groups for a figure, read from their published TSV (durations are placeholders for DGEM)."""
    return paper_groups(spec, paper_rows(spec, folder), labels)


def paper_groups(spec: FigureSpec, rows: dict[str, pd.DataFrame], labels: dict[str, str] | None = None) -> list[Group]:
    """The groups of rows :func:`paper_rows` read: each family's scores and durations. The authors' scores
    count at our study's floor (``study.floor``) by the rule our trials follow, so both are curves of one rule."""
    config = load_study(spec.study)
    scores = _paper_scores(spec, rows)
    groups = []
    for name, part in rows.items():
        durations = part[spec.paper.duration_column].to_numpy(float) if spec.paper.duration_column in part else None
        if durations is not None and np.all(durations == 1.0):
            durations = None  # placeholder durations (DGEM): no time axis
        label = (labels or {}).get(name) or config.family(name).label
        groups.append(Group(name, scores[name][0], durations, label))
    return groups


def _paper_scores(spec: FigureSpec, rows: dict[str, pd.DataFrame]) -> dict[str, tuple[np.ndarray, int]]:
    """Per family of :func:`paper_rows`: the authors' scores at our study's floor, and how many count at it."""
    config = load_study(spec.study)
    value = None if config.floor is None else config.floor.value
    return {name: apply_floor(part[spec.paper.metric_column].to_numpy(float), value, maximize=config.maximize)
            for name, part in rows.items()}


def paper_floor_text(spec: FigureSpec) -> str | None:
    """:func:`floor_text` for the authors' file of ``spec`` (read from :data:`PAPER_DIR`, as :func:`from_paper`)."""
    return floor_text(spec.study, {name: n for name, (_, n) in _paper_scores(spec, paper_rows(spec, PAPER_DIR)).items()})
