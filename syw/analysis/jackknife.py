"""The leave-one-out jackknife of the unbiased expected best of n (issues 62 and 72).

V_n = sum_i w_i x_(i), w_i = C(i-1, n-1) / C(N, n), is the mean of max(S) over the n-subsets S of N sorted
trials (Tang et al. 2020; the unbiased form of Eq. 8 of Dodge et al. 2019). Leaving out the j-th order
statistic keeps the ranks below it and lowers those above it by one, so with w' the weights of N - 1 trials

    V_n,(j+1) - V_n,(j) = -w'_j (x_(j+1) - x_(j)):

the leave-one-out values are a running sum of gaps, O(N) per budget. :func:`spread` gives each group what
:func:`syw.analysis.inference.compare` needs: the jackknife variances (N-1)/N sum_j d_j^2 of the centred
leave-one-out values d, Kish's degrees of freedom 1 / sum w_i^2 - 1 and, for simultaneous claims, the
covariance across budgets. Up to :data:`WHOLE_TRIALS` trials it holds d whole; past it (to a million
trials and more) it runs over blocks of trials, the highest first, carrying each budget's weight and
running sum from block to block and merging the blocks' centred cross-products (Chan, Golub and LeVeque
1979), so that memory stays at one block; a budget whose weights have underflowed to 0 drops out of the
blocks below (its leave-one-out value is constant there).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from syw.analysis.expected_max import Budgets, check_budgets, check_scores
from syw.analysis.multiplicity import MATRIX_CELLS

_CACHED_CELLS = 250_000  # weight matrices up to this size are cached (at most 64 of them: 128 MB)
WHOLE_TRIALS = 2_000  # groups up to this size hold their leave-one-out values whole; larger ones go in blocks
_BLOCK_CELLS = 1_000_000  # trials x budgets per block of the blocked jackknife (8 MB)
_KEEP = 8  # blocked spreads kept, by the sample's content and the budgets (each at most budgets^2 floats)
_RECENT: dict[tuple[bytes, bytes], Spread] = {}


def _sorted(scores, maximize: bool, least: int = 1, what: str = "scores") -> np.ndarray:
    arr = check_scores(scores)
    if arr.size < least:
        raise ValueError(f"{what} needs at least {least} scores, got {arr.size}")
    return np.sort(arr if maximize else -arr)


def _weights(size: int, n: int) -> np.ndarray:
    """C(i-1, n-1) / C(size, n) for i = 1..size (read-only; cached for small sizes)."""
    return _weights_cached(size, n) if size <= WHOLE_TRIALS else _weights_new(size, n)


@lru_cache(maxsize=4096)
def _weights_cached(size: int, n: int) -> np.ndarray:
    return _weights_new(size, n)


def _weights_new(size: int, n: int) -> np.ndarray:
    """C(i-1, n-1) / C(size, n) for i = 1..size, from w_size = n / size by w_(i-1) = w_i (i-n)/(i-1),
    accumulated in log space (no binomial overflows at size = 10,000) and renormalized to sum to 1."""
    w = np.zeros(size)
    i = np.arange(size, n - 1, -1, dtype=float)  # size, size - 1, ..., n
    steps = np.log(i[:-1] - n) - np.log(i[:-1] - 1.0)
    w[n - 1:] = np.exp(math.log(n / size) + np.concatenate(([0.0], np.cumsum(steps))))[::-1]
    w /= w.sum()
    w.flags.writeable = False  # cached: shared by every call
    return w


def _matrix(size: int, budgets: tuple[int, ...]) -> np.ndarray:
    """The weights of V_n for ``size`` trials, one row per budget (read-only)."""
    if not budgets:
        return np.empty((0, size))
    if size * len(budgets) <= _CACHED_CELLS:
        return _matrix_cached(size, budgets)
    return np.vstack([_weights(size, n) for n in budgets])


@lru_cache(maxsize=64)
def _matrix_cached(size: int, budgets: tuple[int, ...]) -> np.ndarray:
    out = np.vstack([_weights(size, n) for n in budgets])
    out.flags.writeable = False
    return out


def _apply(x: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """V_n of the sorted sample x at each budget, with the jackknife's own renormalized weights: exact where
    a target equals a curve value (expected_max_unbiased's product weights can fall an ulp short there)."""
    if budgets.size * x.size <= MATRIX_CELLS:
        return _matrix(x.size, tuple(int(n) for n in budgets)) @ x
    return np.array([_weights(x.size, int(n)) @ x for n in budgets])


def _kish_dof(size: int, budgets: np.ndarray) -> np.ndarray:
    """1 / sum w_i^2 - 1 for the V_n weights: N - 1 at n = 1, about 9 at the limit budget."""
    if budgets.size * size <= MATRIX_CELLS:
        return 1.0 / np.sum(_matrix(size, tuple(int(n) for n in budgets)) ** 2, axis=1) - 1.0
    return np.array([1.0 / np.sum(_weights(size, int(n)) ** 2) - 1.0 for n in budgets])


def _deviations(x: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """Centred leave-one-out estimates V_n,(j) - mean_j, shape (len(budgets), N), for n < N: a prefix plus
    a suffix sum of the weights for N - 1 trials (module doc)."""
    xc = x - np.median(x)  # every V_(j) is a weighted mean: centring only removes cancellation
    out = np.empty((budgets.size, x.size))
    chunk = max(1, MATRIX_CELLS // max(x.size, 1))
    for start in range(0, budgets.size, chunk):
        part = budgets[start:start + chunk]
        w = _matrix(x.size - 1, tuple(int(n) for n in part))
        zero = np.zeros((part.size, 1))
        prefix = np.hstack((zero, np.cumsum(w * xc[:-1], axis=1)))
        suffix = np.hstack((np.cumsum((w * xc[1:])[:, ::-1], axis=1)[:, ::-1], zero))
        loo = prefix + suffix
        out[start:start + chunk] = loo - loo.mean(axis=1, keepdims=True)
    return out


def jackknife_variance(scores, ns: Budgets, maximize: bool = True) -> np.ndarray:
    """(N-1)/N sum_j (V_n,(j) - mean_j)^2, the jackknife variance of V_n, for n < N (s^2 / N at n = 1)."""
    x = _sorted(scores, maximize, least=2, what="the jackknife")
    budgets = check_budgets(ns)
    if budgets.max() >= x.size:
        raise ValueError(f"the jackknife of V_n needs n < N = {x.size} (it recomputes V_n on N - 1 trials), "
                         f"got n = {int(budgets.max())}")
    return spread(x, budgets).var


@dataclass(frozen=True)
class Spread:
    """One group's jackknife at its budgets (n < N): ``var`` the variances, ``dof`` Kish's degrees of freedom;
    :meth:`covariance` the covariance across budgets (N-1)/N sum_j d_j d_j^T, for simultaneous claims."""

    var: np.ndarray
    dof: np.ndarray
    _dev: np.ndarray | None = None  # the centred leave-one-out values, held whole for small problems
    _cov: np.ndarray | None = None  # else the covariance, accumulated over blocks of trials

    def covariance(self, rows: np.ndarray) -> np.ndarray:
        """The covariance of the budgets ``rows`` (a boolean mask or indices)."""
        if self._dev is not None:
            dev = self._dev[rows]
            return dev @ dev.T * ((dev.shape[1] - 1) / dev.shape[1])
        if self._cov is None:
            raise ValueError("this spread was computed without its covariance (covariance=True)")
        index = np.flatnonzero(rows) if np.asarray(rows).dtype == bool else np.asarray(rows)
        return self._cov[np.ix_(index, index)]


def spread(x: np.ndarray, budgets: np.ndarray, covariance: bool = False) -> Spread:
    """The jackknife of V_n for the sorted sample ``x`` at ``budgets`` (each < N): whole up to
    :data:`WHOLE_TRIALS` trials, else over blocks of trials (module doc), the covariance only when asked."""
    if x.size <= WHOLE_TRIALS:
        dev = _deviations(x, budgets)
        var = (x.size - 1) / x.size * np.sum(dev**2, axis=1)
        return Spread(var, _kish_dof(x.size, budgets), dev if covariance else None)
    # a group compared with several others (syw curve on 3 groups: each in 2 pairs) is done once
    key = (hashlib.blake2b(x.tobytes(), digest_size=16).digest(), budgets.tobytes())
    found = _RECENT.get(key)
    if found is None or (covariance and found._cov is None):
        found = _RECENT[key] = _blocked(x, budgets, covariance)
        while len(_RECENT) > _KEEP:
            del _RECENT[next(iter(_RECENT))]
    return found


def _blocked(x: np.ndarray, budgets: np.ndarray, covariance: bool) -> Spread:
    """:func:`spread` over blocks of trials from the top. With u_q the weight of the (q+1)-th largest of N - 1
    trials (u_0 = n / (N - 1), u_(q+1) = u_q (i - n) / (i - 1) at i = N - 1 - q) and h_q the gap below the
    (q+1)-th largest of the N, the leave-one-out value without the (p+1)-th largest is a constant plus
    T_p = sum_(q<p) u_q h_q. The weights are products, divided by their sum at the end as ``_weights``
    renormalizes; Kish's sum of squares for N trials follows from that for N - 1: w_i = w'_i (N - n) / N, w_N = n / N."""
    size, k = x.size, budgets.size
    top = x[::-1]
    gaps = top[:-1] - top[1:]  # h_q, q = 0..N-2
    n = budgets.astype(float)
    u = n / (size - 1)  # each budget's weight at the block's first q (0 once it has underflowed)
    carry = np.zeros(k)  # T at the block's first p
    total, squares = np.zeros(k), np.zeros(k)
    moments = _Moments(k, covariance)
    step = max(2, _BLOCK_CELLS // k)
    for start in range(0, size, step):
        stop = min(size, start + step)
        width = min(stop, size - 1) - start  # q = start..start+width-1 (none past N - 2)
        live = np.flatnonzero(u > 0)
        if not live.size:
            moments.add_constant(carry, stop - start)
            continue
        weights = np.empty((live.size, width))
        weights[:, 0] = u[live]
        i = size - start - np.arange(1.0, width)  # i at q = start..start+width-2: the ratios to the next u
        np.subtract(1.0, np.outer(n[live] - 1.0, 1.0 / (i - 1.0)), out=weights[:, 1:])
        np.maximum(weights, 0.0, out=weights)  # i < n: the weight is 0
        np.cumprod(weights, axis=1, out=weights)
        total[live] += weights.sum(axis=1)
        squares[live] += np.einsum("kq,kq->k", weights, weights)
        following = size - start - width  # i at the block's last q
        u[live] = weights[:, -1] * np.maximum(0.0, 1.0 - (n[live] - 1.0) / (following - 1.0)) if following > 1 else 0.0
        weights *= gaps[start:start + width]
        values = np.empty((live.size, stop - start))
        values[:, 0] = carry[live]
        np.cumsum(weights[:, :stop - start - 1], axis=1, out=values[:, 1:])
        values[:, 1:] += carry[live, None]
        if width == stop - start:  # T at the next block's first p
            carry[live] = values[:, -1] + weights[:, -1]
        moments.add(values, live, carry, stop - start)
    var = (size - 1) / size * moments.m2 / total**2
    sum_sq = ((size - n) / size) ** 2 * squares / total**2 + (n / size) ** 2
    cov = (size - 1) / size * moments.cross / np.outer(total, total) if covariance else None
    dof = 1.0 / sum_sq - 1.0
    for values in (var, dof, cov):
        if values is not None:
            values.flags.writeable = False  # kept and shared (spread's _RECENT)
    return Spread(var, dof, None, cov)


class _Moments:
    """Running means, sums of squared deviations and (optionally) cross-products of k series, merged block
    by block (Chan, Golub and LeVeque 1979): a block's own centred sums plus its mean's shift, never N x k."""

    def __init__(self, k: int, covariance: bool):
        self.count, self.mean, self.m2 = 0, np.zeros(k), np.zeros(k)
        self.cross = np.zeros((k, k)) if covariance else None

    def add_constant(self, value: np.ndarray, width: int) -> None:
        """``width`` more values, each series constant at ``value``."""
        self._shift(value.copy(), width)

    def add(self, values: np.ndarray, live: np.ndarray, value: np.ndarray, width: int) -> None:
        """A block: ``values`` of the series ``live`` (rows), the others constant at ``value``."""
        mean = value.copy()
        mean[live] = values.mean(axis=1)
        values -= mean[live, None]
        self.m2[live] += np.einsum("kq,kq->k", values, values)
        if self.cross is not None:
            self.cross[np.ix_(live, live)] += values @ values.T
        self._shift(mean, width)

    def _shift(self, mean: np.ndarray, width: int) -> None:
        both = self.count + width
        delta = mean - self.mean
        scale = self.count * width / both
        self.m2 += delta**2 * scale
        if self.cross is not None:
            self.cross += np.outer(delta, delta) * scale
        self.mean += delta * width / both
        self.count = both
