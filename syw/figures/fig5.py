"""The suite's Figure 5 and its budgets: case study 5, Melis, Dyer and Blunsom (2018) through Show Your Work's lens
(the paper has no Figure 5; the suite's numbering follows its Figures 1-4).

Panel (a): each cell's expected best validation perplexity of n random-search trials against n (Eq. 8
with direction min: the expected minimum of n i.i.d. draws), shaded ±1 SD (section 3.3); beside a
cell with GP-tuner runs (``results/<study>/gp/<family>.tuner_seed<k>.jsonl``) the runs' mean
best-so-far in trial order, shaded ±1 SD across the runs: adaptive trials are no i.i.d. draws, so Eq. 8
is never applied to them (``syw.analysis.adaptive``). Panel (b): the random-search curves against training
time, n times the cell's mean duration (the convention of the paper's Figs. 2 and 4). A perplexity beyond the
study's floor (``study.floor``: the uniform predictor's) counts at the floor, so every cell's curve is on the axes;
where one trial still sways a cell's mean curve (:data:`syw.analysis.floors.MEDIAN_RULE`) its median is drawn too.
:func:`write_budgets` writes the numbers of the same records to ``budgets_fig5.md``.
"""
from __future__ import annotations

import itertools
import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib.ticker
import numpy as np

from syw.analysis import time_axis
from syw.analysis.adaptive import BestSoFar, reaches_random, trials_saved, tuner_progress
from syw.analysis.compare import leaders_by_n, sentence
from syw.analysis.curves import curve_of
from syw.analysis.floors import MEDIAN_RULE, one_trial_decides
from syw.analysis.group import Group
from syw.analysis.inference import compare
from syw.analysis.statistic import MEDIAN
from syw.core.paths import REPO
from syw.core.units import count, human_duration, score, spans, stretches_text
from syw.curve.style import CEILING, PALETTE, SD_LABEL, Swatch, colours, end_at_trials, finish, fit_y, integer_ticks, plt, shade_sd, time_ticks
from syw.experiments.study import load_study
from syw.experiments.tuner import GP
from syw.figures.sources import floored_counts, study_rows, study_with_records

STUDY, REDUCED = "ptb_melis", "ptb_melis_reduced"
STUDIES = (STUDY, REDUCED)
BUDGETS = (1, 5, 10)  # the budgets the table gives, besides each cell's N
TITLE_WIDTH = 100  # characters of a title line that fit over both panels at its 9-point font
LOG_SPAN = 4  # the y axis is logarithmic when what it draws spans more than this factor
GP_LABEL = "shading of the GP tuner: ±1 SD across its runs, clipped to their observed values"


@dataclass(frozen=True)
class Cell:
    """One family of the study: its ok random-search trials and, where it has them, its GP-tuner runs."""

    group: Group
    trials: np.ndarray  # each ok trial's index, in the order of group.scores
    failed: int
    tuner: BestSoFar | None  # mean best-so-far over the GP runs (lower is better)
    tuner_values: np.ndarray | None  # every finished GP trial's value, for clipping its shading
    floored: int = 0  # ok trials counted at the study's floor instead of their recorded perplexity
    floor: float | None = None  # the study's floor (study.floor), when it states one

    def curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """n = 1..N, the expected minimum of n trials (Eq. 8, direction min) and its SD."""
        return curve_of(self.group, maximize=False).upto()

    def median(self) -> np.ndarray | None:
        """The median best of n (q = 0.5, lower is better) when one trial sways the mean curve (MEDIAN_RULE), else None."""
        scores = self.group.scores
        if not one_trial_decides(scores, maximize=False):
            return None
        return MEDIAN.curve(scores, np.arange(1, scores.size + 1), maximize=False)


def cells(results: Path, study: str | None = None) -> tuple[str, list[Cell]]:
    """``study`` (default: ``ptb_melis`` when it has records, else ``ptb_melis_reduced``) and its cells, in the study file's order."""
    study = study or study_with_records(results, STUDY, REDUCED)
    config = load_study(study)
    parts, failed = study_rows(study, results)
    floors, floor = floored_counts(parts), config.floor
    out = []
    for name, part in parts.items():
        group = Group(name, part["value"].to_numpy(float), part["duration_seconds"].to_numpy(float),
                      config.family(name).label)
        tuner = tuner_progress(results / study, name, GP)
        out.append(Cell(group, part["trial"].to_numpy(int), failed.get(name, 0), *(tuner or (None, None)),
                        floored=floors[name], floor=None if floor is None else floor.value))
    return study, out


def counts(cells_: list[Cell]) -> str:
    """The trial counts the title and caption give."""
    text = "random search: " + ", ".join(f"{c.group.name} N = {c.group.scores.size}" for c in cells_)
    tuned = [f"{c.group.name} {count(c.tuner.runs, 'run')} of {', '.join(map(str, c.tuner.lengths))} trials"
             for c in cells_ if c.tuner]
    return text + ("; GP tuner: " + "; ".join(tuned) if tuned else "; no GP-tuner runs")


def title(study: str, cells_: list[Cell]) -> str:
    """The study, its trial counts and its ``reduced`` line, wrapped to fit over both panels."""
    lines = [f"Penn Treebank: the suite's Figure 5, case study 5 of Melis et al. 2018 (the paper has no Figure 5), "
             f"from our records ({study})",
             *textwrap.wrap(counts(cells_), TITLE_WIDTH)]
    reduced = load_study(study).reduced
    return "\n".join(lines + (textwrap.wrap(reduced, TITLE_WIDTH) if reduced else []))


def styles(cells_: list[Cell]) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """A colour per cell (a budget variant such as ``lstm_24m`` dashed in its cell's colour) and per GP curve."""
    bases = colours(list(dict.fromkeys(c.group.name.split("_")[0] for c in cells_)))
    own = {c.group.name: (bases[c.group.name.split("_")[0]][0], "-" if "_" not in c.group.name else "--")
           for c in cells_}
    free = [p for p in PALETTE if p not in {colour for colour, _ in own.values()}]
    return own, {c.group.name: free[k % len(free)] for k, c in enumerate(c for c in cells_ if c.tuner)}


def _panel(ax, cells_: list[Cell], own: dict, x: str, limit: float) -> tuple[list, list, list]:
    """Each cell's Eq. 8 curve with its clipped ±1 SD shading where the curve is at most ``limit`` (:func:`ceiling`;
    above it the curve is named, not drawn to scale); the x values drawn and the shading's edges."""
    ends, lows, highs = [], [], []
    for c in cells_:
        ns, mean, sd = c.curve()
        xs = ns if x == "trials" else time_axis(ns.size, c.group.mean_duration)
        colour, line = own[c.group.name]
        steps = "steps-post" if x == "time" else "default"  # against time: n trials' value holds until the next ends
        ax.plot(xs, mean, color=colour, ls=line, lw=1.8, label=f"{c.group.label} (N = {ns.size})" if x == "trials" else None,
                drawstyle=steps)
        low, high = shade_sd(ax, xs, mean, sd, c.group.scores, colour, where=mean <= limit, step="post" if x == "time" else None)
        median = c.median()
        if median is not None:
            ax.plot(xs, median, color=colour, ls=":", lw=1.6, drawstyle=steps,
                    label=f"{c.group.label}: median best of n (one trial sways its mean)" if x == "trials" else None)
        ends.append(xs)
        lows.append(low)
        highs.append(high)
    return ends, lows, highs


def _tuner(ax, c: Cell, colour: str) -> tuple[np.ndarray, np.ndarray]:
    """The GP runs' mean best-so-far as steps with ±1 SD across runs; the shading's edges."""
    t, values = c.tuner, c.tuner_values
    ax.plot(t.budgets, t.mean, color=colour, lw=1.6, ls="-.", drawstyle="steps-post",
            label=f"{c.group.label.split(' (')[0]}, GP tuner: best-so-far, mean of {count(t.runs, 'run')} (not Eq. 8)")
    low, high = np.clip(t.mean - t.sd, values.min(), None), np.clip(t.mean + t.sd, None, values.max())
    ax.fill_between(t.budgets, low, high, color=colour, alpha=0.12, lw=0, step="post")
    return np.fmin(low, t.mean), np.fmax(high, t.mean)


def curves(cells_: list[Cell], tuner: bool = True) -> list[tuple[str, np.ndarray]]:
    """Each curve drawn, named: the cells' Eq. 8 curves (and medians, :meth:`Cell.median`) and (with ``tuner``,
    panel (a)) the GP runs' mean best-so-far."""
    medians = [(f"{c.group.name}, median", m) for c in cells_ if (m := c.median()) is not None]
    return [(c.group.name, c.curve()[1]) for c in cells_] + medians + [
        (f"{c.group.name}, GP tuner", c.tuner.mean) for c in cells_ if c.tuner and tuner]


def ceiling(cells_: list[Cell]) -> float:
    """The most the y axis reaches: ``CEILING`` times the lowest point of any curve. Eq. 8 is a mean over a cell's
    trials in which a diverged one (a perplexity of 1e34, say) weighs at every n; drawn to scale, its curve
    would flatten every other, so a curve above the ceiling is named at the axes' top edge instead. Cells whose
    scores are bounded by a floor (:func:`syw.figures.sources.study_rows`) are drawn whole: the ceiling reaches their
    highest Eq. 8 point."""
    lowest = CEILING * float(np.nanmin(np.concatenate([values for _, values in curves(cells_)])))
    bounded = [float(np.nanmax(c.curve()[1])) for c in cells_ if c.floor is not None]
    return max([lowest, *bounded])


def off_scale(cells_: list[Cell], limit: float, tuner: bool = True) -> list[tuple[str, str, float, float]]:
    """Each curve with points above ``limit`` (:func:`ceiling`): its name, the n where it is above, its highest and
    lowest point there."""
    out = []
    for name, values in curves(cells_, tuner):
        above = np.flatnonzero(values > limit)
        if above.size:
            out.append((name, spans((above + 1).tolist()), float(values[above].max()), float(values[above].min())))
    return out


def _fit(ax, cells_: list[Cell], edges: tuple[list, list], colours: dict[str, str], limit: float, tuner: bool) -> None:
    """y limits over what is drawn: each curve up to ``limit`` (:func:`ceiling`) and the whole of its shading where
    it is drawn (shading is cut by no axis); each curve above the limit named in its colour at the top edge."""
    lows, highs = edges
    drawn = np.concatenate([values for _, values in curves(cells_, tuner)])
    shaded = np.concatenate(highs)  # NaN where a curve is above the limit and not shaded
    bottom = float(np.nanmin(np.concatenate(lows)))
    top = max(float(np.nanmax(drawn[drawn <= limit])), float(np.nanmax(shaded)) if np.isfinite(shaded).any() else -np.inf)
    fit_y(ax, bottom, top, [])
    if top > LOG_SPAN * bottom > 0:  # a floored cell's first trials: on a linear axis they would flatten the rest
        ax.set_yscale("log")
        ax.set_ylim(bottom / 1.05, top * 1.05)
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    for k, (name, where, high, low) in enumerate(off_scale(cells_, limit, tuner)):
        ax.annotate(f"↑ {name} above the axis at n = {where} ({score(high)} to {score(low)})", xy=(0.99, 0.98 - 0.06 * k),
                    xycoords="axes fraction", ha="right", va="top", fontsize=7, color=colours[name])


def draw(study: str, cells_: list[Cell], out_stem: Path) -> list[Path]:
    """``<out_stem>.png``, ``.pdf`` and ``_caption.md``: panel (a) against trials, (b) against training time."""
    own, tuned = styles(cells_)
    fig, (by_n, by_time) = plt.subplots(1, 2, figsize=(11, 5.2), layout="constrained")
    limit = ceiling(cells_)
    ends, lows, highs = _panel(by_n, cells_, own, "trials", limit)
    for c in cells_:
        if c.tuner:
            low, high = _tuner(by_n, c, tuned[c.group.name])
            ends.append(c.tuner.budgets)
            lows.append(low)
            highs.append(high)
    colours = {c.group.name: own[c.group.name][0] for c in cells_} | {f"{k}, GP tuner": v for k, v in tuned.items()}
    colours |= {f"{c.group.name}, median": own[c.group.name][0] for c in cells_}
    _fit(by_n, cells_, (lows, highs), colours, limit, tuner=True)
    end_at_trials(by_n, ends)
    left, right = by_n.get_xlim()  # room left of n = 1: its shading is not drawn on the spine
    if max(e[-1] for e in ends) > 50:
        by_n.set_xscale("log")
        by_n.set_xlim(left / 1.15, right)
    else:
        by_n.set_xlim(left - 0.5, right)
        integer_ticks(by_n)
    _zoom(by_n, cells_, own, tuned)
    by_n.set_xlabel("Hyperparameter assignments (n)")
    ends, lows, highs = _panel(by_time, cells_, own, "time", limit)
    _fit(by_time, cells_, (lows, highs), colours, limit, tuner=False)
    end_at_trials(by_time, ends)
    by_time.set_xscale("log")
    by_time.set_xlim(by_time.get_xlim()[0] / 1.15, by_time.get_xlim()[1])
    time_ticks(by_time)
    by_time.set_xlabel("Training time (n trials × the cell's mean duration)")
    panels = ((by_n, "(a) random search: expected minimum of n trials (Eq. 8)"
               + ("; GP tuner: mean best-so-far" if tuned else "")),
              (by_time, "(b) random search: expected minimum of n trials (Eq. 8), against training time"))
    for ax, name in panels:
        ax.set_ylabel("Expected best validation perplexity (lower is better)")
        ax.set_title(name, fontsize=8)
        ax.grid(alpha=0.3, lw=0.5)
    fig.suptitle(title(study, cells_), fontsize=9)
    extra = [Swatch([own[c.group.name][0] for c in cells_], SD_LABEL)]
    extra += [Swatch(list(tuned.values()), GP_LABEL, alpha=0.12)] if tuned else []
    return finish(fig, by_n, out_stem, extra) + [caption(study, cells_, out_stem, limit)]


def zoom_from(cells_: list[Cell]) -> int:
    """The first budget of panel (a)'s inset: one before the first change of leader (random search), at least 2; a
    quarter of the smallest N when no leader changes."""
    changes = [first for _, first, _ in leaders(cells_)[1:]]
    return max(2, changes[0] - 1 if changes else min(c.group.scores.size for c in cells_) // 4)


def _zoom(ax, cells_: list[Cell], own: dict, tuned: dict) -> None:
    """An inset over panel (a) from :func:`zoom_from` on, on a linear axis: where the cells' curves lie close
    together and the leader changes, which the full panel's range (a log axis, when the first trials span a factor
    :data:`LOG_SPAN`) squeezes into a few pixels. Curves only; their shading is the panel's."""
    start = zoom_from(cells_)
    lines = [(c.curve()[0], c.curve()[1], *own[c.group.name], "default") for c in cells_]
    lines += [(c.tuner.budgets, c.tuner.mean, tuned[c.group.name], "-.", "steps-post") for c in cells_ if c.tuner]
    inset = ax.inset_axes([0.36, 0.40, 0.61, 0.55])
    shown = []
    for ns, values, colour, style, steps in lines:
        keep = (ns >= start) & np.isfinite(values)
        inset.plot(ns[keep], values[keep], color=colour, ls=style, lw=1.4, drawstyle=steps)
        shown.append(values[keep])
    values = np.concatenate(shown)
    pad = 0.06 * (values.max() - values.min() or 1.0)
    inset.set_ylim(values.min() - pad, values.max() + pad)
    inset.set_xlim(start, max(ns.max() for ns, *_ in lines))
    integer_ticks(inset)
    inset.tick_params(labelsize=6)
    inset.grid(alpha=0.3, lw=0.5)
    inset.set_title(f"n = {start} on, linear axis (curves only)", fontsize=6.5, pad=2)


def caption(study: str, cells_: list[Cell], out_stem: Path, limit: float) -> Path:
    """``<out_stem>_caption.md``: the whole title and what each panel draws, in words; ``limit`` is the axes' :func:`ceiling`."""
    first, *rest = title(study, cells_).splitlines()
    reduced = load_study(study).reduced
    lines = [f"# {out_stem.name}", "", first, "", counts(cells_) + "."] + (["", reduced] if reduced else []) + ["",
             "- Validation perplexity, lower is better: each random-search curve falls with n.",
             "- (a) Curves: the expected best validation perplexity of n random-search trials (Eq. 8 with direction min, "
             "the expected minimum of n i.i.d. draws) of " + ", ".join(f"{c.group.label} (N = {c.group.scores.size})"
                                                                        for c in cells_) + ", up to N.",
             f"- (a) Inset: the same curves (and the GP tuner's mean) from n = {zoom_from(cells_)} on, on a linear axis, where "
             "the leader changes; without shading, which the panel shows.",
             "- (b) The same curves at n trials times the cell's mean training duration, in steps (n trials' expected best "
             "holds until the next trial ends).",
             f"- Shading, in each curve's colour: {SD_LABEL.removeprefix('shading: ')}; none where the curve is above the axis."]
    for name, where, high, low in off_scale(cells_, limit):
        lines.append(f"- Above the axis, which reaches at most {CEILING} times the lowest point of any curve "
                     f"({score(limit)}): {name} at n = {where}, from {score(high)} to {score(low)}. Eq. 8 is a mean "
                     "over a cell's trials in which a diverged trial weighs at every n; drawn to scale, it would flatten every other curve.")
    lines += floor_lines(study, cells_)
    for c in cells_:
        if c.failed:
            lines.append(f"- {c.group.name}: {c.failed} failed trial(s), not part of its curve.")
        if c.tuner:
            lines.append(f"- (a) Dash-dot steps, {c.group.name}: the GP tuner's best-so-far in trial order, the mean of "
                         f"{count(c.tuner.runs, 'independent run')} up to n = {c.tuner.budgets.size} (the shortest run), shaded ±1 SD "
                         "across the runs: an adaptive search's trials are no i.i.d. draws, so Eq. 8 is not applied to them.")
    if not any(c.tuner for c in cells_):
        lines.append(f"- No GP-tuner runs with a finished trial in {study}/{GP}/ (`syw run study={study} family=lstm strategy={GP} "
                     "tuner.seed=0` writes one): the figure shows random search only.")
    path = out_stem.parent / f"{out_stem.name}_caption.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def floor_lines(study: str, cells_: list[Cell]) -> list[str]:
    """The caption's lines on the study's floor (how many trials count at it, per cell) and on the median curves."""
    floor = load_study(study).floor
    lines = []
    if floor is not None:
        counted = "; ".join(f"{c.group.name} {c.floored}" for c in cells_ if c.floored) or "none"
        lines.append(f"- Floor, by the metric's rule (`study.floor` of the study's config): {floor.describe(False)}; trials "
                     f"counted at it: {counted}. Eq. 8 is a mean in which one diverged trial weighs at every n.")
    medians = [c.group.name for c in cells_ if c.median() is not None]
    lines.append(f"- {MEDIAN_RULE} Dotted: " + (", ".join(medians) if medians else "none (no cell's mean is swayed so)") + ".")
    return lines


def write(results: Path, out: Path) -> list[Path]:
    """Figure 5 of the records in ``results`` (the full study when it has records, else the reduced one), as ``<out>/fig5.*``."""
    study, cells_ = cells(results)
    return draw(study, cells_, out / "fig5")


def _at(curve: np.ndarray, n: int) -> float | None:
    return float(curve[n - 1]) if n <= curve.size else None


def leaders(cells_: list[Cell]) -> list[tuple[str, int, int]]:
    """(cell, first n, last n) of each stretch over n = 1..the smallest N where that cell's expected best is lowest."""
    return leaders_by_n({c.group.name: c.curve()[1] for c in cells_}, maximize=False)


def saves(c: Cell) -> str:
    """Where the GP runs' mean best-so-far first reaches random search's expected best at N, and the trials that saves."""
    big_n, eq8 = c.group.scores.size, c.curve()[1]
    n, saved = reaches_random(c.tuner, eq8, maximize=False), trials_saved(c.tuner, eq8, maximize=False)
    head = f"{c.group.name}: random search's expected best at N = {big_n} is {score(eq8[-1])}; the GP runs' mean best-so-far "
    if n is not None:
        return head + f"reaches it at n = {n}: the GP tuner saves {saved} of {big_n} trials."
    if saved is None:
        return head + f"does not reach it within {c.tuner.budgets.size} trials, where the shortest run ends: not known yet."
    return head + f"does not reach it within {big_n} trials: not within N."


def budget_markdown(study: str, cells_: list[Cell]) -> str:
    """Per cell: trials, best perplexity, expected best at n = 1, 5, 10, N, the leader at each n and the GP tuner's saving."""
    fmt = lambda v: "-" if v is None or not np.isfinite(v) else score(v)  # noqa: E731
    floor = load_study(study).floor
    out = [f"## The suite's Figure 5: study `{study}` (ours; case study 5, Melis et al. 2018)", "",
           "Validation perplexity, lower is better. Random search: the expected best of n trials is the expected minimum of "
           "n i.i.d. draws (Eq. 8, direction min). GP tuner: the mean over its runs of the best-so-far in trial order (no "
           "Eq. 8: adaptive trials are no i.i.d. draws), ± the SD across runs."
           + (f" Floor, stated in the study's config: {floor.describe(False)}." if floor else ""), "",
           "| cell | ok trials | failed | at the floor | mean duration | best perplexity (trial) |", "|---|---|---|---|---|---|"]
    for c in cells_:
        best = int(np.argmin(c.group.scores))
        out.append(f"| {c.group.name}: {c.group.label} | {c.group.scores.size} | {c.failed} | {c.floored} | "
                   f"{human_duration(c.group.mean_duration)} | {score(c.group.scores[best])} (trial {c.trials[best]}) |")
    tuned = [c for c in cells_ if c.tuner]
    sizes = {c.group.scores.size for c in cells_}
    out += ["", "| n | " + " | ".join(c.group.name for c in cells_) + "".join(f" | {c.group.name}, GP best-so-far"
                                                                             for c in tuned) + " | leader (random search) |",
            "|---" * (len(cells_) + len(tuned) + 2) + "|"]
    for n in sorted(n for n in {*BUDGETS, *sizes} if n <= max(sizes)):
        values = {c.group.name: _at(c.curve()[1], n) for c in cells_}
        ahead = {k: v for k, v in values.items() if v is not None}
        gp = [f"{fmt(_at(c.tuner.mean, n))} ± {fmt(_at(c.tuner.sd, n))} ({count(c.tuner.runs, 'run')})"
              if n <= c.tuner.budgets.size else f"- (runs end at {c.tuner.budgets.size})" for c in tuned]
        out.append(f"| {n}{' (N)' if n in sizes else ''} | " + " | ".join(fmt(v) for v in values.values())
                   + "".join(f" | {g}" for g in gp) + f" | {min(ahead, key=ahead.get)} |")
    out += ["", "Leader by n (lowest expected best, random search, n = 1 to the smallest N): "
            + stretches_text(leaders(cells_)) + ".", "", *leader_confidence(cells_)]
    out += ["", *(f"Trials the GP tuner saves, {saves(c)}" for c in tuned)] if tuned else [
        "", f"No GP-tuner runs with a finished trial in `{study}/{GP}/`: no best-so-far column."]
    return "\n".join(out) + "\n"


def leader_confidence(cells_: list[Cell]) -> list[str]:
    """Who leads each pair of cells at 95%, simultaneously over the budgets both have (``syw curve``'s comparison,
    lower is better), with the limit of assumption-free claims."""
    lines = ["Who leads at 95% (difference of the random-search curves, simultaneous claims, "
             "`syw.analysis.inference.compare`, lower is better):", ""]
    for a, b in itertools.combinations(cells_, 2):
        names = (a.group.name, b.group.name)
        lines.append(f"- {sentence(compare(a.group.scores, b.group.scores, names, maximize=False))}")
    return lines


def write_budgets(results: Path, out: Path) -> Path:
    """``<out>/budgets_fig5.md``: :func:`budget_markdown`, or why there is no table yet (no records)."""
    try:
        study, cells_ = cells(results)
        text = budget_markdown(study, cells_)
    except FileNotFoundError as err:  # the study has not run (or not every cell yet): the file says so
        text = f"## Figure 5 (case study 5, Melis et al. 2018): no table yet\n\n{err}\n".replace(f"{REPO}/", "")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "budgets_fig5.md"
    path.write_text("# Budget inference, case study 5 (ours)\n\n" + text)
    return path
