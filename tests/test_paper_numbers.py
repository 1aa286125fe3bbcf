"""Our estimator on the authors' own published trials reproduces the paper's budget statements.

Runs only where the files are in results/paper/ (they are never committed; see README "Data").
"""
import pytest

from analysis import budget_to_reach, expected_max
from figures.sources import PAPER_DIR, from_paper
from figures.specs import FIGURES

pytestmark = pytest.mark.paperdata


def groups(number):
    if not (PAPER_DIR / FIGURES[number].paper.name).is_file():
        pytest.skip(f"{FIGURES[number].paper.name} not in {PAPER_DIR}")
    return {g.family: g for g in from_paper(FIGURES[number])}


def test_scitail_budgets_range_from_2_to_20():
    g = groups(3)
    budgets = {f: budget_to_reach(expected_max(g[f].scores, range(1, 101)), ref, decimals=3)
               for f, ref in FIGURES[3].references.items()}
    assert budgets["ngram"] == 2 and budgets["dgem"] == 20
    assert min(budgets.values()) == 2 and max(budgets.values()) == 20


def test_bidaf_needs_about_55_trials_and_18_days():
    bidaf = groups(4)["bidaf"]
    curve = expected_max(bidaf.scores, range(1, 129))
    exact, rounded = budget_to_reach(curve, 0.677), budget_to_reach(curve, 0.677, decimals=3)
    assert (exact, rounded) == (57, 52)  # the paper's 55 lies between
    days = [n * bidaf.mean_duration / 86400 for n in (rounded, exact)]
    assert days[0] < 18.5 < days[1] + 1  # "about 18 GPU days"
    assert bidaf.scores.max() == pytest.approx(0.682, abs=5e-4)  # Table 11: best EM 68.2
