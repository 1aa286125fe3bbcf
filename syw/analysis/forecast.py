"""Forecast the expected maximum past the N observed trials from a fitted score distribution.

Eq. 8 at n > N only re-draws the N scores already seen, so it levels off at the best of them.
A forecast instead fits a parametric distribution to the N scores and reads its tuning curve
E[max of n draws] at any n, with a bootstrap interval (refit on resamples of the N scores):

- ``quadratic``: opda's quadratic distribution (Lourie et al.), the limit law of the best scores
  of random search on a smooth objective; fitted by maximum spacing, concave when maximizing.
  ``tail`` censors the scores at or below that quantile, as opda advises for fitting the tail.
- ``noisy_quadratic``: the same with additive normal noise (ten times slower to fit).
- ``normal``: a normal distribution fitted to the scores (a simple alternative).
- ``empirical``: no fit, Eq. 8 itself past N (the baseline a forecast must beat).

``docs/forecast_backtest.md`` measures these on the authors' published trials; read it before
trusting a forecast (:data:`VERDICT`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from syw.analysis.expected_max import Budgets, check_budgets, check_scores, expected_max

MODELS = ("quadratic", "noisy_quadratic", "normal", "empirical")
MIN_TRIALS = 5
VERDICT = (
    "Not recommended: on the authors' published trials (docs/forecast_backtest.md) the forecast from "
    "10 or 20 trials was no closer to the full-N expected maximum than Eq. 8 on those same trials "
    "(which levels off at their best score), and its 90% intervals held the full-N value less often "
    "than 90% of the time; read it as a rough guide only."
)
_Z = np.linspace(-9.0, 9.0, 4001)  # grid for the normal's expected maximum


@dataclass(frozen=True)
class Forecast:
    """Expected max of n draws under a distribution fitted to the scores, with a bootstrap interval."""

    model: str
    ns: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float  # the interval's nominal coverage
    resamples: int  # bootstrap resamples whose fit succeeded
    fitted: str  # the distribution fitted to all scores

    def rule(self) -> str:
        """The forecast's construction in words."""
        fitted = {"quadratic": "opda's quadratic distribution, fitted by maximum spacing",
                  "noisy_quadratic": "opda's noisy quadratic distribution, fitted by maximum spacing",
                  "normal": "a normal distribution with the scores' mean and SD",
                  "empirical": "the empirical distribution of the N scores (Eq. 8 read past N)"}[self.model]
        interval = (f"the middle {self.level:.0%} of the same forecast refitted on {self.resamples} bootstrap "
                    "resamples of the N scores" if self.resamples else "no interval")
        return (f"expected best of n draws from {fitted} ({self.fitted}); interval: {interval}.")


def _oriented(scores, maximize: bool) -> np.ndarray:
    arr = check_scores(scores)
    return arr if maximize else -arr


def _fit(ys: np.ndarray, model: str, tail: float, seed: int):
    """The distribution ``model`` fitted to oriented scores ``ys`` (higher is better)."""
    # imported here, as in the functions below: opda and scipy.stats take a second, and only a forecast needs them
    from opda.parametric import NoisyQuadraticDistribution, QuadraticDistribution
    from scipy import stats

    if model == "empirical":
        return ys
    if model == "normal":
        return stats.norm(loc=ys.mean(), scale=ys.std(ddof=1))
    cls = QuadraticDistribution if model == "quadratic" else NoisyQuadraticDistribution
    threshold = np.quantile(ys, tail) if tail > 0 else -np.inf
    with warnings.catch_warnings():  # the optimizer's convergence chatter; a failed fit raises
        warnings.simplefilter("ignore")
        return cls.fit(ys, limits=(threshold, np.inf), constraints={"convex": False},
                       generator=np.random.default_rng(seed))


def _curve(dist, model: str, ns: np.ndarray) -> np.ndarray:
    from scipy import stats

    if model == "empirical":
        return expected_max(dist, ns)
    if model == "normal":  # E[max of n] = mu + sd * integral of z d(Phi(z)^n)
        loc, scale = dist.mean(), dist.std()
        density = stats.norm.pdf(_Z)[None, :] * stats.norm.cdf(_Z)[None, :] ** (ns[:, None] - 1)
        return loc + scale * np.trapezoid(_Z[None, :] * ns[:, None] * density, _Z, axis=1)
    return np.asarray(dist.average_tuning_curve(ns, minimize=False), dtype=float)


def _describe(dist, model: str, maximize: bool) -> str:
    if model == "empirical":
        return f"the {dist.size} scores themselves"
    if model == "normal":
        return f"mean {dist.mean() * (1 if maximize else -1):.4g}, SD {dist.std():.3g}"
    sign = 1 if maximize else -1
    lo, hi = sorted((sign * dist.a, sign * dist.b))
    noise = f", noise SD {dist.o:.3g}" if model == "noisy_quadratic" else ""
    return f"support [{lo:.4g}, {hi:.4g}], {dist.c:g} effective hyperparameters{noise}"


def _check(model: str, level: float, tail: float) -> None:
    if model not in MODELS:
        raise ValueError(f"unknown forecast model {model!r} (use one of {', '.join(MODELS)})")
    if not 0.0 < level < 1.0:
        raise ValueError(f"the interval's level must be in (0, 1), got {level}")
    if not 0.0 <= tail < 1.0:
        raise ValueError(f"tail must be a quantile in [0, 1), got {tail}")


def _resampled(ys: np.ndarray, budgets: np.ndarray, model: str, tail: float, resamples: int, seed: int) -> list:
    """The forecast curve refitted to each bootstrap resample of ``ys``; resamples without a fit left out."""
    rng = np.random.default_rng(seed)
    curves = []
    for _ in range(int(resamples)):
        sample = rng.choice(ys, ys.size)
        if np.ptp(sample) == 0:
            continue
        try:
            curves.append(_curve(_fit(sample, model, tail, seed), model, budgets))
        except (RuntimeError, ValueError, FloatingPointError):  # the optimizer found no fit
            continue
    return curves


def forecast(
    scores,
    ns: Budgets,
    *,
    model: str = "quadratic",
    maximize: bool = True,
    tail: float = 0.0,
    level: float = 0.9,
    resamples: int = 100,
    seed: int = 0,
) -> Forecast:
    """Expected max of n draws for each n in ``ns`` under ``model`` fitted to ``scores`` (see the module doc).

    Needs at least :data:`MIN_TRIALS` scores, not all equal. Resamples whose fit fails are left out;
    if more than a tenth fail, the interval is NaN (too few fits to trust).
    """
    _check(model, level, tail)
    ys = _oriented(scores, maximize)
    budgets = check_budgets(ns)
    if ys.size < MIN_TRIALS or np.ptp(ys) == 0:
        raise ValueError(f"a forecast needs at least {MIN_TRIALS} scores that are not all equal, got {ys.size} "
                         f"({np.unique(ys).size} distinct)")
    dist = _fit(ys, model, tail, seed)
    mean = _curve(dist, model, budgets)
    curves = _resampled(ys, budgets, model, tail, resamples, seed)
    if resamples and len(curves) >= 0.9 * resamples:
        low, high = np.quantile(np.array(curves), [(1 - level) / 2, (1 + level) / 2], axis=0)
    else:
        low = high = np.full(budgets.size, np.nan)
    sign = 1.0 if maximize else -1.0
    if not maximize:
        low, high = high, low
    return Forecast(model, budgets, sign * mean, sign * low, sign * high, level, len(curves),
                    _describe(dist, model, maximize))
