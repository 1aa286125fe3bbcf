"""Equivalence of two tuning curves within a margin (issue 73, item 3): two one-sided tests on the jackknife
statistics of ``syw.analysis.inference.compare``, checked against Welch's one-sided tests at n = 1 and on
synthetic pools with a known answer."""
import numpy as np
import pytest
from scipy import stats

from syw.analysis.equivalence import equivalence
from syw.analysis.inference import limit_budget
from syw.analysis.jackknife import jackknife_variance

Z95 = stats.norm.isf(0.05)  # the one-sided 5% point: TOST at 95% certifies |d| < margin - Z95 x SE (large N)


def test_n1_is_two_one_sided_welch_tests():
    rng = np.random.default_rng(4)
    a, b = rng.normal(0.70, 0.05, 60), rng.normal(0.69, 0.07, 45)
    eq = equivalence(a, b, 0.03, [1])
    lower = stats.ttest_ind(a + 0.03, b, equal_var=False, alternative="greater").pvalue  # H0: d <= -margin
    upper = stats.ttest_ind(a - 0.03, b, equal_var=False, alternative="less").pvalue  # H0: d >= margin
    assert eq.p[0] == pytest.approx(max(lower, upper), rel=1e-9)
    low, high = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.90)  # the 1 - 2 alpha interval
    assert (eq.low[0], eq.high[0]) == (pytest.approx(low, rel=1e-9), pytest.approx(high, rel=1e-9))
    assert eq.certified()[0] == (-0.03 < low and high < 0.03)


def test_one_sample_against_itself_is_certified_exactly_where_the_margin_clears_t_se():
    x = np.random.default_rng(5).normal(0.0, 1.0, 400)
    ns = np.array([1, 5, 10, limit_budget(400)])
    se = np.sqrt(2 * jackknife_variance(x, ns))
    wide, narrow = equivalence(x, x, 3 * se[0], ns), equivalence(x, x, 1.0 * se[0], ns)
    assert np.all(wide.estimate == 0)
    # the estimate is 0: p = P(T > margin / se) at each n, certified while margin / se clears t(0.95, df)
    assert wide.certified().tolist() == [True, True, True, False]  # SE grows with n: 1, 1.4, 1.6 and 3.3 x SE(n = 1)
    assert wide.p[0] == pytest.approx(stats.t.sf(3.0, 2 * 399), rel=1e-6)
    assert not narrow.certified().any() and narrow.p[0] == pytest.approx(stats.t.sf(1.0, 2 * 399), rel=1e-6)
    past = equivalence(x, x, 10.0, [limit_budget(400) + 1])
    assert np.isnan(past.p[0]) and not past.certified()[0]  # past the limit nothing is certified


@pytest.mark.parametrize("shift, rate, tol", [
    (0.0, 2 * stats.norm.cdf(3 - Z95) - 1, 0.06),  # identical pools, margin 3 SE: certified in 82%
    (1.0, 0.05, 0.035),  # a true difference of exactly the margin: the test's size, 5%
    (2.0, 0.0, 0.0),  # twice the margin: never
])
def test_certification_rate_on_normal_pools_with_a_known_difference(shift, rate, tol):
    """N = 1000 per group from N(0, 1) and N(-shift x margin, 1), margin = 3 SE of the difference at n = 1."""
    size, reps = 1000, 400
    margin = 3 * np.sqrt(2 / size)
    rng = np.random.default_rng([73, int(10 * shift)])
    hits = sum(bool(equivalence(rng.normal(0, 1, size), rng.normal(-shift * margin, 1, size), margin, [1]).certified()[0])
               for _ in range(reps))
    assert hits / reps == pytest.approx(rate, abs=tol)


def test_a_difference_beyond_the_margin_at_every_budget_is_never_certified():
    rng = np.random.default_rng(6)
    ns = [1, 3, 10]
    for _ in range(50):
        a = rng.normal(0.0, 1.0, 200)
        b = rng.normal(0.0, 1.0, 200) - 0.5  # a shift: the curves differ by 0.5 at every n
        assert not equivalence(a, b, 0.25, ns).certified().any()


def test_sentence_and_orientation():
    x = np.random.default_rng(7).normal(0.7, 0.01, 300)
    eq = equivalence(x, x, 0.004, [1, 5, 60], names=("cnn", "lr"))
    assert eq.certified().tolist() == [True, True, False]
    assert eq.sentence() == "cnn and lr are within +-0.004 at n = 1, 5 at 95%; undecided with 300 and 300 trials at n = 60"
    down = equivalence(-x, -x, 0.004, [1, 5, 60], maximize=False)
    assert np.allclose(down.p, eq.p, equal_nan=True) and down.limit == eq.limit == 56


@pytest.mark.parametrize("call, message", [
    (lambda: equivalence([0.1, 0.2], [0.1, 0.3], 0.0, [1]), "margin"),
    (lambda: equivalence([0.1, 0.2], [0.1, 0.3], float("inf"), [1]), "margin"),
    (lambda: equivalence([0.1, 0.2], [0.1, 0.3], 0.1, [3]), "exceeds"),
    (lambda: equivalence([0.1, 0.2, 0.3], [0.1, 0.3, 0.4], 0.1, [1, 1]), "repeat"),
    (lambda: equivalence([0.1, 0.2], [0.1, 0.3], 0.1, [1], confidence=1.5), "confidence"),
])
def test_bad_input_raises_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
