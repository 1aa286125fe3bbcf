"""A sequential study on Ray (issue 74): it stops by itself at the look its rule decides, records why, resumes
after SIGKILL at the same looks with no trial lost or duplicated, and once decided runs nothing."""
import os
import signal
import subprocess
import time

import pytest

from syw.core.manifest import check
from syw.curve.sequential import read_log
from tests.experiments.test_runner_ray import started_until
from tests.support.runner_util import records, run
from tests.support.sequential_toy import DECISION, sequential_toy

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def test_a_study_with_a_rule_stops_at_the_look_that_decides_and_a_rerun_runs_nothing(tmp_path):
    out = tmp_path / "results"
    study = sequential_toy(tmp_path / "conf")
    done = run(f"study={study}", f"paths.results_dir={out}")
    assert done.returncode == 0, done.stderr[-3000:]
    for family in ("hi", "lo"):  # look 2 of 3: 12 of the 18 trials per family, each once
        assert sorted(r["trial"] for r in records(out / "toy_seq" / f"{family}.jsonl")) == list(range(12))
    lines = read_log(out / "toy_seq" / "sequential.ndjson")
    assert [(l["look"], l.get("stopped", False)) for l in lines] == [(1, False), (2, False), (2, True)]
    assert [l["trials_per_family"] for l in lines] == [6, 12, 12] and lines[2]["why"] == DECISION
    first, second = lines[0]["budgets"], lines[1]["budgets"]
    assert [b["leader"] for b in first] == ["hi", None] and first[1]["statistic"] is None  # n = 2 needs 12 trials
    assert [b["decided_at"] for b in second] == [1, 2]
    for b in second:  # the repeated confidence interval holds the estimate and excludes 0, T beyond its boundary
        assert b["statistic"] > b["boundary"] > 0 and 0 < b["rci"][0] < b["estimate"] < b["rci"][1]
    assert "look 1 of 3: 6 trials per family" in done.stdout and "look 3 of 3" not in done.stdout
    assert f"[toy_seq] {DECISION}" in done.stdout
    log = (out / "toy_seq" / "sequential.ndjson").read_bytes()
    again = run(f"study={study}", f"paths.results_dir={out}")
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"[toy_seq] {DECISION}" in again.stdout and "nothing to run" in again.stdout and "Ray ready" not in again.stdout
    assert (out / "toy_seq" / "sequential.ndjson").read_bytes() == log
    assert len(records(out / "toy_seq" / "hi.jsonl")) == 12


def test_sigkill_during_a_look_then_the_same_command_reaches_the_same_decision(tmp_path):
    out = tmp_path / "results"
    study = sequential_toy(tmp_path / "conf", seconds=0.5)
    hi = out / "toy_seq" / "hi.jsonl"
    proc = started_until(hi, 8, f"study={study}", f"paths.results_dir={out}",  # look 1 is 6 per family: killed in look 2
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)
    before = {f: len(records(out / "toy_seq" / f"{f}.jsonl")) for f in ("hi", "lo")}
    assert 8 <= before["hi"] < 12, before
    assert [l["look"] for l in read_log(out / "toy_seq" / "sequential.ndjson")] == [1]
    done = run(f"study={study}", f"paths.results_dir={out}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "look 2 of 3: 12 trials per family" in done.stdout and f"[toy_seq] {DECISION}" in done.stdout
    for family in ("hi", "lo"):
        rows = records(out / "toy_seq" / f"{family}.jsonl")
        assert sorted(r["trial"] for r in rows) == list(range(12))  # none lost, none twice
        assert check(out / "toy_seq" / f"{family}.jsonl").ok
    lines = read_log(out / "toy_seq" / "sequential.ndjson")
    assert [(l["look"], l.get("stopped", False)) for l in lines] == [(1, False), (2, False), (2, True)]
    assert lines[2]["why"] == DECISION
