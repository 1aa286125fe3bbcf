"""Durable trial records: ``results/<study>/<family>.jsonl``, one JSON line per finished trial.

Lines are appended and fsynced as each trial finishes and are never rewritten, so a
killed run loses at most the trials in flight. One runner at a time may write a
records file: the writer holds an exclusive lock on ``<family>.jsonl.lock``.
"""
from __future__ import annotations

import fcntl
import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    import pandas as pd


class RecordsBusy(RuntimeError):
    """Another runner is writing the same records file."""


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """The complete records in ``path`` (a torn last line from a killed writer is skipped)."""
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:  # torn write of a killed run: that trial runs again on resume
                warnings.warn(f"{path}:{number}: skipping an incomplete record (a killed run was writing it)")


def done_indices(path: Path) -> set[int]:
    """Trial indices that already have a record (ok or failed)."""
    return {int(r["trial"]) for r in iter_records(path)}


class RecordsWriter:
    """Exclusive appender for one records file; use as a context manager."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._lock = None

    def __enter__(self) -> "RecordsWriter":
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


def load_study(study_dir: Path) -> tuple[pd.DataFrame, dict[str, int]]:
    """The table the analysis reads (one row per ok trial, ``params.*`` flattened) and failed trials per family."""
    import pandas as pd  # here, not at the top: every trial worker imports this module

    records = [r for path in sorted(Path(study_dir).glob("*.jsonl")) for r in iter_records(path)]
    if not records:
        raise FileNotFoundError(f"no trial records in {study_dir}")
    frame = pd.json_normalize(records)
    ok = frame["status"] == "ok"
    failed = frame.loc[~ok, "family"].value_counts().to_dict()
    return frame[ok].sort_values(["family", "trial"]).reset_index(drop=True), {k: int(v) for k, v in failed.items()}
