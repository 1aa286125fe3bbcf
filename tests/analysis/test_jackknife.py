"""The jackknife over blocks of trials (issue 72) against the whole one and against a long-double reference."""
import numpy as np
import pytest

from syw.analysis import jackknife
from syw.analysis.inference import compare, limit_budget, shown_budgets
from syw.analysis.jackknife import _blocked, _deviations, spread


def _reference(x: np.ndarray, n: int) -> float:
    """The jackknife variance of V_n in 80-bit floats: the weights of N - 1 trials by their product, renormalized;
    the leave-one-out values as the running sum of weighted gaps, centred on their mean."""
    ld = np.longdouble
    size = x.size - 1
    i = np.arange(size, 0, -1).astype(ld)
    ratios = np.ones(size, dtype=ld)
    ratios[1:] = np.clip((i[:-1] - n) / (i[:-1] - 1), 0, None)
    w = (ld(n) / size * np.cumprod(ratios))[::-1]
    w /= w.sum()
    loo = np.concatenate([[ld(0)], np.cumsum(-w * np.diff(x.astype(ld)))])
    loo -= loo.mean()
    return float(ld(x.size - 1) / x.size * np.sum(loo * loo))


@pytest.mark.parametrize("block", [7_000, 50_000, 1_000_000])
def test_blocks_give_the_whole_jackknife(monkeypatch, block):
    """Blocks of any size (a budget per 40 trials, a few, one block), budgets in any order: the variances, Kish's
    degrees of freedom and the covariance of the whole jackknife, within 1e-11 on 2,000 skewed scores with ties."""
    monkeypatch.setattr(jackknife, "_BLOCK_CELLS", block)
    x = np.sort(np.round(np.random.default_rng(3).lognormal(size=2_000), 3))
    budgets = shown_budgets(x.size)
    budgets = budgets[budgets <= limit_budget(x.size)]
    if block == 50_000:
        budgets = budgets[::-1]
    whole, blocked = spread(x, budgets, True), _blocked(x, budgets, True)
    dev = _deviations(x, budgets)
    assert np.asarray(whole.var) == pytest.approx((x.size - 1) / x.size * np.sum(dev**2, axis=1), rel=1e-12)
    np.testing.assert_allclose(blocked.var, whole.var, rtol=1e-11)
    np.testing.assert_allclose(blocked.dof, whole.dof, rtol=1e-11)
    rows = np.arange(budgets.size)
    cov = whole.covariance(rows)
    np.testing.assert_allclose(blocked.covariance(rows), cov, rtol=0, atol=1e-11 * np.abs(cov).max())
    assert blocked.covariance(rows[2:5]) == pytest.approx(cov[2:5, 2:5], rel=1e-10)


def test_blocks_match_a_long_double_reference_at_200000_trials():
    """At 200,000 trials the blocked jackknife is within 1e-11 of an 80-bit reference at n = 1 to 30,000 (the
    whole one, by prefix and suffix sums, drifted by up to 3e-9 at this size, hence blocks past 2,000 trials)."""
    x = np.sort(np.random.default_rng(0).normal(0.5, 0.05, 200_000))
    budgets = np.array([1, 2, 5, 50, 500, 5_000, 30_000])
    got = spread(x, budgets).var
    assert got == pytest.approx([_reference(x, int(n)) for n in budgets], rel=1e-11)
    assert got[0] == pytest.approx(np.var(x, ddof=1) / x.size, rel=1e-11)  # n = 1: s^2 / N


def test_a_group_in_several_pairs_is_done_once(monkeypatch):
    """The same sample and budgets again (a group in two pairs) give the kept spread; asking for the covariance
    after a spread without it computes it once more."""
    calls = []
    blocked = jackknife._blocked
    monkeypatch.setattr(jackknife, "_blocked", lambda *args: calls.append(args[2]) or blocked(*args))
    x, budgets = np.sort(np.random.default_rng(7).normal(size=3_001)), np.array([1, 3, 9])
    first = spread(x, budgets)
    assert spread(x.copy(), budgets) is first and calls == [False]
    with_cov = spread(x, budgets, True)
    assert calls == [False, True] and spread(x, budgets) is with_cov and with_cov.covariance([0, 2]).shape == (2, 2)
    assert spread(x[:-1], budgets) is not with_cov and calls == [False, True, False]
    assert not first.var.flags.writeable


def test_no_covariance_unless_asked():
    x = np.sort(np.random.default_rng(1).normal(size=3_000))
    with pytest.raises(ValueError, match="without its covariance"):
        spread(x, np.array([1, 2]), False).covariance(np.array([0, 1]))


def test_compare_past_the_whole_size_names_the_leader_it_names_below_it():
    """Two groups of 2,001 trials (blocked) and the same less one trial each (whole): the same leaders at every
    budget shown and intervals within 1e-3 of the difference's scale."""
    rng = np.random.default_rng(5)
    a, b = rng.normal(0.50, 0.05, 2_001), rng.normal(0.51, 0.05, 2_001)
    big, small = compare(a, b, ns=np.arange(1, 200)), compare(a[:-1], b[:-1], ns=np.arange(1, 200))
    assert big.leader() == small.leader() and set(big.leader()[:10]) == {"B"}
    np.testing.assert_allclose(big.low[:100], small.low[:100], atol=1e-3)
