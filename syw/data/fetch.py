"""Fetching a data file and checking its checksum: what every reader's download shares
(:mod:`syw.data.download` for SST and the command, :mod:`syw.data.lm`, SQuAD, SciTail, GloVe)."""
from __future__ import annotations

import hashlib
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from syw.core.errors import DataError, DataMissingError

CHUNK = 1 << 20  # bytes read or copied at a time


def file_digest(path: Path, algorithm: str) -> str:
    """Hex digest of a file's bytes (``algorithm`` is e.g. "md5" or "sha256")."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check_digest(path: Path, expected: str, algorithm: str, source: str, name: Path | None = None) -> None:
    """Raise :class:`DataError` naming ``name`` (default ``path``) when ``path``'s digest is not ``expected``."""
    actual = file_digest(path, algorithm)
    if actual != expected:
        raise DataError(f"{name or path} (from {source}) has {algorithm} {actual}, expected {expected}; "
                        "the download is corrupt or the file changed upstream")


def promote(part: Path, dest: Path, checks: dict[str, str | None], source: str) -> None:
    """Move a finished ``part`` file to ``dest`` once its checksums match; delete it if one does not."""
    for algorithm, expected in checks.items():
        if expected is not None:
            try:
                _check_digest(part, expected, algorithm, source, name=dest)
            except DataError:
                part.unlink()
                raise
    part.replace(dest)


def fetch(url: str, dest: Path, *, sha256: str | None = None, md5: str | None = None,
          timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying a checksum when given.

    Raises :class:`DataMissingError` naming the URL and destination when the
    network is unavailable, and :class:`DataError` on a checksum mismatch.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(part, "wb") as out:
            shutil.copyfileobj(response, out, CHUNK)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
        part.unlink(missing_ok=True)
        raise DataMissingError(
            f"could not download {url} ({err}). On a machine with internet, fetch that URL "
            f"and place it at {dest} (or run `syw download` there and copy the "
            "result over).") from err
    promote(part, dest, {"sha256": sha256, "md5": md5}, url)
    return dest
