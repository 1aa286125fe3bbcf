"""Comparisons of two tuning curves that say how sure they are (issue 62).

The tuning curve is the expected best validation score after n random-search trials, Eq. 8 of
Dodge et al. (2019). From N trials it is estimated without bias, for n <= N, by the U-statistic

    V_n = sum_i C(i-1, n-1) / C(N, n) x_(i)        (x_(1) <= ... <= x_(N)),

the mean of max(S) over all n-subsets S of the trials (``expected_max_unbiased``; the plug-in Eq. 8
draws with replacement and is biased low). Its leave-one-out jackknife variance is s^2 / N at n = 1,
so :func:`compare` is exactly Welch's t-test on the means there. At larger n, V_n rests on the top
few trials: each group's variance gets Kish's effective sample size of the weights, 1 / sum w_i^2,
less one, as its degrees of freedom (N - 1 at n = 1, about 9 at the limit budget). With N - 1
instead, two samples of one pool were told apart in up to 7% of 1,000 resamples at 95% (bimodal
scores, N = 100); with it, in 5% or fewer up to Monte-Carlo error (``benchmarks/inference.py``).
Measured and not kept: Hall's skewness correction and an equal-tailed bootstrap-t, which tell two
samples of one skewed pool apart in 8-12% and 10% of resamples.

Two kinds of claim:

- **pointwise** (budgets stated before looking, ``at``): each budget is tested two-sided at level
  alpha = 1 - confidence; "A is ahead at every listed budget" needs no correction (intersection-union);
- **simultaneous** (exploratory, the default): all leaders named hold at once. Step-down max-|T|
  (Romano and Wolf 2005): the budget with the largest |T| is compared with the critical value of
  max_n |T_n| over the budgets up to the limit, with T ~ N(0, R) and R the jackknife correlation of
  the differences across budgets (V_1..V_k are strongly correlated, so this is far less conservative
  than Bonferroni, ``adjust="bonferroni"``), the next with that over the budgets left, and so on
  until one falls short; ``adjust="maxt"`` is the single step. A budget with a leader gets its step's
  critical value, so its interval shows the sign claimed, not a simultaneous bound on the size.

No leader is named beyond :func:`limit_budget`, where no assumption-free claim is possible.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from syw.analysis.compare import Difference
from syw.analysis.expected_max import Budgets, check_budgets, check_scores, expected_max_unbiased
from syw.analysis.student_t import normal_isf, normal_sf, t_isf, t_sf

MAXT_DRAWS = 20_000  # Monte-Carlo draws for the max-|T| critical value: +-0.0015 on a 5% tail
_CACHED_CELLS = 250_000  # weight matrices up to this size are cached (at most 64 of them: 128 MB)
_MATRIX_CELLS = 4_000_000  # larger problems are done budget by budget or in chunks


def _alpha(confidence: float) -> float:
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return 1.0 - float(confidence)


def _sorted(scores, maximize: bool, least: int = 1, what: str = "scores") -> np.ndarray:
    arr = check_scores(scores)
    if arr.size < least:
        raise ValueError(f"{what} needs at least {least} scores, got {arr.size}")
    return np.sort(arr if maximize else -arr)


def _weights(size: int, n: int) -> np.ndarray:
    """C(i-1, n-1) / C(size, n) for i = 1..size (read-only; cached for small sizes)."""
    return _weights_cached(size, n) if size <= 2_000 else _weights_new(size, n)


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
    if budgets.size * x.size <= _MATRIX_CELLS:
        return _matrix(x.size, tuple(int(n) for n in budgets)) @ x
    return np.array([_weights(x.size, int(n)) @ x for n in budgets])


def _kish_dof(size: int, budgets: np.ndarray) -> np.ndarray:
    """1 / sum w_i^2 - 1 for the V_n weights: N - 1 at n = 1, about 9 at the limit budget."""
    if budgets.size * size <= _MATRIX_CELLS:
        return 1.0 / np.sum(_matrix(size, tuple(int(n) for n in budgets)) ** 2, axis=1) - 1.0
    return np.array([1.0 / np.sum(_weights(size, int(n)) ** 2) - 1.0 for n in budgets])


def _deviations(x: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """Centred leave-one-out estimates V_n,(j) - mean_j, shape (len(budgets), N), for n < N.

    Dropping the j-th order statistic keeps the ranks below it and lowers those above it by one, so
    V_n,(j) = sum_{i<j} w'_i x_i + sum_{i>j} w'_(i-1) x_i with w' the weights for N - 1 trials:
    a prefix plus a suffix sum, O(N) per budget."""
    xc = x - np.median(x)  # every V_(j) is a weighted mean: centring only removes cancellation
    out = np.empty((budgets.size, x.size))
    chunk = max(1, _MATRIX_CELLS // max(x.size, 1))
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
    return (x.size - 1) / x.size * np.sum(_deviations(x, budgets) ** 2, axis=1)


def limit_budget(size: int, confidence: float = 0.95) -> int:
    """floor(N ln 2 / ln(2 / alpha)), at least 1: the largest budget n at which N trials support an
    assumption-free claim about the best of n (for two groups: the smaller N).

    The best of n has median m_n = F^-1(0.5^(1/n)); the largest of N trials lies above it with
    probability 1 - 0.5^(N/n). Once 0.5^(N/n) exceeds alpha / 2, i.e. n > N ln 2 / ln(2 / alpha),
    the sample may well hold no trial from the range that decides the best of n, and no level-alpha
    bound can exclude a better curve there without assumptions. 9 for N = 50, 37 for N = 200."""
    alpha = _alpha(confidence)
    if isinstance(size, bool) or not float(size).is_integer() or size < 1:
        raise ValueError(f"the number of trials must be a positive integer, got {size!r}")
    return max(1, math.floor(int(size) * math.log(2.0) / math.log(2.0 / alpha) + 1e-9))


def trials_needed(n: int, confidence: float = 0.95) -> int:
    """The fewest trials per group whose :func:`limit_budget` reaches ``n``: how many a claim at budget n needs."""
    alpha = _alpha(confidence)
    if isinstance(n, bool) or not float(n).is_integer() or n < 1:
        raise ValueError(f"the budget must be a positive integer, got {n!r}")
    size = max(1, math.ceil(int(n) * math.log(2.0 / alpha) / math.log(2.0) - 1e-9))
    while size > 1 and limit_budget(size - 1, confidence) >= n:  # the floor (and the least limit of 1) in
        size -= 1  # limit_budget: step onto the exact edge from either side
    while limit_budget(size, confidence) < n:
        size += 1
    return size


GRID_FROM = 1_000  # above this many trials the budgets shown are a grid: every n to 100, then 100 log-spaced


def shown_budgets(size: int) -> np.ndarray:
    """The budgets a comparison shows by default: every n = 1..N for N <= GRID_FROM, else every n up to
    100 and 100 log-spaced budgets from there to N (the claims hold simultaneously over those shown)."""
    if size <= GRID_FROM:
        return np.arange(1, size + 1)
    return np.unique(np.concatenate([np.arange(1, 101), np.geomspace(100, size, 100).round().astype(int)]))


@lru_cache(maxsize=8)
def _normal_draws(dim: int) -> np.ndarray:
    """Fixed standard normal draws (seed 0), shape (dim, MAXT_DRAWS): a comparison is a deterministic
    function of its data."""
    out = np.ascontiguousarray(np.random.default_rng(0).standard_normal((MAXT_DRAWS, dim)).T)
    out.flags.writeable = False
    return out


def _abs_draws(dev_a: np.ndarray, dev_b: np.ndarray):
    """Blocks of |Z| with Z ~ N(0, R), R the jackknife correlation of the differences over the budgets:
    arrays of shape (budgets, draws in the block), :data:`MAXT_DRAWS` draws in all (fixed, seed 0)."""
    cov = dev_a @ dev_a.T * ((dev_a.shape[1] - 1) / dev_a.shape[1])
    cov += dev_b @ dev_b.T * ((dev_b.shape[1] - 1) / dev_b.shape[1])
    sd = np.sqrt(np.diag(cov))
    vals, vecs = np.linalg.eigh(cov / np.outer(sd, sd))
    keep = vals > 1e-12 * vals.max()  # R is close to low rank when the budgets are many
    root = vecs[:, keep] * np.sqrt(vals[keep])
    base = _normal_draws(root.shape[1])
    step = max(1, _MATRIX_CELLS // root.shape[0])  # draws per block: memory stays bounded
    for start in range(0, MAXT_DRAWS, step):
        block = root @ base[:, start:start + step]
        yield np.abs(block, out=block)


def _quantile(top: np.ndarray, alpha: float) -> float:
    """The (1 - alpha) quantile of sorted draws, as the order statistic ceil((1 - alpha) D)."""
    return float(top[math.ceil((1.0 - alpha) * top.size) - 1])


def _maxt(dev_a: np.ndarray, dev_b: np.ndarray, z: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Single step: the critical value c of max_k |Z_k| at every budget, and the adjusted
    p_k = P(max |Z| >= |z_k|): |z_k| > c exactly when p_k <= alpha."""
    top = np.sort(np.concatenate([block.max(axis=0) for block in _abs_draws(dev_a, dev_b)]))
    return np.full(z.size, _quantile(top, alpha)), 1.0 - np.searchsorted(top, np.abs(z), side="left") / top.size


def _stepdown(dev_a: np.ndarray, dev_b: np.ndarray, z: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Step-down max-|T| (Romano and Wolf 2005, Algorithm 2.1 with the Gaussian law of the jackknife T):
    budgets in order of |z|, the j-th is compared with the (1 - alpha) quantile c_j of the max of |Z| over it
    and those after it, until one is not beyond its c_j; those after keep that c. Rejects every budget the
    single step does and more, at the same family-wise error for the two-sided tests (for the signs named it
    is measured: ``benchmarks/inference.py``). Holds budgets x :data:`MAXT_DRAWS` draws at once. Returns each
    budget's c and adjusted p (the running maximum, in that order, of P(max over the rest >= |z_j|))."""
    order = np.argsort(-np.abs(z), kind="stable")
    rest = np.concatenate([np.maximum.accumulate(block[order][::-1], axis=0)[::-1]
                           for block in _abs_draws(dev_a, dev_b)], axis=1)  # row j: max over order[j:]
    rest.sort(axis=1)
    crit = np.array([_quantile(row, alpha) for row in rest])
    tail = np.array([1.0 - np.searchsorted(row, abs(x), side="left") / row.size for row, x in zip(rest, z[order])])
    beyond = np.abs(z[order]) > crit
    stop = int(np.argmin(beyond)) if not beyond.all() else beyond.size  # the first budget not beyond its c
    if stop < crit.size:
        crit[stop:] = crit[stop]
    out_c, out_p = np.empty(z.size), np.empty(z.size)
    out_c[order], out_p[order] = crit, np.maximum.accumulate(tail)
    return out_c, out_p


def _studentized(xa: np.ndarray, xb: np.ndarray, budgets: np.ndarray, limit: int):
    """For sorted samples: V_n^A - V_n^B, its jackknife standard error, the Welch-Satterthwaite degrees of
    freedom (Kish's per group; NaN past ``limit`` or where the error is 0: every relevant trial tied), the
    centred leave-one-out deviations of each group at the budgets up to the limit, and that mask."""
    est = expected_max_unbiased(xa, budgets) - expected_max_unbiased(xb, budgets)
    ok = budgets <= limit  # the jackknife is needed only where a claim is possible
    dev_a, dev_b = _deviations(xa, budgets[ok]), _deviations(xb, budgets[ok])
    var_a, var_b, df = (np.full(budgets.size, np.nan) for _ in range(3))
    var_a[ok] = (xa.size - 1) / xa.size * np.sum(dev_a**2, axis=1)
    var_b[ok] = (xb.size - 1) / xb.size * np.sum(dev_b**2, axis=1)
    se = np.sqrt(var_a + var_b)
    live = ok & (np.nan_to_num(se) > 0)
    df[live] = (var_a[live] + var_b[live]) ** 2 / (var_a[live] ** 2 / _kish_dof(xa.size, budgets[live])
                                                   + var_b[live] ** 2 / _kish_dof(xb.size, budgets[live]))
    return est, se, df, dev_a, dev_b, ok


def jackknife_t(scores_a, scores_b, at: Budgets, confidence: float = 0.95,
                maximize: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of :func:`compare`'s test at the budgets ``at``: V_n^A - V_n^B (oriented: positive means A
    is better), its jackknife standard error and the degrees of freedom of its t; the degrees of freedom are
    NaN where no claim is possible (past :func:`limit_budget` of the smaller N, or a standard error of 0)."""
    xa = _sorted(scores_a, maximize, least=2, what="group A")
    xb = _sorted(scores_b, maximize, least=2, what="group B")
    size = min(xa.size, xb.size)
    budgets = check_budgets(at, n_max=size)
    est, se, df = _studentized(xa, xb, budgets, limit_budget(size, confidence))[:3]
    return est, se, df


def compare(scores_a, scores_b, names: tuple[str, str] = ("A", "B"), ns: Budgets | None = None,
            at: Budgets | None = None, confidence: float = 0.95, maximize: bool = True,
            adjust: str = "stepdown") -> Difference:
    """Is A's tuning curve above B's, and where? A jackknife-t comparison of V_n (Eq. 8, unbiased).

    T_n = (V_n^A - V_n^B) / sqrt(var_A + var_B), jackknife variances, against Student's t with
    Welch-Satterthwaite degrees of freedom (Kish's per group; Welch's t-test at n = 1). ``at``:
    pre-stated budgets, each at level 1 - confidence ("pointwise"). Otherwise the budgets ``ns``
    (default :func:`shown_budgets` of the smaller N) with claims that hold simultaneously over those up to :func:`limit_budget`
    ("simultaneous"; ``adjust`` "stepdown", "maxt" (single step) or "bonferroni"). See the module doc."""
    alpha = _alpha(confidence)
    if len(names) != 2 or str(names[0]) == str(names[1]):
        raise ValueError(f"names must be two different labels, got {names!r}")
    if adjust not in ("stepdown", "maxt", "bonferroni"):
        raise ValueError(f"adjust must be 'stepdown', 'maxt' or 'bonferroni', got {adjust!r}")
    if at is not None and ns is not None:
        raise ValueError("give either at (budgets stated in advance) or ns (budgets shown), not both")
    xa = _sorted(scores_a, maximize, least=2, what=f"group {names[0]}")
    xb = _sorted(scores_b, maximize, least=2, what=f"group {names[1]}")
    size = min(xa.size, xb.size)
    chosen = at if at is not None else ns if ns is not None else shown_budgets(size)
    budgets = check_budgets(chosen, n_max=size)
    if np.unique(budgets).size != budgets.size:
        raise ValueError(f"budgets must not repeat, got {budgets.tolist()}")
    limit = limit_budget(size, confidence)
    est, se, df, dev_a, dev_b, ok = _studentized(xa, xb, budgets, limit)
    live = np.isfinite(df)
    t = np.full(budgets.size, np.nan)
    t[live] = est[live] / se[live]
    p = np.full(budgets.size, np.nan)
    p[live] = 2.0 * t_sf(np.abs(t[live]), df[live])
    claim = "pointwise" if at is not None else "simultaneous"
    k = int(live.sum())
    crit = np.full(budgets.size, np.inf)
    if k and (claim == "pointwise" or k == 1):
        crit[live] = t_isf(alpha / 2.0, df[live])
    elif k and adjust == "bonferroni":
        crit[live] = t_isf(alpha / (2.0 * k), df[live])
        p[live] = np.minimum(1.0, p[live] * k)
    elif k:
        keep = live[ok]
        z = normal_isf(np.maximum(p[live], 1e-300) / 2.0)  # each |T_n| as a normal deviate
        c, p[live] = (_stepdown if adjust == "stepdown" else _maxt)(dev_a[keep], dev_b[keep], z, alpha)
        crit[live] = t_isf(normal_sf(c), df[live])
    half = np.full(budgets.size, np.inf)
    half[live] = crit[live] * se[live]
    low, high = est - half, est + half
    return Difference((str(names[0]), str(names[1])), budgets, est, low, high, float(confidence), None,
                      method="jackknife", claim=claim, limit=limit, p=p)


@dataclass(frozen=True)
class BudgetInterval:
    """The first n whose expected best reaches ``target``: ``estimate`` (None: not within the N trials)
    and the interval [low, high] at the stated confidence. ``low`` = limit + 1: not reached by the
    limit; ``high`` None: not certainly reached by the limit, past which N trials locate nothing (:meth:`words`)."""

    target: float
    estimate: int | None
    low: int
    high: int | None
    limit: int

    def words(self, trials: int) -> str:
        """The interval in words, ``4-8``; unbounded, with why in the same sentence: past the limit budget
        (docs/syw.md) ``trials`` scores locate nothing, so the interval stops there even where the estimate
        lies beyond it (``7 to beyond 9, the limit budget: ...`` for an estimate of 17)."""
        if self.high is not None:
            return f"{self.low}-{self.high}"
        start = f"{self.low} to beyond {self.limit}" if self.low <= self.limit else f"beyond {self.limit}"
        return f"{start}, the limit budget: beyond it nothing can be located with {trials} trials"


def budget_interval(scores, target: float, confidence: float = 0.95, maximize: bool = True) -> BudgetInterval:
    """Trials needed to reach ``target``: the first n with V_n >= target (Eq. 8, unbiased), with an
    interval from inverting one-sided jackknife-t bounds of V_n at (1 - confidence) / 2 each over
    n = 1..limit: low is the first n whose upper bound reaches the target, high the first n whose
    lower bound does. Lower is better with ``maximize=False``: "reaches" is then "falls to"."""
    alpha = _alpha(confidence)
    x = _sorted(scores, maximize, least=2, what="budget_interval")
    if not np.isfinite(float(target)):
        raise ValueError(f"target must be finite, got {target}")
    goal = float(target) if maximize else -float(target)
    est = _apply(x, np.arange(1, x.size + 1))
    reached = np.flatnonzero(est >= goal)
    limit = min(limit_budget(x.size, confidence), x.size - 1)
    ns = np.arange(1, limit + 1)
    se = np.sqrt((x.size - 1) / x.size * np.sum(_deviations(x, ns) ** 2, axis=1))
    q = t_isf(alpha / 2.0, _kish_dof(x.size, ns))
    up, down = np.flatnonzero(est[:limit] + q * se >= goal), np.flatnonzero(est[:limit] - q * se >= goal)
    return BudgetInterval(float(target), int(reached[0]) + 1 if reached.size else None,
                          int(up[0]) + 1 if up.size else limit + 1, int(down[0]) + 1 if down.size else None, limit)


def rule(confidence: float = 0.95) -> str:
    """The report's paragraph on how a comparison is made (the module doc in words)."""
    alpha = _alpha(confidence)
    return (f"**Difference of two curves** (`syw/analysis/inference.py`): the unbiased estimate of each group's "
            "expected best of n (the mean best over all n-subsets of its trials), their difference over its "
            "jackknife standard error, against Student's t with Welch-Satterthwaite degrees of freedom (each "
            "group's from the effective number of trials its estimate rests on); at n = 1 this is Welch's t-test on "
            f"the means. Budgets given with `--at` are each tested at {confidence:.0%} (pointwise claims). Otherwise "
            "the claims hold simultaneously, step down (Romano and Wolf): the budgets in order of |t|, each against the "
            "critical value of the largest |t| over the budgets not yet decided, from the jackknife correlation of the "
            "estimates across budgets, until one falls short; an interval shows the sign its claim makes. No leader is named beyond the limit "
            f"floor(N ln 2 / ln({2 / alpha:g})), N the smaller group: there the largest of N trials may well lie below "
            "what decides the best of n, and no assumption-free claim is possible. Measured error and power on "
            "synthetic and real trial sets: docs/syw.md (`make bench-inference`).")


def limit_lines(diffs: list[Difference], sizes: dict[str, int]) -> list[str]:
    """What the trials allow: the limit budget of each comparison and the trials a claim past it needs."""
    out = []
    for d in diffs:
        if d.limit is None:
            continue
        size = min(sizes[d.names[0]], sizes[d.names[1]])
        past = [int(n) for n in d.ns if n > d.limit] if d.claim == "pointwise" else []
        need = "; ".join(f"a claim at n = {n} needs {trials_needed(n, d.confidence)} trials per group" for n in past)
        out.append(f"With N = {size} trials in the smaller group, {d.names[0]} vs {d.names[1]} can be decided "
                   f"without assumptions up to n = {d.limit}" + (f"; {need}" if need else
                   f" (n = {2 * d.limit} would need {trials_needed(2 * d.limit, d.confidence)} trials per group)") + ".")
    return out


__all__ = ["BudgetInterval", "budget_interval", "compare", "jackknife_t", "jackknife_variance", "limit_budget",
           "limit_lines", "rule", "shown_budgets", "trials_needed"]
