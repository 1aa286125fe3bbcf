"""Simultaneous confidence bands for the expected-max curve, from the ``opda`` package.

opda (Lourie et al.) builds simultaneous confidence bands for the CDF of the
score distribution; pushing each band's CDF through the expected-max map gives a
band that holds for every budget n at once.
"""
from __future__ import annotations

import numpy as np
from opda.nonparametric import EmpiricalDistribution

from analysis.expected_max import Budgets, check_budgets, check_scores


def confidence_bands(
    scores,
    ns: Budgets,
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.0, 1.0),
    maximize: bool = True,
    method: str = "ks",
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower band, point estimate (Eq. 8) and upper band of the expected max at each n.

    ``bounds`` is the support of the metric (accuracy: (0, 1)); the bands need it
    because the worst case puts the missing mass there. ``method`` is one of opda's
    CDF-band methods ("dkw", "ks", "ld_equal_tailed", "ld_highest_density").
    """
    arr = check_scores(scores)
    budgets = check_budgets(ns)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    low, high = float(bounds[0]), float(bounds[1])
    if not low <= arr.min() <= arr.max() <= high:
        raise ValueError(f"scores must lie within bounds {bounds}, got [{arr.min()}, {arr.max()}]")
    cdf_low, point, cdf_high = EmpiricalDistribution.confidence_bands(
        arr, confidence, a=low, b=high, method=method, generator=np.random.default_rng(seed), n_jobs=1
    )
    # The lower CDF band puts mass higher up, so it gives the higher curve, for the
    # expected maximum and the expected minimum alike.
    minimize = not maximize
    return (
        np.asarray(cdf_high.average_tuning_curve(budgets, minimize=minimize), dtype=float),
        np.asarray(point.average_tuning_curve(budgets, minimize=minimize), dtype=float),
        np.asarray(cdf_low.average_tuning_curve(budgets, minimize=minimize), dtype=float),
    )
