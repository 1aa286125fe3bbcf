"""The estimators of analysis/ against hand-computed values, closed forms, properties and opda."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opda.nonparametric import EmpiricalDistribution

from syw.analysis import (
    bootstrap_expected_max,
    confidence_bands,
    expected_max,
    expected_max_std,
    expected_max_unbiased,
    max_distribution,
)

FIVE = [0, 25, 50, 75, 100]
TIES = [1, 1, 2, 3]


def test_paper_estimator_five_scores():
    ns = np.arange(1, 6)
    np.testing.assert_allclose(expected_max(FIVE, ns), [50, 70, 80, 85.84, 89.6], atol=1e-9)
    np.testing.assert_allclose(
        expected_max_std(FIVE, ns), [35.3553, 29.1548, 23.6643, 19.6340, 16.6084], atol=5e-5
    )


def test_unbiased_estimator_five_scores():
    np.testing.assert_allclose(expected_max_unbiased(FIVE, np.arange(1, 6)), [50, 75, 87.5, 95, 100], atol=1e-9)


def test_ties_are_handled_per_distinct_value():
    ns = [1, 2, 3, 4]
    np.testing.assert_allclose(expected_max(TIES, ns), [1.75, 2.1875, 2.453125, 2.621094], atol=1e-6)
    np.testing.assert_allclose(expected_max_unbiased(TIES, ns), [1.75, 2.333333, 2.75, 3.0], atol=1e-6)
    values, pmf = max_distribution(TIES, 2)
    np.testing.assert_array_equal(values, [1, 2, 3])
    np.testing.assert_allclose(pmf, [0.25, 0.5625 - 0.25, 1 - 0.5625])


def test_budget_beyond_n_allowed_for_paper_estimator_only():
    assert expected_max(FIVE, 50)[0] == pytest.approx(100 * (1 - 0.8**50) + sum(
        v * ((k / 5) ** 50 - ((k - 1) / 5) ** 50) for k, v in enumerate(FIVE[:-1], start=1)
    ))
    with pytest.raises(ValueError, match="exceeds the N = 5"):
        expected_max_unbiased(FIVE, 6)


@pytest.mark.parametrize(
    "scores, match",
    [([], "empty"), ([0.1, np.nan], "finite"), ([0.1, np.inf], "finite"), (["a", "b"], "numeric"), ([[1, 2]], "one-dimensional")],
)
def test_bad_scores_raise(scores, match):
    for fn in (expected_max, expected_max_std, expected_max_unbiased):
        with pytest.raises(ValueError, match=match):
            fn(scores, 1)


@pytest.mark.parametrize("ns", [0, -1, [1, 0], 1.5])
def test_bad_budgets_raise(ns):
    with pytest.raises(ValueError, match="budget"):
        expected_max(FIVE, ns)


scores_st = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(scores_st, st.randoms(use_true_random=False))
def test_properties(scores, rnd):
    arr = np.asarray(scores)
    big_n = arr.size
    ns = np.arange(1, big_n + 1)
    paper, unbiased = expected_max(arr, ns), expected_max_unbiased(arr, ns)
    tol = 1e-9 * max(1.0, np.abs(arr).max())
    assert paper[0] == pytest.approx(arr.mean(), abs=tol)
    assert unbiased[0] == pytest.approx(arr.mean(), abs=tol)
    assert unbiased[-1] == pytest.approx(arr.max(), abs=tol)
    assert np.all(np.diff(paper) >= -tol) and np.all(np.diff(unbiased) >= -tol)
    assert np.all(paper <= unbiased + tol) and np.all(unbiased <= arr.max() + tol)
    shuffled = arr.copy()
    rnd.shuffle(shuffled)
    np.testing.assert_allclose(expected_max(shuffled, ns), paper, atol=tol)
    np.testing.assert_allclose(expected_max_unbiased(shuffled, ns), unbiased, atol=tol)
    # lower-is-better mirrors higher-is-better on negated scores
    np.testing.assert_allclose(expected_max(-arr, ns, maximize=False), -paper, atol=tol)
    np.testing.assert_allclose(expected_max_unbiased(-arr, ns, maximize=False), -unbiased, atol=tol)
    np.testing.assert_allclose(expected_max_std(-arr, ns, maximize=False), expected_max_std(arr, ns), atol=tol)


def test_uniform_closed_form():
    """E[max of n Uniform(0,1)] = n/(n+1): the unbiased estimator matches on average, Eq. 8 sits below."""
    rng = np.random.default_rng(0)
    big_n, ns, reps = 20, np.array([1, 2, 5, 10, 20]), 4000
    paper = np.zeros(ns.size)
    unbiased = np.zeros(ns.size)
    for _ in range(reps):
        sample = rng.uniform(size=big_n)
        paper += expected_max(sample, ns) / reps
        unbiased += expected_max_unbiased(sample, ns) / reps
    truth = ns / (ns + 1)
    np.testing.assert_allclose(unbiased, truth, atol=0.004)
    assert np.all(paper[1:] < truth[1:] - 0.005)  # biased low for n > 1
    assert paper[0] == pytest.approx(truth[0], abs=0.004)


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_opda(seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.uniform(0.2, 0.5, size=40), 3)  # rounding creates ties
    ns = np.arange(1, 41)
    dist = EmpiricalDistribution(scores)
    np.testing.assert_allclose(expected_max(scores, ns), dist.v_tuning_curve(ns), atol=1e-12, rtol=0)
    np.testing.assert_allclose(expected_max_unbiased(scores, ns), dist.u_tuning_curve(ns), atol=1e-12, rtol=0)
    np.testing.assert_allclose(
        expected_max(scores, ns, maximize=False), dist.v_tuning_curve(ns, minimize=True), atol=1e-12, rtol=0
    )
    np.testing.assert_allclose(
        expected_max_unbiased(scores, ns, maximize=False), dist.u_tuning_curve(ns, minimize=True), atol=1e-12, rtol=0
    )


def test_bootstrap_error_shrinks_like_one_over_sqrt_k():
    scores = np.random.default_rng(1).uniform(size=30)
    ns = np.arange(1, 31)
    exact = expected_max(scores, ns)
    errors = {}
    for k in (100, 1600):
        errs = [np.abs(bootstrap_expected_max(scores, ns, k, seed=s)[0] - exact).mean() for s in range(20)]
        errors[k] = np.mean(errs)
    ratio = errors[100] / errors[1600]  # sqrt(16) = 4 expected
    assert 2.5 < ratio < 6.5, ratio
    assert errors[1600] > 0  # the bootstrap never has zero resampling error


def test_bootstrap_sd_converges_to_plugin_spread():
    scores = np.random.default_rng(2).uniform(size=25)
    ns = [1, 5, 25]
    _, sd = bootstrap_expected_max(scores, ns, 200_000, seed=0)
    np.testing.assert_allclose(sd, expected_max_std(scores, ns), rtol=0.01)


def test_confidence_bands_contain_curve_and_cover_truth():
    rng = np.random.default_rng(3)
    ns = np.arange(1, 31)
    truth = ns / (ns + 1)
    covered = 0
    for rep in range(40):
        sample = rng.uniform(size=30)
        low, point, high = confidence_bands(sample, ns, confidence=0.9, seed=rep)
        assert np.all(low <= point + 1e-12) and np.all(point <= high + 1e-12)
        np.testing.assert_allclose(point, expected_max(sample, ns), atol=1e-12)
        covered += bool(np.all((low <= truth) & (truth <= high)))
    assert covered >= 34  # simultaneous 90% bands: at least ~85% of 40 samples fully covered


def test_confidence_bands_minimize_and_bounds():
    sample = np.array([0.2, 0.4, 0.5, 0.9])
    low, point, high = confidence_bands(sample, [1, 2], maximize=False)
    assert np.all(low <= point) and np.all(point <= high)
    np.testing.assert_allclose(point, expected_max(sample, [1, 2], maximize=False))
    with pytest.raises(ValueError, match="bounds"):
        confidence_bands([1.5, 2.0], [1])
