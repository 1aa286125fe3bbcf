"""An MLflow tracking store read without MLflow: the file store (``mlruns/``: ``<experiment>/<run>/meta.yaml``,
``params/``, ``metrics/``, ``tags/``) and the SQLite backend (``mlflow.db``: the ``experiments``, ``runs``,
``params``, ``metrics`` and ``tags`` tables).

A run is a trial: its params as ``params.*`` columns, one row per logged step with every metric logged at
that step (reduced by ``per_trial``, ``--pick best|last``); a metric a run logs once while it logs others at
several steps (``mlflow.log_metric("train_time_s", t)``) is the run's, on each of its rows; ``duration_seconds`` from its start and end
times, its status (``FINISHED`` counts; ``FAILED``, ``KILLED`` failed; ``RUNNING`` did not finish). A parent
run (one that others name in ``mlflow.parentRunId``: a sweep's container) is left out and counted; deleted
runs are not read. ``--study`` names the experiment when the store holds runs of several.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from syw.core.errors import DataError
from syw.curve.trials import Trials, read_yaml, step_rows

STATUS = {1: "running", 2: "scheduled", 3: "finished", 4: "failed", 5: "killed"}  # the file store's numbers
PARENT = "mlflow.parentRunId"
TABLES = {"experiments", "runs", "params", "metrics", "tags"}


def is_mlflow_folder(path: Path) -> bool:
    """An ``mlruns/`` folder (experiment folders with a ``meta.yaml``) or one experiment's folder."""
    return (path / "meta.yaml").is_file() or any(path.glob("*/meta.yaml"))


def is_mlflow_database(tables: set[str]) -> bool:
    return TABLES <= tables


def _yaml(path: Path) -> dict:
    loaded = read_yaml(path)
    if not isinstance(loaded, dict):
        raise DataError(f"{path}: not an MLflow meta.yaml (a mapping of run fields)")
    return loaded


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise DataError(f"{where}: {text!r} is not a number") from None


def _file_metrics(run: Path) -> dict[str, list[tuple[int, float]]]:
    """Each metric file's ``timestamp value step`` lines as (step, value)."""
    out = {}
    for path in sorted(p for p in (run / "metrics").rglob("*") if p.is_file()):
        key = path.relative_to(run / "metrics").as_posix()
        points = []
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) not in (2, 3):
                raise DataError(f"{path}: line {number}: {line!r} is not 'timestamp value step'")
            value = _number(parts[1], f"{path}: line {number}")
            points.append((int(_number(parts[2], f"{path}: line {number}")) if len(parts) == 3 else 0, value))
        out[key] = points
    return out


def _texts(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(errors="replace").strip()
            for p in sorted(folder.rglob("*")) if p.is_file()} if folder.is_dir() else {}


def _file_runs(path: Path, study: str | None) -> tuple[list[dict], str, list[str]]:
    experiments = [path] if (path / "meta.yaml").is_file() else sorted(
        p.parent for p in path.glob("*/meta.yaml") if p.parent.name != ".trash")
    named = {}
    for folder in experiments:
        meta = _yaml(folder / "meta.yaml")
        if meta.get("lifecycle_stage", "active") == "active":
            named[str(meta.get("name", folder.name))] = folder
    name = _choose(named, study, str(path), lambda f: any(f.glob("*/meta.yaml")))
    # a folder of a run's files without its meta.yaml (MLflow writes it first): left out, and said
    bare = sorted(p.name for p in named[name].iterdir() if p.is_dir() and not (p / "meta.yaml").is_file()
                  and any((p / part).is_dir() for part in ("metrics", "params", "artifacts")))
    notes = [f"{len(bare)} run folder(s) without a meta.yaml left out: {', '.join(bare)} (MLflow writes it when a run "
             "starts; a partial copy?)"] if bare else []
    runs = []
    for meta_file in sorted(named[name].glob("*/meta.yaml")):
        meta = _yaml(meta_file)
        if meta.get("lifecycle_stage", "active") != "active":
            continue
        for key in ("run_id", "status", "start_time"):
            if key not in meta:
                raise DataError(f"{meta_file}: no {key!r} (an MLflow run's meta.yaml has run_id, status, start_time)")
        run = meta_file.parent
        status = STATUS.get(meta["status"], str(meta["status"])) if isinstance(meta["status"], int) else str(meta["status"])
        runs.append({"id": str(meta["run_id"]), "name": meta.get("run_name"), "status": status,
                     "start": meta["start_time"], "end": meta.get("end_time"), "params": _texts(run / "params"),
                     "tags": _texts(run / "tags"), "metrics": _file_metrics(run),
                     "label": f"{run.relative_to(path.parent).as_posix()}"})
    return runs, name, notes


def _choose(named: dict, study: str | None, source: str, has_runs) -> str:
    """The experiment to read: ``--study``, else the only one holding runs."""
    if study is not None:
        if study not in named:
            raise DataError(f"{source}: no MLflow experiment named {study!r} (experiments: {', '.join(sorted(named)) or 'none'})")
        return study
    holding = [n for n, where in named.items() if has_runs(where)]
    if len(holding) != 1:
        raise DataError(f"{source}: {len(holding)} MLflow experiments hold runs ({', '.join(sorted(holding)) or 'none'}); "
                        "name one with --study")
    return holding[0]


def _database_runs(path: Path, study: str | None) -> tuple[list[dict], str, list[str]]:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            experiments = dict(db.execute("SELECT name, experiment_id FROM experiments WHERE lifecycle_stage = 'active'"))
            counts = dict(db.execute("SELECT experiment_id, COUNT(*) FROM runs WHERE lifecycle_stage = 'active' "
                                     "GROUP BY experiment_id"))
            name = _choose(experiments, study, str(path), lambda eid: counts.get(eid, 0) > 0)
            found = db.execute("SELECT run_uuid, name, status, start_time, end_time FROM runs WHERE experiment_id = ? "
                               "AND lifecycle_stage = 'active'", (experiments[name],)).fetchall()
            ids = [r[0] for r in found]
            marks = ",".join("?" * len(ids))
            params, tags, metrics = {}, {}, {}
            for key, value, run in db.execute(f"SELECT key, value, run_uuid FROM params WHERE run_uuid IN ({marks})", ids):
                params.setdefault(run, {})[key] = value
            for key, value, run in db.execute(f"SELECT key, value, run_uuid FROM tags WHERE run_uuid IN ({marks})", ids):
                tags.setdefault(run, {})[key] = value
            for key, value, run, step, nan in db.execute(
                    f"SELECT key, value, run_uuid, step, is_nan FROM metrics WHERE run_uuid IN ({marks}) "
                    "ORDER BY run_uuid, key, timestamp, step", ids):
                metrics.setdefault(run, {}).setdefault(key, []).append((int(step), np.nan if nan else value))
    except sqlite3.DatabaseError as err:
        raise DataError(f"{path}: not a readable MLflow tracking database ({err})") from None
    runs = [{"id": rid, "name": rname, "status": str(status).lower(), "start": start, "end": end,
             "params": params.get(rid, {}), "tags": tags.get(rid, {}), "metrics": metrics.get(rid, {}), "label": f"run {rid}"}
            for rid, rname, status, start, end in found]
    return runs, name, []


def _trials(runs: list[dict], source: str, name: str, notes: list[str]) -> Trials:
    parents = {r["tags"][PARENT] for r in runs if PARENT in r["tags"]}
    kept = [r for r in runs if r["id"] not in parents]
    if not kept:
        raise DataError(f"{source}: experiment {name!r} holds no run")
    table, once = [], {}
    for run in sorted(kept, key=lambda r: (r["start"] if isinstance(r["start"], (int, float)) else np.inf, r["id"])):
        by_step: dict[int, dict] = {}
        steps = {step for points in run["metrics"].values() for step, _ in points}
        constant = {}  # a metric logged once in a run that logs others at several steps: a property of the run
        for key, points in run["metrics"].items():
            if len(points) == 1 and len(steps) > 1:
                constant[key] = points[0][1]
                once[key] = once.get(key, 0) + 1
                continue
            for step, value in points:
                by_step.setdefault(step, {})[key] = value  # the last value logged at a step
        seconds = (run["end"] - run["start"]) / 1000 if isinstance(run["end"], (int, float)) and run["end"] else np.nan
        fields = {**{f"params.{k}": _value(v) for k, v in run["params"].items()}, "run_name": run["name"],
                  "duration_seconds": seconds, **constant}
        table.append({"trial": run["id"], "label": run["label"], "status": run["status"], "fields": fields,
                      "steps": [by_step[s] for s in sorted(by_step)]})
    notes = notes + ([f"{len(runs) - len(kept)} parent run(s) left out (the runs nested in them are the trials)"]
                     if parents else [])
    notes += [f"{key}: logged once per run ({count} runs), read as the run's, with whichever step the run counts with"
              for key, count in sorted(once.items())]
    return step_rows(table, source, name, notes=notes)


def _value(text: str):
    """A param as MLflow stores it (text): a number where it reads as one."""
    try:
        return float(text) if any(c in text for c in ".eE") or text.lower() in ("nan", "inf") else int(text)
    except ValueError:
        return text


def read_mlflow(path: Path, study: str | None = None, *, database: bool = False) -> Trials:
    """The runs of one MLflow experiment (module doc), from a file store folder or an SQLite tracking database."""
    runs, name, notes = _database_runs(path, study) if database else _file_runs(path, study)
    return _trials(runs, str(path), name, notes)
