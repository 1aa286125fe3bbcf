"""A Ray Tune experiment folder: one folder per trial with ``result.json`` and ``params.json``."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from syw.analysis.adaptive import ray_strategy
from syw.core.errors import DataError
from syw.core.records import iter_records, unreadable
from syw.curve.rows import finished
from syw.curve.trials import Trials

RAY_KEYS = {"timestamp", "checkpoint_dir_name", "done", "training_iteration", "trial_id", "date", "time_this_iter_s",
            "time_total_s", "pid", "hostname", "node_ip", "time_since_restore", "iterations_since_restore",
            "experiment_tag", "should_checkpoint"}  # what Ray Tune adds to every reported result


def is_ray_folder(path: Path) -> bool:
    """A folder of trial folders, each with a ``result.json`` (or the error of a trial that raised)."""
    return any(path.glob("*/result.json")) or any(path.glob("*/error.txt")) or any(path.glob("*/error.pkl"))


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
    (``syw.curve.rows`` leaves it out or counts it as its group's worst).
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
    except (ValueError, RecursionError) as err:  # well-formed, but beyond what Python reads
        raise DataError(f"{params_file}: not JSON ({unreadable(err)})") from None
    results = list(iter_records(trial / "result.json", schema=False)) if (trial / "result.json").is_file() else []
    return results[-1].get("config", {}) if results else {}
