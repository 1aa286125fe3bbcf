"""Anyone's trials, one row a trial: a CSV, TSV or JSONL file (allentune's ``results.jsonl`` and the
authors' camera-ready TSVs too), a Ray Tune experiment folder, or an Optuna study in its storage.

Every malformed input raises one error naming the file (and line, key or trial): ``FileNotFoundError``
for what is not there, :class:`syw.core.errors.DataError` (a ``ValueError``) for what is wrong.
"""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.adaptive import optuna_strategy, ray_strategy
from syw.analysis.read_hydra import jobs, read_hydra
from syw.analysis.read_journal import is_journal, read_journal
from syw.analysis.read_lightning import read_lightning, versions
from syw.analysis.read_mlflow import TABLES, is_mlflow_database, is_mlflow_folder, read_mlflow
from syw.analysis.read_tensorboard import read_tensorboard
from syw.analysis.read_wandb import read_wandb, wandb_runs
from syw.analysis.rows import finished
from syw.analysis.table import read_table
from syw.analysis.trials import Trials
from syw.core.errors import DataError
from syw.core.manifest import require_verified
from syw.core.records import iter_records, study_records

RAY_KEYS = {"timestamp", "checkpoint_dir_name", "done", "training_iteration", "trial_id", "date", "time_this_iter_s",
            "time_total_s", "pid", "hostname", "node_ip", "time_since_restore", "iterations_since_restore",
            "experiment_tag", "should_checkpoint"}  # what Ray Tune adds to every reported result
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
OPTUNA_EXPORT = {"number", "state", "datetime_start"}  # study.trials_dataframe() columns


def load_trials(source: str, *, study: str | None = None) -> Trials:
    """Read ``source`` by what it is (docs/syw.md, Inputs): a storage URL (``sqlite:///x.db``, with ``study``) or
    database file is an Optuna study or an MLflow tracking database (``study``: its experiment); a folder is a
    Ray Tune experiment, an MLflow ``mlruns/``, W&B runs, Lightning CSVLogger versions, a Hydra multirun
    (``FOLDER#SCORE_FILE``), TensorBoard event files or our study records; a file an Optuna journal, else
    CSV/TSV/JSONL by its extension."""
    if source.startswith("journal:///"):  # not a URL Optuna knows: its journal is a file
        return read_journal(Path(source[len("journal://"):]), study)
    if "://" in source:
        database = Path(source.split(":///", 1)[1]) if source.startswith("sqlite:///") else None
        if database is not None and database.is_file() and is_mlflow_database(_tables(database, source)):
            return read_mlflow(database, study, database=True)
        return read_optuna(source, study)
    folder, _, score_file = source.partition("#") if "#" in source and Path(source.partition("#")[0]).is_dir() else (
        source, "", "")
    path = Path(folder)
    if path.is_dir():
        return _read_folder(path, study, score_file or None)
    if path.suffix.lower() in DATABASE_SUFFIXES:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such database file")
        tables = _tables(path, str(path))
        if is_mlflow_database(tables):
            return read_mlflow(path, study, database=True)
        if "studies" not in tables:
            raise DataError(f"{path}: an SQLite file that is neither an Optuna storage (no 'studies' table) nor an MLflow "
                            f"tracking database (no {', '.join(sorted(TABLES - tables))} table); export the trials as CSV")
        return read_optuna(f"sqlite:///{path}", study)
    if path.is_file() and is_journal(path):
        return read_journal(path, study)
    frame = read_table(path)
    if OPTUNA_EXPORT <= set(frame.columns):
        return Trials(from_optuna_export(frame), str(path), path.stem,
                      notes=["read as Optuna's trials_dataframe() export (state, params_*, duration)"])
    return Trials(frame, str(path), path.stem)


def _read_folder(path: Path, study: str | None, score_file: str | None) -> Trials:
    """A folder, by the files of the tool that wrote it."""
    if any(path.glob("*/result.json")) or any(path.glob("*/error.txt")) or any(path.glob("*/error.pkl")):
        return read_ray(path)
    if any(path.glob("*.jsonl")):
        return read_study(path)
    if score_file is not None or jobs(path):
        return read_hydra(path, score_file)
    if is_mlflow_folder(path):
        return read_mlflow(path, study)
    if versions(path):
        return read_lightning(path)
    if wandb_runs(path):
        return read_wandb(path)
    if any(path.glob("events.out.tfevents.*")) or any(path.glob("*/events.out.tfevents.*")):
        return read_tensorboard(path)
    return read_ray(path)  # its error says what a Ray Tune experiment folder holds


def _tables(path: Path, source: str) -> set[str]:
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


def read_study(folder: Path) -> Trials:
    """A study's records folder, ``results/<study>/`` (``syw run``'s ``<family>.jsonl``, one record per trial,
    the latest of each index): one row per trial with its family's label from the family file the records
    name, its validation score, training seconds and status; the direction is the records' own. The tuner
    runs and seed reruns in subfolders are not random search and are left out (``syw fig 5`` draws them). Records
    that do not match their manifest are refused (:func:`syw.core.manifest.require_verified`)."""
    require_verified(folder, recursive=False)
    rows, labels, directions = [], [], set()
    for stem, records in study_records(folder).items():
        labels_of = {}  # one family file read per file, not per record
        for record in records:
            directions.add(record.get("direction", "max"))
            key = (record.get("family_file"), record["family"])
            if key not in labels_of:
                labels_of[key] = _label(folder, record)
            rows.append({"family": labels_of[key], "value": record.get("value"), "status": record.get("status"),
                         "duration_seconds": record.get("duration_seconds"), "trial": record["trial"]})
            labels.append(f"{stem}.jsonl, trial {record['trial']}")
    if not rows:
        raise FileNotFoundError(f"{folder}: no trial records (<family>.jsonl, as syw run writes them)")
    if len(directions) > 1:
        raise DataError(f"{folder}: its records disagree on the direction ({', '.join(sorted(directions))})")
    return Trials(pd.DataFrame(rows, index=labels), str(folder), folder.name, directions={"value": directions.pop()},
                  preferred="value")


def _label(folder: Path, record: dict) -> str:
    """The family's label (its family file's ``label``, as the paper's figures name it), else its short name."""
    import yaml

    family_file = record.get("family_file")
    for root in (folder.parent.parent, Path.cwd()):  # results/<study> sits in the repository root
        path = root / family_file if family_file else None
        if path is not None and not path.is_file():  # records older than the case-study folders name it flat
            path = next(iter(sorted(path.parent.glob(f"*/{path.name}"))), path)
        if path is not None and path.is_file():
            try:
                label = (yaml.safe_load(path.read_text()) or {}).get("label")
            except yaml.YAMLError:
                label = None
            return str(label or record["family"])
    return str(record["family"])


def read_ray(folder: Path) -> Trials:
    """A Ray Tune experiment folder (what ``Tuner.fit`` leaves): one folder per trial with ``result.json``
    (one JSON line per reported result) and ``params.json`` (its configuration, as ``config.*`` columns).
    A line that is not JSON (a killed trial's torn write) is skipped with a warning, as in our records.

    Trials are numbered (``trial_index``) in the order they were created: the counter that leads Ray's
    ``experiment_tag`` (``3_lr=0.01``; in the folder name after the trial id, ``trainable_0422cc32_3_lr=...``,
    where results hold no tag), else the start time (the first report's ``timestamp`` less its
    ``time_total_s``), never the folder name's order, which for a searcher starts with a random trial id.
    One row per reported result, labelled ``<trial folder>/result.json, result <i>``; a trial that raised
    (an ``error.txt`` or ``error.pkl``) or reported nothing is one row with a failed ``status``
    (``syw.analysis.rows`` leaves it out or counts it as its group's worst).
    """
    trial_dirs = sorted({p.parent for name in ("result.json", "error.txt", "error.pkl") for p in folder.glob(f"*/{name}")})
    if not trial_dirs:
        raise FileNotFoundError(f"{folder}: no trial folder with a result.json; a Ray Tune experiment folder "
                                "(Tuner.fit's storage_path/name) holds one folder per trial")
    rows, labels = [], []
    for index, trial in enumerate(_in_run_order(trial_dirs), start=1):
        config = _config(trial)
        flat_config = pd.json_normalize({"config": config}).iloc[0].to_dict() if config else {}
        error = next((p for p in (trial / "error.txt", trial / "error.pkl") if p.exists()), None)
        results = [] if error else list(iter_records(trial / "result.json", schema=False))  # torn: skipped, warned
        if not results:  # a trial that raised or reported nothing: a failed trial (analysis.rows)
            rows.append({**flat_config, "trial": trial.name, "trial_index": index,
                         "status": "error" if error else "reported-nothing"})
            labels.append(f"{trial.name}/{error.name if error else 'result.json'}")
            continue
        for number, result in enumerate(results, start=1):
            result = {k: v for k, v in result.items() if k != "config"}
            rows.append({**pd.json_normalize(result).iloc[0].to_dict(), **flat_config, "trial": trial.name,
                         "trial_index": index})
            labels.append(f"{trial.name}/result.json, result {number}")
    frame = pd.DataFrame(rows, index=labels)
    if "status" in frame.columns and finished(frame).ne("ok").all():
        raise DataError(f"{folder}: no trial reported a result ({len(trial_dirs)} trial folder(s), each raised "
                        "or reported nothing)")
    return Trials(frame, str(folder), folder.name, reports=True, strategy=ray_strategy(folder))


def _in_run_order(trial_dirs: list[Path]) -> list[Path]:
    """Ray trial folders in the order their trials were created (see :func:`read_ray`)."""
    def key(trial: Path) -> tuple[float, float, str]:
        first = next(iter(iter_records(trial / "result.json", schema=False)), {}) if (trial / "result.json").is_file() else {}
        after_id = trial.name.split(f"_{first['trial_id']}_", 1)[-1] if first.get("trial_id") else ""
        tag = re.match(r"(\d+)(_|$)", str(first.get("experiment_tag", after_id)))
        stamp, spent = first.get("timestamp"), first.get("time_total_s", 0.0)
        started = stamp - spent if _number(stamp) and _number(spent) else np.inf
        return (int(tag.group(1)) if tag else np.inf, started, trial.name)
    return sorted(trial_dirs, key=key)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)


def _config(trial: Path) -> dict:
    """A Ray trial's configuration: its ``params.json``, else the ``config`` of its last result."""
    params_file = trial / "params.json"
    try:
        if params_file.is_file():
            return json.loads(params_file.read_text())
    except json.JSONDecodeError as err:
        raise DataError(f"{params_file}: not JSON (line {err.lineno}: {err.msg})") from None
    results = list(iter_records(trial / "result.json", schema=False)) if (trial / "result.json").is_file() else []
    return results[-1].get("config", {}) if results else {}


def per_trial(trials: Trials, metric: str, *, pick: str = "best", maximize: bool = True) -> Trials:
    """One row per trial of a source that logs every step (Ray Tune, MLflow, W&B, Lightning, TensorBoard):
    its report with the best (or the last) ``metric``, with the trial's whole training time
    (``time_total_s`` of its last report)."""
    frame = trials.frame
    if metric not in frame.columns:
        raise DataError(f"{trials.source}: no trial reported {metric!r}")
    values = pd.to_numeric(frame[metric], errors="coerce")
    text = frame[metric][values.isna() & frame[metric].notna()]
    text = text[~text.map(lambda v: isinstance(v, (int, float)))]
    if not text.empty:  # a score that is text says the column is wrong (syw.analysis.rows)
        raise DataError(f"{trials.source}: {text.index[0]}: {metric!r} holds {text.iloc[0]!r}, not a number")
    state = finished(frame)
    out, labels = [], []
    for trial, part in frame.groupby("trial", sort=True):
        if state[part.index].ne("ok").all():  # a trial that raised or reported nothing: one failed row
            out.append(part.iloc[-1])
            labels.append(part.index[-1])
            continue
        scores = values[part.index]
        ok = scores[np.isfinite(scores.to_numpy(float))]
        if ok.empty:
            where = str(part.index[0]).rsplit(", ", 1)[0]
            raise DataError(f"{trials.source}/{where}: no result holds a number under {metric!r}" if where.endswith(
                "result.json") else f"{trials.source}: {where}: no logged step holds a number under {metric!r}")
        chosen = ok.index[-1] if pick == "last" else (ok.idxmax() if maximize else ok.idxmin())
        row = part.loc[chosen].copy()
        if "time_total_s" in part:
            row["time_total_s"] = pd.to_numeric(part["time_total_s"], errors="coerce").max()
        out.append(row)
        labels.append(chosen)
    return Trials(pd.DataFrame(out, index=labels), trials.source, trials.name, trials.directions,
                  trials.preferred, trials.notes, strategy=trials.strategy)


def _check_optuna_sqlite(url: str) -> None:
    """An SQLite storage must exist and hold Optuna's tables: optuna itself would create both."""
    tables = _tables(Path(url.split(":///", 1)[1]), url)
    if "studies" not in tables:
        raise DataError(f"{url}: not an Optuna storage (no 'studies' table) nor an MLflow tracking database (no "
                        f"{', '.join(sorted(TABLES - tables))} table); export the trials as CSV")


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
    if study is None and len(names) != 1:
        listed = ", ".join(names) if names else "none"
        raise DataError(f"{url}: {len(names)} studies ({listed}); name one with --study")
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
