"""Issue 72: past GRID_FROM trials a curve holds the budgets of curve_budgets, each exact, and a budget to reach
a target is exact too (bisection between two budgets of the grid)."""
import importlib

import numpy as np
import pytest

from syw.analysis.curves import curve_budgets, curve_of, table
from syw.analysis.group import Group
from syw.analysis.inference import GRID_FROM

em = importlib.import_module("syw.analysis.expected_max")  # the module: syw.analysis exports a function of its name


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(3)
    scores = rng.beta(5, 3, 3_000).round(4)
    return scores, curve_of(Group("a", scores, None, "a"))


def test_the_grid_holds_every_small_budget_round_ones_and_n(big):
    scores, curve = big
    ns = curve.ns
    assert curve.grid is not None and ns[-1] == scores.size
    assert set(range(1, 101)) <= set(ns.tolist()) and {200, 500, 1000, 2000} <= set(ns.tolist())
    assert ns.size < 260 and np.all(np.diff(ns) > 0)
    assert curve_budgets(GRID_FROM).size == GRID_FROM  # up to GRID_FROM: every n


def test_each_grid_budget_is_exact(big):
    scores, curve = big
    dense_mean, dense_sd = em.expected_max_with_std(scores, np.arange(1, scores.size + 1))
    dense_unbiased = em._running_unbiased(np.sort(scores), np.arange(1, scores.size + 1))
    assert np.abs(curve.mean - dense_mean[curve.ns - 1]).max() < 1e-12
    assert np.abs(curve.sd - dense_sd[curve.ns - 1]).max() < 1e-12
    assert np.abs(curve.unbiased - dense_unbiased[curve.ns - 1]).max() < 1e-12


@pytest.mark.parametrize("quantile", [0.3, 0.6, 0.9, 0.99, 0.999])
def test_the_budget_to_reach_a_target_is_exact_off_the_grid(big, quantile):
    scores, curve = big
    dense = em.expected_max(scores, np.arange(1, scores.size + 1))
    target = float(np.quantile(dense, quantile))
    expected = int(np.flatnonzero(dense >= target)[0]) + 1
    assert curve.reach(target) == expected
    assert curve.at(expected) == pytest.approx(dense[expected - 1], abs=1e-12)  # off the grid: computed there


def test_the_table_has_a_row_per_grid_budget(big):
    scores, curve = big
    rows = table([curve], "group")
    assert rows.n.tolist() == curve.ns.tolist() and rows.expected_max.to_numpy() == pytest.approx(curve.mean)
