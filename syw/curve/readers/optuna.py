"""An Optuna study in its storage (a URL such as ``sqlite:///study.db``, or an SQLite file), and Optuna's
``trials_dataframe()`` export written as CSV.

A storage is read, never written: Optuna's own storage class creates missing tables and stamps a schema
version into a database it opens, so its schema is checked first (:func:`schema_problem`: Optuna's tables, the
columns of ``studies``, a stamped version), and an SQLite file is read from a snapshot taken read-only (SQLite's
backup, which includes a write-ahead log) in a temporary folder.
"""
from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections.abc import Iterator
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


OPTUNA_TABLES = {"studies", "trials", "version_info", "alembic_version"}  # what Optuna's storage holds (3.x to 5.x)
STUDY_COLUMNS = {"study_id", "study_name"}
STAMPS = ("version_info", "alembic_version")  # Optuna's storage writes a row into each when it finds none


def schema_problem(held: set[str], columns: set[str], stamped: bool) -> str | None:
    """What says a database is not an Optuna storage (its ``tables``, the ``columns`` of its ``studies`` table and
    whether :data:`STAMPS` hold a row), or None: a database Optuna's storage class would not write to."""
    if "studies" not in held:
        return None  # the caller names what it is not (neither Optuna's nor MLflow's)
    missing = ", ".join(sorted(OPTUNA_TABLES - held))
    if not STUDY_COLUMNS <= columns:
        return (f"a 'studies' table without Optuna's columns ({', '.join(sorted(STUDY_COLUMNS))})"
                + (f" and no {missing} table" if missing else ""))
    if missing:
        return f"no {missing} table beside 'studies'"
    return None if stamped else "its version_info or alembic_version table is empty (no schema version stamped)"


def _sqlite_schema(path: Path, source: str) -> tuple[set[str], set[str], bool]:
    held = tables(path, source)
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(studies)")}
        stamped = STAMPS[0] in held and STAMPS[1] in held and all(
            db.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] > 0 for name in STAMPS)
    return held, columns, stamped


def _check_schema(source: str, held: set[str], columns: set[str], stamped: bool) -> None:
    if "studies" not in held:
        raise DataError(f"{source}: not an Optuna storage (no 'studies' table) nor an MLflow tracking database (no "
                        f"{', '.join(sorted(TABLES - held))} table); export the trials as CSV")
    if problem := schema_problem(held, columns, stamped):
        raise DataError(f"{source}: not an Optuna storage: {problem}; export the trials as CSV")


def _url_schema(url: str) -> tuple[set[str], set[str], bool]:
    """The schema of the database at a SQLAlchemy URL (read only); each way it cannot be read is one DataError."""
    import sqlalchemy

    try:
        engine = sqlalchemy.create_engine(url)
    except sqlalchemy.exc.NoSuchModuleError:
        scheme = url.split("://", 1)[0]
        raise DataError(f"{url}: not a storage URL: SQLAlchemy knows no database {scheme!r}; give a file, a folder or "
                        "an sqlite:/// URL") from None
    except ImportError as err:  # the database's driver (psycopg2, MySQLdb) is not installed
        raise DataError(f"{url}: reading this database needs its Python driver ({err}); or export the trials as "
                        "CSV") from None
    except sqlalchemy.exc.ArgumentError as err:
        raise DataError(f"{url}: not a storage URL ({err})") from None
    try:
        with engine.connect() as connection:
            inspector = sqlalchemy.inspect(connection)
            held = set(inspector.get_table_names())
            columns = {c["name"] for c in inspector.get_columns("studies")} if "studies" in held else set()
            stamped = set(STAMPS) <= held and all(connection.execute(sqlalchemy.text(
                f"SELECT COUNT(*) FROM {name}")).scalar() for name in STAMPS)
    except sqlalchemy.exc.SQLAlchemyError as err:
        raise DataError(f"{url}: cannot read the database ({str(err).splitlines()[0]})") from None
    finally:
        engine.dispose()
    return held, columns, stamped


@contextlib.contextmanager
def _readable(url: str, source: str) -> Iterator[str]:
    """A URL Optuna's storage may open: an SQLite file's snapshot, taken read-only, in a temporary folder removed
    afterwards; another database as it is, once its schema shows Optuna's storage would write nothing there.
    ``source``: the storage as messages name it."""
    if not url.startswith("sqlite:///"):
        _check_schema(source, *_url_schema(url))
        yield url
        return
    path = Path(url.split(":///", 1)[1])
    _check_schema(source, *_sqlite_schema(path, source))
    with tempfile.TemporaryDirectory(prefix="syw_optuna_") as folder:
        copy = Path(folder) / "storage.db"
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as source, \
                contextlib.closing(sqlite3.connect(copy)) as target:
            source.backup(target)
        yield f"sqlite:///{copy}"


def read_optuna(url: str, study: str | None, source: str | None = None) -> Trials:
    """Every trial of an Optuna study, its ``status`` its state: ``value`` (``value_0``, ... for several
    objectives; NaN unless complete), ``number``, ``params.*``, ``user_attrs.*`` and ``duration_seconds``;
    the study's direction(s) and the adaptive sampler its attributes reveal (``syw.analysis.adaptive``).
    The storage is read, never written (module doc); ``source``: the storage as messages name it (default ``url``)."""
    try:
        import optuna
    except ImportError:
        raise DataError(f"{url}: reading an Optuna study needs optuna: pip install 'optuna>=3' (in a checkout: "
                        "pip install '.[optuna]')") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with _readable(url, source or url) as readable:
        try:
            storage = optuna.storages.RDBStorage(readable, skip_table_creation=True)
        except RuntimeError as err:  # a schema older or newer than this optuna's: it would migrate it
            raise DataError(f"{url}: {str(err).splitlines()[0]}") from None
        try:
            return _study(optuna, storage, url, study)
        finally:
            storage.engine.dispose()


def _study(optuna, storage, url: str, study: str | None) -> Trials:
    names = sorted(optuna.study.get_all_study_names(storage=storage))
    if study is None and len(names) > 1:
        raise SeveralStudies(url, names)
    if not names:
        raise DataError(f"{url}: no study in the storage (0 studies)")
    name = study or names[0]
    if name not in names:
        raise DataError(f"{url}: no study named {name!r} (studies: {', '.join(names) or 'none'})")
    loaded = optuna.load_study(study_name=name, storage=storage)
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
    study_marks = set(storage.get_study_system_attrs(storage.get_study_id_from_name(name)))
    strategy = optuna_strategy(marks, study_marks, loaded.user_attrs)
    return Trials(frame, f"{url} (study {name})", name, directions, None if several else "value", strategy=strategy)
