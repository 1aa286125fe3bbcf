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
from dataclasses import replace
from pathlib import Path

import hydra
from omegaconf import DictConfig

from syw.core.entry import exit_on
from syw.core.errors import ConfigError, DataError, DataMissingError
from syw.core.paths import CONF_DIR
from syw.core.records import RecordError, RecordsBusy, RecordsWriter, done_indices, iter_records, latest_per_trial
from syw.core.units import human_duration
from syw.curve.sequential import LOG_NAME
from syw.experiments.checks import check_family_code, check_records_match, family_dirs, study_file, validate
from syw.experiments.cluster import ClusterUnreachable, node_resources, ray_log, start_ray, stop_ray, trial_resources
from syw.experiments.cost import cost_lines
from syw.experiments.given_study import with_study_file
from syw.experiments.jobs import Job, fit, fit_jobs, slots, trial_kwargs
from syw.experiments.plan import FamilyPlan, Plan, command_line, family_trials, plan_of, records_file
from syw.experiments.preflight import PreflightError, check_records_links, preflight
from syw.experiments.progress import Progress, record_callback
from syw.experiments.same_inputs import check_one_version
from syw.experiments.sequential_study import decision_text, evaluate, record_looks, sequential_of
from syw.experiments.space import Family
from syw.experiments.trial import suite_commit
from syw.experiments.tuner import adaptive_setup, check_adaptive, tuner_of


class DataProblem(RuntimeError):
    """A trial found a data file missing or malformed: the study stops with the reader's message."""


class TrialsLost(RuntimeError):
    """A trial's worker died on every try (:data:`syw.experiments.progress.WORKER_RETRIES` reruns): the study stops, the trial unrecorded."""


def progress_for(cfg: DictConfig, plan: FamilyPlan, writer: RecordsWriter, pending: int, slots_: int) -> Progress:
    """The progress of a family's run: its records' fixed fields (the plan's) and the counts its progress lines show."""
    concurrency = min(slots_, plan.tuner.concurrency) if plan.tuner.adaptive else slots_
    return Progress(writer, plan.family, cfg.study.metric, cfg.study.direction == "max", plan.trials, pending,
                    concurrency, plan.fields, earlier=list(iter_records(writer.path)))


def run_random(cfg: DictConfig, plans: list[FamilyPlan], resources: dict, commit: str) -> bool:
    """Run the random-search families' pending trials in one Tune run (:mod:`syw.experiments.jobs`),
    appending a record per finished trial; True when it stopped with trials left (Ctrl-C: Tune ends the fit)."""
    with ExitStack() as stack:
        jobs, progresses, at_once = [], {}, slots(resources)
        for plan in plans:
            writer = stack.enter_context(RecordsWriter(plan.records))
            pending = plan.pending(cfg.retry_failed)  # under the lock
            if pending:
                progresses[plan.name] = progress_for(cfg, plan, writer, len(pending), at_once)
                jobs += [Job(plan.name, index) for index in pending]
        if not jobs:
            return False
        fit_jobs(cfg, f"{cfg.study.name}-random", jobs, {p.name: p.family for p in plans}, progresses, resources,
                 trial_kwargs(cfg, commit, command_line()))
    return stopped(progresses.values())


def run_adaptive(cfg: DictConfig, plan: FamilyPlan, resources: dict, commit: str) -> bool:
    """Run an adaptive tuner's pending trials of a family (the records so far told to it first), appending a
    record per finished trial; True when it stopped with trials left."""
    with RecordsWriter(plan.records) as writer:
        pending = plan.pending(cfg.retry_failed)  # re-read under the lock
        if not pending:
            return False
        progress = progress_for(cfg, plan, writer, len(pending), slots(resources))
        history = check_adaptive(plan.family, plan.tuner, cfg.seed, writer.path, cfg.retry_failed, study_file())
        trainable, space, search = adaptive_setup(plan.family, plan.tuner, cfg.study.direction == "max", history, pending,
                                                  trial_kwargs(cfg, commit, command_line()))
        fit(cfg, f"{cfg.study.name}-{plan.tuner.run_name(plan.name)}", trainable, resources, space, search,
            record_callback(progress, ray_log(cfg.paths.results_dir, cfg.study.name)), [progress])
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


def print_assignments(cfg: DictConfig, plan: FamilyPlan) -> None:
    """The dry run's table: every trial's assignment and whether it has a record already (an
    adaptive run's recorded assignments; the rest are suggested as the earlier trials finish)."""
    import pandas as pd

    family, tuner = plan.family, plan.tuner
    done = done_indices(plan.records, retry_failed=cfg.retry_failed)
    if tuner.adaptive:
        recorded = {r["trial"]: r["params"] or {} for r in latest_per_trial(iter_records(plan.records))}
        print(f"\n{cfg.study.name}/{family.name}: strategy {tuner.strategy}, tuner seed {tuner.seed}, concurrency "
              f"{tuner.concurrency}, {tuner.startup_trials} random startup trials; {len(recorded)} recorded, the other "
              f"{plan.trials - len(done)} suggested as earlier trials finish")
    rows = [{"trial": i, "done": "yes" if i in done else "",
             **(recorded.get(i, {}) if tuner.adaptive else family.params(cfg.seed, i))}
            for i in range(plan.trials) if not tuner.adaptive or i in recorded]
    if not rows:
        return
    frame = pd.DataFrame(rows)
    searched = ["trial", "done", *sorted(family.search)]
    print(f"\n{cfg.study.name}/{family.name} ({family.file.name}, {family.label}; train: {family.train_target}); fixed: "
          + ", ".join(f"{k}={v}" for k, v in family.fixed.items() if k not in family.search))
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.float_format", "{:.4g}".format):
        print(frame[searched].to_string(index=False))


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


def prepare(cfg: DictConfig) -> Plan:
    """Every check that needs no Ray, then the study's plan: each family's trials still to run."""
    families = validate(cfg)
    for family in families:
        check_family_code(family)
        if family.replay is not None:  # every replayed row must lie in the space, before Ray starts
            for index in range(family_trials(cfg, family.name)):
                family.params(cfg.seed, index)
    for family in families:
        path, tuner = records_file(cfg, family), tuner_of(cfg, family)
        check_records_links(Path(cfg.paths.results_dir), path)
        check_only(cfg, family)
        if tuner.adaptive:
            check_adaptive(family, tuner, cfg.seed, path, cfg.retry_failed, study_file())
        else:
            check_records_match(family, cfg.seed, path)
        check_one_version(path)
    return plan_of(cfg, families, command_line())


def continuing(cfg: DictConfig, plan: FamilyPlan) -> int:
    """How many of the family's trials to run have epochs saved by a run that stopped: the state file a trial keeps
    beside the records (``results/<study>/resume/<run name>-<trial>.pt``, :meth:`syw.core.context.TrialContext.output_path`
    of :func:`syw.models.resume.trial_state`), which the trial continues from."""
    folder = Path(cfg.paths.results_dir) / cfg.study.name / "resume"
    return sum((folder / f"{plan.tuner.run_name(plan.name)}-{index}.pt").is_file() for index in plan.todo)


def announce(cfg: DictConfig, plan: FamilyPlan, resources: dict) -> None:
    """The line a family's run starts with: how many trials (and how many of them continue from saved epochs),
    how (an adaptive tuner's settings), on what, and where to."""
    tuner = plan.tuner
    saved = continuing(cfg, plan)
    resumed = f"{saved} continue from saved epochs; " if saved else ""
    how = f"{tuner.strategy}, tuner seed {tuner.seed}, {tuner.concurrency} at a time; " if tuner.adaptive else ""
    print(f"[{cfg.study.name}/{plan.name}] {len(plan.todo)} of {plan.trials} trials to run ({resumed}{how}"
          f"{resources['cpu']:g} CPU, {resources['gpu']:g} GPU each) -> {plan.records}", flush=True)


def run_all(cfg: DictConfig, plan: Plan, resources: dict, commit: str) -> None:
    """The random-search families together (:func:`run_random`), then each adaptive one alone; an interrupted
    run leaves the later families to the same command, as it leaves the rest of its own."""
    runs = [p for p in plan.families if p.todo]
    random = [p for p in runs if not p.tuner.adaptive]
    for family in random:
        announce(cfg, family, resources)
    interrupted = bool(random) and run_random(cfg, random, resources, commit)
    for family in (p for p in runs if p.tuner.adaptive):
        if interrupted:
            return
        announce(cfg, family, resources)
        interrupted = run_adaptive(cfg, family, resources, commit)


def settle_looks(cfg: DictConfig, plan: Plan, rule) -> bool:
    """Evaluate a sequential study's rule on its records, append the looks its log lacks and say where it stands;
    True when the rule has stopped (nothing more to run)."""
    design, names = rule
    result = evaluate(design, names, {p.name: p.records for p in plan.families}, cfg.study.direction == "max")
    if result is None:
        return False
    record_looks(plan.results / LOG_NAME, result)
    print(f"[{cfg.study.name}] {decision_text(result)}", flush=True)
    return result.stopped_at is not None


def run_looks(cfg: DictConfig, plan: Plan, rule, resources: dict, commit: str) -> bool:
    """A sequential study (:mod:`syw.experiments.sequential_study`): each look's trials 0..N_k-1 of both families
    in one Tune run, then the rule on the records; True when interrupted with the rule still going."""
    design, _ = rule
    for k, size in enumerate(design.looks, start=1):
        plans = [replace(p, todo=tuple(i for i in p.pending(cfg.retry_failed) if i < size)) for p in plan.families]
        runs = [p for p in plans if p.todo]
        if runs:
            print(f"[{cfg.study.name}] look {k} of {len(design.looks)}: {size} trials per family", flush=True)
            for family in runs:
                announce(cfg, family, resources)
            if run_random(cfg, runs, resources, commit):
                return True
        if settle_looks(cfg, plan, rule):
            return False
    return False


USAGE = "syw run study=NAME|PATH.yaml [family=F] [trials=N] [dry_run=true] [other overrides]"
DESCRIPTION = """\
Run a study's seeded random search (or an adaptive tuner's) on Ray Tune: check the study, its families
and any existing records, then train every trial without a record and append one record per finished
trial to results/<study>/<family>.jsonl, so the same command resumes a stopped run. dry_run=true checks
and prints the assignments and trains nothing. A study is one of conf/study by NAME, or a file of yours by
its PATH (its family files beside it); a training function of yours is imported from the current folder or
PYTHONPATH (docs/own_model.md)."""  # what --help says
OVERRIDES = """  study=NAME|PATH.yaml       the study: conf/study/NAME.yaml, or a file of yours (default sst5)
  family=F                   run only this family of the study (its short name, e.g. cnn)
  trials=N                   trials per family (default: the study's, else 50)
  seed=S                     the study's seed: trial i of family f draws from (S, f, i) (default 0)
  only=[3,7]                 run only these trials now; the rest stay for a later run
  retry_failed=true          also rerun the trials whose latest record failed
  dry_run=true               check, print the assignments and what they would cost; train nothing
  paths.results_dir=DIR      where the records go (default: results/ here)
  resources.gpus_per_trial=G GPUs per trial, fractions allowed (default auto)"""  # the main ones; conf/config.yaml has all


def main() -> None:
    """``syw run``: Hydra's overrides from ``sys.argv``, a ``study=<file>.yaml`` among them given by path
    (:mod:`syw.experiments.given_study`)."""
    with exit_on(ConfigError):
        sys.argv = [sys.argv[0], *with_study_file(sys.argv[1:])]
    run_study()


@hydra.main(version_base=None, config_path=str(CONF_DIR), config_name="config")
def run_study(cfg: DictConfig) -> None:
    with exit_on(ConfigError, RecordError, DataMissingError, DataError, OSError, PreflightError):  # a replay file is data too
        plan = prepare(cfg)
        rule = sequential_of(cfg, study_file())
        if rule is not None and any(p.tuner.adaptive for p in plan.families):  # its looks are trials 0..N_k-1 of seeded draws
            raise ConfigError(study_file(), "strategy", "a sequential study runs seeded random search: leave out strategy")
    families = [p.family for p in plan.families]
    if cfg.dry_run:
        for family in plan.families:
            print_assignments(cfg, family)
        with exit_on(ConfigError, RecordError):
            print("\n".join(cost_lines(cfg.study.name, families, {p.name: p.trials for p in plan.families},
                                       {p.name: list(p.todo) for p in plan.families}, plan.results,
                                       family_dirs(cfg), records={p.name: p.records for p in plan.families})))
        if rule is not None:
            design, names = rule
            print(f"\nsequential: {names[0]} vs {names[1]} at n = {', '.join(map(str, design.at))}, looks at "
                  f"{', '.join(map(str, design.looks))} trials per family, {design.boundary} boundary, {design.adjust} over "
                  f"budgets, {design.confidence:.0%}; each look's statistics -> {plan.results / LOG_NAME}")
        return
    if rule is not None:
        with exit_on(ConfigError, RecordError, DataError, OSError):
            if settle_looks(cfg, plan, rule):
                print(f"{cfg.study.name}: the rule has stopped; nothing to run")
                return
    if not plan.left:
        kept = "ok records" if cfg.retry_failed else "records (retry_failed=true reruns the failed ones)"
        counts = ", ".join(f"{p.trials} of {p.name}" for p in plan.families)
        which = f"trials {list(cfg.only)}" if cfg.get("only") is not None else f"all trials ({counts})"
        print(f"{cfg.study.name}: {which} have {kept} in {plan.results}; nothing to run")
        return
    with exit_on(PreflightError, RecordsBusy):  # before Ray's start-up, and before anything is written
        preflight(cfg, [p.records for p in plan.families if p.todo])
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
        # OSError: a disk that took no record or Tune state; DataError: a sequential study's failed trial
        with exit_on(RecordsBusy, ConfigError, DataProblem, TrialsLost, RecordError, DataError, OSError):
            resources = trial_resources(cfg.resources.cpus_per_trial, cfg.resources.gpus_per_trial, node_resources(), study_file())
            commit = suite_commit()
            if rule is None:
                run_all(cfg, plan, resources, commit)
            unfinished = rule is None or run_looks(cfg, plan, rule, resources, commit)
    finally:
        stop_ray()
    took = human_duration(time.perf_counter() - started)
    left = {p.name: len(p.pending(cfg.retry_failed)) for p in plan.families} if unfinished else {}
    if any(left.values()):  # stopped early (Ctrl-C, a stopped cluster): say so, and how to go on
        print(f"[{cfg.study.name}] stopped after {took} with trials left ("
              + ", ".join(f"{name}: {n}" for name, n in left.items() if n) + "); the same command resumes", file=sys.stderr)
        sys.exit(130)
    print(f"[{cfg.study.name}] done in {took}", flush=True)


if __name__ == "__main__":
    main()
