"""What a tuning curve shows of the best of n trials, as a value with a name.

Two statistics of the best score after n trials drawn at random from the score distribution F:

- the **mean** (Eq. 8 of Dodge et al. 2019): E[max of n draws], :data:`MEAN`;
- a **quantile** q (Lourie et al. 2024; the median, q = 0.5, :data:`MEDIAN`): the score the best of n draws
  reaches with probability 1 - q, F^-1(q^(1/n)) (mirrored when lower is better).

Everything that differs between statistics (how it is spelled on the command line, named on an axis,
named as a column, computed from the scores and from one of opda's distributions) is here, so a new
statistic is added in this one class.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from syw.analysis.expected_max import Budgets, check_budgets, check_scores, expected_max

if TYPE_CHECKING:
    from opda.nonparametric import EmpiricalDistribution


@dataclass(frozen=True)
class Statistic:
    """The mean (``q`` None, Eq. 8) or the q-quantile (0 < q < 1) of the best of n draws."""

    q: float | None = None

    def __post_init__(self) -> None:
        if self.q is not None and not (isinstance(self.q, (int, float)) and 0.0 < float(self.q) < 1.0):
            raise ValueError(f"a quantile of the best of n needs 0 < q < 1, got {self.q!r}")

    @classmethod
    def parse(cls, text: str) -> Statistic:
        """``mean``, ``median`` or ``q=0.9`` (as ``--statistic`` takes it); anything else raises ``ValueError``."""
        if text == "mean":
            return MEAN
        if text == "median":
            return MEDIAN
        match = re.fullmatch(r"q=(0?\.\d+|0|1)", text)
        q = float(match.group(1)) if match else None
        if q is None or not 0.0 < q < 1.0:
            raise ValueError(f"{text!r} is not a statistic: use mean, median or q=Q with Q between 0 and 1 (q=0.9)")
        return cls(q)

    @property
    def is_mean(self) -> bool:
        """Eq. 8: the statistic with an unbiased estimate and a jackknife (``syw.analysis.inference``)."""
        return self.q is None

    @property
    def name(self) -> str:
        """``mean``, ``median`` or ``q=0.9``: as ``--statistic`` spells it."""
        return "mean" if self.q is None else "median" if self.q == 0.5 else f"q={self.q:g}"

    @property
    def title(self) -> str:
        """What the curve's y value is: ``Expected best of n``, ``Median best of n``, ``0.9-quantile of the best of n``."""
        if self.q is None:
            return "Expected best of n"
        return "Median best of n" if self.q == 0.5 else f"{self.q:g}-quantile of the best of n"

    @property
    def column(self) -> str:
        """The column of a curves table that holds this statistic: ``expected_max``, ``median``, ``quantile_0.9``."""
        if self.q is None:
            return "expected_max"
        return "median" if self.q == 0.5 else f"quantile_{self.q:g}"

    def curve(self, scores, ns: Budgets, *, maximize: bool = True) -> np.ndarray:
        """The statistic of the best of n draws from the scores' empirical distribution at each n: Eq. 8, or
        the empirical quantile F^-1(p) = min{v : F(v) >= p} at p = q^(1/n)."""
        arr, budgets = check_scores(scores), check_budgets(ns)
        if self.q is None:
            return expected_max(arr, budgets, maximize=maximize)
        values, counts = np.unique(arr, return_counts=True)
        level = self.q ** (1.0 / budgets) if maximize else 1.0 - (1.0 - self.q) ** (1.0 / budgets)
        # F(v) = count / N exactly, in integers: a float cumulative sum can miss F(v) = p by an ulp
        first = np.searchsorted(np.cumsum(counts), level * arr.size * (1.0 - 1e-12), side="left")
        return values[np.minimum(first, values.size - 1)]

    def of_distribution(self, dist: EmpiricalDistribution, ns: np.ndarray, *, minimize: bool) -> np.ndarray:
        """The statistic's tuning curve of one of opda's distributions (a band's edge)."""
        if self.q is None:
            return np.asarray(dist.average_tuning_curve(ns, minimize=minimize), dtype=float)
        return np.asarray(dist.quantile_tuning_curve(ns, q=self.q, minimize=minimize), dtype=float)


MEAN = Statistic()
MEDIAN = Statistic(0.5)
