"""The drawing style of expected-max curves (Eq. 8): colours, shading, guides, ticks, legends, saving.

These helpers (:func:`colours`, :func:`shade_sd`, :func:`budget_guide`, :func:`finish`) serve the figure of
anyone's trials (``syw.curve.figure``) and the paper's figures (``syw.figures.plot``), so both say the same
things the same way: what the shading is, which curve reaches which target and where that target comes
from. Importing this module imports matplotlib: only code that draws imports it.
"""
from __future__ import annotations

import functools
import textwrap
from pathlib import Path

import matplotlib
import matplotlib.font_manager
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ft2font import FT2Font  # noqa: E402
from matplotlib.legend_handler import HandlerTuple  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from syw.analysis import budget_to_reach  # noqa: E402
from syw.analysis.cost import ROUND_DURATIONS, round_time_ticks  # noqa: E402,F401 (ROUND_DURATIONS: the ticks there are)
from syw.core.units import human_duration  # noqa: E402

BLUE, RED, GREEN, PURPLE, ORANGE, BROWN = "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"
PALETTE = (BLUE, RED, GREEN, PURPLE, ORANGE, BROWN, "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
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
LEGEND_FONT = 7  # points
# A lower-is-better score's axis reaches at most this many times its lowest point: one diverged trial
# (a perplexity of 1e34) drawn to scale would flatten everything else; what is above is named at the top edge.
CEILING = 10
SD_LABEL = "shading: ±1 SD of the best of n (section 3.3), clipped to the observed scores"


@functools.lru_cache(maxsize=1)
def _charmaps() -> tuple[tuple[str, frozenset[int]], ...]:
    """(family, code points it draws) of every font matplotlib finds, the default family first."""
    found: dict[str, set[int]] = {}
    for entry in matplotlib.font_manager.fontManager.ttflist:
        if entry.name.startswith("Last Resort"):  # a box for every code point: what a missing glyph looks like
            continue
        try:
            found.setdefault(entry.name, set()).update(FT2Font(entry.fname).get_charmap())
        except (OSError, RuntimeError):  # a font file matplotlib lists but cannot open
            continue
    first = matplotlib.rcParams["font.sans-serif"][0]
    return tuple(sorted(((k, frozenset(v)) for k, v in found.items()), key=lambda kv: kv[0] != first))


def drawable(names: list[str]) -> tuple[dict[str, str], list[str]]:
    """Each name as a figure shows it, and the font families that draw them (the default first).

    A name whose every character some installed font draws (CJK with Noto CJK installed, say) is
    shown as it is, in those fonts; any other is shown as ``group <k>`` (the report gives the name),
    rather than as boxes with a warning per missing glyph.
    """
    fonts = _charmaps()
    families = [fonts[0][0]]
    shown = {}
    for k, name in enumerate(names, start=1):
        needed = []
        for char in {c for c in str(name) if not c.isspace()}:
            family = next((f for f, codes in fonts if ord(char) in codes), None)
            if family is None:
                needed = None
                break
            needed.append(family)
        shown[name] = f"group {k}" if needed is None else str(name)
        families += [f for f in needed or [] if f not in families]
    return shown, families


def style(family: str) -> tuple[str, str]:
    """The colour and line style of ``family`` (:data:`STYLES`)."""
    if family not in STYLES:
        raise ValueError(f"{__file__}: family {family!r} has no colour in STYLES; give it one there")
    return STYLES[family]


def colours(names: list[str]) -> dict[str, tuple[str, str]]:
    """A style per curve name: a family's own (:data:`STYLES`, by its lower-case name) when it has one
    and no other curve here has that colour, else the first :data:`PALETTE` colour not yet used."""
    out: dict[str, tuple[str, str]] = {}
    for name in names:
        own = STYLES.get(str(name).lower())
        if own and own[0] not in {c for c, _ in out.values()}:
            out[name] = own
    for name in names:
        if name not in out:
            free = [c for c in PALETTE if c not in {c for c, _ in out.values()}] or list(PALETTE)
            out[name] = (free[0], "-")
    return {name: out[name] for name in names}


def shade_sd(ax, xs, mean, sd, scores, color: str, where: np.ndarray | None = None,
             step: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """±1 SD of the best of n around the curve, clipped to the observed range of the scores (section 3.3), at the
    points ``where`` allows (all by default), as steps with ``step`` ("post": a curve drawn in steps); the shading's
    lower and upper edges (NaN where not shaded)."""
    low, high = np.clip(mean - sd, scores.min(), scores.max()), np.clip(mean + sd, scores.min(), scores.max())
    if where is not None:
        low, high = np.where(where, low, np.nan), np.where(where, high, np.nan)
    ax.fill_between(xs, low, high, color=color, alpha=0.18, lw=0, step=step)
    return low, high


def budget_guide(ax, xs, curve, target: float, who: str, where_from: str, *, maximize: bool = True,
                 x_text=None, interval: tuple[int, int | None, int] | None = None) -> int | None:
    """Where ``who``'s expected best first reaches ``target``, labelled with who, the target and where it comes from.

    Dotted lines mark that budget n. With ``interval`` = (low, high, limit), the 95% interval of that budget
    (``syw.analysis.inference.budget_interval``), a bar at the target spans [low, high]; where ``high`` is None the
    trials cannot locate the budget, so no point budget is marked: the bar runs from ``low`` to the limit, an arrow on
    past it. Returns the budget marked, None when none is (never reached, or not located)."""
    n = budget_to_reach(curve, target, maximize=maximize)
    x_of = lambda k: xs[min(k, len(xs)) - 1]  # noqa: E731  the x of budget k
    if interval is not None and interval[1] is None:  # not located: the interval, and no point budget
        low, _, limit = interval
        start, end = x_of(min(low, limit)), x_of(limit)
        ax.plot([start, end], [target, target], "-", color="k", lw=3.5, alpha=0.45, solid_capstyle="butt", zorder=3)
        ax.annotate("", xy=(ax.get_xlim()[1], target), xytext=(end, target),
                    arrowprops=dict(arrowstyle="->", color="k", lw=1, alpha=0.6, linestyle=":"))
        where = f"at n = {low} to beyond {limit}" if low <= limit else f"beyond n = {limit}"
        _guide_label(ax, start, target, f"{who} reaches {target:g} {where}\n(95% interval: not located with these trials)",
                     where_from)
        return None
    if n is None:
        return None
    x = xs[n - 1]
    ax.plot([ax.get_xlim()[0], x], [target, target], ":", color="k", lw=1)
    ax.plot([x, x], [ax.get_ylim()[0], target], ":", color="k", lw=1)
    said = f"{who} reaches {target:g} at n = {n}" + (f" ({human_duration(x)})" if x_text == "time" else "")
    if interval is not None:
        ax.plot([x_of(interval[0]), x_of(interval[1])], [target, target], "-", color="k", lw=3.5, alpha=0.45,
                solid_capstyle="butt", zorder=3)
        said += f", 95% interval {interval[0]}-{interval[1]}"
    _guide_label(ax, x, target, said, where_from)
    return n


def _guide_label(ax, x: float, target: float, said: str, where_from: str) -> None:
    """The guide's words at the foot of its budget, below the curves (which rise with the budget)."""
    right_half = ax.transAxes.inverted().transform(ax.transData.transform((x, target)))[0] > 0.55
    ax.annotate(f"{said}\n({where_from})", (x, 0), xycoords=("data", "axes fraction"), xytext=(-4 if right_half else 4, 4),
                textcoords="offset points", fontsize=7, va="bottom", ha="right" if right_half else "left")


def duration_label(seconds: float) -> str:
    """A tick's duration with as many digits as it needs: ``0.25s``, ``42s``, ``1.5min``, ``3h``, ``2.5d``."""
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0), ("s", 1.0)):
        if abs(seconds) >= size or unit == "s":
            return f"{seconds / size:.3g}{unit}"
    return f"{seconds:.3g}s"


def time_ticks(ax) -> None:
    """Round durations as ticks of a time axis (:func:`round_time_ticks` over its limits), and its left end labelled
    when the first round one lies more than twice as far; where fewer than two fall inside, the locator's places
    labelled by :func:`duration_label` (never all "0 s")."""
    low, high = sorted(ax.get_xlim())
    ticks = round_time_ticks(low, high)
    if len(ticks) >= 2:
        if low > 0 and min(ticks.values()) > 2 * low:  # no round duration near the left end: label it as it is
            ticks = {duration_label(low): low, **ticks}
        ax.set_xticks(list(ticks.values()), list(ticks.keys()))
        ax.minorticks_off()
    else:
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: duration_label(value)))


class Swatch:
    """A legend entry drawn as patches side by side: the shading's key, one patch per curve's colour."""

    def __init__(self, colours: list[str], label: str, alpha: float = 0.18):
        self.handles = tuple(Patch(color=c, alpha=alpha, lw=0) for c in colours)
        self.label = label

    def get_label(self) -> str:
        return self.label


def fit_y(ax, low: float, high: float, targets: list[tuple[float, str]]) -> None:
    """y limits spanning the curves' [``low``, ``high``] and each target (value, colour) within half that
    span of it; a target further off would squeeze the curves into a corner, so it is named instead by an
    arrow in its colour at the axes' top (or bottom) edge."""
    span = (high - low) or abs(high) or 1.0
    near = [v for v, _ in targets if low - 0.5 * span <= v <= high + 0.5 * span]
    bottom, top = min([low] + near), max([high] + near)
    pad = 0.05 * ((top - bottom) or 1.0)
    ax.set_ylim(bottom - pad, top + pad)
    far = [(v, c) for v, c in targets if v not in near]
    for k, (value, colour) in enumerate(far):
        above = value > top
        ax.annotate(f"{'↑' if above else '↓'} {value:g}, off the axes", xy=(0.99, (0.98 - 0.06 * k) if above else
                    (0.02 + 0.06 * k)), xycoords="axes fraction", ha="right", va="top" if above else "bottom",
                    fontsize=7, color=colour)


def end_at_trials(ax, xs: list[np.ndarray], left: float | None = None) -> None:
    """An x axis from ``left`` (default: the first point) to the last trial of the longest curve."""
    low, high = left if left is not None else min(x[0] for x in xs), max(x[-1] for x in xs)
    ax.set_xlim(*((low, high) if high > low else (low * 0.8, high * 1.25)))  # one trial: a little room about it


def trials_label(value: float) -> str:
    """A trial count on an axis: ``20``, ``1000``; from 10,000 on ``10k``, ``250k``, ``1M`` (ten ticks of 100000 ran
    together on a figure of a million trials)."""
    if abs(value) < 10_000:
        return f"{value:g}"
    return f"{value / 1e6:g}M" if abs(value) >= 1_000_000 else f"{value / 1e3:g}k"


class _TrialCounts(matplotlib.ticker.ScalarFormatter):
    """matplotlib's own labels on an axis below 10,000 trials; :func:`trials_label`'s past it."""

    def __call__(self, x, pos=None):
        if self.axis is not None and max(self.axis.get_view_interval()) >= 10_000:
            return trials_label(x)
        return super().__call__(x, pos)


def integer_ticks(ax) -> None:
    """Whole numbers only on a trial axis (linear or log): n = 1.5 trials means nothing."""
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True, min_n_ticks=1))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.xaxis.set_major_formatter(_TrialCounts())


def finish(fig, ax, out_stem: Path, extra: list | None = None) -> list[Path]:
    """Legend below the axes (curves, then ``extra`` handles such as the shading's meaning); write
    ``<out_stem>.pdf`` and ``.png``; return the paths."""
    handles, labels = ax.get_legend_handles_labels()
    handles += [h.handles if isinstance(h, Swatch) else h for h in extra or []]
    labels += [h.get_label() for h in extra or []]
    ncol = 2 if len(handles) > 3 and max(map(len, labels)) <= 42 else 1  # two columns only when they fit
    fit = int((fig.get_size_inches()[0] * 72 - 30) / (LEGEND_FONT * 0.6) / ncol)  # characters a line holds: 0.6 em each, a handle aside
    labels = [textwrap.fill(label, fit, subsequent_indent="  ") for label in labels]  # none runs off the figure
    rows = -(-sum(label.count("\n") + 1 for label in labels) // ncol)
    if rows > 4:  # a taller figure rather than a squashed plot
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height + 0.14 * (rows - 4))
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=LEGEND_FONT, frameon=False,
               handler_map={tuple: HandlerTuple(ndivide=None, pad=0.0)})
    paths = save(fig, out_stem)
    plt.close(fig)
    return paths


def save(fig, out_stem: Path, dpi: int = 200) -> list[Path]:
    """``<out_stem>.pdf`` (byte-identical when redrawn) and ``<out_stem>.png`` at ``dpi``; the paths."""
    out_stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [out_stem.with_suffix(".pdf"), out_stem.with_suffix(".png")]
    fig.savefig(paths[0], metadata={"CreationDate": None})
    fig.savefig(paths[1], dpi=dpi)
    return paths
