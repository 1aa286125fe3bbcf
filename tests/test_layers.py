"""The suite's layers (docs/architecture.md): each imports only from those below it, with no cycle.

    syw.core -> syw.data, syw.analysis -> syw.curve, syw.models -> syw.experiments -> syw.figures -> syw.pages -> syw.cli

``syw.curve`` (the light tool, ``syw curve``) stands on core and analysis only; the suite's figures use it.

Every import counts, those inside functions too (they run as surely, only later); an import under
``if TYPE_CHECKING:`` is for the type checker only and is left out.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from syw.core.paths import REPO

LAYERS = {"core": 0, "data": 1, "analysis": 1, "curve": 2, "models": 2, "experiments": 3, "figures": 4, "pages": 5, "command": 6}
PACKAGES = ("data", "analysis", "curve", "models", "experiments", "figures", "pages")
COMMAND = {"syw.cli", "syw.__main__"}  # the top layer: syw/cli.py and python -m syw


def module_name(path: Path) -> str:
    """A module's dotted name is its file's path from the repository root."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    if module in COMMAND:
        return "command"
    top = module.split(".")[1]
    assert top in (*PACKAGES, "core"), f"{module}: not in a layer's folder"
    return top


def suite_files() -> list[Path]:
    return sorted(p for p in (REPO / "syw").rglob("*.py") if p.parent != REPO / "syw" or p.stem in ("cli", "__main__"))


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path) -> set[str]:
    """The suite modules ``path`` imports (``syw.x.y``; ``from syw.x import y`` names syw.x.y when y is a module)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("syw"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("syw"):
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in MODULES else node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return {m for m in found if m in MODULES}


MODULES = {module_name(p) for p in suite_files()} | {"syw"}
GRAPH = {module_name(p): imports(p) for p in suite_files()}


def test_every_suite_folder_is_a_layer():
    assert {layer(m) for m in GRAPH} == set(LAYERS)
    assert len(GRAPH) > 100  # every module of the suite is read


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_only_from_lower_layers(module):
    """A layer imports from itself (its own package) and from layers below; peers (data, analysis)
    do not import each other."""
    mine = layer(module)
    wrong = sorted(m for m in GRAPH[module] if LAYERS[layer(m)] > LAYERS[mine]
                   or (layer(m) != mine and LAYERS[layer(m)] == LAYERS[mine]))
    assert not wrong, f"{module} ({mine}) imports {wrong}"


def test_no_import_cycle():
    """Tarjan's strongly connected components of the module graph: every one a single module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            connect(v)
    assert not cycles, cycles


def test_the_checker_sees_a_wrong_import(tmp_path, monkeypatch):
    """An analysis module importing the runner is caught (the check can fail)."""
    bad = REPO / "syw" / "analysis" / "curves.py"
    monkeypatch.setitem(GRAPH, "syw.analysis.curves", imports(bad) | {"syw.experiments.run"})
    with pytest.raises(AssertionError, match="imports .*syw.experiments.run"):
        test_imports_only_from_lower_layers("syw.analysis.curves")
    monkeypatch.setitem(GRAPH, "syw.curve.style", GRAPH["syw.curve.style"] | {"syw.curve.figure"})
    with pytest.raises(AssertionError, match="syw.curve.figure"):
        test_no_import_cycle()


LIGHT_FORBIDDEN = ("syw.figures", "syw.experiments", "syw.models", "syw.data")


def _named_imports(path: Path) -> set[str]:
    """Every module an import statement of ``path`` names, TYPE_CHECKING blocks included (a static check)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("path", sorted((REPO / "syw" / "curve").rglob("*.py")), ids=lambda p: p.name)
def test_the_light_tool_names_nothing_of_the_suite(path):
    """Issue 72: no import statement of ``syw.curve`` names figures, experiments, models or data."""
    wrong = sorted(n for n in _named_imports(path) if n.startswith(LIGHT_FORBIDDEN) or n in {"syw.figures", "syw.experiments"})
    assert not wrong, f"{path.relative_to(REPO)} imports {wrong}"


def test_figures_holds_no_module_syw_curve_imports():
    """What ``syw curve``'s command reaches, at any depth, lies outside ``syw.figures``."""
    seen, todo = set(), ["syw.curve.command", "syw.curve.figure", "syw.curve.style"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(GRAPH.get(module, ()))
    assert len(seen) > 20 and not [m for m in seen if m.startswith("syw.figures")]
