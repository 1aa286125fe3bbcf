"""Where the suite's files are: its configs, and the folder results and figures go to by default."""
from __future__ import annotations

from pathlib import Path

from syw.core.errors import DataError

PACKAGE = Path(__file__).resolve().parent.parent
CONF_DIR = PACKAGE / "conf"
# A checkout: the repository root holds pyproject.toml beside syw/ (and results/, the user's folders).
CHECKOUT: Path | None = PACKAGE.parent if (PACKAGE.parent / "pyproject.toml").is_file() else None
# The repository root in a checkout; installed, the folder the command runs in (results/, figures/ go there).
REPO = CHECKOUT or Path.cwd()


def in_checkout(relative: str, command: str, flag: str = "--out") -> Path:
    """``relative`` in the checkout, a file of the suite's own (``docs/verdicts.md``); installed, there is none, and
    the command writes nowhere it was not told: a :class:`syw.core.errors.DataError` naming ``flag``."""
    if CHECKOUT is None:
        raise DataError(f"syw {command}: {relative} belongs to a checkout of the suite and this is an installed copy; "
                        f"pass {flag} PATH to say where to write")
    return CHECKOUT / relative
