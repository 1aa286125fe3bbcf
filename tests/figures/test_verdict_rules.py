"""Issue 73: the three-valued verdicts (syw.pages.verdict_rules), each rule hit in each of its states, on the
rules' own inputs and through constructed trial sets read as docs/verdicts.md reads the records."""
import numpy as np
import pytest

from syw.analysis.group import Group
from syw.analysis.inference import budget_interval, compare
from syw.pages import verdict_rules as rules
from syw.pages.verdict_rules import Verdict
from syw.pages.verdicts_claims import HOUR, Claim, read

REACH = Claim(1, "the CNN needs 16 trials to reach 0.395", "reach", "cnn", target=0.395, paper=16)
CROSS = Claim(1, "LR is better up to about 10 trials", "crossover", "lr", "cnn", paper=10)


@pytest.mark.parametrize(("low", "high", "state"), [
    (11, 24, "supports"), (12, 20, "supports"),  # within [16 / 1.5, 24]
    (2, 4, "contradicts"), (25, 40, "contradicts"), (25, None, "contradicts"),  # wholly below, wholly above (not located)
    (7, 30, "undecided"), (8, None, "undecided"), (10, 20, "undecided"),  # reaching out of the range, or not located
])
def test_about(low, high, state):
    assert rules.about(low, high, 16) == state


@pytest.mark.parametrize(("leaders", "state"), [
    ({1: "lr", 5: None, 12: "cnn", 20: None}, "supports"),
    ({1: "lr", 5: None, 12: None, 20: None}, "undecided"),
    ({1: None, 5: None, 12: "cnn", 20: "cnn"}, "undecided"),  # no leader at n = 1
    ({1: "cnn", 5: None, 12: "cnn", 20: None}, "contradicts"),
    ({1: "lr", 5: None, 12: "cnn", 20: "lr"}, "contradicts"),  # LR ahead at 2n
])
def test_crossover(leaders, state):
    assert rules.crossover(leaders, "lr", "cnn", 10) == state


@pytest.mark.parametrize(("leaders", "state"), [
    ([["x", "x"], ["x"]], "supports"), ([["x", None], ["x"]], "undecided"), ([["x", "y"], ["x"]], "contradicts"),
    ([[None]], "undecided"),
])
def test_throughout(leaders, state):
    assert rules.throughout(leaders, "x") == state


@pytest.mark.parametrize(("low", "high", "state"), [
    (2.6, 9.0, "supports"), (-9.0, -3.0, "supports"), (-1.0, 2.0, "contradicts"), (1.3, 5.4, "undecided"), (-3.0, 1.0, "undecided"),
])
def test_at_least(low, high, state):
    assert rules.at_least(low, high, 2.5) == state


def test_words_and_the_join():
    assert str(Verdict("supports")) == "supports at 95%" and str(Verdict("contradicts")) == "contradicts at 95%"
    assert str(rules.verdict("undecided", {"lr": 50, "cnn": 50})) == "undecided with 50 trials per family"
    assert str(rules.verdict("undecided", {"cnn": 50})) == "undecided with 50 trials"
    assert str(rules.verdict("undecided", {"a": 20, "b": 30})) == "undecided with 20 and 30 trials"
    assert str(rules.untestable("data: none")) == "cannot be tested here (data: none)"
    assert rules.verdict("supports", {"cnn": 50}).sizes == ()  # named only when undecided
    sure, open_, no = Verdict("supports"), rules.verdict("undecided", {"cnn": 50}), Verdict("contradicts")
    assert rules.combine([sure, sure]) == sure and rules.combine([sure, no, open_]) == no
    both = rules.combine([sure, open_, rules.verdict("undecided", {"lr": 50, "cnn": 50})])
    assert str(both) == "undecided with 50 trials per family"  # one count per family, merged by name
    assert rules.combine([no, rules.untestable("scale: reduced")]).state == "untestable"
    mixed = rules.combine([open_, rules.verdict("undecided", {"lstm": 5}, unit="rerun", per="cell")])
    assert str(mixed) == "undecided with 50 trials; 5 reruns"
    with pytest.raises(ValueError, match="one of supports"):
        Verdict("neither")


def _grid(center: float, spread: float, n: int) -> np.ndarray:
    """n evenly spaced scores about ``center``: a deterministic stand-in for a family's trials."""
    return center + spread * np.linspace(-1.0, 1.0, n)


def test_budget_claims_on_constructed_trials_hit_each_verdict():
    # 400 trials locate a budget near 16 within [16 / 1.5, 24] (200 give 10-22 here: undecided)
    near = {"cnn": Group("cnn", _grid(0.3775, 0.02, 400))}
    found = budget_interval(near["cnn"].scores, 0.395)
    assert (found.estimate, found.low, found.high) == (15, 11, 20)
    assert str(read(REACH, near).verdict) == "supports at 95%"
    easy = {"cnn": Group("cnn", _grid(0.39, 0.03, 50))}  # reached in 2 trials: far below 16 / 1.5
    assert str(read(REACH, easy).verdict) == "contradicts at 95%"
    hard = {"cnn": Group("cnn", _grid(0.37, 0.03, 50))}  # not located with 50 trials (the limit is 9)
    reading = read(REACH, hard)
    assert str(reading.verdict) == "undecided with 50 trials" and "nothing can be located with 50 trials" in reading.interval
    assert reading.point.startswith("cnn: n = ") and reading.point.endswith("; N = 50)")
    fewer = {"cnn": Group("cnn", _grid(0.3775, 0.02, 200))}
    assert (budget_interval(fewer["cnn"].scores, 0.395).low, str(read(REACH, fewer).verdict)) == (10, "undecided with 200 trials")


def test_crossover_claims_on_constructed_trials_hit_each_verdict():
    lr = Group("lr", _grid(0.38, 0.01, 200), label="LR")
    late = Group("cnn", _grid(0.33, 0.09, 200), label="CNN")  # behind at n = 1, ahead from a few trials on
    diff = compare(lr.scores, late.scores, ("lr", "cnn"), ns=[1] + list(range(5, 21)))
    assert diff.leader()[0] == "lr" and "cnn" in diff.leader()[1:]
    assert str(read(CROSS, {"lr": lr, "cnn": late}).verdict) == "supports at 95%"
    ahead = Group("cnn", _grid(0.40, 0.01, 50), label="CNN")  # the CNN ahead at n = 1
    assert str(read(CROSS, {"lr": Group("lr", _grid(0.38, 0.01, 50), label="LR"), "cnn": ahead}).verdict) == "contradicts at 95%"
    twin = {"lr": Group("lr", _grid(0.38, 0.02, 50), label="LR"), "cnn": Group("cnn", _grid(0.38, 0.02, 50) + 1e-4, label="CNN")}
    reading = read(CROSS, twin)
    assert str(reading.verdict) == "undecided with 50 trials per family"
    assert "past the limit n = 9 at n = 10-20" in reading.interval


def test_time_claims_on_constructed_trials_hit_each_verdict():
    claim = Claim(2, "GloVe is best below about 2 hours", "lead", "glove", paper=2 * HOUR)
    fast = lambda n: np.full(n, 600.0)  # noqa: E731  ten minutes a trial
    slow = lambda n: np.full(n, 3 * HOUR)  # noqa: E731
    alone = {"glove": Group("glove", _grid(0.80, 0.01, 50), fast(50)), "elmo": Group("elmo", _grid(0.90, 0.01, 50), slow(50))}
    assert str(read(claim, alone).verdict) == "supports at 95%"  # no ELMo trial has finished by the window's middle
    both = {"glove": Group("glove", _grid(0.80, 0.01, 50), fast(50)), "elmo": Group("elmo", _grid(0.90, 0.01, 50), fast(50))}
    assert str(read(claim, both).verdict) == "contradicts at 95%"
    tied = {"glove": Group("glove", _grid(0.80, 0.05, 50), fast(50)), "elmo": Group("elmo", _grid(0.80, 0.05, 50), fast(50))}
    assert str(read(claim, tied).verdict) == "undecided with 50 trials per family"
