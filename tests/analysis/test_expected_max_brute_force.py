"""Eq. 8, its SD (section 3.3) and the unbiased estimator against enumeration at small N and n: every
one of the N^n equally likely draws with replacement, and every one of the C(N, n) subsets."""
import itertools
import statistics

import pytest

from syw.analysis import expected_max, expected_max_std, expected_max_unbiased
from tests.support import oracle

CASES = [
    [0.3, 0.5, 0.4, 0.2, 0.45],      # distinct
    [0.7, 0.1, 0.7, 0.4, 0.1, 0.7],  # ties: three of 0.7, two of 0.1
    [2.0, -1.0, 0.5],                # negative values
    [0.42],                          # N = 1
]


def draws(scores, n):
    """Every ordered draw of n indices with replacement: N^n of them, each equally likely."""
    return itertools.product(scores, repeat=n)


@pytest.mark.parametrize("scores", CASES)
@pytest.mark.parametrize("maximize", [True, False])
def test_eq8_and_its_sd_are_the_mean_and_sd_over_all_n_to_the_n_draws(scores, maximize):
    best = max if maximize else min
    for n in range(1, 5):
        maxima = [best(draw) for draw in draws(scores, n)]
        assert len(maxima) == len(scores) ** n
        mean, sd = statistics.fmean(maxima), statistics.pstdev(maxima)
        assert expected_max(scores, [n], maximize=maximize)[0] == pytest.approx(mean, abs=1e-12)
        assert expected_max_std(scores, [n], maximize=maximize)[0] == pytest.approx(sd, abs=1e-9)
        if maximize:  # the tests' own formulas, checked here too
            assert oracle.eq8(scores, n) == pytest.approx(mean, abs=1e-12)
            assert oracle.eq8_sd(scores, n) == pytest.approx(sd, abs=1e-9)


@pytest.mark.parametrize("scores", CASES)
@pytest.mark.parametrize("maximize", [True, False])
def test_the_unbiased_estimator_is_the_mean_over_all_subsets(scores, maximize):
    best = max if maximize else min
    for n in range(1, len(scores) + 1):
        maxima = [best(subset) for subset in itertools.combinations(scores, n)]
        mean = statistics.fmean(maxima)
        assert expected_max_unbiased(scores, [n], maximize=maximize)[0] == pytest.approx(mean, abs=1e-12)
        if maximize:
            assert oracle.unbiased(scores, n) == pytest.approx(mean, abs=1e-12)


def test_with_and_without_replacement_agree_only_at_n_1_and_differ_at_n_N():
    scores = CASES[0]
    assert expected_max(scores, [1])[0] == pytest.approx(expected_max_unbiased(scores, [1])[0]) == pytest.approx(0.37)
    # without replacement, all N scores drawn: the max is certain; with replacement it is not
    assert expected_max_unbiased(scores, [5])[0] == pytest.approx(0.5)
    assert expected_max(scores, [5])[0] < 0.5
