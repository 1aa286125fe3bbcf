"""Comparisons of two tuning curves that say how sure they are (issues 62 and 73).

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
- **simultaneous** (exploratory, the default): all leaders named hold at once, family-wise error alpha
  (:mod:`syw.analysis.multiplicity`). The smallest budget, n = 1, is tested first, by Welch's t-test at
  0.9 alpha; the budgets after it step down (Romano and Wolf 2005: the largest |T| against the critical
  value of max |T| over the budgets left, T ~ N(0, R), R the jackknife correlation across budgets) with
  the alpha n = 1's test leaves on their joint law; alpha passes to the rest when n = 1 is decided and to
  n = 1 when the rest are (``adjust="first"``). Step-down over every budget at once, the default until
  issue 73 (``adjust="stepdown"``), tests n = 1 against the largest |T| of up to the limit budgets: on
  2 x 50 trials it named the right leader at n = 1 in 0.59-1.00 of the resamples where Welch's test
  does, against 0.91-1.00 now, at the cost of claims at n = 5 where n = 1 is undecided (0.28 against
  0.40 with 30% failed trials; docs/syw.md, ``benchmarks/inference.py``). ``adjust="maxt"``: the single step; ``"bonferroni"``. A budget with a
  leader gets its step's critical value, so its interval shows the sign claimed, not a simultaneous
  bound on the size.
- **equivalence** (:func:`syw.analysis.equivalence.equivalence`, budgets stated in advance): "A and B are within +-margin at n",
  two one-sided tests (TOST) at level alpha on the same statistics, pointwise.

No leader is named and no equivalence certified beyond :func:`limit_budget`, where no assumption-free
claim is possible.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from syw.analysis.compare import Difference
from syw.analysis.expected_max import Budgets, check_budgets, expected_max_unbiased
from syw.analysis.jackknife import _apply, _deviations, _kish_dof, _sorted, spread
from syw.analysis.multiplicity import FIRST_SHARE, first_then_rest, maxt, stepdown
from syw.analysis.statistic import MEAN
from syw.analysis.student_t import normal_isf, normal_sf, t_isf, t_sf


def _alpha(confidence: float) -> float:
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return 1.0 - float(confidence)


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


ADJUST = ("first", "stepdown", "maxt", "bonferroni")


def _groups(scores_a, scores_b, names: tuple[str, str], maximize: bool) -> tuple[np.ndarray, np.ndarray]:
    if len(names) != 2 or str(names[0]) == str(names[1]):
        raise ValueError(f"names must be two different labels, got {names!r}")
    return (_sorted(scores_a, maximize, least=2, what=f"group {names[0]}"),
            _sorted(scores_b, maximize, least=2, what=f"group {names[1]}"))


def _unique(budgets: np.ndarray) -> np.ndarray:
    if np.unique(budgets).size != budgets.size:
        raise ValueError(f"budgets must not repeat, got {budgets.tolist()}")
    return budgets


def _jackknife_t(xa: np.ndarray, xb: np.ndarray, budgets: np.ndarray, limit: int, covariance: bool = False):
    """V_n^A - V_n^B, its jackknife SE and Welch-Satterthwaite df (Kish's per group), where a claim is
    possible (``live``: n <= limit and se > 0; NaN elsewhere), and each group's :class:`Spread` at the
    budgets up to the limit (``ok``), with its covariance across them when ``covariance``."""
    est = expected_max_unbiased(xa, budgets) - expected_max_unbiased(xb, budgets)
    ok = budgets <= limit  # the jackknife is needed only where a claim is possible
    spread_a, spread_b = spread(xa, budgets[ok], covariance), spread(xb, budgets[ok], covariance)
    var_a, var_b, df = (np.full(budgets.size, np.nan) for _ in range(3))
    var_a[ok], var_b[ok] = spread_a.var, spread_b.var
    se = np.sqrt(var_a + var_b)
    live = ok & (np.nan_to_num(se) > 0)  # se = 0: every relevant trial tied, the spread is unmeasured
    keep = live[ok]
    df[live] = (var_a[live] + var_b[live]) ** 2 / (var_a[live] ** 2 / spread_a.dof[keep]
                                                   + var_b[live] ** 2 / spread_b.dof[keep])
    return est, se, df, live, ok, spread_a, spread_b


def jackknife_t(scores_a, scores_b, at: Budgets, confidence: float = 0.95,
                maximize: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of :func:`compare`'s test at the budgets ``at``: V_n^A - V_n^B (oriented: positive means A
    is better), its jackknife standard error and the degrees of freedom of its t; the degrees of freedom are
    NaN where no claim is possible (past :func:`limit_budget` of the smaller N, or a standard error of 0)."""
    xa, xb = _groups(scores_a, scores_b, ("A", "B"), maximize)
    size = min(xa.size, xb.size)
    budgets = check_budgets(at, n_max=size)
    est, se, df = _jackknife_t(xa, xb, budgets, limit_budget(size, confidence))[:3]
    return est, se, df


def compare(scores_a, scores_b, names: tuple[str, str] = ("A", "B"), ns: Budgets | None = None,
            at: Budgets | None = None, confidence: float = 0.95, maximize: bool = True,
            adjust: str = "first") -> Difference:
    """Is A's tuning curve above B's, and where? A jackknife-t comparison of V_n (Eq. 8, unbiased).

    T_n = (V_n^A - V_n^B) / sqrt(var_A + var_B), jackknife variances, against Student's t with
    Welch-Satterthwaite degrees of freedom (Kish's per group; Welch's t-test at n = 1). ``at``:
    pre-stated budgets, each at level 1 - confidence ("pointwise"). Otherwise the budgets ``ns``
    (default :func:`shown_budgets` of the smaller N) with claims that hold simultaneously over those up to
    :func:`limit_budget` ("simultaneous"; ``adjust`` "first": the smallest budget first, then the rest;
    "stepdown", "maxt" or "bonferroni": :mod:`syw.analysis.multiplicity`). See the module doc."""
    alpha = _alpha(confidence)
    if adjust not in ADJUST:
        raise ValueError(f"adjust must be one of {', '.join(map(repr, ADJUST))}, got {adjust!r}")
    if at is not None and ns is not None:
        raise ValueError("give either at (budgets stated in advance) or ns (budgets shown), not both")
    xa, xb = _groups(scores_a, scores_b, names, maximize)
    size = min(xa.size, xb.size)
    chosen = at if at is not None else ns if ns is not None else shown_budgets(size)
    budgets = _unique(check_budgets(chosen, n_max=size))
    limit = limit_budget(size, confidence)
    simultaneous = at is None and adjust != "bonferroni"
    est, se, df, live, ok, spread_a, spread_b = _jackknife_t(xa, xb, budgets, limit, covariance=simultaneous)
    p = np.full(budgets.size, np.nan)
    p[live] = 2.0 * t_sf(np.abs(est[live] / se[live]), df[live])
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
        cov = spread_a.covariance(keep) + spread_b.covariance(keep)
        z = normal_isf(np.maximum(p[live], 1e-300) / 2.0)  # each |T_n| as a normal deviate
        if adjust == "first":
            c, p[live] = first_then_rest(cov, z, p[live], int(np.argmin(budgets[live])), alpha)
        else:
            c, p[live] = (stepdown if adjust == "stepdown" else maxt)(cov, z, alpha)
        crit[live] = t_isf(normal_sf(c), df[live])
    half = np.full(budgets.size, np.inf)
    half[live] = crit[live] * se[live]
    return Difference((str(names[0]), str(names[1])), budgets, est, est - half, est + half, float(confidence), MEAN,
                      method="jackknife", claim=claim, limit=limit, p=p, sizes=(xa.size, xb.size))


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
            f"the claims hold simultaneously at {confidence:.0%}: n = 1 first, Welch's t-test at {FIRST_SHARE:g} x "
            f"{alpha:g}; then the other budgets step down (Romano and Wolf), in order of |t|, each against the critical "
            "value of the largest |t| over the budgets not yet decided (from the jackknife correlation of the estimates "
            "across budgets) with the error rate n = 1's test leaves, the whole rate once n = 1 is decided; n = 1 gets "
            "the whole rate once they all are. An interval shows the sign its claim makes. No leader is named beyond the limit "
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


__all__ = ["ADJUST", "BudgetInterval", "budget_interval", "compare", "jackknife_t", "limit_budget", "limit_lines", "rule",
           "shown_budgets", "trials_needed"]
