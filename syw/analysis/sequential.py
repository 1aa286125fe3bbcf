"""Compare two tuning curves as the trials come in, and stop once decided (issue 74).

At pre-stated looks (N_1 < ... < N_K trials per group, in the order the trials ran) each pre-stated budget
n is tested two-sided by :func:`syw.analysis.inference.jackknife_t`: T = (V_n^A - V_n^B) / se, V_n the
unbiased expected best of n (Eq. 8 of Dodge et al. 2019 without its bias), with the jackknife's standard
error and Welch-Satterthwaite degrees of freedom. Testing at 95% after every batch names a leader for two
samples of one pool far more often than 5% (optional stopping: 14% with 5 looks under the normal law). So
the boundary of each look comes from a Lan-DeMets alpha-spending function (:mod:`syw.analysis.spending`)
at information fraction t_k = N_k / N_K: the V_n of nested samples are asymptotically those of a mean (the
U-statistic's linear part), so corr(T_j, T_k) = sqrt(t_j / t_k). A Z boundary c_k is applied to T at
the same nominal tail, t_isf(P(Z > c_k), df), as :func:`~syw.analysis.inference.compare` does.

- **Budgets**: the family-wise error over the K budgets is held at alpha by Bonferroni (``adjust=
  "bonferroni"``, the default): each budget spends alpha / K, so a wrong leader at any budget, at any look,
  has probability at most alpha whatever the correlation between budgets. ``adjust="none"`` spends alpha
  per budget: valid for each claim alone, and for the intersection-union claim "A leads at every stated
  budget", not for "some budget names a wrong leader".
- **Limit**: a budget is tested only from the first look whose N_k reaches it (``limit_budget``); its
  spending function is read at its own looks, so the error it would have spent before is spent there. A
  budget the last look cannot reach is refused when the design is made.
- **Decisions**: a budget is decided at the first look where |T| crosses its boundary, for the group ahead,
  and stays decided; the rule stops at the first look where every budget is decided, or at the last.
- **Intervals**: repeated confidence intervals (Jennison and Turnbull 1989), estimate +- boundary x se at
  every look: all of them hold at once with probability 1 - alpha, so the interval printed with a
  sequential verdict is valid however the looks went.

``boundary="naive"`` tests every look at the fixed-sample level: for comparison only. Measured error,
power and trials used: ``benchmarks/sequential.py`` (docs/syw.md).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from syw.analysis.expected_max import check_budgets, check_scores
from syw.analysis.inference import jackknife_t, limit_budget, trials_needed
from syw.analysis.spending import SPENDING, boundaries
from syw.analysis.student_t import normal_isf, normal_sf, t_isf

BOUNDARIES = SPENDING + ("naive",)
ADJUST = ("bonferroni", "none")


@dataclass(frozen=True)
class Design:
    """Looks (trials per group at each, increasing; the last is the most the rule runs), budgets ``at``, the
    two-sided confidence, the boundary (a spending function of :mod:`syw.analysis.spending`, or "naive") and
    the adjustment over budgets ("bonferroni" or "none")."""

    looks: tuple[int, ...]
    at: tuple[int, ...]
    confidence: float = 0.95
    boundary: str = "obrien-fleming"
    adjust: str = "bonferroni"

    def __post_init__(self) -> None:
        looks = tuple(self.looks)
        if not looks or any(not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 2 for k in looks):
            raise ValueError(f"looks must be whole numbers of trials per group, each at least 2, got {list(looks)}")
        looks = tuple(int(k) for k in looks)
        if any(b <= a for a, b in zip(looks, looks[1:])):
            raise ValueError(f"looks must increase, got {list(looks)}")
        at = tuple(int(n) for n in check_budgets(self.at))
        if len(set(at)) != len(at):
            raise ValueError(f"budgets must not repeat, got {list(at)}")
        if not 0.0 < float(self.confidence) < 1.0:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")
        if self.boundary not in BOUNDARIES:
            raise ValueError(f"boundary must be one of {', '.join(BOUNDARIES)}, got {self.boundary!r}")
        if self.adjust not in ADJUST:
            raise ValueError(f"adjust must be one of {', '.join(ADJUST)}, got {self.adjust!r}")
        reach = limit_budget(looks[-1], self.confidence)
        for n in at:
            if n > reach:
                raise ValueError(f"budget n = {n} cannot be decided by the last look ({looks[-1]} trials per group reach "
                                 f"n = {reach}): a claim at n = {n} needs {trials_needed(n, self.confidence)} trials per group")
        object.__setattr__(self, "looks", looks)
        object.__setattr__(self, "at", at)
        object.__setattr__(self, "confidence", float(self.confidence))

    @property
    def alpha(self) -> float:
        """The error spent on each budget: (1 - confidence) / K with Bonferroni over K budgets."""
        return (1.0 - self.confidence) / (len(self.at) if self.adjust == "bonferroni" else 1)

    def active(self) -> np.ndarray:
        """(looks x budgets): whether the look's trials reach the budget (``limit_budget``)."""
        return np.array([[n <= limit_budget(k, self.confidence) for n in self.at] for k in self.looks])

    def z_boundaries(self) -> np.ndarray:
        """(looks x budgets): the two-sided Z boundary of each budget at each look (inf before it is reached)."""
        out = np.full((len(self.looks), len(self.at)), np.inf)
        active = self.active()
        for j in range(len(self.at)):
            rows = np.flatnonzero(active[:, j])
            if self.boundary == "naive":
                out[rows, j] = float(normal_isf(self.alpha / 2.0))
            else:
                out[rows, j] = boundaries(np.array(self.looks)[rows] / self.looks[-1], self.alpha, self.boundary)
        return out


@dataclass(frozen=True)
class LookStatistics:
    """The estimates V_n^A - V_n^B, standard errors and degrees of freedom (looks x budgets; NaN where a look
    cannot test a budget) at the first ``len(estimate)`` looks of ``design``: shared by designs that differ
    only in their boundary or adjustment."""

    looks: tuple[int, ...]
    at: tuple[int, ...]
    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray


@dataclass(frozen=True)
class Row:
    """One budget at one look. ``statistic`` T and ``boundary`` (on T's scale) are NaN and inf where the look
    cannot test the budget; [low, high] is the repeated confidence interval; ``leader`` the group named by this
    look (None: not decided), ``decided_at`` the look that named it; ``stopped`` marks the look the rule stops at."""

    look: int
    trials_per_group: int
    n: int
    estimate: float
    statistic: float
    df: float
    boundary: float
    low: float
    high: float
    leader: str | None
    decided_at: int | None
    stopped: bool


@dataclass(frozen=True)
class SequentialResult:
    """Rows for each look evaluated (up to the one the rule stopped at) and budget, in that order."""

    design: Design
    names: tuple[str, str]
    rows: tuple[Row, ...]

    @property
    def stopped_at(self) -> int | None:
        """The look (1-based) the rule stopped at, None while it goes on."""
        return next((r.look for r in self.rows if r.stopped), None)

    @property
    def trials_used(self) -> int:
        """Trials per group at the last look evaluated."""
        return self.rows[-1].trials_per_group

    def decisions(self) -> dict[int, Row]:
        """Each budget's row at the last look evaluated: its leader (None: undecided) and when it was named."""
        return {r.n: r for r in self.rows[-len(self.design.at):]}


def _scores(scores, what: str) -> np.ndarray:
    try:
        return check_scores(scores)
    except ValueError as err:
        raise ValueError(f"{what}: {err}") from None


def looks_reached(design: Design, size_a: int, size_b: int) -> int:
    """How many of the design's looks ``size_a`` and ``size_b`` trials per group reach."""
    return int(np.searchsorted(design.looks, min(size_a, size_b), side="right"))


def look_statistics(scores_a, scores_b, design: Design, looks: int | None = None, maximize: bool = True) -> LookStatistics:
    """T's pieces at the first ``looks`` looks (default: all; both groups must reach the last of them), the
    first N_k trials of each group at look k."""
    a, b = _scores(scores_a, "group A"), _scores(scores_b, "group B")
    count = len(design.looks) if looks is None else int(looks)
    if not 1 <= count <= len(design.looks):
        raise ValueError(f"looks must be 1 to {len(design.looks)}, got {looks}")
    need = design.looks[count - 1]
    if min(a.size, b.size) < need:
        raise ValueError(f"look {count} needs {need} trials per group, got {a.size} and {b.size}: "
                         f"evaluate the looks reached ({looks_reached(design, a.size, b.size)}) with sequential_so_far")
    est, se, df = (np.full((count, len(design.at)), np.nan) for _ in range(3))
    budgets = np.array(design.at)
    for k in range(count):
        size = design.looks[k]
        cols = budgets <= size  # estimated wherever defined; se and df only where the look reaches the budget
        if cols.any():
            est[k, cols], se[k, cols], df[k, cols] = jackknife_t(a[:size], b[:size], budgets[cols], design.confidence, maximize)
    return LookStatistics(design.looks[:count], design.at, est, se, df)


def decide(stats: LookStatistics, design: Design, names: tuple[str, str] = ("A", "B")) -> SequentialResult:
    """The rule applied to statistics from :func:`look_statistics` (same looks and budgets as ``design``)."""
    if stats.at != design.at or stats.looks != design.looks[:len(stats.looks)]:
        raise ValueError("the statistics were computed for other looks or budgets than the design's")
    if len(names) != 2 or str(names[0]) == str(names[1]):
        raise ValueError(f"names must be two different labels, got {names!r}")
    z = design.z_boundaries()
    live = np.isfinite(stats.df) & np.isfinite(z[:len(stats.looks)])
    crit = np.full(live.shape, np.inf)
    crit[live] = t_isf(normal_sf(z[:len(stats.looks)][live]), stats.df[live])  # Z's nominal tail on T's scale
    t, half = np.full(live.shape, np.nan), np.full(live.shape, np.inf)
    t[live] = stats.estimate[live] / stats.se[live]
    half[live] = crit[live] * stats.se[live]
    leader: list[str | None] = [None] * len(design.at)
    when: list[int | None] = [None] * len(design.at)
    rows: list[Row] = []
    for k, size in enumerate(stats.looks):
        for j in range(len(design.at)):
            if leader[j] is None and live[k, j] and abs(t[k, j]) > crit[k, j]:
                leader[j], when[j] = str(names[0] if t[k, j] > 0 else names[1]), k + 1
        stop = all(w is not None for w in leader) or size == design.looks[-1]
        rows += [Row(k + 1, size, n, float(stats.estimate[k, j]), float(t[k, j]), float(stats.df[k, j]), float(crit[k, j]),
                     float(stats.estimate[k, j] - half[k, j]), float(stats.estimate[k, j] + half[k, j]), leader[j], when[j], stop)
                 for j, n in enumerate(design.at)]
        if stop:
            break
    return SequentialResult(design, (str(names[0]), str(names[1])), tuple(rows))


def sequential(scores_a, scores_b, design: Design, names: tuple[str, str] = ("A", "B"),
               maximize: bool = True) -> SequentialResult:
    """The group-sequential comparison of A and B (trials in the order they ran) under ``design``, evaluated at
    every look up to the one it stops at; each group needs the last look's trials (see the module doc)."""
    return decide(look_statistics(scores_a, scores_b, design, maximize=maximize), design, names)


def sequential_so_far(scores_a, scores_b, design: Design, names: tuple[str, str] = ("A", "B"),
                      maximize: bool = True) -> SequentialResult:
    """:func:`sequential` on the looks the trials reach so far (at least the first): for a search still
    running. ``stopped_at`` is None while the rule says go on."""
    a, b = _scores(scores_a, "group A"), _scores(scores_b, "group B")
    reached = looks_reached(design, a.size, b.size)
    if reached == 0:
        raise ValueError(f"the first look needs {design.looks[0]} trials per group, got {a.size} and {b.size}")
    return decide(look_statistics(a, b, design, reached, maximize), design, names)


__all__ = ["ADJUST", "BOUNDARIES", "Design", "LookStatistics", "Row", "SequentialResult", "decide", "look_statistics",
           "looks_reached", "sequential", "sequential_so_far"]
