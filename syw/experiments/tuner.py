"""Search strategies: seeded random draws, or an adaptive tuner standing in for the GP bandit of
Melis et al. (2018), section 5 (Google Vizier, batched GP bandits with expected improvement).

``gp`` is Optuna's ``GPSampler`` (log expected improvement; qLogEI over the trials in flight),
``tpe`` its ``TPESampler``; both run through Ray Tune's ``Searcher`` interface
(:class:`AdaptiveSearcher`), so trials use the runner's resources, records and progress lines.

Seeded and resumable: the assignment of trial ``i`` is a pure function of (strategy, tuner seed,
family, ``i``, the trials before it). A fresh sampler, seeded from (tuner seed, family, ``i``), is
told in trial order the finished trials ``0..i-c`` (ok: its value; failed: a failure) and the
assignments of trials ``i-c+1..i-1`` (running), ``c`` the concurrency, and then asked. Trial ``i``
waits until trials ``0..i-c`` have finished, so at most ``c`` run at once and no suggestion depends
on which trial happens to finish first. After a kill, the same command rebuilds that history from
the records file and continues: no index is run twice or skipped, and each suggestion equals the
uninterrupted run's wherever the same inputs give the sampler the same floating-point results
(the same machine and library versions; see docs/running.md).

Why not ``ray.tune.search.optuna.OptunaSearch``: it keeps one sampler for the whole search, whose
random state and cached GP kernel depend on every earlier ask, tells results in the order trials
finish, and resumes from Ray Tune's experiment checkpoint rather than from our records; none of
that can be replayed from the records to the same suggestions.
"""
from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from syw.core.errors import ConfigError
from syw.core.records import iter_records, latest_per_trial
from syw.experiments.space import Family
from syw.experiments.trial import DATA_PROBLEM, run_trial

GP = "gp"  # Optuna's GPSampler, the stand-in for Melis et al.'s Vizier GP bandit (docs/running.md)


@dataclass(frozen=True)
class Tuner:
    """How a family's assignments are chosen, as recorded in each trial's record."""

    strategy: str  # one of experiments.space.STRATEGIES
    seed: int  # adaptive: the tuner's seed; random: the study seed the draws come from
    concurrency: int = 1
    startup_trials: int = 10

    @property
    def adaptive(self) -> bool:
        return self.strategy != "random"

    def fields(self) -> dict[str, Any]:
        """The record fields naming the strategy (``strategy``, ``tuner_seed``, and an adaptive run's settings)."""
        out: dict[str, Any] = {"strategy": self.strategy, "tuner_seed": self.seed}
        if self.adaptive:
            out["tuner"] = {"concurrency": self.concurrency, "startup_trials": self.startup_trials}
        return out

    def records_path(self, study_dir: Path, family: str) -> Path:
        """``<study_dir>/<family>.jsonl`` for random search (unchanged), else
        ``<study_dir>/<strategy>/<family>.tuner_seed<k>.jsonl``: one file per independent tuner run,
        kept out of the folder whose files Eq. 8 reads."""
        if not self.adaptive:
            return Path(study_dir) / f"{family}.jsonl"
        return Path(study_dir) / self.strategy / f"{family}.tuner_seed{self.seed}.jsonl"

    def run_name(self, family: str) -> str:
        """The name an adaptive run's trials train under: their training seed and output files derive
        from it, so independent tuner runs (and random search) train with independent seeds."""
        return family if not self.adaptive else f"{family}.{self.strategy}.{self.seed}"


def tuner_of(cfg: Any, family: Family) -> Tuner:
    """The run's ``strategy`` (command line or study), else the family file's, else random."""
    strategy = cfg.get("strategy") or family.strategy or "random"
    if strategy == "random":
        return Tuner("random", int(cfg.seed))
    return Tuner(strategy, int(cfg.tuner.seed), int(cfg.tuner.concurrency), int(cfg.tuner.startup_trials))


@dataclass(frozen=True)
class Assigned(Family):
    """A family whose trials run one given assignment (an adaptive suggestion, a seed rerun)."""

    assignment: dict[str, Any] = field(default_factory=dict)

    def params(self, seed: int, index: int) -> dict[str, Any]:
        return {**self.fixed, **self.assignment}

    @classmethod
    def of(cls, family: Family, name: str, assignment: dict[str, Any]) -> Assigned:
        return cls(**{**{f.name: getattr(family, f.name) for f in fields(Family)}, "name": name}, assignment=assignment)


def run_suggested(config: dict, *, family: Family, run_name: str, **kwargs: Any) -> None:
    """The Ray Tune trainable of an adaptive trial: :func:`run_trial` on the suggested assignment."""
    run_trial({"trial_index": config["trial_index"]}, family=Assigned.of(family, run_name, config["params"]), **kwargs)


def optuna_space(search: dict[str, dict]) -> dict[str, Any]:
    """Optuna's distributions for the searched (non-constant) keys; a choice is its value's index."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    space: dict[str, Any] = {}
    for key, spec in sorted(search.items()):
        kind = spec["distribution"]
        if kind in ("uniform", "loguniform"):
            space[key] = FloatDistribution(float(spec["low"]), float(spec["high"]), log=kind == "loguniform")
        elif kind == "uniform_int":
            space[key] = IntDistribution(spec["low"], spec["high"] - (1 if spec.get("exclusive_high") else 0))
        elif kind == "choice":
            space[key] = CategoricalDistribution(tuple(range(len(spec["values"]))))
    return space


def from_optuna(search: dict[str, dict], params: dict[str, Any]) -> dict[str, Any]:
    """An assignment of every searched key (constants included) from Optuna's parameters; a number
    is held inside its range (exp(log(high)) can round past it) so the record lies in the space."""
    out = {}
    for key, spec in sorted(search.items()):
        kind = spec["distribution"]
        if kind in ("constant", "choice"):
            out[key] = spec["value"] if kind == "constant" else spec["values"][params[key]]
        else:
            number = int if kind == "uniform_int" else float
            out[key] = number(min(max(params[key], spec["low"]), spec["high"]))
    return out


def to_optuna(search: dict[str, dict], assignment: dict[str, Any]) -> dict[str, Any]:
    """Optuna's parameters of a recorded assignment (raises KeyError or ValueError off the space)."""
    out = {}
    for key, dist in optuna_space(search).items():
        value = assignment[key]
        if search[key]["distribution"] == "choice":
            out[key] = search[key]["values"].index(value)  # ValueError when not one of them
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not dist.low <= value <= dist.high \
                or search[key]["distribution"] == "uniform_int" and not isinstance(value, int):
            raise ValueError(f"{key}={value!r} lies outside its search distribution")
        else:
            out[key] = value
    return out


@dataclass
class Told:
    """What the search knows of one trial: its assignment (None: a crashed worker's record, recomputed
    when needed), its value (None: failed) and whether it has finished."""

    params: dict[str, Any] | None
    value: float | None = None
    finished: bool = False


def history_from(path: Path, family: Family) -> dict[int, Told]:
    """The finished trials of a records file, by index (the latest record of each)."""
    return {r["trial"]: Told(None if r.get("params") is None else {k: r["params"][k] for k in family.search},
                             r["value"] if r["status"] == "ok" else None, True)
            for r in latest_per_trial(iter_records(path))}


def sampler_seed(tuner: Tuner, family: str, index: int) -> int:
    """The seed of trial ``index``'s sampler: from (tuner seed, family, index) alone."""
    return int(np.random.SeedSequence([tuner.seed, zlib.crc32(family.encode()), index]).generate_state(1)[0])


def _sampler(tuner: Tuner, seed: int):
    import optuna

    if tuner.strategy == GP:
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=tuner.startup_trials)
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=tuner.startup_trials, multivariate=True, constant_liar=True)


def suggest(family: Family, tuner: Tuner, maximize: bool, history: dict[int, Told], index: int) -> dict[str, Any]:
    """The assignment of trial ``index``, told trials ``0..index-1`` as the module docstring says.
    A told assignment that is unknown (a crash record) is recomputed the same way and kept."""
    import optuna
    from optuna.trial import TrialState, create_trial

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # the told history is ours; its per-trial lines are noise
    space = optuna_space(family.search)
    trials = []
    for j in range(index):
        told = history[j]
        if j <= index - tuner.concurrency and told.value is None:
            trials.append(create_trial(state=TrialState.FAIL))
            continue
        if told.params is None:
            told.params = suggest(family, tuner, maximize, history, j)
        params = to_optuna(family.search, told.params)
        trials.append(create_trial(params=params, distributions=space, value=told.value)
                      if j <= index - tuner.concurrency else
                      create_trial(state=TrialState.RUNNING, params=params, distributions=space))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study = optuna.create_study(direction="maximize" if maximize else "minimize",
                                    sampler=_sampler(tuner, sampler_seed(tuner, family.name, index)))
        study.add_trials(trials)
        return from_optuna(family.search, study.ask(space).params)


def searcher(family: Family, tuner: Tuner, maximize: bool, history: dict[int, Told], pending: list[int]):
    """A Ray Tune ``Searcher`` suggesting the ``pending`` indices in order (:class:`AdaptiveSearcher`)."""
    from ray.tune.search import Searcher

    class AdaptiveSearcher(Searcher):
        """Suggests trial ``i`` once trials ``0..i-c`` have finished; learns each result as it ends."""

        def __init__(self):
            super().__init__()
            self.queue, self.ids = sorted(pending), {}

        def suggest(self, trial_id: str) -> dict | str | None:
            if not self.queue:
                return Searcher.FINISHED
            index = self.queue[0]
            if not all(history[j].finished for j in range(index - tuner.concurrency + 1)):
                return None  # asked again once a trial finishes
            history[index] = Told(suggest(family, tuner, maximize, history, index))
            self.ids[trial_id] = self.queue.pop(0)
            return {"trial_index": index, "params": history[index].params}

        def on_trial_complete(self, trial_id: str, result: dict | None = None, error: bool = False) -> None:
            index = self.ids.pop(trial_id, None)
            status = (result or {}).get("record/status")  # Tune flattens the reported {"record": ...}
            if index is None or status == DATA_PROBLEM:  # the study stops; nothing was recorded
                return
            history[index].value = result["record/value"] if status == "ok" and not error else None
            history[index].finished = True

        def save_to_dir(self, *args: Any, **kwargs: Any) -> None:
            """Nothing to checkpoint: the records are the search's state, replayed on resume."""

    return AdaptiveSearcher()


def check_adaptive(family: Family, tuner: Tuner, seed: int, path: Path, retry_failed: bool, where: str) -> dict[int, Told]:
    """Refuse what an adaptive run cannot continue (a replayed family, ``retry_failed``, records of
    another run or search space); return the history its records hold."""
    if family.replay is not None:
        raise ConfigError(family.file, "replay", f"a replayed family takes its assignments from a file; it cannot "
                          f"also be searched with strategy {tuner.strategy}")
    if retry_failed:
        raise ConfigError(where, "retry_failed", f"an adaptive search ({tuner.strategy}) cannot rerun a failed trial: "
                          "the trials after it were suggested knowing it failed")
    expect = {"seed": seed, **tuner.fields()}
    for r in latest_per_trial(iter_records(path)):
        differ = ", ".join(f"{k}={r.get(k)!r} there, {v!r} now" for k, v in expect.items() if r.get(k) != v)
        if differ:
            raise ConfigError(path, f"trial {r['trial']}", f"was recorded by another search ({differ}); give this run "
                              "its own tuner.seed or paths.results_dir, or delete the file to start over")
        if r.get("params") is None:
            continue
        try:
            to_optuna(family.search, r["params"])
        except (KeyError, ValueError) as err:
            raise ConfigError(path, f"trial {r['trial']}", f"its assignment is not in {family.file.name}'s search space "
                              f"({err}); the family file changed since this search began") from None
        moved = [k for k, v in family.fixed.items() if k in r["params"] and k not in family.search and r["params"][k] != v]
        if moved:
            raise ConfigError(path, f"trial {r['trial']}", f"ran with {moved[0]}={r['params'][moved[0]]!r}, the family "
                              f"file now fixes {family.fixed[moved[0]]!r}")
    return history_from(path, family)


def adaptive_setup(family: Family, tuner: Tuner, maximize: bool, history: dict[int, Told], pending: list[int],
                   kwargs: dict[str, Any]) -> tuple[Callable, dict, dict]:
    """The runner's trainable, Tune ``param_space`` and ``TuneConfig`` keywords for an adaptive run."""
    from ray import tune

    trainable = tune.with_parameters(run_suggested, family=family, run_name=tuner.run_name(family.name), **kwargs)
    return trainable, {}, {"search_alg": searcher(family, tuner, maximize, history, pending), "num_samples": len(pending)}
