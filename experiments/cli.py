"""What the command-line entry points share: writing an output file, or one error line saying why not."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable


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
