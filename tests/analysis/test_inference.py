"""Unit tests of the two-group comparison of tuning curves (issue 62): closed forms and exact identities."""
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from syw.analysis.compare import difference_table, first_crossing
from syw.analysis.expected_max import expected_max_unbiased
from syw.analysis.inference import budget_interval, compare, limit_budget, trials_needed
from syw.analysis.jackknife import jackknife_variance
from syw.analysis.multiplicity import FIRST_SHARE, first_then_rest


def brute_v(x, n):
    """Mean of max(S) over all n-subsets S: the U-statistic's definition."""
    return float(np.mean([max(s) for s in combinations(x, n)]))


def test_u_statistic_is_the_subset_mean_and_the_library_estimate():
    x = np.random.default_rng(0).normal(size=9)
    ns = np.arange(1, 10)
    assert np.allclose(expected_max_unbiased(x, ns), [brute_v(x, n) for n in ns], rtol=0, atol=1e-13)


def test_evenly_spaced_uniform_gives_n_over_n_plus_1_exactly_at_n_10000():
    # sum_i i C(i-1, n-1) = n C(N+1, n+1), so for x_i = i / (N+1) the estimate is n / (n+1), as E[max of n U(0,1)]
    big = 10_000
    x = np.arange(1, big + 1) / (big + 1)
    ns = np.array([1, 2, 3, 10, 100, 1000, 5000, 9999, 10_000])
    assert np.allclose(expected_max_unbiased(x[::-1], ns), ns / (ns + 1), rtol=0, atol=1e-12)
    assert np.allclose(expected_max_unbiased(1 - x, ns, maximize=False), 1 - ns / (ns + 1), rtol=0, atol=1e-12)


def test_jackknife_matches_brute_force_leave_one_out_and_is_s2_over_n_at_n1():
    x = np.random.default_rng(2).gamma(2.0, size=30)
    for n in (1, 2, 5, 29):
        loo = np.array([expected_max_unbiased(np.delete(x, j), n)[0] for j in range(x.size)])
        assert jackknife_variance(x, n)[0] == pytest.approx(29 / 30 * np.sum((loo - loo.mean()) ** 2), rel=1e-10)
    assert jackknife_variance(x, 1)[0] == pytest.approx(np.var(x, ddof=1) / x.size, rel=1e-12)
    with pytest.raises(ValueError, match="n < N"):
        jackknife_variance(x, 30)


@pytest.mark.parametrize("sizes", [(50, 50), (23, 41)])
def test_n1_is_welch_t_test(sizes):
    rng = np.random.default_rng(sum(sizes))
    a, b = rng.normal(0.70, 0.05, sizes[0]), rng.normal(0.68, 0.08, sizes[1])
    welch = stats.ttest_ind(a, b, equal_var=False)
    point = compare(a, b, at=[1])
    assert point.p[0] == pytest.approx(welch.pvalue, rel=1e-9)
    assert point.estimate[0] == pytest.approx(a.mean() - b.mean(), rel=1e-12)
    low, high = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (point.low[0], point.high[0]) == (pytest.approx(low, rel=1e-9), pytest.approx(high, rel=1e-9))
    assert compare(a, b, ns=[1]).p[0] == pytest.approx(welch.pvalue, rel=1e-9)  # one budget: no adjustment


def test_limit_budget():
    assert limit_budget(50) == 9 and limit_budget(200) == 37
    assert [trials_needed(n) for n in (9, 10, 37, 38)] == [48, 54, 197, 203]
    assert all(limit_budget(trials_needed(n)) >= n > limit_budget(trials_needed(n) - 1) for n in range(2, 60))
    assert trials_needed(1) == 1
    assert limit_budget(20) == 3 and limit_budget(100) == 18 and limit_budget(1) == 1
    assert limit_budget(50, confidence=0.9) == 11  # 50 ln 2 / ln 20
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError):
            limit_budget(bad)
    with pytest.raises(ValueError, match="confidence"):
        limit_budget(50, confidence=1.0)


def _groups(seed=3, size=50, gap=0.02):
    rng = np.random.default_rng(seed)
    return rng.normal(0.70, 0.04, size), rng.normal(0.70 - gap, 0.04, size)


def test_orientation_minimize_is_the_mirror():
    a, b = _groups()
    for kw in ({}, {"at": [1, 5, 9]}, {"adjust": "bonferroni"}):
        up, down = compare(a, b, **kw), compare(-a, -b, maximize=False, **kw)
        for field in ("estimate", "low", "high", "p"):
            assert np.allclose(getattr(up, field), getattr(down, field), equal_nan=True, rtol=1e-12, atol=1e-15)
        assert up.leader() == down.leader()
    assert np.allclose(expected_max_unbiased(-a, [1, 7], maximize=False), -expected_max_unbiased(a, [1, 7]))
    target = float(expected_max_unbiased(a, 4)[0])
    up, down = budget_interval(a, target), budget_interval(-a, -target, maximize=False)
    assert (up.estimate, up.low, up.high) == (down.estimate, down.low, down.high)


def test_table_and_no_leader_beyond_the_limit():
    a, b = _groups(gap=0.5)  # far apart: a leader wherever one may be named
    c = compare(a, b, names=("lstm", "nas"))
    table = difference_table([c])
    assert {"a", "b", "n", "a_better_by", "low", "high", "p", "leader", "claim", "limit"} <= set(table.columns)
    assert len(table) == 50 and (table["claim"] == "simultaneous").all() and (table["limit"] == 9).all()
    assert (table.loc[table["n"] <= 9, "leader"] == "lstm").all()
    assert (table.loc[table["n"] > 9, "leader"] == "").all() and table.loc[table["n"] > 9, "p"].isna().all()
    assert np.isinf(table.loc[table["n"] > 9, ["low", "high"]].to_numpy()).all()
    flipped = compare(b, a, names=("nas", "lstm"))
    assert flipped.leader() == c.leader() and np.allclose(flipped.estimate, -c.estimate)
    at = compare(a, b, at=[1, 5, 12])
    assert at.claim == "pointwise" and at.leader() == ["A", "A", None]


def test_simultaneous_claims_are_consistent_and_between_pointwise_and_bonferroni():
    a, b = _groups(seed=7, size=80, gap=0.015)
    ns = np.arange(1, limit_budget(80) + 1)
    point, maxt = compare(a, b, at=ns), compare(a, b, ns=ns, adjust="maxt")
    step, bonf = compare(a, b, ns=ns, adjust="stepdown"), compare(a, b, ns=ns, adjust="bonferroni")
    first = compare(a, b, ns=ns)
    width = {name: c.high - c.low for name, c in (("point", point), ("maxt", maxt), ("step", step), ("bonf", bonf))}
    assert np.all(width["point"] < width["maxt"]) and np.all(width["maxt"] < width["bonf"])
    assert np.all(width["point"] <= width["step"] + 1e-12) and np.all(width["step"] <= width["maxt"] + 1e-12)
    assert np.allclose(bonf.p, np.minimum(1, point.p * ns.size))
    for c in (point, maxt, step, bonf, first):
        assert [w is not None for w in c.leader()] == list(c.p <= 0.05)
        assert np.all((c.low <= c.estimate) & (c.estimate <= c.high))
    assert np.array_equal(compare(a, b, ns=ns, adjust="stepdown").low, step.low)  # deterministic
    assert np.array_equal(compare(a, b, ns=ns).low, first.low)


def test_step_down_names_what_the_single_step_names_and_more():
    """Romano-Wolf: the largest |T| meets the single step's critical value, the rest smaller ones: p-values
    and intervals never above the single step's, every leader it names named, and more over 40 pairs."""
    named = {"maxt": 0, "stepdown": 0}
    for seed in range(40):
        a, b = _groups(seed=seed, size=50, gap=0.012)
        maxt, step = compare(a, b, adjust="maxt"), compare(a, b, adjust="stepdown")
        live = ~np.isnan(step.p)
        assert np.all(step.p[live] <= maxt.p[live] + 1e-12)
        top = int(np.nanargmin(maxt.p))
        assert step.p[top] == pytest.approx(maxt.p[top])  # the first step is the single step
        assert np.all(step.high[live] - step.low[live] <= maxt.high[live] - maxt.low[live] + 1e-12)
        assert all(s is not None for s, m in zip(step.leader(), maxt.leader()) if m is not None)
        named["maxt"] += sum(m is not None for m in maxt.leader())
        named["stepdown"] += sum(s is not None for s in step.leader())
    assert named["stepdown"] > named["maxt"] > 0


def test_the_default_names_n1_where_welch_does_and_the_old_step_down_does_not():
    """Issue 73: A ahead at n = 1 by Welch's test (p = 0.025), no budget past it near significance. The step-down
    over all budgets tests n = 1 against the largest |t| over 9 budgets and misses it; the default tests n = 1
    first at 0.9 alpha, so its p is Welch's / 0.9."""
    rng = np.random.default_rng(22)
    a, b = rng.normal(0.70, 0.02, 50), rng.normal(0.69, 0.03, 50)
    welch = stats.ttest_ind(a, b, equal_var=False).pvalue
    assert welch == pytest.approx(0.0254, abs=1e-4)
    old, new = compare(a, b, adjust="stepdown"), compare(a, b)
    assert old.leader()[0] is None and old.p[0] == pytest.approx(0.0556, abs=1e-4)
    assert new.leader()[:9] == ["A"] + [None] * 8
    assert new.p[0] == pytest.approx(welch / FIRST_SHARE, rel=1e-9)
    low, _ = stats.ttest_ind(a, b, equal_var=False).confidence_interval(1 - FIRST_SHARE * 0.05)
    assert new.low[0] == pytest.approx(low, rel=1e-9)  # Welch's interval at 0.9 alpha


def test_first_then_rest_p_values_are_its_decisions_at_every_level():
    """The adjusted p is the least alpha at which the procedure names the leader (closed testing): the same p at
    80% to 99% (the budgets up to the 99% limit), a leader named exactly where p <= alpha."""
    named = 0
    for seed in range(12):
        a, b = _groups(seed=seed, size=60, gap=0.015)
        ns = np.arange(1, limit_budget(60, 0.99) + 1)
        p = compare(a, b, ns=ns).p
        for confidence in (0.8, 0.9, 0.95, 0.99):
            c = compare(a, b, ns=ns, confidence=confidence)
            assert np.allclose(c.p, p, rtol=1e-12, atol=0)
            assert [w is not None for w in c.leader()] == list(p <= 1 - confidence)
            named += sum(w is not None for w in c.leader())
    assert named > 20


def _covariance(seed: int, budgets: int, size: int = 40) -> np.ndarray:
    """The covariance across budgets of the difference from centred leave-one-out rows of two groups (its
    correlation is the jackknife's R)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(1, size))
    dev_a = 0.8 * base + 0.6 * rng.normal(size=(budgets, size))
    dev_b = rng.normal(size=(budgets, size))
    dev_a, dev_b = dev_a - dev_a.mean(axis=1, keepdims=True), dev_b - dev_b.mean(axis=1, keepdims=True)
    return (dev_a @ dev_a.T + dev_b @ dev_b.T) * ((size - 1) / size)


def test_alpha_passes_to_n1_once_every_other_budget_is_decided():
    """p_1 = 0.048 lies between 0.9 alpha and alpha: named when every other budget is (then n = 1 is tested at
    alpha), not when they are all near zero (then only 0.9 alpha is n = 1's)."""
    cov = _covariance(1, 6)
    p1 = 0.048
    z1 = stats.norm.isf(p1 / 2)
    decided = np.array([z1, 6.0, 6.5, 7.0, 6.2, 6.8])
    c, p = first_then_rest(cov, decided, 2 * stats.norm.sf(decided), 0, 0.05)
    assert np.all(np.abs(decided) > c) and p[0] == pytest.approx(p1, rel=1e-12) and np.all(p[1:] < 1e-3)
    assert c[0] == pytest.approx(stats.norm.isf(0.025), rel=1e-9)
    quiet = np.array([z1, 0.1, -0.2, 0.3, 0.0, 0.2])
    c, p = first_then_rest(cov, quiet, 2 * stats.norm.sf(np.abs(quiet)), 0, 0.05)
    assert abs(quiet[0]) < c[0] == pytest.approx(stats.norm.isf(0.9 * 0.05 / 2), rel=1e-9)
    assert p[0] == pytest.approx(p1 / 0.9, rel=1e-12) and np.all(p[1:] > 0.5)


def test_the_rest_get_more_than_a_bonferroni_split_when_they_move_with_n1():
    """With n = 1 not decided, the rest share P(H or max > c) = alpha with n = 1's test: where they are strongly
    correlated with n = 1, their critical value is far below the 0.1 alpha Bonferroni share's (Z ~ 2.81)."""
    rng = np.random.default_rng(2)
    base = rng.normal(size=(1, 80))
    dev = base + 0.05 * rng.normal(size=(5, 80))  # five budgets, correlation about 0.998
    dev -= dev.mean(axis=1, keepdims=True)
    z = np.array([1.0, 2.3, 2.2, 2.1, 2.0])
    c, p = first_then_rest(2 * dev @ dev.T, z, 2 * stats.norm.sf(z), 0, 0.05)
    assert np.all(np.abs(z[1:]) > c[1:]) and np.all(p[1:] <= 0.05) and np.all(c[1:] < 2.05)
    split = stats.norm.isf(0.1 * 0.05 / 2)
    assert split == pytest.approx(2.807, abs=1e-3) and np.all(c[1:] < split - 0.4)


def test_tied_groups_name_no_leader():
    c = compare(np.full(30, 0.7), np.full(30, 0.6))
    assert all(w is None for w in c.leader()) and np.isnan(c.p).all()


def test_budget_interval_on_evenly_spaced_scores():
    big = 200
    x = np.arange(1, big + 1) / (big + 1)
    bi = budget_interval(x, 0.8)  # n / (n+1) >= 0.8 first at n = 4
    assert bi.estimate == 4 and bi.limit == 37
    assert 1 <= bi.low <= 4 <= bi.high <= 37
    never = budget_interval(x, 0.999)
    assert never.estimate is None and never.high is None
    assert budget_interval(x, 0.0).estimate == 1


def test_the_crossover_interval_of_a_comparison():
    rng = np.random.default_rng(11)
    steady = rng.normal(0.70, 0.005, 400)  # better at n = 1
    wide = rng.normal(0.68, 0.06, 400)  # better from n = 2 (E max of 2 normals: mu + 0.56 sd)
    c = compare(steady, wide, names=("steady", "wide"))
    cross = first_crossing(c)
    assert cross is not None and (cross.leader, cross.previous) == ("wide", "steady")
    assert 1 <= cross.low <= 2 <= cross.high <= c.limit
    a, b = _groups(gap=0.5)
    assert first_crossing(compare(a, b)) is None  # A leads everywhere


@pytest.mark.parametrize("call, message", [
    (lambda: compare([], [0.1, 0.2]), "empty"),
    (lambda: compare([0.1, np.nan], [0.1, 0.2]), "finite"),
    (lambda: compare([0.1], [0.1, 0.2]), "at least 2"),
    (lambda: compare([0.1, 0.2], [0.1, 0.2], names=("x", "x")), "two different"),
    (lambda: compare([0.1, 0.2], [0.1, 0.2], at=[1], ns=[1]), "not both"),
    (lambda: compare([0.1, 0.2, 0.3], [0.1, 0.2, 0.3], at=[1, 1]), "repeat"),
    (lambda: compare([0.1, 0.2, 0.3], [0.1, 0.2], at=[3]), "exceeds"),
    (lambda: compare([0.1, 0.2], [0.1, 0.2], at=[0]), ">= 1"),
    (lambda: compare([0.1, 0.2], [0.1, 0.2], confidence=95), "confidence"),
    (lambda: compare([0.1, 0.2], [0.1, 0.2], adjust="holm"), "adjust"),
    (lambda: budget_interval([0.1, 0.2], float("nan")), "finite"),
    (lambda: expected_max_unbiased([0.1, 0.2], 3), "exceeds"),
])
def test_bad_input_raises_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
