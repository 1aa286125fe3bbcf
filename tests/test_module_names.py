"""A module's dotted name is its file's path (docs/architecture.md), and every name the suite tells a
user or a reader (a family file's ``_target_``, an error message's hint, a docstring's reference, a doc)
imports."""
from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
from pathlib import Path

import pytest
import tomllib
import yaml

from syw.core.paths import REPO

NAME = re.compile(r"(?<![\w./-])syw(?:\.(?:core|data|models|analysis|experiments|figures|cli|conf)(?:\.[A-Za-z_]\w*)*)")


def tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [REPO / p for p in out.split() if (REPO / p).is_file() and not (REPO / p).is_symlink()]


def module_files() -> list[Path]:
    return sorted(p for p in (REPO / "syw").rglob("*.py"))


def dotted(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("path", module_files(), ids=lambda p: dotted(p))
def test_a_modules_name_is_its_path(path):
    spec = importlib.util.find_spec(dotted(path))
    assert spec is not None and Path(spec.origin).resolve() == path.resolve()


def test_no_package_path_is_extended_or_mapped():
    assert [p for p in module_files() if "__path__" in p.read_text()] == []
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "package-dir" not in setuptools


def resolves(name: str) -> bool:
    """``name`` is a module, or an attribute (a function, a class, a constant) of the longest module it starts with."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module) is None:
                continue
        except ModuleNotFoundError:
            continue
        obj = importlib.import_module(module)
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def targets() -> list[tuple[str, str]]:
    found = []
    for path in tracked("syw/conf/*.yaml", "syw/conf/**/*.yaml"):
        def walk(node, where=path.relative_to(REPO).as_posix()):
            if isinstance(node, dict):
                if isinstance(node.get("_target_"), str):
                    found.append((where, node["_target_"]))
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)
        walk(yaml.safe_load(path.read_text()))
    return found


def test_every_target_imports():
    found = targets()
    assert len(found) >= 10
    assert [(where, t) for where, t in found if not resolves(t)] == []


def names_in_text() -> dict[str, str]:
    """Every ``syw.<layer>...`` name in the suite's code, benchmarks, docs and READMEs, with a place it stands."""
    names: dict[str, str] = {}
    for path in tracked("*.py", "*.md", "*.yaml", "Makefile"):
        top = path.relative_to(REPO).parts[0]
        if top == "tests" or (top == "results" and path.suffix != ".md"):  # tests name wrong modules on purpose
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in NAME.finditer(line):
                names.setdefault(match.group(0).rstrip("."), f"{path.relative_to(REPO)}:{number}")
    return names


def test_every_name_in_code_and_docs_imports():
    names = names_in_text()
    assert "syw.models.cnn.train" in names and len(names) > 100
    assert {name: where for name, where in names.items() if not resolves(name)} == {}


def test_the_check_can_fail():
    assert not resolves("syw.models.cnn.trian") and not resolves("syw.experiments.settings")
    assert resolves("syw.core.records") and resolves("syw.analysis.expected_max.expected_max")
