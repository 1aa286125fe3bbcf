"""The three-valued verdicts of ``docs/verdicts.md`` (issue 73): one rule per kind of claim, read off 95% intervals.

A claim is *supported at 95%* when it holds for every value in the interval its rule reads, *contradicted at 95%*
when it fails for every value, and *undecided with N trials* otherwise: more trials could decide it. An interval
that reaches past the largest budget N trials can speak for (:func:`syw.analysis.inference.limit_budget`) is not
located there, so it decides only where its located part does. The kinds, each a function here and a sentence of
:data:`RULES` (``docs/verdicts.md`` prints them):

- :func:`about`: "needs about n trials to reach t" (a budget), and "a seed SD of about s" (Melis et al. 2018);
- :func:`crossover`: "A is better up to about n trials";
- :func:`throughout`: "X is best" over the budgets a claim names (a time window's middle, every budget, one budget);
- :func:`at_least`: "a gap of at least r seed SDs" (Melis et al. 2018, section 7.2).

A claim of several parts (a range of two budgets, several cells or pairs) is joined by :func:`combine`, as a
study's one verdict joins its claims. A study that cannot test a claim (no records, or a reduced scale) says so
instead: :func:`untestable`.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ABOUT = 1.5  # "about n": within a factor 1.5 of n
LEVEL = "95%"
STATES = ("supports", "contradicts", "undecided", "untestable")


@dataclass(frozen=True)
class Verdict:
    """One verdict: ``state`` (:data:`STATES`); what an undecided verdict rests on, ``sizes`` (each family's or
    cell's count of ``unit``, by name) or ``amount`` (words, when parts of different units are joined); ``why`` an
    untestable one cannot test the claim ("data: no records in results/squad")."""

    state: str
    sizes: tuple[tuple[str, int], ...] = ()
    unit: str = "trial"
    per: str = "family"
    why: str = ""
    words: str = ""

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise ValueError(f"a verdict is one of {', '.join(STATES)}, got {self.state!r}")

    @property
    def amount(self) -> str:
        """``50 trials``, ``50 trials per family``, ``20 and 30 trials``; the joined words of several units."""
        return self.words or amount([n for _, n in self.sizes], self.unit, self.per)

    def __str__(self) -> str:
        if self.state == "untestable":
            return f"cannot be tested here ({self.why})"
        if self.state == "undecided":
            return f"undecided with {self.amount}"
        return f"{self.state} at {LEVEL}"


def untestable(why: str) -> Verdict:
    return Verdict("untestable", why=why)


def amount(sizes: Sequence[int], unit: str = "trial", per: str = "family") -> str:
    """What an undecided verdict rests on: ``50 trials``, ``50 trials per family``, ``20 and 30 trials``."""
    sizes = [int(s) for s in sizes]
    plural = lambda k: f"{k} {unit}{'' if k == 1 else 's'}"  # noqa: E731
    if len(sizes) == 1:
        return plural(sizes[0])
    if len(set(sizes)) == 1:
        return f"{plural(sizes[0])} per {per}"
    return ", ".join(map(str, sizes[:-1])) + f" and {plural(sizes[-1])}"


def verdict(state: str, sizes: dict[str, int], unit: str = "trial", per: str = "family") -> Verdict:
    """A rule's ``state`` with what it rests on (``sizes``: name -> count of ``unit``; named only when undecided)."""
    return Verdict(state, tuple(sizes.items()) if state == "undecided" else (), unit, per)


def about(low: float, high: float | None, value: float, factor: float = ABOUT) -> str:
    """"About ``value``": supports when [low, high] lies within [value / factor, value x factor], contradicts
    when it lies wholly outside, undecided otherwise; ``high`` None: not located (reaches past the limit)."""
    top = math.inf if high is None else high
    if low > value * factor or top < value / factor:
        return "contradicts"
    if value / factor <= low and top <= value * factor:
        return "supports"
    return "undecided"


def crossover(leaders: dict[int, str | None], early: str, late: str, n: float) -> str:
    """"``early`` is better up to about n", on the leaders at 95% at n = 1 and at the budgets from n / 2 to 2n (None: no
    leader, or past the limit): supports when ``early`` leads at n = 1 and ``late`` at some budget from n / 2 to 2n;
    contradicts when ``late`` leads at n = 1 or ``early`` at 2n; undecided otherwise."""
    window = [leaders[m] for m in leaders if n / 2 <= m <= 2 * n]
    if leaders.get(1) == late or leaders.get(round(2 * n)) == early:
        return "contradicts"
    if leaders.get(1) == early and late in window:
        return "supports"
    return "undecided"


def throughout(leaders: Iterable[Iterable[str | None]], family: str) -> str:
    """"``family`` is best" at every budget a claim names, on the leaders at 95% of each pair ``family`` against
    another (one sequence per pair, one leader or None per budget): supports when ``family`` leads in every pair at
    every budget, contradicts when another leads it at some budget, undecided otherwise."""
    seen = [who for pair in leaders for who in pair]
    if any(who is not None and who != family for who in seen):
        return "contradicts"
    return "supports" if seen and all(who == family for who in seen) else "undecided"


def at_least(low: float, high: float, value: float) -> str:
    """"A gap of at least ``value``" in size, on the interval [low, high] of the signed gap: supports when every value
    in it is at least ``value`` in size (one sign), contradicts when every value is smaller in size, undecided otherwise."""
    if low >= value or high <= -value:
        return "supports"
    if -value < low and high < value:
        return "contradicts"
    return "undecided"


def combine(parts: Sequence[Verdict]) -> Verdict:
    """The parts of one claim, or a study's claims, joined: cannot be tested when a part cannot (the first reason);
    contradicts when a part contradicts; supports when every part supports; undecided otherwise, resting on what
    the undecided parts rest on (their sizes merged by name when they count one unit, else their words joined)."""
    if not parts:
        raise ValueError("a verdict joins at least one part")
    untested = next((p for p in parts if p.state == "untestable"), None)
    if untested is not None:
        return untested
    if any(p.state == "contradicts" for p in parts):
        return Verdict("contradicts")
    if all(p.state == "supports" for p in parts):
        return Verdict("supports")
    undecided = [p for p in parts if p.state == "undecided"]
    if len({(p.unit, p.per) for p in undecided}) == 1 and not any(p.words for p in undecided):
        merged = dict(kv for p in undecided for kv in p.sizes)
        return Verdict("undecided", tuple(merged.items()), undecided[0].unit, undecided[0].per)
    return Verdict("undecided", words="; ".join(dict.fromkeys(p.amount for p in undecided)))


RULES = {
    "about": (f"**A budget** (\"needs about n trials to reach t\"): the 95% interval of the trials needed to reach t "
              f"(`syw.analysis.inference.budget_interval`: the first n whose Eq. 8 value, unbiased, reaches t). Supports "
              f"at 95% when the interval lies within [n / {ABOUT:g}, {ABOUT:g} n], contradicts at 95% when it lies wholly "
              "outside, undecided otherwise; an interval past the limit (\"not located\") decides only when its located "
              "part lies above the range. A range of budgets (\"from 2 to 20\") joins its two ends."),
    "crossover": ("**A crossover** (\"A is better up to about n trials\"): the leaders at 95% at n = 1 and at every budget "
                  "from n / 2 to 2n, simultaneous claims over those budgets (`syw.analysis.inference.compare` with "
                  "`ns` those budgets; none past the limit). Supports at 95% when A leads at n = 1 and B at some budget "
                  "from n / 2 to 2n, contradicts at 95% when B leads at n = 1 or A at 2n, undecided otherwise."),
    "time": ("**A time window** (\"X is best between t1 and t2\"): at the window's geometric middle t, each family "
             "spending t alone (n = floor(t / its mean duration) trials, at most its N, as the paper's Fig. 2), X's "
             "expected best of its n against each other family's of its n, a pointwise 95% jackknife-t interval "
             "(`syw.analysis.intervals.compare_at`); a family with no trial finished by t is behind. Supports at 95% "
             "when X leads every other family, contradicts at 95% when another leads X, undecided otherwise."),
}
MELIS_RULES = {
    "lead": ("(1) The leaders at 95% of the LSTM against each other cell of its parameter budget, simultaneous claims "
             "over n = 1 to the smaller N (`syw.analysis.inference.compare`, lower is better): supports at 95% when the "
             "LSTM leads at every n in every pair, contradicts at 95% when another cell leads it at some n, undecided "
             "otherwise (no leader is named past the limit, so N trials per cell cannot support it: they contradict it "
             "or leave it undecided)."),
    "tuner": ("(2) The GP tuner against random search at the largest budget random search's N trials can speak for, L "
              "(its limit; at most the shortest GP run): the runs' best-so-far after L trials (their mean, a t interval "
              "over the runs) against random search's expected best of L (jackknife-t, `syw.analysis.intervals."
              "compare_at`): supports at 95% when the GP tuner is ahead, contradicts at 95% when random search is, "
              "undecided otherwise. The trials it saves (where each run's best-so-far reaches random search's expected "
              "best at N) are point estimates beside it."),
    "sd": (f"(3) Each cell's seed SD (its best assignment's reruns) with its chi-square 95% interval "
           f"(`syw.analysis.intervals.sd_interval`, normal reruns): about s when within [s / {ABOUT:g}, {ABOUT:g} s] by "
           "the budget rule above; the cells joined."),
    "gap": ("(4) Each pair's gap of rerun means in units of their pooled seed SD, with its 95% interval (noncentral t, "
            "`syw.analysis.intervals.gap_interval`): supports at 95% when every value in it is at least r in size, "
            "contradicts at 95% when every value is smaller, undecided otherwise; the pairs joined."),
}
JOIN = ("A claim of several parts, and a study's one verdict over its claims: cannot be tested here when a part "
        "cannot (and why), contradicts at 95% when a part contradicts, supports at 95% when every part supports, "
        "undecided otherwise (each part is read at 95% on its own: a study with more parts has more chances to "
        "contradict).")
