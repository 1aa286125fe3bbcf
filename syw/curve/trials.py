"""The trials of one source as :func:`syw.curve.sources.load_trials` returns them, and the table
the readers of per-step logs (MLflow, W&B, Lightning, TensorBoard) share: one row a logged step."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from syw.core.errors import DataError


@dataclass
class Trials:
    """The rows of one source. ``frame``'s index says where each row comes from (``line 3``, ``trial 4``)."""

    frame: pd.DataFrame
    source: str  # the file, folder or storage URL, as messages name it
    name: str  # the curve's name when no column splits the trials into groups
    directions: dict[str, str] = field(default_factory=dict)  # column -> "max"/"min" the source declares
    preferred: str | None = None  # the source's own score column (an Optuna study's value)
    notes: list[str] = field(default_factory=list)
    reports: bool = False  # one row a reported result (Ray Tune): reduce with :func:`per_trial`
    strategy: str | None = None  # the adaptive search that chose the trials (analysis.adaptive); None: random


class SeveralStudies(DataError):
    """A storage (Optuna's, or its journal) holding several studies, read without ``--study``: ``names`` says
    which, for ``syw.curve.prepare`` to read each (one group per study)."""

    def __init__(self, source: str, names: list[str]) -> None:
        super().__init__(f"{source}: {len(names)} studies ({', '.join(names)}); name one with --study")
        self.names = names


def step_rows(runs: list[dict], source: str, name: str, **kwargs) -> Trials:
    """One row per logged step of each run, for :func:`syw.curve.sources.per_trial` to reduce to one a trial
    (its best or last score). ``runs``, in the order the runs started, hold ``trial`` (the run's name),
    ``label`` (where it is, as messages name it), ``status``, ``fields`` (its hyperparameters and other
    values, one column each) and ``steps`` (a list of ``{metric: value}`` mappings, one per step);
    a run that logged no step is one row of its fields."""
    rows, labels = [], []
    for index, run in enumerate(runs, start=1):
        base = {**run["fields"], "trial": run["trial"], "trial_index": index, "status": run["status"]}
        for number, step in enumerate(run["steps"] or [{}], start=1):
            rows.append({**base, **step})
            labels.append(f"{run['label']}, step {number}" if run["steps"] else run["label"])
    return Trials(pd.DataFrame(rows, index=labels), source, name, reports=True, **kwargs)


def read_yaml(path: Path) -> Any:
    """A YAML file the readers take as it is written (MLflow's meta.yaml, Hydra's overrides, Lightning's
    hparams, W&B's config): what it holds, or :class:`DataError` naming the file when it is not YAML."""
    import yaml  # here: the light install's import of syw.analysis does not load PyYAML

    try:
        return yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: not YAML ({str(err).splitlines()[0]})") from None
