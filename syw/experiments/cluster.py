"""Ray for a study: join the cluster the settings name or start a local Ray on 127.0.0.1, and stop it.

Everything stays on loopback unless a cluster address says otherwise; clusters started by
`ray start` with token authentication get the token setting passed on.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from syw.core.errors import ConfigError
from syw.core.paths import CHECKOUT
from syw.core.units import count


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


# A new local Ray's raylet connects to the object store it runs in a thread of its own, and every
# worker to the raylet, retrying every raylet_client_connect_timeout_milliseconds (Ray's default:
# 10 tries, 1000 ms apart). In about 1 start in 3 on this 2-core VM the raylet's first try came
# before its store listened, and ray.init took a second longer. 100 tries 100 ms apart keep
# Ray's 10-s limit (benchmarks/ray_start.py measures the difference).
LOCAL_RAY_SYSTEM_CONFIG = {"raylet_client_connect_timeout_milliseconds": 100, "raylet_client_num_connect_attempts": 100}


def start_ray(address: str | None, verbose: int) -> str | None:
    """Join the cluster ``address`` resolves to (:func:`cluster_to_join`), or start a local Ray
    bound to 127.0.0.1; return the address joined, None for a local Ray."""
    joining = cluster_to_join(address)
    if on_loopback(joining):
        # Ray reads this when it is imported: without it, a local Ray (and a driver of a cluster on
        # 127.0.0.1, whose address Ray rewrites to the machine's) binds to the external address.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no traffic off this machine
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # our JSONL records are the log
    if joining and (Path.home() / ".ray" / "auth_token").is_file():
        os.environ.setdefault("RAY_AUTH_MODE", "token")  # clusters started by `ray start` require the token
    import logging

    import ray

    # the workers import the suite as this process does: from the checkout when it is one, else as installed
    runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT or ""), os.environ.get("PYTHONPATH")]))}}
    if not verbose:
        os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # with verbose=0 the legacy reporter prints nothing
    quiet = logging.INFO if verbose else logging.ERROR
    if joining:
        ray.init(address=joining, runtime_env=runtime_env, logging_level=quiet, log_to_driver=bool(verbose))
    else:  # "local": a running cluster's address in RAY_ADDRESS or Ray's temp folder does not count here
        ray.init(address="local", include_dashboard=False, runtime_env=runtime_env, logging_level=quiet,
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
