"""One trial: train it in a Ray worker and report its record (assignment, outcome, time, machine, commit)."""
from __future__ import annotations

import importlib.metadata
import math
import os
import platform
import socket
import subprocess
import time
import traceback
from dataclasses import asdict, is_dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from syw.core.context import TrialContext, TrialFailed
from syw.core.errors import DataError, DataMissingError
from syw.core.paths import REPO
from syw.data.inputs import Seen, recording, sha256_of
from syw.experiments.space import Family, trial_seed

DATA_PROBLEM = "data_problem"  # a trial status that is never recorded: it stops the study


def now() -> str:
    """The current UTC time, ISO 8601 to the millisecond (a record's started_at and ended_at)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def suite_commit() -> str:
    """The suite's git commit, with ``-dirty`` when tracked files outside ``results/`` have changes.

    (Records and run logs under ``results/`` change while studies run; they are not the suite's code.)
    """
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results"],
                               cwd=REPO, capture_output=True, text=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def hardware(device: str, gpu_ids: list) -> dict[str, Any]:
    """CPU model, core count, host, and the GPUs Ray gave the trial (``gpu_ids``, with the
    ``CUDA_VISIBLE_DEVICES`` it set) and the name of the one trained on, or why none was."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = "none"
    if device == "cuda":
        import torch

        gpu = torch.cuda.get_device_name(torch.cuda.current_device())
    elif gpu_ids:
        gpu = f"none: Ray gave GPU {', '.join(map(str, gpu_ids))}, but torch sees no CUDA device"
    return {"cpu": cpu, "cpu_count": os.cpu_count(), "gpu": gpu, "gpu_ids": list(gpu_ids),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"), "host": socket.gethostname()}


def versions() -> dict[str, str]:
    """Python and torch versions (read from package metadata: importing torch here would cost seconds)."""
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = "not installed"
    return {"python": platform.python_version(), "torch": torch_version}


def run_trial(config: dict, *, family: Family, study: str, seed: int, dataset: dict, paths: dict, commit: str, command: str) -> None:
    """The Ray Tune function trainable: train one trial and report its record (never raises)."""
    from hydra.utils import get_method
    from ray import tune

    index = int(config["trial_index"])
    params = family.params(seed, index)
    gpu_ids = assigned_gpus()
    device = trial_device(gpu_ids)
    ctx = TrialContext(
        study=study,
        family=family.name,
        trial_index=index,
        seed=trial_seed(seed, family.name, index),
        data_dir=Path(paths["data_dir"]),
        cache_dir=Path(paths["cache_dir"]),
        dataset=dataset,
        device=device,
        output_dir=Path(paths["results_dir"]) / study if paths.get("results_dir") else None,
    )
    record: dict[str, Any] = {"trial": index, "params": params, "started_at": now()}
    start = time.perf_counter()
    read = Seen()  # the data and weight files the trial reads, and the version of each
    try:
        train = get_method(family.train_target)
        with recording() as read:
            outcome = train(params, ctx)
        outcome = asdict(outcome) if is_dataclass(outcome) else dict(outcome)
        value = float(outcome.pop("metric"))
        if not math.isfinite(value):
            raise TrialFailed(f"the training function returned {value} as its validation score")
        record.update(status="ok", value=value, error=None, **outcome)
    except (DataMissingError, DataError) as err:  # not the trial's fault: the study stops, nothing is recorded
        record.update(status=DATA_PROBLEM, value=None, error=str(err))
    except BaseException as err:  # noqa: BLE001 - a failed trial is recorded, the study goes on
        record.update(status="failed", value=None, error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc(limit=8))
    # a trial that went on from a saved epoch also counts the epochs its earlier runs finished
    resumed = record.get("resumed_after_epochs") or []
    earlier = sum(record["epoch_seconds"][:resumed[-1]]) if resumed else 0.0
    record["duration_seconds"] = round(time.perf_counter() - start + earlier, 4)
    try:  # checksums not timed
        digests = sha256_of(read)
    except (DataMissingError, DataError) as err:  # a file changed or went since the trial read it: no record names it
        digests = {}
        if record["status"] != DATA_PROBLEM:
            record.update(status=DATA_PROBLEM, value=None, error=str(err))
    record["inputs_sha256"] = {**digests, **(record.get("inputs_sha256") or {})}
    record["ended_at"] = now()
    record["hardware"] = hardware(device, gpu_ids)
    record["node"] = ray_node()
    record["versions"] = {**versions(), "suite_commit": commit}
    tune.report({"record": record})


def ray_node() -> dict[str, str] | None:
    """The Ray node this trial ran on (its IP address and node ID; None outside a Ray worker): nodes on
    one machine share its host name, so ``hardware.host`` alone does not tell them apart."""
    try:
        import ray

        return {"ip": ray.util.get_node_ip_address(), "id": ray.get_runtime_context().get_node_id()}
    except Exception:
        return None


def assigned_gpus() -> list:
    """The IDs of the GPUs Ray gave this trial (it sets ``CUDA_VISIBLE_DEVICES`` to them); empty
    outside a Ray worker."""
    try:
        import ray

        return list(ray.get_gpu_ids())
    except Exception:
        return []


def trial_device(gpu_ids: list) -> str:
    """``cuda`` when Ray gave the trial a GPU and torch can use it, else ``cpu`` (the record's
    ``hardware.gpu`` then says why; torch is imported only when a GPU was given)."""
    if not gpu_ids:
        return "cpu"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
