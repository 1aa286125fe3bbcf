"""Where the suite's files are: its configs, and the folder results and figures go to by default."""
from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
CONF_DIR = PACKAGE / "conf"
# A checkout: the repository root holds pyproject.toml beside syw/ (and results/, the user's folders).
CHECKOUT: Path | None = PACKAGE.parent if (PACKAGE.parent / "pyproject.toml").is_file() else None
# The repository root in a checkout; installed, the folder the command runs in (results/, figures/ go there).
REPO = CHECKOUT or Path.cwd()
