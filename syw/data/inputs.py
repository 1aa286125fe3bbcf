"""Which data and weight files a trial read, for its record's ``inputs_sha256``.

A reader calls :func:`note_input` with the name a record gives the file (its path under the data
folder, e.g. ``sst/train.txt``) and the path it opened. The runner wraps each trial in
:func:`recording` and, after timing it, writes :func:`sha256_of` what was noted into the record.
A file's sha256 is computed once per process and file version (path, size, modification time),
not once per trial.

A loader that caches its result per process (a cache hit opens no file) is wrapped in
:func:`cache_noting_inputs`: every call, hit or not, notes the files its first call read.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from syw.data.fetch import file_digest

F = TypeVar("F", bound=Callable[..., Any])

_DIGESTS: dict[tuple[str, int, int], str] = {}
_RECORDINGS: list[dict[str, str]] = []  # the open recordings (name -> real path), innermost last


def sha256_once(path: str | Path) -> str:
    """sha256 of ``path``'s bytes, computed once per process for each (path, size, mtime)."""
    resolved = os.path.realpath(path)
    stat = os.stat(resolved)
    key = (resolved, stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = file_digest(Path(resolved), "sha256")
    return _DIGESTS[key]


def sha256_of(read: Mapping[str, str]) -> dict[str, str]:
    """Name -> sha256 of the files in a :func:`recording` (a file gone since: why, instead)."""
    digests = {}
    for name, path in read.items():
        try:
            digests[name] = sha256_once(path)
        except OSError as err:
            digests[name] = f"unreadable after the trial: {err.strerror}"
    return digests


def input_name(path: str | Path, data_dir: str | Path) -> str:
    """How a record names ``path``: relative to the data folder when under it, else as given."""
    try:
        return Path(path).resolve().relative_to(Path(data_dir).resolve()).as_posix()
    except ValueError:
        return str(path)


def _add(read: Mapping[str, str]) -> None:
    for seen in _RECORDINGS:
        seen.update(read)


def note_input(name: str, path: str | Path) -> None:
    """Tell the open recordings (if any) that ``path``, named ``name`` in records, was read."""
    _add({name: os.path.realpath(path)})


@contextmanager
def recording() -> Iterator[dict[str, str]]:
    """The files noted while the block runs (name -> path), filled in as they are noted."""
    seen: dict[str, str] = {}
    _RECORDINGS.append(seen)
    try:
        yield seen
    finally:
        del _RECORDINGS[next(i for i, open_ in enumerate(_RECORDINGS) if open_ is seen)]  # by identity: equal dicts differ


def cache_noting_inputs(maxsize: int) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)`` whose every call notes the files the first call read."""
    def wrap(function: F) -> F:
        @functools.lru_cache(maxsize=maxsize)
        def computed(*args: Any, **kwargs: Any) -> tuple[Any, dict[str, str]]:
            with recording() as seen:
                result = function(*args, **kwargs)
            return result, dict(seen)

        @functools.wraps(function)
        def cached(*args: Any, **kwargs: Any) -> Any:
            result, seen = computed(*args, **kwargs)
            _add(seen)
            return result

        cached.cache_info, cached.cache_clear = computed.cache_info, computed.cache_clear  # type: ignore[attr-defined]
        return cached  # type: ignore[return-value]

    return wrap
