"""What a README marker reads: a study's ok trials per family (ours, from its records, or the
authors' published trials), the fields of a trial and filters on them.

Reading only: the numbers are computed in :mod:`syw.pages.readme_facts`. Every problem is a
:class:`FactError`; a file that is not in the repository (the authors' trials, a data set) and
is not at hand is :class:`NeedsData`, so that a README can be checked everywhere the rest can.
"""
from __future__ import annotations

import gzip
import json
import operator
import os
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from syw.core.records import study_records
from syw.experiments.space import load_family
from syw.experiments.study import load_study
from syw.figures import sources
from syw.figures.sources import paper_groups, shared_paper_file
from syw.figures.specs import FIGURES, FigureSpec


class FactError(ValueError):
    """A marker that cannot be computed; the README generator adds the file and line."""


class NeedsData(FactError):
    """A fact that reads a file outside the repository which is not at hand here."""


def entry(registry: dict[str, tuple[Any, set[str]]], what: str, name: str, values: dict[str, str], hint: str = "") -> Any:
    """The function ``registry`` holds for ``name`` (a fact or a table) once the marker's keys
    ``values`` are all ones it takes; a :class:`FactError` naming the unknown name or key."""
    if name not in registry:
        raise FactError(f"unknown {what} {name!r} ({what}s: {', '.join(sorted(registry))}{hint})")
    function, keys = registry[name]
    unknown = sorted(set(values) - keys)
    if unknown:
        raise FactError(f"{what} {name}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(keys))})")
    return function


@dataclass(frozen=True)
class Trials:
    """The ok trials of one family, in trial order: records (ours) or value/duration rows (the authors')."""

    family: str
    label: str
    rows: tuple[dict[str, Any], ...]
    maximize: bool
    source: str  # "ours" or "paper"
    floor: float | None = None  # our study's floor (study.floor): curves count a value beyond it at it


@dataclass(frozen=True)
class Study:
    """The families of one folder of records under ``results/``, in the study file's order."""

    name: str  # the records' study name (conf/study/<name>.yaml)
    folder: Path
    families: dict[str, Trials]


def _label(family_file: str | None, family: str, spec: FigureSpec | None) -> str:
    if spec is not None and family in spec.labels:
        return spec.labels[family]
    try:
        return load_family(Path(family_file).stem).label if family_file else family
    except ValueError:  # a family file renamed since the study ran: its short name still names it
        return family


def figure_of(study: str) -> FigureSpec | None:
    """The figure whose study ``study`` is or derives from (``scitail_reduced`` -> Figure 3), if any."""
    found = [s for s in FIGURES.values() if study == s.study or study.startswith(s.study + "_")]
    return max(found, key=lambda s: len(s.study)) if found else None


@cache
def read_study(folder: Path) -> Study:
    """The ok trials of each ``<family>.jsonl`` in ``folder`` (the latest record of each trial)."""
    per_file = study_records(folder)
    records = [r for rows in per_file.values() for r in rows]
    if not records:
        raise FactError(f"no trial records in {folder}")
    name = str(records[0].get("study") or folder.name)
    spec = figure_of(name)
    try:
        config = load_study(name)
        order, floor = list(config.families), config.floor
    except (FileNotFoundError, KeyError, ValueError):
        order, floor = [], None
    names = [f for f in order if f in per_file] + [f for f in per_file if f not in order]
    families = {}
    for family in names:
        ok = tuple(r for r in per_file[family] if r["status"] == "ok")
        first = per_file[family][0] if per_file[family] else {}
        families[family] = Trials(family, _label(first.get("family_file"), family, spec), ok,
                                  first.get("direction", "max") != "min", "ours", None if floor is None else floor.value)
    return Study(name, folder, families)


def paper_study(study: Study) -> Study:
    """The authors' published trials of the figure ``study`` reproduces, read only where a copy is at
    hand (``results/paper/`` or ``$SYW_DATA_DIR/authors_trials/``): a README check never downloads."""
    spec = figure_of(study.name)
    if spec is None:
        raise FactError(f"study {study.name} reproduces none of Figures 1-4: there are no authors' trials to read")
    if not (sources.PAPER_DIR / spec.paper.name).is_file() and shared_paper_file(spec.paper) is None:
        raise NeedsData(f"the authors' trials {spec.paper.name} (in results/paper/ or $SYW_DATA_DIR/authors_trials/)")
    return _paper(spec.number)


@cache
def _paper(number: int) -> Study:
    """Each family's rows of the authors' TSV as trials: ``params.<column>`` is the row's value in that column
    (``params.trainer.optimizer.lr``), where it has one."""
    spec, families = FIGURES[number], {}
    rows = sources.paper_rows(spec, sources.PAPER_DIR)
    columns = {name: part.to_dict("records") for name, part in rows.items()}
    for g in paper_groups(spec, rows):
        durations = [None] * g.scores.size if g.durations is None else list(map(float, g.durations))
        params = [{k: v for k, v in row.items() if not pd.isna(v)} for row in columns[g.name]]
        rows = tuple({"trial": i, "value": float(v), "duration_seconds": d, "params": p}
                     for i, (v, d, p) in enumerate(zip(g.scores, durations, params, strict=True)))
        families[g.name] = Trials(g.name, g.label, rows, True, "paper")
    return Study(spec.study, sources.PAPER_DIR, families)


# A trial's fields, as markers name them (`of=`, `where=`, table columns).
def field(row: dict[str, Any], name: str) -> Any:
    """``value``, ``trial``, ``best_epoch``, ``epochs_run``, ``epoch_seconds`` (a list),
    ``seconds``/``minutes``/``hours`` (its training duration), ``started``/``ended`` (UTC),
    ``commit`` (short), ``params.<key>`` (its assignment; of the authors' trials, a column of their TSV), ``extra.<key>`` (``extra_metrics``),
    ``with.<field>`` (the same trial in the study a marker's ``with=`` names), or the difference
    or ratio of two of these (``value-with.value``, ``seconds/with.seconds``), or the absolute value
    of one of these between bars (``|value-with.value|``)."""
    if len(name) > 2 and name[0] == name[-1] == "|":
        return abs(field(row, name[1:-1]))
    for sign, combine in (("-", operator.sub), ("/", operator.truediv)):
        if sign in name:
            left, right = name.split(sign, 1)
            return combine(field(row, left), field(row, right))
    if name.startswith("with."):
        if "with" not in row:
            raise FactError(f"{name}: name the study to pair trials with (with=STUDY)")
        return field(row["with"], name[5:])
    scale = {"seconds": 1.0, "minutes": 60.0, "hours": 3600.0}
    if name in scale:
        value = row.get("duration_seconds")
        if value is None:
            raise FactError(f"trial {row.get('trial')} has no training duration (the authors' file gives none for this family)")
        return float(value) / scale[name]
    if name == "commit":
        return str((row.get("versions") or {}).get("suite_commit", ""))[:7] or None
    if name in ("started", "ended") and row.get(f"{name}_at"):
        return datetime.fromisoformat(row[f"{name}_at"])
    head, _, key = name.partition(".")
    holder = {"params": row.get("params"), "extra": row.get("extra_metrics")}.get(head) if key else row
    if not isinstance(holder, dict) or (key or name) not in holder:
        raise FactError(f"trial {row.get('trial')} has no field {name!r} (fields: value, trial, best_epoch, epochs_run, "
                        "epoch_seconds, seconds, minutes, hours, started, ended, commit, params.<key>, extra.<key>, with.<field>)")
    return holder[key or name]


def has(row: dict[str, Any], name: str) -> bool:
    """Whether the trial's record holds ``params.<key>`` or ``extra.<key>`` (other fields: always)."""
    if name.startswith("with."):
        return "with" in row and has(row["with"], name[5:])
    head, _, key = name.partition(".")
    holder = {"params": row.get("params"), "extra": row.get("extra_metrics")}.get(head)
    return not (key and isinstance(holder, dict)) or key in holder


OPERATORS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt}
_CONDITION = re.compile(r"^([A-Za-z_][\w.]*)(?:(<=|>=|==|!=|<|>)(.+))?$")


def conditions(where: str | None) -> list[tuple[str, str | None, float | str | None]]:
    """``where`` parsed: comma-separated ``FIELD OP NUMBER``, ``FIELD OP 'TEXT'``, ``FIELD OP FIELD``
    (``value<=0.5092``, ``commit=='ea02830'``, ``best_epoch==params.epochs``, ``value>with.value``)
    or a bare ``params.<key>``: the trial has it."""
    out = []
    for text in filter(None, (c.strip() for c in (where or "").split(","))):
        parsed = _CONDITION.match(text)
        if not parsed:
            raise FactError(f"where: {text!r} is not FIELD OP VALUE (OP one of {', '.join(OPERATORS)}) nor a FIELD")
        left, op, right = parsed.groups()
        if right is not None and len(right) > 1 and right[0] == right[-1] == "'":
            out.append((left, op, _Text(right[1:-1])))
            continue
        try:
            out.append((left, op, float(right) if right is not None else None))
        except ValueError:
            out.append((left, op, right))
    return out


class _Text(str):
    """A quoted literal in a condition (``commit=='ea02830'``), not a field name."""


def matches(row: dict[str, Any], where: list[tuple[str, str | None, float | str | None]]) -> bool:
    """Whether ``row`` meets every one of the parsed conditions ``where`` (:func:`conditions`). A
    trial whose record lacks a ``params``/``extra`` key that a condition names does not meet it
    (its family file did not set it); :func:`check_names` catches a key no trial has (a typo)."""
    for left, op, right in where:
        is_field = isinstance(right, str) and not isinstance(right, _Text)
        if not all(has(row, n) for n in [left] + [right] * is_field):
            return False
        if op is not None and not OPERATORS[op](field(row, left), field(row, right) if is_field else right):
            return False
    return True


def check_names(rows: tuple[dict[str, Any], ...], where: list, family: str) -> None:
    """A condition on a ``params``/``extra`` key that none of ``rows`` holds is a typo: say so."""
    for left, _, right in where:
        for name in [left] + ([right] if isinstance(right, str) and not isinstance(right, _Text) else []):
            if not any(has(r, name) for r in rows):
                raise FactError(f"where: no trial of {family} has {name!r}")


@cache
def squad_scores(path: Path) -> dict[str, float]:
    """Exact match and F1 of a predictions file (.json or .json.gz) on every question of SQuAD v1.1 dev
    (``$SYW_DATA_DIR/squad/dev-v1.1.json``, :class:`NeedsData` where it is not at hand)."""
    from syw.models.tasks.squad_metric import score  # the official metric; torch-free

    root = os.environ.get("SYW_DATA_DIR")
    dev = Path(root) / "squad" / "dev-v1.1.json" if root else None
    if dev is None or not dev.is_file():
        raise NeedsData("SQuAD v1.1 dev ($SYW_DATA_DIR/squad/dev-v1.1.json)")
    if not path.is_file():
        raise FactError(f"{path} does not exist")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        predictions = json.load(handle)
    data = json.loads(dev.read_text(encoding="utf-8"))["data"]
    answers = {q["id"]: [x["text"] for x in q["answers"]] for art in data for p in art["paragraphs"] for q in p["qas"]}
    return score(predictions, answers)
