"""Score distributions with a known tuning curve, for coverage simulations: normal mixtures with
their exact CDF, the mean of the best of n (E[max] = lo + integral of 1 - F^n, by quadrature on a
fine grid) and its quantiles (F^-1(q^(1/n)), by root finding)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats


@dataclass(frozen=True)
class Mixture:
    """A mixture of normals: (weight, mean, sd) per component."""

    parts: tuple[tuple[float, float, float], ...]

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        weights = np.array([w for w, _, _ in self.parts])
        pick = rng.choice(len(self.parts), size=size, p=weights / weights.sum())
        means, sds = (np.array([p[i] for p in self.parts]) for i in (1, 2))
        return rng.normal(means[pick], sds[pick])

    def cdf(self, y):
        return sum(w * stats.norm.cdf(y, m, s) for w, m, s in self.parts)

    def _range(self) -> tuple[float, float]:
        return min(m - 12 * s for _, m, s in self.parts), max(m + 12 * s for _, m, s in self.parts)

    def mean_curve(self, ns) -> np.ndarray:
        """E[max of n draws] = lo + integral_lo^hi (1 - F(y)^n) dy."""
        lo, hi = self._range()
        y = np.linspace(lo, hi, 400_001)
        cdf = self.cdf(y)
        return np.array([lo + np.trapezoid(1.0 - cdf ** n, y) for n in np.atleast_1d(ns)])

    def quantile_curve(self, ns, q: float) -> np.ndarray:
        """The q-quantile of the max of n draws: F^-1(q^(1/n))."""
        lo, hi = self._range()
        return np.array([optimize.brentq(lambda y, p=q ** (1.0 / n): self.cdf(y) - p, lo, hi, xtol=1e-12)
                         for n in np.atleast_1d(ns)])


STEADY = Mixture(((1.0, 0.35, 0.03),))  # a family whose every assignment works (LR-like)
SPREAD = Mixture(((1.0, 0.33, 0.05),))  # a worse mean, a longer upper tail: overtakes at n = 4
BIMODAL = Mixture(((0.35, 0.25, 0.01), (0.65, 0.38, 0.015)))  # a third at chance level (SST-5's CNN-like)
