"""An Optuna journal file (``JournalFileBackend``'s log, one JSON operation a line) read without Optuna, into
the columns of :func:`syw.curve.sources.read_optuna`: ``value`` (``value_0``, ... for several objectives),
``number``, ``status``, ``params.*`` (decoded from their distributions), ``user_attrs.*`` and
``duration_seconds``; the study's direction(s) and the adaptive sampler its attributes reveal.
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.adaptive import optuna_strategy
from syw.core.errors import DataError
from syw.core.records import unreadable
from syw.curve.rows import finished
from syw.curve.trials import SeveralStudies, Trials

CREATE_STUDY, DELETE_STUDY, STUDY_USER_ATTR, STUDY_SYSTEM_ATTR = 0, 1, 2, 3
CREATE_TRIAL, TRIAL_PARAM, TRIAL_STATE, TRIAL_INTERMEDIATE, TRIAL_USER_ATTR, TRIAL_SYSTEM_ATTR = 4, 5, 6, 7, 8, 9
STATES = {0: "running", 1: "complete", 2: "pruned", 3: "fail", 4: "waiting"}
DIRECTIONS = {1: "min", 2: "max"}


def is_journal(path: Path) -> bool:
    """A file whose first line is a journal operation (``{"op_code": 0, ...}``)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            first = json.loads(handle.readline())
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(first, dict) and "op_code" in first


def _param(value, distribution: str, where: str):
    """Optuna's internal representation as the value the objective saw (a choice's index as the choice)."""
    try:
        spec = json.loads(distribution)
        kind, attributes = spec["name"], spec.get("attributes", {})
    except (ValueError, TypeError, KeyError, RecursionError):
        raise DataError(f"{where}: the distribution {distribution[:60]!r} is not Optuna's JSON") from None
    if kind.startswith("Categorical"):
        choices = attributes.get("choices", [])
        if not isinstance(value, (int, float)) or not 0 <= int(value) < len(choices):
            raise DataError(f"{where}: choice index {value!r} outside the {len(choices)} choices")
        return choices[int(value)]
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise DataError(f"{where}: the parameter value {value!r} is not a number")
    return int(value) if kind.startswith("Int") else float(value)


def _operations(path: Path) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such Optuna journal file")
    out = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            op = json.loads(line)
        except (ValueError, RecursionError) as err:
            why = unreadable(err)
            if number == len(lines) and not why:  # a torn last line: a writer killed mid-write, as Optuna skips it
                continue
            raise DataError(f"{path}: line {number}: not a JSON journal operation" + (f" ({why})" if why else "")) from None
        if not isinstance(op, dict) or not isinstance(op.get("op_code"), int):
            raise DataError(f"{path}: line {number}: a journal operation is a JSON object with an integer op_code")
        out.append((number, op))
    return out


def read_journal(path: Path, study: str | None = None) -> Trials:
    """Every trial of one study of an Optuna journal file (module doc)."""
    studies, trials, study_marks, study_users = {}, [], {}, {}
    for number, op in _operations(path):
        where = f"{path}: line {number}"
        code = op["op_code"]
        try:
            if code == CREATE_STUDY:
                studies[len(studies)] = (  # ids count every study created, deleted ones too
                    op["study_name"], [DIRECTIONS.get(d, "?") for d in op["directions"]])
            elif code == DELETE_STUDY:
                studies[op["study_id"]] = None
            elif code in (STUDY_USER_ATTR, STUDY_SYSTEM_ATTR):
                target = study_users if code == STUDY_USER_ATTR else study_marks
                target.setdefault(op["study_id"], {}).update(op["user_attr" if code == STUDY_USER_ATTR else "system_attr"])
            elif code == CREATE_TRIAL:
                trials.append({"study": op["study_id"], "start": op.get("datetime_start"), "end": op.get("datetime_complete"),
                               "state": op.get("state", 0), "values": op.get("values"), "user": dict(op.get("user_attrs", {})),
                               "marks": set(op.get("system_attrs", {})),
                               "params": {k: _param(v, op["distributions"][k], where) for k, v in op.get("params", {}).items()}})
            else:
                trial = trials[op["trial_id"]]
                if code == TRIAL_PARAM:
                    trial["params"][op["param_name"]] = _param(op["param_value_internal"], op["distribution"], where)
                elif code == TRIAL_STATE:
                    trial.update(state=op["state"], values=op.get("values"), end=op.get("datetime_complete"))
                    trial["start"] = op.get("datetime_start") or trial["start"]
                elif code == TRIAL_USER_ATTR:
                    trial["user"].update(op["user_attr"])
                elif code == TRIAL_SYSTEM_ATTR:
                    trial["marks"].update(op["system_attr"])
        except (KeyError, IndexError, TypeError, AttributeError) as err:
            raise DataError(f"{where}: operation {code} lacks or mistypes a field ({type(err).__name__}: {err})") from None
    named = {s[0]: (sid, s[1]) for sid, s in studies.items() if s is not None}
    if study is None and len(named) > 1:
        raise SeveralStudies(str(path), sorted(named))
    if not named:
        raise DataError(f"{path}: no study in the journal (0 studies)")
    name = study or next(iter(named))
    if name not in named:
        raise DataError(f"{path}: no study named {name!r} (studies: {', '.join(sorted(named)) or 'none'})")
    sid, directions = named[name]
    columns = [f"value_{i}" for i in range(len(directions))] if len(directions) > 1 else ["value"]
    rows, labels, marks = [], [], set()
    for number, trial in enumerate(t for t in trials if t["study"] == sid):
        state = STATES.get(trial["state"], str(trial["state"]))
        values = trial["values"] if state == "complete" and trial["values"] else [np.nan] * len(columns)
        row = dict(zip(columns, values), number=number, status=state)
        row.update({f"params.{k}": v for k, v in trial["params"].items()})
        row.update({f"user_attrs.{k}": v for k, v in trial["user"].items() if np.isscalar(v)})
        row["duration_seconds"] = _seconds(trial["start"], trial["end"])
        marks |= trial["marks"]
        rows.append(row)
        labels.append(f"trial {number}")
    frame = pd.DataFrame(rows, index=labels)
    if not rows or finished(frame).ne("ok").all():
        raise DataError(f"{path}: study {name!r} has no complete trial ({len(rows)} trial(s))")
    strategy = optuna_strategy(marks, set(study_marks.get(sid, {})), study_users.get(sid, {}))
    return Trials(frame, f"{path} (study {name})", name, dict(zip(columns, directions)),
                  None if len(columns) > 1 else "value", strategy=strategy)


def _seconds(start: str | None, end: str | None) -> float:
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() if start and end else np.nan
    except (TypeError, ValueError):
        return np.nan
