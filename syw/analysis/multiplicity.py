"""Simultaneous claims over budgets for :func:`syw.analysis.inference.compare` (issues 62 and 73).

Each budget n has a jackknife t statistic, here as the normal deviate z_n of its two-sided p_n, and the
z's are jointly N(0, R) under "no difference" with R the jackknife correlation across budgets (estimated
by :data:`MAXT_DRAWS` fixed draws). Every procedure returns, per budget, a critical value c on the z
scale (a leader is named where |z_n| > c; the interval drawn at c shows the sign claimed) and the
adjusted p (the leader is named where it is <= alpha); the family-wise error of the signs named is
measured in ``benchmarks/inference.py``.

- :func:`first_then_rest` (the default): the smallest budget (n = 1) is tested first at
  ``FIRST_SHARE`` x alpha, so n = 1 is Welch's t-test at 0.9 alpha whatever the other budgets show; the
  rest are tested step down (Romano and Wolf 2005) with the alpha that test leaves on the joint law:
  with H the event |Z_1| beyond 0.9 alpha's critical value, an intersection of n = 1 and a set S of
  the rest is rejected when n = 1 is or when max_S |z| > c_S, P(H or max_S |Z| > c_S) = alpha. That
  leaves S well over the 0.1 alpha of a Bonferroni split, as Z_1 and the rest are correlated. When
  every other budget is decided, n = 1 is tested at alpha; when n = 1 is, the rest are stepped down at
  alpha. It is the closed test of these intersection tests (Marcus, Peritz and Gabriel 1976), a
  two-node graph (Bretz et al. 2011) that passes alpha both ways as the fallback procedure does
  forward (Wiens 2003): family-wise error alpha for the two-sided claims.
- :func:`stepdown`: step-down max-|T| over all budgets at once, the largest |z| first; n = 1 then
  competes with every budget (``adjust="stepdown"``, the default before issue 73).
- :func:`maxt`: the single step (``adjust="maxt"``).
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from syw.analysis.student_t import normal_isf, normal_sf

MAXT_DRAWS = 20_000  # Monte-Carlo draws for the max-|T| critical value: +-0.0015 on a 5% tail
FIRST_SHARE = 0.9  # the share of alpha the smallest budget is tested at first (benchmarks/inference.py)
MATRIX_CELLS = 4_000_000  # larger problems are done in blocks: memory stays bounded


@lru_cache(maxsize=8)
def _normal_draws(dim: int) -> np.ndarray:
    """Fixed standard normal draws (seed 0), shape (dim, MAXT_DRAWS): a comparison is a deterministic
    function of its data."""
    out = np.ascontiguousarray(np.random.default_rng(0).standard_normal((MAXT_DRAWS, dim)).T)
    out.flags.writeable = False
    return out


def _abs_draws(cov: np.ndarray) -> Iterator[np.ndarray]:
    """Blocks of |Z| with Z ~ N(0, R), R the correlation of ``cov``, the jackknife covariance of the differences
    over the budgets: arrays of shape (budgets, draws in the block), :data:`MAXT_DRAWS` draws in all (fixed, seed 0)."""
    sd = np.sqrt(np.diag(cov))
    vals, vecs = np.linalg.eigh(cov / np.outer(sd, sd))
    keep = vals > 1e-12 * vals.max()  # R is close to low rank when the budgets are many
    root = vecs[:, keep] * np.sqrt(vals[keep])
    base = _normal_draws(root.shape[1])
    step = max(1, MATRIX_CELLS // root.shape[0])  # draws per block
    for start in range(0, MAXT_DRAWS, step):
        block = root @ base[:, start:start + step]
        yield np.abs(block, out=block)


def _quantile(top: np.ndarray, alpha: float) -> float:
    """The (1 - alpha) quantile of sorted draws, as the order statistic ceil((1 - alpha) D)."""
    return float(top[math.ceil((1.0 - alpha) * top.size) - 1])


def maxt(cov: np.ndarray, z: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Single step: the critical value c of max_k |Z_k| at every budget, and the adjusted
    p_k = P(max |Z| >= |z_k|): |z_k| > c exactly when p_k <= alpha."""
    top = np.sort(np.concatenate([block.max(axis=0) for block in _abs_draws(cov)]))
    return np.full(z.size, _quantile(top, alpha)), 1.0 - np.searchsorted(top, np.abs(z), side="left") / top.size


def _running_max(draws: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Row j: max of |Z| over the budgets order[j:], per draw."""
    return np.maximum.accumulate(draws[order][::-1], axis=0)[::-1]


def _steps(rest: np.ndarray, z: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Romano and Wolf's critical values c_j (the (1 - alpha) quantile of row j of ``rest``, the max over the
    budgets not yet decided) and tails P(max >= |z_j|), for z in decreasing |z| order; sorts ``rest``."""
    rest.sort(axis=1)
    crit = np.array([_quantile(row, alpha) for row in rest])
    tail = np.array([1.0 - np.searchsorted(row, abs(x), side="left") / row.size for row, x in zip(rest, z)])
    return crit, tail


def _step_down(crit: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Stop at the first budget (in decreasing |z|) not beyond its c; those after keep that c."""
    beyond = np.abs(z) > crit
    stop = int(np.argmin(beyond)) if not beyond.all() else beyond.size
    out = crit.copy()
    if stop < out.size:
        out[stop:] = out[stop]
    return out


def stepdown(cov: np.ndarray, z: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Step-down max-|T| (Romano and Wolf 2005, Algorithm 2.1 with the Gaussian law of the jackknife T):
    budgets in order of |z|, the j-th is compared with the (1 - alpha) quantile c_j of the max of |Z| over it
    and those after it, until one is not beyond its c_j; those after keep that c. Rejects every budget the
    single step does and more, at the same family-wise error for the two-sided tests. Holds budgets x
    :data:`MAXT_DRAWS` draws at once. Returns each budget's c and adjusted p (the running maximum, in that
    order, of P(max over the rest >= |z_j|))."""
    order = np.argsort(-np.abs(z), kind="stable")
    rest = np.concatenate([_running_max(block, order) for block in _abs_draws(cov)], axis=1)
    crit, tail = _steps(rest, z[order], alpha)
    out_c, out_p = np.empty(z.size), np.empty(z.size)
    out_c[order], out_p[order] = _step_down(crit, z[order]), np.maximum.accumulate(tail)
    return out_c, out_p


def _left(rest: np.ndarray, u: np.ndarray, z: np.ndarray, alpha: float, share: float) -> tuple[np.ndarray, np.ndarray]:
    """For each set S_j of the rest (row j of ``rest``: max over S_j per draw) with n = 1's test at
    share x alpha: the critical value of max_S |z| at alpha, from P(H or M_S > c) = share alpha +
    P(not H, M_S > c) <= alpha with P(H) exact (n = 1's test is exact), i.e. at most (1 - share) alpha D
    draws with u >= alpha beyond c (u = n = 1's p / share per draw: not H at level a when u >= a); and
    r_j, the least level a at which max_S |z| is beyond it: #{u >= a, M_S >= |z_j|} <= (1 - share) a D,
    which falls as a grows (one crossing: the adjusted p's are monotone)."""
    budget = (1.0 - share) * rest.shape[1]
    keep = math.floor(budget * alpha)  # draws allowed beyond the critical value at alpha
    crit, r = np.empty(rest.shape[0]), np.empty(rest.shape[0])
    free = u >= alpha
    for j, (row, x) in enumerate(zip(rest, np.abs(z))):
        left = row[free]
        crit[j] = -np.partition(-left, keep)[keep] if keep < left.size else 0.0  # the (keep + 1)-th largest
        v = u[row >= x]  # sorted: the columns are in increasing u
        need = (v.size - np.arange(v.size + 1)) / budget  # with the i smallest v passed: a >= need_i
        lower = np.concatenate(([0.0], v))  # a lies above the i-th smallest v
        upper = np.concatenate((v, [np.inf]))
        first = int(np.argmax(need <= upper))  # the first interval where the count meets the allowance
        r[j] = max(lower[first], need[first])
    return crit, r


def first_then_rest(cov: np.ndarray, z: np.ndarray, p: np.ndarray, first: int, alpha: float,
                    share: float = FIRST_SHARE) -> tuple[np.ndarray, np.ndarray]:
    """The default simultaneous claims (module doc): budget ``first`` (the smallest) at ``share`` x alpha by its
    own exact p, then the rest step down with the alpha left on the joint law, alpha passed on when either part
    is fully decided. Returns each budget's critical value c (z scale) and adjusted p: for n = 1
    max(p_1, min(p_1 / share, R)), R the level at which every other budget is decided; for the others the
    running maximum over the steps of max(q_j, min(p_1 / share, r_j)), q_j the step-down tail and r_j that
    of the rest with n = 1's test counted in."""
    others = np.flatnonzero(np.arange(z.size) != first)
    order = others[np.argsort(-np.abs(z[others]), kind="stable")]
    draws = np.concatenate(list(_abs_draws(cov)), axis=1)
    by_u = np.argsort(-draws[first], kind="stable")  # increasing n = 1 p-value per draw
    u = 2.0 * normal_sf(draws[first, by_u]) / share
    rest = _running_max(draws[:, by_u], order)
    crit_r, r = _left(rest, u, z[order], alpha, share)
    crit_q, q = _steps(rest, z[order], alpha)
    p1, q, r = float(p[first]), np.maximum.accumulate(q), np.maximum.accumulate(r)
    out_c, out_p = np.empty(z.size), np.empty(z.size)
    if p1 <= share * alpha:  # n = 1 decided: the rest step down at alpha
        out_c[order] = _step_down(crit_q, z[order])
    else:
        out_c[order] = _step_down(np.maximum(crit_q, crit_r), z[order])
    out_p[order] = np.maximum(q, np.minimum(p1 / share, r))
    out_p[first] = max(p1, min(p1 / share, float(r[-1])))
    out_c[first] = normal_isf((alpha if r[-1] < alpha else share * alpha) / 2.0)
    return out_c, np.minimum(out_p, 1.0)
