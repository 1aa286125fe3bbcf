"""The expected test score of the trial that validation selects among n (the winner's curse).

Eq. 8 is the expected *validation* score of the best of n trials; the model a reader deploys is the
one validation picks, and what it scores on held-out test data is lower on average: the best of n
validation scores is biased upward by the selection. With n trials drawn at random (with replacement)
from the N observed, each with its validation score v_i and test score t_i, the trial selected is one
with the best validation score drawn (ties broken uniformly at random), so

    E[test of the selected | n] = sum over distinct v of P(best of n validation scores = v) * mean(t_i : v_i = v)

with P from Eqs. 5-7, and its SD from E[t^2 | v] likewise. At n = 1 it is the mean test score; as n
grows it tends to the mean test score of the trials tied at the best validation score.
"""
from __future__ import annotations

import numpy as np

from syw.analysis.expected_max import Budgets, check_budgets, check_scores


def selected_test(validation, test, ns: Budgets, *, maximize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Mean and SD of the test score of the trial validation selects among n, at each n (module doc).

    ``maximize`` is the validation score's direction (the selection); the test scores are averaged as they are.
    """
    val, tst = check_scores(validation), check_scores(test)
    if val.size != tst.size:
        raise ValueError(f"validation and test scores differ in length ({val.size} and {tst.size})")
    budgets = check_budgets(ns)
    oriented = val if maximize else -val
    values, where, counts = np.unique(oriented, return_inverse=True, return_counts=True)
    mean_test = np.bincount(where, weights=tst) / counts  # mean test score of the trials tied at each value
    mean_square = np.bincount(where, weights=tst**2) / counts
    cdf = np.cumsum(counts) / counts.sum()  # P(V <= v), Eq. 7
    below = np.concatenate(([0.0], cdf[:-1]))
    pmf = cdf[None, :] ** budgets[:, None] - below[None, :] ** budgets[:, None]  # Eqs. 5-6
    mean = pmf @ mean_test
    return mean, np.sqrt(np.maximum(pmf @ mean_square - mean**2, 0.0))


RULE = ("**Test score of the trial validation picks** (the winner's curse; `analysis/selected.py`): of n trials "
        "drawn at random from the N, the one with the best validation score (ties broken at random) is deployed; "
        "its expected test score is the sum over distinct validation scores v of P(best of n = v) (Eqs. 5-7) times "
        "the mean test score of the trials at v. The gap to Eq. 8 is how much the best validation score of n "
        "overstates what the selected model scores on new data.")
