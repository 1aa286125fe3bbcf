"""A seeded, reduced form of the inference calibration (issues 62 and 73): the bar's inequalities at 95%.

On 2 x 50 trials per family: no wrong leader anywhere in the simultaneous claims in more than 5% of
resamples, and a leader named on two samples of one pool in at most 5% (each plus two Monte-Carlo SEs);
the better family named at n = 1 at least 0.85 times as often as by Welch's t-test, with pre-stated
n = 1 (the same test there, so exactly as often) and by the default simultaneous claims (n = 1 first);
the crossed bands name it in none; two curves a margin apart certified equivalent within it in at
most 5%. The synthetic families always run; opda's public searches (``$SYW_OPDA_DATA``, see
``benchmarks/inference.py``) when present.
"""
import os
from pathlib import Path

import numpy as np
import pytest

from benchmarks.inference import families, run_cell

REPS = 160
MARGIN = 2 * (0.05 * 0.95 / REPS) ** 0.5  # two Monte-Carlo standard errors at a rate of 0.05


def check_bar(row: dict[str, float], name: str, cover: bool = True) -> None:
    assert row["sim_fwe"] <= 0.05 + MARGIN, name
    assert row["null_sim"] <= 0.05 + MARGIN, name
    assert row["null_at1"] <= 0.05 + MARGIN, name
    assert row["at_P1"] >= 0.85 * row["welch_P1"], name
    assert row["sim_P1"] >= 0.85 * row["welch_P1"], name  # issue 73: 0.93-1.00 here; step-down 0.83 (bimodal) to 1.00
    assert row["bands_P1"] <= row["sim_P1"], name
    assert max(row["equiv_err1"], row["equiv_err5"]) <= 0.05 + MARGIN, name
    if cover:  # not for a long upper tail: there the budget interval covers about 91% (see the benchmark)
        assert row["budget_cov"] >= 0.95 - MARGIN, name


@pytest.mark.slow
def test_bar_on_synthetic_families():
    fams = {f.name: f for f in families(seed=0, pool=50_000, data=None)}
    for k, name in enumerate(("normal", "bimodal", "crossing")):
        row = run_cell(fams[name], 50, REPS, np.random.default_rng([62, k]))
        check_bar(row, name, cover=name != "crossing")
        if name != "crossing":
            assert row["welch_P1"] >= 0.5 and row["bands_P1"] == 0.0, name


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SYW_OPDA_DATA"), reason="opda's tuning data: set SYW_OPDA_DATA")
def test_bar_on_public_searches():
    fams = families(seed=0, pool=1000, data=Path(os.environ["SYW_OPDA_DATA"]))
    real = [f for f in fams if f.name in ("deberta-best", "imagenet")]
    assert real, "no opda tuning files in $SYW_OPDA_DATA"
    for k, fam in enumerate(real):
        check_bar(run_cell(fam, 50, REPS, np.random.default_rng([62, 10 + k])), fam.name)
