"""Group-sequential boundaries from Lan-DeMets alpha-spending functions (issue 74).

A statistic looked at K times, at information fractions 0 < t_1 < ... < t_K <= 1, has under the null the
canonical joint law of Jennison and Turnbull (2000, section 3.1): Z_k = S_k / sqrt(t_k) with S a Brownian
motion, so corr(Z_j, Z_k) = sqrt(t_j / t_k) (independent increments). An alpha-spending function alpha(t)
(Lan and DeMets 1983) says how much of the two-sided error may be spent by fraction t; the boundary c_k is
the one with

    P(|Z_j| < c_j for j < k, |Z_k| >= c_k) = alpha(t_k) - alpha(t_(k-1)),

so whatever the number and spacing of looks, P(some |Z_k| >= c_k) = alpha(t_K) <= alpha. Spending
functions (two-sided, alpha the total):

- ``obrien-fleming``: 4 - 4 Phi(z_(alpha/4) / sqrt(t)), O'Brien-Fleming-type (almost nothing early): each
  side spends Lan and DeMets' one-sided 2 - 2 Phi(z_(a/2) / sqrt(t)) at a = alpha / 2, as in ``ldbounds`` and
  ``gsDesign`` (whose boundaries are the published ones);
- ``pocock``: alpha ln(1 + (e - 1) t), Pocock-type (about equal nominal levels).

The probabilities are computed by the numerical recursion of Armitage, McPherson and Rowe (1969), as in
Jennison and Turnbull's chapter 19: the sub-density of S_k on the continuation region, on a grid with
Simpson's rule, carried from look to look by the normal density of the increment. With :data:`GRID` points
per standard deviation of the smallest increment, the boundaries agree with the published values (5 equal
looks at 0.05: 4.877, 3.357, 2.680, 2.290, 2.031 and 2.438, 2.427, 2.410, 2.397, 2.386) and with
scipy's multivariate normal to its own accuracy (``tests/analysis/test_sequential.py``); doubling the grid
moves them by under 1e-8.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from syw.analysis.student_t import normal_isf, normal_sf

SPENDING = ("obrien-fleming", "pocock")
GRID = 40  # grid points per standard deviation of the smallest increment between looks
_REACH = 10.0  # the grid of S_k ends 10 SDs out where the boundary lies further: the mass beyond is below 1e-23
_BISECTIONS = 60  # bisection steps for each boundary, from [0, 40]: to 4e-17, far below the grid's error


def spent(spending: str, t, alpha: float) -> np.ndarray:
    """alpha(t), the two-sided error spent by information fraction t (0 <= t <= 1) under ``spending``."""
    t = np.asarray(t, dtype=float)
    if spending == "obrien-fleming":
        with np.errstate(divide="ignore"):  # t = 0: nothing spent
            return np.where(t > 0, 4.0 * normal_sf(normal_isf(alpha / 4.0) / np.sqrt(np.maximum(t, 1e-300))), 0.0)
    if spending == "pocock":
        return alpha * np.log1p((math.e - 1.0) * t)
    raise ValueError(f"spending must be one of {', '.join(SPENDING)}, got {spending!r}")


def check_fractions(fractions: Sequence[float]) -> tuple[float, ...]:
    """Information fractions as a tuple: at least one, strictly increasing, in (0, 1]."""
    t = tuple(float(x) for x in fractions)
    if not t or not all(0.0 < x <= 1.0 for x in t) or any(b <= a for a, b in zip(t, t[1:])):
        raise ValueError(f"information fractions must be strictly increasing in (0, 1], got {list(t)}")
    return t


def _simpson(low: float, high: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """An odd number of points from low to high at most ``step`` apart, and Simpson's weights."""
    m = 2 * max(1, math.ceil((high - low) / (2.0 * step))) + 1
    s = np.linspace(low, high, m)
    w = np.full(m, 2.0)
    w[1::2] = 4.0
    w[0] = w[-1] = 1.0
    return s, w * (s[1] - s[0]) / 3.0


def _phi(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _carry(s: np.ndarray, mass: np.ndarray, low: float, high: float, step: float, sd: float,
           mean: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The sub-density of the next S on (low, high), as grid points and Simpson-weighted masses: the previous
    one (points ``s``, masses ``mass``) moved by the N(mean, sd^2) increment."""
    grid, weights = _simpson(low, high, step)
    kernel = _phi((grid[:, None] - s[None, :] - mean) / sd) / sd
    return grid, weights * (kernel @ mass)


def _exit(mass: np.ndarray, s: np.ndarray, b: float, sd: float) -> float:
    """P(|S_prev + N(0, sd^2)| >= b) summed over the grid's weighted sub-density ``mass``."""
    return float(mass @ (normal_sf((b - s) / sd) + normal_sf((b + s) / sd)))


@lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], increments: tuple[float, ...]) -> tuple[float, ...]:
    """Two-sided boundaries c_k (on the Z scale) spending ``increments`` at ``fractions`` (see the module doc)."""
    gaps = np.diff((0.0,) + fractions)
    step = math.sqrt(gaps.min()) / GRID
    out, s, mass = [], np.zeros(1), np.ones(1)  # S_0 = 0 with mass 1
    for k, (t, spend) in enumerate(zip(fractions, increments)):
        sd = math.sqrt(gaps[k])
        if spend <= 0.0:
            c = math.inf
        elif k == 0:
            c = float(normal_isf(min(spend, 1.0) / 2.0))
        else:  # the exit probability falls as c grows: bisect on it
            low, high = 0.0, 40.0
            for _ in range(_BISECTIONS):
                mid = 0.5 * (low + high)
                low, high = (mid, high) if _exit(mass, s, mid * math.sqrt(t), sd) > spend else (low, mid)
            c = 0.5 * (low + high)
        out.append(c)
        if k + 1 == len(fractions):
            break
        edge = min(c, _REACH) * math.sqrt(t)  # the continuation region, cut where S_k's law leaves no mass
        s, mass = _carry(s, mass, -edge, edge, step, sd)
    return tuple(out)


def boundaries(fractions: Sequence[float], alpha: float, spending: str = "obrien-fleming") -> np.ndarray:
    """Two-sided boundaries c_k, on the Z scale, of a group-sequential test at total level ``alpha`` with
    looks at ``fractions`` of the maximum information: reject at look k when |Z_k| >= c_k (inf: nothing spent
    there)."""
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    t = check_fractions(fractions)
    cumulative = spent(spending, t, float(alpha))
    increments = tuple(float(x) for x in np.diff(np.concatenate(([0.0], cumulative))))
    return np.array(_boundaries(t, increments))


def crossing_probabilities(fractions: Sequence[float], bounds: Sequence[float], drift: float = 0.0) -> np.ndarray:
    """P(|Z_j| < c_j for j < k, |Z_k| >= c_k) at each look under the canonical law with E[Z_k] = drift
    sqrt(t_k) (0: the null): what a set of boundaries spends, e.g. the naive rule's repeated 1.96."""
    t = check_fractions(fractions)
    c = np.asarray(bounds, dtype=float)
    if c.shape != (len(t),) or np.any(c <= 0):
        raise ValueError(f"need one positive boundary per look, got {c.tolist()} for {len(t)} looks")
    gaps = np.diff((0.0,) + t)
    step = math.sqrt(gaps.min()) / GRID
    out, s, mass = [], np.zeros(1), np.ones(1)
    for k, tk in enumerate(t):
        sd, mean = math.sqrt(gaps[k]), drift * gaps[k]  # S has drift `drift` per unit of information
        out.append(_exit(mass, s + mean, c[k] * math.sqrt(tk), sd))
        if k + 1 == len(t):
            break
        reach = _REACH * math.sqrt(tk)  # the continuation region, cut where S_k's own law leaves no mass
        low, high = max(-c[k] * math.sqrt(tk), drift * tk - reach), min(c[k] * math.sqrt(tk), drift * tk + reach)
        if low >= high:
            return np.array(out + [0.0] * (len(t) - k - 1))
        s, mass = _carry(s, mass, low, high, step, sd, mean)
    return np.array(out)


__all__ = ["GRID", "SPENDING", "boundaries", "check_fractions", "crossing_probabilities", "spent"]
