"""Issue 73 item 2: ``syw plan TRIALS --compare A B --at N ...`` prints and writes the trials per group that would
decide A against B at each budget, and refuses bad input with one line."""
import numpy as np
import pandas as pd
import pytest

from syw.core.entry import run_main
from syw.curve.plan_command import main


@pytest.fixture
def pilot(tmp_path):
    """Two large normal groups 0.5 SD apart: the pilot is close to the truth, so the plan at n = 1 (Welch's t-test)
    is near the classic 2 (z_0.975 + z_0.8)^2 / 0.5^2 = 62.8 trials per group."""
    rng = np.random.default_rng(5)
    path = tmp_path / "pilot.csv"
    pd.DataFrame({"model": ["a"] * 400 + ["b"] * 400,
                  "val_acc": np.concatenate([rng.normal(0.5, 1.0, 400), rng.normal(0.0, 1.0, 400)])}).to_csv(path, index=False)
    return path


def test_plan_writes_the_trials_per_group_and_their_power(pilot, tmp_path, capsys):
    out = tmp_path / "out"
    assert main([str(pilot), "--compare", "a", "b", "--at", "1", "500", "--method", "resample", "--draws", "400",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out / "plan.csv")
    assert {"n", "trials_per_group", "power"} <= set(table.columns)
    one = table.set_index("n").loc[1]
    scores = pd.read_csv(pilot).groupby("model").val_acc
    effect, variance = scores.mean().diff().abs().iloc[-1], scores.var().mean()
    classic = 2 * (1.959964 + 0.841621) ** 2 * variance / effect**2  # the pilot taken as the truth: Welch at n = 1
    assert abs(one.trials_per_group - classic) <= 0.15 * classic
    assert one.power == pytest.approx(0.8, abs=0.04) and one.leader == "a"
    assert np.isnan(table.set_index("n").loc[500].trials_per_group)  # past what 400 trials speak for
    printed = capsys.readouterr().out
    assert f"n = 1: about {int(one.trials_per_group)} trials per group for a to be named" in printed


def test_plan_refuses_an_unknown_group_in_one_line(pilot, capsys):
    assert run_main(main, [str(pilot), "--compare", "a", "c", "--at", "1"]) == 2
    assert capsys.readouterr().err == (f"error: {pilot}: --compare names 'c', not a group here (groups: a, b)\n")


@pytest.mark.parametrize("argv, says", [
    (["--compare", "a", "b", "--at", "0"], "0 is not a budget"),
    (["--compare", "a", "b", "--at", "1", "--power", "1.5"], "--power: 1.5 is not a level: it must be between 0 and 1"),
])
def test_plan_refuses_a_bad_option_with_exit_2(pilot, capsys, argv, says):
    with pytest.raises(SystemExit) as stop:
        main([str(pilot), *argv])
    assert stop.value.code == 2 and says in capsys.readouterr().err


def test_the_report_says_what_would_settle_an_undecided_stated_budget(tmp_path):
    """``syw curve --compare A B --at ...``: a budget left undecided gets the trials per group that would decide it."""
    from syw.curve import api

    z = np.random.default_rng(2).standard_normal((2, 30))
    z = (z - z.mean(axis=1, keepdims=True)) / z.std(axis=1, ddof=1, keepdims=True)  # means 0, SDs 1 exactly
    result = api.curves({"a": z[0] + 0.35, "b": z[1]})
    result = api.Curves(result.curves, result.prepared, api.replace(result.options, at=(1,)))
    diffs, _ = result.differences(("a", "b"))
    assert diffs[0].leader() == [None]
    line = next(x for x in result.report(differences=diffs).splitlines() if "undecided at n = 1" in x)
    k = int(line.split("about ")[1].split(" trials")[0])
    assert 128 <= k <= 1000  # 0.35 SD apart: 2 (1.96 + 0.84)^2 / 0.35^2 = 128 per group taking the pilot as the truth; more by bootstrap
