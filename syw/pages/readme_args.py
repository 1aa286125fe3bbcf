"""A README marker's ``key=value`` arguments, resolved to the study and the trials a fact reads
(:mod:`syw.pages.readme_facts`, :mod:`syw.pages.readme_tables`), and the few reads every fact shares:
a field of each trial, Eq. 8 over a family's values, the best trial."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from syw.analysis.curves import curve_of
from syw.analysis.floors import apply_floor
from syw.analysis.group import Group
from syw.pages.readme_data import FactError, Study, Trials, check_names, conditions, field, matches, paper_study, read_study


class Args:
    """A marker's ``key=value`` arguments, read once each; the context says which study is the default."""

    def __init__(self, values: dict[str, str], default_study: Path | None, results: Path):
        self.values, self.default_study, self.results = values, default_study, results

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    def number(self, key: str) -> float:
        text = self.need(key)
        try:
            return float(text)
        except ValueError:
            raise FactError(f"{key}={text!r} is not a number") from None

    def need(self, key: str) -> str:
        if key not in self.values:
            raise FactError(f"missing {key}=")
        return self.values[key]

    def study(self, key: str = "study") -> Study:
        """The study ``key`` names (ours, or with ``source=paper`` the authors' trials of its figure);
        ``with=paper`` pairs a study's trials with the authors' trials of its figure, row by row."""
        if key == "with" and self.get(key) == "paper":
            return paper_study(self.ours("study"))
        ours = self.ours(key)
        return paper_study(ours) if self.get("source", "ours") == "paper" and key == "study" else ours

    def ours(self, key: str) -> Study:
        name = self.get(key)
        if name is None and self.default_study is None:
            raise FactError(f"missing {key}= (this README is not in a study's folder)")
        folder = self.results / name if name is not None else self.default_study
        return read_study(folder.resolve())

    def family(self, study: Study, key: str = "family") -> Trials:
        name = self.get(key)
        if name is None and len(study.families) == 1:
            name = next(iter(study.families))
        if name is None:
            raise FactError(f"missing {key}= (families of {study.name}: {', '.join(study.families)})")
        if name not in study.families:
            raise FactError(f"{key}={name!r}: not a family of {study.name} ({', '.join(study.families)})")
        return study.families[name]

    def trials(self, family_key: str = "family", study_key: str = "study") -> Trials:
        """The family's trials that meet ``where``; at least one (``count`` alone may count none)."""
        trials = self.select(self.family(self.study(study_key), family_key))
        if not trials.rows:
            raise FactError(f"no trial of {trials.family} meets where={self.get('where')!r}")
        return trials

    def paired(self, trials: Trials) -> tuple[dict[str, Any], ...]:
        """``trials``' rows, each with the same trial of study ``with`` under ``"with"`` when a marker
        names one (trials that study lacks are left out)."""
        if self.get("with") is None:
            return trials.rows
        other = {r["trial"]: r for r in self.study("with").families.get(trials.family, Trials("", "", (), True, "")).rows}
        return tuple({**r, "with": other[r["trial"]]} for r in trials.rows if r["trial"] in other)

    def select(self, trials: Trials, check: bool = True) -> Trials:
        """``trials`` (paired, see :meth:`paired`) that meet ``where``."""
        rows, where = self.paired(trials), conditions(self.get("where"))
        if check:
            check_names(rows, where, trials.family)
        return Trials(trials.family, trials.label, tuple(r for r in rows if matches(r, where)), trials.maximize, trials.source,
                      trials.floor)

    def each(self) -> list[Trials]:
        """Every family of the study, filtered by ``where`` (whose keys one family at least must have)."""
        families = self.study().families.values()
        check_names(tuple(r for t in families for r in self.paired(t)), conditions(self.get("where")), "this study")
        return [self.select(t, check=False) for t in families]


def values_of(trials: Trials, name: str = "value") -> list[Any]:
    """Field ``name`` of every trial; a list field (``epoch_seconds``) gives all its items."""
    values = [field(r, name) for r in trials.rows]
    return [x for v in values for x in v] if values and isinstance(values[0], list) else values


SCALES = ("log",)


def curve(trials: Trials, n_max: int | None = None, scale: str | None = None) -> np.ndarray:
    """Eq. 8 at n = 1..min(n_max, N) for the family's values; with ``scale="log"`` Eq. 8 of their natural
    logarithms, written back as exp(.) (for a perplexity: the expected best cross-entropy, as a perplexity),
    on which one diverged trial weighs its logarithm, not its value. A value beyond the study's floor counts at it."""
    values = np.asarray(apply_floor(values_of(trials), trials.floor, maximize=trials.maximize)[0], dtype=float)
    if scale is None:
        return curve_of(Group(trials.family, values), trials.maximize).upto(n_max)[1]
    if scale not in SCALES:
        raise FactError(f"scale={scale!r}: log (Eq. 8 of the values' logarithms, written back as exp) or none")
    if values.min() <= 0:
        raise FactError(f"scale=log: {trials.family} has a value of {values.min():g}; the logarithm needs values above 0")
    return np.exp(curve_of(Group(trials.family, np.log(values)), trials.maximize).upto(n_max)[1])


def best_row(trials: Trials) -> dict[str, Any]:
    pick = max if trials.maximize else min
    return pick(trials.rows, key=lambda r: r["value"])  # the first trial of a tie, as the runner's "best="
