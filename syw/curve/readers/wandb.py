"""Weights & Biases run folders (``wandb/run-*``, ``wandb/offline-run-*``): each one trial, its config as
``config.*`` columns, one row per logged step (``run.log``) reduced by ``per_trial`` (``--pick best|last``),
its status from how it exited.

A run folder keeps its data in two places: ``files/config.yaml`` and ``files/wandb-summary.json`` (written
by online runs and ``wandb sync``; read without wandb: the summary is one row, each metric's last value
unless ``define_metric`` said otherwise), and the binary log ``run-<id>.wandb`` (offline runs write only
this one), read with the ``wandb`` extra: a LevelDB-style log of the protobuf records that wandb's own
``Record`` message parses, whose config, history (every step), summary and exit code are used. Runs are in
the order they started (the run record's start time, else the folder name's ``YYYYMMDD_HHMMSS``).
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pandas as pd

from syw.core.errors import DataError
from syw.core.records import unreadable
from syw.curve.trials import Trials, read_yaml, step_rows

BLOCK = 32768  # the log's block size: a record's header never straddles one
HEADER = b":W&B"
INTERNAL = ("_step", "_runtime", "_timestamp", "_wandb")


def wandb_runs(path: Path) -> list[Path]:
    """The run folders at ``path``: itself, its ``run-*``/``offline-run-*`` folders, or those of its ``wandb/``."""
    def is_run(p: Path) -> bool:
        return p.is_dir() and (any(p.glob("run-*.wandb")) or (p / "files" / "wandb-summary.json").is_file())
    if is_run(path):
        return [path]
    for root in (path, path / "wandb"):
        found = [p for pattern in ("run-*", "offline-run-*") for p in root.glob(pattern) if is_run(p)]
        if found:
            return sorted(found, key=lambda p: (p.name.split("run-", 1)[1], p.name))
    return []


def _log_records(path: Path) -> list[bytes]:
    """The records of a ``.wandb`` log: a 7-byte header, then 32 KiB blocks of chunks (crc32c, length, type:
    1 whole, 2 first, 3 middle, 4 last)."""
    data = path.read_bytes()
    if not data.startswith(HEADER):
        raise DataError(f"{path}: not a W&B run log (no :W&B header)")
    records, partial, at = [], b"", 7
    while at + 7 <= len(data):
        room = BLOCK - at % BLOCK
        if room < 7:  # a block's tail too short for a header is padding
            at += room
            continue
        _, length, kind = struct.unpack("<IHB", data[at:at + 7])
        if kind == 0 and length == 0:  # zeroed tail of a preallocated block
            at += room
            continue
        chunk = data[at + 7:at + 7 + length]
        if len(chunk) < length:
            break  # a torn last record: the run was killed mid-write
        at += 7 + length
        if kind == 1:
            records.append(chunk)
        elif kind == 2:
            partial = chunk
        elif kind == 3:
            partial += chunk
        elif kind == 4:
            records.append(partial + chunk)
            partial = b""
        else:
            raise DataError(f"{path}: byte {at}: chunk type {kind} is not one of a W&B run log's")
    return records


def _json(text: str, where: str):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as err:
        why = unreadable(err)
        raise DataError(f"{where}: {text[:60]!r} is not JSON" + (f" ({why})" if why else "")) from None


def _key(item) -> str:
    return ".".join(item.nested_key) if item.nested_key else item.key


def _from_log(path: Path) -> dict:
    try:
        from wandb.proto import wandb_internal_pb2
    except ImportError:
        raise DataError(f"{path}: an offline W&B run keeps its steps in this binary log, read with wandb: "
                        "pip install wandb (or wandb sync the run, then read its files/ folder)") from None
    from google.protobuf.message import DecodeError

    out = {"config": {}, "steps": [], "summary": {}, "status": "running", "start": None}
    for number, raw in enumerate(_log_records(path), start=1):
        record = wandb_internal_pb2.Record()
        try:
            record.ParseFromString(raw)
        except DecodeError:
            raise DataError(f"{path}: record {number} is not a W&B record") from None
        kind, where = record.WhichOneof("record_type"), f"{path}: record {number}"
        if kind == "run":
            out["start"] = record.run.start_time.ToNanoseconds() / 1e9 or None
            out["config"].update({_key(i): _json(i.value_json, where) for i in record.run.config.update})
        elif kind == "config":
            out["config"].update({_key(i): _json(i.value_json, where) for i in record.config.update})
        elif kind == "history":
            out["steps"].append({_key(i): _json(i.value_json, where) for i in record.history.item})
        elif kind == "summary":
            out["summary"].update({_key(i): _json(i.value_json, where) for i in record.summary.update})
        elif kind == "exit":
            out["status"] = "ok" if record.exit.exit_code == 0 else "failed"
    return out


def _from_files(run: Path) -> dict:
    """``files/config.yaml`` (``key: {value: ...}``) and ``files/wandb-summary.json``."""
    config, summary = {}, {}
    config_file, summary_file = run / "files" / "config.yaml", run / "files" / "wandb-summary.json"
    if config_file.is_file():
        loaded = read_yaml(config_file) or {}
        if not isinstance(loaded, dict):
            raise DataError(f"{config_file}: not a mapping of config keys")
        config = {k: v.get("value") if isinstance(v, dict) else v for k, v in loaded.items()}
    if summary_file.is_file():
        summary = _json(summary_file.read_text(errors="replace"), str(summary_file))
        if not isinstance(summary, dict):
            raise DataError(f"{summary_file}: not a JSON object of summary metrics")
    return {"config": config, "steps": [], "summary": summary, "status": "ok" if summary else "reported-nothing",
            "start": None}


def _scalars(values: dict) -> dict:
    flat = pd.json_normalize(values).iloc[0].to_dict() if values else {}
    return {k: v for k, v in flat.items() if not str(k).startswith(INTERNAL) and (np.isscalar(v) or v is None)}


def read_wandb(path: Path) -> Trials:
    """Every W&B run folder at ``path`` (module doc)."""
    runs = []
    for run in wandb_runs(path):
        logs = sorted(run.glob("run-*.wandb"))
        found = _from_log(logs[0]) if logs else _from_files(run)
        if not found["config"] and (run / "files" / "config.yaml").is_file():
            found["config"] = _from_files(run)["config"]
        steps = [_scalars(s) for s in found["steps"]] or ([_scalars(found["summary"])] if found["summary"] else [])
        runtimes = [s.get("_runtime") for s in found["steps"]] + [found["summary"].get("_runtime")]
        runtime = max((r for r in runtimes if isinstance(r, (int, float)) and r > 0), default=np.nan)
        fields = {**{f"config.{k}": v for k, v in _scalars(found["config"]).items()}, "runtime_seconds": runtime}
        runs.append({"trial": run.name, "label": (logs[0] if logs else run / "files").relative_to(path.parent).as_posix(),
                     "status": found["status"], "fields": fields, "steps": steps, "start": found["start"]})
    if not runs:
        raise FileNotFoundError(f"{path}: no W&B run folder (run-*/ with a run-<id>.wandb or files/wandb-summary.json)")
    runs.sort(key=lambda r: r["start"] if r["start"] else np.inf)  # stable: runs without one keep the folder order
    return step_rows(runs, str(path), path.name)
