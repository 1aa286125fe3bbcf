"""Lightning ``CSVLogger`` folders: ``<save_dir>/<name>/version_<N>/`` each one trial, its ``hparams.yaml`` as
``hparams.*`` columns and its ``metrics.csv`` one row a logged step (rows of one ``step`` merged: Lightning
writes each ``log`` call's metrics on a row of its own), reduced by ``per_trial`` (``--pick best|last``).
Trials are in version order (the order the logger created them)."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from syw.core.errors import DataError
from syw.curve.table import read_table
from syw.curve.trials import Trials, read_yaml, step_rows


def versions(path: Path) -> list[Path]:
    """The version folders under ``path`` (the logger's ``name`` folder, or one version), in version order."""
    if (path / "metrics.csv").is_file() and re.fullmatch(r"version_\d+", path.name):
        return [path]
    found = [p.parent for p in path.glob("version_*/metrics.csv") if re.fullmatch(r"version_\d+", p.parent.name)]
    found += [p for p in path.glob("version_*") if p.is_dir() and re.fullmatch(r"version_\d+", p.name)
              and (p / "hparams.yaml").is_file() and p not in found]
    return sorted(set(found), key=lambda p: int(p.name.split("_")[1]))


def _hparams(path: Path) -> dict:
    if not path.is_file():
        return {}
    loaded = read_yaml(path) or {}
    if not isinstance(loaded, dict):
        raise DataError(f"{path}: hparams.yaml is not a mapping of hyperparameters")
    return pd.json_normalize({"hparams": loaded}).iloc[0].to_dict()


def read_lightning(path: Path) -> Trials:
    """Every version folder of a CSVLogger under ``path`` (module doc). A version without a metrics.csv
    (a run that stopped before logging) is a trial that reported nothing."""
    runs = []
    for version in versions(path):
        metrics = version / "metrics.csv"
        steps, status = [], "ok"
        if metrics.is_file():
            frame = read_table(metrics)
            key = "step" if "step" in frame.columns else "epoch" if "epoch" in frame.columns else None
            merged = frame.groupby(key, sort=True).last() if key else frame
            steps = [{k: v for k, v in row.items() if pd.notna(v)} | ({key: step} if key else {})
                     for step, row in merged.iterrows()]
        else:
            status = "reported-nothing"
        runs.append({"trial": version.name, "label": f"{version.name}/metrics.csv", "status": status,
                     "fields": _hparams(version / "hparams.yaml"), "steps": steps})
    if not runs:
        raise FileNotFoundError(f"{path}: no version_<N>/metrics.csv (a Lightning CSVLogger folder)")
    return step_rows(runs, str(path), path.name if not path.name.startswith("version_") else path.parent.name)
