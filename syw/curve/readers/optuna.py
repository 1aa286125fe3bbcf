"""An Optuna study in its storage (a URL such as ``sqlite:///study.db``, or an SQLite file), and Optuna's
``trials_dataframe()`` export written as CSV."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.adaptive import optuna_strategy
from syw.core.errors import DataError
from syw.curve.readers.mlflow import TABLES
from syw.curve.rows import finished
from syw.curve.trials import SeveralStudies, Trials

DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
OPTUNA_EXPORT = {"number", "state", "datetime_start"}  # study.trials_dataframe() columns


def tables(path: Path, source: str) -> set[str]:
    """The tables of an SQLite file; an error naming the file when it is not one."""
    if not path.is_file():
        raise FileNotFoundError(f"{source}: no such database file {path}")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as err:
        raise DataError(f"{source}: {path} is not an SQLite database ({err}), neither an Optuna storage nor an MLflow "
                        "tracking database") from None


def from_optuna_export(frame: pd.DataFrame) -> pd.DataFrame:
    """Optuna's ``study.trials_dataframe()`` written as CSV, in the columns of :func:`read_optuna`:
    ``state`` as ``status``, ``params_x`` as ``params.x``, ``user_attrs_x`` as ``user_attrs.x`` and the
    ``duration`` timedelta (``0 days 00:01:02.5``) as ``duration_seconds``."""
    renamed = {c: "status" if c == "state" else c.replace("params_", "params.", 1) if c.startswith("params_")
               else c.replace("user_attrs_", "user_attrs.", 1) if c.startswith("user_attrs_") else c
               for c in frame.columns}
    out = frame.rename(columns=renamed)
    if "duration" in out.columns:
        seconds = pd.to_timedelta(out.pop("duration"), errors="coerce").dt.total_seconds()
        out["duration_seconds"] = seconds
    out.attrs = dict(frame.attrs)
    return out


def _check_optuna_sqlite(url: str) -> None:
    """An SQLite storage must exist and hold Optuna's tables: optuna itself would create both."""
    held = tables(Path(url.split(":///", 1)[1]), url)
    if "studies" not in held:
        raise DataError(f"{url}: not an Optuna storage (no 'studies' table) nor an MLflow tracking database (no "
                        f"{', '.join(sorted(TABLES - held))} table); export the trials as CSV")


def read_optuna(url: str, study: str | None) -> Trials:
    """Every trial of an Optuna study, its ``status`` its state: ``value`` (``value_0``, ... for several
    objectives; NaN unless complete), ``number``, ``params.*``, ``user_attrs.*`` and ``duration_seconds``;
    the study's direction(s) and the adaptive sampler its attributes reveal (``syw.analysis.adaptive``)."""
    try:
        import optuna
    except ImportError:
        raise DataError(f"{url}: reading an Optuna study needs optuna: pip install 'optuna>=3' (in a checkout: "
                        "pip install '.[optuna]')") from None
    if url.startswith("sqlite:///"):
        _check_optuna_sqlite(url)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = sorted(optuna.study.get_all_study_names(storage=url))
    if study is None and len(names) > 1:
        raise SeveralStudies(url, names)
    if not names:
        raise DataError(f"{url}: no study in the storage (0 studies)")
    name = study or names[0]
    if name not in names:
        raise DataError(f"{url}: no study named {name!r} (studies: {', '.join(names) or 'none'})")
    loaded = optuna.load_study(study_name=name, storage=url)
    several = len(loaded.directions) > 1
    columns = [f"value_{i}" for i in range(len(loaded.directions))] if several else ["value"]
    directions = {c: "max" if d == optuna.study.StudyDirection.MAXIMIZE else "min"
                  for c, d in zip(columns, loaded.directions)}
    rows, labels, marks = [], [], set()
    for trial in loaded.get_trials(deepcopy=False):
        marks.update(trial.system_attrs)
        complete = trial.state == optuna.trial.TrialState.COMPLETE
        row = dict(zip(columns, trial.values if complete else [np.nan] * len(columns)), number=trial.number,
                   status=trial.state.name.lower())
        row.update({f"params.{k}": v for k, v in trial.params.items()})
        row.update({f"user_attrs.{k}": v for k, v in trial.user_attrs.items() if np.isscalar(v)})
        row["duration_seconds"] = trial.duration.total_seconds() if trial.duration else np.nan
        rows.append(row)
        labels.append(f"trial {trial.number}")
    frame = pd.DataFrame(rows, index=labels)
    if not rows or finished(frame).ne("ok").all():
        held = ", ".join(f"{n} {s}" for s, n in frame["status"].value_counts().sort_index().items()) if rows else "none"
        raise DataError(f"{url}: study {name!r} has no complete trial (trials: {held})")
    storage = optuna.storages.get_storage(url)
    study_marks = set(storage.get_study_system_attrs(storage.get_study_id_from_name(name)))
    strategy = optuna_strategy(marks, study_marks, loaded.user_attrs)
    return Trials(frame, f"{url} (study {name})", name, directions, None if several else "value", strategy=strategy)
