"""The paper's figures: expected-max curves (Eq. 8) of a study's families against budget in trials or
training time, drawn as a :class:`syw.figures.specs.FigureSpec` says, in the light tool's style
(``syw.curve.style``), with their captions.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.patches import Patch

from syw.analysis import budget_to_reach, time_axis
from syw.analysis.curves import curve_of
from syw.analysis.inference import budget_interval
from syw.core.units import human_duration
from syw.curve.style import (
    SD_LABEL,
    Swatch,
    budget_guide,
    end_at_trials,
    finish,
    fit_y,
    integer_ticks,
    matplotlib,
    plt,
    shade_sd,
    style,
    time_ticks,
)
from syw.figures.specs import FigureSpec

UNSHADED = ("no shading: the curves are drawn without their uncertainty (each study's own figure shades ±1 SD of the "
            "best of n)")

if TYPE_CHECKING:  # the paper's figures' groups: their reader needs the runner, which syw curve's figures do not
    from syw.analysis.group import Group


def _plot_group(ax, spec: FigureSpec, group: Group, n_max: int | None) -> tuple[np.ndarray, np.ndarray]:
    """One family's Eq. 8 curve (against trials or training time) and its shading; returns x and the curve. Against
    time the curve is drawn in steps: n trials' expected best holds from the n-th trial's end to the next one's
    (the rule of the time axis, ``syw.analysis.time_leaders``), not a line joining them."""
    color, linestyle = style(group.name)
    ns, mean, sd = curve_of(group).upto(n_max or (int(spec.xlim[1]) if spec.x == "trials" and spec.xlim else None))
    if spec.x == "time":
        if group.mean_duration is None:
            raise ValueError(f"{group.label}: no real training durations, cannot draw a time axis")
        xs = time_axis(ns.size, group.mean_duration)
    else:
        xs = ns
    step = "post" if spec.x == "time" else None
    ax.plot(xs, mean, color=color, ls=linestyle, label=group.label, lw=1.8, drawstyle="steps-post" if step else "default")
    if spec.shade:
        shade_sd(ax, xs, mean, sd, group.scores, color, step=step)
    return xs, mean


def _reference_lines(ax, spec: FigureSpec, groups: list[Group], curves: dict) -> None:
    """A dashed line at each family's first published number, labelled with the n at which ours reaches it."""
    for group in groups:
        if group.name in spec.references:
            value = spec.references[group.name]
            xs, mean = curves[group.name]
            n = budget_to_reach(mean, value)
            cost = f" ({human_duration(xs[n - 1])})" if n and spec.x == "time" else ""
            reached = f"reached at n = {n}{cost}" if n else f"not reached in {mean.size} trials"
            ax.axhline(value, color=style(group.name)[0], ls="--", lw=1.1,
                       label=f"{group.label}: {value:.3g} as first published, {reached}")


def _axes_range(ax, spec: FigureSpec, groups: list[Group], curves: dict) -> None:
    """x: log or integer trials or time ticks, ending where the trials end; y: the spec's (widened to the shading),
    else fitted."""
    if spec.log_x:
        ax.set_xscale("log")
        if spec.x == "trials":  # 1, 10, 100 as the paper prints them, not 10^0, 10^1, 10^2
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    end_at_trials(ax, [xs for xs, _ in curves.values()], spec.xlim[0] if spec.xlim else None)
    if spec.x == "trials" or not spec.xlim:  # room left of the first budget: its shading is not drawn on the spine
        left, right = ax.get_xlim()
        ax.set_xlim(left / 1.15 if spec.log_x else left - (0.5 if spec.x == "trials" else 0.02 * (right - left)), right)
    lows = [np.clip(c.mean - (c.sd if spec.shade else 0), c.scores.min(), None).min() for c in map(curve_of, groups)]
    top = max(g.scores.max() for g in groups)  # the shading is clipped to the observed scores: none reaches above
    if spec.ylim:  # the paper's axes, widened where the shading reaches past them: no band is cut
        pad = 0.02 * (spec.ylim[1] - spec.ylim[0])
        ax.set_ylim(min(spec.ylim[0], min(lows) - pad), max(spec.ylim[1], top + pad))
    else:
        fit_y(ax, min(lows), top, [(v, style(f)[0]) for f, v in spec.references.items() if f in curves])
    if spec.x == "trials" and not spec.log_x:
        integer_ticks(ax)
    if spec.time_ticks:
        ax.set_xticks(list(spec.time_ticks.values()), list(spec.time_ticks.keys()))
        ax.minorticks_off()
    elif spec.x == "time":
        time_ticks(ax)


def draw(spec: FigureSpec, groups: list[Group], title: str, out_stem: Path, n_max: int | None = None) -> list[Path]:
    """Render one figure to ``<out_stem>.pdf`` and ``.png``; return the paths."""
    families = [g.name for g in groups]
    if len(set(map(style, families))) < len(families):
        raise ValueError(f"{__file__}: families {', '.join(families)} drawn together share a colour in STYLES")
    fig, ax = plt.subplots(figsize=(5.0, 4.2), layout="constrained")
    curves = {group.name: _plot_group(ax, spec, group, n_max) for group in groups}
    _reference_lines(ax, spec, groups, curves)
    _axes_range(ax, spec, groups, curves)
    if spec.guide and spec.guide[0] in curves:
        family, target = spec.guide
        group = next(g for g in groups if g.name == family)
        found = budget_interval(group.scores, target)
        budget_guide(ax, *curves[family], target, group.label, spec.guide_source, x_text=spec.x,
                     interval=(found.low, found.high, found.limit))
    ax.set_xlabel("Training duration" if spec.x == "time" else "Hyperparameter assignments")
    ax.set_ylabel(spec.ylabel)
    ax.set_title(short_title(title, out_stem), fontsize=9)
    ax.grid(alpha=0.3, lw=0.5)
    extra = [Swatch([style(g.name)[0] for g in groups], SD_LABEL)] if spec.shade else [Patch(color="none", label=UNSHADED)]
    paths = finish(fig, ax, out_stem, extra)
    return paths + [write_caption(spec, groups, title, out_stem)]


def short_title(title: str, out_stem: Path) -> str:
    """At most two lines over the plot: the first line of ``title``, and where the rest is when there is more
    (a study's ``REDUCED: ...`` line keeps its first word there: the image says it was reduced)."""
    lines = title.splitlines()
    if len(lines) <= 2:
        return title
    reduced = "REDUCED study: what was reduced is " if any(line.startswith("REDUCED") for line in lines[1:]) else ""
    return f"{lines[0]}\n{reduced or 'more '}in {out_stem.name}_caption.md"


def interval_words(scores: np.ndarray, target: float, maximize: bool = True) -> str:
    """The 95% interval of the trials needed to reach ``target`` (``syw.analysis.inference.budget_interval``), in words."""
    return budget_interval(scores, target, maximize=maximize).words(scores.size)


def write_caption(spec: FigureSpec, groups: list[Group], title: str, out_stem: Path) -> Path:
    """``<out_stem>_caption.md``: the whole title and what the figure draws, in words."""
    first, *rest = title.splitlines()
    lines = [f"# {out_stem.name}", "", first, *(["", " ".join(line.strip() for line in rest)] if rest else []), "",
             "- Curves: the expected best validation score of n trials (Eq. 8) of "
             + ", ".join(f"{g.label} (N = {g.scores.size})" for g in groups)
             + (", at n trials times the family's mean training duration" if spec.x == "time" else "") + ", up to N."]
    if spec.shade:
        lines.append(f"- Shading, in each curve's colour: {SD_LABEL.removeprefix('shading: ')}.")
    else:
        lines.append(f"- {UNSHADED[0].upper()}{UNSHADED[1:]}.")
    for family, value in spec.references.items():
        lines.append(f"- Dashed line: {value:g}, the number first published for {family} (an arrow names it when "
                     "it lies far off the curves).")
    for g in (g for g in groups if spec.guide and g.name == spec.guide[0]):
        family, target = spec.guide
        found = budget_interval(g.scores, target)
        words = interval_words(g.scores, target)
        if found.high is None:  # the trials cannot locate it: its interval, no point budget
            lines.append(f"- Grey bar at {target:g}, then an arrow: the 95% interval of the budget at which {family} first "
                         f"reaches {target:g} ({spec.guide_source}), {words}; no point budget is marked.")
        else:
            lines.append(f"- Dotted: where {family} first reaches {target:g} ({spec.guide_source}); grey bar at {target:g}: "
                         f"the 95% interval of that budget, {words}.")
    path = out_stem.parent / f"{out_stem.name}_caption.md"
    path.write_text("\n".join(lines) + "\n")
    return path
