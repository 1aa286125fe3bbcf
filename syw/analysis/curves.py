"""The expected-max curve of each group of someone's trials, with what ``syw curve`` adds around it:
the spread, the unbiased estimate, a quantile curve, confidence bands, a forecast past N, budgets to
reach targets, and the difference of two groups' curves with its band.

Up to :data:`syw.analysis.inference.GRID_FROM` trials a curve holds every budget n = 1..N; past it, the
budgets of :func:`curve_budgets` (every n to 100, round budgets, 100 log-spaced to N), each exact: a
table of a million trials needs no million rows, and Eq. 8 at every n would cost O(N^2). A budget to
reach a target is then found exactly by bisection between two budgets of the grid (Eq. 8 rises with n)."""
from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd

from syw.analysis.adaptive import progress
from syw.analysis.bands import confidence_bands
from syw.analysis.budget import budget_to_reach, crossovers, time_crossovers
from syw.analysis.compare import Difference, difference
from syw.analysis.cost import CostCurve, cost_crossings, drawn_from, for_groups
from syw.analysis.expected_max import expected_max_unbiased, expected_max_with_std
from syw.analysis.floors import deciding_trial
from syw.analysis.forecast import Forecast, forecast
from syw.analysis.group import Group
from syw.analysis.inference import GRID_FROM, compare, shown_budgets
from syw.analysis.selected import selected_test
from syw.analysis.statistic import MEAN, Statistic
from syw.core.units import human_duration


@dataclass(frozen=True)
class Options:
    """What to compute beyond Eq. 8 (see ``syw curve --help``)."""

    maximize: bool = True
    statistic: Statistic = MEAN  # the statistic drawn: the mean (Eq. 8) or a quantile of the best of n
    confidence: float | None = None  # simultaneous bands at this level; None: no bands
    bounds: tuple[float, float] | None = None  # the metric's range, which the bands need
    band_method: str = "ks"
    forecast_to: int | None = None  # forecast the expected max up to this n; None: no forecast
    forecast_model: str = "quadratic"
    forecast_level: float = 0.9
    forecast_resamples: int = 100
    forecast_tail: float = 0.0
    workers: int | None = None  # cost-aware curves with this many workers; None: none
    compare_method: str = "jackknife"  # the difference of two curves: "jackknife" (syw.analysis.inference) or "bands"
    at: tuple[int, ...] | None = None  # budgets stated in advance: pointwise claims there; None: simultaneous claims
    compare_confidence: float = 0.95  # the level of the comparison's claims


@dataclass(frozen=True)
class Curve:
    """One group's scores and its curves: Eq. 8, its SD and the unbiased estimate at n = 1..N."""

    name: str
    label: str
    scores: np.ndarray
    durations: np.ndarray | None
    mean: np.ndarray
    sd: np.ndarray
    unbiased: np.ndarray
    band: tuple[np.ndarray, np.ndarray] | None  # the drawn statistic's band at n = 1..len (may pass N)
    forecast: Forecast | None
    statistic: Statistic = MEAN
    quantile: np.ndarray | None = None  # the statistic's curve at the curve's budgets when it is a quantile
    strategy: str | None = None  # an adaptive search: mean/sd are its best so far over runs (analysis.adaptive)
    runs: int = 1
    cost: CostCurve | None = None  # the cost-aware curve (analysis.cost), with --x cost
    selected: tuple[np.ndarray, np.ndarray] | None = None  # test score of the trial validation picks: mean, SD
    maximize: bool = True  # the direction Eq. 8 was computed in
    grid: np.ndarray | None = None  # the budgets of mean, sd, ... past GRID_FROM trials; None: every n = 1..len

    @cached_property
    def sway(self) -> tuple[int, float, float] | None:
        """The trial that moves the mean curve by more than the spread of the rest (``syw.analysis.floors``:
        its index, the move, the spread), else None; computed once for the figure and the report."""
        return None if self.strategy is not None else deciding_trial(self.scores, maximize=self.maximize)

    @property
    def mean_duration(self) -> float | None:
        return None if self.durations is None else float(np.mean(self.durations))

    @property
    def ns(self) -> np.ndarray:
        """The budgets of :attr:`mean`: n = 1..N (the paper claims nothing past the N trials there are, section
        3.1), or past GRID_FROM trials those of :func:`curve_budgets`."""
        return self.grid if self.grid is not None else np.arange(1, self.mean.size + 1)

    def upto(self, n_max: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The budgets up to n_max, Eq. 8 there and its spread: what a figure draws on an axis ending at n_max."""
        k = self.mean.size if n_max is None else int(np.searchsorted(self.ns, n_max, side="right"))
        return self.ns[:k], self.mean[:k], self.sd[:k]

    def at(self, n: int, values: np.ndarray | None = None) -> float:
        """``values`` (default: the drawn curve) at budget n; NaN where n is past them. Off the grid of a large
        curve, the drawn curve and the unbiased estimate are computed there, exactly."""
        values = self.drawn if values is None else values
        ns = self.ns[: values.size]
        k = int(np.searchsorted(ns, n))
        if k < ns.size and ns[k] == n:
            return float(values[k])
        if self.grid is None or n > self.scores.size or not any(values is v for v in (self.drawn, self.unbiased, self.sd)):
            return float("nan")
        if values is self.unbiased:
            return float(expected_max_unbiased(self.scores, [n], maximize=self.maximize)[0])
        if values is self.sd:
            return float(expected_max_with_std(self.scores, [n], maximize=self.maximize)[1][0])
        return float(_drawn_at(self, [n])[0])

    def reach(self, target: float, decimals: int | None = None) -> int | None:
        """The first budget n whose drawn curve reaches ``target`` (``syw.analysis.budget.RULE``), exact on a grid too."""
        hit = budget_to_reach(self.drawn, target, maximize=self.maximize, decimals=decimals)
        if self.grid is None or hit is None or hit == 1:
            return None if hit is None else int(self.ns[hit - 1])
        low, high = int(self.grid[hit - 2]), int(self.grid[hit - 1])  # the curve misses at low, reaches at high
        while high - low > 1:  # Eq. 8 (and every quantile of the best of n) never falls as n grows
            mid = (low + high) // 2
            if budget_to_reach(_drawn_at(self, [mid]), target, maximize=self.maximize, decimals=decimals):
                high = mid
            else:
                low = mid
        return high

    @property
    def drawn(self) -> np.ndarray:
        """The curve the figure draws and the report reads: Eq. 8, or the quantile curve."""
        return self.mean if self.statistic.is_mean else self.quantile

    def quartiles(self, maximize: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """The 25% and 75% quantiles of the best of n at the curve's budgets: the spread a quantile curve is shaded with."""
        ns = self.ns[self.ns <= self.scores.size]
        return tuple(Statistic(q).curve(self.scores, ns, maximize=maximize) for q in (0.25, 0.75))


def curve_budgets(size: int) -> np.ndarray:
    """The budgets a curve of ``size`` trials holds: every n = 1..N up to GRID_FROM trials; past it the budgets a
    comparison shows (``syw.analysis.inference.shown_budgets``) and the round ones (1, 2, 5 x 10^k) up to N."""
    if size <= GRID_FROM:
        return np.arange(1, size + 1)
    rounds = [m * 10 ** k for k in range(int(np.log10(size)) + 1) for m in (1, 2, 5) if m * 10 ** k <= size]
    return np.unique(np.concatenate([shown_budgets(size), rounds]))


def _drawn_at(curve: Curve, ns) -> np.ndarray:
    """The drawn curve (Eq. 8, or the quantile curve) of ``curve``'s scores at budgets ``ns``."""
    return curve.statistic.curve(curve.scores, ns, maximize=curve.maximize)


def bounds_for(scores: list[np.ndarray], bounds: tuple[float, float] | None, source: str) -> tuple[float, float]:
    """The metric's range for the bands: as given, else (0, 1) when every score lies there."""
    low = min(float(s.min()) for s in scores)
    high = max(float(s.max()) for s in scores)
    if bounds is None:
        if 0.0 <= low and high <= 1.0:
            return (0.0, 1.0)
        raise ValueError(f"{source}: the bands need the metric's bounds and the scores range from {low:g} to "
                         f"{high:g}, not within [0, 1]: pass --bounds LOW HIGH")
    if not bounds[0] <= low <= high <= bounds[1]:
        raise ValueError(f"{source}: scores range from {low:g} to {high:g}, outside --bounds {bounds[0]:g} {bounds[1]:g}")
    return bounds


def build(groups: list[Group], options: Options, source: str) -> list[Curve]:
    """A :class:`Curve` per group (``syw.curve.prepare``)."""
    bounds = band_bounds([g.scores for g in groups], options, source) if options.confidence else None
    timed = {g.name: (g.scores, g.durations) for g in groups if g.durations is not None and g.strategy is None}
    costs = for_groups(timed, workers=options.workers, maximize=options.maximize) if options.workers and timed else {}
    out = []
    for group in groups:
        name, scores = group.name, group.scores
        if group.strategy is not None:
            out.append(adaptive_curve(group, options.maximize))
            continue
        base = curve_of(group, options.maximize)
        ns = base.ns
        top = max(scores.size, options.forecast_to or 0)
        band = None
        if options.confidence:
            with warnings.catch_warnings():  # ties: the report says what they mean for the band
                warnings.simplefilter("ignore", RuntimeWarning)
                low, _, high = confidence_bands(scores, np.arange(1, top + 1), confidence=options.confidence,
                                                bounds=bounds, maximize=options.maximize, method=options.band_method,
                                                statistic=options.statistic)
            band = (low, high)
        predicted = None
        if options.forecast_to:
            try:
                predicted = forecast(scores, np.arange(1, top + 1), model=options.forecast_model,
                                     maximize=options.maximize, tail=options.forecast_tail,
                                     level=options.forecast_level, resamples=options.forecast_resamples)
            except ValueError as err:
                raise ValueError(f"{source}: group {name}: {err}") from None
        quantile = None if options.statistic.is_mean else options.statistic.curve(scores, ns, maximize=options.maximize)
        selected = None if group.tests is None else selected_test(scores, group.tests, ns, maximize=options.maximize)
        out.append(replace(base, band=band, forecast=predicted, statistic=options.statistic,
                           quantile=quantile, cost=costs.get(str(name)), selected=selected))
    return out


def curve_of(group: Group, maximize: bool = True, n_max: int | None = None) -> Curve:
    """A random search's :class:`Curve`: Eq. 8, its SD (Eq. 9's spread) and the unbiased estimate at n = 1..N
    (to ``n_max`` when given: Eq. 8 is defined past N, the unbiased estimate is not and is NaN there); the one
    curve every figure, table, verdict, README and ``syw curve`` reads (:func:`build` adds the rest)."""
    big_n = group.scores.size
    grid = curve_budgets(big_n) if n_max is None and big_n > GRID_FROM else None
    ns = grid if grid is not None else np.arange(1, (n_max or big_n) + 1)
    unbiased = np.full(ns.size, np.nan)
    unbiased[: int((ns <= big_n).sum())] = expected_max_unbiased(group.scores, ns[ns <= big_n], maximize=maximize)
    mean, sd = expected_max_with_std(group.scores, ns, maximize=maximize)
    return Curve(group.name, group.label, group.scores, group.durations, mean, sd, unbiased, None, None,
                 maximize=maximize, grid=grid)


def adaptive_curve(group: Group, maximize: bool) -> Curve:
    """An adaptive search's :class:`Curve`: its runs' mean best so far in trial order, their SD, no Eq. 8."""
    seen = progress(group.scores, group.order, group.runs, maximize=maximize)
    none = np.full(seen.mean.size, np.nan)
    return Curve(group.name, group.label, group.scores, group.durations, seen.mean, seen.sd, none, None, None,
                 strategy=group.strategy, runs=seen.runs, maximize=maximize)


def band_bounds(scores: list[np.ndarray], options: Options, source: str) -> tuple[float, float]:
    """The bounds a band is computed with: :func:`bounds_for` for the mean; a quantile's band needs none
    (infinite where given none and the scores lie outside [0, 1])."""
    if not options.statistic.is_mean and options.bounds is None:
        low, high = min(float(s.min()) for s in scores), max(float(s.max()) for s in scores)
        return (0.0, 1.0) if 0.0 <= low and high <= 1.0 else (-np.inf, np.inf)
    return bounds_for(scores, options.bounds, source)


def comparisons(curves: list[Curve], options: Options, source: str,
                pair: tuple[str, str] | None = None) -> tuple[list[Difference], list[str]]:
    """The difference of ``pair``'s curves, else of every pair of groups, with intervals at
    ``options.compare_confidence``: the jackknife comparison of ``syw.analysis.inference`` (claims
    at ``options.at``, else simultaneous ones), or the crossed bands of ``syw.analysis.compare``; and
    notes on pairs it could not be computed for."""
    names = [c.name for c in curves]
    adaptive = [c.name for c in curves if c.strategy is not None]
    if pair is not None and set(pair) & set(adaptive):
        raise ValueError(f"{source}: --compare: {', '.join(sorted(set(pair) & set(adaptive)))} is an adaptive search; "
                         "the difference of Eq. 8 curves assumes random search")
    if pair is not None:
        missing = [p for p in pair if p not in names]
        if missing:
            raise ValueError(f"{source}: --compare names {', '.join(map(repr, missing))}, not a group with a finished, "
                             f"scored trial here (groups with a curve: {', '.join(names)})")
        pairs = [pair]
    else:
        pairs = list(itertools.combinations([n for n in names if n not in adaptive], 2))
    by_name = {c.name: c for c in curves}
    confidence = options.compare_confidence
    out, notes = [], []
    for a, b in pairs:
        if options.compare_method == "jackknife":
            try:
                out.append(compare(by_name[a].scores, by_name[b].scores, (a, b), at=options.at, confidence=confidence,
                                   maximize=options.maximize))
            except ValueError as err:
                if pair is not None:
                    raise ValueError(f"{source}: --compare {a} {b}: {err}") from None
                notes.append(f"no comparison of {a} and {b}: {err}")
            continue
        try:
            bounds = band_bounds([by_name[a].scores, by_name[b].scores], options, source)
        except ValueError as err:
            if pair is not None:
                raise
            notes.append(f"no difference band for {a} vs {b}: {str(err).split(': ', 1)[1]}")
            continue
        with warnings.catch_warnings():  # ties: the report says what they mean for the band
            warnings.simplefilter("ignore", RuntimeWarning)
            out.append(difference(by_name[a].scores, by_name[b].scores, (a, b), confidence=confidence, bounds=bounds,
                                  statistic=options.statistic, maximize=options.maximize, method=options.band_method))
    return out, notes


def table(curves: list[Curve], group: str) -> pd.DataFrame:
    """One row per (group, n), n = 1..max(N, forecast horizon): Eq. 8, its SD and the unbiased estimate
    (n <= N), the quantile curve with ``--statistic``, seconds, the drawn statistic's band and the forecast
    with its interval where computed."""
    blocks = []
    for c in curves:
        top = max(c.scores.size, c.forecast.ns.size if c.forecast else 0, c.band[0].size if c.band else 0)
        ns = np.arange(1, top + 1) if c.grid is None else np.concatenate([c.grid, np.arange(c.scores.size + 1, top + 1)])
        pad = lambda values: np.concatenate([values, np.full(ns.size - values.size, np.nan)])  # noqa: E731
        every = lambda values: _at_budgets(values, ns)  # noqa: E731  (computed at every n = 1..len: read at ns)
        if c.strategy is not None:
            blocks.append(pd.DataFrame({group: c.name, "n": np.arange(1, c.mean.size + 1), "N": c.scores.size,
                                        "strategy": c.strategy,
                                        "runs": c.runs, "best_so_far": c.mean, "best_so_far_sd": c.sd}))
            continue
        block = pd.DataFrame({group: c.name, "n": ns, "N": c.scores.size, "expected_max": pad(c.mean),
                              "spread_sd": pad(c.sd), "unbiased": pad(c.unbiased)})
        if not c.statistic.is_mean:
            block[c.statistic.column] = pad(c.quantile)
        if c.selected is not None:
            block["test_of_selected"], block["test_of_selected_sd"] = pad(c.selected[0]), pad(c.selected[1])
        if c.durations is not None:
            block["seconds"] = ns * c.mean_duration
        if c.band is not None:
            block["band_low"], block["band_high"] = every(c.band[0]), every(c.band[1])
        if c.forecast is not None:
            block["forecast"], block["forecast_low"], block["forecast_high"] = (
                every(c.forecast.mean), every(c.forecast.low), every(c.forecast.high))
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True)


def _at_budgets(values: np.ndarray, ns: np.ndarray) -> np.ndarray:
    """``values`` at n = 1..len read at budgets ``ns``, NaN past their end."""
    out = np.full(ns.size, np.nan)
    inside = ns <= values.size
    out[inside] = values[ns[inside] - 1]
    return out


def cost_table(curves: list[Curve], group: str) -> pd.DataFrame:
    """One row per (group, time) of the cost-aware curves (``syw.analysis.cost``): the expected best within the
    time, its SD, P(at least one trial finished), and whether the figure draws it there."""
    return pd.concat([pd.DataFrame({group: c.name, "seconds": c.cost.seconds, "workers": c.cost.workers,
                                    "expected_best": c.cost.mean, "sd": c.cost.sd,
                                    "p_finished": c.cost.finished, "drawn": drawn_from(c.cost)})
                      for c in curves if c.cost is not None], ignore_index=True)


def budgets(curves: list[Curve], targets: list[tuple[float, str]], maximize: bool = True) -> pd.DataFrame:
    """Per group and target: the first n whose drawn curve (Eq. 8, or the quantile curve) reaches it
    (exact, and both sides rounded to 3 decimals), its time, and the forecast's first n past N when the
    curve does not reach it."""
    rows = []
    for c, (target, note) in itertools.product(curves, targets):
        exact = c.reach(target) if c.maximize == maximize else budget_to_reach(c.drawn, target, maximize=maximize)
        rounded = (c.reach(target, decimals=3) if c.maximize == maximize
                   else budget_to_reach(c.drawn, target, maximize=maximize, decimals=3))
        predicted = None
        if exact is None and c.forecast is not None:
            predicted = budget_to_reach(c.forecast.mean, target, maximize=maximize)
        rows.append(dict(group=c.name, target=target, source=note, trials=exact, trials_rounded_3dp=rounded,
                         seconds=None if exact is None or c.durations is None else exact * c.mean_duration,
                         forecast_trials=predicted))
    return pd.DataFrame(rows, columns=["group", "target", "source", "trials", "trials_rounded_3dp", "seconds",
                                       "forecast_trials"])


def leader_changes(curves: list[Curve], maximize: bool = True) -> list[str]:
    """Where one group overtakes another, on the trial axis and (with durations) the time axis."""
    out = []
    for a, b in itertools.combinations(curves, 2):
        if a.grid is not None or b.grid is not None:  # large curves: where the leader changes on their shared budgets
            shared = np.intersect1d(a.ns, b.ns)
            pick = lambda c: np.array([c.at(int(n)) for n in shared])  # noqa: E731
            for c in crossovers(pick(a), pick(b), (a.name, b.name), maximize=maximize):
                n = int(shared[int(c.at) - 1])
                before = int(shared[int(c.at) - 2]) if c.at > 1 else 0
                between = f" (between the budgets shown, {before} and {n})" if n - before > 1 else ""
                out.append(f"{c.leader} overtakes {c.previous} at n = {n} trials{between}")
        else:
            out += [f"{c.leader} overtakes {c.previous} at n = {c.at} trials"
                    for c in crossovers(a.drawn, b.drawn, (a.name, b.name), maximize=maximize)]
        if a.durations is not None and b.durations is not None and a.grid is None and b.grid is None:
            for c in time_crossovers(a.drawn, a.mean_duration, b.drawn, b.mean_duration, (a.name, b.name),
                                     maximize=maximize, interpolate=True):
                out.append(f"{c.leader} overtakes {c.previous} at {human_duration(c.at)} of training "
                           "(n trials cost n times each group's mean duration; each curve drawn through its points)")
        if a.cost is not None and b.cost is not None:
            for c in cost_crossings(a.cost, b.cost, (a.name, b.name), maximize=maximize):
                out.append(f"{c.leader} overtakes {c.previous} at {human_duration(c.at)} of wall-clock time "
                           f"(cost-aware, {a.cost.workers} worker(s))")
    return out
