"""A file's bytes read once per process while it stays the same: a figure's checks (``check_complete``), the
manifest's (``syw.core.manifest``) and the readers of a records file share one read."""
from __future__ import annotations

import os
from pathlib import Path

_SNAPSHOTS: dict[tuple, bytes] = {}  # one file's bytes per (file, size, mtime): read once however many readers
_SNAPSHOT_LIMIT = 256 << 20  # bytes this process keeps at most; past it the oldest are dropped


def read_snapshot(path: Path) -> bytes:
    """The bytes of ``path``, read once per process while its size and modification time stay the same: a figure's
    checks, manifest and readers all read one records file, and a file that grows is read anew."""
    info = os.stat(path)
    key = (os.path.abspath(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in _SNAPSHOTS:
        with open(path, "rb") as handle:
            data = handle.read()
        if len(data) != info.st_size:  # written to while read: hand it out, keep nothing
            return data
        while _SNAPSHOTS and sum(map(len, _SNAPSHOTS.values())) + len(data) > _SNAPSHOT_LIMIT:
            _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)))
        _SNAPSHOTS[key] = data
    return _SNAPSHOTS[key]


def snapshot_lines(path: Path) -> list[bytes]:
    """The lines of :func:`read_snapshot`, each with its newline (the last may lack one), as reading the file gives them."""
    data = read_snapshot(path)
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]
