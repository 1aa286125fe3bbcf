"""A study as the figures, pages and reports read it: the ``study`` block of conf/study/<name>.yaml, typed, read once.

The runner reads the same file through Hydra (``syw run study=<name>``); this object is for those that only read
what a study states: its families, direction, floor, trial count, dataset and the scale it was reduced to.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from syw.analysis.floors import Floor
from syw.experiments.space import Family, load_family, study_config, study_file


def _frozen(value: Any) -> Any:
    """``value`` with every mapping read-only and every list a tuple: one object is shared by a whole process."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


@dataclass(frozen=True, eq=False)
class Study:
    """What conf/study/<name>.yaml states about a study, as its readers use it."""

    name: str  # the config's file stem, which is also the records folder's name (results/<name>/)
    description: str
    families: Mapping[str, str]  # role (records file name) -> family file stem, in the config's order
    metric: str
    maximize: bool  # study.direction: max (the default) or min
    floor: Floor | None  # study.floor (syw.analysis.floors), None where the config states none
    trials: int | None  # trials per family
    dataset: Mapping[str, Any]
    splits: str | None = None
    figure: int | None = None  # the paper's figure the study reproduces
    reduced: str | None = None  # what a reduced study shrank, in words
    sequential: Mapping[str, Any] | None = None  # the stopping rule of a sequential study (syw.analysis.sequential)

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any]) -> Study:
        """The study ``name`` from its config as :func:`syw.experiments.space.study_config` gives it."""
        floor = config.get("floor")
        trials = config.get("trials")
        return cls(
            name=name,
            description=config.get("description", ""),
            families=_frozen(config["families"]),
            metric=config["metric"],
            maximize=config.get("direction", "max") == "max",
            floor=None if floor is None else Floor(float(floor["value"]), str(floor["rule"])),
            trials=None if trials is None else int(trials),
            dataset=_frozen(config.get("dataset") or {}),
            splits=config.get("splits"),
            figure=config.get("figure"),
            reduced=config.get("reduced"),
            sequential=_frozen(config.get("sequential")),
        )

    def family(self, role: str) -> Family:
        """The family file of ``role``, loaded and checked (:func:`syw.experiments.space.load_family`)."""
        return load_family(self.families[role], name=role)


def load_study(name: str) -> Study:
    """The study ``name`` (conf/study/<name>.yaml), one object per process while the file stays the same;
    a ``FileNotFoundError`` naming the file when there is no such study."""
    path = study_file(name)
    info = path.stat()
    return _loaded(str(path), name, info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _loaded(path: str, name: str, size: int, mtime_ns: int) -> Study:
    """Keyed by the file's size and modification time, as its parse is (:func:`syw.experiments.space.study_config`)."""
    return Study.from_config(name, study_config(name))
