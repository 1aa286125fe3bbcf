"""syw.analysis.intervals (issue 73): the intervals the three-valued verdicts read."""
import numpy as np
import pytest

from syw.analysis.inference import compare
from syw.analysis.intervals import compare_at, gap_interval, sd_interval


def test_compare_at_equal_budgets_is_compare_with_the_budget_stated():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.40, 0.02, 50), rng.normal(0.39, 0.03, 60)
    for n in (1, 4, 9):
        got, diff = compare_at(a, n, b, n), compare(a, b, ("a", "b"), at=[n])
        assert (got.estimate, got.low, got.high) == pytest.approx((diff.estimate[0], diff.low[0], diff.high[0]), abs=1e-12)
    low = compare_at(-a, 3, -b, 3, maximize=False)  # lower is better: the same difference, oriented
    high = compare_at(a, 3, b, 3)
    assert (low.estimate, low.low, low.high) == pytest.approx((high.estimate, high.low, high.high), abs=1e-12)


def test_compare_at_two_budgets_and_past_the_limit():
    a, b = np.linspace(0.0, 1.0, 50), np.linspace(0.0, 1.0, 50)
    # the expected best of 3 of an even grid against the best of 1 (the mean): (3/4)(N+1)/(N) scaled, against 0.5
    got = compare_at(a, 3, b, 1)
    assert got.estimate == pytest.approx(0.75 * 51 / 50 - 0.25 * 1 / 50 - 0.5 * 1, abs=0.02) and got.low > 0
    past = compare_at(a, 10, b, 1)  # the limit of 50 trials is 9: no interval at n = 10
    assert not past.located and past.estimate > 0
    with pytest.raises(ValueError, match="from 1 to the group's 50 trials"):
        compare_at(a, 51, b, 1)


@pytest.mark.slow
def test_compare_at_keeps_its_level_where_two_budgets_tie():
    """A's best of 1 (its mean) against B's best of 2, B shifted so the two are equal: told apart in about 5%."""
    rng = np.random.default_rng(7)
    pool = rng.normal(0.0, 1.0, 200_000)
    shift = np.mean(pool) - np.mean(np.maximum(pool[::2], pool[1::2]))  # E max of 2 draws, by halves of the pool
    rejected = 0
    for _ in range(1_000):
        a, b = rng.choice(pool, 50), rng.choice(pool, 50) + shift
        got = compare_at(a, 1, b, 2)
        rejected += got.low > 0 or got.high < 0
    assert 0.025 <= rejected / 1_000 <= 0.075


@pytest.mark.slow
def test_sd_and_gap_intervals_cover_at_their_level():
    rng = np.random.default_rng(3)
    sd_in = gap_in = 0
    for _ in range(2_000):
        a, b = rng.normal(1.0, 0.4, 5), rng.normal(0.0, 0.4, 5)
        sd = sd_interval(a)
        sd_in += sd.low <= 0.4 <= sd.high
        gap = gap_interval(a, b)
        gap_in += gap.low <= 2.5 <= gap.high
    assert 0.935 <= sd_in / 2_000 <= 0.965 and 0.935 <= gap_in / 2_000 <= 0.965


def test_sd_and_gap_interval_numbers():
    sd = sd_interval([1.0, 2.0, 3.0])  # SD 1 on 2 degrees of freedom: sqrt(2 / chi2 quantiles 7.378 and 0.0506)
    assert (sd.estimate, sd.low, sd.high) == pytest.approx((1.0, 0.5207, 6.2847), abs=1e-4)
    gap = gap_interval([101.0, 102.0, 103.0], [130.0, 131.0, 132.0])
    assert gap.estimate == pytest.approx(-29.0) and gap.low < -29.0 < gap.high < 0
    with pytest.raises(ValueError, match="positive pooled SD"):
        gap_interval([1.0, 1.0], [2.0, 2.0])
