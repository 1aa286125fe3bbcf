"""The light install (``pip install show-your-work``) simulated in a child process: the full suite's
dependencies cannot be imported there (docs/architecture.md, "The light install and the full suite")."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from syw.core.paths import REPO

SUITE_ONLY = ("torch", "ray", "hydra", "omegaconf", "spacy", "sklearn", "optuna", "h5py", "pyarrow")
# Run before anything else in the child: the full suite's dependencies cannot be imported.
BLOCK = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
         f"        if name.split('.')[0] in {SUITE_ONLY!r}:\n"
         "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
         "sys.meta_path.insert(0, Block())\n")


def run_light(code: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python with only the light install's dependencies importable; the
    checkout's ``syw`` on the path."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-c", BLOCK + code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
