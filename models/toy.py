"""A toy model family for tests and benchmarks: a cheap noisy function of the sampled hyperparameters."""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from data.download import DataMissingError
from experiments.context import TrialContext, TrialFailed, TrialOutcome


def _busy(seconds: float) -> None:
    """Occupy one core for ``seconds`` of wall time (stands in for training)."""
    end = time.perf_counter() + seconds
    x = 0.0
    while time.perf_counter() < end:
        for i in range(1000):
            x += math.sqrt(i)


def train(params: dict, ctx: TrialContext) -> TrialOutcome:
    """Score in about [0, 1], best near x = 0.7, width = 6, lr = 1e-2, kind = "b", plus seeded noise."""
    if params.get("data_file") and not Path(params["data_file"]).is_file():  # tests: a data file not there yet
        raise DataMissingError(f"{params['data_file']} is missing: put the toy data file there")
    if ctx.trial_index in set(params.get("fail_trials", [])):
        raise TrialFailed(f"loss became NaN (trial {ctx.trial_index} is set to fail)")
    _busy(float(params.get("work_seconds", 0.0)))
    rng = np.random.default_rng(ctx.seed)
    score = (
        0.9
        - (params["x"] - 0.7) ** 2
        - 0.01 * abs(params["width"] - 6)
        - 0.02 * abs(math.log10(params["lr"]) + 2)
        - {"a": 0.05, "b": 0.0, "c": 0.1}[params["kind"]]
        + params.get("noise", 0.0) * rng.standard_normal()
    )
    return TrialOutcome(metric=float(score))
