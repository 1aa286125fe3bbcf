"""Issue 64, item 4: the training-time column is picked by the common names for durations and their units,
and the report says which column it took."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from syw.cli import main
from syw.curve.columns import duration_unit, pick_duration
from syw.curve.prepare import prepare


@pytest.mark.parametrize("name", ["train_time_s", "fit_time", "runtime_s", "time", "Train time (s)", "elapsed",
                                  "duration", "wall_time", "seconds", "time_total_s", "training_duration"])
def test_a_duration_name_is_picked_from_a_csv(tmp_path, name):
    path = tmp_path / "t.csv"
    pd.DataFrame({"model": ["a", "a", "b", "b"], "lr": [0.1, 0.01, 0.1, 0.01], "val_acc": [0.5, 0.7, 0.6, 0.65],
                  name: [10.0, 20.0, 30.0, 50.0]}).to_csv(path, index=False)
    prepared = prepare(str(path))
    assert prepared.columns["duration"] == f"`{name}` (picked)"
    assert {g.name: g.durations.tolist() for g in prepared.groups} == {"a": [10.0, 20.0], "b": [30.0, 50.0]}


@pytest.mark.parametrize(("name", "factor"), [("Train time (ms)", 1e-3), ("train_time_ms", 1e-3), ("fit_minutes", 60.0),
                                              ("duration_hours", 3600.0)])
def test_a_unit_in_the_name_converts_to_seconds(tmp_path, name, factor):
    path = tmp_path / "t.csv"
    pd.DataFrame({"val_acc": [0.5, 0.7, 0.6], name: [1500.0, 2500.0, 4000.0]}).to_csv(path, index=False)
    prepared = prepare(str(path))
    assert duration_unit(name)[0] == factor
    np.testing.assert_allclose(prepared.groups[0].durations, np.array([1500.0, 2500.0, 4000.0]) * factor, rtol=1e-15)
    assert prepared.columns["duration"].startswith(f"`{name}` (picked), in {duration_unit(name)[1]}")


@pytest.mark.parametrize("columns", [["timestamp"], ["start_time", "end_time"], ["time_this_iter_s", "time_since_restore"],
                                     ["epoch_time"], ["loss_s"], ["config.time_limit"], ["datetime_start"]])
def test_points_in_time_and_parts_of_a_trial_are_not_its_training_time(columns):
    frame = pd.DataFrame([[1.0] * len(columns)], columns=columns)
    assert pick_duration(frame, "t.csv") == (None, None)


def test_the_training_one_of_several_is_taken_else_none_with_a_note():
    frame = pd.DataFrame({"time_total_s": [1.0], "eval_seconds": [2.0]})
    assert pick_duration(frame, "t.csv") == ("time_total_s", None)
    column, note = pick_duration(pd.DataFrame({"load_seconds": [1.0], "eval_seconds": [2.0]}), "t.csv")
    assert column is None and note.startswith("several columns could be the training time (load_seconds, eval_seconds)")


def test_the_report_names_the_time_column_and_the_time_axis_uses_it(tmp_path):
    path = tmp_path / "sweep.csv"
    path.write_text("model,lr,val_acc,train_time_s\na,0.1,0.5,10\na,0.01,0.7,30\nb,0.1,0.6,20\nb,0.01,0.65,40\n")
    assert main(["curve", str(path), "--x", "time"]) == 0
    report = (tmp_path / "sweep_syw" / "report.md").read_text()
    assert "Training time: `train_time_s` (picked)." in report
