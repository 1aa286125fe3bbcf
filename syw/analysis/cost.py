"""Cost-aware curves: the best score within a wall-clock budget when trials differ in cost.

The paper's time axis (Figs. 2 and 4) puts n trials at n times a family's mean duration. A search
spends each trial's own time instead, and a family whose good assignments are slow gains less from
an hour than its mean duration suggests. The cost-aware curve at wall-clock time T:

    k workers each run trials one after another, each trial drawn at random (with replacement)
    from the N observed (score, duration) pairs, as in Eq. 8; B(T) is the best score among the
    trials finished by T. The curve is E[B(T) | at least one trial finished by T], with its ±1 SD.

It is computed by simulating :data:`SEARCHES` such searches (seeded); the report gives the
simulation's standard error and P(at least one trial finished by T). With equal durations d and
one worker it is Eq. 8 at n = floor(T / d) (``tests/analysis/test_cost_curves.py`` checks this, and k
workers: Eq. 8 at k n).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from syw.analysis.budget import Crossover, changes_on
from syw.analysis.expected_max import check_scores

# round durations for time ticks and tables; neighbours at least 2x apart (20min/30min or 16h/1d
# labels overlap on a log axis)
ROUND_DURATIONS = {"0.1s": 0.1, "0.2s": 0.2, "0.5s": 0.5, "1s": 1.0, "2s": 2.0, "5s": 5.0, "10s": 10.0,
                   "20s": 20.0, "1min": 60.0, "2min": 120.0, "5min": 300.0, "10min": 600.0, "20min": 1200.0,
                   "1h": 3600.0, "2h": 7200.0, "4h": 14400.0, "8h": 28800.0, "1d": 86400.0,
                   "2d": 172800.0, "4d": 345600.0, "8d": 691200.0, "16d": 1382400.0, "32d": 2764800.0,
                   "64d": 5529600.0, "128d": 11059200.0}


def round_time_ticks(low: float, high: float, most: int = 6) -> dict[str, float]:
    """Round durations (label -> seconds) between ``low`` and ``high`` seconds, every k-th of
    :data:`ROUND_DURATIONS` with k the smallest keeping at most ``most`` of them."""
    inside = [(label, s) for label, s in ROUND_DURATIONS.items() if low <= s <= high]
    step = max(1, -(-len(inside) // most))
    return dict(inside[::step])


SEARCHES = 4000
STARTED = 0.95  # the curve is drawn from the first T by which this share of searches finished a trial


@dataclass(frozen=True)
class CostCurve:
    """E[best finished by T | one finished], its SD and P(one finished) at each time of ``seconds``."""

    seconds: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    finished: np.ndarray  # P(at least one trial finished by T)
    workers: int
    searches: int

    @property
    def standard_error(self) -> float:
        """The simulation's largest standard error of :attr:`mean` over the times drawn."""
        return float(np.nanmax(self.sd / np.sqrt(np.maximum(self.finished * self.searches, 1.0))))


def time_grid(durations: np.ndarray, points: int = 200, horizon: float | None = None) -> np.ndarray:
    """Log-spaced times from the shortest trial to ``horizon`` (default: all N trials' summed time)."""
    top = float(horizon if horizon is not None else durations.sum())
    return np.geomspace(float(durations.min()), max(top, float(durations.min()) * 1.0001), points)


def cost_curve(scores, durations, seconds: np.ndarray, *, workers: int = 1, maximize: bool = True,
               searches: int = SEARCHES, seed: int = 0) -> CostCurve:
    """The cost-aware curve (module doc) at each time of ``seconds``, by simulating ``searches`` searches."""
    arr, cost = check_scores(scores), check_scores(durations)
    if arr.size != cost.size:
        raise ValueError(f"scores and durations differ in length ({arr.size} and {cost.size})")
    if np.any(cost <= 0):
        raise ValueError(f"durations must be positive, got {cost.min():g}")
    if int(workers) < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    oriented = arr if maximize else -arr
    horizon = float(np.max(seconds))
    rng = np.random.default_rng(seed)
    best = np.full((searches, np.size(seconds)), -np.inf)
    for _ in range(int(workers)):  # workers draw independently; a search's best is the best over its workers
        picks = _enough(rng, cost, searches, horizon)
        ends = np.cumsum(cost[picks], axis=1)
        running = np.maximum.accumulate(oriented[picks], axis=1)
        done = np.stack([np.searchsorted(row, seconds, side="right") for row in ends])  # trials finished by T
        reached = np.where(done > 0, np.take_along_axis(running, np.maximum(done - 1, 0), axis=1), -np.inf)
        best = np.maximum(best, reached)
    started = np.isfinite(best)
    finished = started.mean(axis=0)
    values = np.where(started, best, np.nan)
    with warnings.catch_warnings():  # a time by which no search finished a trial: NaN, not drawn
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, sd = np.nanmean(values, axis=0), np.nanstd(values, axis=0)
    return CostCurve(np.asarray(seconds, dtype=float), mean if maximize else -mean, sd, finished, int(workers),
                     int(searches))


def _enough(rng: np.random.Generator, cost: np.ndarray, searches: int, horizon: float) -> np.ndarray:
    """Trial indices per search, drawn in blocks until every search's trials outlast ``horizon``."""
    block = int(np.ceil(1.5 * horizon / cost.mean())) + 8
    picks = rng.integers(0, cost.size, size=(searches, block))
    while cost[picks].sum(axis=1).min() <= horizon:
        picks = np.hstack([picks, rng.integers(0, cost.size, size=(searches, block))])
    return picks


def drawn_from(curve: CostCurve) -> np.ndarray:
    """Where the curve is drawn: the times by which at least :data:`STARTED` of the searches finished a trial."""
    return curve.finished >= STARTED


def for_groups(groups: dict[str, tuple[np.ndarray, np.ndarray]], *, workers: int = 1, maximize: bool = True,
               points: int = 240) -> dict[str, CostCurve]:
    """Each group's cost-aware curve on one log-spaced grid of times, from the shortest trial of any group
    to each group's own N trials' summed time (what its search cost; NaN past it)."""
    shortest = min(float(d.min()) for _, d in groups.values())
    grid = np.geomspace(shortest, max(float(d.sum()) for _, d in groups.values()), points)
    out = {}
    for name, (scores, durations) in groups.items():
        mine = grid <= float(durations.sum()) * (1 + 1e-9)
        curve = cost_curve(scores, durations, grid[mine], workers=workers, maximize=maximize)
        pad = lambda v: np.concatenate([v, np.full(grid.size - v.size, np.nan)])  # noqa: E731
        out[name] = CostCurve(grid, pad(curve.mean), pad(curve.sd), pad(curve.finished), workers, curve.searches)
    return out


def cost_crossings(a: CostCurve, b: CostCurve, names: tuple[str, str], *, maximize: bool = True) -> list[Crossover]:
    """Times at which one group's cost-aware curve overtakes the other's, where both are drawn."""
    shown = lambda c: np.where(drawn_from(c), c.mean, np.nan)  # noqa: E731
    return changes_on(a.seconds, shown(a), shown(b), names, maximize=maximize)


RULE = (f"**Within a wall-clock budget** (cost-aware; `analysis/cost.py`): k workers each run trials one after "
        "another, each drawn at random (with replacement) from the N observed (score, duration) pairs, as in Eq. 8; "
        "the curve at time T is the expected best score among the trials finished by T, given at least one is, "
        f"with its ±1 SD (clipped to the observed scores), from {SEARCHES} simulated searches (seeded). It is "
        f"drawn from the time by which {STARTED:.0%} of the searches finished a trial, up to the time the group's N "
        "trials took. With equal durations d and one worker it is Eq. 8 at n = floor(T / d).")
