"""Which data and weight files a trial read, and which version of each, for its record's ``inputs_sha256``.

A reader calls :func:`note_input` with the name a record gives the file (its path under the data
folder, e.g. ``sst/train.txt``) and the path it opens, before it reads it: the note keeps the
file's version (size, times, inode, and its sha256, computed once per process and version). The
runner wraps each trial in :func:`recording` and, after timing it, writes :func:`sha256_of` what
was noted into the record; a file that is no longer the version noted (changed or gone since) is a
:class:`DataError` or :class:`DataMissingError` instead, which stops the study: the record would
name bytes its trial did not read.

A loader that caches its result per process (a cache hit opens no file) is wrapped in
:func:`cache_noting_inputs`: every call, hit or not, notes the versions its first call read, once
it has checked that each file is still that version (else every such cache is dropped and the call raises).
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from syw.core.errors import DataError, DataMissingError
from syw.data.fetch import file_digest

F = TypeVar("F", bound=Callable[..., Any])

Identity = tuple[int, int, int, int, int]  # size, modification and change times (ns), inode, device


@dataclass(frozen=True)
class Version:
    """A file as a reader found it: its real path, identity on disk and sha256 (both None: not there)."""

    path: str
    identity: Identity | None
    sha256: str | None


class Seen(dict):
    """What a :func:`recording` saw: name -> real path, and in ``versions`` name -> :class:`Version`."""

    def __init__(self) -> None:
        super().__init__()
        self.versions: dict[str, Version] = {}


_DIGESTS: dict[tuple[str, Identity], str] = {}
_RECORDINGS: list[Seen] = []  # the open recordings, innermost last
_CACHES: list[Any] = []  # every cache_noting_inputs cache: loaders nest, and an inner one holds the changed file too


def _identity(path: str) -> Identity | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev


def _digest(path: str, identity: Identity) -> str:
    if (path, identity) not in _DIGESTS:
        _DIGESTS[(path, identity)] = file_digest(Path(path), "sha256")
    return _DIGESTS[(path, identity)]


def version_of(path: str | Path) -> Version:
    """``path``'s version now: a file that changes while its sha256 is taken is a :class:`DataError`."""
    resolved = os.path.realpath(path)
    before = _identity(resolved)
    if before is None:
        return Version(resolved, None, None)
    digest = _digest(resolved, before)
    if _identity(resolved) != before:
        raise DataError(f"{resolved}: changed while it was being read; run the study once the file is complete")
    return Version(resolved, before, digest)


def still(name: str, version: Version) -> str:
    """The sha256 of ``version``, when the file is still that version; else why not, raised."""
    if version.identity is None:
        raise DataMissingError(f"{version.path}: not there when it was read (as {name})")
    now = _identity(version.path)
    if now is None:
        raise DataMissingError(f"{version.path}: gone since this study read it (as {name}); put it back and run the same command")
    if now != version.identity and (digest := _digest(version.path, now)) != version.sha256:
        raise DataError(f"{version.path}: changed since this study read it (sha256 {version.sha256} then, {digest} now); "
                        "a record names the file its trial read: put the file back, or run the study in a new paths.results_dir")
    return str(version.sha256)


def sha256_of(read: Seen) -> dict[str, str]:
    """Name -> sha256 of the files in a :func:`recording`, each checked to be still the version noted."""
    return {name: still(name, version) for name, version in read.versions.items()}


def input_name(path: str | Path, data_dir: str | Path) -> str:
    """How a record names ``path``: relative to the data folder when under it, else as given."""
    try:
        return Path(path).resolve().relative_to(Path(data_dir).resolve()).as_posix()
    except ValueError:
        return str(path)


def _add(versions: dict[str, Version]) -> None:
    for seen in _RECORDINGS:
        seen.versions.update(versions)
        seen.update({name: version.path for name, version in versions.items()})


def note_input(name: str, path: str | Path) -> None:
    """Tell the open recordings (if any) that ``path``, named ``name`` in records, is read: call it before
    reading, so that the version noted is the one read."""
    _add({name: version_of(path)})


@contextmanager
def recording() -> Iterator[Seen]:
    """The files noted while the block runs, filled in as they are noted."""
    seen = Seen()
    _RECORDINGS.append(seen)
    try:
        yield seen
    finally:
        del _RECORDINGS[next(i for i, open_ in enumerate(_RECORDINGS) if open_ is seen)]  # by identity: equal dicts differ


def cache_noting_inputs(maxsize: int) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)`` whose every call notes the versions the first call read, each checked
    to be the file's version still (a changed file: every such cache is dropped and the call raises)."""
    def wrap(function: F) -> F:
        @functools.lru_cache(maxsize=maxsize)
        def computed(*args: Any, **kwargs: Any) -> tuple[Any, dict[str, Version]]:
            with recording() as seen:
                result = function(*args, **kwargs)
            return result, dict(seen.versions)

        @functools.wraps(function)
        def cached(*args: Any, **kwargs: Any) -> Any:
            result, versions = computed(*args, **kwargs)
            try:
                for name, version in versions.items():
                    still(name, version)
            except (DataError, DataMissingError):
                for cache in _CACHES:  # a later call reads the files as they are
                    cache.cache_clear()
                raise
            _add(versions)
            return result

        cached.cache_info, cached.cache_clear = computed.cache_info, computed.cache_clear  # type: ignore[attr-defined]
        _CACHES.append(computed)
        return cached  # type: ignore[return-value]

    return wrap
