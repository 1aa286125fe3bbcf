"""Read a training function's module without running it.

The driver checks every family before Ray starts, but importing a model's module would make it
pay for that model's libraries (about a second for scikit-learn or torch), which only the trial
workers need. So the checks read the module's source: whether the function is defined there, and
the ``SETTINGS`` it declares (a literal dict, optionally unpacking literal dicts of other suite
modules, e.g. ``{**TRAINING_SETTINGS, "dropout": {...}}``).
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path
from typing import Any


def module_file(module: str) -> Path | None:
    """The ``.py`` file of ``module``, found without running it; None when there is none here."""
    try:
        spec = importlib.util.find_spec(module) if module else None
    except (ImportError, ValueError):  # a parent package that is not installed here
        return None
    return Path(spec.origin) if spec and (spec.origin or "").endswith(".py") else None


def _module_tree(module: str) -> ast.Module | None:
    path = module_file(module)
    try:
        return ast.parse(path.read_bytes()) if path else None
    except (SyntaxError, ValueError, OSError):
        return None


def defined_in_source(target: str) -> bool:
    """Whether ``package.module.name`` is a top-level def, class, assignment or import in the
    module's source file, read without running the module."""
    module, _, name = target.rpartition(".")
    tree = _module_tree(module)
    names: set[str] = set()
    for node in tree.body if tree else []:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(assigned.id for assigned in node.targets if isinstance(assigned, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return name in names


class NotLiteral(ValueError):
    """The declaration is not a literal the source reader can evaluate."""


def _literal_in(module: str, name: str, depth: int = 0) -> Any:
    """The value of a top-level ``name = <literal>`` of ``module`` (following ``from x import name``)."""
    tree = _module_tree(module)
    if tree is None or depth > 5:
        raise NotLiteral(f"{module}.{name}")
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return _evaluate(node.value, module, depth)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name and node.value:
            return _evaluate(node.value, module, depth)
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _literal_in(node.module, alias.name, depth + 1)
    raise NotLiteral(f"{module}.{name}")


def _evaluate(node: ast.expr, module: str, depth: int) -> Any:
    if isinstance(node, ast.Dict):
        out: dict = {}
        for key, value in zip(node.keys, node.values):
            if key is None:  # {**OTHER, ...}
                if not isinstance(value, ast.Name):
                    raise NotLiteral(ast.dump(value))
                out.update(_literal_in(module, value.id, depth + 1))
            else:
                out[_evaluate(key, module, depth)] = _evaluate(value, module, depth)
        return out
    if isinstance(node, ast.Name):
        return _literal_in(module, node.id, depth + 1)
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise NotLiteral(ast.dump(node)) from None


def declared_settings(target: str) -> dict[str, dict[str, Any]] | None:
    """The ``SETTINGS`` declared beside the training function ``target``, or None if there are none.

    Read from the source when it is a literal; imported otherwise.
    """
    module = target.rpartition(".")[0]
    try:
        return _literal_in(module, "SETTINGS")
    except NotLiteral:
        pass
    return getattr(importlib.import_module(module), "SETTINGS", None)
