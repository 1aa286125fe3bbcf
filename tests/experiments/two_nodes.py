"""Two Ray nodes on one machine for the cluster tests: a head and a worker, each in a network namespace
of its own, joined by a veth pair on a private /30, with token authentication on.

Everything is named after the test process's PID, and torn down with it: every process in the two
namespaces is killed (they are all this test's), then the namespaces go, and the veth pair with them.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.runner_util import REPO, runner_env

HEAD_IP, WORKER_IP, PORT = "10.231.0.1", "10.231.0.2", 6379
ADDRESS = f"{HEAD_IP}:{PORT}"
RAY = str(Path(sys.executable).with_name("ray"))
# The GCS marks a node dead after this many missed health checks, one a second (Ray's default: 5, 3 s
# apart, after 5 s): the lost node's trials run again within seconds, not after a quarter minute.
FAST_HEALTH_CHECKS = {"RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3",
                      "RAY_health_check_initial_delay_ms": "1000"}


def ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


def why_no_namespaces() -> str | None:
    """Why this machine cannot hold the two namespaces (None when it can): not Linux, no `ip`, no root,
    or `ip netns add` refused (a container without CAP_SYS_ADMIN)."""
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux only"
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    if not Path(RAY).is_file():
        return "the ray command is not installed beside this Python"
    probe = f"syw-probe-{os.getpid()}"
    added = ip("netns", "add", probe)
    ip("netns", "del", probe)
    return None if added.returncode == 0 else f"ip netns add failed: {added.stderr.strip()}"


@dataclass
class TwoNodes:
    """The namespaces, the HOME that holds the cluster's token, and each node's Ray temp folder."""

    head: str
    worker: str
    home: Path
    temp: dict[str, Path]

    def env(self, **extra: str) -> dict[str, str]:
        """The runner's environment for a process on a node: HOME with the token, Ray's cluster switch left
        to Ray (0 would pin the driver to 127.0.0.1), ``extra`` on top."""
        env = runner_env(HOME=str(self.home))
        for name in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_ADDRESS", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"):
            env.pop(name, None)
        return {**env, **extra}

    def command(self, namespace: str, args: list[str]) -> list[str]:
        return ["ip", "netns", "exec", namespace, *args]

    def start_node(self, namespace: str) -> subprocess.CompletedProcess:
        """`ray start` the head or the worker in its namespace, as the runbook does (steps 3 and 4)."""
        common = ["--num-cpus=1", f"--temp-dir={self.temp[namespace]}", "--disable-usage-stats"]
        if namespace == self.head:
            args = [RAY, "start", "--head", f"--node-ip-address={HEAD_IP}", f"--port={PORT}", "--include-dashboard=false"]
            env = self.env(RAY_AUTH_MODE="token", **FAST_HEALTH_CHECKS)
        else:
            args = [RAY, "start", f"--address={ADDRESS}", f"--node-ip-address={WORKER_IP}"]
            env = self.env(RAY_AUTH_MODE="token")
        return subprocess.run(self.command(namespace, args + common), env=env, cwd=REPO, capture_output=True, text=True,
                              timeout=120)

    def pids(self, namespace: str) -> list[int]:
        listed = ip("netns", "pids", namespace)
        return [int(p) for p in listed.stdout.split()] if listed.returncode == 0 else []

    def kill(self, namespace: str) -> None:
        """SIGKILL every process in ``namespace`` (a lost node: nothing shuts down cleanly) and wait until all are gone."""
        deadline = time.time() + 30
        while (pids := self.pids(namespace)) and time.time() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)


def create(pid: int, home: Path) -> TwoNodes:
    """The namespaces ``syw-h<pid>`` and ``syw-w<pid>``, a veth pair between them, loopback up in each, and a
    fresh token in ``home``."""
    nodes = TwoNodes(f"syw-h{pid}", f"syw-w{pid}", home, {})
    a, b = f"syw{pid}a", f"syw{pid}b"  # interface names: at most 15 characters
    steps = [("netns", "add", nodes.head), ("netns", "add", nodes.worker),
             ("link", "add", a, "type", "veth", "peer", "name", b),
             ("link", "set", a, "netns", nodes.head), ("link", "set", b, "netns", nodes.worker),
             ("-n", nodes.head, "addr", "add", f"{HEAD_IP}/30", "dev", a),
             ("-n", nodes.worker, "addr", "add", f"{WORKER_IP}/30", "dev", b),
             ("-n", nodes.head, "link", "set", a, "up"), ("-n", nodes.worker, "link", "set", b, "up"),
             ("-n", nodes.head, "link", "set", "lo", "up"), ("-n", nodes.worker, "link", "set", "lo", "up")]
    for step in steps:
        done = ip(*step)
        if done.returncode != 0:
            raise RuntimeError(f"ip {' '.join(step)}: {done.stderr.strip()}")
    (home / ".ray").mkdir(parents=True)
    token = home / ".ray" / "auth_token"
    token.write_text(secrets.token_hex(32))  # what `ray get-auth-token --generate` writes
    token.chmod(0o600)
    for namespace in (nodes.head, nodes.worker):  # short: Ray's socket paths must fit 107 bytes
        nodes.temp[namespace] = Path(f"/tmp/{namespace}")
        shutil.rmtree(nodes.temp[namespace], ignore_errors=True)  # a killed earlier run of the same PID
        nodes.temp[namespace].mkdir()
    return nodes


@contextlib.contextmanager
def two_nodes(home: Path) -> Iterator[TwoNodes]:
    """:func:`create`, torn down however the block ends: the processes in both namespaces killed, then the
    namespaces deleted (their veth pair goes with them) and the Ray temp folders removed."""
    pid = os.getpid()
    names = [f"syw-h{pid}", f"syw-w{pid}"]
    nodes = TwoNodes(*names, home, {})
    try:
        nodes = create(pid, home)
        yield nodes
    finally:
        for namespace in names:
            nodes.kill(namespace)
            ip("netns", "del", namespace)
            shutil.rmtree(f"/tmp/{namespace}", ignore_errors=True)
        ip("link", "del", f"syw{pid}a")  # left in the root namespace when create() failed before moving it
