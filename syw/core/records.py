"""Durable trial records: ``results/<study>/<family>.jsonl``, one JSON line per finished trial.

Lines are appended and fsynced as each trial finishes and are never rewritten, so a
killed run loses at most the trials in flight. A write that fails (a full disk, a quota,
an I/O error) is rolled back to the last complete line and raises :class:`RecordsWriteError`;
a last line cut off by a killed run is removed by the next writer, whose lock says nobody
is writing it. One runner at a time may write a records file: the writer holds an exclusive
lock on ``<family>.jsonl.lock``, which a runner may :func:`claim` before Ray starts. Each line's chained hash
goes to ``<family>.jsonl.sha256`` before the line (:mod:`syw.core.manifest`, ``syw verify``).
"""
from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from syw.core.manifest import Chain, Mismatch
from syw.core.snapshot import snapshot_lines

if TYPE_CHECKING:
    import pandas as pd


class RecordsBusy(RuntimeError):
    """Another runner is writing the same records file."""


class RecordError(ValueError):
    """A records line that is not a trial record (or, for :func:`check_complete`, not JSON); the message
    names the file and line."""


class RecordsWriteError(OSError):
    """A record that could not be written: the file was rolled back to its last complete line."""


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

    A line that is not JSON is skipped with a note on stderr, once per process (its trial runs
    again on resume; :func:`check_complete` refuses it instead); a JSON line of the wrong shape
    raises :class:`RecordError`.
    """
    if not path.is_file():
        return
    for number, line in enumerate(snapshot_lines(path), start=1):
        if not line.strip():
            continue
        record, why = _parsed_at(path, number, line)
        if why:
            _note(f"{path}:{number}: skipping a line that is {why}; its trial counts as not run")
            continue
        problem = check_record(record) if schema else None if isinstance(record, dict) else (
            f"a record is a JSON object, got {type(record).__name__}")
        if problem:
            raise RecordError(f"{path}:{number}: {problem}")
        yield record


_NOTED: set[str] = set()  # the notes this process printed: every reader of a file meets its skipped line


def _note(text: str) -> None:
    """Print ``text`` on stderr as a warning, the first time only."""
    if text not in _NOTED:
        _NOTED.add(text)
        print(f"warning: {text}", file=sys.stderr, flush=True)


def unreadable(err: ValueError | RecursionError) -> str | None:
    """Why well-formed JSON could not be read by Python, or None for JSON that is malformed (a
    ``JSONDecodeError``): nesting deeper than Python's recursion limit, or an integer longer than its
    4300 digits. The readers of JSON (records, Ray, Hydra, W&B, Optuna journals) say it the same way."""
    if isinstance(err, RecursionError):
        return "nested too deeply for Python to read"
    if isinstance(err, json.JSONDecodeError):
        return None
    return f"a number too long for Python to read ({str(err).split(';')[0]})"


def _parsed(line: bytes) -> tuple[Any, str | None]:
    """``(value, None)`` for a line of JSON, else ``(None, what the line is)``. Its cause is named only when
    known: the writer ends every line it writes, so a last line without its newline is a write that did not finish.
    Well-formed JSON that Python cannot read (:func:`unreadable`) is no torn line: it raises :class:`RecordError`."""
    try:
        return json.loads(line.decode("utf-8").rstrip("\r\n")), None
    except UnicodeDecodeError as err:
        why = f"not UTF-8 text (byte {err.start + 1})"
    except json.JSONDecodeError as err:  # Python's messages: "Expecting value", "Unterminated string starting at", ...
        why = f"not JSON ({err.msg.removesuffix(' at')} at column {err.colno})"
    except (ValueError, RecursionError) as err:
        reason = unreadable(err)
        raise RecordError(reason if reason.startswith("a number") else f"JSON {reason}") from None
    return None, why if line.endswith(b"\n") else "the last line, cut off mid-record (a write that did not finish)"


def _parsed_at(path: Path, number: int, line: bytes) -> tuple[Any, str | None]:
    """:func:`_parsed`, its error naming the file and line."""
    try:
        return _parsed(line)
    except RecordError as err:
        raise RecordError(f"{path}:{number}: {err}") from None


def check_complete(folder: Path) -> None:
    """Raise :class:`RecordError` naming the first line of a records file under ``folder`` (every
    ``*.jsonl``, hidden folders skipped) that is not JSON: what a figure or page is made from must
    be every record, not the ones that parse."""
    for path in sorted(Path(folder).rglob("*.jsonl")):
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        for number, line in enumerate(snapshot_lines(path), start=1):
            why = _parsed_at(path, number, line)[1] if line.strip() else None
            if why:
                fix = ("the same `syw run` command removes it and runs its trial again" if not line.endswith(b"\n")
                       else "restore the file (git checkout) or delete the line")
                raise RecordError(f"{path}:{number}: a line that is {why}: {fix}")


def latest_per_trial(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last record of each trial index, in index order (a retried trial's new record wins)."""
    latest = {record["trial"]: record for record in records}
    return [latest[index] for index in sorted(latest)]


def study_records(study_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The latest record of each trial (:func:`latest_per_trial`) of every ``<family>.jsonl`` of a study's
    folder, by family file, in index order: the one reader of ``results/<study>/`` that the figures, the
    README facts and ``syw curve results/<study>`` share (tuner runs and reseeds in subfolders are not read)."""
    return {path.stem: latest_per_trial(iter_records(path)) for path in sorted(Path(study_dir).glob("*.jsonl"))}


def done_indices(path: Path, *, retry_failed: bool = False) -> set[int]:
    """Trial indices that need no run: every index with a record, or with ``retry_failed`` only
    those whose latest record is ok."""
    return {r["trial"] for r in latest_per_trial(iter_records(path)) if not retry_failed or r["status"] == "ok"}


def _open_own(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of a file the runner writes, never through a symbolic link (``O_NOFOLLOW``): a link there, to a file
    elsewhere or to none, would have the records or the lock's pid written wherever it points."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, mode)
    except OSError as err:
        if err.errno == errno.ELOOP and os.path.islink(path):
            raise OSError(errno.ELOOP, f"a symbolic link (to {os.readlink(path)}): the runner writes no file through a "
                          "link; remove it", str(path)) from None
        raise


class _Lock:
    """The exclusive lock on a records file's ``.lock``, the holder's pid written in it."""

    def __init__(self, path: Path, records: Path):
        self.handle = os.fdopen(_open_own(path, os.O_RDWR | os.O_APPEND | os.O_CREAT), "a+")
        self.writing = False  # a claimed lock: whether a writer of this process is using it
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.handle.seek(0)
            holder = self.handle.read().strip() or "unknown"
            self.handle.close()
            raise RecordsBusy(
                f"another runner (pid {holder}) is writing {records}; wait for it to finish or stop it, "
                "then run the same command again to resume"
            ) from None
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(str(os.getpid()))
        self.handle.flush()

    def release(self) -> None:
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


_CLAIMED: dict[str, _Lock] = {}  # records files whose lock this process holds until it ends (:func:`claim`)


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def claim(path: Path) -> None:
    """Take ``path``'s writer lock now and hold it until this process ends (:class:`RecordsBusy` if another
    runner holds it): a runner claims its records before Ray starts, and its :class:`RecordsWriter` writes
    under the claimed lock."""
    key = os.path.realpath(path)
    if key not in _CLAIMED:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        _CLAIMED[key] = _Lock(_lock_path(Path(path)), Path(path))


class RecordsWriter:
    """Exclusive appender for one records file; use as a context manager."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock: _Lock | None = None

    def __enter__(self) -> RecordsWriter:
        claimed = _CLAIMED.get(os.path.realpath(self.path))
        if claimed is not None:
            if claimed.writing:
                raise RecordsBusy(f"this process is writing {self.path} already")
            claimed.writing = True
            self._lock = claimed
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = _Lock(_lock_path(self.path), self.path)
        try:
            self._complete_last_line()
            self._chain = Chain(self.path)  # the records checked against their manifest, which each append extends
        except Mismatch as err:
            self.__exit__()
            raise RecordError(str(err)) from None
        except BaseException:
            self.__exit__()
            raise
        return self

    def _complete_last_line(self) -> None:
        """A last line without its newline was left by a writer that stopped (this one holds the lock):
        a record gets its newline, a line cut off mid-record is removed (its trial runs again)."""
        try:
            with open(_open_own(self.path, os.O_RDONLY), "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return
        keep = data.rfind(b"\n") + 1
        if keep == len(data):
            return
        try:
            json.loads(data[keep:])
            complete = True
        except (json.JSONDecodeError, UnicodeDecodeError):
            complete = False
        with open(_open_own(self.path, os.O_RDWR), "r+b") as handle:
            if complete:
                handle.seek(0, os.SEEK_END)
                handle.write(b"\n")
            else:
                handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())
        if not complete:
            number = data.count(b"\n", 0, keep) + 1
            _note(f"{self.path}:{number}: removed the last line, cut off mid-record "
                  f"({len(data) - keep} bytes: its run was stopped while writing it); its trial runs again")

    def append(self, record: dict[str, Any]) -> None:
        """Append one record, its hash to the manifest first (:mod:`syw.core.manifest`), and force both to disk; on a
        failed or short write, roll both back and raise :class:`RecordsWriteError` (nothing of the record stays)."""
        line = memoryview((json.dumps(record, sort_keys=False, default=str) + "\n").encode())
        what = f"trial {record.get('trial')}'s record"
        try:
            fd = _open_own(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError as err:
            raise RecordsWriteError(err.errno, f"cannot write {what}: {err.strerror}", str(self.path)) from err
        try:
            size = os.fstat(fd).st_size
            try:
                self._chain.add(bytes(line))
            except OSError as err:
                raise RecordsWriteError(err.errno, f"cannot write {what}'s hash ({err.strerror}); nothing was recorded for "
                                        "it: make room (or fix the disk), then run the same command", err.filename) from err
            try:
                while line:  # a short write goes on with the rest
                    written = os.write(fd, line)
                    if not written:
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    line = line[written:]
                os.fsync(fd)
            except OSError as err:
                raise RecordsWriteError(err.errno, f"cannot write {what} ({err.strerror}); {_roll_back(fd, size)}; "
                                        f"{self._chain.undo()}nothing was recorded for it: make room (or fix the disk), "
                                        "then run the same command", str(self.path)) from err
        finally:
            os.close(fd)

    def __exit__(self, *exc) -> None:
        if self._lock is None:
            return
        if self._lock is _CLAIMED.get(os.path.realpath(self.path)):
            self._lock.writing = False  # a claimed lock is held until the process ends
        else:
            self._lock.release()
        self._lock = None


def _roll_back(fd: int, size: int) -> str:
    """Cut the file open at ``fd`` back to ``size`` bytes (its last complete line); what happened, in words."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
        return "the file was rolled back to its last complete line"
    except OSError as err:
        return f"rolling the file back failed too ({err.strerror}): the next run removes the partial line"


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

    records = [r for rows in study_records(study_dir).values() for r in rows]
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
