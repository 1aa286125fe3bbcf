"""How many trials per group decide A against B at budget n? Power of the pointwise test, simulated (issue 73).

The decision is :func:`syw.analysis.inference.compare` with the budget stated in advance (``at=[n]``): the
jackknife-t test of the unbiased expected best of n (Eq. 8 of Dodge et al. 2019), two-sided at level
1 - confidence, Welch's t-test at n = 1. It names no leader with fewer than
:func:`~syw.analysis.inference.trials_needed` (n) trials per group. Its power with K trials per group is the
chance that it names the group whose curve is truly higher at n.

The truth is unknown: a pilot (a few trials of each group) stands in for it, each group's pilot trials as
its population. Two ways (``method``):

- ``"bootstrap"`` (the default): each simulated search first draws a bootstrap resample of each pilot (a
  population the pilot could have come from), then K trials from it; success is naming the pilot's leader.
  The power is averaged over the pilot's own uncertainty (a predictive power, or assurance): as K grows it
  tends to the chance that the leader at n is the pilot's, and stays below the target at every K when the
  pilot is not sure enough of its leader;
- ``"resample"``: K trials drawn from each pilot as it is, success naming its leader (its Eq. 8 at n, the
  exact curve of that population). A plug-in: exact when the "pilot" is the population, optimistic for a
  real pilot, whose difference is noisy and, when it looks decisive, overstated on average.

Measured (``benchmarks/plan.py``, docs/syw.md): on public searches resampled, with 50-trial pilots, the
power realised at the bootstrap's K is within 0.10 of the promised where the true K is at most about 3
times the pilot's N; the plug-in's falls short by more. Where the truth needs many more trials than the pilot
has, the pilot's difference is mostly noise (its t is about 2.8 sqrt(N / K) plus a standard normal) and no
pilot-only rule keeps its promise: both methods then deliver about half the power, the bootstrap finding a
K for fewer pilots. Simulated searches use common random numbers: the K-trial search of draw d is the first
K trials of one stream, so power grows smoothly with K and the search for the smallest K with enough power
(doubling, then bisection) is stable.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from syw.analysis.expected_max import check_budgets, check_scores, expected_max
from syw.analysis.inference import limit_budget, trials_needed
from syw.analysis.jackknife import _kish_dof, _weights
from syw.analysis.student_t import t_isf

METHODS = {"bootstrap": "resampled from bootstrap resamples of the pilot (its uncertainty averaged over)",
           "resample": "resampled from the pilot's trials (the pilot taken for the truth)"}
DRAWS = 1_000  # simulated searches per power: Monte-Carlo SE 0.013 at a power of 0.8
CAP = 5_000  # the most trials per group a plan considers
BLOCK = 256  # the columns of one seeded block of a draw stream: any K reads the same first K trials
_CELLS = 1_000_000  # draws x trials simulated at once (memory stays near 100 MB)
_TIE = 1e-12  # pilot curves this close at n: no leader to decide


@dataclass(frozen=True)
class PlanRow:
    """The plan at budget n: ``trials_per_group`` is the fewest trials per group (to within 1/64 of itself)
    whose simulated ``power`` reaches the target; None where no size up to the cap does, where the pilot
    cannot speak for n (n > ``limit``, the pilot's :func:`~syw.analysis.inference.limit_budget`) or where
    its curves tie at n (``leader``, the pilot's leader, is None in these two cases). ``power`` is the power
    at ``trials_per_group``, at the cap when none was found, NaN when nothing was simulated. ``least``: the
    fewest trials per group at which the test can name a leader at n at all (``trials_needed``)."""

    n: int
    trials_per_group: int | None
    power: float
    method: str
    leader: str | None
    limit: int
    least: int


def _probability(value, what: str) -> float:
    try:
        p = float(value)
    except (TypeError, ValueError):
        p = math.nan
    if not 0.0 < p < 1.0:
        raise ValueError(f"{what} must be in (0, 1), got {value!r}")
    return p


def _check(confidence: float, draws: int, method: str) -> None:
    _probability(confidence, "confidence")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"draws must be a positive integer, got {draws!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")


def _size(value, what: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{what} must be an integer >= {least}, got {value!r}")
    return int(value)


def _pilot(scores, name: str, maximize: bool) -> np.ndarray:
    arr = check_scores(scores)
    if arr.size < 2:
        raise ValueError(f"the pilot of group {name} needs at least 2 trials, got {arr.size}")
    return arr if maximize else -arr


def _jackknife_var(x: np.ndarray, n: int) -> np.ndarray:
    """The jackknife variance of V_n for each row of x (sorted rows, n < columns), as jackknife.jackknife_variance.

    Leaving out x_(j+1) instead of x_(j) changes V_n by -w'_j (x_(j+1) - x_(j)), w' the weights for N - 1
    trials (syw.analysis.jackknife): the leave-one-out values are a running sum of gaps, so one cumulative
    sum gives them up to a shift, which the variance ignores (nor is there a cancellation to centre away)."""
    size = x.shape[1]
    loo = np.zeros(x.shape)
    np.cumsum(-_weights(size - 1, n) * np.diff(x, axis=1), axis=1, out=loo[:, 1:])
    loo -= loo.mean(axis=1, keepdims=True)
    return (size - 1) / size * np.einsum("ij,ij->i", loo, loo)


def decisions(xa: np.ndarray, xb: np.ndarray, n: int, confidence: float) -> np.ndarray:
    """What ``compare(a, b, at=[n], confidence)`` names for each row pair of the sorted samples xa, xb
    (higher is better, shape (draws, N_a) and (draws, N_b)): +1 A, -1 B, 0 neither; the same test
    vectorized over the rows (0 where n is past the limit of the smaller N)."""
    size = min(xa.shape[1], xb.shape[1])
    if n > limit_budget(size, confidence):
        return np.zeros(xa.shape[0], dtype=int)
    est = xa @ _weights(xa.shape[1], n) - xb @ _weights(xb.shape[1], n)
    var_a, var_b = _jackknife_var(xa, n), _jackknife_var(xb, n)
    se = np.sqrt(var_a + var_b)
    live = se > 0  # every relevant trial tied: compare names no leader
    out = np.zeros(est.size, dtype=int)
    if not live.any():
        return out
    va, vb = var_a[live], var_b[live]
    ka, kb = _kish_dof(xa.shape[1], np.array([n]))[0], _kish_dof(xb.shape[1], np.array([n]))[0]
    df = (va + vb) ** 2 / (va**2 / ka + vb**2 / kb)
    half = t_isf((1.0 - confidence) / 2.0, df) * se[live]
    e = est[live]
    out[live] = np.where(e - half > 0, 1, np.where(e + half < 0, -1, 0))
    return out


class _Searches:
    """Simulated searches of K trials per group from two populations, with common random numbers across K."""

    def __init__(self, pools: tuple[np.ndarray, np.ndarray], draws: int, seed: int, bootstrap: bool) -> None:
        self.pools = tuple(np.sort(p) for p in pools)  # sorted indices then give sorted samples
        self.draws, self.seed = draws, seed
        self.streams: list[np.ndarray] = [np.empty((draws, 0), dtype=np.int32) for _ in pools]
        # each draw's bootstrap resample of the pilot, as indices: fixed across K (common random numbers)
        self.boot = [np.random.default_rng([seed, g, 1]).integers(0, p.size, (draws, p.size), dtype=np.int32)
                     for g, p in enumerate(pools)] if bootstrap else None

    def _stream(self, g: int, size: int) -> np.ndarray:
        """The first ``size`` trial indices of every draw of group g, block by seeded block."""
        have = self.streams[g]
        if have.shape[1] < size:
            width = self.pools[g].size if self.boot is None else self.boot[g].shape[1]
            blocks = [np.random.default_rng([self.seed, g, 0, j]).integers(0, width, (self.draws, BLOCK), dtype=np.int32)
                      for j in range(have.shape[1] // BLOCK, -(-size // BLOCK))]
            have = self.streams[g] = np.hstack([have, *blocks])
        return have[:, :size]

    def sample(self, g: int, size: int, rows: slice) -> np.ndarray:
        """Sorted K-trial samples of group g for the draws in ``rows``."""
        idx = self._stream(g, size)[rows]
        if self.boot is not None:
            idx = np.take_along_axis(self.boot[g][rows], idx, axis=1)
        return self.pools[g][np.sort(idx, axis=1)]

    def signs(self, size: int, n: int, confidence: float) -> np.ndarray:
        """The leader named (+1 A, -1 B, 0 neither) in each simulated search of ``size`` trials per group."""
        step = max(1, _CELLS // size)
        return np.concatenate([decisions(self.sample(0, size, sl), self.sample(1, size, sl), n, confidence)
                               for sl in (slice(s, s + step) for s in range(0, self.draws, step))])


def _leader_sign(a: np.ndarray, b: np.ndarray, n: int) -> int:
    """+1 where A's pilot curve (Eq. 8 on its trials: the exact curve of that population) is higher at n, -1 B, 0 tie."""
    gap = float(expected_max(a, [n])[0] - expected_max(b, [n])[0])
    return 0 if abs(gap) <= _TIE else int(math.copysign(1, gap))


def _power(searches: _Searches, size: int, n: int, sign: int, confidence: float) -> float:
    if size < 2 or n > limit_budget(size, confidence):
        return 0.0
    return float(np.mean(searches.signs(size, n, confidence) == sign))


def power_at(scores_a, scores_b, n: int, trials: int, *, confidence: float = 0.95, method: str = "bootstrap",
             draws: int = DRAWS, seed: int = 0, maximize: bool = True) -> float:
    """The simulated chance that ``compare(A, B, at=[n])`` on ``trials`` trials per group names the pilot's
    leader at n (module doc: ``method``); 0 below :func:`trials_needed` (n), NaN where the pilot's curves tie at n."""
    _check(confidence, draws, method)
    (n,) = check_budgets([n])
    trials = _size(trials, "trials", 1)
    a, b = _pilot(scores_a, "A", maximize), _pilot(scores_b, "B", maximize)
    sign = _leader_sign(a, b, int(n))
    if sign == 0:
        return float("nan")
    return _power(_Searches((a, b), draws, seed, method == "bootstrap"), trials, int(n), sign, confidence)


def _search(power_of, start: int, cap: int, target: float) -> tuple[int | None, float]:
    """The smallest size in [start, cap] whose power reaches ``target`` (power taken as growing with the size):
    doubling from ``start``, then bisection until the bracket is within 1/64 of its top (the simulation's error
    in K is larger). (None, power at the cap) when even the cap falls short."""
    below, size = start - 1, start
    while True:
        p = power_of(size)
        if p >= target:
            break
        if size >= cap:
            return None, p
        below, size = size, min(2 * size, cap)
    top, top_power = size, p
    while top - below > max(1, top // 64):
        mid = (below + top) // 2
        p = power_of(mid)
        if p >= target:
            top, top_power = mid, p
        else:
            below = mid
    return top, top_power


def plan(scores_a, scores_b, at: Sequence[int], *, power: float = 0.8, confidence: float = 0.95, cap: int = CAP,
         method: str = "bootstrap", draws: int = DRAWS, seed: int = 0, maximize: bool = True,
         names: tuple[str, str] = ("A", "B")) -> list[PlanRow]:
    """Trials per group for ``compare(A, B, at=[n], confidence)`` to name the leader at each pre-stated n with
    probability ``power``, simulated from the pilot trials of A and B (module doc). Budgets past the pilot's
    :func:`~syw.analysis.inference.limit_budget` (the smaller pilot's N) get no size: the pilot cannot tell
    its leader there without assumptions."""
    power = _probability(power, "power")
    _check(confidence, draws, method)
    cap = _size(cap, "cap", 2)
    if len(names) != 2 or str(names[0]) == str(names[1]):
        raise ValueError(f"names must be two different labels, got {names!r}")
    budgets = check_budgets(at)
    if np.unique(budgets).size != budgets.size:
        raise ValueError(f"budgets must not repeat, got {budgets.tolist()}")
    a, b = _pilot(scores_a, names[0], maximize), _pilot(scores_b, names[1], maximize)
    limit = limit_budget(min(a.size, b.size), confidence)
    searches = _Searches((a, b), draws, seed, method == "bootstrap")
    rows = []
    for n in map(int, budgets):
        least = trials_needed(n, confidence)
        sign = _leader_sign(a, b, n) if n <= limit else 0
        leader = None if sign == 0 else str(names[0] if sign > 0 else names[1])
        if n > limit or sign == 0:
            rows.append(PlanRow(n, None, float("nan"), METHODS[method], leader, limit, least))
            continue
        if max(2, least) > cap:  # the test cannot name a leader at n with cap trials
            rows.append(PlanRow(n, None, 0.0, METHODS[method], leader, limit, least))
            continue
        size, p = _search(lambda k: _power(searches, k, n, sign, confidence), max(2, least), cap, power)
        rows.append(PlanRow(n, size, p, METHODS[method], leader, limit, least))
    return rows


__all__ = ["CAP", "DRAWS", "METHODS", "PlanRow", "decisions", "plan", "power_at"]
