"""``syw reseed study=<name> [family=<f>] reseed.best=k reseed.seeds=m [overrides]``:
rerun a family's best k assignments with m new training seeds each (Melis et al. 2018, section 7.2).

The assignments are ranked from the family's records as the runner finds them (random search, or
the tuner run that ``strategy`` and ``tuner.seed`` name), best first by the study's direction, ties
by trial index. Rerun j of trial t trains under the name ``<run>.reseed<j>``: its training seed is
``trial_seed(seed, "<run>.reseed<j>", t)``, none of them the original's. Records go to
``results/<study>/reseed/<source>.jsonl`` (``<source>``: the source file's path in the study folder,
``/`` read as ``.``), each with the original ``trial``, ``rerun``, ``train_seed``, ``source_file``
(in the study folder) and ``source_value``; the same command resumes, running only the (trial, rerun) pairs without a
record. ``syw seeds`` reports the spread.
"""
from __future__ import annotations

import logging
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from syw.core.entry import exit_on
from syw.core.errors import ConfigError, DataError, DataMissingError
from syw.core.paths import CONF_DIR
from syw.core.records import RecordError, RecordsBusy, RecordsWriter, iter_records, latest_per_trial
from syw.core.units import human_duration
from syw.experiments.checks import check_assignment, check_family_code, study_file, validate
from syw.experiments.cluster import ClusterUnreachable, node_resources, ray_log, start_ray, stop_ray, trial_resources
from syw.experiments.given_study import with_study_file
from syw.experiments.jobs import Job, fit_jobs, slots, trial_kwargs
from syw.experiments.plan import record_base, records_file
from syw.experiments.preflight import PreflightError, preflight
from syw.experiments.progress import Progress
from syw.experiments.run import DataProblem, TrialsLost, stopped
from syw.experiments.space import Family, trial_seed
from syw.experiments.trial import suite_commit
from syw.experiments.tuner import tuner_of


def reseed_path(study_dir: Path, source: Path) -> Path:
    """``<study_dir>/reseed/<source>.jsonl``, the source's path inside the study folder with ``/`` as ``.``."""
    return Path(study_dir) / "reseed" / ".".join(Path(source).relative_to(study_dir).parts)


def best_trials(source: Path, k: int, maximize: bool) -> list[dict[str, Any]]:
    """The ``k`` best ok trials of a records file (fewer when it has fewer), best first, ties by index."""
    ok = [r for r in latest_per_trial(iter_records(source)) if r["status"] == "ok"]
    if not ok:
        raise RecordError(f"{source}: no ok trial to rerun (run the study first: syw run)")
    return sorted(ok, key=lambda r: (-r["value"] if maximize else r["value"], r["trial"]))[:k]


def jobs_for(cfg: DictConfig, family: Family) -> tuple[Path, Path, list[dict[str, Any]]]:
    """The source records, the reseed records and the (trial, rerun) jobs without a record, each with
    its assignment; existing reruns must be of the source's current assignments and study seed."""
    source = records_file(cfg, family)
    study_dir = Path(cfg.paths.results_dir) / cfg.study.name
    path = reseed_path(study_dir, source)
    chosen = best_trials(source, int(cfg.reseed.best), cfg.study.direction == "max")
    for record in chosen:  # what syw run would not train, a rerun does not either
        check_assignment(family, record, source)
    by_trial = {r["trial"]: r for r in latest_per_trial(iter_records(source))}
    done = set()
    for r in iter_records(path):
        origin = by_trial.get(r["trial"])
        moved = origin is not None and r.get("params") is not None and any(
            r["params"].get(k) != origin["params"].get(k) for k in family.search)
        if r.get("seed") != cfg.seed or origin is None or moved:
            raise ConfigError(path, f"trial {r['trial']} rerun {r.get('rerun')}", f"reran another assignment or study seed "
                              f"than {source} now holds (seed {cfg.seed}); delete the file to start over")
        done.add((r["trial"], r.get("rerun")))
    jobs = [{"trial": r["trial"], "rerun": j, "params": {k: r["params"][k] for k in family.search}, "value": r["value"]}
            for r in chosen for j in range(int(cfg.reseed.seeds)) if (r["trial"], j) not in done]
    return source, path, jobs


def rerun_jobs(cfg: DictConfig, family: Family, source: Path, jobs: list[dict[str, Any]]) -> list[Job]:
    """The reruns of ``family`` as jobs of one Tune run: rerun j of trial t trains under ``<run>.reseed<j>``
    on t's assignment, and its record gets ``rerun``, ``train_seed``, ``source_file`` and ``source_value``."""
    run_name = tuner_of(cfg, family).run_name(family.name)
    shown = str(source.relative_to(Path(cfg.paths.results_dir) / cfg.study.name))
    out = []
    for job in jobs:
        name = f"{run_name}.reseed{job['rerun']}"
        out.append(Job(family.name, job["trial"], job["params"], name, {
            "rerun": job["rerun"], "train_seed": trial_seed(cfg.seed, name, job["trial"]),
            "source_file": shown, "source_value": job["value"]}))
    return out


def rerun_progress(cfg: DictConfig, family: Family, writer: RecordsWriter, source: Path, count: int, slots_: int,
                   command: str) -> Progress:
    """The progress of ``family``'s ``count`` reruns still to run: the fixed fields of their records (the source's
    strategy fields and the reseed settings beside the study's) and the counts its lines show (the total: those
    and the reruns already recorded)."""
    base = {**record_base(cfg, family, command),
            **{k: v for k, v in next(iter_records(source)).items() if k in ("strategy", "tuner_seed", "tuner")},
            "reseed": {"best": int(cfg.reseed.best), "seeds": int(cfg.reseed.seeds)}}
    earlier = list(iter_records(writer.path))
    return Progress(writer, family, cfg.study.metric, cfg.study.direction == "max", count + len(earlier), count, slots_,
                    base, earlier=earlier)


def rerun_all(cfg: DictConfig, families: list[Family], resources: dict, commit: str) -> None:
    """Run every family's reruns without a record in one Tune run (:mod:`syw.experiments.jobs`), appending one
    record per finished rerun."""
    command = " ".join(["syw reseed", *sys.argv[1:]])
    study_dir = Path(cfg.paths.results_dir) / cfg.study.name
    with ExitStack() as stack:
        jobs, progresses, at_once = [], {}, slots(resources)
        for family in families:
            writer = stack.enter_context(RecordsWriter(reseed_path(study_dir, records_file(cfg, family))))
            source, _, pending = jobs_for(cfg, family)  # re-read under the lock
            if pending:
                progresses[family.name] = rerun_progress(cfg, family, writer, source, len(pending), at_once, command)
                jobs += rerun_jobs(cfg, family, source, pending)
        if jobs:
            fit_jobs(cfg, f"{cfg.study.name}-reseed", jobs, {f.name: f for f in families}, progresses, resources,
                     trial_kwargs(cfg, commit, command))
    stopped(progresses.values())


def prepare(cfg: DictConfig) -> dict[str, tuple[Family, list[dict[str, Any]]]]:
    """Every check that needs no Ray; each family with the reruns it still has to run."""
    families = validate(cfg)
    for key in ("reseed.best", "reseed.seeds"):
        value = OmegaConf.select(cfg, key, default=None)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(study_file(), key, f"must be a positive whole number, got {value!r}")
    todo = {}
    for family in families:
        check_family_code(family)
        todo[family.name] = (family, jobs_for(cfg, family)[2])
    return todo


USAGE = "syw reseed study=NAME|PATH.yaml [family=F] reseed.best=K reseed.seeds=M [other overrides]"
DESCRIPTION = """\
Rerun a family's K best assignments with M new training seeds each (Melis et al. 2018, section 7.2), to
see how much of the gap between families a seed alone makes. The reruns' records go to
results/<study>/reseed/, and the same command resumes; syw seeds reports their spread."""  # what --help says
OVERRIDES = """  study=NAME|PATH.yaml       the study whose records are ranked (default sst5)
  family=F                   rerun only this family's best assignments
  reseed.best=K              how many of the family's best assignments to rerun (default 1)
  reseed.seeds=M             new training seeds per assignment (default 5)
  dry_run=true               print the reruns to run; train nothing
  paths.results_dir=DIR      where the records are read and the reruns go (default: results/ here)"""  # the main ones


def main() -> None:
    """``syw reseed``: Hydra's overrides from ``sys.argv``, a ``study=<file>.yaml`` among them given by path
    (:mod:`syw.experiments.given_study`)."""
    with exit_on(ConfigError):
        sys.argv = [sys.argv[0], *with_study_file(sys.argv[1:])]
    reseed_study()


@hydra.main(version_base=None, config_path=str(CONF_DIR), config_name="config")
def reseed_study(cfg: DictConfig) -> None:
    with exit_on(ConfigError, RecordError, DataMissingError, DataError, OSError):
        todo = prepare(cfg)
    for name, (family, jobs) in todo.items():
        print(f"[{cfg.study.name}/{name}] {len(jobs)} reruns to run: " + (", ".join(
            f"trial {t} ({sum(j['trial'] == t for j in jobs)} seeds)" for t in dict.fromkeys(j["trial"] for j in jobs)) or "none"))
    if cfg.dry_run or not any(jobs for _, jobs in todo.values()):
        return
    with exit_on(PreflightError, RecordsBusy):  # before Ray's start-up, and before anything is written
        study_dir = Path(cfg.paths.results_dir) / cfg.study.name
        preflight(cfg, [reseed_path(study_dir, records_file(cfg, family)) for family, jobs in todo.values() if jobs])
    logging.raiseExceptions = False  # a log line a full disk did not take is no traceback: the run's error line says why
    started = time.perf_counter()
    with exit_on(ClusterUnreachable):
        start_ray(cfg.ray.address, cfg.ray.verbose, ray_log(cfg.paths.results_dir, cfg.study.name))
    try:
        with exit_on(RecordsBusy, ConfigError, DataProblem, TrialsLost, RecordError, OSError):  # OSError: a disk that took no record or Tune state
            resources = trial_resources(cfg.resources.cpus_per_trial, cfg.resources.gpus_per_trial, node_resources(), study_file())
            commit = suite_commit()
            rerun_all(cfg, [family for family, jobs in todo.values() if jobs], resources, commit)
    finally:
        stop_ray()
    left = sum(len(jobs_for(cfg, family)[2]) for family, _ in todo.values())
    took = human_duration(time.perf_counter() - started)
    if left:
        print(f"[{cfg.study.name}] stopped after {took} with {left} reruns left; the same command resumes", file=sys.stderr)
        sys.exit(130)
    print(f"[{cfg.study.name}] reruns done in {took}", flush=True)


if __name__ == "__main__":
    main()
