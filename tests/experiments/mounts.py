"""Read-only folders and small file systems for the fault tests: mounts made in a mount namespace of the
runner's own (``unshare``), so that they are gone when it ends, whatever happens to the test."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest


def can_unshare() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode == 0


needs_mounts = pytest.mark.skipif(not can_unshare(), reason="needs root and unshare for read-only and tiny mounts")


def in_namespace(setup: str, command: list[str]) -> list[str]:
    """``command`` run after the shell lines ``setup`` in a mount namespace of its own."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", f'{setup}\nexec "$@"', "sh", *command]


def read_only(folder: Path) -> str:
    """The shell lines that make ``folder`` read-only (in the namespace they run in)."""
    return f"mount --bind {folder} {folder}\nmount -o remount,bind,ro {folder}"
