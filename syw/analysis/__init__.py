"""Expected maximum validation performance as a function of search budget.

The estimators of Dodge et al. (2019), section 3, and the ones built around them:

- :func:`expected_max`, :func:`expected_max_std`: Eq. 8 and its plug-in spread (section 3.3).
- :func:`expected_max_unbiased`: the without-replacement estimator of Tang et al. (2020).
- :func:`bootstrap_expected_max`: the bootstrap of section 3.2.
- :func:`confidence_bands`: simultaneous bands for the tuning curve (via ``opda``).
- :mod:`syw.analysis.budget`: budget inference (section 4.4) and comparisons between families.
- :mod:`syw.analysis.power`: how many trials per group decide A against B at a budget (simulated power).
"""
from syw.analysis.bands import confidence_bands
from syw.analysis.budget import (
    Crossover,
    Lead,
    bootstrap_overtake,
    budget_to_reach,
    crossovers,
    overtakes_from,
    prob_beats,
    time_axis,
    time_crossovers,
    time_leaders,
)
from syw.analysis.expected_max import (
    bootstrap_expected_max,
    expected_max,
    expected_max_std,
    expected_max_unbiased,
    max_distribution,
)

__all__ = [
    "Crossover",
    "Lead",
    "bootstrap_expected_max",
    "bootstrap_overtake",
    "budget_to_reach",
    "confidence_bands",
    "crossovers",
    "expected_max",
    "expected_max_std",
    "expected_max_unbiased",
    "max_distribution",
    "overtakes_from",
    "prob_beats",
    "time_axis",
    "time_crossovers",
    "time_leaders",
]
