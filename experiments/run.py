"""``python -m experiments.run study=<name> [overrides]``: seeded random search on Ray Tune.

Checks the study, its families and any existing records before Ray starts
(:mod:`experiments.checks`), then runs every trial index without a record in
``results/<study>/<family>.jsonl`` (so the same command resumes a killed run; with
``retry_failed=true`` also the indices whose latest record failed), appending one record per
finished trial (:mod:`experiments.trial`, :mod:`experiments.progress`) on a local Ray or a
cluster (:mod:`experiments.cluster`).
"""
from __future__ import annotations

import getpass
import sys
import time
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from data.download import DataError, DataMissingError
from experiments.checks import check_family_code, check_records_match, study_file, validate
from experiments.cluster import node_resources, start_ray, stop_ray, trial_resources
from experiments.cost import cost_lines
from experiments.progress import Progress, data_stopper, record_callback
from experiments.records import RecordError, RecordsBusy, RecordsWriter, done_indices, iter_records
from experiments.space import REPO, ConfigError, Family
from experiments.trial import run_trial, suite_commit
from experiments.units import human_duration


class DataProblem(RuntimeError):
    """A trial found a data file missing or malformed: the study stops with the reader's message."""


def family_trials(cfg: DictConfig, name: str) -> int:
    """The trial count of family ``name``: its entry in ``study.trials`` (a study may give one family
    more trials, as the paper's SciTail n-gram baseline had), else the run's ``trials``."""
    return int((cfg.study.get("trials") or {}).get(name, cfg.trials))


def run_family(cfg: DictConfig, family: Family, pending: list[int], resources: dict, commit: str) -> None:
    """Run the ``pending`` trial indices of one family on Ray Tune, appending a record per finished trial."""
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
        pending = sorted(set(pending) - done_indices(path, retry_failed=cfg.retry_failed))  # re-read under the lock
        if not pending:
            return
        progress = Progress(writer, family, cfg.study.metric, cfg.study.direction == "max", family_trials(cfg, family.name), len(pending),
                            int(slots), base, earlier=list(iter_records(path)))
        trainable = tune.with_resources(
            tune.with_parameters(
                run_trial, family=family, study=study, seed=cfg.seed, dataset=OmegaConf.to_container(cfg.study.dataset),
                paths={"data_dir": cfg.paths.data_dir, "cache_dir": cfg.paths.cache_dir,
                       "results_dir": str(Path(cfg.paths.results_dir).resolve())}, commit=commit, command=command,
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
                callbacks=[record_callback(progress)],
                stop=data_stopper(progress),
                failure_config=tune.FailureConfig(max_failures=0),
            ),
        )
        tuner.fit()
    if progress.data_problem is not None:
        raise DataProblem(progress.data_problem)


def print_assignments(cfg: DictConfig, family: Family, done: set[int]) -> None:
    """The dry run's table: every trial's assignment and whether it has a record already."""
    import pandas as pd

    rows = [{"trial": i, "done": "yes" if i in done else "", **family.params(cfg.seed, i)}
            for i in range(family_trials(cfg, family.name))]
    frame = pd.DataFrame(rows)
    searched = ["trial", "done", *sorted(family.search)]
    print(f"\n{cfg.study.name}/{family.name} ({family.file.name}, {family.label}; train: {family.train_target}); fixed: "
          + ", ".join(f"{k}={v}" for k, v in family.fixed.items() if k not in family.search))
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.float_format", "{:.4g}".format):
        print(frame[searched].to_string(index=False))


def pending(cfg: DictConfig, family: str, path: Path) -> list[int]:
    """The trial indices below the family's trial count that ``path`` has no record for (or, with
    ``retry_failed``, no ok one)."""
    return sorted(set(range(family_trials(cfg, family))) - done_indices(path, retry_failed=cfg.retry_failed))


def prepare(cfg: DictConfig) -> tuple[list[Family], dict[str, list[int]], Path]:
    """Every check that needs no Ray; the families and the trial indices each still has to run."""
    families = validate(cfg)
    for family in families:
        check_family_code(family)
        if family.replay is not None:  # every replayed row must lie in the space, before Ray starts
            for index in range(family_trials(cfg, family.name)):
                family.params(cfg.seed, index)
    results = Path(cfg.paths.results_dir) / cfg.study.name
    todo = {}
    for family in families:
        path = results / f"{family.name}.jsonl"
        check_records_match(family, cfg.seed, path)
        todo[family.name] = pending(cfg, family.name, path)
    return families, todo, results


@hydra.main(version_base=None, config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> None:
    try:
        families, todo, results = prepare(cfg)
    except (ConfigError, RecordError, DataMissingError, DataError) as err:  # a replay file is data too
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    if cfg.dry_run:
        for family in families:
            print_assignments(cfg, family, set(range(family_trials(cfg, family.name))) - set(todo[family.name]))
        try:
            print("\n".join(cost_lines(cfg.study.name, families, {f.name: family_trials(cfg, f.name) for f in families}, todo, results,
                                       [Path(d) for d in cfg.paths.get("family_dirs") or []])))
        except (ConfigError, RecordError) as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(2)
        return
    if not any(todo.values()):
        kept = "ok records" if cfg.retry_failed else "records (retry_failed=true reruns the failed ones)"
        counts = ", ".join(f"{family_trials(cfg, name)} of {name}" for name in todo)
        print(f"{cfg.study.name}: all trials ({counts}) have {kept} in {results}; nothing to run")
        return
    started = time.perf_counter()
    joined = start_ray(cfg.ray.address, cfg.ray.verbose)
    import ray

    how = ("a new local Ray" if joined is None else "joined" if cfg.ray.address
           else "joined the cluster in RAY_ADDRESS or of the last `ray start`; ray.address=local starts a new Ray")
    print(f"[{cfg.study.name}] Ray ready in {time.perf_counter() - started:.1f} s (cluster "
          f"{ray.get_runtime_context().gcs_address}, this node {ray.util.get_node_ip_address()}; {how})", flush=True)
    try:
        resources = trial_resources(cfg.resources.cpus_per_trial, cfg.resources.gpus_per_trial, node_resources(), study_file())
        commit = suite_commit()
        for family in families:
            if todo[family.name]:
                print(f"[{cfg.study.name}/{family.name}] {len(todo[family.name])} of {family_trials(cfg, family.name)} trials to run "
                      f"({resources['cpu']:g} CPU, {resources['gpu']:g} GPU each) -> {results / (family.name + '.jsonl')}", flush=True)
                run_family(cfg, family, todo[family.name], resources, commit)
    except (RecordsBusy, ConfigError, DataProblem, RecordError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    finally:
        stop_ray()
    took = human_duration(time.perf_counter() - started)
    left = {f.name: len(pending(cfg, f.name, results / f"{f.name}.jsonl")) for f in families}
    if any(left.values()):  # stopped early (Ctrl-C, a stopped cluster): say so, and how to go on
        print(f"[{cfg.study.name}] stopped after {took} with trials left ("
              + ", ".join(f"{name}: {n}" for name, n in left.items() if n) + "); the same command resumes", file=sys.stderr)
        sys.exit(130)
    print(f"[{cfg.study.name}] done in {took}", flush=True)


if __name__ == "__main__":
    main()
