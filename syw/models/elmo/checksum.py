"""The sha256 of a biLM's weights file: what each BCN trial records of the weights it read (docs/models.md §C)."""
from __future__ import annotations

import functools
import os
from pathlib import Path

from syw.core.errors import DataError
from syw.data.fetch import file_digest


def weights_sha256(weights_file: str | Path) -> str:
    """The sha256 of a weights file, checked against ``<file>.sha256`` beside it when there is one
    (:class:`DataError` on a mismatch: the weights changed since they were trained). Computed
    once per process for each version (path, size, mtime) of the file."""
    path = Path(weights_file)
    stat = os.stat(path)
    digest = _sha256(str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    recorded = path.with_name(path.name + ".sha256")
    if recorded.is_file():
        expected = recorded.read_text(encoding="utf-8").split(maxsplit=1)[0] if recorded.stat().st_size else ""
        if expected != digest:
            raise DataError(f"{path}: sha256 {digest}, but {recorded} says {expected or 'nothing'}; the weights "
                            "changed after they were written: train them again or restore them")
    return digest


@functools.lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    return file_digest(Path(path), "sha256")
