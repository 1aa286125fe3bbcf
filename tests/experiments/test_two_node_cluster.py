"""A study on a real two-node Ray cluster (issue 63, item 8): a head and a worker in two network namespaces
joined by a veth pair, token authentication on. The worker node is killed mid-study and the same command
completes the study with the records a local run writes; a driver without the token is refused in one line.
Teardown leaves no process and no namespace behind (checked after it)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.experiments.two_nodes import ADDRESS, HEAD_IP, WORKER_IP, TwoNodes, ip, two_nodes, why_no_namespaces
from tests.support.runner_util import REPO, records, run

pytestmark = [pytest.mark.cluster, pytest.mark.ray, pytest.mark.slow]

TRIALS, SECONDS = 6, 3.0  # a trial busies a core 3 s of wall time: the kill finds one in flight on the worker


def toy(folder: Path, results: Path) -> list[str]:
    """The toy study's overrides, its trials taking :data:`SECONDS` each, written to ``results``."""
    folder.mkdir(exist_ok=True)
    (folder / "toy_test.yaml").write_text(f"inherits: toy\nfixed: {{work_seconds: {SECONDS}}}\n")
    return ["study=toy", f"paths.family_dirs=[{folder}]", "study.families={toy: toy_test}", f"trials={TRIALS}",
            f"paths.results_dir={results}"]


def outcome(rows: list[dict]) -> dict[int, tuple]:
    """What must match between two runs of the study: each trial's assignment, value and status."""
    return {r["trial"]: (json.dumps(r["params"], sort_keys=True), r["value"], r["status"]) for r in rows}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = why_no_namespaces()
    if reason:
        pytest.skip(f"no two-node cluster here: {reason}")
    home = tmp_path_factory.mktemp("cluster") / "home"
    with two_nodes(home) as nodes:
        for namespace in (nodes.head, nodes.worker):
            started = nodes.start_node(namespace)
            assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-3000:]
        yield nodes
    assert not {nodes.head, nodes.worker} & set(ip("netns", "list").stdout.split()), "a namespace was left behind"
    left = subprocess.run(["pgrep", "-f", f"/tmp/({nodes.head}|{nodes.worker})"], capture_output=True, text=True).stdout
    assert not left.strip(), f"processes of the cluster were left behind: {left}"


def started_driver(nodes: TwoNodes, overrides: list[str], out: Path) -> subprocess.Popen:
    """`syw run` on the head node (runbook step 5), its output in ``out``.{stdout,stderr}."""
    args = [sys.executable, "-m", "syw", "run", *overrides, f"ray.address={ADDRESS}"]
    return subprocess.Popen(nodes.command(nodes.head, args), env=nodes.env(), cwd=REPO,
                            stdout=out.with_suffix(".stdout").open("w"), stderr=out.with_suffix(".stderr").open("w"))


def kill_worker_mid_study(nodes: TwoNodes, driver: subprocess.Popen, path: Path) -> None:
    """Once the worker node has recorded a trial (so it runs trials) and started its next, kill every process on it."""
    deadline = time.time() + 150
    while driver.poll() is None and time.time() < deadline:
        if path.exists() and any(r["node"]["ip"] == WORKER_IP for r in records(path)):
            time.sleep(1.0)  # the worker's next trial starts within this and lasts 3 s
            nodes.kill(nodes.worker)
            return
        time.sleep(0.2)
    raise AssertionError(f"the worker node recorded no trial before the study ended: {path.read_text() if path.exists() else ''}")


def test_a_study_survives_losing_the_worker_node_with_the_records_of_a_local_run(cluster, tmp_path):
    local = run(*toy(tmp_path / "fam", tmp_path / "local"), "ray.address=local")
    assert local.returncode == 0, local.stdout[-2000:] + local.stderr[-3000:]
    expected = outcome(records(tmp_path / "local" / "toy" / "toy.jsonl"))
    assert sorted(expected) == list(range(TRIALS))

    results = tmp_path / "cluster"
    path = results / "toy" / "toy.jsonl"
    driver = started_driver(cluster, toy(tmp_path / "fam", results), tmp_path / "driver")
    try:
        kill_worker_mid_study(cluster, driver, path)
        driver.wait(timeout=150)
    finally:
        driver.kill()
    stdout, stderr = (tmp_path / "driver.stdout").read_text(), (tmp_path / "driver.stderr").read_text()
    assert driver.returncode == 0, stdout[-2000:] + stderr[-3000:]
    assert f"(cluster {ADDRESS}, this node {HEAD_IP}; joined)" in stdout
    # the trial in flight on the lost node ran again in the same command, on the head, and nothing failed
    assert "lost its worker" in stdout and "running it again (retry 1 of 3)" in stdout, stdout
    rows = records(path)
    assert outcome(rows) == expected
    assert {r["node"]["ip"] for r in rows} == {HEAD_IP, WORKER_IP}
    rerun = [r for r in rows if r.get("lost_workers")]
    assert rerun and all(r["node"]["ip"] == HEAD_IP for r in rerun), rows
    # Ray's report of the dead node is in the study's Ray log, not on the console
    assert "(raylet)" not in stdout + stderr and "Traceback" not in stdout + stderr and not stderr.strip(), stderr
    log = (results / ".tune" / "toy.ray.log").read_text()
    assert "Trial task failed" in log and "Traceback" in log


@pytest.mark.parametrize("token", [None, "not-the-cluster-token"])
def test_a_driver_without_the_token_is_refused_in_one_line(cluster, tmp_path, token):
    """No token is refused before Ray starts (experiments/preflight.py), another token by the head."""
    home = tmp_path / "home"
    if token:
        (home / ".ray").mkdir(parents=True)
        (home / ".ray" / "auth_token").write_text(token)
    else:
        home.mkdir()
    args = [sys.executable, "-m", "syw", "run", *toy(tmp_path / "fam", tmp_path / "results"), f"ray.address={ADDRESS}"]
    done = subprocess.run(cluster.command(cluster.head, args), env={**cluster.env(), "HOME": str(home)}, cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: ray.address={ADDRESS}: "), done.stderr
    assert "auth token" in lines[0] and "runbook" in lines[0], lines[0]
    if token:
        assert f"the token in {home}/.ray/auth_token is not the cluster's" in lines[0], lines[0]
    assert not (tmp_path / "results" / "toy" / "toy.jsonl").exists()
