"""What a training function receives and returns.

A model family names its training function in its search-space file
(``train: {_target_: syw.models.cnn.train}``). The runner calls it as
``train(params, ctx)`` where ``params`` is the flat dict of the family's fixed
settings plus this trial's sampled assignment, and ``ctx`` is a
:class:`TrialContext`. It returns a :class:`TrialOutcome` (or a dict with the
same keys) and raises on failure; :class:`TrialFailed` marks an expected
failure such as a NaN loss. Either way the runner records the trial as
``failed`` and the study goes on.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class TrialFailed(RuntimeError):
    """A trial that cannot produce a validation score (e.g. its loss became NaN)."""


@dataclass(frozen=True)
class TrialContext:
    """Everything about a trial that is not a hyperparameter."""

    study: str
    family: str
    trial_index: int
    seed: int  # per-trial seed, derived from (study seed, family, trial index)
    data_dir: Path  # root of the data sets (e.g. <data_dir>/sst/train.txt)
    cache_dir: Path  # where readers may cache derived files (vocab-restricted GloVe, ...)
    dataset: Mapping[str, Any] = field(default_factory=dict)  # the study's `dataset` block
    device: str = "cpu"  # "cuda" when the trial was given a GPU
    output_dir: Path | None = None  # the study's results folder, for files a trial writes beside its record

    def output_path(self, kind: str, suffix: str) -> Path | None:
        """``<output_dir>/<kind>/<family>-<trial>.<suffix>`` (e.g. a trial's predictions), or None
        when the runner gave no output folder (a direct call)."""
        if self.output_dir is None:
            return None
        return Path(self.output_dir) / kind / f"{self.family}-{self.trial_index}.{suffix}"


@dataclass
class TrialOutcome:
    """The result of one trial: the best validation value of the study's metric, the best epoch's
    other metrics (a held-out test score of the selected epoch among them), and every epoch's."""

    metric: float
    best_epoch: int | None = None  # 1-based; None for families without epochs
    epochs_run: int | None = None
    epoch_seconds: list[float] = field(default_factory=list)
    extra_metrics: dict[str, float] = field(default_factory=dict)  # recorded beside the metric (F1 beside EM)
    epoch_metrics: list[dict[str, float]] = field(default_factory=list)  # every epoch's validation metrics, in order
    inputs_sha256: dict[str, str] = field(default_factory=dict)  # files read (name -> sha256), e.g. the weights or the data file chosen
    outputs: dict[str, str] = field(default_factory=dict)  # files written, relative to the study's results folder
    # epochs after which a stopped trial went on from its saved state (syw.models.resume); empty when it ran through
    resumed_after_epochs: list[int] = field(default_factory=list)
