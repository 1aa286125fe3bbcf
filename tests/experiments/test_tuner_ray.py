"""A GP search on Ray killed and resumed by the same command equals the uninterrupted one."""
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.runner_util import REPO, records, run, runner_env

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def test_sigkill_during_a_gp_search_then_the_same_command(tmp_path):
    fam = tmp_path / "fam"
    fam.mkdir()
    (fam / "toy_slow.yaml").write_text("inherits: toy\nfixed: {work_seconds: 1.0, fail_trials: [2]}\n")
    args = ["study=toy", f"paths.family_dirs=[{fam}]", "study.families={toy: toy_slow}", "trials=7", "strategy=gp",
            "tuner.seed=5", "tuner.startup_trials=3"]
    whole = tmp_path / "whole"
    done = run(*args, f"paths.results_dir={whole}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "7 of 7 trials to run (gp, tuner seed 5, 1 at a time;" in done.stdout

    killed = tmp_path / "killed"
    path = killed / "toy" / "gp" / "toy.tuner_seed5.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "syw", "run", *args, f"paths.results_dir={killed}"], cwd=REPO,
                            env=runner_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 240
    while time.time() < deadline and (not path.exists() or len(records(path)) < 4):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)  # past the 3 startup trials: the GP had suggested trial 3
    proc.wait()
    before = len(records(path))
    assert 4 <= before < 7
    again = run(*args, f"paths.results_dir={killed}")
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"{7 - before} of 7 trials to run" in again.stdout

    def sequence(rows):
        return [(r["trial"], r["params"], r["status"], r["value"], r["strategy"], r["tuner_seed"]) for r in rows]

    resumed = records(path)
    assert [r["trial"] for r in resumed] == list(range(7))  # nothing repeated, nothing lost
    assert sequence(resumed) == sequence(records(whole / "toy" / "gp" / "toy.tuner_seed5.jsonl"))
    assert [r["status"] for r in resumed].count("failed") == 1
