"""The trial planner (syw/analysis/power.py): the simulated test is compare's, the sizes match the classic
formula where it holds, grow with what is asked, respect the cap and the pilot's limit, and bad input is refused."""
import math

import numpy as np
import pytest
from scipy import optimize, stats

from syw.analysis.inference import compare, limit_budget, trials_needed
from syw.analysis.power import decisions, plan, power_at


def normal_pool(size: int, shift: float = 0.0) -> np.ndarray:
    """size normal quantiles with mean exactly ``shift`` and SD exactly 1: a pilot whose effect is known."""
    q = stats.norm.ppf((np.arange(size) + 0.5) / size)
    return (q - q.mean()) / q.std() + shift


def classic_size(effect: float, power: float = 0.8, confidence: float = 0.95) -> float:
    """2 (z_(1 - alpha/2) + z_power)^2 / effect^2: two-sample normal approximation, SD 1 per group."""
    z = stats.norm.ppf(1 - (1 - confidence) / 2) + stats.norm.ppf(power)
    return 2 * z * z / effect**2


def test_decisions_are_what_compare_names():
    rng = np.random.default_rng(7)
    agree, named = 0, set()
    for size in (4, 12, 30, 61):
        for n in (1, 2, 3, 5, 9):
            if n > size:
                continue
            xa = np.sort(rng.normal(0.2, 1, (30, size)).round(1), axis=1)  # rounding: ties, as real scores have
            xb = np.sort(rng.normal(0.0, 1, (30, size)).round(1), axis=1)
            got = decisions(xa, xb, n, 0.9)
            for d in range(30):
                leader = compare(xa[d], xb[d], at=[n], confidence=0.9).leader()[0]
                agree += got[d] == {"A": 1, "B": -1, None: 0}[leader]
                named.add(leader)
    assert agree == 30 * 18  # every (size, n) with n <= size, 30 sample pairs each
    assert named == {"A", "B", None}


@pytest.mark.slow
def test_welch_size_at_n1_matches_the_normal_formula():
    """At n = 1 the test is Welch's: K for 80% at effect 0.5 SD is 2 (1.96 + 0.84)^2 / 0.25 = 62.8 (63.7 with t's
    critical value at about 124 degrees of freedom); the power at K = 40 is Phi(0.5 sqrt(20) - 1.96) = 0.609."""
    a, b = normal_pool(20_000, 0.5), normal_pool(20_000)
    (row,) = plan(a, b, at=[1], method="resample", draws=2_000)
    assert row.leader == "A" and row.limit == limit_budget(20_000) and row.least == 1
    assert abs(row.trials_per_group - classic_size(0.5)) <= 4
    assert 0.8 <= row.power <= 0.84
    assert abs(power_at(a, b, 1, 40, method="resample", draws=2_000) - 0.609) <= 3 * math.sqrt(0.24 / 2_000)
    # a pilot this large is sure of its difference: the bootstrap's allowance for it changes little
    (boot,) = plan(a, b, at=[1], draws=2_000)
    assert abs(boot.trials_per_group - classic_size(0.5)) <= 5


def assurance_size(z: float, pilot: int, power: float = 0.8) -> float:
    """K with Phi((z r - 1.96) / sqrt(1 + r^2)) = power, r^2 = K / pilot: the power averaged over a normal
    effect centred on the pilot's, with the pilot's uncertainty (pilot t = z): the bootstrap's, approximately."""
    def gap(r: float) -> float:
        return stats.norm.cdf((z * r - stats.norm.ppf(0.975)) / math.sqrt(1 + r * r)) - power
    return pilot * optimize.brentq(gap, 0.01, 50.0) ** 2


def test_the_bootstrap_allows_for_a_small_pilots_noise():
    """20 trials per group 0.8 SD apart (pilot t 2.53): the plug-in asks for about the classic 24.5, the
    bootstrap for what averaging over the pilot's uncertainty asks, about 35. 0.15 SD apart (t 0.47): no size
    gives the bootstrap 80%, since the pilot's leader is itself uncertain (about Phi(0.47) = 0.68), while the
    plug-in promises 80% at about 700."""
    a, b = normal_pool(20, 0.8), normal_pool(20)
    (plug,) = plan(a, b, at=[1], method="resample", draws=2_000)
    (boot,) = plan(a, b, at=[1], draws=2_000)
    assert abs(plug.trials_per_group - classic_size(0.8)) <= 3
    assert abs(boot.trials_per_group - assurance_size(0.8 / math.sqrt(2 / 20), 20)) <= 4
    assert boot.trials_per_group >= plug.trials_per_group + 5
    a, b = normal_pool(20, 0.15), normal_pool(20)
    (plug,) = plan(a, b, at=[1], method="resample", draws=500, cap=2_000)
    (boot,) = plan(a, b, at=[1], draws=500, cap=2_000)
    assert abs(plug.trials_per_group - classic_size(0.15)) <= 0.1 * classic_size(0.15)
    assert boot.trials_per_group is None and 0.6 <= boot.power <= 0.75


@pytest.mark.slow
def test_power_grows_with_the_trials_and_the_size_with_what_is_asked():
    rng = np.random.default_rng(3)
    a, b = np.minimum(1, 0.40 + 0.03 * rng.lognormal(0, 0.8, 60)), np.minimum(1, 0.385 + 0.03 * rng.lognormal(0, 0.8, 60))
    powers = [power_at(a, b, 3, k, draws=400) for k in (17, 30, 60, 120, 240)]
    assert powers == sorted(powers) and powers[-1] - powers[0] >= 0.3
    assert power_at(a, b, 3, trials_needed(3) - 1, draws=400) == 0.0  # no claim at n = 3 with 16 trials
    sizes = [plan(a, b, [3], power=p, method="resample", draws=400)[0].trials_per_group for p in (0.6, 0.8, 0.9)]
    assert sizes[0] < sizes[1] < sizes[2]
    assert plan(a, b, [3], confidence=0.9, method="resample", draws=400)[0].trials_per_group < sizes[1]
    # the bootstrap's power at a size is the pilot's chance of being right at most: 0.9 is out of reach here
    boot = [plan(a, b, [3], power=p, draws=400)[0] for p in (0.6, 0.8, 0.9)]
    assert boot[0].trials_per_group < boot[1].trials_per_group and boot[2].trials_per_group is None


def test_a_clear_difference_needs_only_the_trials_the_limit_asks():
    a, b = normal_pool(100, 3.0), normal_pool(100)
    rows = plan(a, b, at=[1, 5, 9], draws=300)
    assert [r.trials_per_group for r in rows] == [4, trials_needed(5), trials_needed(9)] == [4, 27, 48]
    assert rows[0].power >= 0.8 and rows[1].power >= 0.99 and rows[2].power >= 0.99  # the floor binds at n = 5, 9


def test_the_cap_and_the_pilots_limit():
    a, b = normal_pool(50, 0.3), normal_pool(50)
    (row,) = plan(a, b, at=[1], method="resample", cap=60, draws=500)
    assert row.trials_per_group is None
    assert row.power == power_at(a, b, 1, 60, method="resample", draws=500) < 0.8
    (row,) = plan(a, b, at=[5], cap=20, draws=500)  # n = 5 needs 27 trials per group for any claim
    assert (row.trials_per_group, row.power, row.least) == (None, 0.0, 27)
    far = plan(a, b, at=[9, 10], draws=200)  # 50 trials speak for n <= 9
    assert far[0].trials_per_group is not None and far[0].limit == 9
    assert far[1].trials_per_group is None and math.isnan(far[1].power) and far[1].leader is None


def test_a_tie_has_no_leader_and_lower_is_better_mirrors():
    a = normal_pool(40)
    (row,) = plan(a, a.copy(), at=[1], draws=100)
    assert row.leader is None and row.trials_per_group is None and math.isnan(row.power)
    assert math.isnan(power_at(a, a.copy(), 1, 50, draws=100))
    b = normal_pool(40, 0.7)
    up = plan(b, a, at=[1, 3], draws=300, seed=5, names=("big", "small"))
    down = plan(-b, -a, at=[1, 3], draws=300, seed=5, maximize=False, names=("big", "small"))
    assert up == down and up[0].leader == "big"
    assert plan(b, a, at=[1, 3], draws=300, seed=5, names=("big", "small")) == up  # seeded: the same plan


@pytest.mark.parametrize("kwargs, message", [
    (dict(power=1.2), "power must be in (0, 1), got 1.2"),
    (dict(power="high"), "power must be in (0, 1), got 'high'"),
    (dict(confidence=0.0), "confidence must be in (0, 1), got 0.0"),
    (dict(cap=1), "cap must be an integer >= 2, got 1"),
    (dict(draws=0), "draws must be a positive integer, got 0"),
    (dict(method="normal"), "method must be one of 'bootstrap', 'resample', got 'normal'"),
    (dict(at=[]), "budgets must be a non-empty 1-D sequence of integers"),
    (dict(at=[0]), "budget n must be >= 1, got 0"),
    (dict(at=[1.5]), "budgets must be integers"),
    (dict(at=[3, 3]), "budgets must not repeat, got [3, 3]"),
    (dict(scores_a=[0.5, float("nan")]), "scores must be finite"),
    (dict(scores_b=[0.5]), "the pilot of group B needs at least 2 trials, got 1"),
    (dict(names=("A", "A")), "names must be two different labels"),
])
def test_bad_input_is_refused_with_a_clear_message(kwargs, message):
    args = dict(scores_a=[0.1, 0.2, 0.3], scores_b=[0.2, 0.3, 0.4], at=[1]) | kwargs
    with pytest.raises(ValueError) as err:
        plan(args.pop("scores_a"), args.pop("scores_b"), args.pop("at"), **args)
    assert message in str(err.value)


def test_power_at_refuses_a_size_below_one():
    with pytest.raises(ValueError, match="trials must be an integer >= 1, got 0"):
        power_at([0.1, 0.2], [0.3, 0.4], 1, 0)
