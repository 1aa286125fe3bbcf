"""A dead worker process is no trial failure (issue 63, item 2): Tune runs the trial again in the same command
(up to WORKER_RETRIES times), the record is the one an uninterrupted run writes and says which node ran it, and
Ray's report of the death goes to the study's Ray log, not the console; a worker that dies on every try stops the
study with one line, its trial unrecorded, so the same command runs it again."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from syw.core.context import TrialContext
from syw.experiments.progress import WORKER_RETRIES
from syw.experiments.space import load_family, trial_seed
from syw.models import toy
from tests.support.runner_util import REPO, records, run, runner_env

pytestmark = [pytest.mark.ray, pytest.mark.slow]

# SETTINGS are read from the module's source, so they are written out here (toy's own)
DYING = '''import os
import signal

from syw.models.toy import train as toy_train

SETTINGS = {
    "x": {"type": "float"}, "width": {"type": "int"}, "lr": {"type": "float", "min": 1e-12},
    "kind": {"values": ["a", "b", "c"]}, "work_seconds": {"type": "float", "min": 0.0, "default": 0.0},
    "noise": {"type": "float", "min": 0.0, "default": 0.0}, "fail_trials": {"type": "list", "items": "int", "default": []},
    "data_file": {"type": "str", "null": True, "default": None},
}


def train(params, ctx):
    """The toy, but a trial in fail_trials kills its own worker process (as the OOM killer would) instead of raising."""
    if ctx.trial_index in params["fail_trials"]:
        os.kill(os.getpid(), signal.SIGKILL)
    return toy_train(params, ctx)
'''


def family(folder: Path, seconds: float, train: str = "syw.models.toy.train", fail: list[int] = ()) -> list[str]:
    """Overrides running the toy study with trials of ``seconds`` each, trained by ``train``."""
    folder.mkdir(exist_ok=True)
    (folder / "toy_test.yaml").write_text(f"inherits: toy\ntrain: {{_target_: {train}}}\n"
                                          f"fixed: {{work_seconds: {seconds}, fail_trials: {list(fail)}}}\n")
    return ["study=toy", f"paths.family_dirs=[{folder}]", "study.families={toy: toy_test}"]


def expected_value(folder: Path, index: int) -> float:
    """Trial ``index``'s score, computed here as a trial computes it: the toy on the seeded draw and seed (without
    the busy wait, which the score does not depend on)."""
    params = {**load_family("toy_test", "toy", [folder]).params(0, index), "work_seconds": 0.0}
    ctx = TrialContext(study="toy", family="toy", trial_index=index, seed=trial_seed(0, "toy", index), data_dir=Path("."),
                       cache_dir=Path("."))
    return toy.train(params, ctx).metric


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the runner's Ray and its workers: only processes this test started)."""
    found, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            with open(task / "children") as handle:
                children = [int(c) for c in handle.read().split()]
            found += children
            todo += children
    return found


def trial_worker(runner: int) -> int | None:
    """A worker process of the runner's Ray running a trial (its title is ``ray::ImplicitFunc.train``), if one is."""
    for pid in descendants(runner):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::ImplicitFunc.train"):
                return pid
        except OSError:
            continue
    return None


def test_a_killed_worker_process_runs_its_trial_again_in_the_same_command(tmp_path):
    out = tmp_path / "results"
    path = out / "toy" / "toy.jsonl"
    runner = subprocess.Popen([sys.executable, "-m", "syw", "run", *family(tmp_path / "fam", 2.0), "trials=6",
                               f"paths.results_dir={out}", "ray.address=local"], cwd=REPO, env=runner_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        killed = None
        deadline = time.time() + 180
        while killed is None and runner.poll() is None and time.time() < deadline:
            worker = trial_worker(runner.pid) if path.exists() and records(path) else None
            if worker is not None:  # once a trial has been recorded: the next ones are mid-way
                os.kill(worker, signal.SIGKILL)
                killed = worker
            time.sleep(0.2)
        stdout, stderr = runner.communicate(timeout=180)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    assert killed is not None, "no trial worker was found to kill"
    assert runner.returncode == 0, stdout[-2000:] + stderr[-3000:]
    rows = records(path)
    assert sorted(r["trial"] for r in rows) == list(range(6)) and {r["status"] for r in rows} == {"ok"}
    assert [r["value"] for r in sorted(rows, key=lambda r: r["trial"])] == [expected_value(tmp_path / "fam", i) for i in range(6)]
    again = [r for r in rows if r.get("lost_workers")]
    assert [r["lost_workers"] for r in again] == [1], rows
    assert f"trial {again[0]['trial']:>3} lost its worker (ActorDiedError: " in stdout and "(retry 1 of 3)" in stdout, stdout
    assert all(r["node"]["ip"] == "127.0.0.1" and len(r["node"]["id"]) == 56 for r in rows)
    # Ray's 30-line report stays off the console, in the study's Ray log
    assert "(raylet)" not in stdout + stderr and "Traceback" not in stdout + stderr, stdout + stderr
    log = (out / ".tune" / "toy.ray.log").read_text()
    assert "A worker died or was killed" in log and f"pid: {killed}" in log


def test_a_worker_that_dies_on_every_try_stops_the_study_and_leaves_its_trial_to_the_same_command(tmp_path):
    (tmp_path / "dying.py").write_text(DYING)
    out = tmp_path / "results"
    overrides = [*family(tmp_path / "fam", 0.0, "dying.train", fail=[1]), "trials=3", f"paths.results_dir={out}"]
    env = runner_env(PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path)]))
    done = run(*overrides, "ray.address=local", env=env)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-3000:]
    log = out / ".tune" / "toy.ray.log"
    assert done.stderr.strip().splitlines() == [
        f"error: trial 1 of toy lost its worker on all {WORKER_RETRIES + 1} tries (last: ActorDiedError: The actor died "
        f"unexpectedly before finishing this task.; Ray's report is in {log}); nothing recorded for it, the same command "
        "runs it again"], done.stderr
    assert [f"(retry {n} of {WORKER_RETRIES})" in done.stdout for n in (1, 2, 3)] == [True] * 3, done.stdout
    assert "trial   1 lost its worker on all 4 tries; stopping the study (no record written)" in done.stdout
    rows = records(out / "toy" / "toy.jsonl") if (out / "toy" / "toy.jsonl").exists() else []
    assert 1 not in {r["trial"] for r in rows} and all(r["status"] == "ok" for r in rows)
    assert log.read_text().count("Trial task failed") == WORKER_RETRIES + 1
