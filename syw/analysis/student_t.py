"""Student's t and the normal distribution's tails, for the comparisons of :mod:`syw.analysis.inference`.

``syw curve`` compares every pair of groups; importing ``scipy.special`` for four functions would take about
0.2 s of its start-up (``make bench-curve``). These are the textbook algorithms, accurate to about 2e-13
relative up to 1e4 degrees of freedom and 3e-17 df beyond (the comparisons use Kish's effective sample size, up
to N - 1), checked against mpmath, scipy and the closed forms for 1 and 2 degrees of freedom
(``tests/analysis/test_student_t.py``):

- P(T > t) = I_x(df / 2, 1 / 2) / 2 for t >= 0, x = df / (df + t^2), with I the regularized incomplete beta
  function by its continued fraction (Lentz's method; Press et al., *Numerical Recipes*, section 6.4);
- the t whose tail is q: Newton's method on log P(T > t) against log t from the Cornish-Fisher expansion,
  kept inside a bracket;
- the normal tail by ``math.erfc``, its quantile by ``statistics.NormalDist`` (Wichura's AS 241).
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

_EPS = 4e-15  # the continued fraction stops when a term changes its value by less, relatively: a few roundings
# Newton's last step is one that moves log t by less than _STEP: the error after it is about its square (log P(T > e^u)
# is nearly linear in u), below the tail's own, about 3e-17 df relatively (the continued fraction's first terms
# cancel where t^2 is near 3)
_STEP = 1e-7
_MAX_TERMS = 100_000  # the continued fraction needs under 60 terms up to 1e6 degrees of freedom; a bound
_CHUNK = 16  # terms computed at once
_lgamma = np.vectorize(math.lgamma, otypes=[float])
_erfc = np.vectorize(math.erfc, otypes=[float])
_normal_quantile = np.vectorize(NormalDist().inv_cdf, otypes=[float])


def _continued_fraction(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The continued fraction of I_x(a, b) by Lentz's method, converging fast where x < (a + 1) / (a + b + 2):
    its terms ``_CHUNK`` at a time; an entry is done when the last term of a chunk moves it by less than ``_EPS``
    (terms past convergence only add rounding, and thousands of them, which a large ``a`` near the switch point
    needs, can break down to 0/0 for a small one)."""
    out = np.empty(x.shape)
    todo = np.arange(x.size)
    a, b, x = a[:, None], b[:, None], x[:, None]
    c, d = np.ones(x.shape[0]), 1.0 / (1.0 - (a + b) * x / (a + 1.0))[:, 0]
    h = d.copy()
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero denominator (never met in practice) fails the check
        for first in range(1, _MAX_TERMS + 1, _CHUNK):
            m = np.arange(first, first + _CHUNK, dtype=float)
            even = m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m))
            odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))
            for k in range(_CHUNK):
                d, c = 1.0 / (1.0 + even[:, k] * d), 1.0 + even[:, k] / c
                step = d * c
                d, c = 1.0 / (1.0 + odd[:, k] * d), 1.0 + odd[:, k] / c
                step *= d * c
                h *= step
            done = np.abs(step - 1.0) < _EPS
            out[todo[done]] = h[done]
            if done.all():
                return out
            left = ~done
            todo, a, b, x, c, d, h = todo[left], a[left], b[left], x[left], c[left], d[left], h[left]
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
    t, df = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(df, dtype=float))
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
    q, df = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(df, dtype=float))
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


def _start(z: np.ndarray, df: np.ndarray) -> np.ndarray:
    """log t of the Cornish-Fisher expansion of t's quantile about the normal's z (Abramowitz and Stegun 26.7.5,
    four terms), at least z: within 1e-7 of the root from about 30 degrees of freedom, so that Newton ends in a step."""
    z2 = z * z
    terms = ((z2 + 1) * z / 4, ((5 * z2 + 16) * z2 + 3) * z / 96, (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384,
             ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160)
    t = z + sum(g / df ** (k + 1) for k, g in enumerate(terms))
    return np.log(np.maximum(np.maximum(t, z), 1e-8))


def _upper_quantile(q: np.ndarray, df: np.ndarray) -> np.ndarray:
    """t > 0 with P(T > t) = q < 1/2: Newton on u = log t, where log P(T > e^u) is nearly linear, kept inside a
    bracket (bisecting where a step would leave it) that starts at the normal's quantile, below t's."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a tail below 1e-308 is 0: its log -inf, below q's
        target, z = np.log(q), -_normal_quantile(q)
        low, high = np.log(np.maximum(z, 1e-8)), np.full(q.shape, np.inf)
        u, done = _start(z, df), np.zeros(q.shape, dtype=bool)
        for _ in range(200):
            t = np.exp(u)
            sf = t_sf(t, df)
            gap = np.log(sf) - target
            low, high = np.where(gap > 0, u, low), np.where(gap > 0, high, u)
            step = -gap / np.exp(u + _log_pdf(t, df) - np.log(sf))  # gap over d log P(T > e^u) / du
            new = u - step
            wild = ~np.isfinite(new) | (new < low) | (new > high)  # outside the bracket: bisect, or t times e
            new = np.where(wild, np.where(np.isfinite(high), 0.5 * (low + high), u + 1.0), new)
            u, done = np.where(done, u, new), done | (~wild & (np.abs(step) <= _STEP))
            if done.all():
                return np.exp(u)
    raise ArithmeticError("Student's t quantile did not converge")


def _log_pdf(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """The log density of Student's t at t > 0, in log t so that a far tail neither overflows nor underflows."""
    log_u = 2.0 * np.log(t) - np.log(df)  # u = t^2 / df
    log1p_u = np.where(log_u > 0, log_u + np.log1p(np.exp(-np.abs(log_u))), np.log1p(np.exp(-np.abs(log_u))))
    return -_log_beta(df / 2.0, np.full(df.shape, 0.5)) - 0.5 * np.log(df) - (df + 1.0) / 2.0 * log1p_u  # 1/(sqrt(df) B)


def normal_sf(z) -> np.ndarray:
    """P(Z > z) for a standard normal Z, without cancellation in either tail."""
    return 0.5 * _erfc(np.asarray(z, dtype=float) / math.sqrt(2.0))


def normal_isf(q) -> np.ndarray:
    """The z with P(Z > z) = ``q`` (0 < q < 1)."""
    q = np.asarray(q, dtype=float)
    if not np.all((q > 0) & (q < 1)):
        raise ValueError(f"a tail probability must lie in (0, 1), got {q.min()} to {q.max()}")
    return -_normal_quantile(q)
