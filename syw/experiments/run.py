"""``syw run study=<name> [overrides]``: seeded search on Ray Tune.

Checks the study, its families and any existing records before Ray starts
(:mod:`syw.experiments.checks`), then runs every trial index without a record in
``results/<study>/<family>.jsonl`` (so the same command resumes a killed run; with
``retry_failed=true`` also the indices whose latest record failed; with ``only=[3, 7]`` only
those indices), appending one record per finished trial (:mod:`syw.experiments.trial`,
:mod:`syw.experiments.progress`) on a local Ray or a cluster (:mod:`syw.experiments.cluster`).
Assignments are seeded random draws, or suggested by an adaptive tuner (``strategy=gp``,
:mod:`syw.experiments.tuner`) recorded in a file of its own.
"""
from __future__ import annotations

import logging
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import hydra
from omegaconf import DictConfig

from syw.core.entry import exit_on
from syw.core.errors import ConfigError, DataError, DataMissingError
from syw.core.paths import CONF_DIR
from syw.core.records import RecordError, RecordsBusy, RecordsWriter, done_indices, iter_records, latest_per_trial
from syw.core.units import human_duration
from syw.experiments.checks import check_family_code, check_records_match, study_file, validate
from syw.experiments.cluster import ClusterUnreachable, node_resources, ray_log, start_ray, stop_ray, trial_resources
from syw.experiments.cost import cost_lines
from syw.experiments.jobs import Job, fit_jobs, record_base, slots, trial_kwargs
from syw.experiments.preflight import PreflightError, preflight
from syw.experiments.progress import WORKER_RETRIES, Progress, data_stopper, record_callback
from syw.experiments.space import Family
from syw.experiments.trial import suite_commit
from syw.experiments.tuner import adaptive_setup, check_adaptive, tuner_of


class DataProblem(RuntimeError):
    """A trial found a data file missing or malformed: the study stops with the reader's message."""


class TrialsLost(RuntimeError):
    """A trial's worker died on every try (:data:`WORKER_RETRIES` reruns): the study stops, the trial unrecorded."""


def family_trials(cfg: DictConfig, name: str) -> int:
    """The trial count of family ``name``: its entry in ``study.trials`` (a study may give one family
    more trials, as the paper's SciTail n-gram baseline had), else the run's ``trials``."""
    return int((cfg.study.get("trials") or {}).get(name, cfg.trials))


def records_file(cfg: DictConfig, family: Family) -> Path:
    """Where the family's records are: ``results/<study>/<family>.jsonl`` for random search, a file
    per tuner run for an adaptive one (:meth:`syw.experiments.tuner.Tuner.records_path`)."""
    return tuner_of(cfg, family).records_path(Path(cfg.paths.results_dir) / cfg.study.name, family.name)


def progress_for(cfg: DictConfig, family: Family, writer: RecordsWriter, pending: int, slots_: int, command: str) -> Progress:
    """The progress of ``family``'s run: its records' fixed fields (study, family file, seed, metric, command,
    strategy) and the counts its progress lines show."""
    tuner = tuner_of(cfg, family)
    base = {**record_base(cfg, family, command), **tuner.fields()}
    concurrency = min(slots_, tuner.concurrency) if tuner.adaptive else slots_
    return Progress(writer, family, cfg.study.metric, cfg.study.direction == "max", family_trials(cfg, family.name), pending,
                    concurrency, base, earlier=list(iter_records(writer.path)))


def run_random(cfg: DictConfig, families: list[Family], todo: dict[str, list[int]], resources: dict, commit: str) -> bool:
    """Run the ``todo`` trial indices of the random-search ``families`` in one Tune run (:mod:`syw.experiments.jobs`),
    appending a record per finished trial; True when it stopped with trials left (Ctrl-C: Tune ends the fit)."""
    command = " ".join(["syw run", *sys.argv[1:]])
    with ExitStack() as stack:
        jobs, progresses, at_once = [], {}, slots(resources)
        for family in families:
            writer = stack.enter_context(RecordsWriter(records_file(cfg, family)))
            pending = sorted(set(todo[family.name]) - done_indices(writer.path, retry_failed=cfg.retry_failed))  # under the lock
            if pending:
                progresses[family.name] = progress_for(cfg, family, writer, len(pending), at_once, command)
                jobs += [Job(family.name, index) for index in pending]
        if not jobs:
            return False
        fit_jobs(cfg, f"{cfg.study.name}-random", jobs, {f.name: f for f in families}, progresses, resources,
                 trial_kwargs(cfg, commit, command))
    return stopped(progresses.values())


def run_adaptive(cfg: DictConfig, family: Family, pending: list[int], resources: dict, commit: str) -> bool:
    """Run an adaptive tuner's ``pending`` trials of ``family`` (the records so far told to it first), appending a
    record per finished trial; True when it stopped with trials left."""
    from ray import tune

    tuner = tuner_of(cfg, family)
    command = " ".join(["syw run", *sys.argv[1:]])
    with RecordsWriter(records_file(cfg, family)) as writer:
        pending = sorted(set(pending) - done_indices(writer.path, retry_failed=cfg.retry_failed))  # re-read under the lock
        if not pending:
            return False
        progress = progress_for(cfg, family, writer, len(pending), slots(resources), command)
        history = check_adaptive(family, tuner, cfg.seed, writer.path, cfg.retry_failed, study_file())
        trainable, space, search = adaptive_setup(family, tuner, cfg.study.direction == "max", history, pending,
                                                  trial_kwargs(cfg, commit, command))
        tune.Tuner(
            tune.with_resources(trainable, resources),
            param_space=space,
            tune_config=tune.TuneConfig(reuse_actors=True, **search),
            run_config=tune.RunConfig(
                name=f"{cfg.study.name}-{tuner.run_name(family.name)}",
                storage_path=str(Path(cfg.paths.results_dir).resolve() / ".tune"),
                verbose=int(cfg.ray.verbose),
                callbacks=[record_callback(progress, ray_log(cfg.paths.results_dir, cfg.study.name))],
                stop=data_stopper([progress]),
                failure_config=tune.FailureConfig(max_failures=WORKER_RETRIES),
            ),
        ).fit()
    return stopped([progress])


def stopped(progresses) -> bool:
    """Whether a run ended with trials left; a trial that met a data problem raises :class:`DataProblem`, one
    whose worker died on every try :class:`TrialsLost`."""
    for progress in progresses:
        if progress.data_problem is not None:
            raise DataProblem(progress.data_problem)
        if progress.lost:
            raise TrialsLost("; ".join(progress.lost))
    return any(progress.left > 0 for progress in progresses)


def print_assignments(cfg: DictConfig, family: Family, done: set[int]) -> None:
    """The dry run's table: every trial's assignment and whether it has a record already (an
    adaptive run's recorded assignments; the rest are suggested as the earlier trials finish)."""
    import pandas as pd

    tuner = tuner_of(cfg, family)
    if tuner.adaptive:
        recorded = {r["trial"]: r["params"] or {} for r in latest_per_trial(iter_records(records_file(cfg, family)))}
        print(f"\n{cfg.study.name}/{family.name}: strategy {tuner.strategy}, tuner seed {tuner.seed}, concurrency "
              f"{tuner.concurrency}, {tuner.startup_trials} random startup trials; {len(recorded)} recorded, the other "
              f"{family_trials(cfg, family.name) - len(done)} suggested as earlier trials finish")
    rows = [{"trial": i, "done": "yes" if i in done else "",
             **(recorded.get(i, {}) if tuner.adaptive else family.params(cfg.seed, i))}
            for i in range(family_trials(cfg, family.name)) if not tuner.adaptive or i in recorded]
    if not rows:
        return
    frame = pd.DataFrame(rows)
    searched = ["trial", "done", *sorted(family.search)]
    print(f"\n{cfg.study.name}/{family.name} ({family.file.name}, {family.label}; train: {family.train_target}); fixed: "
          + ", ".join(f"{k}={v}" for k, v in family.fixed.items() if k not in family.search))
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.float_format", "{:.4g}".format):
        print(frame[searched].to_string(index=False))


def pending(cfg: DictConfig, family: str, path: Path) -> list[int]:
    """The trial indices below the family's trial count (or those ``only`` names) that ``path`` has no
    record for (or, with ``retry_failed``, no ok one)."""
    wanted = set(cfg.only) if cfg.get("only") is not None else set(range(family_trials(cfg, family)))
    return sorted(wanted - done_indices(path, retry_failed=cfg.retry_failed))


def check_only(cfg: DictConfig, family: Family) -> None:
    """``only`` picks trials of a random search, each below the family's trial count."""
    if cfg.get("only") is None:
        return
    tuner, count = tuner_of(cfg, family), family_trials(cfg, family.name)
    if tuner.adaptive:
        raise ConfigError(study_file(), "only", f"an adaptive search ({tuner.strategy}) suggests its trials in order: "
                                                "only is for random search")
    beyond = [i for i in cfg.only if i >= count]
    if beyond:
        raise ConfigError(study_file(), "only", f"trial {beyond[0]} is not below {family.name}'s {count} trials")


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
        path = records_file(cfg, family)
        tuner = tuner_of(cfg, family)
        check_only(cfg, family)
        if tuner.adaptive:
            check_adaptive(family, tuner, cfg.seed, path, cfg.retry_failed, study_file())
        else:
            check_records_match(family, cfg.seed, path)
        todo[family.name] = pending(cfg, family.name, path)
    return families, todo, results


def announce(cfg: DictConfig, family: Family, todo: dict[str, list[int]], resources: dict) -> None:
    """The line a family's run starts with: how many trials, how (an adaptive tuner's settings), on what, and where to."""
    tuner = tuner_of(cfg, family)
    how = f"{tuner.strategy}, tuner seed {tuner.seed}, {tuner.concurrency} at a time; " if tuner.adaptive else ""
    print(f"[{cfg.study.name}/{family.name}] {len(todo[family.name])} of {family_trials(cfg, family.name)} trials to run ({how}"
          f"{resources['cpu']:g} CPU, {resources['gpu']:g} GPU each) -> {records_file(cfg, family)}", flush=True)


def run_all(cfg: DictConfig, families: list[Family], todo: dict[str, list[int]], resources: dict, commit: str) -> None:
    """The random-search families together (:func:`run_random`), then each adaptive one alone; an interrupted
    run leaves the later families to the same command, as it leaves the rest of its own."""
    runs = [f for f in families if todo[f.name]]
    random = [f for f in runs if not tuner_of(cfg, f).adaptive]
    for family in random:
        announce(cfg, family, todo, resources)
    interrupted = bool(random) and run_random(cfg, random, todo, resources, commit)
    for family in (f for f in runs if tuner_of(cfg, f).adaptive):
        if interrupted:
            return
        announce(cfg, family, todo, resources)
        interrupted = run_adaptive(cfg, family, todo[family.name], resources, commit)


USAGE = "syw run study=NAME [family=F] [trials=N] [dry_run=true] [other overrides]"
DESCRIPTION = """\
Run a study's seeded random search (or an adaptive tuner's) on Ray Tune: check the study, its families
and any existing records, then train every trial without a record and append one record per finished
trial to results/<study>/<family>.jsonl, so the same command resumes a stopped run. dry_run=true checks
and prints the assignments and trains nothing."""  # what --help says before Hydra's overrides


@hydra.main(version_base=None, config_path=str(CONF_DIR), config_name="config")
def main(cfg: DictConfig) -> None:
    with exit_on(ConfigError, RecordError, DataMissingError, DataError, OSError):  # a replay file is data too
        families, todo, results = prepare(cfg)
    if cfg.dry_run:
        for family in families:
            print_assignments(cfg, family, done_indices(records_file(cfg, family), retry_failed=cfg.retry_failed))
        with exit_on(ConfigError, RecordError):
            print("\n".join(cost_lines(cfg.study.name, families, {f.name: family_trials(cfg, f.name) for f in families}, todo, results,
                                       [Path(d) for d in cfg.paths.get("family_dirs") or []])))
        return
    if not any(todo.values()):
        kept = "ok records" if cfg.retry_failed else "records (retry_failed=true reruns the failed ones)"
        counts = ", ".join(f"{family_trials(cfg, name)} of {name}" for name in todo)
        which = f"trials {list(cfg.only)}" if cfg.get("only") is not None else f"all trials ({counts})"
        print(f"{cfg.study.name}: {which} have {kept} in {results}; nothing to run")
        return
    with exit_on(PreflightError, RecordsBusy):  # before Ray's start-up, and before anything is written
        preflight(cfg, [records_file(cfg, f) for f in families if todo[f.name]])
    logging.raiseExceptions = False  # a log line a full disk did not take is no traceback: the run's error line says why
    started = time.perf_counter()
    with exit_on(ClusterUnreachable):
        joined = start_ray(cfg.ray.address, cfg.ray.verbose, ray_log(cfg.paths.results_dir, cfg.study.name))
    import ray

    how = ("a new local Ray" if joined is None else "joined" if cfg.ray.address
           else "joined the cluster in RAY_ADDRESS or of the last `ray start`; ray.address=local starts a new Ray")
    print(f"[{cfg.study.name}] Ray ready in {time.perf_counter() - started:.1f} s (cluster "
          f"{ray.get_runtime_context().gcs_address}, this node {ray.util.get_node_ip_address()}; {how})", flush=True)
    try:
        with exit_on(RecordsBusy, ConfigError, DataProblem, TrialsLost, RecordError, OSError):  # OSError: a disk that took no record or Tune state
            resources = trial_resources(cfg.resources.cpus_per_trial, cfg.resources.gpus_per_trial, node_resources(), study_file())
            commit = suite_commit()
            run_all(cfg, families, todo, resources, commit)
    finally:
        stop_ray()
    took = human_duration(time.perf_counter() - started)
    left = {f.name: len(pending(cfg, f.name, records_file(cfg, f))) for f in families}
    if any(left.values()):  # stopped early (Ctrl-C, a stopped cluster): say so, and how to go on
        print(f"[{cfg.study.name}] stopped after {took} with trials left ("
              + ", ".join(f"{name}: {n}" for name, n in left.items() if n) + "); the same command resumes", file=sys.stderr)
        sys.exit(130)
    print(f"[{cfg.study.name}] done in {took}", flush=True)


if __name__ == "__main__":
    main()
