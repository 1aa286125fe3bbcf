"""Tuning curves and their simultaneous confidence bands, from the ``opda`` package.

Two statistics of the best score after n trials (drawn at random from the score distribution F):

- the **mean** (Eq. 8 of Dodge et al. 2019): E[max of n draws];
- a **quantile** q (Lourie et al. 2024: the median, q = 0.5): the score the best of n draws reaches
  with probability 1 - q, F^-1(q^(1/n)) (mirrored when lower is better).

opda (Lourie et al.) builds simultaneous confidence bands for F; pushing each band's CDF through the
map from F to the tuning curve gives a band that holds for every budget n at once. The mean's band
needs the metric's bounds (the worst case puts the missing mass there); a quantile's does not.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from syw.analysis.expected_max import Budgets, check_budgets, check_scores, expected_max

if TYPE_CHECKING:
    from opda.nonparametric import EmpiricalDistribution

Statistic = float | None  # None: the mean (Eq. 8); q in (0, 1): that quantile of the best of n


def parse_statistic(text: str) -> Statistic:
    """``mean`` -> None, ``median`` -> 0.5, ``q=0.9`` -> 0.9; anything else raises ``ValueError``."""
    if text == "mean":
        return None
    if text == "median":
        return 0.5
    match = re.fullmatch(r"q=(0?\.\d+|0|1)", text)
    q = float(match.group(1)) if match else None
    if q is None or not 0.0 < q < 1.0:
        raise ValueError(f"{text!r} is not a statistic: use mean, median or q=Q with Q between 0 and 1 (q=0.9)")
    return q


def statistic_name(q: Statistic) -> str:
    """``mean``, ``median`` or ``q=0.9``: as ``--statistic`` spells it."""
    return "mean" if q is None else "median" if q == 0.5 else f"q={q:g}"


def curve_name(q: Statistic) -> str:
    """What the curve's y value is: ``Expected best of n``, ``Median best of n``, ``0.9-quantile of the best of n``."""
    return "Expected best of n" if q is None else "Median best of n" if q == 0.5 else f"{q:g}-quantile of the best of n"


def tuning_curve(scores, ns: Budgets, q: Statistic = None, *, maximize: bool = True) -> np.ndarray:
    """The statistic ``q`` of the best of n draws from the scores' empirical distribution at each n
    (q None: Eq. 8; else the empirical quantile F^-1(p) = min{v : F(v) >= p} at p = q^(1/n))."""
    arr, budgets = check_scores(scores), check_budgets(ns)
    if q is None:
        return expected_max(arr, budgets, maximize=maximize)
    values, counts = np.unique(arr, return_counts=True)
    level = q ** (1.0 / budgets) if maximize else 1.0 - (1.0 - q) ** (1.0 / budgets)
    # F(v) = count / N exactly, in integers: a float cumulative sum can miss F(v) = p by an ulp
    first = np.searchsorted(np.cumsum(counts), level * arr.size * (1.0 - 1e-12), side="left")
    return values[np.minimum(first, values.size - 1)]


def confidence_bands(
    scores,
    ns: Budgets,
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.0, 1.0),
    maximize: bool = True,
    method: str = "ks",
    seed: int = 0,
    q: Statistic = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower band, point estimate and upper band of the tuning curve (``q``: see :func:`tuning_curve`).

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
    if q is None and not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError("the mean's band needs finite bounds: the worst case puts the missing mass there")
    from opda.nonparametric import EmpiricalDistribution  # here: opda (and scipy.stats) take a second to import

    cdf_low, point, cdf_high = EmpiricalDistribution.confidence_bands(
        arr, confidence, a=low, b=high, method=method, generator=np.random.default_rng(seed), n_jobs=1
    )
    # The lower CDF band puts mass higher up, so it gives the higher curve, for the
    # best of n and the worst of n alike.
    minimize = not maximize

    def curve(dist: EmpiricalDistribution) -> np.ndarray:
        if q is None:
            return np.asarray(dist.average_tuning_curve(budgets, minimize=minimize), dtype=float)
        return np.asarray(dist.quantile_tuning_curve(budgets, q=q, minimize=minimize), dtype=float)

    low, estimate, high = curve(cdf_high), tuning_curve(arr, budgets, q, maximize=maximize), curve(cdf_low)
    # opda's quantiles sum the CDF in floats; an ulp there must not put the estimate outside its band
    return np.minimum(low, estimate), estimate, np.maximum(high, estimate)
