"""Is A better than B at my budget? The difference of two tuning curves with a simultaneous band.

For two groups of independent trials, each group's simultaneous band (``syw.analysis.bands``, opda's
CDF bands) is taken at level sqrt(c): both hold at once with probability at least c (the samples are
independent). Where both hold, for every n,

    low_A(n) - high_B(n)  <=  curve_A(n) - curve_B(n)  <=  high_A(n) - low_B(n),

so this band for the difference holds for every n at once with probability at least c, with no
assumption on the score distributions but their bounds (exact coverage of each CDF band needs
continuous scores with ``ks``; ``dkw`` holds regardless). ``tests/analysis/test_compare_curves.py`` checks
the coverage by simulation. From the band follow:

- the budgets where A leads at level c: the band lies above zero (better = higher; below zero when
  lower is better), and likewise for B; elsewhere the comparison is undecided with these trials;
- an interval for the first crossover, the first budget n* at which the group behind at n = 1 is
  ahead: wherever the band holds, n* is at least the first n whose band allows that group ahead and
  at most the first n whose band puts it ahead.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from syw.analysis.bands import confidence_bands
from syw.analysis.expected_max import check_scores
from syw.analysis.statistic import MEAN, Statistic


@dataclass(frozen=True)
class Difference:
    """curve(A) - curve(B) at n = 1..len, oriented so that a positive value means A is better."""

    names: tuple[str, str]
    ns: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    confidence: float
    statistic: Statistic = MEAN
    method: str = "bands"  # "bands": the crossed CDF bands of this module; "jackknife": syw.analysis.inference
    claim: str = "simultaneous"  # every leader holds at once ("simultaneous") or each at its own pre-stated n
    limit: int | None = None  # the largest n at which the N trials allow an assumption-free claim (None: not stated)
    p: np.ndarray | None = None  # two-sided p-values (adjusted for simultaneous claims), where the method has them
    sizes: tuple[int, int] | None = None  # each group's number of trials N (None: not stated)

    @property
    def what(self) -> str:
        """What the interval is, for headings and legends: "95% simultaneous band", "95% pointwise intervals"."""
        level = f"{self.confidence:.0%}"
        if self.method == "bands":
            return f"{level} simultaneous band"
        # step-down intervals show the sign each claim makes, not a simultaneous bound on the size
        return f"{level} intervals of simultaneous claims" if self.claim == "simultaneous" else f"{level} pointwise intervals"

    def leader(self) -> list[str | None]:
        """At each n: the group that leads at the band's level, or None where it is undecided with these trials."""
        return [self.names[0] if lo > 0 else self.names[1] if hi < 0 else None for lo, hi in zip(self.low, self.high)]


@dataclass(frozen=True)
class Crossing:
    """``leader`` overtakes ``previous`` (the point estimates') first at ``at``; at the band's level the
    first n at which ``leader`` is ahead lies in [``low``, ``high``] (``high`` None: past the last n)."""

    leader: str
    previous: str
    at: int
    low: int
    high: int | None


def difference(scores_a, scores_b, names: tuple[str, str] = ("A", "B"), *, confidence: float = 0.95,
               bounds: tuple[float, float] = (0.0, 1.0), statistic: Statistic = MEAN, maximize: bool = True,
               method: str = "ks", n_max: int | None = None) -> Difference:
    """The band for curve(A) - curve(B) at n = 1..``n_max`` (default: the smaller N; see the module doc)."""
    a, b = check_scores(scores_a), check_scores(scores_b)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    ns = np.arange(1, (n_max or min(a.size, b.size)) + 1)
    each = math.sqrt(confidence)  # independent groups: both bands hold with probability each^2
    low_a, point_a, high_a = confidence_bands(a, ns, confidence=each, bounds=bounds, maximize=maximize,
                                              method=method, statistic=statistic)
    low_b, point_b, high_b = confidence_bands(b, ns, confidence=each, bounds=bounds, maximize=maximize,
                                              method=method, statistic=statistic)
    with np.errstate(invalid="ignore"):  # inf - inf where neither band is bounded: no bound, below
        if maximize:
            estimate, low, high = point_a - point_b, low_a - high_b, high_a - low_b
        else:
            estimate, low, high = point_b - point_a, low_b - high_a, high_b - low_a
    return Difference(names, ns, estimate, np.where(np.isnan(low), -np.inf, low), np.where(np.isnan(high), np.inf, high),
                      confidence, statistic, sizes=(a.size, b.size))


def runs(ns: list[int], labels: list) -> list[tuple]:
    """(label, first n, last n) for each run of consecutive budgets ``ns`` with the same label."""
    out: list[tuple] = []
    for n, label in zip(ns, labels):
        if out and out[-1][0] == label:
            out[-1] = (label, out[-1][1], n)
        else:
            out.append((label, n, n))
    return out


def leaders_by_n(curves: dict[str, Sequence[float]], *, maximize: bool = True) -> list[tuple[str, int, int]]:
    """(name, first n, last n) for each stretch of n = 1 to the shortest curve's end over which that curve is the
    best of ``curves`` (expected best of n trials, Eq. 8, one per family); a tie goes to the first named."""
    n = min(len(c) for c in curves.values())
    stack = np.vstack([np.asarray(c, dtype=float)[:n] for c in curves.values()])
    best, names = (np.argmax if maximize else np.argmin)(stack, axis=0), list(curves)
    return runs(list(range(1, n + 1)), [names[k] for k in best])


def stretches(diff: Difference) -> list[tuple[str | None, int, int]]:
    """(leader or None, first n, last n) for each run of budgets with the same verdict."""
    return runs(diff.ns.tolist(), diff.leader())


def first_crossing(diff: Difference) -> Crossing | None:
    """The point estimates' first leader change and the band's interval for it (module doc); None
    when one group's point estimate is ahead (or tied) at every n."""
    signs = np.sign(diff.estimate)
    start = next((s for s in signs if s != 0), 0)
    change = next((i for i, s in enumerate(signs) if s == -start != 0), None)
    if change is None:
        return None
    ahead = diff.high > 0 if start < 0 else diff.low < 0  # the group behind at first may be ahead here
    sure = diff.low > 0 if start < 0 else diff.high < 0  # it is ahead here at the band's level
    leader, previous = (diff.names[0], diff.names[1]) if start < 0 else (diff.names[1], diff.names[0])
    first_possible = int(diff.ns[np.argmax(ahead)])  # ahead holds at the point estimate's change at least
    first_sure = int(diff.ns[np.argmax(sure)]) if sure.any() else None
    return Crossing(leader, previous, int(diff.ns[change]), first_possible, first_sure)


# Every sentence :func:`sentence` says, by name (tests/analysis/test_report_sentences.py renders each once).
PHRASES = {
    "tied": "undecided with {trials} for {span}",
    "leads": "{who} leads {other} for {span} at {level}",
    "opening": "{statistic} curves, {a} vs {b} ({budgets}{shown}): {parts}",
    "crossing": ". {leader} first overtakes {previous} at n = {at} ({estimates}); at {level} that first crossover {where}",
    "located": "lies in [{low}, {high}]",
    "past_limit": ("lies somewhere from n = {low} to beyond n = {limit}, the largest budget these trials can decide: "
                   "it cannot be located with {trials}"),
    "past_last": ("lies somewhere from n = {low} to beyond n = {last}, the last budget compared: it cannot be located "
                  "with {trials}"),
    "limit": (". Beyond n = {limit} these trials allow no claim without assumptions (the limit of docs/syw.md), so "
              "no leader is named there"),
}


def say(key: str, /, **fields) -> str:
    """The phrase ``key`` of :data:`PHRASES` with its fields filled."""
    return PHRASES[key].format(**fields)


def _span(first: int, last: int) -> str:
    return f"n = {first}" if first == last else f"n in [{first}, {last}]"


def _trials(sizes: tuple[int, int] | None) -> str:
    if sizes is None:
        return "these trials"
    return f"{sizes[0]} trials per group" if sizes[0] == sizes[1] else f"{min(sizes)} trials in the smaller group"


def undecided_with(sizes: tuple[int, int] | None) -> str:
    """"20 and 20 trials" (each group's N, in the comparison's order), or "these trials" when not stated."""
    return "these trials" if sizes is None else f"{sizes[0]} and {sizes[1]} trials"


def sentence(diff: Difference, sizes: tuple[int, int] | None = None) -> str:
    """The comparison in one sentence, e.g. "CNN leads LR for n in [18, 50] at 95%; undecided with 50 and 50
    trials for n in [1, 17]", with the first crossover's interval when the point estimates cross, and the
    limit of assumption-free claims when the method states one; ``sizes``: each group's N (default the
    comparison's own), which the sentence names where it is undecided or cannot locate a crossover."""
    a, b = diff.names
    sizes = sizes if sizes is not None else diff.sizes
    level = f"{diff.confidence:.0%}"
    parts = []
    spans = stretches(diff) if diff.claim == "simultaneous" else [(w, n, n) for w, n in zip(diff.leader(), diff.ns.tolist())]
    for who, first, last in spans:
        if who is None:
            parts.append(say("tied", trials=undecided_with(sizes), span=_span(first, last)))
        else:
            parts.append(say("leads", who=who, other=b if who == a else a, span=_span(first, last), level=level))
    budgets = f"n = 1 to {diff.ns[-1]}" if diff.claim == "simultaneous" else f"n = {', '.join(map(str, diff.ns))}"
    shown = "" if diff.method == "bands" else f", {diff.claim} claims"
    text = say("opening", statistic=diff.statistic.name.capitalize(), a=a, b=b, budgets=budgets, shown=shown,
               parts="; ".join(parts))
    crossing = first_crossing(diff) if diff.claim == "simultaneous" else None
    if crossing is not None:
        if crossing.high is not None:
            where = say("located", low=crossing.low, high=crossing.high)
        elif diff.limit is not None and diff.limit < diff.ns[-1]:
            where = say("past_limit", low=crossing.low, limit=diff.limit, trials=_trials(sizes))
        else:
            where = say("past_last", low=crossing.low, last=diff.ns[-1], trials=_trials(sizes))
        text += say("crossing", leader=crossing.leader, previous=crossing.previous, at=crossing.at, level=level,
                    estimates="point estimates" if diff.method == "bands" else "unbiased estimates", where=where)
    if diff.limit is not None and diff.limit < int(diff.ns[-1]):
        text += say("limit", limit=diff.limit)
    return text + "."


def difference_table(diffs: list[Difference]) -> pd.DataFrame:
    """One row per pair and n: the estimate (positive: A better), its interval, who leads there at the stated
    confidence ('' when none), the kind of claim, the method, the limit budget and the p-value where there is one."""
    return pd.concat([pd.DataFrame({"a": d.names[0], "b": d.names[1], "statistic": d.statistic.name, "n": d.ns,
                                    "a_better_by": d.estimate, "low": d.low, "high": d.high,
                                    "confidence": d.confidence, "leader": [w or "" for w in d.leader()],
                                    "claim": d.claim, "method": d.method,
                                    "limit": d.limit if d.limit is not None else np.nan,
                                    "p": d.p if d.p is not None else np.nan}) for d in diffs], ignore_index=True)
