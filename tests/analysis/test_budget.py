"""Budget inference on curves with known answers."""
import numpy as np
import pytest

from syw.analysis import Crossover, Lead, budget_to_reach, crossovers, prob_beats, time_axis, time_crossovers, time_leaders


def test_budget_to_reach_first_hit():
    curve = [0.30, 0.35, 0.39, 0.3951, 0.40]
    assert budget_to_reach(curve, 0.395) == 4
    assert budget_to_reach(curve, 0.30) == 1
    assert budget_to_reach(curve, 0.41) is None
    # compared at reported precision, 0.3946 counts as 0.395
    assert budget_to_reach([0.3944, 0.3946], 0.395) is None
    assert budget_to_reach([0.3944, 0.3946], 0.395, decimals=3) == 2


def test_budget_lower_is_better():
    assert budget_to_reach([5.0, 4.0, 3.0], 3.5, maximize=False) == 3


def test_time_axis():
    np.testing.assert_allclose(time_axis(3, 10.0), [10, 20, 30])
    with pytest.raises(ValueError, match="positive"):
        time_axis(3, 0.0)


def test_crossovers_on_trials():
    lr = [0.34, 0.37, 0.38, 0.385, 0.39]
    cnn = [0.29, 0.35, 0.38, 0.39, 0.40]
    assert crossovers(lr, cnn, ("LR", "CNN")) == [Crossover(at=4, leader="CNN", previous="LR")]
    assert crossovers(cnn, cnn) == []
    # lower is better flips the leader
    assert crossovers(lr, cnn, ("LR", "CNN"), maximize=False) == [Crossover(at=4, leader="LR", previous="CNN")]


def test_crossovers_multiple():
    a, b = [1, 3, 1, 3], [2, 2, 2, 2]
    assert [c.at for c in crossovers(a, b)] == [2, 3, 4]


def test_time_crossovers_known_answer():
    a = [0.5, 0.6, 0.7, 0.8]  # every 1 s
    b = [0.65, 0.66, 0.67, 0.68]  # every 2 s
    # grid: 2 (a=.6 vs b=.65 -> B), 3 (.7 vs .65 -> A) ...
    assert time_crossovers(a, 1.0, b, 2.0, ("A", "B")) == [Crossover(at=3.0, leader="A", previous="B")]
    # B has no trial before 2 s, so A's lead at 1 s is not a comparison; on the trial axis B leads to n = 3
    assert crossovers(a, b, ("A", "B")) == [Crossover(at=3, leader="A", previous="B")]
    assert time_crossovers(b, 2.0, a, 1.0, ("B", "A")) == [Crossover(at=3.0, leader="A", previous="B")]


def test_time_leaders_known_answer():
    a = ([0.5, 0.6, 0.7], 1.0)  # spent at 3 s, then held at 0.7
    b = ([0.65, 0.75], 2.0)
    c = ([0.4, 0.9], 3.0)
    # grid 1, 2, 3, 4, 6 s: A alone; B .65 > A .6; A .7 > B .65; B .75 > A's held .7; C .9
    expected = [Lead(1.0, 2.0, "A"), Lead(2.0, 3.0, "B"), Lead(3.0, 4.0, "A"), Lead(4.0, 6.0, "B"), Lead(6.0, 6.0, "C")]
    assert time_leaders({"A": a, "B": b, "C": c}) == expected
    flipped = {k: ([1 - v for v in curve], d) for k, (curve, d) in {"A": a, "B": b, "C": c}.items()}
    assert time_leaders(flipped, maximize=False) == expected
    # a tie keeps the leader; the pairwise crossovers agree where only two families compete
    assert time_leaders({"A": ([0.5, 0.6], 1.0), "B": ([0.6, 0.6], 2.0)}) == [Lead(1.0, 4.0, "A")]
    assert [x.at for x in time_crossovers(*a, *b, ("A", "B"))] == [3.0]


def test_prob_beats():
    assert prob_beats([1, 2], [1, 2], 1) == pytest.approx(0.5)
    assert prob_beats([3], [1, 2], 5) == 1.0
    assert prob_beats([0.0], [1.0], 1, maximize=False) == 1.0
    # A = {0, 1}, B = {0.5}; best-of-2 of A is 1 with prob 3/4
    assert prob_beats([0, 1], [0.5], 2) == pytest.approx(0.75)
    # symmetry: P(A beats B) + P(B beats A) = 1 (ties counted half)
    a, b = [0.1, 0.2, 0.2, 0.4], [0.2, 0.3]
    assert prob_beats(a, b, 3, 2) + prob_beats(b, a, 2, 3) == pytest.approx(1.0)
    # Monte Carlo check
    rng = np.random.default_rng(0)
    da, db = rng.choice(a, (200_000, 3)).max(1), rng.choice(b, (200_000, 2)).max(1)
    mc = np.mean(da > db) + 0.5 * np.mean(da == db)
    assert prob_beats(a, b, 3, 2) == pytest.approx(mc, abs=0.005)


def test_overtakes_from_known_curves():
    from syw.analysis import overtakes_from

    assert overtakes_from([1, 2, 3, 4], [2, 2.5, 2.9, 3]) == 3  # B ahead at 1-2, A from 3 on
    assert overtakes_from([1, 3, 1, 4, 5], [2, 2, 2, 2, 2]) == 4  # A leads at 2, loses it, leads for good from 4
    assert overtakes_from([3, 3, 3], [1, 2, 2.5]) == 1  # A ahead throughout
    assert overtakes_from([1, 2, 3], [2, 3, 4]) is None  # never
    assert overtakes_from([3, 1], [2, 2]) is None  # ahead, then not at the end
    assert overtakes_from([1, 2, 2], [2, 2, 2]) is None  # ties at the end keep B
    assert overtakes_from([2, 1], [1, 2], maximize=False) == 2  # lower is better
    assert overtakes_from([2, 2, 3, 4], [2, 2, 2.5, 3]) == 3  # tied at 1-2: nobody leads until A does at 3
    assert overtakes_from([2, 3, 3, 4], [2, 2, 3, 3]) == 2  # a later tie keeps A as leader


def test_bootstrap_overtake():
    from syw.analysis import bootstrap_overtake

    rng = np.random.default_rng(1)
    strong, weak = rng.normal(1.0, 0.1, 50), rng.normal(0.0, 0.1, 50)
    assert (bootstrap_overtake(strong, weak, 20, 200) == 1).all()  # always ahead from n = 1
    assert (bootstrap_overtake(weak, strong, 20, 200) == 0).all()  # never
    # higher mean, lower spread: A leads at n = 1, B overtakes at some larger n in most resamples
    steady, risky = rng.normal(0.5, 0.01, 50), rng.normal(0.4, 0.2, 50)
    at = bootstrap_overtake(risky, steady, 50, 300, seed=3)
    assert (at > 1).mean() > 0.9 and np.array_equal(at, bootstrap_overtake(risky, steady, 50, 300, seed=3))
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_overtake(strong, weak, 5, 0)
