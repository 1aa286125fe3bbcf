"""A toy model family for tests and benchmarks: a cheap noisy function of the sampled hyperparameters."""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from syw.core.context import TrialContext, TrialFailed, TrialOutcome
from syw.core.errors import DataError, DataMissingError
from syw.core.settings import resolve
from syw.data.inputs import note_input

SETTINGS = {
    "x": {"type": "float"},
    "width": {"type": "int"},
    "lr": {"type": "float", "min": 1e-12},
    "kind": {"values": ["a", "b", "c"]},
    "work_seconds": {"type": "float", "min": 0.0, "default": 0.0},  # how long a trial busies one core
    "noise": {"type": "float", "min": 0.0, "default": 0.0},  # the spread of the score
    "fail_trials": {"type": "list", "items": "int", "default": []},  # trial indices that fail on purpose
    "data_file": {"type": "str", "null": True, "default": None},
}


def _busy(seconds: float) -> None:
    """Occupy one core for ``seconds`` of wall time (stands in for training)."""
    end = time.perf_counter() + seconds
    x = 0.0
    while time.perf_counter() < end:
        for i in range(1000):
            x += math.sqrt(i)


def read_toy_data(path: Path) -> None:
    """The toy's data file (tests): a missing or empty one is a data error, as for a real reader."""
    if not path.is_file():
        raise DataMissingError(f"{path} is missing: put the toy data file there")
    note_input(str(path), path)  # before reading: the version noted is the one read
    if not path.read_text(errors="replace").strip():
        raise DataError(f"{path}:1: the toy data file is empty")


def train(params: dict, ctx: TrialContext) -> TrialOutcome:
    """Score in about [0, 1], best near x = 0.7, width = 6, lr = 1e-2, kind = "b", plus seeded noise."""
    params = resolve(params, SETTINGS)
    if params["data_file"]:
        read_toy_data(Path(params["data_file"]))
    if ctx.trial_index in set(params["fail_trials"]):
        raise TrialFailed(f"loss became NaN (trial {ctx.trial_index} is set to fail)")
    _busy(float(params["work_seconds"]))
    rng = np.random.default_rng(ctx.seed)
    score = (
        0.9
        - (params["x"] - 0.7) ** 2
        - 0.01 * abs(params["width"] - 6)
        - 0.02 * abs(math.log10(params["lr"]) + 2)
        - {"a": 0.05, "b": 0.0, "c": 0.1}[params["kind"]]
        + params["noise"] * rng.standard_normal()
    )
    return TrialOutcome(metric=float(score))
