"""The group-sequential comparison (issue 74): spending boundaries against published values and scipy's
multivariate normal, the rule's error under the null, when it stops, its intervals, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from syw.analysis import spending
from syw.analysis.inference import compare
from syw.analysis.sequential import Design, decide, look_statistics, looks_reached, sequential, sequential_so_far
from syw.analysis.spending import boundaries, crossing_probabilities, spent

EQUAL5 = np.arange(1, 6) / 5
# Lan-DeMets boundaries, 5 equally spaced looks, two-sided 0.05, as published to 3 decimals (R's ldbounds, and
# gsDesign's sfLDOF / sfLDPocock at one-sided 0.025)
OBF5 = [4.877, 3.357, 2.680, 2.290, 2.031]
POCOCK5 = [2.438, 2.427, 2.410, 2.397, 2.386]


def _correlation(t: np.ndarray) -> np.ndarray:
    return np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))


def _stay(t: np.ndarray, c: np.ndarray, mean: np.ndarray | None = None) -> float:
    """P(|Z_k| < c_k at every look) for the canonical law, by scipy (Genz's algorithm)."""
    law = multivariate_normal(np.zeros(t.size) if mean is None else mean, _correlation(t), abseps=1e-9, releps=1e-9,
                              maxpts=2_000_000)
    return float(law.cdf(c, lower_limit=-c))


@pytest.mark.parametrize("name, published", [("obrien-fleming", OBF5), ("pocock", POCOCK5)])
def test_boundaries_are_the_published_ones(name, published):
    assert boundaries(EQUAL5, 0.05, name) == pytest.approx(published, abs=6e-4)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["obrien-fleming", "pocock"])
def test_each_look_spends_what_the_function_allows_by_scipy(name):
    t = np.array([0.15, 0.4, 0.55, 0.8, 1.0])  # unequal spacing
    c = boundaries(t, 0.05, name)
    for k in range(1, t.size + 1):  # crossing by look k has the spent probability
        assert 1.0 - _stay(t[:k], c[:k]) == pytest.approx(float(spent(name, t[k - 1], 0.05)), abs=5e-7)  # Genz's estimate: about 2e-7


def test_the_recursion_agrees_with_scipy_under_a_drift_and_on_a_finer_grid(monkeypatch):
    t = np.array([0.2, 0.5, 1.0])
    c = np.array([3.0, 2.4, 2.0])
    exit_ = crossing_probabilities(t, c, drift=2.5)
    assert exit_.sum() == pytest.approx(1.0 - _stay(t, c, mean=2.5 * np.sqrt(t)), abs=1e-7)
    coarse = boundaries(EQUAL5, 0.05, "obrien-fleming")
    monkeypatch.setattr(spending, "GRID", 2 * spending.GRID)
    spending._boundaries.cache_clear()
    try:
        assert boundaries(EQUAL5, 0.05, "obrien-fleming") == pytest.approx(coarse, abs=1e-8)
    finally:
        spending._boundaries.cache_clear()


def test_testing_every_look_at_the_fixed_level_inflates_the_error():
    naive = crossing_probabilities(EQUAL5, [1.959964] * 5).sum()
    assert naive == pytest.approx(1.0 - _stay(EQUAL5, np.full(5, 1.959964)), abs=1e-6)  # Genz's error here: 3e-7
    assert naive == pytest.approx(0.142, abs=1e-3)  # Armitage, McPherson and Rowe (1969): 0.142 for 5 looks


def test_a_design_tests_a_budget_from_the_look_that_reaches_it():
    design = Design((10, 20, 30, 40, 50), (1, 5))
    assert design.alpha == pytest.approx(0.025)
    assert design.active()[:, 1].tolist() == [False, False, True, True, True]  # limit_budget(30) = 5
    z = design.z_boundaries()
    assert np.isinf(z[:2, 1]).all()
    # budget 5 spends at its own looks, t = 0.6, 0.8, 1: its first boundary spends alpha(0.6) at once
    assert z[2:, 1] == pytest.approx(boundaries([0.6, 0.8, 1.0], 0.025, "obrien-fleming"))
    assert z[:, 0] == pytest.approx(boundaries(EQUAL5, 0.025, "obrien-fleming"))
    assert Design((10, 20), (1,), adjust="none", boundary="naive").z_boundaries()[:, 0] == pytest.approx([1.959964] * 2)


def test_one_look_is_the_pointwise_comparison():
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.71, 0.04, 50), rng.normal(0.69, 0.04, 50)
    result = sequential(a, b, Design((50,), (1, 5), adjust="none"))
    fixed = compare(a, b, at=(1, 5))
    rows = result.decisions()
    assert [rows[1].low, rows[5].low] == pytest.approx(fixed.low.tolist(), rel=1e-9)
    assert [rows[1].high, rows[5].high] == pytest.approx(fixed.high.tolist(), rel=1e-9)
    assert [rows[n].leader for n in (1, 5)] == fixed.leader()


def test_it_stops_at_the_look_where_every_budget_is_decided():
    rng = np.random.default_rng(0)
    a, b = 0.9 + 0.01 * rng.standard_normal(50), 0.5 + 0.01 * rng.standard_normal(50)
    result = sequential(a, b, Design((10, 20, 30, 40, 50), (1, 5)))
    assert result.stopped_at == 3 and result.trials_used == 30  # n = 5 is reached at 30 trials
    assert len(result.rows) == 6 and [r.stopped for r in result.rows] == [False] * 4 + [True] * 2
    assert {n: (r.leader, r.decided_at) for n, r in result.decisions().items()} == {1: ("A", 1), 5: ("A", 3)}
    flipped = sequential(-a, -b, Design((10, 20, 30, 40, 50), (1, 5)), maximize=False)
    assert flipped.decisions()[1].leader == "A"
    assert sequential(b, a, Design((10, 20, 30, 40, 50), (1, 5)), names=("x", "y")).decisions()[5].leader == "y"


def test_a_decided_budget_stays_decided_and_intervals_match_the_boundaries():
    rng = np.random.default_rng(1)
    # A far ahead in its first 10 trials, far behind afterwards: n = 1 is decided at look 1 and stays so
    a = np.concatenate([1.0 + 0.01 * rng.standard_normal(10), 0.05 * rng.standard_normal(40)])
    b = 0.5 + 0.05 * rng.standard_normal(50)
    result = sequential(a, b, Design((10, 20, 30, 40, 50), (1, 5), confidence=0.95))
    first = [r for r in result.rows if r.n == 1]
    assert first[0].leader == "A" and first[0].low > 0
    assert all(r.leader == "A" and r.decided_at == 1 for r in first)
    assert first[-1].estimate < -0.1 and first[-1].statistic < 0  # the mean has turned; the decision does not
    fives = [r for r in result.rows if r.n == 5]
    assert np.isinf(fives[0].high) and np.isnan(fives[0].statistic)  # before the look reaches n = 5
    tested = [r for r in result.rows if np.isfinite(r.boundary)]
    for r in tested:  # the repeated interval: estimate +- boundary x se, se = estimate / T
        assert (r.high - r.low) / 2 == pytest.approx(r.boundary * r.estimate / r.statistic)
        assert (r.low > 0 or r.high < 0) == (abs(r.statistic) > r.boundary)
    assert result.decisions()[5].leader == "A" and result.stopped_at == 3  # A's best 10 lead the best of 5


def test_looks_so_far():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=35), rng.normal(size=40)
    design = Design((10, 20, 30, 40, 50), (1, 5))
    assert looks_reached(design, 35, 40) == 3
    so_far = sequential_so_far(a, b, design)
    assert {r.look for r in so_far.rows} == {1, 2, 3} and so_far.stopped_at is None
    with pytest.raises(ValueError, match="look 5 needs 50 trials per group, got 35 and 40.*looks reached \\(3\\)"):
        sequential(a, b, design)
    with pytest.raises(ValueError, match="first look needs 10 trials per group, got 5"):
        sequential_so_far(a[:5], b, design)


@pytest.mark.slow
def test_the_rule_holds_its_error_under_the_null_where_testing_every_look_does_not():
    rng = np.random.default_rng(7)
    looks, reps = (10, 20, 30, 40, 50), 400
    rule, naive = Design(looks, (1, 5)), Design(looks, (1, 5), boundary="naive")
    named = np.zeros(2)
    for _ in range(reps):
        stats = look_statistics(rng.normal(size=50), rng.normal(size=50), rule)
        named += [any(r.leader for r in decide(stats, d).decisions().values()) for d in (rule, naive)]
    rate, naive_rate = named / reps
    assert rate <= 0.05 + 2 * (0.05 * 0.95 / reps) ** 0.5
    assert naive_rate > 0.07 and naive_rate > 2 * rate


@pytest.mark.parametrize("kwargs, message", [
    ({"looks": (20, 10), "at": (1,)}, "looks must increase"),
    ({"looks": (1, 10), "at": (1,)}, "each at least 2"),
    ({"looks": (True, 10), "at": (1,)}, "whole numbers"),
    ({"looks": (10.5, 20), "at": (1,)}, "whole numbers"),
    ({"looks": (), "at": (1,)}, "whole numbers"),
    ({"looks": (10, 50), "at": (20,)}, "n = 20 cannot be decided by the last look \\(50 trials per group reach n = 9\\).*needs 107"),
    ({"looks": (10, 50), "at": (1, 1)}, "must not repeat"),
    ({"looks": (10, 50), "at": (0,)}, "budget n must be >= 1"),
    ({"looks": (10, 50), "at": (1,), "confidence": 1.0}, "confidence must be in"),
    ({"looks": (10, 50), "at": (1,), "boundary": "haybittle"}, "boundary must be one of obrien-fleming, pocock, naive"),
    ({"looks": (10, 50), "at": (1,), "adjust": "holm"}, "adjust must be one of bonferroni, none"),
])
def test_bad_designs_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Design(**kwargs)


def test_bad_scores_and_spending_are_refused():
    design = Design((10, 20), (1,))
    with pytest.raises(ValueError, match="group B: scores must be finite"):
        sequential(np.ones(20), np.r_[np.ones(19), np.nan], design)
    with pytest.raises(ValueError, match="names must be two different labels"):
        sequential(np.arange(20.0), np.arange(20.0), design, names=("A", "A"))
    with pytest.raises(ValueError, match="strictly increasing in \\(0, 1\\]"):
        boundaries([0.5, 0.5, 1.0], 0.05)
    with pytest.raises(ValueError, match="spending must be one of"):
        boundaries([0.5, 1.0], 0.05, "linear")
    with pytest.raises(ValueError, match="other looks or budgets"):
        decide(look_statistics(np.arange(20.0), np.arange(20.0), design), Design((10, 20), (2,)))
