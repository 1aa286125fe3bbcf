"""Where the suite's files are: its configs, and the folder results and figures go to by default."""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
# A checkout: conf/ and the subpackages stand beside syw/; an installed wheel: conf/ is inside syw/.
CHECKOUT: Path | None = _PACKAGE.parent if (_PACKAGE.parent / "conf" / "study").is_dir() else None
CONF_DIR = (CHECKOUT or _PACKAGE) / "conf"
# The repository root in a checkout; installed, the folder the command runs in (results/, figures/ go there).
REPO = CHECKOUT or Path.cwd()
