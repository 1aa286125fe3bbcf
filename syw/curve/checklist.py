"""The reporting checklist of Dodge et al. (2019), section 5 (Text Box 1), filled from anyone's trials.

What the trials hold fills an item: the number of trials per group, the bounds of each hyperparameter as
seen (the range of a numeric one, the set of values of a categorical one), the best assignment per group,
the expected-max table (Eq. 8 ± its SD at n = 1, 5, 10 and N), the search strategy as read and the time
per trial where durations are recorded. What only the author knows (the hardware, the bounds as
specified, the splits, the code) is listed as still to state. The suite's own studies fill the same
items from their records and configs (``syw.figures.report``); both render with :func:`checklist_lines`
and :func:`expected_table`.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from syw.analysis.adaptive import strategy_column
from syw.analysis.curves import Curve
from syw.analysis.group import Group
from syw.core.errors import DataError
from syw.core.units import human_duration
from syw.curve.latex import escape, expected_max_table
from syw.curve.prepare import ORDER_COLUMNS, RUN_COLUMNS, Prepared

MISSING = "**missing**"
RESULTS, SEARCH = "For all reported experimental results:", "For experiments with hyperparameter search:"
# The items of Text Box 1 in the paper's order and words: (key, part, item).
ITEMS = (("infrastructure", RESULTS, "Description of computing infrastructure"),
         ("runtime", RESULTS, "Average runtime for each approach"),
         ("splits", RESULTS, "Details of train/validation/test splits"),
         ("validation", RESULTS, "Corresponding validation performance for each reported test result"),
         ("code", RESULTS, "A link to implemented code"),
         ("bounds", SEARCH, "Bounds for each hyperparameter"),
         ("best", SEARCH, "Hyperparameter configurations for best-performing models"),
         ("trials", SEARCH, "Number of hyperparameter search trials"),
         ("method", SEARCH, "The method of choosing hyperparameter values and the criterion used to select "
                            "among them"),
         ("expected", SEARCH, "Expected validation performance (section 3.1)"))
BUDGETS = (1, 5, 10)  # and each group's N
PREFIXES = ("params.", "config.", "hparams.", "hyperparameters.")  # how Optuna, Ray Tune, Lightning... name them
# Columns of outcomes and bookkeeping, never hyperparameters, when no prefix marks the hyperparameters.
OUTCOME = re.compile(r"(^|[._ -])(val|valid|validation|dev|test|train|training|loss|acc|accuracy|f1|em|score|"
                     r"value|metric|time|duration|seconds|runtime|timestamp|date|datetime|epoch|epochs|step|"
                     r"steps|iter|iteration|id|uuid|trial|number|status|state|error|path|logdir|host|hostname|"
                     r"node|pid|done|hardware|gpu|cpu|device|versions?|commit|direction|best|peak)($|[._ -])",
                     re.IGNORECASE)
HARDWARE = re.compile(r"(^|[._ -])(hardware|gpu|cpu|device|accelerator)($|[._ -])", re.IGNORECASE)
MOST_VALUES = 8  # a numeric column with at most this many distinct values also lists them


@dataclass(frozen=True)
class Entry:
    """One item of the checklist: what the trials say (``value``, None: nothing) and what the author must
    still state (``still``, None: nothing). Complete when there is a value and nothing to state."""

    value: str | None
    still: str | None = None

    @property
    def done(self) -> bool:
        return self.value is not None and self.still is None


def checklist_lines(entries: Mapping[str, Entry]) -> list[str]:
    """Text Box 1 as Markdown task lists, an item ticked where ``entries`` fills it completely, and the list
    of what is still to state."""
    out: list[str] = []
    for key, part, item in ITEMS:
        if part not in out:
            out += ([""] if out else []) + [part, ""]
        entry = entries[key]
        text = entry.value if entry.value is not None else MISSING
        out.append(f"- [{'x' if entry.done else ' '}] {item}: {text}" + (f". Still to state: {entry.still}"
                                                                          if entry.still else ""))
    still = [(item, entries[key].still) for key, _, item in ITEMS if entries[key].still]
    if still:
        out += ["", "## What you must still state", ""] + [f"- {item}: {what}" for item, what in still]
    return out


def expected_table(columns: Mapping[str, tuple[np.ndarray, np.ndarray]], budgets: Sequence[int]) -> list[str]:
    """Eq. 8 ± its SD (section 3.3) at each budget, a column per group (label -> (curve, SD) at n = 1..N)."""
    out = ["| n | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for n in budgets:
        out.append(f"| {n} | " + " | ".join(f"{em[n - 1]:.4f} ± {sd[n - 1]:.4f}" if n <= em.size else "-"
                                           for em, sd in columns.values()) + " |")
    return out


def hyperparameters(prepared: Prepared, given: Sequence[str] | None = None) -> tuple[list[str], str]:
    """The columns holding each trial's hyperparameters and how they were chosen: ``given``, else the
    columns named ``params.*`` / ``config.*`` / ``hparams.*``, else every column not named like an outcome or
    bookkeeping (score, time, id, status, ...) and not picked as score, group or time."""
    names = list(dict.fromkeys(c for rows in prepared.rows.values() for c in map(str, rows.columns)))
    if given:
        if unknown := [c for c in given if c not in names]:
            raise DataError(f"{prepared.source}: --param {unknown[0]!r} is not a column here "
                            f"(columns: {', '.join(names)})")
        return list(given), "given with --param"
    marked = [c for c in names if c.startswith(PREFIXES)]
    if marked:
        return marked, "the columns named " + "/".join(f"{p}*" for p in PREFIXES if any(c.startswith(p) for c in marked))
    picked = {prepared.metric, prepared.group_column, *ORDER_COLUMNS, *RUN_COLUMNS}
    rest = [c for c in names if c not in picked and not OUTCOME.search(c) and not c.startswith("_")]
    return rest, "every column not named like a score, a time or bookkeeping (pass --param COLUMN to choose)"


def bounds(values: pd.Series) -> str:
    """The values of one hyperparameter as seen: [min, max] of a numeric one (integers: "integers in"), with
    its values when there are few; the set of values of any other."""
    seen = values.dropna()
    if seen.empty:
        return "never set"
    numbers = pd.to_numeric(seen, errors="coerce")
    distinct = sorted(seen.astype(str).unique())
    if numbers.notna().all() and seen.map(lambda v: not isinstance(v, bool)).all():
        whole = bool(np.all(numbers == np.round(numbers)))
        span = f"{'integers in ' if whole else ''}[{_value(numbers.min())}, {_value(numbers.max())}]"
        few = sorted(numbers.unique())
        if numbers.nunique() == 1:
            return f"{_value(few[0])} (fixed)"
        return span + (f", values {{{', '.join(map(_value, few))}}}" if len(few) <= MOST_VALUES else "")
    if len(distinct) == 1:
        return f"{distinct[0]} (fixed)"
    return "{" + ", ".join(distinct) + "}"


def shown_budgets(sizes: Sequence[int]) -> list[int]:
    """1, 5, 10 (those up to the largest N) and each N: the budgets of the expected-max table."""
    return sorted({n for n in BUDGETS if n <= max(sizes)} | set(sizes))


def _value(value) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    return str(value)


@dataclass(frozen=True)
class GroupReport:
    """What the checklist says of one group: its trials, its hyperparameters' bounds as seen, its best
    trial (score and assignment), its time per trial and its search strategy."""

    name: str
    trials: int
    bounds: dict[str, str]
    best_score: float
    best: dict[str, str]
    mean_seconds: float | None
    total_seconds: float | None
    strategy: str
    curve: Curve
    best_test: float | None


@dataclass(frozen=True)
class Checklist:
    """The filled checklist of a set of trials (:func:`build`): one :class:`GroupReport` per group, the
    items (:class:`Entry` per key of :data:`ITEMS`) and how the hyperparameters were found."""

    source: str
    metric: str
    maximize: bool
    groups: list[GroupReport]
    entries: dict[str, Entry]
    notes: list[str]  # the reading's notes and how the hyperparameter columns were chosen

    def budgets(self) -> list[int]:
        """The budgets of the expected-max table: 1, 5, 10 (those up to the largest N) and each group's N."""
        return shown_budgets([g.trials for g in self.groups])

    def markdown(self) -> str:
        """The checklist in Markdown: the items, what is still to state, each group's hyperparameters and the
        expected-max table (Eq. 8)."""
        out = [f"# Reporting checklist: {self.source}", "",
               "The checklist of Dodge et al. (2019), section 5 (Text Box 1), filled from the trials where they say "
               "it; an unticked item needs words of yours.", ""]
        out += [f"- note: {n}" for n in self.notes] + ([""] if self.notes else [])
        out += ["## Checklist", ""] + checklist_lines(self.entries)
        for g in self.groups:
            out += ["", f"## {g.name}: {g.trials} trials, best {self.metric} {g.best_score:.4f}", ""]
            if g.bounds:
                out += ["| hyperparameter | seen in the trials | best trial |", "|---|---|---|"]
                out += [f"| {k} | {v} | {g.best.get(k, '-')} |" for k, v in g.bounds.items()]
            else:
                out.append("No hyperparameter columns found (pass --param COLUMN).")
        out += ["", "## Expected validation performance (Eq. 8 ± its SD, section 3.3)", ""]
        out += expected_table({g.name: (g.curve.mean, g.curve.sd) for g in self.groups}, self.budgets())
        return "\n".join(out + [""])

    def latex(self) -> str:
        """The checklist, each group's hyperparameters (booktabs) and the expected-max table, in LaTeX."""
        out = ["% needs \\usepackage{booktabs} and \\usepackage{amssymb}", "\\begin{itemize}"]
        for key, _, item in ITEMS:
            entry = self.entries[key]
            box = "$\\boxtimes$" if entry.done else "$\\square$"
            text = escape((entry.value or "missing").replace("**", "")) + (
                f". Still to state: {escape(entry.still)}" if entry.still else "")
            out.append(f"  \\item[{box}] {escape(item)}: {text}")
        out += ["\\end{itemize}", ""]
        for g in self.groups:
            if not g.bounds:
                continue
            out += ["\\begin{tabular}{lll}", "\\toprule", f"\\multicolumn{{3}}{{l}}{{{escape(g.name)}: {g.trials} "
                    f"trials, best {escape(self.metric)} {g.best_score:.4f}}} \\\\", "\\midrule",
                    "Hyperparameter & Seen in the trials & Best trial \\\\", "\\midrule"]
            out += [f"{escape(k)} & {escape(v)} & {escape(g.best.get(k, '--'))} \\\\" for k, v in g.bounds.items()]
            out += ["\\bottomrule", "\\end{tabular}", ""]
        return "\n".join(out) + expected_max_table([g.curve for g in self.groups], self.budgets())


def _strategy(curve: Curve, rows: pd.DataFrame) -> tuple[str, bool]:
    """The search strategy as read, and whether the trials record it."""
    column = strategy_column(rows)
    if curve.strategy:
        return f"{curve.strategy} (an adaptive search: Eq. 8 does not apply, its curve is the best so far)", True
    if column:
        return f"random search (column {column!r})", True
    return "random search, assumed: the trials do not record how they were chosen", False


def _group(curve: Curve, group: Group, rows: pd.DataFrame, columns: list[str], maximize: bool) -> GroupReport:
    scores = group.scores  # in the order of rows
    at = int(np.argmax(scores) if maximize else np.argmin(scores))  # the first of tied best trials
    shown = [c for c in columns if c in rows.columns and rows[c].notna().any()]
    durations = group.durations
    return GroupReport(curve.name, int(scores.size), {c: bounds(rows[c]) for c in shown}, float(scores[at]),
                       {c: _value(rows[c].iloc[at]) for c in shown},
                       None if durations is None else float(np.mean(durations)),
                       None if durations is None else float(np.sum(durations)), _strategy(curve, rows)[0], curve,
                       None if group.tests is None else float(group.tests[at]))


def _per_group(said: dict[str, str]) -> str:
    """One phrase per group, or one for all when they say the same."""
    if len(said) > 1 and len(set(said.values())) == 1:
        return f"every group: {next(iter(said.values()))}"
    return "; ".join(f"{name}: {text}" for name, text in said.items())


def _hardware(prepared: Prepared) -> str | None:
    """The values of columns named like the hardware (gpu, cpu, device), where the trials record it."""
    seen = {f"{c}: {v}" for rows in prepared.rows.values() for c in rows.columns if HARDWARE.search(str(c))
            for v in rows[c].dropna().astype(str).unique()}
    return "; ".join(sorted(seen)) or None


def build(prepared: Prepared, curves: list[Curve], params: Sequence[str] | None = None) -> Checklist:
    """Fill the checklist from ``prepared``'s trials and their ``curves`` (Eq. 8 per group, ``syw.analysis.curves``);
    ``params``: the hyperparameter columns (default: :func:`hyperparameters` finds them)."""
    columns, how = hyperparameters(prepared, params)
    by_name = {g.name: g for g in prepared.groups}
    groups = [_group(c, by_name[c.name], prepared.rows[c.name], columns, prepared.maximize) for c in curves]
    recorded = all(_strategy(c, prepared.rows[c.name])[1] for c in curves)
    direction = "higher" if prepared.maximize else "lower"
    hardware = _hardware(prepared)
    timed = [g for g in groups if g.mean_seconds is not None]
    tested = [g for g in groups if g.best_test is not None]
    entries = {
        "infrastructure": Entry(f"the trials record {hardware}" if hardware else None,
                                "the hardware each group ran on (CPU or GPU model and count, memory)"
                                if not hardware else None),
        "runtime": Entry("; ".join(f"{g.name}: {human_duration(g.mean_seconds)} per trial, "
                                   f"{human_duration(g.total_seconds)} in all" for g in timed) or None,
                         None if len(timed) == len(groups) else
                         "the time per trial of " + ", ".join(g.name for g in groups if g.mean_seconds is None)
                         + " (the trials record none)"),
        "splits": Entry(None, "the train/validation/test splits (sizes, and where the validation set comes from)"),
        "validation": Entry("; ".join(f"{g.name}: the best-validation trial scores {g.best_score:.4f} on validation, "
                                      f"{g.best_test:.4f} on test" for g in tested) or None,
                            None if tested else "the validation score beside each test score you report (the trials "
                            "hold no test score)"),
        "code": Entry(None, "a link to the code that trained each group"),
        "bounds": Entry("seen in the trials: the hyperparameter tables below" if any(g.bounds for g in groups) else None,
                        "the search space as specified (each hyperparameter's distribution and bounds), not only the "
                        "values the trials happened to draw"),
        "best": Entry("; ".join(f"{g.name}: " + ", ".join(f"{k} = {v}" for k, v in g.best.items())
                                + f" ({prepared.metric} {g.best_score:.4f})" for g in groups if g.best) or None,
                      None if all(g.best for g in groups) else "the hyperparameters of the best trial (no column "
                      "holds them; pass --param COLUMN)"),
        "trials": Entry("; ".join(f"{g.name}: {g.trials}" for g in groups)),
        "method": Entry(_per_group({g.name: g.strategy for g in groups})
                        + f"; selected by the best validation {prepared.metric} ({direction} is better)",
                        None if recorded else "how the values were chosen (the sampler, e.g. uniform random sampling "
                        "from the bounds, or manual tuning)"),
        "expected": Entry("the expected-max table below (Eq. 8 at n = "
                          + ", ".join(map(str, shown_budgets([g.trials for g in groups]))) + ")"),
    }
    notes = list(prepared.notes) + [f"hyperparameters: {how}"]
    return Checklist(prepared.source, prepared.metric, prepared.maximize, groups, entries, notes)
