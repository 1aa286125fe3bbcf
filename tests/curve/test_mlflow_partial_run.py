"""An MLflow file store whose run folder lacks its meta.yaml (a partial copy, say) is read without it, and a note
says which run was left out and why (issue 75, item 20): "Trials: 5" for 6 runs said nothing before."""
from __future__ import annotations

from pathlib import Path

import pytest

from syw.curve.prepare import prepare


def write_run(experiment: Path, run_id: str, score: float, meta: bool = True) -> None:
    run = experiment / run_id
    (run / "metrics").mkdir(parents=True)
    (run / "params").mkdir()
    (run / "metrics" / "val_acc").write_text(f"1700000000000 {score} 0\n")
    (run / "params" / "lr").write_text("0.1")
    if meta:
        (run / "meta.yaml").write_text(f"run_id: {run_id}\nstatus: 3\nstart_time: 1700000000000\n"
                                       "end_time: 1700000060000\nlifecycle_stage: active\n")


def test_a_run_folder_without_meta_yaml_is_named_in_a_note(tmp_path):
    experiment = tmp_path / "mlruns" / "1"
    experiment.mkdir(parents=True)
    (experiment / "meta.yaml").write_text("name: sweep\nexperiment_id: '1'\nlifecycle_stage: active\n")
    scores = [0.5, 0.6, 0.7, 0.4, 0.55]
    for k, score in enumerate(scores):
        write_run(experiment, f"run{k}", score)
    write_run(experiment, "broken", 0.9, meta=False)
    (experiment / "tags").mkdir()  # the experiment's own tags: not a run
    prepared = prepare(str(tmp_path / "mlruns"))
    assert sorted(prepared.groups[0].scores) == pytest.approx(sorted(scores))
    assert "1 run folder(s) without a meta.yaml left out: broken (MLflow writes it when a run starts; a partial copy?)" \
        in prepared.notes
