"""The figure of ``syw curve``: every group's expected-max curve (Eq. 8) of anyone's trials, with the
±1 SD shading, simultaneous confidence bands, a forecast past N and targets, each named in the legend."""
from __future__ import annotations

from pathlib import Path

import matplotlib.ticker
import numpy as np
from matplotlib.lines import Line2D

from syw.analysis import budget_to_reach, time_axis
from syw.analysis.compare import Difference, stretches
from syw.analysis.cost import drawn_from
from syw.analysis.curves import Curve
from syw.analysis.statistic import MEDIAN
from syw.core.units import human_duration
from syw.curve.style import (
    PALETTE,
    SD_LABEL,
    Swatch,
    colours,
    drawable,
    end_at_trials,
    finish,
    fit_y,
    integer_ticks,
    plt,
    shade_sd,
    time_ticks,
    trials_label,
)

QUARTILES_LABEL = "shading: 25% to 75% quantiles of the best of n"
SELECTED_LABEL = "dash-dot: expected test score of the trial validation picks"


def _axis(curve: Curve, size: int, x: str, ns: np.ndarray | None = None) -> np.ndarray:
    """The x of budgets ``ns`` (default n = 1..size): trials, or n times the group's mean training time."""
    ns = np.arange(1, size + 1) if ns is None else ns
    if x == "time":
        if curve.mean_duration is None:
            raise ValueError(f"group {curve.name}: no training durations, no time axis (pass --duration COLUMN)")
        return ns * time_axis(1, curve.mean_duration)[0]
    return ns


SIZES = {"default": (5.5, 4.6), "column": (3.3, 3.0), "page": (6.9, 4.2)}  # inches: one column, a two-column page
PAPER_RC = {"pdf.fonttype": 42, "ps.fonttype": 42}  # TrueType fonts embedded whole, as publishers ask


def draw_curves(curves: list[Curve], out_stem: Path, *, title: str, ylabel: str, x: str = "trials",
                log_x: bool | None = None, sd: bool = True, targets: list[tuple[float, str]] = (),
                maximize: bool = True, band_label: str | None = None, forecast_label: str | None = None,
                size: str = "default", ylim: tuple[float, float] | None = None,
                labels: dict[str, str] | None = None) -> list[Path]:
    """Write ``<out_stem>.pdf`` and ``.png`` at ``size`` (:data:`SIZES`), fonts embedded; ``log_x``: None for a
    log axis of time and a linear one of trials (:func:`plot_on`). ``band_label``/
    ``forecast_label`` name what the bands and forecast are in the legend; ``ylim`` fixes the y axis;
    ``labels`` renames groups in the figure (group -> label)."""
    shown, families = shown_names([c.name for c in curves], labels, [title])
    with plt.rc_context({"font.family": families, **PAPER_RC}):
        return _draw(curves, out_stem, shown, title=title if shown[title] == title else "", ylabel=ylabel, x=x,
                     log_x=log_x, sd=sd, targets=targets, maximize=maximize, band_label=band_label,
                     forecast_label=forecast_label, size=SIZES[size], ylim=ylim)


def shown_names(names: list[str], labels: dict[str, str] | None, more: list[str] = ()) -> tuple[dict[str, str], list]:
    """What the figure writes for each group (its ``labels`` entry, else its name) and for each of ``more``,
    as an installed font can draw it (``syw.curve.style.drawable``); the font families to use."""
    wanted = {n: (labels or {}).get(n, n) for n in names}
    drawn, families = drawable(list(wanted.values()) + list(more))
    return {n: drawn[w] for n, w in wanted.items()} | {m: drawn[m] for m in more}, families


class _Extent:
    """The y values the axes must show and the x ends of what is drawn."""

    def __init__(self) -> None:
        self.lows, self.highs, self.ends, self.bands = [], [], [], []

    def add(self, low: float, high: float) -> None:
        self.lows.append(low)
        self.highs.append(high)


def _plot_curve(ax, c: Curve, style: tuple, label: str, *, x: str, sd: bool, maximize: bool, extent: _Extent) -> None:
    """One group: its curve (best so far for an adaptive search), shading, winner's-curse line, band and forecast."""
    color, linestyle = style
    xs = _axis(c, c.drawn.size, x, c.ns[: c.drawn.size])
    extent.ends.append(xs)
    if c.strategy is not None:  # an adaptive search: what was observed, not Eq. 8
        runs = f"mean of {c.runs} runs" if c.runs > 1 else "1 run"
        ax.plot(xs, c.drawn, color=color, ls=linestyle, lw=1.8, drawstyle="steps-post",
                label=f"{label}: best so far ({c.strategy}, adaptive; {runs}, N = {c.scores.size})")
    else:
        ax.plot(xs, c.drawn, color=color, ls=linestyle, lw=1.8, label=f"{label} (N = {c.scores.size})")
        _median_beside(ax, c, xs, color, label, maximize, extent)
    # from the curve's start to the best score seen (failed trials would squash the curves)
    extent.add(c.drawn.min() if maximize else c.scores.min(), c.scores.max() if maximize else c.drawn.max())
    if sd and c.statistic.is_mean:
        shade_sd(ax, xs, c.mean, c.sd, c.scores, color)
        extent.add(np.clip(c.mean - c.sd, c.scores.min(), None).min() if maximize else extent.lows[-1],
                   extent.highs[-1] if maximize else np.clip(c.mean + c.sd, None, c.scores.max()).max())
    elif sd:
        low, high = c.quartiles(maximize)
        ax.fill_between(xs, low, high, color=color, alpha=0.18, lw=0)
        extent.add(low.min(), high.max())
    if c.selected is not None:  # the winner's curse: what the trial validation picks scores on test data
        ax.plot(xs, c.selected[0], color=color, ls="-.", lw=1.2)
        extent.add(c.selected[0].min(), c.selected[0].max())
    if c.band is not None:
        bx = _axis(c, c.band[0].size, x)
        for edge in (np.where(np.isfinite(e), e, np.nan) for e in c.band):  # infinite: no bound there
            extent.bands += ax.plot(bx, edge, color=color, ls=(0, (4, 2)), lw=0.8)
    if c.forecast is not None:
        past = c.forecast.ns >= c.scores.size
        fx = _axis(c, c.forecast.ns.size, x)[past]
        extent.ends.append(fx)
        ax.plot(fx, c.forecast.mean[past], color=color, ls=":", lw=1.6)
        ax.fill_between(fx, c.forecast.low[past], c.forecast.high[past], color=color, alpha=0.08, lw=0)
        edges = np.concatenate([c.forecast.mean[past], c.forecast.low[past], c.forecast.high[past]])
        extent.add(np.nanmin(edges), np.nanmax(edges))


def _median_beside(ax, c: Curve, xs: np.ndarray, color: str, label: str, maximize: bool, extent: _Extent) -> None:
    """Beside a mean curve that one trial sways (``syw.analysis.floors.MEDIAN_RULE``), its median best of n, dotted."""
    if not c.statistic.is_mean or c.sway is None:
        return
    median = MEDIAN.curve(c.scores, c.ns[c.ns <= c.scores.size], maximize=maximize)
    ax.plot(xs, median, color=color, ls=(0, (1, 1)), lw=1.4, label=f"{label}: median best of n (one trial sways its mean)")
    extent.add(median.min(), median.max())


def _target_lines(ax, curves: list[Curve], styles: dict, shown: dict[str, str], targets, *, x: str,
                  maximize: bool) -> list[Line2D]:
    """A horizontal line per target and a vertical one where each group's curve first reaches it."""
    extra = []
    for target, note in targets:
        ax.axhline(target, color="0.35", ls=":", lw=1)
        extra.append(Line2D([], [], color="0.35", ls=":", label=f"target {target:g}" + (f": {note}" if note else "")))
        for c in curves:
            n = c.reach(target) if c.maximize == maximize else budget_to_reach(c.drawn, target, maximize=maximize)
            if n is not None:
                at = _axis(c, n, x)[-1]
                ax.axvline(at, color=styles[c.name][0], ls=":", lw=1)
                cost = f" ({human_duration(at)})" if x == "time" else ""
                extra.append(Line2D([], [], color=styles[c.name][0], ls=":",
                                    label=f"{shown[c.name]} reaches {target:g} at n = {n}{cost}"))
    return extra


def _shaded(c: Curve, maximize: bool) -> bool:
    """Whether a group's shading shows: its ±1 SD (clipped to the scores) or its quartiles are apart somewhere."""
    if not c.statistic.is_mean:
        low, high = c.quartiles(maximize)
    else:
        low, high = (np.clip(c.mean + s * c.sd, c.scores.min(), c.scores.max()) for s in (-1, 1))
    return bool(np.any(high > low))


def _clip_bands(ax, bands: list[Line2D]) -> bool:
    """Each band edge held to the y axis's range (an edge running off the axes runs along its border): the
    axes fit the curves, not the bands, which near n = 1 span most of the score's range. Whether any was."""
    low, high = ax.get_ylim()
    clipped = False
    for line in bands:
        y = np.asarray(line.get_ydata(), float)
        inside = np.clip(y, low, high)
        clipped |= bool(np.any(np.isfinite(y) & (inside != y)))
        line.set_ydata(inside)
    return clipped


def _keys(curves: list[Curve], styles: dict, *, sd: bool, band_label: str | None, forecast_label: str | None,
          maximize: bool) -> list:
    """Legend entries saying what the shading (in the colours of the groups it shows for), dash-dot, dashed
    and dotted lines are."""
    extra = []
    if sd and (shaded := [c for c in curves if _shaded(c, maximize)]):
        quantile = any(not c.statistic.is_mean for c in curves)
        extra.append(Swatch([styles[c.name][0] for c in shaded], QUARTILES_LABEL if quantile else SD_LABEL))
    if any(c.selected is not None for c in curves):
        extra.append(Line2D([], [], color="0.3", ls="-.", lw=1.2, label=SELECTED_LABEL))
    if band_label:
        extra.append(Line2D([], [], color="0.3", ls=(0, (4, 2)), lw=0.8, label=band_label))
    if forecast_label:
        extra.append(Line2D([], [], color="0.3", ls=":", lw=1.6, label=forecast_label))
    return extra


def _x_axis(ax, x: str, log_x: bool) -> None:
    """Trials (integer ticks, or a log scale) or training time, and the label saying which."""
    if log_x:
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        if x == "trials":
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: trials_label(value)))
    elif x == "trials":
        integer_ticks(ax)
    if x == "time":
        time_ticks(ax)
    ax.set_xlabel("Training time (n trials × the group's mean duration)" if x == "time" else "Hyperparameter assignments (n)")


def plot_on(ax, curves: list[Curve], *, x: str = "trials", log_x: bool | None = None, sd: bool = True,
            targets: list[tuple[float, str]] = (), maximize: bool = True, band_label: str | None = None,
            forecast_label: str | None = None, shown: dict[str, str] | None = None,
            ylim: tuple[float, float] | None = None) -> list:
    """Draw every group's curve (Eq. 8, or the quantile curve) on ``ax``, with its shading, bands, forecast
    and targets; the y range fits what is drawn unless ``ylim`` fixes it. Returns the legend entries beyond
    the curves' own lines (targets, what the shading and line styles mean). ``shown``: the name drawn for
    each group. ``log_x`` None: a log axis of training time, as the paper draws time (its Figures 2 and 4:
    budgets of minutes to days, whose round ticks crowd a linear axis), a linear one of trials."""
    shown = shown or {c.name: c.name for c in curves}
    styles = colours([c.name for c in curves])
    extent = _Extent()
    for c in curves:
        _plot_curve(ax, c, styles[c.name], shown[c.name], x=x, sd=sd, maximize=maximize, extent=extent)
    extra = _target_lines(ax, curves, styles, shown, targets, x=x, maximize=maximize)
    fit_y(ax, *(ylim or (min(extent.lows), max(extent.highs))), [(target, "0.35") for target, _ in targets])
    if ylim:
        ax.set_ylim(*ylim)
    if _clip_bands(ax, extent.bands) and band_label:
        band_label += ", clipped to the axes"
    extra += _keys(curves, styles, sd=sd, band_label=band_label, forecast_label=forecast_label, maximize=maximize)
    end_at_trials(ax, extent.ends)
    _x_axis(ax, x, x == "time" if log_x is None else log_x)
    ax.grid(alpha=0.3, lw=0.5)
    return extra


def _draw(curves: list[Curve], out_stem: Path, shown: dict[str, str], *, title: str, ylabel: str, x: str,
          log_x: bool | None, sd: bool, targets, maximize: bool, band_label: str | None,
          forecast_label: str | None, size: tuple[float, float], ylim: tuple[float, float] | None) -> list[Path]:
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    extra = plot_on(ax, curves, x=x, log_x=log_x, sd=sd, targets=targets, maximize=maximize, band_label=band_label,
                    forecast_label=forecast_label, shown=shown, ylim=ylim)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    return finish(fig, ax, out_stem, extra)


def draw_difference(diff: Difference, out_stem: Path, *, ylabel: str, maximize: bool = True) -> list[Path]:
    """``<out_stem>.pdf``/``.png``: curve(A) - curve(B) against n with its simultaneous band (shaded where
    it is finite), a solid line at zero (in the legend), and the budgets where one group leads at the band's level marked."""
    shown, families = drawable(list(diff.names))
    a, b = (shown[n] for n in diff.names)
    sign = 1.0 if maximize else -1.0  # the figure shows A - B as measured; the band is oriented A better
    with plt.rc_context({"font.family": families}):
        fig, ax = plt.subplots(figsize=(5.5, 4.0), layout="constrained")
        estimate, low, high = sign * diff.estimate, sign * diff.low, sign * diff.high
        edges = np.sort(np.vstack([low, high]), axis=0)
        finite = np.isfinite(edges)
        span = np.concatenate([estimate, edges[finite]])
        pad = 0.1 * (np.ptp(span) or 1.0)
        bottom, top = span.min() - pad, span.max() + pad
        ax.fill_between(diff.ns, np.clip(edges[0], bottom, top), np.clip(edges[1], bottom, top), color="0.6",
                        alpha=0.35, lw=0, label=f"{diff.what} (clipped to the axes)")
        ax.plot(diff.ns, estimate, color="k", lw=1.6, label=f"{a} - {b} (point estimates)")
        # zero, where neither group is ahead: what each interval is read against (a leader's interval lies off it)
        ax.axhline(0.0, color="k", ls="-", lw=1.0, zorder=2.5, label="0: no difference")
        if diff.limit is not None and diff.limit < diff.ns[-1]:
            ax.axvline(diff.limit + 0.5, color="0.2", ls="--", lw=1,
                       label=f"n = {diff.limit}: beyond it no claim without assumptions")
        for who, first, last in stretches(diff):
            if who is not None:
                ax.axvspan(first - 0.5, last + 0.5, color=PALETTE[diff.names.index(who)], alpha=0.12, lw=0,
                           label=f"{shown[who]} leads at {diff.confidence:.0%}")
        ax.set_ylim(bottom, top)
        ax.set_xlim(*((1, diff.ns[-1]) if diff.ns.size > 2 else (0.5, diff.ns[-1] + 0.5)))
        integer_ticks(ax)
        ax.set_xlabel("Hyperparameter assignments (n)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{a} vs {b}", fontsize=9)
        ax.grid(alpha=0.3, lw=0.5)
        return finish(fig, ax, out_stem)


def draw_cost(curves: list[Curve], out_stem: Path, *, title: str, ylabel: str, sd: bool = True,
              targets: list[tuple[float, str]] = (), maximize: bool = True) -> list[Path]:
    """``<out_stem>.pdf``/``.png``: each group's cost-aware curve (``syw.analysis.cost``) against wall-clock time
    on a log axis, shaded ±1 SD clipped to the group's observed scores; targets as lines, and where each
    group's curve first reaches them."""
    drawn = [c for c in curves if c.cost is not None]
    shown, families = drawable([c.name for c in drawn] + [title])
    styles = colours([c.name for c in drawn])
    with plt.rc_context({"font.family": families}):
        fig, ax = plt.subplots(figsize=(5.5, 4.6), layout="constrained")
        lows, highs, extra, ends = [], [], [], []
        for c in drawn:
            color = styles[c.name][0]
            keep = drawn_from(c.cost) & np.isfinite(c.cost.mean)
            xs, ys, spread = c.cost.seconds[keep], c.cost.mean[keep], c.cost.sd[keep]
            ends.append(xs)
            ax.plot(xs, ys, color=color, lw=1.8, label=f"{shown[c.name]} (N = {c.scores.size})")
            if sd:
                shade_sd(ax, xs, ys, spread, c.scores, color)
            lows.append(np.clip(ys - (spread if sd else 0), c.scores.min(), None).min())
            highs.append(np.clip(ys + (spread if sd else 0), None, c.scores.max()).max())
            for target, _ in targets:
                hits = np.flatnonzero(ys >= target if maximize else ys <= target)
                if hits.size:
                    ax.axvline(xs[hits[0]], color=color, ls=":", lw=1)
                    extra.append(Line2D([], [], color=color, ls=":",
                                        label=f"{shown[c.name]} reaches {target:g} at {human_duration(xs[hits[0]])}"))
        for target, note in targets:
            ax.axhline(target, color="0.35", ls=":", lw=1)
            extra.insert(0, Line2D([], [], color="0.35", ls=":", label=f"target {target:g}" + (f": {note}" if note else "")))
        if sd:
            extra.append(Swatch([styles[c.name][0] for c in drawn], "shading: ±1 SD of the best finished by then, "
                                "clipped to the observed scores"))
        fit_y(ax, min(lows), max(highs), [(target, "0.35") for target, _ in targets])
        end_at_trials(ax, ends)
        ax.set_xscale("log")
        time_ticks(ax)
        workers = drawn[0].cost.workers if drawn else 1
        ax.set_xlabel(f"Wall-clock time ({workers} worker{'s' if workers > 1 else ''}, each trial its own duration)")
        ax.set_ylabel(ylabel)
        ax.set_title(title if shown[title] == title else "", fontsize=9)
        ax.grid(alpha=0.3, lw=0.5)
        return finish(fig, ax, out_stem, extra)
