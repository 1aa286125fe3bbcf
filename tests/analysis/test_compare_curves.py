"""The difference of two tuning curves (syw.analysis.compare): its band's construction, the budgets where one
group leads, the crossover interval and the report's sentence; its coverage by simulation."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from syw.analysis.bands import confidence_bands
from syw.analysis.compare import Difference, difference, first_crossing, leaders_by_n, sentence, stretches
from syw.analysis.statistic import Statistic
from syw.core.entry import run_main
from tests.support.synthetic_scores import BIMODAL, SPREAD, STEADY


def test_the_band_is_each_groups_band_at_root_c_crossed():
    """low = low_A - high_B and high = high_A - low_B with each group's band at level sqrt(0.9)."""
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.2, 0.6, 30), rng.uniform(0.1, 0.7, 40)
    diff = difference(a, b, ("a", "b"), confidence=0.9)
    ns = np.arange(1, 31)
    low_a, point_a, high_a = confidence_bands(a, ns, confidence=np.sqrt(0.9))
    low_b, point_b, high_b = confidence_bands(b, ns, confidence=np.sqrt(0.9))
    assert diff.ns.tolist() == ns.tolist()  # n up to the smaller N
    np.testing.assert_allclose(diff.low, low_a - high_b)
    np.testing.assert_allclose(diff.high, high_a - low_b)
    np.testing.assert_allclose(diff.estimate, point_a - point_b)
    assert np.all(diff.low <= diff.estimate) and np.all(diff.estimate <= diff.high)


def test_lower_is_better_flips_the_orientation():
    a, b = np.linspace(0.1, 0.2, 200), np.linspace(0.5, 0.6, 200)  # A's losses are lower: A is better
    diff = difference(a, b, ("a", "b"), maximize=False)
    assert np.all(diff.estimate > 0) and "b" not in diff.leader() and diff.leader()[0] == "a"


def test_far_apart_groups_lead_until_the_unseen_tail_could_decide():
    """0.9 against 0.1: the better group leads from n = 1, the other never; past some n the mass the
    band allows above every score seen (the metric's bound, 1) could make up the gap, so the lead
    stops there, and more trials push that n further out."""
    leads = {}
    for size in (200, 800):
        far = difference(np.linspace(0.85, 0.95, size), np.linspace(0.05, 0.15, size), ("hi", "lo"))
        parts = stretches(far)
        assert parts[0][0] == "hi" and parts[0][1] == 1 and all(who is None for who, _, _ in parts[1:])
        assert first_crossing(far) is None
        leads[size] = parts[0][2]
    assert 5 <= leads[200] < leads[800]
    same = np.random.default_rng(1).uniform(0.3, 0.5, 40)
    tied = difference(same, same.copy(), ("x", "y"))
    assert stretches(tied) == [(None, 1, 40)] and np.all(tied.estimate == 0)
    assert sentence(tied) == "Mean curves, x vs y (n = 1 to 40): undecided with 40 and 40 trials for n in [1, 40]."


def test_crossing_interval_from_a_hand_made_band():
    """B leads at n = 1-2, the point estimates cross at 5, A surely leads from 7: n* in [4, 7]."""
    ns = np.arange(1, 11)
    estimate = np.array([-3, -2, -1, -0.5, 0.5, 1, 2, 3, 4, 5.0])
    low = estimate - np.array([0.5, 0.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5])
    high = estimate + np.array([0.5, 0.5, 0.5, 1.0, 1, 1, 1, 1, 1, 1])
    diff = Difference(("A", "B"), ns, estimate, low, high, 0.9)
    crossing = first_crossing(diff)
    assert (crossing.leader, crossing.previous, crossing.at, crossing.low, crossing.high) == ("A", "B", 5, 4, 7)
    assert stretches(diff) == [("B", 1, 3), (None, 4, 6), ("A", 7, 10)]
    assert sentence(diff) == ("Mean curves, A vs B (n = 1 to 10): B leads A for n in [1, 3] at 90%; undecided with these "
                              "trials for n in [4, 6]; A leads B for n in [7, 10] at 90%. A first overtakes B at n = 5 "
                              "(point estimates); at 90% that first crossover lies in [4, 7].")
    assert "; undecided with 10 and 12 trials for n in [4, 6]; " in sentence(diff, (10, 12))
    unresolved = Difference(("A", "B"), ns, estimate, np.minimum(low, -1), high, 0.9)
    assert first_crossing(unresolved).high is None
    assert ("lies somewhere from n = 4 to beyond n = 10, the last budget compared: it cannot be located with these "
            "trials.") in sentence(unresolved)
    assert sentence(unresolved, (10, 12)).endswith("it cannot be located with 10 trials in the smaller group.")


def coverage(pair, n_trials: int, q, replications: int = 200, confidence: float = 0.95) -> float:
    """The share of seeded replications whose band holds the true difference at every n = 1..N."""
    first, second = pair
    ns = np.arange(1, n_trials + 1)
    truth = (first.mean_curve(ns) - second.mean_curve(ns) if q is None
             else first.quantile_curve(ns, q) - second.quantile_curve(ns, q))
    rng = np.random.default_rng(37 + n_trials)
    hits = 0
    for _ in range(replications):
        a, b = first.sample(rng, n_trials), second.sample(rng, n_trials)
        bounds = (0.0, 1.0) if q is None else (-np.inf, np.inf)
        diff = difference(a, b, confidence=confidence, bounds=bounds, statistic=Statistic(q))
        hits += bool(np.all((diff.low <= truth + 1e-12) & (truth - 1e-12 <= diff.high)))
    return hits / replications


@pytest.mark.slow
@pytest.mark.parametrize("n_trials", [20, 50, 100])
@pytest.mark.parametrize("pair", [(STEADY, SPREAD), (STEADY, BIMODAL)], ids=["normal", "bimodal"])
@pytest.mark.parametrize("q", [None, 0.5], ids=["mean", "median"])
def test_the_difference_band_covers_the_truth_at_its_level(pair, n_trials, q):
    """Normal vs normal (they cross at n = 4) and normal vs a bimodal mixture (they cross at n = 2 and
    17): over 200 seeded replications the 95% band holds the true difference at every n at once in at
    least 95% of them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert coverage(pair, n_trials, q) >= 0.95


def write_groups(path, groups: dict[str, list[float]]) -> None:
    path.write_text("model,val_acc\n" + "".join(f"{k},{v}\n" for k, vs in groups.items() for v in vs))


def test_syw_compares_two_groups_in_a_table_a_figure_and_a_sentence(tmp_path):
    from syw.curve.command import main

    rng = np.random.default_rng(3)
    write_groups(tmp_path / "r.csv", {"good": rng.uniform(0.8, 0.9, 200), "bad": rng.uniform(0.1, 0.2, 200)})
    assert main(["curve", str(tmp_path / "r.csv"), "--out", str(tmp_path / "o")]) == 0
    table = pd.read_csv(tmp_path / "o" / "difference.csv", keep_default_na=False)
    assert table.n.tolist() == list(range(1, 201)) and set(table.a) == {"bad"} and set(table.b) == {"good"}
    assert set(table.claim) == {"simultaneous"} and set(table.method) == {"jackknife"} and set(table.limit) == {37}
    assert table[table.leader == "good"].n.tolist() == list(range(1, 38))  # every n up to the limit, none past it
    assert (table["low"] <= table.a_better_by).all() and (table.a_better_by <= table["high"]).all()
    report = (tmp_path / "o" / "report.md").read_text()
    assert ("- Mean curves, bad vs good (n = 1 to 200, simultaneous claims): good leads bad for n in [1, 37] at 95%; "
            "undecided with 200 and 200 trials for n in [38, 200]. Beyond n = 37") in report
    assert "up to n = 37 (n = 74 would need 394 trials per group)" in report
    for suffix in ("png", "pdf"):
        assert (tmp_path / "o" / f"difference.{suffix}").stat().st_size > 5000

    assert main(["curve", str(tmp_path / "r.csv"), "--compare-method", "bands", "--out", str(tmp_path / "b")]) == 0
    table = pd.read_csv(tmp_path / "b" / "difference.csv", keep_default_na=False)
    assert table.leader.iloc[0] == "good" and set(table.leader) == {"good", ""} and set(table.method) == {"bands"}
    report = (tmp_path / "b" / "report.md").read_text()
    last = int(table[table.leader == "good"].n.max())
    assert f"- Mean curves, bad vs good (n = 1 to 200): good leads bad for n in [1, {last}] at 95%" in report
    assert "sqrt(0.95) = 0.9747" in report

    assert main(["curve", str(tmp_path / "r.csv"), "--at", "1", "5", "60", "--out", str(tmp_path / "p")]) == 0
    table = pd.read_csv(tmp_path / "p" / "difference.csv", keep_default_na=False)
    assert table.n.tolist() == [1, 5, 60] and table.leader.tolist() == ["good", "good", ""]
    assert set(table.claim) == {"pointwise"}
    assert "a claim at n = 60 needs 320 trials per group" in (tmp_path / "p" / "report.md").read_text()


def test_compare_names_groups_that_exist_and_needs_bounds_for_the_mean(tmp_path, capsys):
    from syw.curve.command import main

    write_groups(tmp_path / "r.csv", {"a": [0.2, 0.4], "b": [0.3, 0.5], "c": [0.1, 0.6]})
    assert run_main(main, ["curve", str(tmp_path / "r.csv"), "--compare", "a", "z", "--out", str(tmp_path / "o")]) == 2
    assert f"error: {tmp_path}/r.csv: --compare names 'z', not a group with a finished, scored trial here (groups with a curve: a, b, c)" in \
        capsys.readouterr().err
    write_groups(tmp_path / "p.csv", {"a": [20, 40], "b": [30, 50]})
    assert run_main(main, ["curve", str(tmp_path / "p.csv"), "--compare", "a", "b", "--compare-method", "bands",
                           "--out", str(tmp_path / "o")]) == 2
    assert "the bands need the metric's bounds" in capsys.readouterr().err and not (tmp_path / "o").exists()
    assert main(["curve", str(tmp_path / "p.csv"), "--compare-method", "bands", "--out", str(tmp_path / "o")]) == 0
    assert "no difference band for a vs b: the bands need the metric's bounds" in (tmp_path / "o" / "report.md").read_text()
    assert main(["curve", str(tmp_path / "p.csv"), "--statistic", "median", "--out", str(tmp_path / "m")]) == 0
    assert "Median curves, a vs b (n = 1 to 2)" in (tmp_path / "m" / "report.md").read_text()


@pytest.mark.paperdata
def test_sst5_the_report_places_the_cnn_lr_crossover(tmp_path):
    """The authors' SST-5 trials: Eq. 8 puts the CNN ahead of LR from n = 13 (the paper's Fig. 1); the crossed
    bands' report states that crossover with its interval at 95%, which holds 13; the default comparison names
    LR ahead at n = 1-3 and cannot locate the crossover (the unbiased curves cross at 12) within 50 trials."""
    from syw.curve.command import main
    from syw.figures.specs import FIGURES
    from tests.support.oracle import authors_path

    assert main(["curve", str(authors_path(FIGURES[1].paper)), "--out", str(tmp_path / "j")]) == 0
    report = (tmp_path / "j" / "report.md").read_text()  # the default comparison: the unbiased curves, with the limit
    assert ("LR leads CNN for n in [1, 3] at 95%; undecided with 50 and 50 trials for n in [4, 50]. CNN first overtakes LR "
            "at n = 12 (unbiased estimates); at 95% that first crossover lies somewhere from n = 4 to beyond n = 9, the "
            "largest budget these trials can decide: it cannot be located with 50 trials per group") in report
    assert main(["curve", str(authors_path(FIGURES[1].paper)), "--compare-method", "bands", "--out", str(tmp_path / "o")]) == 0
    report = (tmp_path / "o" / "report.md").read_text()
    found = re.search(r"CNN first overtakes LR at n = (\d+) \(point estimates\); at 95% that first crossover lies "
                      r"(?:in \[(\d+), (\d+)\]|somewhere from n = (\d+) to beyond n = 50)", report)
    assert found and found.group(1) == "13", report
    low, high = int(found.group(2) or found.group(4)), found.group(3)
    assert low <= 13 and (high is None or int(high) >= 13)


def test_leaders_by_n_of_three_known_curves():
    curves = {"lstm": [375.7, 210.1, 189.3, 180.7], "rhn": [5e32, 3e27, 1e21, 9.7e7], "nas": [315.9, 211.6, 199.4]}
    # lower is better; the shortest curve (nas, 3 points) ends the comparison
    assert leaders_by_n(curves, maximize=False) == [("nas", 1, 1), ("lstm", 2, 3)]
    assert leaders_by_n(curves) == [("rhn", 1, 3)]
    # a tie goes to the first named, and a stretch may come back
    assert leaders_by_n({"a": [1, 2, 1, 3], "b": [1, 1, 2, 2]}, maximize=False) == [("a", 1, 1), ("b", 2, 2), ("a", 3, 3), ("b", 4, 4)]


def test_the_report_says_who_leads_when_nobody_overtakes(tmp_path):
    """Issue 63, item 10: no crossover names the group ahead throughout; identical curves are said to be identical."""
    from syw.curve.command import main

    write_groups(tmp_path / "r.csv", {"a": [0.5, 0.6, 0.7], "b": [0.6, 0.7, 0.8], "c": [0.5, 0.6, 0.7]})
    assert main(["curve", str(tmp_path / "r.csv"), "--out", str(tmp_path / "o")]) == 0
    assert "- nowhere: b leads at every shared budget (n = 1 to 3)" in (tmp_path / "o" / "report.md").read_text()
    write_groups(tmp_path / "s.csv", {"a": [0.5, 0.7], "b": [0.7, 0.5]})
    assert main(["curve", str(tmp_path / "s.csv"), "--out", str(tmp_path / "p")]) == 0
    assert "- nowhere: the curves are identical at every shared budget (n = 1 to 2)" in (tmp_path / "p" / "report.md").read_text()


def test_a_group_whose_trials_all_failed_is_named_as_such(tmp_path, capsys):
    from syw.curve.command import main

    (tmp_path / "r.csv").write_text("model,acc,status\na,0.8,ok\na,0.7,ok\nb,,failed\nb,,failed\nb,,failed\n")
    assert run_main(main, ["curve", str(tmp_path / "r.csv"), "--out", str(tmp_path / "o")]) == 0
    assert "group 'b' has no finished trial with a score (3 failed or empty), so it has no curve" in \
        (tmp_path / "o" / "report.md").read_text()
    assert run_main(main, ["curve", str(tmp_path / "r.csv"), "--compare", "a", "b", "--out", str(tmp_path / "p")]) == 2
    assert "--compare names 'b', not a group with a finished, scored trial here (groups with a curve: a)" in \
        capsys.readouterr().err
