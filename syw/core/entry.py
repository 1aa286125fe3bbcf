"""What the command-line entry points share: one way from an error to its ``error:`` line and exit
status 2 (:func:`error_line`, used by :func:`run_main` and, inside Hydra apps, by :func:`exit_on`),
writing an output file, argument types."""
from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

Main = Callable[[Sequence[str] | None], int]

BAD_INPUT: tuple[type[Exception], ...] = (ValueError, OSError)
"""What bad input raises: the suite's errors (:mod:`syw.core.errors`: ``DataError`` and ``ConfigError``
are ValueErrors, ``DataMissingError`` a FileNotFoundError) and the ValueError or OSError of a
malformed, missing or unwritable file; anything else is a bug and keeps its traceback."""

EXIT_BAD_INPUT = 2
EXIT_BROKEN_PIPE = 141  # as a shell reports a process ended by SIGPIPE (128 + 13)


class MissingExtra(ModuleNotFoundError):
    """A command of the full suite run on the light install: the message names the extra to install."""


def error_line(err: BaseException) -> str:
    """The one line bad input ends with: ``error: <message>``, where the suite's errors and a
    ``ValueError`` name the file (and line or key) in their message, and an ``OSError`` names it in
    ``filename`` (``error: <file>: <reason>``)."""
    if isinstance(err, OSError) and err.filename is not None:
        return f"error: {err.filename}: {err.strerror or err}"
    if isinstance(err, OSError) and err.errno is not None:
        return f"error: {err.strerror}"  # a raw OS error without a file: its reason, without "[Errno n]"
    return f"error: {err}"


def run_main(main: Main, argv: Sequence[str] | None = None) -> int:
    """Run a command's ``main(argv)``: its exit status, or for bad input (:data:`BAD_INPUT`, or a
    missing extra) its :func:`error_line` on stderr and exit status 2. Every other exception, and
    ``KeyboardInterrupt`` and ``SystemExit`` (argparse's own exit 2), pass through."""
    try:
        return main(None if argv is None else list(argv))
    except BrokenPipeError:  # the reader stopped reading (`syw ... | head`): not bad input, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's flush at exit must not fail again
        return EXIT_BROKEN_PIPE
    except (*BAD_INPUT, MissingExtra) as err:
        print(error_line(err), file=sys.stderr)
        return EXIT_BAD_INPUT


@contextmanager
def exit_on(*errors: type[BaseException]) -> Iterator[None]:
    """For a Hydra app, whose main takes no ``argv`` (so :func:`run_main` cannot call it): ``errors``
    raised in the block end the process with their :func:`error_line` and exit status 2."""
    try:
        yield
    except errors as err:
        print(error_line(err), file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT) from None


@contextmanager
def naming(path: Path | str) -> Iterator[None]:
    """An operating-system error raised in the block without a file name (a full disk while copying,
    say) gets ``path`` as its file, so that its error line still says where."""
    try:
        yield
    except OSError as err:
        if err.filename is None and err.errno is not None:
            err.filename = str(path)
        raise


class Parser(argparse.ArgumentParser):
    """argparse's parser whose bad option value (or unknown option, or missing argument) is the one line of
    bad input, ``error: <prog>: <message> (<prog> --help for usage)`` with exit status 2, instead of the
    whole usage block before argparse's own error line. Its subparsers are Parsers too."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message} ({self.prog} --help for usage)\n")


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (a budget)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a budget: it must be at least 1")
    return value


def check_writable(path: Path, what: str) -> None:
    """Refuse an output whose folder does not exist before any work is done, with the error line
    ``error: <path>: cannot write the <what>: the folder <folder> does not exist``."""
    if not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"cannot write the {what}: the folder {path.parent} does not exist", str(path))


def write_output(path: Path, write: Callable[[Path], object], what: str) -> None:
    """``write(path)``, then print ``wrote <path>``; on an OSError raise one whose error line is
    ``error: <path>: cannot write the <what>: <reason>``."""
    check_writable(path, what)
    try:
        write(path)
    except OSError as err:  # e.g. a read-only folder
        raise OSError(err.errno, f"cannot write the {what}: {err.strerror or err}", str(path)) from err
    print(f"wrote {path}")
