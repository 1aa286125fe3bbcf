"""Tuning curves and their simultaneous confidence bands, from the ``opda`` package.

The statistic of the best of n (the mean, Eq. 8, or a quantile) is a :class:`syw.analysis.statistic.Statistic`.
opda (Lourie et al.) builds simultaneous confidence bands for F; pushing each band's CDF through the
map from F to the tuning curve gives a band that holds for every budget n at once. The mean's band
needs the metric's bounds (the worst case puts the missing mass there); a quantile's does not.
"""
from __future__ import annotations

import numpy as np

from syw.analysis.expected_max import Budgets, check_budgets, check_scores
from syw.analysis.statistic import MEAN, Statistic


def confidence_bands(
    scores,
    ns: Budgets,
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.0, 1.0),
    maximize: bool = True,
    method: str = "ks",
    seed: int = 0,
    statistic: Statistic = MEAN,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower band, point estimate and upper band of the tuning curve of ``statistic``.

    ``bounds`` is the support of the metric (accuracy: (0, 1)); a quantile's band may take infinite
    bounds, and is then infinite where the data cannot bound it. ``method`` is one of opda's
    CDF-band methods ("dkw", "ks", "ld_equal_tailed", "ld_highest_density").
    """
    arr = check_scores(scores)
    budgets = check_budgets(ns)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    low, high = float(bounds[0]), float(bounds[1])
    if not low <= arr.min() <= arr.max() <= high:
        raise ValueError(f"scores must lie within bounds {bounds}, got [{arr.min()}, {arr.max()}]")
    if statistic.is_mean and not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError("the mean's band needs finite bounds: the worst case puts the missing mass there")
    from opda.nonparametric import EmpiricalDistribution  # here: opda (and scipy.stats) take a second to import

    cdf_low, point, cdf_high = EmpiricalDistribution.confidence_bands(
        arr, confidence, a=low, b=high, method=method, generator=np.random.default_rng(seed), n_jobs=1
    )
    # The lower CDF band puts mass higher up, so it gives the higher curve, for the
    # best of n and the worst of n alike.
    minimize = not maximize
    low = statistic.of_distribution(cdf_high, budgets, minimize=minimize)
    high = statistic.of_distribution(cdf_low, budgets, minimize=minimize)
    estimate = statistic.curve(arr, budgets, maximize=maximize)
    # opda's quantiles sum the CDF in floats; an ulp there must not put the estimate outside its band
    return np.minimum(low, estimate), estimate, np.maximum(high, estimate)
