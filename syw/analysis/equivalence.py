"""Are two tuning curves within a stated margin? Two one-sided tests (Schuirmann 1987) on the jackknife statistics of
:func:`syw.analysis.inference.compare` (issue 73): a tie certified, where "undecided" is not one."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from syw.analysis.expected_max import Budgets, check_budgets
from syw.analysis.inference import _alpha, _groups, _jackknife_t, _unique, limit_budget
from syw.analysis.student_t import t_isf, t_sf


@dataclass(frozen=True)
class Equivalence:
    """Whether the curves of A and B lie within +-``margin`` of each other at each budget ``ns``: V_n^A - V_n^B
    (``estimate``, positive: A better), its 1 - 2 alpha interval [``low``, ``high``] and the TOST p (the larger
    one-sided p; NaN past ``limit``, where nothing is certified). ``certified()`` where p <= alpha."""

    names: tuple[str, str]
    ns: np.ndarray
    margin: float
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p: np.ndarray
    confidence: float
    limit: int
    sizes: tuple[int, int]

    def certified(self) -> np.ndarray:
        """At each n: are A and B within +-margin at the stated confidence?"""
        return np.nan_to_num(self.p, nan=1.0) <= 1.0 - self.confidence

    def sentence(self) -> str:
        """E.g. "A and B are within +-0.01 at n = 1, 5 at 95%; undecided with 50 and 50 trials at n = 10"."""
        sure = self.certified()
        parts = [f"{self.names[0]} and {self.names[1]} are within +-{self.margin:g} at n = "
                 f"{', '.join(map(str, self.ns[sure].tolist()))} at {self.confidence:.0%}"] if sure.any() else []
        if not sure.all():
            parts.append(f"undecided with {self.sizes[0]} and {self.sizes[1]} trials at n = "
                         f"{', '.join(map(str, self.ns[~sure].tolist()))}")
        return "; ".join(parts)


def equivalence(scores_a, scores_b, margin: float, ns: Budgets, confidence: float = 0.95,
                names: tuple[str, str] = ("A", "B"), maximize: bool = True) -> Equivalence:
    """Are A and B within +-``margin`` at budgets ``ns``? Two one-sided tests (Schuirmann 1987) on the statistics
    of :func:`compare`: |V_n^A - V_n^B| < margin is certified at n when (d - margin) / se < -t and
    (d + margin) / se > t, t = Student's (1 - alpha) quantile at the Welch-Satterthwaite df, i.e. when the
    1 - 2 alpha interval lies inside (-margin, margin). Each budget at level alpha = 1 - confidence, stated
    in advance (pointwise; "within the margin at every listed n" needs no correction). Nothing is certified
    past :func:`limit_budget` or where the spread is unmeasured (every relevant trial tied)."""
    alpha = _alpha(confidence)
    if not (np.isfinite(float(margin)) and float(margin) > 0):
        raise ValueError(f"margin must be a positive number, got {margin}")
    xa, xb = _groups(scores_a, scores_b, names, maximize)
    size = min(xa.size, xb.size)
    budgets = _unique(check_budgets(ns, n_max=size))
    limit = limit_budget(size, confidence)
    est, se, df, live, _, _, _ = _jackknife_t(xa, xb, budgets, limit)
    p, half = np.full(budgets.size, np.nan), np.full(budgets.size, np.inf)
    d = float(margin)
    p[live] = np.maximum(t_sf((est[live] + d) / se[live], df[live]), t_sf((d - est[live]) / se[live], df[live]))
    half[live] = t_isf(alpha, df[live]) * se[live]
    return Equivalence((str(names[0]), str(names[1])), budgets, d, est, est - half, est + half, p, float(confidence),
                       limit, (xa.size, xb.size))
