"""``syw curve --compare A B --at .. --looks ..`` (issue 74): the group-sequential comparison of anyone's trials,
in their order, its sequential.csv and report section, and its refusals."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from syw.analysis.sequential import Design, sequential
from syw.core.entry import run_main
from syw.curve.api import sequential as api_sequential
from syw.curve.command import main


def far_apart(path: Path, size: int = 50, shuffle: bool = True) -> dict[str, np.ndarray]:
    """Two groups' trials (A well above B), written in a shuffled row order with a ``trial`` column giving the order."""
    rng = np.random.default_rng(1)
    scores = {"A": rng.uniform(0.7, 0.8, size), "B": rng.uniform(0.5, 0.6, size)}
    frame = pd.DataFrame([{"trial": k, "model": g, "val_acc": s[k]} for g, s in scores.items() for k in range(size)])
    (frame.sample(frac=1.0, random_state=2) if shuffle else frame).to_csv(path, index=False)
    return scores


def test_the_rule_stops_at_the_look_that_decides_every_budget(tmp_path, capsys):
    scores = far_apart(tmp_path / "trials.csv")
    out = tmp_path / "out"
    assert main(["curve", str(tmp_path / "trials.csv"), "--compare", "A", "B", "--at", "1", "5", "--looks", "10", "20",
                 "30", "40", "50", "--out", str(out), "--no-figure"]) == 0
    rows = pd.read_csv(out / "sequential.csv", keep_default_na=False)
    assert {"look", "trials_per_group", "n", "leader", "stopped", "statistic", "boundary", "rci_low", "rci_high"} <= set(rows)
    # n = 5 is tested from 30 trials per group (syw.analysis.inference.limit_budget), decided there: the rule stops at look 3
    assert rows[["look", "trials_per_group", "n"]].values.tolist() == [[k, 10 * k, n] for k in (1, 2, 3) for n in (1, 5)]
    assert rows["leader"].tolist() == ["A", "", "A", "", "A", "A"]
    assert rows["stopped"].astype(str).tolist() == ["False"] * 4 + ["True"] * 2
    assert rows["boundary"].tolist()[1] == ""  # look 1 cannot test n = 5
    expected = sequential(scores["A"], scores["B"], Design((10, 20, 30, 40, 50), (1, 5)), ("A", "B"))  # in trial order
    last = expected.rows[-1]
    assert float(rows["rci_low"].iloc[-1]) == pytest.approx(last.low, rel=1e-9)
    assert float(rows["statistic"].iloc[-1]) == pytest.approx(last.statistic, rel=1e-9)
    assert float(rows["statistic"].iloc[-1]) > float(rows["boundary"].iloc[-1]) > 0
    report = (out / "report.md").read_text()
    assert ("Stopped at look 3 (30 trials per group; every budget decided): n = 1: A leads (look 1); "
            "n = 5: A leads (look 3).") in report
    assert "## Sequential comparison" in capsys.readouterr().out


def test_the_order_column_orders_the_trials(tmp_path):
    far_apart(tmp_path / "shuffled.csv")
    far_apart(tmp_path / "ordered.csv", shuffle=False)
    kw = dict(compare=("A", "B"), at=[1], looks=[10, 20], group="model")
    shuffled, ordered = (api_sequential(str(tmp_path / f"{n}.csv"), **kw) for n in ("shuffled", "ordered"))
    pd.testing.assert_frame_equal(shuffled, ordered)
    assert shuffled["leader"].tolist() == ["A"] and shuffled["stopped"].tolist() == [True]


def test_pocock_and_an_undecided_rule(tmp_path):
    rng = np.random.default_rng(5)
    same = {"A": rng.uniform(size=40), "B": rng.uniform(size=40)}
    rows = api_sequential(same, compare=("A", "B"), at=[1], looks=[20, 40], boundary="pocock")
    assert rows["look"].tolist() == [1, 2] and rows["leader"].tolist() == ["", ""]
    assert rows["stopped"].tolist() == [False, True]
    # Pocock's boundary is flat: the same nominal level at both looks, on T's scale (Welch df)
    design = Design((20, 40), (1,), boundary="pocock")
    z = design.z_boundaries()[:, 0]
    assert z[0] == pytest.approx(z[1], abs=0.05) and 2.1 < z[0] < 2.3


@pytest.mark.parametrize("argv, message", [
    (["--compare", "A", "B", "--at", "1", "--looks", "10", "60"], "group 'A' has 50 trials, fewer than the last look's 60"),
    (["--looks", "10", "20"], "--looks needs --compare A B and --at N"),
    (["--compare", "A", "B", "--looks", "10", "20"], "--looks needs --compare A B and --at N"),
    (["--compare", "A", "B", "--at", "1", "--looks", "20", "10"], "--looks/--at: looks must increase"),
])
def test_refused_with_one_line_and_nothing_written(tmp_path, capsys, argv, message):
    far_apart(tmp_path / "trials.csv")
    out = tmp_path / "out"
    assert run_main(main, ["curve", str(tmp_path / "trials.csv"), *argv, "--out", str(out), "--no-figure"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {tmp_path / 'trials.csv'}: ") and message in err[0], err
    assert not out.exists()


def test_the_help_states_the_default_boundary(capsys):
    with pytest.raises(SystemExit):
        main(["curve", "--help"])
    text = " ".join(re.sub(r"-\n\s*", "-", capsys.readouterr().out).split())  # argparse wraps at hyphens
    assert "(default obrien-fleming: strict early" in text
