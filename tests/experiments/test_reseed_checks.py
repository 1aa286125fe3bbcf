"""`syw reseed` trains a record's assignment again only when `syw run` would have trained it: a best
record without an assignment, with a searched key missing or outside its distribution, or run with a
fixed setting the family file no longer has, is one line naming the records file and trial, exit 2."""
import subprocess
import sys

import pytest

from syw.core.errors import ConfigError
from syw.experiments.reseed import jobs_for
from tests.experiments.test_reseed import TOY, cfg, source, write
from tests.support.runner_util import REPO, runner_env


def best(**params) -> dict:
    """Trial 1, the best of three, with ``params`` in its assignment (None: no key; ``params=None``: no assignment)."""
    record = source(1, 0.9)
    if "params" in params and params["params"] is None:
        return {**record, "params": None}
    merged = {**record["params"], **params}
    return {**record, "params": {k: v for k, v in merged.items() if v is not None}}


@pytest.mark.parametrize("record, problem", [
    (best(kind=None), "its assignment has no kind, which toy.yaml searches"),
    (best(params=None), "has no assignment to train again (params is null)"),
    (best(x=5.0), "x=5.0 is not in toy.yaml's search space (5.0 is outside [0.0, 1.0]); the family file changed since "
                  "this trial ran"),
    (best(kind="d"), "kind='d' is not in toy.yaml's search space ('d' is not one of ['a', 'b', 'c'])"),
    (best(width=2.5), "width=2.5 is not in toy.yaml's search space (2.5 is not an integer)"),
    (best(noise=0.5), "ran with noise=0.5, toy.yaml now fixes 0.05"),
], ids=["key-missing", "params-null", "outside-a-range", "not-a-choice", "not-an-integer", "fixed-setting-changed"])
def test_a_best_record_off_the_search_space_is_refused(tmp_path, record, problem):
    path = tmp_path / "toy" / "toy.jsonl"
    write(path, [source(0, 0.5), record, source(2, 0.7)])
    with pytest.raises(ConfigError) as caught:
        jobs_for(cfg(tmp_path), TOY)
    assert str(caught.value).startswith(f"{path}: trial 1: {problem}")


def test_records_in_the_space_are_rerun(tmp_path):
    write(tmp_path / "toy" / "toy.jsonl", [source(0, 0.5), best(), source(2, 0.7)])
    assert [(j["trial"], j["rerun"]) for j in jobs_for(cfg(tmp_path, best=1, seeds=2), TOY)[2]] == [(1, 0), (1, 1)]


@pytest.mark.slow
def test_the_command_refuses_in_one_line_before_ray(tmp_path):
    path = tmp_path / "toy" / "toy.jsonl"
    write(path, [source(0, 0.5), best(kind=None)])
    done = subprocess.run([sys.executable, "-m", "syw", "reseed", "study=toy", "reseed.best=1", f"paths.results_dir={tmp_path}"],
                          cwd=REPO, env=runner_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [f"error: {path}: trial 1: its assignment has no kind, which toy.yaml searches"]
    assert not (tmp_path / "toy" / "reseed").exists()
