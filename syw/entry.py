"""What the command-line entry points share: one way from an error to its ``error:`` line and exit
status 2 (:func:`run_main`), writing an output file, argument types."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from syw.errors import ConfigError, DataError, DataMissingError

Main = Callable[[Sequence[str] | None], int]


def run_main(main: Main, argv: Sequence[str] | None = None) -> int:
    """Run a command's ``main(argv)``. Bad input (a missing, malformed or unwritable file, a bad
    setting) is one ``error: <file>: ...`` line on stderr and exit status 2: the suite's errors and
    the ``ValueError``/``OSError`` of bad input name the file (and line or key) in their message."""
    try:
        return main(None if argv is None else list(argv))
    except (DataMissingError, DataError, ConfigError, FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
    except OSError as err:  # e.g. a folder that cannot be created or a file that may not be read
        print(f"error: {err.filename or ''}: {err.strerror or err}", file=sys.stderr)
    return 2


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (a budget)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a budget: it must be at least 1")
    return value


def write_output(path: Path, write: Callable[[Path], object], what: str) -> bool:
    """``write(path)``; on an OSError print ``error: <path>: cannot write the <what>: <reason>`` and
    return False (the caller exits 2), else print ``wrote <path>`` and return True."""
    try:
        write(path)
    except OSError as err:  # e.g. an --out into a folder that does not exist
        reason = "the folder does not exist" if not path.parent.is_dir() else (err.strerror or str(err))
        print(f"error: {path}: cannot write the {what}: {reason}", file=sys.stderr)
        return False
    print(f"wrote {path}")
    return True
