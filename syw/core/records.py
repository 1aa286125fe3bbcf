"""Durable trial records: ``results/<study>/<family>.jsonl``, one JSON line per finished trial.

Lines are appended and fsynced as each trial finishes and are never rewritten, so a
killed run loses at most the trials in flight. One runner at a time may write a
records file: the writer holds an exclusive lock on ``<family>.jsonl.lock``.
"""
from __future__ import annotations

import fcntl
import json
import math
import os
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class RecordsBusy(RuntimeError):
    """Another runner is writing the same records file."""


class RecordError(ValueError):
    """A records line that is JSON but not a trial record; the message names the file and line."""


STATUSES = ("ok", "failed")


def check_record(record: Any) -> str | None:
    """Why ``record`` is not a trial record, or None: one schema for every reader of records.

    A record is an object whose ``trial`` is a non-negative integer, ``status`` one of
    :data:`STATUSES`, ``params`` an object (or null for a crashed worker), and, when ok, ``value``
    a finite number.
    """
    if not isinstance(record, dict):
        return f"a record is a JSON object, got {type(record).__name__}"
    trial = record.get("trial")
    if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
        return f"trial must be a non-negative integer, got {trial!r}"
    if record.get("status") not in STATUSES:
        return f"status must be one of {', '.join(STATUSES)}, got {record.get('status')!r}"
    if not isinstance(record.get("params"), (dict, type(None))):
        return f"params must be an object or null, got {record.get('params')!r}"
    value = record.get("value")
    if record["status"] == "ok" and (not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value)):
        return f"an ok record's value must be a finite number, got {value!r}"
    return None


def iter_records(path: Path, *, schema: bool = True) -> Iterator[dict[str, Any]]:
    """The complete records in ``path``, each checked by :func:`check_record` (with ``schema`` off,
    only that each is a JSON object: other tools' trial files need not be the runner's records).

    A line that is not JSON is the torn write of a killed run: it is skipped with a warning (the
    trial runs again on resume); a JSON line of the wrong shape raises :class:`RecordError`.
    """
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                warnings.warn(f"{path}:{number}: skipping an incomplete record (a killed run was writing it)")
                continue
            problem = check_record(record) if schema else None if isinstance(record, dict) else (
                f"a record is a JSON object, got {type(record).__name__}")
            if problem:
                raise RecordError(f"{path}:{number}: {problem}")
            yield record


def latest_per_trial(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last record of each trial index, in index order (a retried trial's new record wins)."""
    latest = {record["trial"]: record for record in records}
    return [latest[index] for index in sorted(latest)]


def done_indices(path: Path, *, retry_failed: bool = False) -> set[int]:
    """Trial indices that need no run: every index with a record, or with ``retry_failed`` only
    those whose latest record is ok."""
    return {r["trial"] for r in latest_per_trial(iter_records(path)) if not retry_failed or r["status"] == "ok"}


class RecordsWriter:
    """Exclusive appender for one records file; use as a context manager."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._lock = None

    def __enter__(self) -> RecordsWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(self._lock_path, "a+")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.seek(0)
            holder = self._lock.read().strip() or "unknown"
            self._lock.close()
            raise RecordsBusy(
                f"another runner (pid {holder}) is writing {self.path}; wait for it to finish or stop it, "
                "then run the same command again to resume"
            ) from None
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(str(os.getpid()))
        self._lock.flush()
        return self

    def append(self, record: dict[str, Any]) -> None:
        """Append one record and force it to disk."""
        line = (json.dumps(record, sort_keys=False, default=str) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size:  # never extend a torn line: start a fresh one after it
                with self.path.open("rb") as handle:
                    handle.seek(size - 1)
                    if handle.read(1) != b"\n":
                        line = b"\n" + line
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def __exit__(self, *exc) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None


def adaptive_runs(study_dir: Path, family: str) -> dict[tuple[str, int], np.ndarray]:
    """Each adaptive run of ``family`` under ``study_dir``: (strategy, tuner seed) -> its values in
    trial order (NaN where a trial failed), read from every ``<strategy>/<family>.tuner_seed*.jsonl``
    up to its first missing index (a run stopped with trials in flight). These are not i.i.d. draws:
    draw them as a best-so-far (:func:`syw.analysis.adaptive.tuner_progress`)."""
    runs = {}
    for path in sorted(Path(study_dir).glob(f"*/{family}.tuner_seed*.jsonl")):
        rows = latest_per_trial(iter_records(path))
        rows = [r for i, r in enumerate(rows) if r["trial"] == i]  # latest_per_trial sorts: a gap ends the prefix
        if rows:
            runs[(rows[0]["strategy"], int(rows[0]["tuner_seed"]))] = np.array(
                [r["value"] if r["status"] == "ok" else np.nan for r in rows], dtype=float)
    return runs


def load_study(study_dir: Path) -> tuple[pd.DataFrame, dict[str, int]]:
    """The table the analysis reads (one row per ok trial, the latest record of each index,
    ``params.*`` flattened) and the failed trials per family."""
    import pandas as pd  # here, not at the top: every trial worker imports this module

    records = [r for path in sorted(Path(study_dir).glob("*.jsonl")) for r in latest_per_trial(iter_records(path))]
    if not records:
        raise FileNotFoundError(f"no trial records in {study_dir}")
    adaptive = next((r for r in records if r.get("strategy", "random") != "random"), None)
    if adaptive is not None:  # Eq. 8 assumes i.i.d. draws; adaptive_runs reads these
        raise RecordError(f"{study_dir}: trial {adaptive['trial']} of {adaptive.get('family')} was suggested by an adaptive "
                          f"search ({adaptive['strategy']}): its trials are no i.i.d. draws for Eq. 8")
    frame = pd.json_normalize(records)
    ok = frame["status"] == "ok"
    failed = frame.loc[~ok, "family"].value_counts().to_dict()
    return frame[ok].sort_values(["family", "trial"]).reset_index(drop=True), {k: int(v) for k, v in failed.items()}
