"""Ray for a study: join the cluster the settings name or start a local Ray on 127.0.0.1, and stop it.

Everything stays on loopback unless a cluster address says otherwise; clusters started by
`ray start` with token authentication get the token setting passed on.
"""
from __future__ import annotations

import contextlib
import logging
import os
import secrets
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from syw.core.errors import ConfigError
from syw.core.paths import CHECKOUT
from syw.core.units import count
from syw.experiments.imports import worker_pythonpath


def recorded_address() -> str | None:
    """Where ``ray.init()`` looks for a running cluster: the ``RAY_ADDRESS`` variable, else the
    address of the last `ray start` on this machine, recorded in Ray's temp folder."""
    recorded = Path(os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()) / "ray" / "ray_current_cluster"
    return os.environ.get("RAY_ADDRESS") or (recorded.read_text().strip() if recorded.is_file() else "") or None


def cluster_to_join(address: str | None) -> str | None:
    """The cluster ``ray.init(address=address)`` joins, or None when it starts a local Ray.

    Resolved as Ray 2.60 resolves it: no address means :func:`recorded_address`, else a new
    local Ray; ``auto`` the same, but Ray raises when there is nothing to join; ``local`` (also
    in ``RAY_ADDRESS``) always a new local Ray.
    """
    if not address or address == "auto":
        address = recorded_address() or address or None
    return None if address == "local" else address


def on_loopback(joining: str | None) -> bool:
    """Whether the driver's Ray lives on this machine's loopback: a new local Ray (None), or a
    cluster at 127.x/localhost/::1 (``joining`` as :func:`cluster_to_join` returns it)."""
    if joining is None:
        return True
    host = joining.split("://")[-1].rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


# How the runner opens Ray's log under <results_dir>/.tune: appended to, made when missing, never through a link.
APPEND_OWN = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW

# A new local Ray's raylet connects to the object store it runs in a thread of its own, and every
# worker to the raylet, retrying every raylet_client_connect_timeout_milliseconds (Ray's default:
# 10 tries, 1000 ms apart). In about 1 start in 3 on this 2-core VM the raylet's first try came
# before its store listened, and ray.init took a second longer. 100 tries 100 ms apart keep
# Ray's 10-s limit (benchmarks/ray_start.py measures the difference).
LOCAL_RAY_SYSTEM_CONFIG = {"raylet_client_connect_timeout_milliseconds": 100, "raylet_client_num_connect_attempts": 100}


def ray_log(results_dir: str | Path, study: str) -> Path:
    """Where a study's runs keep Ray's own messages (a dead worker's report, Tune's errors), appended
    to: ``<results_dir>/.tune/<study>.ray.log``, beside Tune's folders (git-ignored)."""
    return Path(results_dir).resolve() / ".tune" / f"{study}.ray.log"


def log_ray_to(log: Path | None, verbose: int) -> None:
    """Write the driver's Ray messages to ``log`` (None: nowhere), and to the console only with ``verbose``
    (Ray Tune's own tables on): with it off the console has the runner's lines alone, one for a lost worker.

    Ray 2.60 prints each error the cluster publishes (a dead worker or node: a 30-line report) to
    stdout, from a thread of its own, through ``ray._private.worker.print_to_stdstream``; with
    ``verbose`` off that goes to ``log`` too.
    """
    import ray._private.worker as ray_worker  # Ray 2.60's layout

    global _log_handler, _ray_print
    ray_logger = logging.getLogger("ray")
    if _log_handler is not None:  # an earlier study of this process (the tests) logged elsewhere
        ray_logger.removeHandler(_log_handler)
        _log_handler.close()
        _log_handler = None
    for handler in ray_logger.handlers:  # Ray's own handler, on stderr
        handler.setLevel(logging.INFO if verbose else logging.CRITICAL + 1)
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        _log_handler = _OwnFileHandler(log, encoding="utf-8")  # ray.init gives it Ray's own format
        ray_logger.addHandler(_log_handler)
    _ray_print = _ray_print or getattr(ray_worker, "print_to_stdstream", None)
    if _ray_print is not None:
        ray_worker.print_to_stdstream = _ray_print if verbose else _published_to_log


class _OwnFileHandler(logging.FileHandler):
    """A log file appended to, never through a symbolic link (``O_NOFOLLOW``; the preflight refuses one there first)."""

    def _open(self):
        return self._builtin_open(os.open(self.baseFilename, APPEND_OWN, 0o644), self.mode, encoding=self.encoding,
                                  errors=self.errors)


def _published_to_log(data: dict, ignore_prefix: bool) -> None:
    """Ray's ``print_to_stdstream``, but an error the cluster published (the ``raylet`` lines) goes to Ray's log."""
    if data.get("pid") == "raylet":
        logging.getLogger("ray.cluster").error("\n".join(data.get("lines", [])))
    else:
        _ray_print(data, ignore_prefix)


_log_handler: logging.Handler | None = None  # the file handler log_ray_to put on Ray's logger
_ray_print: Any = None  # Ray's own print_to_stdstream, before log_ray_to replaced it


class ClusterUnreachable(ConnectionError):
    """The cluster to join did not answer, or refused this driver's token; the message says which and what to do."""


def nonempty_file(path: str | Path | None) -> bool:
    """Whether ``path`` names a file with something in it (an empty token file is no token to Ray)."""
    return bool(path) and os.path.isfile(path) and os.path.getsize(path) > 0


def token_found() -> bool:
    """Whether Ray finds an auth token for this process: ``RAY_AUTH_TOKEN``, the file ``RAY_AUTH_TOKEN_PATH`` names,
    or ``~/.ray/auth_token``."""
    return bool(os.environ.get("RAY_AUTH_TOKEN")) or any(
        nonempty_file(path) for path in (os.environ.get("RAY_AUTH_TOKEN_PATH"), Path.home() / ".ray" / "auth_token"))


def local_token_needed() -> bool:
    """Whether a new local Ray would make a token: token authentication on (Ray 2.60's default for ``ray.init``) and none found."""
    return os.environ.get("RAY_AUTH_MODE", "token").lower() == "token" and not token_found()


def make_token() -> Path:
    """Make ``~/.ray/auth_token`` as a new local Ray would (256 random bits in hex, Ray 2.60's
    ``generate_new_authentication_token``), but readable by this user only: Ray writes it with the umask's mode
    (0644), though whoever holds the token may run code on the cluster. ``~/.ray``, when made here, is 0700 too."""
    folder = Path.home() / ".ray"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / "auth_token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_hex(32))
    return path


def token_source() -> str | None:
    """Where the token this driver sends comes from, as Ray 2.60 looks (with ``RAY_AUTH_MODE=token`` only):
    ``RAY_AUTH_TOKEN``, else the file ``RAY_AUTH_TOKEN_PATH`` names, else ``~/.ray/auth_token``; None: it sends none."""
    if os.environ.get("RAY_AUTH_MODE") != "token":
        return None
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    return str(path) if path.is_file() else None


def refusal(joining: str, token: str | None, refused: bool) -> str:
    """The line for a cluster that did not let this driver in: a token it refused, or none answering there."""
    if not refused:
        return (f"ray.address={joining}: no Ray cluster answered there; start its head (docs/running.md, runbook step 3) "
                "or give the address `ray start --head` printed, and check that this machine reaches it")
    have = (f"the token in {token} is not the cluster's" if token else
            "this driver sends none (no ~/.ray/auth_token, or RAY_AUTH_MODE is not token)")
    return (f"ray.address={joining}: the cluster refused this driver's auth token: {have}; copy the head's "
            "~/.ray/auth_token to ~/.ray/auth_token here (chmod 600; docs/running.md, runbook step 4)")


@contextlib.contextmanager
def stderr_to(log: Path | None) -> Iterator[None]:
    """File descriptor 2 into ``log`` in the block (None: left as it is): Ray's C++ client writes a warning
    there itself for each try at a cluster that does not answer or refuses the token."""
    if log is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.open(log, APPEND_OWN, 0o644), "ab") as sink:
            os.dup2(sink.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def join(joining: str, token: str | None, runtime_env: dict, verbose: int, log: Path | None) -> None:
    """``ray.init`` on the cluster at ``joining``, Ray's C++ warnings going to ``log`` unless ``verbose``.

    The cluster is asked once first: ray.init tries a refused token for 20 s and an address where
    nothing answers for minutes; either raises :class:`ClusterUnreachable` here, after 40 s at most.
    """
    import ray
    from ray._raylet import GcsClient  # Ray 2.60's layout
    from ray.exceptions import AuthenticationError, RpcError

    with stderr_to(None if verbose else log):
        try:
            GcsClient(address=joining)
            ray.init(address=joining, runtime_env=runtime_env, logging_level=logging.INFO, log_to_driver=bool(verbose))
        except AuthenticationError:
            raise ClusterUnreachable(refusal(joining, token, True)) from None
        except (RpcError, ConnectionError):  # the client's 40-s wait ran out, or ray.init's tries did
            raise ClusterUnreachable(refusal(joining, token, False)) from None


def start_ray(address: str | None, verbose: int, log: Path | None = None) -> str | None:
    """Join the cluster ``address`` resolves to (:func:`cluster_to_join`), or start a local Ray
    bound to 127.0.0.1, Ray's messages going to ``log`` (:func:`log_ray_to`); return the address
    joined, None for a local Ray."""
    joining = cluster_to_join(address)
    if on_loopback(joining):
        # Ray reads this when it is imported: without it, a local Ray (and a driver of a cluster on
        # 127.0.0.1, whose address Ray rewrites to the machine's) binds to the external address.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no traffic off this machine
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # our JSONL records are the log
    if joining and (Path.home() / ".ray" / "auth_token").is_file():
        os.environ.setdefault("RAY_AUTH_MODE", "token")  # clusters started by `ray start` require the token
    import ray

    # the workers import the suite as this process does (from the checkout when it is one, else as installed), and a
    # user's training function from the driver's current folder and PYTHONPATH (syw.experiments.imports)
    runtime_env = {"env_vars": {"PYTHONPATH": worker_pythonpath(CHECKOUT)}}
    if not verbose:
        os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # with verbose=0 the legacy reporter prints nothing
    log_ray_to(log, verbose)
    if joining:
        join(joining, token_source(), runtime_env, verbose, log)
    else:  # "local": a running cluster's address in RAY_ADDRESS or Ray's temp folder does not count here
        if local_token_needed() and not os.path.lexists(Path.home() / ".ray" / "auth_token"):
            make_token()  # before ray.init, which would make it world-readable
        ray.init(address="local", include_dashboard=False, runtime_env=runtime_env, logging_level=logging.INFO,
                 log_to_driver=bool(verbose), _system_config=LOCAL_RAY_SYSTEM_CONFIG)
    return joining


def stop_ray() -> None:
    """``ray.shutdown()``, a second sooner when this driver started the Ray itself.

    Ray 2.60 stops the GCS before the autoscaler monitor, whose SIGTERM handler then
    waits on the dead GCS until Ray kills it a second later. A Ray started by
    ``ray.init`` has nothing to autoscale, so the monitor is killed first. On a
    cluster this driver only joined, the monitor is not its process and this is
    plain ``ray.shutdown()``.
    """
    import ray

    node = getattr(getattr(getattr(ray, "_private", None), "worker", None), "_global_node", None)  # Ray 2.60's layout
    if node is not None and hasattr(node, "kill_monitor"):
        node.kill_monitor(check_alive=False)  # does nothing to processes this driver did not start
    ray.shutdown()


def node_resources() -> list[dict[str, float]]:
    """The resources of each live node of the Ray cluster this driver is connected to."""
    import ray

    return [node["Resources"] for node in ray.nodes() if node.get("Alive")]


def trial_resources(cpus: float, gpus: Any, nodes: list[dict[str, float]], where: str) -> dict[str, float]:
    """A trial's Ray resources, ``{"cpu": ..., "gpu": ...}``, checked against the cluster's nodes.

    ``gpus`` is ``auto`` (1 when a node has a GPU, else 0) or a number. A trial runs on one node,
    so a request that no single node can meet would wait forever in Ray's queue: it raises
    :class:`ConfigError` naming ``where`` and the setting instead.
    """
    most_gpus = max((node.get("GPU", 0) for node in nodes), default=0)
    most_cpus = max((node.get("CPU", 0) for node in nodes), default=0)
    if gpus == "auto":
        gpus = 1.0 if most_gpus >= 1 else 0.0
    gpus = float(gpus)
    if gpus and not most_gpus:
        raise ConfigError(where, "resources.gpus_per_trial", f"{count(gpus, 'GPU')} per trial asked for, but the Ray "
                          "cluster has no GPU (auto uses GPUs only where there are some)")
    if gpus > most_gpus:
        raise ConfigError(where, "resources.gpus_per_trial", f"{count(gpus, 'GPU')} per trial asked for, but the largest "
                          f"node of the Ray cluster has {most_gpus:g} (a trial runs on one node)")
    if cpus > most_cpus:
        raise ConfigError(where, "resources.cpus_per_trial", f"{count(cpus, 'CPU')} per trial asked for, but the largest "
                          f"node of the Ray cluster has {most_cpus:g} (a trial runs on one node)")
    return {"cpu": float(cpus), "gpu": gpus}
