"""Issue 73 item 3: ``syw curve --compare A B --at N --margin D`` certifies a tie by two one-sided tests, and says
'undecided with N trials' where it cannot, never 'tied' or 'cannot be told apart'."""
import numpy as np
import pandas as pd
import pytest

from syw.core.entry import run_main
from syw.curve.command import main


def trials(tmp_path, shift: float):
    """400 trials per group from one standard normal, b shifted by ``shift``: the mean curves differ by ``shift``."""
    z = np.random.default_rng(0).standard_normal((2, 400))
    path = tmp_path / "t.csv"
    pd.DataFrame({"model": ["a"] * 400 + ["b"] * 400, "val_acc": np.concatenate([z[0], z[1] + shift])}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("shift, margin, says", [
    (0.0, 0.3, "a and b are within +-0.3 at n = 1 at 95%."),  # one pool, a margin of 4 standard errors
    (1.0, 0.3, "undecided with 400 and 400 trials at n = 1."),  # a true difference past the margin: never certified
])
def test_a_margin_is_certified_only_where_the_truth_lies_within_it(tmp_path, shift, margin, says):
    out = tmp_path / "out"
    assert main(["curve", str(trials(tmp_path, shift)), "--compare", "a", "b", "--at", "1", "--margin", str(margin),
                 "--no-figure", "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert f"- {says}" in text and "cannot be told apart" not in text


def test_a_margin_without_stated_budgets_is_refused(tmp_path, capsys):
    assert run_main(main, ["curve", str(trials(tmp_path, 0.0)), "--compare", "a", "b", "--margin", "0.3"]) == 2
    assert "--margin 0.3 needs --compare A B and --at N" in capsys.readouterr().err
