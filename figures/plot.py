"""Draw expected-max curves (Eq. 8) against budget in trials or training time."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from analysis import budget_to_reach, time_axis  # noqa: E402
from figures.sources import Group  # noqa: E402
from figures.specs import FigureSpec  # noqa: E402

BLUE, RED, GREEN, PURPLE, ORANGE, BROWN = "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"
# Colour and line style of each family's curve, the same in every figure. Families drawn together
# differ; families of different figures may share a colour.
STYLES: dict[str, tuple[str, str]] = {
    "lr": (BLUE, "-"), "cnn": (RED, "-"),  # Figure 1
    "glove": (BLUE, "-"), "elmo_frozen": (RED, "-"), "elmo_finetuned": (GREEN, "-"),  # Figure 2
    "ngram": (BLUE, "-"), "dam": (RED, "-"), "esim": (GREEN, "-"), "dgem": (PURPLE, "-"),  # Figure 3
    "bidaf": (BLUE, "-"),  # Figure 4
    # Figure 1's CNN as reported vs as run (figures.as_run), beside LR in blue
    "cnn_reported": (RED, "-"), "cnn_as_run": (GREEN, "-"), "cnn_as_run_random": (PURPLE, "-"),
    "cnn_as_run_replay": (ORANGE, "-"), "cnn_authors": (BROWN, "-"),
}


def style(family: str) -> tuple[str, str]:
    """The colour and line style of ``family`` (:data:`STYLES`)."""
    if family not in STYLES:
        raise ValueError(f"{__file__}: family {family!r} has no colour in STYLES; give it one there")
    return STYLES[family]


def draw(spec: FigureSpec, groups: list[Group], title: str, out_stem: Path, n_max: int | None = None) -> list[Path]:
    """Render one figure to ``<out_stem>.pdf`` and ``.png``; return the paths."""
    families = [g.family for g in groups]
    if len(set(map(style, families))) < len(families):
        raise ValueError(f"{__file__}: families {', '.join(families)} drawn together share a colour in STYLES")
    fig, ax = plt.subplots(figsize=(5.0, 3.6), constrained_layout=True)
    for group in groups:
        color, linestyle = style(group.family)
        ns, mean, sd = group.curve(n_max or (int(spec.xlim[1]) if spec.x == "trials" and spec.xlim else None))
        if spec.x == "time":
            if group.mean_duration is None:
                raise ValueError(f"{group.label}: no real training durations, cannot draw a time axis")
            xs = time_axis(ns.size, group.mean_duration)
        else:
            xs = ns
        ax.plot(xs, mean, color=color, ls=linestyle, label=group.label, lw=1.8)
        if spec.shade:  # +-1 SD, clipped to the observed range of the family (section 3.3)
            low = np.clip(mean - sd, group.scores.min(), group.scores.max())
            high = np.clip(mean + sd, group.scores.min(), group.scores.max())
            ax.fill_between(xs, low, high, color=color, alpha=0.18, lw=0)
        if group.family in spec.references:
            ax.axhline(spec.references[group.family], color=color, ls="--", lw=1.1)
            ax.annotate(f"reported {spec.references[group.family]:.3g}", (0.01, spec.references[group.family]),
                        xycoords=("axes fraction", "data"), ha="left", va="bottom", fontsize=7, color=color)
        if spec.guide and spec.guide[0] == group.family:
            target = spec.guide[1]
            n = budget_to_reach(mean, target)
            if n is not None:
                x = xs[n - 1]
                ax.plot([ax.get_xlim()[0] if not spec.xlim else spec.xlim[0], x], [target, target], ":", color="k", lw=1)
                ax.plot([x, x], [0, target], ":", color="k", lw=1)
                # at the foot of the vertical line, below the curves, which rise with the budget
                ax.annotate(f"{target:g} at n = {n}", (x, 0), xycoords=("data", "axes fraction"), xytext=(4, 4),
                            textcoords="offset points", fontsize=8, va="bottom")
    if spec.log_x:
        ax.set_xscale("log")
        if spec.x == "trials":  # 1, 10, 100 as the paper prints them, not 10^0, 10^1, 10^2
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    if spec.xlim:
        ax.set_xlim(*spec.xlim)
    if spec.ylim:
        ax.set_ylim(*spec.ylim)
    else:
        lows = [np.clip(g.curve()[1] - (g.curve()[2] if spec.shade else 0), g.scores.min(), None).min() for g in groups]
        top = max(g.scores.max() for g in groups)
        refs = list(spec.references.values())
        ax.set_ylim(min(lows + refs) - 0.01, max([top] + refs) + 0.01)
    if spec.time_ticks:
        ax.set_xticks(list(spec.time_ticks.values()), list(spec.time_ticks.keys()))
        ax.minorticks_off()
    ax.set_xlabel("Training duration" if spec.x == "time" else "Hyperparameter assignments")
    ax.set_ylabel(spec.ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, lw=0.5)
    ax.legend(fontsize=8, loc="best")
    out_stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [out_stem.with_suffix(".pdf"), out_stem.with_suffix(".png")]
    fig.savefig(paths[0], metadata={"CreationDate": None})  # byte-identical when redrawn
    fig.savefig(paths[1], dpi=200)
    plt.close(fig)
    return paths
