"""Numbered lines of a UTF-8 text file, what the line-based readers share (GloVe, SciTail): a byte
that is not UTF-8 is a :class:`DataError` naming the file and the line."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from syw.core.errors import DataError


def utf8_lines(stream: Iterable[bytes], source: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number from 1, text without its line break)`` of each line of ``stream``, blank ones too."""
    for number, raw in enumerate(stream, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DataError(f"{source}:{number}: not UTF-8 text ({err.reason} at byte {err.start})") from None
        yield number, text.rstrip("\r\n")
