"""Budget-inference numbers for each case study (section 4): a tidy CSV and a Markdown summary."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis import Lead, budget_to_reach, crossovers, time_crossovers, time_leaders
from syw.analysis.budget import RULE
from syw.analysis.compare import leaders_by_n, sentence
from syw.analysis.curves import curve_of
from syw.analysis.group import Group
from syw.analysis.inference import compare
from syw.core.units import human_duration
from syw.figures.plot import interval_words
from syw.figures.specs import FigureSpec

PAPER_CLAIMS = {  # what the paper's text states, shown beside our numbers
    1: ["the CNN needs 16 trials to reach 0.395", "LR is better up to about 10 trials"],
    2: ["GloVe is best below about 2 hours", "ELMo frozen is best between about 6 hours and 1 day", "ELMo fine-tuned is best beyond"],
    3: ["the budget to match the reported numbers ranges from 2 (n-gram) to 20 (DGEM)"],
    4: ["BiDAF needs about 18 GPU days, 55 trials, to match 0.677"],
}



def budget_rows(spec: FigureSpec, groups: list[Group], source: str) -> pd.DataFrame:
    """One row per (family, statistic, target): expected max at n = 1, 10, N; budgets to reach targets; crossovers."""
    rows = []
    targets = sorted({*spec.references.values(), *([spec.guide[1]] if spec.guide else []),
                      *itertools.chain.from_iterable(spec.budget_targets.values())})
    curves = {}
    for g in groups:
        big_n = g.scores.size
        curves[g.name] = curve_of(g).mean
        seconds = (lambda n, d=g.mean_duration: None if d is None else n * d)
        for n in sorted({1, min(10, big_n), big_n}):
            rows.append(dict(family=g.name, statistic="expected_max", target=None, trials=n, seconds=seconds(n), value=curves[g.name][n - 1]))
        rows.append(dict(family=g.name, statistic="best_observed", target=None, trials=big_n, seconds=seconds(big_n), value=g.scores.max()))
        own = [spec.references[g.name]] if g.name in spec.references else []
        for target in sorted(set(targets) | set(own)):
            for decimals in (None, 3):
                n = budget_to_reach(curves[g.name], target, decimals=decimals)
                rows.append(dict(family=g.name, statistic="budget_to_reach" if decimals is None else "budget_to_reach_rounded_3dp",
                                 target=target, trials=n, seconds=None if n is None else seconds(n), value=None))
    for a, b in itertools.combinations(groups, 2):
        for c in crossovers(curves[a.name], curves[b.name], (a.name, b.name)):
            rows.append(dict(family=f"{c.leader} over {c.previous}", statistic="crossover_trials", target=None, trials=c.at,
                             seconds=None, value=None))
        if a.mean_duration and b.mean_duration:
            for c in time_crossovers(curves[a.name], a.mean_duration, curves[b.name], b.mean_duration, (a.name, b.name)):
                rows.append(dict(family=f"{c.leader} over {c.previous}", statistic="crossover_time", target=None, trials=None,
                                 seconds=c.at, value=None))
    for lead in leads_by_time(spec, groups):
        rows += [dict(family=lead.leader, statistic=f"lead_{edge}", target=None, trials=None, seconds=at, value=None)
                 for edge, at in (("start", lead.start), ("end", lead.end))]
    frame = pd.DataFrame(rows)
    frame.insert(0, "study", spec.study)
    frame.insert(1, "source", source)
    return frame


INTERVAL_RULE = ("95% interval: `syw.analysis.inference.budget_interval`, \"to beyond L, the limit budget\" where N trials "
                 "cannot bound it (past the limit L = floor(N ln 2 / ln 40) of docs/syw.md they locate nothing)")


def ahead_throughout(groups: list[Group]) -> str:
    """Who leads at every shared budget when no curve crosses another (Eq. 8, ties to the first named)."""
    if len(groups) < 2:
        return "one family only"
    (name, _, last), *_ = leaders_by_n({g.label: curve_of(g).mean for g in groups})
    return f"{name}'s curve is ahead at every shared budget (n = 1 to {last}; point estimates)"


def leader_confidence(groups: list[Group]) -> list[str]:
    """Who leads each pair's curves at 95%, simultaneously over the budgets both have (``syw curve``'s comparison)."""
    if len(groups) < 2:
        return []
    lines = ["Who leads at 95% (difference of the curves, simultaneous claims, `syw.analysis.inference.compare`):", ""]
    for a, b in itertools.combinations(groups, 2):
        if min(a.scores.size, b.scores.size) < 2:
            lines.append(f"- {a.label} vs {b.label}: fewer than 2 trials, no comparison")
            continue
        lines.append(f"- {sentence(compare(a.scores, b.scores, (a.label, b.label)), (a.scores.size, b.scores.size))}")
    return lines


def leads_by_time(spec: FigureSpec, groups: list[Group]) -> list:
    """:func:`syw.analysis.time_leaders` over the families of a time-axis figure (none with fewer than two timed)."""
    if spec.x != "time":
        return []
    timed = {g.name: (curve_of(g).mean, g.mean_duration) for g in groups if g.mean_duration}
    return time_leaders(timed) if len(timed) > 1 else []


def leads_in(frame: pd.DataFrame) -> list[Lead]:
    """The leads :func:`budget_rows` wrote as ``lead_start``/``lead_end`` rows, in time order."""
    starts, ends = frame[frame.statistic == "lead_start"], frame[frame.statistic == "lead_end"]
    return [Lead(start, end, family) for family, start, end in zip(starts.family, starts.seconds, ends.seconds)]


def leads_text(labels: dict[str, str], leads: list[Lead]) -> str:
    """One sentence: which family leads over which stretch of wall time (``labels``: family -> label)."""
    spans = [f"{labels[x.leader]} from {human_duration(x.start)}" + (f" to {human_duration(x.end)}" if i < len(leads) - 1 else
             f" on (the longest curve ends at {human_duration(x.end)})") for i, x in enumerate(leads)]
    return ("Leader by time, point estimates (each family spending the time alone; a family whose N trials are spent keeps "
            "its value at N): " + "; ".join(spans) + ".")


def reach_table(frame: pd.DataFrame, groups: list[Group]) -> list[str]:
    """The budget to reach each target of :func:`budget_rows`'s ``frame`` (exact and rounded, trials and time)
    with its 95% interval (``syw.analysis.inference.budget_interval``), as Markdown; none without targets."""
    labels = {g.name: g.label for g in groups}
    reach = frame[frame.statistic.str.startswith("budget_to_reach")]
    if reach.empty:
        return []
    out = ["", "Budget to reach a target (first n whose expected max >= target; rounded: both sides at 3 decimals; "
           f"{INTERVAL_RULE}):", "",
           "| family | target | trials | time | trials (rounded) | time (rounded) | 95% interval (trials) |",
           "|---|---|---|---|---|---|---|"]
    for (family, target), part in reach.groupby(["family", "target"], sort=False):
        exact = part[part.statistic == "budget_to_reach"].iloc[0]
        rounded = part[part.statistic == "budget_to_reach_rounded_3dp"].iloc[0]
        fmt = lambda v: "not reached" if v is None or pd.isna(v) else str(int(v))  # noqa: E731
        out.append(f"| {labels[family]} | {target:g} | {fmt(exact.trials)} | {human_duration(exact.seconds)} | "
                   f"{fmt(rounded.trials)} | {human_duration(rounded.seconds)} | "
                   f"{interval_words(next(g.scores for g in groups if g.name == family), target)} |")
    return out


def markdown(spec: FigureSpec, groups: list[Group], frame: pd.DataFrame, source: str, floor: str | None = None) -> str:
    """A figure's section: each family's curve at a few budgets, budgets to reach targets, crossovers, who leads at
    95%; ``floor``: which scores count at the study's floor (every number below is of the floored scores)."""
    labels = {g.name: g.label for g in groups}
    out = [f"## Figure {spec.number}: study `{spec.study}` ({source})", ""]
    if floor:
        out += [f"{floor} Every number below is of the scores so floored.", ""]
    out += ["| family | N | mean duration | E[max] n=1 | n=10 | n=N | best observed |", "|---|---|---|---|---|---|---|"]
    for g in groups:
        em = frame[(frame.family == g.name) & (frame.statistic == "expected_max")].set_index("trials").value
        best = frame[(frame.family == g.name) & (frame.statistic == "best_observed")].value.iloc[0]
        out.append(f"| {labels[g.name]} | {g.scores.size} | {human_duration(g.mean_duration)} | {em.iloc[0]:.4f} | "
                   f"{em.get(min(10, g.scores.size), np.nan):.4f} | {em.iloc[-1]:.4f} | {best:.4f} |")
    out += reach_table(frame, groups)
    cross = frame[frame.statistic.str.startswith("crossover")]
    out += ["", "Crossovers (the first family overtakes the second at this budget and leads until the same pair's next line, if any):", ""]
    if cross.empty:
        out.append(f"- none: {ahead_throughout(groups)}")
    for row in cross.itertuples():
        leader, previous = row.family.split(" over ")
        where = f"n = {int(row.trials)} trials" if row.statistic == "crossover_trials" else f"t = {human_duration(row.seconds)}"
        out.append(f"- {labels[leader]} over {labels[previous]} at {where}")
    out += ["", *leader_confidence(groups)]
    if leads := leads_in(frame):
        out += ["", leads_text(labels, leads)]
    if spec.number in PAPER_CLAIMS:
        out += ["", "The paper says: " + "; ".join(PAPER_CLAIMS[spec.number]) + "."]
    return "\n".join(out) + "\n"


def beside_theirs(spec: FigureSpec, ours: list[Group], theirs: list[Group] | str) -> str:
    """Trials (and time) each family needs to reach its reported number (Eq. 8 curve), ours beside
    the authors' trials; ``theirs`` is why they are absent when it is a string."""
    head = ["Trials to reach the reported number (first n whose expected max >= it), ours beside the authors' trials:", ""]
    if isinstance(theirs, str):
        return "\n".join(head + [f"(the authors' trials: {theirs})"]) + "\n"

    def reach(group: Group | None, target: float) -> str:
        if group is None:
            return "-"
        n = budget_to_reach(curve_of(group).mean, target)
        if n is None:
            return f"not in {group.scores.size}"
        return f"{n}" + (f" ({human_duration(n * group.mean_duration)})" if group.mean_duration else "")

    paper = {g.name: g for g in theirs}
    rows = [f"| {g.label} | {spec.references[g.name]} | {reach(g, spec.references[g.name])} | "
            f"{reach(paper.get(g.name), spec.references[g.name])} |" for g in ours if g.name in spec.references]
    return "\n".join(head + ["| family | reported | ours | the authors' trials |", "|---|---|---|---|"] + rows) + "\n"


def write(sections: list[tuple[FigureSpec, list[Group]]], source: str, folder: Path,
          skipped: dict[int, str] | None = None, theirs: dict[int, list[Group] | str] | None = None,
          floors: dict[int, str] | None = None) -> tuple[Path, Path]:
    """``budgets_<source>.csv`` and ``.md``; ``skipped`` maps a figure number to why it has no table,
    ``theirs`` to the authors' groups (or why they are absent) to set beside ours, ``floors`` to the scores that
    count at the study's floor (``syw.figures.sources.floor_text``)."""
    frames, texts = [], []
    for spec, groups in sections:
        frame = budget_rows(spec, groups, source)
        frames.append(frame)
        texts.append(markdown(spec, groups, frame, source, (floors or {}).get(spec.number)))
        if theirs and spec.number in theirs and spec.references:
            texts.append(beside_theirs(spec, groups, theirs[spec.number]))
        if theirs and spec.number in theirs and leads_in(frame):
            other = theirs[spec.number]
            texts.append("The authors' trials: " + (f"({other})" if isinstance(other, str) else leads_text(
                {g.name: g.label for g in other}, leads_by_time(spec, other)).replace("Leader by time", "leader by time")) + "\n")
    folder.mkdir(parents=True, exist_ok=True)
    csv, md = folder / f"budgets_{source}.csv", folder / f"budgets_{source}.md"
    pd.concat(frames, ignore_index=True).to_csv(csv, index=False, float_format="%.6g")
    header = f"# Budget inference ({source})\n\nRule: {RULE}\n\n"
    missing = "".join(f"\n## Figure {number}: no table\n\n{why}\n" for number, why in sorted((skipped or {}).items()))
    md.write_text(header + "\n".join(texts) + missing)
    return csv, md
