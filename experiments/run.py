"""``python -m experiments.run study=<name> [overrides]``: seeded random search on Ray Tune.

Validates the study and its families (and that existing records were drawn with the same
seed and search space), then runs every trial index without a record in
``results/<study>/<family>.jsonl`` (so the same command resumes a killed run), appending one
record per finished trial.
"""
from __future__ import annotations

import ast
import getpass
import importlib.metadata
import importlib.util
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, is_dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from data.download import DataMissingError
from experiments.context import TrialContext
from experiments.records import RecordsBusy, RecordsWriter, done_indices, iter_records
from experiments.space import CONF_DIR, ConfigError, Family, load_family, trial_seed

REPO = CONF_DIR.parent


def _now() -> str:
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


def hardware(device: str) -> dict[str, Any]:
    """CPU model, core count, GPU name (or none) and host of the process running a trial."""
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
    return {"cpu": cpu, "cpu_count": os.cpu_count(), "gpu": gpu, "host": socket.gethostname()}


def versions() -> dict[str, str]:
    """Python and torch versions (read from package metadata: importing torch here would cost seconds)."""
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = "not installed"
    return {"python": platform.python_version(), "torch": torch_version}


# ----------------------------------------------------------------------------- validation
def study_file() -> str:
    try:
        return str(CONF_DIR / "study" / f"{HydraConfig.get().runtime.choices['study']}.yaml")
    except Exception:  # not under Hydra (tests call the helpers directly)
        return "<study config>"


def _require(cfg: DictConfig, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = OmegaConf.select(cfg, key, default=None)
    if value is None or isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise ConfigError(where, key, f"missing or of the wrong type (got {value!r})")
    return value


def validate(cfg: DictConfig) -> list[Family]:
    """Check the study block, the run settings and every family file; return the families to run."""
    where = study_file()
    study = cfg.get("study")
    if not isinstance(study, DictConfig):
        raise ConfigError(where, "study", "missing: choose a study, e.g. study=sst5")
    known = {"name", "description", "figure", "dataset", "splits", "families", "metric", "direction"}
    unknown = set(study) - known
    if unknown:
        raise ConfigError(where, f"study.{sorted(unknown)[0]}", f"unknown key (allowed: {', '.join(sorted(known))})")
    _require(cfg, "study.name", str, where)
    _require(cfg, "study.metric", str, where)
    _require(cfg, "study.dataset", DictConfig, where)
    families = _require(cfg, "study.families", DictConfig, where)
    if not families:
        raise ConfigError(where, "study.families", "a study needs at least one family")
    if cfg.study.get("direction") not in ("max", "min"):
        raise ConfigError(where, "study.direction", f"must be max or min, got {cfg.study.get('direction')!r}")
    trials, seed = cfg.get("trials"), cfg.get("seed")
    if not isinstance(trials, int) or isinstance(trials, bool) or trials < 1:
        raise ConfigError(where, "trials", f"must be a positive integer, got {trials!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ConfigError(where, "seed", f"must be an integer, got {seed!r}")
    cpus = cfg.resources.get("cpus_per_trial")
    if not isinstance(cpus, (int, float)) or isinstance(cpus, bool) or cpus <= 0:
        raise ConfigError(where, "resources.cpus_per_trial", f"must be a positive number, got {cpus!r}")
    gpus = cfg.resources.get("gpus_per_trial")
    if gpus != "auto" and (not isinstance(gpus, (int, float)) or isinstance(gpus, bool) or gpus < 0):
        raise ConfigError(where, "resources.gpus_per_trial", f"must be auto or a number >= 0, got {gpus!r}")
    if cfg.family is not None and cfg.family not in families:
        raise ConfigError(where, "family", f"unknown family {cfg.family!r} in study {cfg.study.name} (has: {', '.join(families)})")
    names = [cfg.family] if cfg.family is not None else list(families)
    dirs = [Path(d) for d in cfg.paths.get("family_dirs") or []]
    out = []
    for name in names:
        try:
            out.append(load_family(str(families[name]), name=name, dirs=dirs))
        except ConfigError as err:
            if err.key == "family":  # the study names a file that does not exist
                raise ConfigError(where, f"study.families.{name}", err.problem) from None
            raise
    return out


# ----------------------------------------------------------------------------- one trial
def run_trial(config: dict, *, family: Family, study: str, seed: int, dataset: dict, paths: dict, commit: str, command: str) -> None:
    """The Ray Tune function trainable: train one trial and report its record (never raises)."""
    from hydra.utils import get_method
    from ray import tune

    index = int(config["trial_index"])
    params = family.params(seed, index)
    device = "cuda" if _has_gpu() else "cpu"
    ctx = TrialContext(
        study=study,
        family=family.name,
        trial_index=index,
        seed=trial_seed(seed, family.name, index),
        data_dir=Path(paths["data_dir"]),
        cache_dir=Path(paths["cache_dir"]),
        dataset=dataset,
        device=device,
    )
    record: dict[str, Any] = {"trial": index, "params": params, "started_at": _now()}
    start = time.perf_counter()
    try:
        train = get_method(family.train_target)
        outcome = train(params, ctx)
        outcome = asdict(outcome) if is_dataclass(outcome) else dict(outcome)
        value = float(outcome.pop("metric"))
        if value != value:
            raise ValueError("the training function returned NaN as its validation score")
        record.update(status="ok", value=value, error=None, **outcome)
    except DataMissingError as err:  # not the trial's fault: the driver stops the study and records nothing
        record.update(status="data_missing", value=None, error=str(err))
    except BaseException as err:  # noqa: BLE001 - a failed trial is recorded, the study goes on
        record.update(status="failed", value=None, error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc(limit=8))
    record["duration_seconds"] = round(time.perf_counter() - start, 4)
    record["ended_at"] = _now()
    record["hardware"] = hardware(device)
    record["versions"] = {**versions(), "suite_commit": commit}
    tune.report({"record": record})


def _has_gpu() -> bool:
    try:
        import ray

        return bool(ray.get_gpu_ids())
    except Exception:
        return False


# ----------------------------------------------------------------------------- the driver
class Progress:
    """Writes each finished trial's record and prints one progress line for it; a trial that
    found a data file missing is not recorded but noted in ``data_missing``, which stops the study.

    ``earlier`` are the family's records from before a resume: the best value and
    the time estimate count them too.
    """

    def __init__(self, writer: RecordsWriter, family: Family, metric: str, maximize: bool, total: int, pending: int,
                 concurrency: int, base: dict, earlier: list[dict] = ()):
        self.writer, self.family, self.metric, self.maximize = writer, family, metric, maximize
        self.total, self.left, self.concurrency, self.base = total, pending, max(1, concurrency), base
        self.best: float | None = None
        self.durations: list[float] = []
        self.data_missing: str | None = None  # set by the first trial that found a data file missing
        for record in earlier:
            self._count(record)

    def _count(self, record: dict) -> None:
        if record.get("duration_seconds"):
            self.durations.append(record["duration_seconds"])
        value = record.get("value")
        if value is not None and (self.best is None or (value > self.best if self.maximize else value < self.best)):
            self.best = value

    def finish(self, record: dict) -> None:
        record = {**self.base, **record}
        if record["status"] == "data_missing":  # every trial would fail alike: stop, keep no record
            if self.data_missing is None:
                self.data_missing = record["error"]
                print(f"[{record['study']}/{self.family.name}] trial {record['trial']:>3} found a data file missing; "
                      "stopping the study (no record written)", flush=True)
            return
        self.writer.append(record)
        self.left -= 1
        self._count(record)
        value = record.get("value")
        eta = self.left * (sum(self.durations) / max(1, len(self.durations))) / self.concurrency
        shown = f"{self.metric}={value:.4f}" if value is not None else f"FAILED ({record.get('error')})"
        best = f"{self.best:.4f}" if self.best is not None else "-"
        print(
            f"[{record['study']}/{self.family.name}] trial {record['trial']:>3} {shown} "
            f"({record['duration_seconds']:.1f} s) best={best} | {self.left} of {self.total} left, ~{_clock(eta)} to go",
            flush=True,
        )


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


def _callback(progress: Progress):
    from ray.tune import Callback

    class RecordCallback(Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            if "record" in result:
                progress.finish(result["record"])

        def on_trial_error(self, iteration, trials, trial, **info):
            # the trainable never raises; this is a crashed worker (e.g. killed by the OS)
            progress.finish({
                "trial": int(trial.config["trial_index"]), "params": None, "status": "failed", "value": None,
                "error": f"worker crashed: {trial.error_file or 'no error file'}", "duration_seconds": 0.0,
                "started_at": None, "ended_at": _now(),
            })

    return RecordCallback()


def _stopper(progress: Progress):
    from ray.tune import Stopper

    class StopWhenDataMissing(Stopper):
        def __call__(self, trial_id, result):
            return False

        def stop_all(self):
            return progress.data_missing is not None

    return StopWhenDataMissing()


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

    runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}}
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


def gpus_per_trial(setting: Any) -> float:
    import ray

    have = ray.cluster_resources().get("GPU", 0)
    if setting == "auto":
        return 1.0 if have else 0.0
    if setting and not have:
        raise ConfigError(study_file(), "resources.gpus_per_trial", f"{setting} GPUs per trial asked for, but the Ray cluster has no GPU")
    return float(setting)


def run_family(cfg: DictConfig, family: Family, pending: list[int], resources: dict, commit: str) -> None:
    from ray import tune

    study = cfg.study.name
    path = Path(cfg.paths.results_dir) / study / f"{family.name}.jsonl"
    command = " ".join(["python -m experiments.run", *sys.argv[1:]])
    base = {"study": study, "family": family.name, "family_file": str(family.file.relative_to(REPO) if family.file.is_relative_to(REPO) else family.file),
            "seed": cfg.seed, "metric": cfg.study.metric, "direction": cfg.study.direction, "command": command, "user": getpass.getuser()}
    import ray

    slots = ray.cluster_resources().get("CPU", 1) // resources["cpu"]
    if resources.get("gpu"):
        slots = min(slots, ray.cluster_resources().get("GPU", 0) // resources["gpu"])
    with RecordsWriter(path) as writer:
        pending = sorted(set(pending) - done_indices(path))  # re-read under the lock
        if not pending:
            return
        progress = Progress(writer, family, cfg.study.metric, cfg.study.direction == "max", cfg.trials, len(pending),
                            int(slots), base, earlier=list(iter_records(path)))
        trainable = tune.with_resources(
            tune.with_parameters(
                run_trial, family=family, study=study, seed=cfg.seed, dataset=OmegaConf.to_container(cfg.study.dataset),
                paths={"data_dir": cfg.paths.data_dir, "cache_dir": cfg.paths.cache_dir}, commit=commit, command=command,
            ),
            resources,
        )
        tuner = tune.Tuner(
            trainable,
            param_space={"trial_index": tune.grid_search(pending)},
            tune_config=tune.TuneConfig(reuse_actors=True),
            run_config=tune.RunConfig(
                name=f"{study}-{family.name}",
                storage_path=str(Path(cfg.paths.results_dir).resolve() / ".tune"),
                verbose=int(cfg.ray.verbose),
                callbacks=[_callback(progress)],
                stop=_stopper(progress),
                failure_config=tune.FailureConfig(max_failures=0),
            ),
        )
        tuner.fit()
    if progress.data_missing is not None:
        raise DataMissingError(progress.data_missing)


def print_assignments(cfg: DictConfig, family: Family, done: set[int]) -> None:
    import pandas as pd

    rows = [{"trial": i, "done": "yes" if i in done else "", **family.params(cfg.seed, i)} for i in range(cfg.trials)]
    frame = pd.DataFrame(rows)
    searched = ["trial", "done", *sorted(family.search)]
    print(f"\n{cfg.study.name}/{family.name} ({family.file.name}, {family.label}; train: {family.train_target}); fixed: "
          + ", ".join(f"{k}={v}" for k, v in family.fixed.items() if k not in family.search))
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.float_format", "{:.4g}".format):
        print(frame[searched].to_string(index=False))


def defined_in_source(target: str) -> bool:
    """Whether ``package.module.name`` is a top-level def, class, assignment or import in the
    module's source file, read without running the module (so the driver does not pay for a
    model's libraries, e.g. 1 s for scikit-learn, which only the trial workers need)."""
    module, _, name = target.rpartition(".")
    try:
        spec = importlib.util.find_spec(module) if module else None
        tree = ast.parse(Path(spec.origin).read_bytes()) if spec and (spec.origin or "").endswith(".py") else None
    except (ImportError, ValueError, SyntaxError, OSError):
        return False
    names: set[str] = set()
    for node in tree.body if tree else []:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(assigned.id for assigned in node.targets if isinstance(assigned, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return name in names


def check_records_match(family: Family, seed: int, path: Path) -> None:
    """Refuse to add trials to a records file whose trials were drawn otherwise (another seed, an
    edited search space): resuming only runs the missing indices, so it would mix two searches.
    Settings a record does not have are not compared (a fixed setting added to a family later,
    whose default keeps what the older records ran)."""
    for record in iter_records(path):
        if record.get("params") is None:  # a crashed worker's record carries no assignment
            continue
        drawn = json.loads(json.dumps(family.params(seed, int(record["trial"])), default=str))
        differ = ", ".join(f"{key}={value!r} there, {drawn.get(key)!r} now"
                           for key, value in sorted(record["params"].items()) if drawn.get(key) != value)
        if differ:
            raise ConfigError(path, f"trial {record['trial']}", f"was run with seed {record.get('seed')} and "
                              f"{record.get('family_file')}; this run (seed {seed}, {family.file.name}) draws other "
                              f"hyperparameters ({differ}). Give this run its own paths.results_dir, or delete "
                              "the file to start over")


def check_trainable(family: Family) -> None:
    """Fail early, and plainly, when a family's training function does not exist yet (read from
    the source when it is plainly defined there, else imported to be sure)."""
    from hydra.utils import get_method

    if defined_in_source(family.train_target):
        return
    try:
        get_method(family.train_target)
    except Exception:
        raise ConfigError(family.file, "train._target_", f"{family.train_target} cannot be imported: the model of family "
                          f"{family.name!r} is not in this suite yet (dry_run=true still shows its assignments)") from None


@hydra.main(version_base=None, config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> None:
    try:
        families = validate(cfg)
        if not cfg.dry_run:
            for family in families:
                check_trainable(family)
        for family in families:
            if family.replay is not None:  # every replayed row must lie in the space, before Ray starts
                for index in range(cfg.trials):
                    family.params(cfg.seed, index)
        results = Path(cfg.paths.results_dir) / cfg.study.name
        for family in families:
            check_records_match(family, cfg.seed, results / f"{family.name}.jsonl")
    except (ConfigError, DataMissingError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    todo = {f.name: sorted(set(range(cfg.trials)) - done_indices(results / f"{f.name}.jsonl")) for f in families}
    if cfg.dry_run:
        for family in families:
            print_assignments(cfg, family, set(range(cfg.trials)) - set(todo[family.name]))
        return
    if not any(todo.values()):
        print(f"{cfg.study.name}: all {cfg.trials} trials of {', '.join(todo)} have records in {results}; nothing to run")
        return
    started = time.perf_counter()
    joined = start_ray(cfg.ray.address, cfg.ray.verbose)
    import ray

    how = ("a new local Ray" if joined is None else "joined" if cfg.ray.address
           else "joined the cluster in RAY_ADDRESS or of the last `ray start`; ray.address=local starts a new Ray")
    print(f"[{cfg.study.name}] Ray ready in {time.perf_counter() - started:.1f} s (cluster "
          f"{ray.get_runtime_context().gcs_address}, this node {ray.util.get_node_ip_address()}; {how})", flush=True)
    try:
        resources = {"cpu": float(cfg.resources.cpus_per_trial), "gpu": gpus_per_trial(cfg.resources.gpus_per_trial)}
        commit = suite_commit()
        for family in families:
            if todo[family.name]:
                print(f"[{cfg.study.name}/{family.name}] {len(todo[family.name])} of {cfg.trials} trials to run "
                      f"({resources['cpu']:g} CPU, {resources['gpu']:g} GPU each) -> {results / (family.name + '.jsonl')}", flush=True)
                run_family(cfg, family, todo[family.name], resources, commit)
    except (RecordsBusy, ConfigError, DataMissingError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    finally:
        stop_ray()
    print(f"[{cfg.study.name}] done in {_clock(time.perf_counter() - started)}", flush=True)


if __name__ == "__main__":
    main()
