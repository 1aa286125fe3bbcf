"""Student's t and the normal distribution's tails, for the comparisons of :mod:`syw.analysis.inference`.

``syw curve`` compares every pair of groups; importing ``scipy.special`` for four functions would take about
0.2 s of its start-up (``make bench-curve``). These are the textbook algorithms, accurate to 1e-12 relative
(the tail to about 3e-17 times the degrees of freedom, from 1e4 on) over the degrees of freedom the comparisons
use (Kish's effective sample size, up to N - 1), checked against scipy and the closed forms for 1 and 2 degrees
of freedom (``tests/analysis/test_student_t.py``):

- P(T > t) = I_x(df / 2, 1 / 2) / 2 for t >= 0, x = df / (df + t^2), with I the regularized incomplete beta
  function by its continued fraction (Lentz's method; Press et al., *Numerical Recipes*, section 6.4);
- the t whose tail is q: Newton's method on log P(T > t) against log t, kept inside a bracket;
- the normal tail by ``math.erfc``, its quantile by ``statistics.NormalDist`` (Wichura's AS 241).
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

_EPS = 4e-15  # the continued fraction stops when a term changes its value by less, relatively: a few roundings
# Newton stops after a step that moves log t by less than _STEP * max(1, df / 1e4): the tail is good to about
# 3e-17 df relatively (the continued fraction's first terms cancel where t^2 is near 3), 3e-13 at 1e4 degrees of freedom
_STEP = 1e-12
_TINY = 1e-300  # Lentz's guard against a zero denominator
_MAX_TERMS = 100_000  # the continued fraction needs about sqrt(df) terms; a bound, not an expected count
_lgamma = np.vectorize(math.lgamma, otypes=[float])
_erfc = np.vectorize(math.erfc, otypes=[float])
_normal_quantile = np.vectorize(NormalDist().inv_cdf, otypes=[float])


def _continued_fraction(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The continued fraction of I_x(a, b), converging fast where x < (a + 1) / (a + b + 2); each entry stops
    once a term moves it by less than ``_EPS`` (later terms only add rounding)."""
    def guard(v: np.ndarray) -> np.ndarray:
        return np.where(np.abs(v) < _TINY, _TINY, v)

    c = np.ones_like(x)
    d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h, live = d.copy(), np.ones(x.shape, dtype=bool)
    for m in range(1, _MAX_TERMS + 1):
        even = m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m))
        d, c = 1.0 / guard(1.0 + even * d), guard(1.0 + even / c)
        step = d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))
        d, c = 1.0 / guard(1.0 + odd * d), guard(1.0 + odd / c)
        step *= d * c
        h = np.where(live, h * step, h)
        live &= np.abs(step - 1.0) >= _EPS
        if not live.any():
            return h
    raise ArithmeticError("the incomplete beta function's continued fraction did not converge")


def _stirling_rest(x: np.ndarray) -> np.ndarray:
    """log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= 10, its asymptotic series to 1e-14."""
    r = 1.0 / (x * x)
    return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r / 1188)))) / x


def _log_beta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log B(a, b); for a large argument, log Gamma(big) - log Gamma(big + small) by Stirling's series rather
    than as a difference of two large numbers (about 1e-10 lost at 1e5 degrees of freedom)."""
    small, big = np.minimum(a, b), np.maximum(a, b)
    out = _lgamma(a) + _lgamma(b) - _lgamma(a + b)
    k = big >= 10
    if k.any():
        s, g = small[k], big[k]
        ratio = (g - 0.5) * np.log1p(s / g) + s * np.log(g + s) - s + _stirling_rest(g + s) - _stirling_rest(g)
        out[k] = _lgamma(s) - ratio
    return out


def _upper_tail(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """P(T > t) for t > 0: I_x(a, 1/2) / 2, a = df / 2, x = 1 / (1 + u), u = t^2 / df, with log x and log(1 - x)
    written in u so that neither a small nor a huge t loses digits (nor overflows)."""
    a, b = df / 2.0, np.full(t.shape, 0.5)
    with np.errstate(over="ignore"):  # t beyond 1e154: u is inf, x 0, the tail 0 (or its true value, below 1e-300)
        u = (t / np.sqrt(df)) ** 2
    below, above = np.clip(u, np.finfo(float).tiny, 1.0), np.maximum(u, 1.0)  # t below 1e-154: u is 0, the tail 1/2
    x, y = 1.0 / (1.0 + u), np.where(u > 1.0, 1.0 / (1.0 + 1.0 / above), below / (1.0 + below))
    log_x = -np.log1p(u)
    log_y = np.where(u > 1.0, -np.log1p(1.0 / above), np.log(below) - np.log1p(below))
    front = np.exp(a * log_x + b * log_y - _log_beta(a, b))
    direct = x < (a + 1.0) / (a + b + 2.0)
    out = np.empty_like(t)
    if direct.any():
        k = direct
        out[k] = front[k] * _continued_fraction(a[k], b[k], x[k]) / a[k]
    if (~direct).any():
        k = ~direct
        out[k] = 1.0 - front[k] * _continued_fraction(b[k], a[k], y[k]) / b[k]
    return 0.5 * out


def t_sf(t, df) -> np.ndarray:
    """P(T > t) for T ~ Student's t with ``df`` > 0 degrees of freedom (arrays broadcast)."""
    t, df = (v.astype(float) for v in np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(df, dtype=float)))
    if not np.all(df > 0) or np.isnan(t).any():
        raise ValueError(f"degrees of freedom must be above 0 and t a number, got df {df.min()}")
    out = np.full(t.shape, 0.5)
    k = t != 0
    if k.any():
        half = _upper_tail(np.abs(t[k]), df[k])
        out[k] = np.where(t[k] > 0, half, 1.0 - half)
    return out


def t_isf(q, df) -> np.ndarray:
    """The t with P(T > t) = ``q`` (0 < q < 1) for ``df`` > 0 degrees of freedom (arrays broadcast)."""
    q, df = (v.astype(float) for v in np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(df, dtype=float)))
    if not np.all((q > 0) & (q < 1)):
        raise ValueError(f"a tail probability must lie in (0, 1), got {q.min()} to {q.max()}")
    if not np.all(df > 0):
        raise ValueError(f"degrees of freedom must be above 0, got {df.min()}")
    tail = np.minimum(q, 1.0 - q)  # the t for q > 1/2 is minus the t for 1 - q
    out = np.zeros(q.shape)
    k = tail < 0.5
    if k.any():
        out[k] = _upper_quantile(tail[k], df[k])
    return np.where(q < 0.5, out, -out) + 0.0  # + 0.0: the median is 0, not -0


def _upper_quantile(q: np.ndarray, df: np.ndarray) -> np.ndarray:
    """t > 0 with P(T > t) = q < 1/2: safeguarded Newton on u = log t, where log P(T > e^u) is nearly linear."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a tail below 1e-308 is 0: its log -inf, below q's
        target = np.log(q)
        low = np.log(np.maximum(-_normal_quantile(q), 1e-8))  # t's tails are heavier than the normal's: at or left of the root
        high = low + 1.0
        while np.any(over := np.log(t_sf(np.exp(high), df)) > target):
            high = np.where(over, high + 2.0 * (high - low), high)
        u, done = low.copy(), np.zeros(q.shape, dtype=bool)
        tolerance = _STEP * np.maximum(1.0, df / 1e4)
        for _ in range(200):
            t = np.exp(u)
            sf = t_sf(t, df)
            gap = np.log(sf) - target
            low, high = np.where(gap > 0, u, low), np.where(gap > 0, high, u)
            step = -gap / np.exp(u + _log_pdf(t, df) - np.log(sf))  # gap over d log P(T > e^u) / du
            new = u - step
            wild = ~np.isfinite(new) | (new < low) | (new > high)  # outside the bracket: bisect instead
            new = np.where(wild, 0.5 * (low + high), new)
            u, done = np.where(done, u, new), done | (~wild & (np.abs(step) <= tolerance * np.maximum(1.0, np.abs(u))))
            if done.all():
                return np.exp(u)
    raise ArithmeticError("Student's t quantile did not converge")


def _log_pdf(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """The log density of Student's t at t > 0, in log t so that a far tail neither overflows nor underflows."""
    log_u = 2.0 * np.log(t) - np.log(df)  # u = t^2 / df
    log1p_u = np.where(log_u > 0, log_u + np.log1p(np.exp(-np.abs(log_u))), np.log1p(np.exp(-np.abs(log_u))))
    return _lgamma((df + 1.0) / 2.0) - _lgamma(df / 2.0) - 0.5 * np.log(df * math.pi) - (df + 1.0) / 2.0 * log1p_u


def normal_sf(z) -> np.ndarray:
    """P(Z > z) for a standard normal Z, without cancellation in either tail."""
    return 0.5 * _erfc(np.asarray(z, dtype=float) / math.sqrt(2.0))


def normal_isf(q) -> np.ndarray:
    """The z with P(Z > z) = ``q`` (0 < q < 1)."""
    q = np.asarray(q, dtype=float)
    if not np.all((q > 0) & (q < 1)):
        raise ValueError(f"a tail probability must lie in (0, 1), got {q.min()} to {q.max()}")
    return -_normal_quantile(q)
