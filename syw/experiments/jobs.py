"""Trials of several families in one Ray Tune run: each starts as soon as a slot is free.

Run family by family, every family's last trials leave slots idle until its slowest one ends (on
the 2-core machine, one core for most of a trial); in one run, the next family's first trials fill
them. Jobs start in list order, so the families still start in the study's order. Random search
(:mod:`syw.experiments.run`) and seed reruns (:mod:`syw.experiments.reseed`) run this way; an adaptive
tuner suggests one family's trials from its own results and runs alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from syw.experiments.cluster import ray_log
from syw.experiments.progress import WORKER_RETRIES, Progress, data_stopper, lost_workers, worker_loss
from syw.experiments.space import Family
from syw.experiments.trial import run_trial
from syw.experiments.tuner import Assigned


@dataclass(frozen=True)
class Job:
    """One trial to run: ``trial`` of ``family``, on the family's seeded draw, or on ``params``
    trained under ``run_name`` (a rerun); ``fields`` go into its record beside the trial's own."""

    family: str
    trial: int
    params: dict[str, Any] | None = None
    run_name: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


def slots(resources: dict[str, float]) -> int:
    """How many trials of ``resources`` the Ray cluster runs at once (its CPUs, and GPUs when a trial takes some)."""
    import ray

    total = ray.cluster_resources()
    count = total.get("CPU", 1) // resources["cpu"]
    if resources.get("gpu"):
        count = min(count, total.get("GPU", 0) // resources["gpu"])
    return max(1, int(count))


def trial_kwargs(cfg: DictConfig, commit: str, command: str) -> dict[str, Any]:
    """The keywords every trial of the study gets (:func:`syw.experiments.trial.run_trial`)."""
    return dict(study=cfg.study.name, seed=cfg.seed, dataset=OmegaConf.to_container(cfg.study.dataset),
                paths={"data_dir": cfg.paths.data_dir, "cache_dir": cfg.paths.cache_dir,
                       "results_dir": str(Path(cfg.paths.results_dir).resolve())}, commit=commit, command=command)


def run_job(config: dict, *, jobs: list[Job], families: dict[str, Family], **kwargs: Any) -> None:
    """The Ray Tune trainable: :func:`run_trial` on job ``config["job"]`` (an index into ``jobs``)."""
    job = jobs[config["job"]]
    family = families[job.family]
    if job.params is not None:
        family = Assigned.of(family, job.run_name or family.name, job.params)
    run_trial({"trial_index": job.trial}, family=family, **kwargs)


def jobs_callback(jobs: list[Job], progresses: dict[str, Progress], log: Path):
    """A Tune callback handing each finished job's record, with the job's fields, to its family's progress, and a
    job whose worker died to its :meth:`Progress.retry` or :meth:`Progress.lose` (``log``: Ray's log)."""
    from ray.tune import Callback

    class JobsCallback(Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            if "record" in result:
                job = jobs[trial.config["job"]]
                progresses[job.family].finish({**result["record"], **job.fields, **lost_workers(trial)})

        # the trainable never raises: a trial error is a dead worker process or node, not the trial's failure
        def on_trial_recover(self, iteration, trials, trial, **info):
            job = jobs[trial.config["job"]]
            progresses[job.family].retry(job.trial, worker_loss(trial), trial.num_failures)

        def on_trial_error(self, iteration, trials, trial, **info):
            job = jobs[trial.config["job"]]
            progresses[job.family].lose(job.trial, worker_loss(trial), log)

    return JobsCallback()


def fit(cfg: DictConfig, name: str, trainable: Any, resources: dict[str, float], param_space: dict[str, Any],
        search: dict[str, Any], callback: Any, progresses: list[Progress]) -> None:
    """The one place a study starts Ray Tune: the Tune run ``name`` of ``trainable`` (``search``: the searcher's
    TuneConfig keywords), its state under ``results/.tune``, a dead worker's trial run again (up to
    :data:`WORKER_RETRIES` times) and the run stopped by a data problem of any of ``progresses``."""
    from ray import tune

    tune.Tuner(
        tune.with_resources(trainable, resources),
        param_space=param_space,
        tune_config=tune.TuneConfig(reuse_actors=True, **search),
        run_config=tune.RunConfig(
            name=name, storage_path=str(Path(cfg.paths.results_dir).resolve() / ".tune"), verbose=int(cfg.ray.verbose),
            callbacks=[callback], stop=data_stopper(progresses), failure_config=tune.FailureConfig(max_failures=WORKER_RETRIES)),
    ).fit()


def fit_jobs(cfg: DictConfig, name: str, jobs: list[Job], families: dict[str, Family], progresses: dict[str, Progress],
             resources: dict[str, float], kwargs: dict[str, Any]) -> None:
    """Run ``jobs`` in one Tune run named ``name`` (:func:`fit`), in list order as slots free; a job whose worker
    died runs again; a data problem, or a job lost on every try, stops them all."""
    from ray import tune

    fit(cfg, name, tune.with_parameters(run_job, jobs=jobs, families=families, **kwargs), resources,
        {"job": tune.grid_search(list(range(len(jobs))))}, {},
        jobs_callback(jobs, progresses, ray_log(cfg.paths.results_dir, cfg.study.name)), list(progresses.values()))
