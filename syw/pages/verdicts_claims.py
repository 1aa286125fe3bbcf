"""The quantitative claims of the paper's sections 4.1-4.4 (Dodge et al. 2019), each read off a set of trial records
three ways: its point estimate (the Eq. 8 curve, labelled as such), the 95% interval its rule reads, and the
verdict by that rule (:mod:`syw.pages.verdict_rules`, issue 73). The same reading serves the authors' published
trials and each of our studies (:mod:`syw.pages.verdicts`)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from syw.analysis import budget_to_reach, crossovers
from syw.analysis.curves import curve_of
from syw.analysis.group import Group
from syw.analysis.inference import budget_interval, compare, limit_budget, trials_needed
from syw.analysis.intervals import compare_at
from syw.analysis.power import plan
from syw.core.units import human_duration, spans
from syw.figures.budgets import PAPER_CLAIMS, leads_by_time
from syw.figures.plot import interval_words
from syw.figures.specs import FIGURES
from syw.pages import verdict_rules as rules
from syw.pages.verdict_rules import Verdict

HOUR, DAY = 3600.0, 86400.0
ABOUT = rules.ABOUT  # a budget claim's factor


@dataclass(frozen=True)
class Claim:
    figure: int
    text: str  # the claim as budgets.PAPER_CLAIMS states it
    kind: str  # "reach", "crossover", "lead" or "range"
    family: str = ""
    other: str = ""  # crossover: the family that overtakes; range: the family at its upper end
    target: float = float("nan")
    paper: float = float("nan")  # the paper's number: trials, or the window's end in seconds
    since: float | None = None  # lead: the window's start in seconds (None: the first trial)
    first: float = float("nan")  # range: the budget at its lower end


CLAIMS = [
    Claim(1, PAPER_CLAIMS[1][0], "reach", "cnn", target=0.395, paper=16),
    Claim(1, PAPER_CLAIMS[1][1], "crossover", "lr", "cnn", paper=10),
    Claim(2, PAPER_CLAIMS[2][0], "lead", "glove", paper=2 * HOUR),
    Claim(2, PAPER_CLAIMS[2][1], "lead", "elmo_frozen", paper=DAY, since=6 * HOUR),
    Claim(2, PAPER_CLAIMS[2][2], "lead", "elmo_finetuned", paper=float("inf"), since=DAY),
    Claim(3, PAPER_CLAIMS[3][0], "range", "ngram", "dgem", paper=20, first=2),
    Claim(4, PAPER_CLAIMS[4][0], "reach", "bidaf", target=0.677, paper=55),
]


@dataclass(frozen=True)
class Reading:
    """What one set of records says about a claim: the point estimate in words, the 95% interval(s) the rule
    reads, and the verdict; ``evidence``, a reduced study's own reading, which cannot test the paper's scale."""

    point: str
    interval: str
    verdict: Verdict
    evidence: Verdict | None = None
    settle: str = "-"  # what would decide an undecided verdict: trials per family (``settle_*``)


def sizes(groups: list[Group]) -> dict[str, int]:
    """Each family's N, by name: what an undecided verdict rests on."""
    return {g.name: g.scores.size for g in groups}


def _budget(g: Group, target: float, paper: float) -> tuple[str, str, str]:
    """A family's budget to reach ``target``: the point estimate, its 95% interval and the state by :func:`rules.about`."""
    curve = curve_of(g).mean
    exact, rounded = budget_to_reach(curve, target), budget_to_reach(curve, target, decimals=3)
    if exact is None and rounded is None:
        point = f"{g.label}: not reached in N = {g.scores.size} trials (best {g.scores.max():.3f})"
    else:
        shown = exact if exact is not None else rounded
        cost = f", {human_duration(shown * g.mean_duration)}" if g.mean_duration else ""
        point = f"{g.label}: n = {exact if exact is not None else 'none'} ({rounded} at 3 decimals{cost}; N = {g.scores.size})"
    found = budget_interval(g.scores, target)
    return point, f"{g.label} to {target:g}: {interval_words(g.scores, target)}", rules.about(found.low, found.high, paper)


def _locate(budget: float) -> str:
    """What an undecided budget claim needs: its interval is located only up to the limit, so deciding whether the
    budget lies within a factor 1.5 of ``budget`` needs the limit past 1.5 x budget (``trials_needed``)."""
    return (f"at least {trials_needed(math.ceil(ABOUT * budget)):,} trials per family to locate n = "
            f"{math.ceil(ABOUT * budget)} at all (the limit); more for a likely decision")


def reach(claim: Claim, groups: dict[str, Group]) -> Reading:
    g = groups[claim.family]
    point, interval, state = _budget(g, claim.target, claim.paper)
    return Reading(point, interval, rules.verdict(state, sizes([g])), settle=_locate(claim.paper) if state == "undecided" else "-")


def budget_range(claim: Claim, groups: dict[str, Group]) -> Reading:
    """"From ``first`` (family) to ``paper`` (other)": both ends' budgets to their reported numbers, joined."""
    spec = FIGURES[claim.figure]
    needs = {f: budget_to_reach(curve_of(groups[f]).mean, ref, decimals=3) for f, ref in spec.references.items() if f in groups}
    point = ", ".join(f"{groups[f].label} {n if n is not None else 'not reached'}" for f, n in needs.items()) + " (3 decimals)"
    ends = [_budget(groups[f], spec.references[f], budget) for f, budget in ((claim.family, claim.first), (claim.other, claim.paper))]
    parts = [rules.verdict(state, sizes([groups[f]])) for (_, _, state), f in zip(ends, (claim.family, claim.other))]
    joined = rules.combine(parts)
    return Reading(point, "; ".join(interval for _, interval, _ in ends), joined,
                   settle=_locate(claim.paper) if joined.state == "undecided" else "-")


def _who(diff, k: int, names: dict[str, str]) -> str:
    if diff.ns[k] > (diff.limit or math.inf):
        return f"past the limit n = {diff.limit}"
    leader = diff.leader()[k]
    return names[leader] if leader is not None else "none"


def crossover(claim: Claim, groups: dict[str, Group]) -> Reading:
    a, b = groups[claim.family], groups[claim.other]
    ca, cb = curve_of(a).mean, curve_of(b).mean
    found = [c for c in crossovers(ca, cb, (a.name, b.name)) if c.leader == b.name]
    first = found[0].at if found and ca[0] > cb[0] else None
    if first is None:
        leader = a.label if ca[0] > cb[0] else b.label
        point = f"no crossover: {leader} leads at n = 1 and {'is never overtaken' if not found else 'the order differs'}"
    else:
        point = f"{b.label} overtakes {a.label} at n = {first}"
    n, size = claim.paper, min(a.scores.size, b.scores.size)
    budgets = [1] + [m for m in range(max(2, math.ceil(n / 2)), int(2 * n) + 1) if m <= size]
    diff = compare(a.scores, b.scores, (a.name, b.name), ns=budgets)
    leaders = dict(zip(budgets, diff.leader()))
    names = {a.name: a.label, b.name: b.label}
    by_who: dict[str, list[int]] = {}
    for k, m in enumerate(budgets):
        by_who.setdefault(_who(diff, k, names), []).append(m)
    interval = (f"{a.label} minus {b.label} at n = 1: [{diff.low[0]:+.4f}, {diff.high[0]:+.4f}]; leader at 95% (simultaneous "
                f"over n = {spans(budgets)}): " + "; ".join(f"{who} at n = {spans(ns)}" for who, ns in by_who.items()))
    state = rules.crossover(leaders, a.name, b.name, n)
    return Reading(f"{point} (Eq. 8)", interval, rules.verdict(state, sizes([a, b])),
                   settle=_settle_crossover(a, b, leaders, n) if state == "undecided" else "-")


def _settle_crossover(a: Group, b: Group, leaders: dict[int, str | None], n: float) -> str:
    """What an undecided crossover needs, by ``syw plan`` from these trials (80% power): at n = 1, and at the budgets
    of the window n / 2 to 2n the trials speak for (the fewest over them); past those, at least the trials that let
    the window's first budget be tested at all."""
    out = []
    names = {a.name: a.label, b.name: b.label}
    if leaders.get(1) is None:
        (row,) = plan(a.scores, b.scores, [1], names=(a.name, b.name))
        out.append(f"n = 1: about {row.trials_per_group:,} trials per family (syw plan, 80% power)"
                   if row.trials_per_group is not None else "n = 1: no size up to 5,000 per family planned (syw plan)")
    first, last = max(2, math.ceil(n / 2)), int(2 * n)
    spoken = [m for m in range(first, last + 1) if m <= limit_budget(min(a.scores.size, b.scores.size))]
    sized = [r for r in plan(a.scores, b.scores, spoken, names=(a.name, b.name)) if r.trials_per_group] if spoken else []
    if sized:
        best = min(sized, key=lambda r: r.trials_per_group)
        out.append(f"n = {first}-{last}: about {best.trials_per_group:,} trials per family for {names[best.leader]} "
                   f"to lead at n = {best.n} (syw plan, 80% power)")
    else:
        out.append(f"n = {first}-{last}: no size planned from these trials (they speak for n up to "
                   f"{limit_budget(min(a.scores.size, b.scores.size))}); at least {trials_needed(first):,} trials per "
                   f"family to test n = {first} at all")
    return "; ".join(out)


def _spent(g: Group, seconds: float) -> int:
    """Trials a family has finished by ``seconds`` spent alone (at most its N; the paper's Fig. 2 convention)."""
    return min(int(math.floor(seconds / g.mean_duration + 1e-9)), g.scores.size)


def lead(claim: Claim, groups: dict[str, Group]) -> Reading:
    spec = FIGURES[claim.figure]
    leads = leads_by_time(spec, list(groups.values()))
    if not leads or any(not g.mean_duration for g in groups.values()):
        return Reading("no time axis (durations missing)", "-", rules.untestable("data: no training durations"))
    start = claim.since if claim.since is not None else leads[0].start
    end = claim.paper if np.isfinite(claim.paper) else leads[-1].end
    middle = float(np.sqrt(start * end))
    at = next((x.leader for x in leads if x.start <= middle <= x.end), None)
    x = groups[claim.family]
    shown = [f"{human_duration(s.start)} to {human_duration(s.end)}" for s in leads if s.leader == claim.family]
    point = (f"{x.label} leads " + ("; ".join(shown) if shown else "never") + f" (at {human_duration(middle)}: "
             f"{groups[at].label if at else 'none'}; Eq. 8, a family past its N trials kept at its value at N)")
    n_x, leaders, parts = _spent(x, middle), [], []
    for y in (g for g in groups.values() if g.name != claim.family):
        n_y = _spent(y, middle)
        if n_x == 0 or n_y == 0:  # a family with no finished trial is behind
            leaders.append(y.name if n_x == 0 else x.name)
            parts.append(f"{y.label} (n = {n_y}): {x.label if n_x == 0 else 'it'} has no finished trial")
            continue
        found = compare_at(x.scores, n_x, y.scores, n_y)
        leaders.append(x.name if found.low > 0 else y.name if found.high < 0 else None)
        parts.append(f"{y.label} (n = {n_y}): " + (f"[{found.low:+.4f}, {found.high:+.4f}]" if found.located else
                                                   f"not located (past the limit n = {limit_budget(min(x.scores.size, y.scores.size))})"))
    interval = f"at {human_duration(middle)}, {x.label} (n = {n_x}) minus " + "; minus ".join(parts)
    state = rules.throughout([[who] for who in leaders], x.name)
    most = max([n_x] + [_spent(y, middle) for y in groups.values()])
    settle = (f"at least {trials_needed(most):,} trials per family to compare the best of {most} at all"
              if state == "undecided" else "-")
    return Reading(point, interval, rules.verdict(state, sizes(list(groups.values()))), settle=settle)


def read(claim: Claim, groups: dict[str, Group]) -> Reading:
    """What ``groups`` say about ``claim`` by its kind's rule (:data:`syw.pages.verdict_rules.RULES`)."""
    return {"reach": reach, "crossover": crossover, "lead": lead, "range": budget_range}[claim.kind](claim, groups)


HEADER = ("| the paper says | records | point estimate (not a verdict) | 95% interval | verdict | what would decide it |\n"
          "|---|---|---|---|---|---|")


def row(claim: str, records: str, reading: Reading) -> str:
    """One row of ``docs/verdicts.md``'s tables (:data:`HEADER`): a claim (empty on its later rows), whose records,
    and their reading; a reduced study's own reading follows its verdict, as evidence."""
    said = str(reading.verdict) + (f"; as evidence: {reading.evidence}" if reading.evidence is not None else "")
    return f"| {claim} | {records} | {reading.point} | {reading.interval} | {said} | {reading.settle} |"
