"""Faults of the machine a study runs on are one line and exit status 2 before Ray starts, with nothing
written: results locations of the wrong type or read-only, Ray's temporary folder read-only or full,
a read-only HOME where Ray would make its auth token, no token for a cluster, an unreadable data file,
a second runner on the same records (read-only folders and small file systems: tests/experiments/mounts.py)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from syw.core.records import RecordsWriter
from syw.experiments.space import load_family
from tests.experiments.mounts import in_namespace, needs_mounts, read_only
from tests.support.runner_util import REPO, runner_env

pytestmark = pytest.mark.slow


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def refused(*overrides: str, mounts: str = "", **env: str) -> str:
    """The runner's one error line for ``overrides`` (``mounts``: shell commands run first, in its own mount
    namespace); it must exit 2 before Ray starts, without a traceback."""
    command = [sys.executable, "-m", "syw", "run", "study=toy", "trials=2", *overrides]
    if mounts:
        command = in_namespace(mounts, command)
    done = subprocess.run(command, cwd=REPO, env={**runner_env(), **env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-3000:]
    assert "Ray ready" not in done.stdout and "Traceback" not in done.stderr, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize("layout, results, expect", [
    ({"afile": ""}, "afile/results", "error: {t}/afile: a file, not a folder: the records cannot be made under it"),
    ({"results/toy": ""}, "results", "error: {t}/results/toy: a file, not a folder: the records cannot be written there"),
    ({"results/toy/toy.jsonl/": None}, "results", "error: {t}/results/toy/toy.jsonl: a folder, not a records file; move it away"),
    ({"results/toy/toy.jsonl.lock/": None}, "results",
     "error: {t}/results/toy/toy.jsonl.lock: a folder, not the records' lock file; move it away"),
    ({"results/toy/toy.jsonl.sha256/": None}, "results",
     "error: {t}/results/toy/toy.jsonl.sha256: a folder, not the records' manifest; move it away"),
    ({"results/.tune": ""}, "results", "error: {t}/results/.tune: a file, not a folder: Ray Tune's state cannot be written there"),
    ({"results/toy/resume": ""}, "results",
     "error: {t}/results/toy/resume: a file, not a folder: trials' resume files cannot be written there"),
], ids=["parent-is-a-file", "study-folder-is-a-file", "records-file-is-a-folder", "lock-is-a-folder", "manifest-is-a-folder",
        "tune-state-is-a-file", "resume-is-a-file"])
def test_a_results_location_of_the_wrong_type(tmp_path, layout, results, expect):
    for name, content in layout.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir() if content is None else path.write_text(content)
    before = snapshot(tmp_path)
    assert refused(f"paths.results_dir={tmp_path / results}") == expect.format(t=tmp_path)
    assert snapshot(tmp_path) == before


@needs_mounts
@pytest.mark.parametrize("made", ["with-records", "empty", "not-yet-made"])
def test_a_read_only_results_folder(tmp_path, made):
    results = tmp_path / "results"
    (results / "toy").mkdir(parents=True)
    if made == "with-records":
        record = {"study": "toy", "family": "toy", "seed": 0, "trial": 0, "params": load_family("toy").params(0, 0),
                  "status": "ok", "value": 0.5}
        (results / "toy" / "toy.jsonl").write_text(json.dumps(record) + "\n")
    where = tmp_path if made == "not-yet-made" else results / "toy"
    if made == "not-yet-made":
        shutil.rmtree(results)
    before = snapshot(tmp_path)
    line = refused(f"paths.results_dir={results}", mounts=read_only(tmp_path))
    assert line == f"error: {where}: cannot write the records there (Read-only file system)"
    assert snapshot(tmp_path) == before


@needs_mounts
def test_a_read_only_ray_temporary_folder(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    line = refused(f"paths.results_dir={tmp_path / 'results'}", mounts=read_only(temp), TMPDIR=str(temp))
    assert line == f"error: {temp}: cannot write Ray's session files (TMPDIR: {temp}) there (Read-only file system)"
    assert not (tmp_path / "results").exists()


@needs_mounts
def test_a_full_ray_temporary_folder(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    line = refused(f"paths.results_dir={tmp_path / 'results'}", mounts=f"mount -t tmpfs -o size=1m tmpfs {temp}",
                   RAY_TMPDIR=str(temp))
    assert line == (f"error: {temp}: only 1.0 MiB free for Ray's session files (RAY_TMPDIR: {temp}) (it needs 64 MiB); "
                    "make room there, or set RAY_TMPDIR to a folder with room")


@needs_mounts
def test_a_read_only_home_where_ray_would_make_its_token(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "RAY_AUTH_TOKEN": "", "RAY_AUTH_TOKEN_PATH": ""}
    line = refused(f"paths.results_dir={tmp_path / 'results'}", mounts=read_only(home), **env)
    assert line == (f"error: {home}: cannot write the auth token a new local Ray needs (~/.ray/auth_token) there (Read-only file "
                    "system): set HOME to a folder this user can write, or RAY_AUTH_TOKEN_PATH to a token file "
                    "(`ray get-auth-token --generate` writes one)")


def test_a_cluster_without_a_token_here(tmp_path):
    env = {"HOME": str(tmp_path), "RAY_AUTH_TOKEN": "", "RAY_AUTH_TOKEN_PATH": "", "RAY_AUTH_MODE": ""}
    line = refused(f"paths.results_dir={tmp_path / 'results'}", "ray.address=10.0.0.5:6379", **env)
    assert line == (f"error: ray.address=10.0.0.5:6379: no Ray auth token to join the cluster with: there is no "
                    f"{tmp_path}/.ray/auth_token; copy the head's ~/.ray/auth_token there (chmod 600; docs/running.md, the "
                    "cluster runbook, steps 3-4), or set RAY_AUTH_MODE=disabled for a cluster without token authentication")
    named = refused(f"paths.results_dir={tmp_path / 'results'}", "ray.address=10.0.0.5:6379",
                    **{**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(tmp_path / "token")})
    assert f"RAY_AUTH_TOKEN_PATH names {tmp_path}/token, which is no token file" in named


def test_a_data_file_of_the_study_that_is_a_folder(tmp_path):
    (tmp_path / "data" / "sst" / "train.txt").mkdir(parents=True)
    line = refused("study=sst5", "family=lr", f"paths.data_dir={tmp_path / 'data'}", f"paths.results_dir={tmp_path / 'results'}")
    assert line == f"error: {tmp_path}/data/sst/train.txt: the study reads it, and cannot (Is a directory)"


def test_a_second_runner_on_the_same_records_is_refused_before_ray_starts(tmp_path):
    path = tmp_path / "results" / "toy" / "toy.jsonl"
    with RecordsWriter(path):
        line = refused(f"paths.results_dir={tmp_path / 'results'}")
    assert line == (f"error: another runner (pid {os.getpid()}) is writing {path}; wait for it to finish or stop it, then "
                    "run the same command again to resume")
    assert not path.exists()


@pytest.mark.parametrize("link, to", [
    ("toy/toy.jsonl", "file"), ("toy/toy.jsonl.lock", "file"), ("toy/toy.jsonl.lock", "nothing"), ("toy", "folder"),
    ("toy/resume", "folder"), (".tune", "folder"), (".tune/toy.ray.log", "file"), (".tune/toy-random/tuner.pkl", "file"),
], ids=["records", "lock", "lock-to-nothing", "study-folder", "resume-folder", "tune-folder", "ray-log", "tune-state"])
def test_a_link_where_the_runner_writes_is_refused(tmp_path, link, to):
    """A symbolic link among the files and folders a run writes would have the lock's pid or the records written
    into the file it points to, wherever that is (a link to nothing: a new file there)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("keep me\n")
    target = {"file": elsewhere / "precious", "nothing": elsewhere / "new", "folder": elsewhere}[to]
    path = tmp_path / "results" / link
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    before = snapshot(tmp_path)
    assert refused(f"paths.results_dir={tmp_path / 'results'}") == (
        f"error: {path}: a symbolic link (to {target}): the runner writes no file through a link; remove it, or give "
        "the run another paths.results_dir")
    assert snapshot(tmp_path) == before and sorted(p.name for p in elsewhere.iterdir()) == ["precious"]
