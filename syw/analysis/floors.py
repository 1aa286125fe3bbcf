"""Diverged trials scored by a rule stated before looking: a floor per metric, and when to show the median.

A **floor** is the score of a predictor that learned nothing: accuracy at chance (1 / the task's
classes, or a stated majority rate), perplexity at the uniform predictor (the vocabulary's size:
10,000 for the Penn Treebank), or the user's ``syw curve --floor X``. A score beyond it (below it
when higher is better, above it when lower is) counts at the floor, and a failed trial may count
there too (``--failed floor``): Eq. 8 is a mean in which one diverged trial (a perplexity of 1e34)
weighs at every n, so without a floor it decides the curve alone.

**The median beside the mean.** Where one trial moves the mean curve (Eq. 8) by more than the spread
(the range, highest minus lowest) of the other trials' scores, the mean says more about that trial than about
the search; the median of the best of n (Lourie et al. 2024; :data:`syw.analysis.statistic.MEDIAN`,
q = 0.5) does not move with it, so it is drawn beside the mean (:func:`one_trial_decides`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from syw.analysis.expected_max import check_scores, expected_max
from syw.analysis.inference import shown_budgets

MEDIAN_RULE = ("Where one trial moves the mean curve (Eq. 8, at any n up to N - 1; past 1,000 trials, at the budgets "
               "shown) by more than the range of the other trials' scores (highest minus lowest), the median best of n "
               "is drawn beside the mean.")


@dataclass(frozen=True)
class Floor:
    """A floor score and the rule it comes from (``chance over 5 classes``, ``--floor``)."""

    value: float
    rule: str

    def describe(self, maximize: bool) -> str:
        """One sentence: which scores count at the floor, and why."""
        beyond = "below" if maximize else "above"
        return f"scores {beyond} {self.value:g} ({self.rule}) count at {self.value:g}"


def beyond(scores, floor: float, *, maximize: bool = True) -> np.ndarray:
    """Per score: whether it lies beyond ``floor`` (below it when higher is better, above it when lower is)."""
    arr = np.asarray(scores, dtype=float)
    return arr < floor if maximize else arr > floor


def apply_floor(scores, floor: float | None, *, maximize: bool = True) -> tuple[np.ndarray, int]:
    """The scores with each one beyond ``floor`` set to it, and how many were; ``floor`` None leaves them as they are."""
    arr = np.asarray(scores, dtype=float).copy()
    if floor is None:
        return arr, 0
    out = beyond(arr, floor, maximize=maximize)
    arr[out] = floor
    return arr, int(out.sum())


def largest_sway(scores, *, maximize: bool = True) -> tuple[int, float, float]:
    """The trial whose leaving out moves the mean curve most: its index, the move (largest |change| of Eq. 8 over
    n = 1..N-1, or over the budgets a comparison shows past 1,000 trials: linear cost) and the range (highest minus
    lowest) of the other trials' scores. Needs at least 3 scores."""
    arr = check_scores(scores)
    if arr.size < 3:
        raise ValueError(f"the sway of one trial needs at least 3 scores, got {arr.size}")
    ns = shown_budgets(arr.size - 1)
    full = expected_max(arr, ns, maximize=maximize)
    best = (0, -1.0, 0.0)
    # Leaving out a score x shifts the empirical CDF by a step at x, and the rest's Eq. 8 at each n falls as x
    # rises (the integral of F^n past x loses the larger term): the largest move is the lowest or highest score's.
    # The two highest are tried since leaving out the top also moves the top of the support.
    distinct = np.unique(arr, return_index=True)[1]
    for i in np.unique(np.concatenate([distinct[:1], distinct[-2:]])):  # equal scores sway the curve equally
        rest = np.delete(arr, i)
        with np.errstate(over="ignore", invalid="ignore"):
            move = float(np.max(np.abs(full - expected_max(rest, ns, maximize=maximize))))
        if not np.isfinite(move):
            move = float("inf")
        if move > best[1]:
            best = (int(i), move, float(np.ptp(rest)))
    return best


def deciding_trial(scores, *, maximize: bool = True) -> tuple[int, float, float] | None:
    """:func:`largest_sway` where one trial moves the mean curve by more than the spread of the rest
    (:data:`MEDIAN_RULE`), else None."""
    if np.asarray(scores).size < 3:
        return None
    sway = largest_sway(scores, maximize=maximize)
    return sway if sway[1] > sway[2] else None


def one_trial_decides(scores, *, maximize: bool = True) -> bool:
    """Whether one trial moves the mean curve by more than the spread of the rest (:data:`MEDIAN_RULE`)."""
    return deciding_trial(scores, maximize=maximize) is not None


def sway_note(name: str, scores, sway: tuple[int, float, float] | None) -> str | None:
    """The report's note on a group whose mean curve one trial sways (``sway``: its :func:`deciding_trial`), else None."""
    if sway is None:
        return None
    i, move, spread = sway
    return (f"group {name!r}: one trial (score {np.asarray(scores)[i]:.6g}) moves the mean curve by up to {move:.4g}, "
            f"more than the range of the other trials' scores ({spread:.4g}): the median best of n is drawn beside the mean, "
            "dotted (a floor, --floor, would bound such a trial)")
