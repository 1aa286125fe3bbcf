"""Tamper-evident trial records: ``<family>.jsonl.sha256`` beside each records file (docs/running.md,
"Records are tamper-evident"; ``syw verify``).

After its ``#`` header line, line i of a manifest is h_i in hex, where h_1 = sha256(line_1) and
h_i = sha256(h_{i-1} || line_i): h_{i-1} as its 32 bytes, line_i the records file's i-th line with its
newline. A record edited, removed, inserted or moved changes h from its line on, so the first line
that does not match is where the records were changed. The records writer
(:class:`syw.core.records.RecordsWriter`) appends a line's hash and fsyncs it before the line itself,
under the records file's lock, and rolls both back when a write fails (:class:`Chain`): a record never
lands without its hash. A run stopped between the two leaves one hash without its record, which the
next writer drops, as it removes a record cut off mid-line.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from syw.core.snapshot import read_snapshot

SUFFIX = ".sha256"  # <family>.jsonl.sha256
ALLOW_ENV = "SYW_ALLOW_UNVERIFIED"
HEADER = ("# syw records manifest: line i below is h_i = sha256(h_(i-1) + records line i with its newline) in hex, "
          "h_0 empty (syw verify)")
OVERRIDE = "--allow-unverified (or SYW_ALLOW_UNVERIFIED=1) reads them anyway"
OVERRIDE_HELP = ("read records that do not match their manifest (.jsonl.sha256, see syw verify) with a warning instead "
                 "of refusing them; SYW_ALLOW_UNVERIFIED=1 does the same")
_HASH = re.compile(rb"[0-9a-f]{64}")
_ALLOW: ContextVar[bool] = ContextVar("allow_unverified", default=False)
_WARNED: set[str] = set()  # the warnings this process printed


class Mismatch(ValueError):
    """Records that do not match their manifest; the message names the records file and line."""


def manifest_of(records: Path) -> Path:
    """The manifest of a records file: ``<family>.jsonl.sha256`` beside it."""
    return records.with_name(records.name + SUFFIX)


@contextmanager
def allow_unverified(allow: bool = True) -> Iterator[None]:
    """Within the block, records that do not match their manifest are read with a warning, not refused."""
    token = _ALLOW.set(allow or _ALLOW.get())
    try:
        yield
    finally:
        _ALLOW.reset(token)


def allowed() -> bool:
    """Whether a mismatch is a warning here: inside :func:`allow_unverified`, or with SYW_ALLOW_UNVERIFIED set."""
    return _ALLOW.get() or os.environ.get(ALLOW_ENV, "") not in ("", "0")


def _warn(text: str) -> None:
    if text not in _WARNED:
        _WARNED.add(text)
        print(f"warning: {text}", file=sys.stderr, flush=True)


def _lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its newline; a last one without it (a write cut off) as it is."""
    pieces = data.split(b"\n")
    last = pieces.pop()
    return [piece + b"\n" for piece in pieces] + ([last] if last else [])


@dataclass(frozen=True)
class _Parsed:
    """A manifest's lines: its header lines, then one entry per records line (a last one without its newline: cut off)."""

    header: int
    entries: list[bytes]
    starts: list[int]  # each entry's byte offset, to cut the manifest back to it

    def line_of(self, index: int) -> int:
        return self.header + index + 1


def _parse(data: bytes) -> _Parsed:
    lines, header, offset, starts = _lines(data), 0, 0, []
    while header < len(lines) and lines[header].startswith(b"#"):
        offset += len(lines[header])
        header += 1
    for line in lines[header:]:
        starts.append(offset)
        offset += len(line)
    return _Parsed(header, lines[header:], starts)


@dataclass(frozen=True)
class Check:
    """One records file against its manifest: how many lines match from the first, and why the next does not."""

    records: Path
    lines: int
    matched: int
    problem: str | None  # None: every line matches its hash
    manifest: bool = True  # False: there is no manifest to check against

    @property
    def ok(self) -> bool:
        return self.manifest and self.problem is None

    def text(self) -> str:
        """The line ``syw verify`` prints."""
        if not self.manifest:
            return f"NO MANIFEST {self.records}: nothing shows whether its {self.lines} lines were edited ({self.problem})"
        if self.problem is None:
            return f"OK {self.records} ({self.lines} line{'' if self.lines == 1 else 's'})"
        return f"MISMATCH {self.records}:{self.matched + 1}: {self.problem}"


def _compare(lines: list[bytes], parsed: _Parsed, name: str) -> tuple[int, str | None, bytes]:
    """How many lines from the first match their hashes, why the next does not (None: all do), and the last match's hash."""
    digest = b""
    for index, line in enumerate(lines):
        if index >= len(parsed.entries):
            return index, "not in the manifest: appended without its hash (by hand, or not by syw run)", digest
        entry, where = parsed.entries[index], f"{name}:{parsed.line_of(index)}"
        if not (entry.endswith(b"\n") and _HASH.fullmatch(entry[:-1])):
            return index, f"its hash ({where}) is no sha256 hash: the manifest was edited or cut off", digest
        following = hashlib.sha256(digest + line).digest()
        if following.hex().encode() != entry[:-1]:
            cut = "" if line.endswith(b"\n") else " (it is the last line, cut off mid-record: a write that did not finish)"
            return index, f"does not match its hash ({where}): changed since it was written{cut}", digest
        digest = following
    if len(parsed.entries) > len(lines):
        return len(lines), (f"missing: the manifest holds {len(parsed.entries)} hashes, the file {len(lines)} lines (records "
                            "removed, or a run stopped between a hash and its record: the same syw run command drops "
                            "that hash)"), digest
    return len(lines), None, digest


def _writing(records: Path) -> bool:
    """Whether a runner holds the records file's lock now (its appends may be half done): the lock file is only read."""
    try:
        fd = os.open(records.with_name(records.name + ".lock"), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def check(records: Path) -> Check:
    """``records`` against its manifest. The records are read before the manifest, which the writer extends first,
    so a run appending now shows at most hashes ahead of their records, which pass while it holds the lock."""
    data = read_snapshot(records) if records.exists() else b""
    lines, manifest = _lines(data), manifest_of(records)
    if not manifest.exists():
        return Check(records, len(lines), 0, f"no {manifest.name}: written before syw kept one, or by another tool",
                     manifest=False)
    parsed = _parse(manifest.read_bytes())
    matched, problem, _ = _compare(lines, parsed, manifest.name)
    in_flight = matched == len(lines) or (matched == len(lines) - 1 and not lines[-1].endswith(b"\n"))
    if problem and len(parsed.entries) > matched and in_flight and _writing(records):
        problem = None  # a runner's append in flight: its hash is written, its record not (or not whole) yet
    if not records.exists():
        problem = f"the records file is gone; {manifest.name} holds {len(parsed.entries)} hashes"
    return Check(records, len(lines), matched, problem)


def check_folder(folder: Path, *, recursive: bool = True) -> list[Check]:
    """Every records file under ``folder`` (``*.jsonl``, in subfolders too unless ``recursive`` is off; hidden
    folders skipped), and every manifest whose records file is gone, each against its manifest."""
    folder = Path(folder)
    found = folder.rglob if recursive else folder.glob
    paths = {p for p in found("*.jsonl")} | {p.with_name(p.name.removesuffix(SUFFIX)) for p in found(f"*.jsonl{SUFFIX}")}
    return [check(p) for p in sorted(paths) if not any(part.startswith(".") for part in p.relative_to(folder).parts)]


def require_verified(folder: Path, *, recursive: bool = True, allow: bool = False) -> None:
    """Refuse (:class:`Mismatch`) records under ``folder`` (or the records file ``folder``) that do not match their
    manifest, naming the first file and line; with ``allow`` (or :func:`allowed`) each is a warning instead. Files
    without a manifest warn once."""
    checks = [check(Path(folder))] if Path(folder).is_file() else check_folder(folder, recursive=recursive)
    for found in checks:
        if found.manifest and found.problem is not None:
            text = f"{found.records}:{found.matched + 1}: {found.problem}"
            if not (allow or allowed()):
                raise Mismatch(f"{text}; restore the records (git checkout); syw verify {folder} checks them all; {OVERRIDE}")
            _warn(f"{text}; read anyway (unverified)")
    bare = [str(c.records) for c in checks if not c.manifest]
    if bare:
        shown = ", ".join(bare[:3]) + (f" and {len(bare) - 3} more" if len(bare) > 3 else "")
        _warn(f"{len(bare)} records file{'s' if len(bare) > 1 else ''} without a manifest (*.jsonl{SUFFIX}), read "
              f"unverified: {shown} (syw run starts one at its next record)")


class Chain:
    """The end of a records file's manifest, for the writer that holds the records file's lock: checks the records
    against it (a run stopped between a hash and its record left that hash, which is dropped), then appends a hash
    per record, before the record."""

    def __init__(self, records: Path):
        self.records, self.path = Path(records), manifest_of(Path(records))
        lines = _lines(self.records.read_bytes()) if self.records.exists() else []
        self._undo: int | None = None  # the manifest's size before the last hash (-1: the manifest was made by it)
        self._adopt: list[bytes] | None = None  # a file without a manifest: its lines, hashed when the first is made
        self._before: tuple[bytes, list[bytes] | None] = (b"", None)  # what undo restores
        self._stuck = False  # a roll-back failed: a hash without its record ends the manifest
        if not os.path.lexists(self.path):
            self._adopt, self.digest = lines, _chain(lines)
            return
        parsed = _parse(self.path.read_bytes())
        matched, problem, self.digest = _compare(lines, parsed, self.path.name)
        stopped = matched == len(lines) and len(parsed.entries) == len(lines) + 1
        if problem and not stopped:
            if not allowed():
                raise Mismatch(f"{self.records}:{matched + 1}: {problem}; restore the records (git checkout), or move them "
                               f"and {self.path.name} aside, before running; SYW_ALLOW_UNVERIFIED=1 appends anyway")
            _warn(f"{self.records}:{matched + 1}: {problem}; appending anyway (SYW_ALLOW_UNVERIFIED)")
            entries = [e for e in parsed.entries if e.endswith(b"\n") and _HASH.fullmatch(e[:-1])]
            self.digest = bytes.fromhex(entries[-1][:-1].decode()) if entries else self.digest
            stopped = bool(parsed.entries) and not parsed.entries[-1].endswith(b"\n")  # a cut-off hash would join the next
        if stopped:
            self._cut(parsed.starts[-1])
            _warn(f"{self.path}:{parsed.line_of(len(parsed.entries) - 1)}: removed the last hash, whose record was never "
                  "written (its run stopped between the two)")

    def _cut(self, size: int) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_NOFOLLOW)
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)

    def add(self, line: bytes) -> None:
        """Append ``line``'s hash and force it to disk; on a failed write, roll the manifest back and raise OSError
        (its message says whether the roll-back worked)."""
        if self._stuck:  # appending after it would break the chain; the next run drops it
            raise OSError(errno.EIO, "the manifest ends with (part of) the hash of a record that was not written; run "
                          "the same command again", str(self.path))
        digest = hashlib.sha256(self.digest + line).digest()
        entry = digest.hex().encode() + b"\n"
        self._before = (self.digest, self._adopt)
        if self._adopt is not None:
            self._create(entry)
        else:
            self._append(entry)
        self.digest = digest

    def _create(self, entry: bytes) -> None:
        """The first hash of a records file without a manifest: the manifest written whole under another name, then
        renamed into place, so that a run stopped meanwhile leaves none."""
        when = date.today().isoformat()
        note = (f"begun {when} from the {len(self._adopt)} lines already there, which it attests only from then"
                if self._adopt else f"begun {when} with the records file")
        text = f"{HEADER}; {note}\n".encode() + b"".join(_entries(self._adopt)) + entry
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            try:
                _write(fd, text)
            finally:
                os.close(fd)
            os.rename(temporary, self.path)
            _sync_folder(self.path.parent)
        except OSError as err:
            for made in (temporary, self.path):
                made.unlink(missing_ok=True)
            raise OSError(err.errno, f"{err.strerror}; no manifest was made", str(self.path)) from err
        self._adopt, self._undo = None, -1

    def _append(self, entry: bytes) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        try:
            size = os.fstat(fd).st_size
            try:
                _write(fd, entry)
            except OSError as err:
                raise OSError(err.errno, f"{err.strerror}; {self._rolled_back(fd, size)}", str(self.path)) from err
        finally:
            os.close(fd)
        self._undo = size

    def _rolled_back(self, fd: int, size: int) -> str:
        """Cut the manifest open at ``fd`` back to ``size`` bytes, its last hash; what happened, in words."""
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
            return "the manifest was rolled back to its last hash"
        except OSError as err:
            self._stuck = True
            return f"rolling the manifest back failed too ({err.strerror}): the next run drops the partial hash"

    def undo(self) -> str:
        """Take back the last hash (its record could not be written): "" when done, else what happened, in words."""
        try:
            if self._undo == -1:
                self.path.unlink()
            else:
                self._cut(self._undo)
            self.digest, self._adopt = self._before
            return ""
        except OSError as err:
            self._stuck = True
            return f"its hash stays in {self.path.name} (rolling it back failed: {err.strerror}): the next run drops it; "


def _chain(lines: list[bytes]) -> bytes:
    """h_n of ``lines`` (b"" for none)."""
    digest = b""
    for line in lines:
        digest = hashlib.sha256(digest + line).digest()
    return digest


def _entries(lines: list[bytes]) -> Iterator[bytes]:
    digest = b""
    for line in lines:
        digest = hashlib.sha256(digest + line).digest()
        yield digest.hex().encode() + b"\n"


def _write(fd: int, data: bytes) -> None:
    """Write all of ``data`` (a short write goes on with the rest) and fsync."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if not written:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]
    os.fsync(fd)


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so that a file renamed into it stays there after a crash."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def start(records: Path, note: str) -> Path:
    """Write the manifest of an existing records file that has none, ``note`` in its header (when and from what it was
    made: it attests the lines only from then); an existing manifest is refused (FileExistsError)."""
    manifest = manifest_of(Path(records))
    lines = _lines(Path(records).read_bytes())
    fd = os.open(manifest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        _write(fd, f"{HEADER}; {note}\n".encode() + b"".join(_entries(lines)))
    finally:
        os.close(fd)
    return manifest
