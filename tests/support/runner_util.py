"""Helpers to run `syw run` in a subprocess from the tests."""
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def runner_env(**extra: str) -> dict:
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "PYTHONUNBUFFERED": "1", **extra}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run(*overrides: str, timeout: float = 300, **popen) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "syw", "run", *overrides],
        cwd=REPO, env=popen.pop("env", runner_env()), capture_output=True, text=True, timeout=timeout, **popen,
    )


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@contextlib.contextmanager
def importable_package(root: Path, name: str, modules: dict[str, str]):
    """A package ``name`` of ``modules`` (module name -> source) under ``root``, importable while open."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module, source in modules.items():
        (package / f"{module}.py").write_text(source)
    sys.path.insert(0, str(root))
    try:
        yield package
    finally:
        sys.path.remove(str(root))
