"""The Python API of ``syw curve``: expected validation performance (Dodge et al. 2019) in a notebook.

``curves(data)`` reads the trials (an array of scores, a mapping of group to scores, a DataFrame, or
any source ``syw curve`` reads: a CSV/TSV/JSONL file, a Ray Tune folder, an Optuna storage URL) and
computes each group's curve: Eq. 8, the expected best validation score of n trials drawn from the
N observed, its spread (Eq. 8's SD) and the unbiased estimate, n = 1..N. The result gives the table
(:meth:`Curves.table`, one row per group and n, groups in a column named ``group``), the comparisons of
two groups as :class:`syw.analysis.compare.Difference` objects (:meth:`Curves.compare`), the figure
on a matplotlib axes of one's own (:meth:`Curves.draw`), the report (:meth:`Curves.report`) and the
reporting checklist of the paper's section 5 (:meth:`Curves.checklist`).
``syw curve`` is this module with files around it (``syw.curve.command``).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.compare import Difference
from syw.analysis.curves import Curve, Options, band_bounds, budgets, build, comparisons, leader_changes, table
from syw.analysis.floors import Floor
from syw.analysis.power import plan as plan_sizes
from syw.analysis.statistic import MEAN, Statistic
from syw.core.errors import DataError
from syw.curve.checklist import Checklist
from syw.curve.checklist import build as checklist_of
from syw.curve.latex import comparison_table, expected_max_table
from syw.curve.prepare import Prepared, Reading, prepare
from syw.curve.report import build as report_text
from syw.curve.sources import Trials

GROUP = "group"  # the table's column naming the groups, whatever the source calls them
SCORE = "score"  # the score column of an array or mapping given as trials

Data = (str | Path | Sequence[str | Path] | np.ndarray | Sequence[float] | Mapping[str, Sequence[float]]
        | pd.DataFrame)


def _frame(data, name: str) -> tuple[Trials, dict]:
    """An array, a mapping or a DataFrame as the rows ``syw curve`` reads, and the columns they fix."""
    if isinstance(data, pd.DataFrame):
        frame, fixed = data, {}
    elif isinstance(data, Mapping):
        frame = pd.DataFrame([(str(g), s) for g, scores in data.items() for s in np.asarray(scores, float).ravel()],
                             columns=[GROUP, SCORE])
        fixed = dict(group=GROUP, metric=SCORE)
    else:
        frame, fixed = pd.DataFrame({SCORE: np.asarray(data, float).ravel()}), dict(group="none", metric=SCORE)
    if frame.empty:
        raise DataError(f"{name}: no trials given")
    frame = frame.set_axis([f"row {k}" for k in range(len(frame))])  # messages name the row
    return Trials(frame, name, name), fixed


def read(data: Data, *, name: str = "trials", group: str | None = None, metric: str | None = None,
         duration: str | None = None, maximize: bool | None = None, study: str | Sequence[str] | None = None,
         pick: str = "best", failed: str = "drop", test: str | None = None, floor: Floor | None = None) -> Prepared:
    """The groups' scores of ``data`` (``syw.curve.prepare.prepare``), the columns picked as ``syw curve``
    picks them unless given. ``maximize``: None takes the source's own direction, else higher is better;
    ``name`` names an array, mapping or DataFrame in the report and in errors; ``floor``: scores beyond it
    count at it (``syw.analysis.floors``)."""
    direction = None if maximize is None else ("max" if maximize else "min")
    if isinstance(data, (str, Path)) or (isinstance(data, Sequence) and data and isinstance(data[0], (str, Path))):
        sources, fixed = [str(d) for d in ([data] if isinstance(data, (str, Path)) else data)], {}
    else:
        trials, fixed = _frame(data, name)
        sources = [trials]
    return prepare(sources, Reading(metric=metric or fixed.get("metric"), group=group or fixed.get("group"),
                                    duration=duration, direction=direction, pick=pick, failed=failed, test=test, floor=floor,
                                    studies=(study,) if isinstance(study, str) else tuple(study) if study else None))


@dataclass(frozen=True)
class Curves:
    """Every group's curve (:class:`syw.analysis.curves.Curve`: Eq. 8, its SD, the unbiased estimate, n = 1..N)
    and how the trials were read (:class:`syw.curve.prepare.Prepared`)."""

    curves: list[Curve]
    prepared: Prepared
    options: Options
    notes: list[str] = field(default_factory=list)  # what the report adds to the reading's notes

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.curves]

    def __getitem__(self, name: str) -> Curve:
        for c in self.curves:
            if c.name == name:
                return c
        raise KeyError(f"{name!r} is not a group here (groups: {', '.join(self.names)})")

    def table(self) -> pd.DataFrame:
        """One row per (group, n): Eq. 8 (``expected_max``), its SD (``spread_sd``), the unbiased estimate,
        and the bands, forecast and quantile curve where computed; the groups in column ``group``."""
        return table(self.curves, GROUP)

    def compare(self, a: str, b: str) -> Difference:
        """Group ``a``'s curve minus ``b``'s with intervals at ``options.compare_confidence``: the jackknife
        comparison of ``syw.analysis.inference`` (claims at ``options.at``, else simultaneous ones) for the mean
        curve (Eq. 8), the crossed bands of ``syw.analysis.compare`` with a quantile statistic.
        ``syw.analysis.compare.sentence`` says it in words; ``.leader()`` names who leads at each n."""
        return comparisons(self.curves, self.options, self.prepared.source, (a, b))[0][0]

    def differences(self, pair: tuple[str, str] | None = None) -> tuple[list[Difference], list[str]]:
        """``pair``'s difference (:meth:`compare`), else every pair of random-search groups', and a note
        for each pair it cannot be computed for."""
        return comparisons(self.curves, self.options, self.prepared.source, pair)

    def plan(self, a: str, b: str, at: Sequence[int], *, power: float = 0.8, cap: int = 5_000, method: str = "bootstrap",
             draws: int = 1_000, seed: int = 0) -> pd.DataFrame:
        """How many trials per group would decide ``a`` against ``b`` at each pre-stated budget (the pointwise test of
        :meth:`compare` with ``at``) with probability ``power``, simulated from these trials as a pilot
        (``syw.analysis.power.plan``): one row per n with ``trials_per_group`` (NaN where no size up to ``cap``
        decides it), ``power``, the pilot's ``leader``, the largest budget the pilot speaks for and the method."""
        rows = plan_sizes(self[a].scores, self[b].scores, at, power=power, confidence=self.options.compare_confidence,
                          cap=cap, method=method, draws=draws, seed=seed, maximize=self.prepared.maximize, names=(a, b))
        return pd.DataFrame([{"n": r.n, "trials_per_group": r.trials_per_group, "power": r.power, "leader": r.leader,
                              "pilot_limit": r.limit, "least": r.least, "method": r.method} for r in rows],
                            columns=["n", "trials_per_group", "power", "leader", "pilot_limit", "least", "method"])

    def budgets(self, targets: Sequence[float | tuple[float, str]]) -> pd.DataFrame:
        """Per group and target: the first n whose curve reaches it (``syw.analysis.curves.budgets``)."""
        return budgets(self.curves, _targets(targets), self.prepared.maximize)

    def metric_name(self) -> str:
        """The score in words: its column's name, or "validation value" for an Optuna study's ``value``."""
        metric = self.prepared.metric
        return "validation value" if metric == "value" or metric.startswith("value_") else metric

    def ylabel(self) -> str:
        """The y axis label: what the curve is (Eq. 8: "Expected best"), of the score: "Expected best val_acc"."""
        return f"{self.options.statistic.title.removesuffix(' of n')} {self.metric_name()}"

    def title(self) -> str:
        """The figure's default title, from the score's name."""
        return f"Expected validation performance: {self.metric_name()}"

    def draw(self, ax=None, *, x: str = "trials", log_x: bool | None = None, sd: bool = True,
             targets: Sequence[float | tuple[float, str]] = (), title: str | None = None, legend: bool = True,
             ylim: tuple[float, float] | None = None, labels: Mapping[str, str] | None = None):
        """Draw every group's curve on ``ax`` (a new figure's when None), shaded ±1 SD (Eq. 8's spread,
        clipped to the observed scores); ``x``: ``trials`` or ``time`` (n times the group's mean duration);
        ``log_x``: None for a log axis of time (the paper's) and a linear one of trials;
        ``ylim`` fixes the y axis; ``labels`` renames groups (group -> label). Returns the axes."""
        from syw.curve.figure import plot_on, shown_names  # matplotlib only when drawing
        from syw.curve.style import plt

        if ax is None:
            ax = plt.subplots(figsize=(5.5, 4.6), layout="constrained")[1]
        shown = shown_names(self.names, dict(labels or {}))[0]
        extra = plot_on(ax, self.curves, x=x, log_x=log_x, sd=sd, targets=_targets(targets),
                        maximize=self.prepared.maximize, shown=shown, ylim=ylim)
        ax.set_ylabel(self.ylabel())
        ax.set_title(self.title() if title is None else title, fontsize=9)
        if legend:
            handles, labels = ax.get_legend_handles_labels()
            ax.legend(handles + [getattr(h, "handles", h) for h in extra], labels + [h.get_label() for h in extra],
                      fontsize=7)
        return ax

    def latex(self, budgets: Sequence[int] | None = None, differences: list[Difference] | None = None) -> str:
        """The expected-max table (Eq. 8 ± its SD at ``budgets``; default 1, 5, 10 and each group's N) and, when
        there are comparisons (every pair unless ``differences`` are given), their table: booktabs LaTeX."""
        sizes = {c.scores.size for c in self.curves}
        shown = sorted(budgets or {n for n in (1, 5, 10) if n <= max(sizes)} | sizes)
        if differences is None:
            differences = self.differences()[0]
        return expected_max_table(self.curves, shown) + ("\n" + comparison_table(differences) if differences else "")

    def checklist(self, params: Sequence[str] | None = None) -> Checklist:
        """The reporting checklist of the paper's section 5 filled from the trials (``syw.curve.checklist``):
        trials per group, hyperparameter bounds as seen, best assignments, Eq. 8 at n = 1, 5, 10 and N, the
        search strategy and time per trial, and what is still to state; ``.markdown()`` and ``.latex()`` write it.
        ``params``: the hyperparameter columns (default: found by name)."""
        return checklist_of(self.prepared, self.curves, params)

    def report(self, targets: Sequence[float | tuple[float, str]] = (), *, differences: list[Difference] | None = None,
               files: Sequence[str] = ()) -> str:
        """The Markdown report of ``syw curve``: the scores at a few budgets, the budgets to reach each target,
        where one group overtakes another, the comparisons (every pair unless ``differences`` are given) and
        how each number is computed."""
        notes = list(self.prepared.notes) + list(self.notes)
        if differences is None:
            differences, more = self.differences()
            notes += more
        bounds = band_bounds([c.scores for c in self.curves], self.options, self.prepared.source) \
            if self.options.confidence else None
        return report_text(self.curves, source=self.prepared.source, columns=self.prepared.columns, notes=notes,
                           options=self.options, budgets=self.budgets(targets),
                           changes=leader_changes(self.curves, self.prepared.maximize), bounds=bounds,
                           files=list(files), differences=differences)


def _targets(targets: Sequence[float | tuple[float, str]]) -> list[tuple[float, str]]:
    return [(float(t[0]), t[1]) if isinstance(t, tuple) else (float(t), "") for t in targets]


def curves(data: Data | Prepared, *, statistic: Statistic | str = MEAN, confidence: float | None = None,
           bounds: tuple[float, float] | None = None, options: Options | None = None, **reading) -> Curves:
    """Each group's expected-max curve (Eq. 8 of Dodge et al. 2019, with its SD and the unbiased estimate)
    of ``data``: read with :func:`read` (``reading`` its keywords) unless already :class:`Prepared`.
    ``statistic``: the mean (Eq. 8, :data:`syw.analysis.statistic.MEAN`), the median of the best of n or another
    quantile, as a :class:`syw.analysis.statistic.Statistic` or as ``syw curve --statistic`` spells it (``"median"``);
    ``confidence``: simultaneous bands at that level (``bounds``: the score's range); ``options``: every
    choice of ``syw curve`` (:class:`syw.analysis.curves.Options`) at once, its direction set from the data.

    >>> result = curves({"a": [0.1, 0.2, 0.3], "b": [0.15, 0.25, 0.2]})
    >>> result.table().round(4).loc[:, ["group", "n", "expected_max"]].values.tolist()[:3]
    [['a', 1, 0.2], ['a', 2, 0.2444], ['a', 3, 0.2667]]
    """
    prepared = data if isinstance(data, Prepared) else read(data, **reading)
    if options is None:
        statistic = Statistic.parse(statistic) if isinstance(statistic, str) else statistic
        options = Options(statistic=statistic, confidence=confidence, bounds=bounds,
                          compare_method="jackknife" if statistic.is_mean else "bands")
    options = replace(options, maximize=prepared.maximize)
    return Curves(build(prepared.groups, options, prepared.source), prepared, options)


def sequential(data: Data | Prepared, *, compare: tuple[str, str], at: Sequence[int], looks: Sequence[int],
               boundary: str = "obrien-fleming", confidence: float = 0.95, **reading) -> pd.DataFrame:
    """The group-sequential comparison of groups ``compare`` (A, B) at budgets ``at``, looked at after each number
    of trials per group in ``looks`` (the trials in the order they ran), as ``syw curve --looks`` computes it
    (:func:`syw.curve.sequential.sequential_rows`): one row per look evaluated and budget, with the rule's T, its
    boundary, the repeated confidence interval, the leader ("" while undecided) and ``stopped``.

    >>> rows = sequential({"a": [0.8 + 0.01 * (k % 7) for k in range(40)], "b": [0.3 + 0.01 * (k % 5) for k in range(40)]},
    ...                   compare=("a", "b"), at=[1], looks=[20, 40])
    >>> rows[["look", "n", "leader", "stopped"]].values.tolist()
    [[1, 1, 'a', True]]
    """
    from syw.curve.sequential import sequential_rows

    prepared = data if isinstance(data, Prepared) else read(data, **reading)
    return sequential_rows(prepared, (str(compare[0]), str(compare[1])), at, looks, boundary, confidence)
