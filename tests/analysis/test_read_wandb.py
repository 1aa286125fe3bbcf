"""Issue 64: Weights & Biases offline run folders written by wandb itself (WANDB_MODE=offline): the
binary run log read with the wandb extra; the files/ of a synced run read without it."""
from __future__ import annotations

import json

import pytest

from tests.support.readers import check_curve, expected, one_error_line, run_script

pytest.importorskip("wandb")
pytestmark = pytest.mark.slow

SWEEP = """
import sys
sys.path.insert(0, {repo!r})
import wandb
from tests.support.readers import GROUPS, STEPS, XS, score
for group in GROUPS:
    for x in XS:
        run = wandb.init(project="sweep", config={{"x": x, "model": group}}, dir=".")
        for step in range(STEPS):
            run.log({{"val_acc": score(x, group, step), "loss": 1 - score(x, group, step)}})
        run.finish()
run = wandb.init(project="sweep", config={{"x": 0.99, "model": "a"}}, dir=".")  # a run that crashed
run.log({{"val_acc": 0.999}})
run.finish(exit_code=1)
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from syw.core.paths import REPO

    root = tmp_path_factory.mktemp("wandb")
    run_script(SWEEP.format(repo=str(REPO)), root, WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_GIT="true")
    return root / "wandb"


def test_eq8_of_offline_runs_for_both_picks(runs, tmp_path):
    check_curve(str(runs), tmp_path, "config.model", "--metric", "val_acc")
    check_curve(str(runs.parent), tmp_path, "config.model", "--metric", "val_acc")  # the folder holding wandb/


def test_the_crashed_run_is_counted_and_runs_are_in_start_order(runs):
    from syw.curve.prepare import Reading, prepare

    prepared = prepare(str(runs), Reading(metric="val_acc", group="config.model"))
    assert sorted(g.scores.size for g in prepared.groups) == [5, 5]
    assert any("1 failed" in n for n in prepared.notes), prepared.notes
    one = prepare(str(runs), Reading(metric="val_acc", group="none"))
    group = one.groups[0]
    assert group.scores[group.order.argsort()].tolist() == expected("best")["a"] + expected("best")["b"]


def test_a_synced_runs_files_are_read_without_the_log(runs, tmp_path):
    """files/config.yaml and files/wandb-summary.json, as an online run or `wandb sync` leaves them."""
    from syw.curve.readers.wandb import read_wandb

    for i, (x, acc) in enumerate([(0.1, 0.5), (0.5, 0.7), (0.9, 0.6)]):
        files = tmp_path / "wandb" / f"run-20240101_00000{i}-id{i}" / "files"
        files.mkdir(parents=True)
        (files / "config.yaml").write_text(f"_wandb:\n  value: {{}}\nx:\n  desc: null\n  value: {x}\n")
        (files / "wandb-summary.json").write_text(json.dumps({"val_acc": acc, "_runtime": 3.5, "_step": 9}))
    trials = read_wandb(tmp_path / "wandb")
    assert trials.frame["config.x"].tolist() == [0.1, 0.5, 0.9]
    assert trials.frame["val_acc"].tolist() == [0.5, 0.7, 0.6]
    assert trials.frame["runtime_seconds"].tolist() == [3.5, 3.5, 3.5]


def test_wandb_bad_input_is_one_line(runs, tmp_path, capsys):
    import shutil

    copy = tmp_path / "wandb"
    shutil.copytree(runs, copy)
    log = sorted(copy.glob("*run-*/run-*.wandb"))[0]
    log.write_bytes(b"not a log")
    one_error_line(["curve", str(copy)], capsys, r"run-\w+\.wandb: not a W&B run log \(no :W&B header\)$")
    shutil.rmtree(log.parent)
    summary = sorted(copy.glob("*run-*"))[0] / "files" / "wandb-summary.json"
    for run_log in summary.parent.parent.glob("run-*.wandb"):
        run_log.unlink()
    summary.write_text('{"val_acc": 0.5')  # truncated
    one_error_line(["curve", str(copy)], capsys, r"wandb-summary\.json: '\{\"val_acc\": 0\.5' is not JSON$")
    summary.write_text("[0.5]")  # wrong type
    one_error_line(["curve", str(copy)], capsys, r"wandb-summary\.json: not a JSON object of summary metrics$")


def test_an_offline_run_without_wandb_says_how_to_read_it(runs, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "wandb", None)  # import wandb raises ImportError
    monkeypatch.setitem(sys.modules, "wandb.proto", None)
    one_error_line(["curve", str(runs)], capsys, r"run-\w+\.wandb: an offline W&B run keeps its steps in this binary log, "
                   r"read with wandb: pip install wandb \(or wandb sync the run, then read its files/ folder\)$")
