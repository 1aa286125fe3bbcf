"""The expected test score of the trial validation selects among n (syw.analysis.selected, issue 37 item 6):
against enumeration of all N^n draws, and what ``syw curve`` reads and writes with test scores."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from syw.analysis.selected import selected_test
from syw.curve.command import main
from tests.support import oracle


def enumerated(validation, test, n: int, maximize: bool = True) -> tuple[float, float]:
    """Every ordered draw of n of the N trials: the selected trial is uniform among the drawn ones tied at
    the best validation score; mean and SD of its test score over draws and tie-breaks."""
    firsts, seconds = [], []
    for draw in itertools.product(range(len(validation)), repeat=n):
        best = (max if maximize else min)(validation[i] for i in draw)
        tied = [test[i] for i in draw if validation[i] == best]
        firsts.append(np.mean(tied))
        seconds.append(np.mean(np.square(tied)))
    mean = float(np.mean(firsts))
    return mean, float(np.sqrt(np.mean(seconds) - mean**2))


@pytest.mark.parametrize("maximize", [True, False])
def test_against_enumeration_with_ties(maximize):
    validation = [0.1, 0.5, 0.5, 0.9, 0.3]
    test = [0.2, 0.3, 0.7, 0.6, 0.4]
    mean, sd = selected_test(validation, test, [1, 2, 3, 4], maximize=maximize)
    for n in (1, 2, 3, 4):
        assert (mean[n - 1], sd[n - 1]) == pytest.approx(enumerated(validation, test, n, maximize), abs=1e-12)
    assert mean[0] == pytest.approx(np.mean(test))


def test_when_test_equals_validation_it_is_eq8():
    scores = np.random.default_rng(2).uniform(size=25)
    mean, sd = selected_test(scores, scores, range(1, 26))
    assert mean == pytest.approx([oracle.eq8(scores, n) for n in range(1, 26)])
    assert sd == pytest.approx([oracle.eq8_sd(scores, n) for n in range(1, 26)])


def test_syw_reads_our_records_extra_metrics_test_accuracy(tmp_path):
    rng = np.random.default_rng(6)
    val, tst = rng.uniform(0.6, 0.8, 20), rng.uniform(0.6, 0.8, 20)
    (tmp_path / "dam.jsonl").write_text("".join(
        json.dumps({"family": "dam", "trial": i, "status": "ok", "value": v, "direction": "max",
                    "extra_metrics": {"test_accuracy": t, "train_accuracy": 0.9}}) + "\n" for i, (v, t) in enumerate(zip(val, tst))))
    out = tmp_path / "o"
    assert main(["curve", str(tmp_path / "dam.jsonl"), "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    mean, sd = selected_test(val, tst, range(1, 21))
    np.testing.assert_allclose(table.test_of_selected, mean)
    np.testing.assert_allclose(table.test_of_selected_sd, sd)
    report = (out / "report.md").read_text()
    assert "Test score: `extra_metrics.test_accuracy` (picked)" in report
    assert "## Test score of the trial validation picks (the winner's curse)" in report
    gap = oracle.eq8(val, 20) - mean[-1]
    assert f"{mean[-1]:.4f} ± {sd[-1]:.4f} [{gap:+.4f}]" in report
    assert main(["curve", str(tmp_path / "dam.jsonl"), "--test", "none", "--out", str(tmp_path / "p")]) == 0
    assert "test_of_selected" not in pd.read_csv(tmp_path / "p" / "expected_max.csv").columns


def test_the_test_column_matching_the_score_and_trials_without_one(tmp_path):
    rows = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "best_validation_accuracy": [0.5, 0.6, 0.7, 0.8] * 2,
                         "test_accuracy": [0.4, 0.5, 0.6, 0.7, 0.4, None, 0.6, 0.7],
                         "test_accuracy3": 0.1, "test_loss": 1.0})
    rows.to_csv(tmp_path / "r.tsv", sep="\t", index=False)
    out = tmp_path / "o"
    assert main(["curve", str(tmp_path / "r.tsv"), "--out", str(out)]) == 0
    table = pd.read_csv(out / "expected_max.csv")
    a, b = table[table.group == "a"], table[table.group == "b"]
    assert a.test_of_selected.iloc[0] == pytest.approx(0.55) and b.test_of_selected.isna().all()
    report = (out / "report.md").read_text()
    assert "Test score: `test_accuracy` (picked)" in report
    assert "group b: 1 trial(s) have no test score, so no test curve is drawn for it" in report
