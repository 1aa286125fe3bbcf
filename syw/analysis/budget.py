"""Budget inference and comparisons between model families (Dodge et al., 2019, section 4)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from syw.analysis.expected_max import expected_max, max_distribution

RULE = (
    "The budget to reach a target is the smallest n whose expected best value (Eq. 8) is at least the "
    "target (at most, for lower-is-better metrics). Where a table says \"rounded\", both sides are first "
    "rounded to 3 decimals, as when a curve is read at reported precision. On the time axis n trials cost n times "
    "the family's mean training duration (the convention of the paper's Figs. 2 and 4); a time crossover "
    "is looked for where both families have a curve (up to each family's N trials)."
)


def _at_least(values: np.ndarray, target: float, maximize: bool, decimals: int | None) -> np.ndarray:
    if decimals is not None:
        values, target = np.round(values, decimals), round(target, decimals)
    return values >= target if maximize else values <= target


def budget_to_reach(
    curve: Sequence[float], target: float, *, maximize: bool = True, decimals: int | None = None
) -> int | None:
    """Smallest budget n (1-based index into ``curve``) whose value reaches ``target``; None if none does (see RULE)."""
    hits = np.flatnonzero(_at_least(np.asarray(curve, dtype=float), target, maximize, decimals))
    return int(hits[0]) + 1 if hits.size else None


def time_axis(n_trials: int, mean_duration: float) -> np.ndarray:
    """Seconds spent on n = 1..n_trials trials: n times the family's mean training duration."""
    if not np.isfinite(mean_duration) or mean_duration <= 0:
        raise ValueError(f"mean training duration must be positive, got {mean_duration}")
    return np.arange(1, int(n_trials) + 1) * float(mean_duration)


@dataclass(frozen=True)
class Crossover:
    """A point where the leading family changes: ``leader`` is ahead from ``at`` on."""

    at: float  # a budget in trials (int) or in seconds
    leader: str
    previous: str


def _leaders(a: np.ndarray, b: np.ndarray, names: tuple[str, str], maximize: bool) -> list[str | None]:
    diff = (a - b) if maximize else (b - a)
    return [names[0] if d > 0 else names[1] if d < 0 else None for d in diff]


def _changes(grid: np.ndarray, leaders: list[str | None]) -> list[Crossover]:
    out: list[Crossover] = []
    current = None
    for at, leader in zip(grid, leaders):
        if leader is None:  # a tie keeps the current leader
            continue
        if current is not None and leader != current:
            out.append(Crossover(at=at.item(), leader=leader, previous=current))
        current = leader
    return out


def crossovers(
    curve_a: Sequence[float], curve_b: Sequence[float], names: tuple[str, str] = ("A", "B"), *, maximize: bool = True
) -> list[Crossover]:
    """Budgets n (trials) at which one family's curve overtakes the other's, on a shared trial axis."""
    a, b = np.asarray(curve_a, dtype=float), np.asarray(curve_b, dtype=float)
    n = min(a.size, b.size)
    return _changes(np.arange(1, n + 1), _leaders(a[:n], b[:n], names, maximize))


def overtakes_from(curve_a: Sequence[float], curve_b: Sequence[float], *, maximize: bool = True) -> int | None:
    """The budget n from which A is ahead of B at every budget up to the shorter curve's end.

    1 when A leads throughout; None when A is not ahead at the end (it never overtakes for good).
    Ties keep the current leader, as in :func:`crossovers`; curves tied from n = 1 have no leader
    until they first differ.
    """
    a, b = np.asarray(curve_a, dtype=float), np.asarray(curve_b, dtype=float)
    n = min(a.size, b.size)
    leaders = _leaders(a[:n], b[:n], ("a", "b"), maximize)
    if next((x for x in reversed(leaders) if x is not None), None) != "a":
        return None
    changes = _changes(np.arange(1, n + 1), leaders)
    first_lead = next(i for i, x in enumerate(leaders) if x is not None) + 1
    return int(changes[-1].at) if changes else first_lead


def bootstrap_overtake(scores_a, scores_b, n_max: int, n_resamples: int, *, seed: int = 0,
                       maximize: bool = True) -> np.ndarray:
    """:func:`overtakes_from` on K resamples of both families' trials (with replacement, original sizes).

    Each resample's curves are Eq. 8 for n = 1..``n_max``; 0 stands for "does not overtake".
    The spread says how much a crossover budget read off N trials per family can be trusted.
    """
    a, b = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    rng = np.random.default_rng(seed)
    ns = np.arange(1, int(n_max) + 1)
    out = np.empty(int(n_resamples), dtype=int)
    for k in range(out.size):
        ra, rb = rng.choice(a, a.size), rng.choice(b, b.size)
        at = overtakes_from(expected_max(ra, ns, maximize=maximize), expected_max(rb, ns, maximize=maximize),
                            maximize=maximize)
        out[k] = 0 if at is None else at
    return out


def _step(curve: np.ndarray, mean_duration: float, times: np.ndarray) -> np.ndarray:
    """The curve on the time axis: at time t the budget is floor(t / duration) trials (NaN before one)."""
    n = np.floor(times / mean_duration + 1e-9).astype(int)
    out = np.full(times.shape, np.nan)
    ok = (n >= 1) & (n <= curve.size)
    out[ok] = curve[n[ok] - 1]
    return out


def changes_on(grid: Sequence[float], curve_a: Sequence[float], curve_b: Sequence[float],
               names: tuple[str, str] = ("A", "B"), *, maximize: bool = True) -> list[Crossover]:
    """Where the leader changes between two curves given on one ``grid`` (NaN: no value there, skipped)."""
    grid, a, b = (np.asarray(v, dtype=float) for v in (grid, curve_a, curve_b))
    ok = ~(np.isnan(a) | np.isnan(b))
    return _changes(grid[ok], _leaders(a[ok], b[ok], names, maximize))


def time_crossovers(
    curve_a: Sequence[float],
    duration_a: float,
    curve_b: Sequence[float],
    duration_b: float,
    names: tuple[str, str] = ("A", "B"),
    *,
    maximize: bool = True,
    interpolate: bool = False,
) -> list[Crossover]:
    """Times (s) at which one family overtakes the other when both spend the same wall time.

    Each family's grid is n times its own mean duration; the comparison runs over the union of
    both grids, from the time both have finished one trial to the time one runs out of curve.
    A family's value at time t is its curve at floor(t / duration) trials; with ``interpolate``, the
    curve drawn through its points (linear between n and n + 1 trials), so that two families of
    nearly equal duration do not trade the lead at every step where one has a trial more.
    """
    a, b = np.asarray(curve_a, dtype=float), np.asarray(curve_b, dtype=float)
    xa, xb = time_axis(a.size, duration_a), time_axis(b.size, duration_b)
    grid = np.union1d(xa, xb)
    if interpolate:
        grid = grid[(grid >= max(xa[0], xb[0])) & (grid <= min(xa[-1], xb[-1]))]
        return changes_on(grid, np.interp(grid, xa, a), np.interp(grid, xb, b), names, maximize=maximize)
    return changes_on(grid, _step(a, duration_a, grid), _step(b, duration_b, grid), names, maximize=maximize)


@dataclass(frozen=True)
class Lead:
    """``leader`` has the highest expected best value from ``start`` until ``end`` (seconds)."""

    start: float
    end: float
    leader: str


def time_leaders(curves: dict[str, tuple[Sequence[float], float]], *, maximize: bool = True) -> list[Lead]:
    """Which family leads at each wall time when every family spends it alone (Figs. 2 and 4).

    ``curves`` maps a family to its Eq. 8 curve (n = 1..N) and its mean trial duration; at time t a
    family's value is its curve at floor(t / duration) trials (none before its first trial), and a
    family whose N trials are spent keeps its value at N: Eq. 8 never falls as n grows, so that is
    a lower bound on what more trials would give. The intervals run from the first finished trial
    of any family to the end of the longest curve; a tie keeps the current leader.
    """
    names = list(curves)
    arrays = {k: np.asarray(c, dtype=float) for k, (c, _) in curves.items()}
    grid = np.unique(np.concatenate([time_axis(arrays[k].size, d) for k, (_, d) in curves.items()]))
    values = np.vstack([_step(arrays[k], curves[k][1], np.minimum(grid, arrays[k].size * curves[k][1])) for k in names])
    oriented = np.where(np.isnan(values), -np.inf, values if maximize else -values)
    leads: list[Lead] = []
    for i, at in enumerate(grid):
        best = oriented[:, i].max()
        if not np.isfinite(best):
            continue
        tied = {names[j] for j in np.flatnonzero(oriented[:, i] == best)}
        if leads and leads[-1].leader in tied:
            continue
        leader = next(k for k in names if k in tied)
        if leads:
            leads[-1] = Lead(leads[-1].start, at.item(), leads[-1].leader)
        leads.append(Lead(at.item(), at.item(), leader))
    if leads:
        leads[-1] = Lead(leads[-1].start, grid[-1].item(), leads[-1].leader)
    return leads


def prob_beats(scores_a, scores_b, n_a: int, n_b: int | None = None, *, maximize: bool = True) -> float:
    """P(best of n_a draws from A beats best of n_b draws from B), ties counted as one half.

    Both draws are from the empirical distributions (the model behind Eq. 8).
    """
    n_b = n_a if n_b is None else n_b
    va, pa = max_distribution(scores_a, n_a, maximize=maximize)
    vb, pb = max_distribution(scores_b, n_b, maximize=maximize)
    sign = 1.0 if maximize else -1.0
    cdf_b = np.cumsum(pb)  # P(B* <= vb) in oriented order
    ob = sign * vb
    below = np.searchsorted(ob, sign * va, side="left")  # count of vb strictly worse
    at_or_below = np.searchsorted(ob, sign * va, side="right")
    p_less = np.where(below > 0, cdf_b[np.maximum(below - 1, 0)], 0.0)
    p_le = np.where(at_or_below > 0, cdf_b[np.maximum(at_or_below - 1, 0)], 0.0)
    return float(pa @ (p_less + 0.5 * (p_le - p_less)))
