"""Floors and the median beside the mean (syw.analysis.floors), by hand and on ptb_melis_reduced's RHN records."""
import json

import numpy as np
import pytest

from syw.analysis.expected_max import expected_max
from syw.analysis.floors import Floor, apply_floor, beyond, deciding_trial, largest_sway, one_trial_decides, sway_note
from syw.analysis.inference import shown_budgets
from syw.analysis.statistic import MEDIAN
from syw.core.paths import REPO

RHN = REPO / "results" / "ptb_melis_reduced" / "rhn.jsonl"


def test_scores_beyond_the_floor_count_at_it_in_either_direction():
    assert apply_floor([0.1, 0.3, 0.2], 0.2) == (pytest.approx([0.2, 0.3, 0.2]), 1)  # 0.2 itself is not beyond
    assert apply_floor([100.0, 1e34, 20000.0], 10000, maximize=False) == (pytest.approx([100.0, 10000, 10000]), 2)
    scores, count = apply_floor([0.1, 0.3], None)
    assert count == 0 and scores.tolist() == [0.1, 0.3]
    assert beyond([0.1, 0.5], 0.2).tolist() == [True, False]
    assert Floor(0.2, "chance over 5 classes").describe(True) == "scores below 0.2 (chance over 5 classes) count at 0.2"


def test_the_largest_sway_by_hand():
    scores = np.array([1.0, 2.0, 3.0, 100.0])
    i, move, spread = largest_sway(scores)
    assert i == 3 and spread == 2.0  # the range of 1, 2, 3
    ns = np.arange(1, 4)
    assert move == pytest.approx(np.max(np.abs(expected_max(scores, ns) - expected_max(scores[:3], ns))))
    # largest at n = 3: P(max = 100) = 1 - (3/4)^3, and so on down, against the rest's (3 * 19 + 2 * 7 + 1) / 27
    assert move == pytest.approx((100 * 37 + 3 * 19 + 2 * 7 + 1) / 64 - (3 * 19 + 2 * 7 + 1) / 27)
    assert one_trial_decides(scores) and not one_trial_decides([1.0, 2.0, 3.0, 4.0])
    # [1, 1, 2, 3]: leaving out 3 moves Eq. 8 at n = 3 by 2.45 - 1.70 = 0.75, within the rest's range of 1
    assert not one_trial_decides([1.0, 1.0, 2.0, 3.0])
    assert not one_trial_decides([1.0, 2.0])  # too few to say


def test_the_rhn_diverged_trial_sways_its_mean_until_floored():
    records = [json.loads(line) for line in RHN.read_text().splitlines()]
    values = np.array([r["value"] for r in records])
    diverged = next(r for r in records if r["value"] > 1e30)
    assert diverged["trial"] == 10 and diverged["value"] == pytest.approx(1.0167e34, rel=1e-4)
    i, move, spread = largest_sway(values, maximize=False)
    assert records[i]["trial"] == 10 and move > 1e32 > spread
    note = sway_note("rhn", values, deciding_trial(values, maximize=False))
    assert note.startswith("group 'rhn': one trial (score 1.01671e+34) moves the mean curve")
    floored, count = apply_floor(values, 10000, maximize=False)
    assert count == 2 and not one_trial_decides(floored, maximize=False) and deciding_trial(floored, maximize=False) is None
    # the median does not move with the diverged trial: floored or not, it is the same curve
    ns = np.arange(1, values.size + 1)
    assert MEDIAN.curve(values, ns, maximize=False) == pytest.approx(MEDIAN.curve(floored, ns, maximize=False))


def test_largest_sway_matches_leaving_out_every_trial():
    """Only the lowest and two highest scores are tried; leaving out each one in turn finds the same move."""
    rng = np.random.default_rng(1)
    for t in range(120):
        m = int(rng.integers(3, 25))
        x = [rng.normal(0, 1, m), rng.lognormal(0, 2, m), np.r_[rng.normal(0, 1, m - 1), [1e6]]][t % 3]
        x = np.round(x, 1) if t % 4 == 0 else x
        ns = np.arange(1, x.size)
        full = expected_max(x, ns, maximize=bool(t % 2))
        brute = max(float(np.max(np.abs(full - expected_max(np.delete(x, i), ns, maximize=bool(t % 2)))))
                    for i in range(x.size))
        assert np.isclose(largest_sway(x, maximize=bool(t % 2))[1], brute, rtol=1e-9, atol=1e-12)


def test_past_1000_trials_the_sway_is_measured_at_the_budgets_shown():
    """Linear cost: on 3,000 trials the move is the largest over shown_budgets(N - 1), not every n."""
    x = np.random.default_rng(2).normal(0, 1, 3000)
    ns = shown_budgets(x.size - 1)
    assert ns.size < 300 and ns[-1] == x.size - 1
    full = expected_max(x, ns)
    moves = [float(np.max(np.abs(full - expected_max(np.delete(x, i), ns)))) for i in np.argsort(x)[[0, -2, -1]]]
    assert largest_sway(x)[1] == pytest.approx(max(moves), rel=1e-12)
