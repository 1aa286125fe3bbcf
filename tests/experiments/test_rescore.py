"""Rescoring a SQuAD trial on the whole dev set: which record, and one error line for bad input
(the scoring itself is tested on a trained BiDAF in test_squad.py)."""
import json
from pathlib import Path

import pytest
import torch

from syw.core.context import TrialContext
from syw.core.entry import run_main
from syw.experiments import rescore as span_rescore
from syw.experiments.space import load_family

PARAMS = load_family("squad_bidaf_reduced", name="bidaf").params(0, 0)


def write_records(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"params": PARAMS, "study": "squad_reduced", "family": "bidaf", **r}) + "\n"
                            for r in records))
    return path


RECORDS = [{"trial": 0, "status": "ok", "value": 0.10, "outputs": {"checkpoint": "checkpoints/bidaf-0.pt"}},
           {"trial": 1, "status": "ok", "value": 0.30, "outputs": {}},
           {"trial": 2, "status": "failed", "value": None},
           {"trial": 0, "status": "ok", "value": 0.20, "outputs": {"checkpoint": "checkpoints/bidaf-0.pt"}}]


def test_the_best_ok_trial_or_the_one_named(tmp_path):
    path = write_records(tmp_path / "bidaf.jsonl", RECORDS)
    assert span_rescore.choose_record(path, 0)["value"] == 0.20  # a retried trial's latest record
    with pytest.raises(span_rescore.RescoreError, match="trial 1 names no checkpoint"):
        span_rescore.choose_record(path, None)  # the best (0.30) wrote none
    with pytest.raises(span_rescore.RescoreError, match="no ok record of trial 2"):
        span_rescore.choose_record(path, 2)
    with pytest.raises(span_rescore.RescoreError, match="no ok trial"):
        span_rescore.choose_record(write_records(tmp_path / "x" / "bidaf.jsonl", RECORDS[2:3]), None)


def test_embedding_key_is_the_one_weight_with_a_row_per_word():
    state = {"embedding.weight": torch.zeros(5, 3), "linear.weight": torch.zeros(4, 3), "bias": torch.zeros(5)}
    assert span_rescore.embedding_key(state, 5, Path("c.pt")) == "embedding.weight"
    with pytest.raises(span_rescore.RescoreError, match="c.pt: expected one weight with 5 rows"):
        span_rescore.embedding_key({**state, "other": torch.zeros(5, 2)}, 5, Path("c.pt"))


@pytest.mark.parametrize("setup, args, message", [
    (lambda d: None, [], "give --family (records there: none)"),
    (lambda d: [write_records(d / f"{f}.jsonl", RECORDS) for f in ("a", "b")], [], "records there: ['a', 'b']"),
    (lambda d: write_records(d / "bidaf.jsonl", RECORDS), ["--trial", "0"], "checkpoints/bidaf-0.pt: cannot read"),
    (lambda d: (write_records(d / "bidaf.jsonl", RECORDS), (d / "checkpoints").mkdir(),
                (d / "checkpoints" / "bidaf-0.pt").write_bytes(b"not a checkpoint")), ["--trial", "0"], "cannot read"),
    (lambda d: write_records(d / "bidaf.jsonl", [{**RECORDS[0], "family": "dam"}]), [], "has no family 'dam'"),
    (lambda d: write_records(d / "bidaf.jsonl", [{**RECORDS[0], "params": {**PARAMS, "lr": "fast"}}]), [],
     "bidaf.jsonl: trial 0: "),
    (lambda d: (write_records(d / "bidaf.jsonl", RECORDS), (d / "checkpoints").mkdir(),
                torch.save({"state": {}}, d / "checkpoints" / "bidaf-0.pt")), ["--trial", "0"], "not a checkpoint"),
    (lambda d: (d / "bidaf.jsonl").write_text("{not json\n{}\n"), [], "bidaf.jsonl"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, setup, args, message):
    folder = tmp_path / "study"
    folder.mkdir()
    setup(folder)
    assert run_main(span_rescore.main, [str(folder), *args, "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


def test_a_trial_writes_beside_its_records_only_when_given_a_folder(tmp_path):
    ctx = TrialContext(study="s", family="bidaf", trial_index=7, seed=0, data_dir=tmp_path, cache_dir=tmp_path)
    assert ctx.output_path("predictions", "json") is None
    ctx = TrialContext(study="s", family="bidaf", trial_index=7, seed=0, data_dir=tmp_path, cache_dir=tmp_path,
                       output_dir=tmp_path / "s")
    assert ctx.output_path("predictions", "json") == tmp_path / "s" / "predictions" / "bidaf-7.json"


def test_progress_lines_at_most_every_interval_and_at_the_end(capsys, monkeypatch):
    clock = iter([0.0, 10.0, 40.0, 50.0, 60.0])  # start, then one reading per call
    monkeypatch.setattr(span_rescore.time, "perf_counter", lambda: next(clock))
    show = span_rescore.progress_printer("whole dev", every=30.0)
    for done in (100, 400, 500, 1000):  # at 10 s (too soon), 40 s, 50 s (too soon), 60 s (the end)
        show(done, 1000)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["  whole dev: 400 of 1,000 questions, 40 s so far, ~1.0 min left",
                     "  whole dev: 1,000 of 1,000 questions, 1.0 min so far, ~0 s left"]
