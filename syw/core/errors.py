"""The suite's errors: what a command reports as one ``error:`` line and exit status 2
(:func:`syw.core.entry.run_main`). Every layer raises them; this module imports nothing of the suite."""
from __future__ import annotations

from pathlib import Path


class DataMissingError(FileNotFoundError):
    """A data file is absent and could not be downloaded."""


class DataError(ValueError):
    """A data file exists but is malformed, truncated, empty or has the wrong checksum.

    The message names the file and, where there is one, the line (``<file>:<line>: ...``).
    The runner stops a study on it, as on :class:`DataMissingError`: no trial is at fault.
    """


class ConfigError(ValueError):
    """A search-space or study file that cannot be run; the message names the file and the key."""

    def __init__(self, path: Path | str, key: str, problem: str):
        self.path, self.key, self.problem = Path(path), key, problem
        super().__init__(f"{path}: {key}: {problem}")
