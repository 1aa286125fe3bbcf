"""A study resolved once into a plan before anything runs: per family its search (random or an adaptive
tuner), its trial count, its records file, the trial indices still to run and the fields every record of
this run shares. The runner (:mod:`syw.experiments.run`), its dry run and seed reruns read the plan; none
re-derives these from the raw config."""
from __future__ import annotations

import getpass
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from syw.core.paths import REPO
from syw.core.records import done_indices
from syw.experiments.space import Family
from syw.experiments.tuner import Tuner, tuner_of


def family_trials(cfg: DictConfig, name: str) -> int:
    """The trial count of family ``name``: its entry in ``study.trials`` (a study may give one family
    more trials, as the paper's SciTail n-gram baseline had), else the run's ``trials``."""
    return int((cfg.study.get("trials") or {}).get(name, cfg.trials))


def records_file(cfg: DictConfig, family: Family) -> Path:
    """Where the family's records are: ``results/<study>/<family>.jsonl`` for random search, a file
    per tuner run for an adaptive one (:meth:`syw.experiments.tuner.Tuner.records_path`)."""
    return tuner_of(cfg, family).records_path(Path(cfg.paths.results_dir) / cfg.study.name, family.name)


def record_base(cfg: DictConfig, family: Family, command: str) -> dict[str, Any]:
    """The fields every record of ``family`` in this run shares: study, family and its file, study seed,
    metric and direction, the command and the user who ran it."""
    where = family.file.relative_to(REPO) if family.file.is_relative_to(REPO) else family.file
    return {"study": cfg.study.name, "family": family.name, "family_file": str(where), "seed": cfg.seed,
            "metric": cfg.study.metric, "direction": cfg.study.direction, "command": command, "user": getpass.getuser()}


def command_line(verb: str = "run") -> str:
    """The command a record names: ``syw <verb>`` and this process's overrides."""
    return " ".join([f"syw {verb}", *sys.argv[1:]])


@dataclass(frozen=True)
class FamilyPlan:
    """One family of the study as this run will run it."""

    family: Family
    tuner: Tuner
    trials: int  # the family's trial count
    records: Path
    todo: tuple[int, ...]  # the indices without a record (with retry_failed: without an ok one), or those `only` names
    fields: dict[str, Any]  # the fixed fields of each of its records: record_base and the search's

    @property
    def name(self) -> str:
        return self.family.name

    def pending(self, retry_failed: bool) -> list[int]:
        """:attr:`todo` less the indices recorded since the plan was made (read again under the records' lock)."""
        return sorted(set(self.todo) - done_indices(self.records, retry_failed=retry_failed))


@dataclass(frozen=True)
class Plan:
    """The study's families in the study file's order, where their records go and what is left to run."""

    study: str
    results: Path  # results/<study>
    families: tuple[FamilyPlan, ...]

    @property
    def left(self) -> bool:
        return any(f.todo for f in self.families)


def family_plan(cfg: DictConfig, family: Family, command: str) -> FamilyPlan:
    """``family``'s plan: its tuner, trial count, records file, indices to run and records' fixed fields."""
    tuner, trials, records = tuner_of(cfg, family), family_trials(cfg, family.name), records_file(cfg, family)
    wanted = set(cfg.only) if cfg.get("only") is not None else set(range(trials))
    todo = tuple(sorted(wanted - done_indices(records, retry_failed=cfg.retry_failed)))
    return FamilyPlan(family, tuner, trials, records, todo, {**record_base(cfg, family, command), **tuner.fields()})


def plan_of(cfg: DictConfig, families: list[Family], command: str) -> Plan:
    """The plan of the checked ``families`` of ``cfg``'s study."""
    return Plan(cfg.study.name, Path(cfg.paths.results_dir) / cfg.study.name,
                tuple(family_plan(cfg, f, command) for f in families))
