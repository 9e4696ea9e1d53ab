"""The import structure of pypto_mlir: no import cycle, and the layering rules.

Every module of the packages pyproject.toml maps (`pypto_mlir` and the folders
`dialects/` and `passes/` it maps into it) is parsed with `ast`, and every import
counts: module-level, function-level and `if TYPE_CHECKING:` ones alike, so a cycle
cannot hide behind an import moved into a function. Run it alone with
`.venv/bin/pytest -q test/test_layering.py`.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _package_dirs() -> dict[str, Path]:
    """Package name -> folder, from pyproject.toml's `package-dir`."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    mapping = project["tool"]["setuptools"]["package-dir"]
    return {name: REPO / folder for name, folder in mapping.items()}


@cache
def modules() -> dict[str, Path]:
    """Every module of pypto_mlir by its import name."""
    found: dict[str, Path] = {}
    for package, folder in _package_dirs().items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _imported_names(name: str, path: Path) -> Iterator[str]:
    """The dotted names `name` imports (for `from a import b`: `a.b` and `a`)."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([base] if base else [])])
            for alias in node.names:
                yield f"{base}.{alias.name}"


def _owner(dotted: str) -> str | None:
    """The pypto_mlir module a dotted import name refers to (its longest prefix)."""
    known = modules()
    while dotted and dotted not in known:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module -> the pypto_mlir modules it imports (anywhere in its code)."""
    graph: dict[str, frozenset[str]] = {}
    for name, path in modules().items():
        targets = {_owner(d) for d in _imported_names(name, path)}
        graph[name] = frozenset(t for t in targets if t is not None and t != name)
    return graph


def import_cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(importer: str, imported: str) -> list[tuple[str, str]]:
    """(importer, imported) pairs where a module of `importer` imports `imported`."""
    graph = import_graph()
    return sorted(
        (a, b)
        for a, targets in graph.items()
        if _in(a, importer)
        for b in targets
        if _in(b, imported)
    )


def _describe(pairs: list[tuple[str, str]]) -> str:
    return "\n".join(f"  {a} imports {b}" for a, b in pairs)


def test_the_graph_sees_the_mapped_packages() -> None:
    names = modules()
    assert "pypto_mlir.sim.machine" in names
    assert "pypto_mlir.dialects.tile" in names
    assert "pypto_mlir.passes.tile_to_hw" in names
    # A function-level import is an edge too.
    assert "pypto_mlir.passes.tile_to_hw" in import_graph()["pypto_mlir.universe"]


def test_no_import_cycle() -> None:
    graph = import_graph()
    cycles = import_cycles(graph)
    lines = []
    for component in cycles:
        members = set(component)
        lines.append("cycle: " + ", ".join(component))
        lines += [
            f"  {a} imports {b}" for a in component for b in sorted(graph[a] & members)
        ]
    assert not cycles, "import cycles in pypto_mlir:\n" + "\n".join(lines)


LAYER_RULES = [
    pytest.param(
        "pypto_mlir.passes",
        "pypto_mlir.interp",
        "a pass must not depend on an interpreter (shared numerics go below both)",
        id="passes-interp",
    ),
    pytest.param(
        "pypto_mlir.interp.tile",
        "pypto_mlir.interp.ascend_hw",
        "the tile interpreter is below the hardware level's (shared parts go below both)",
        id="tile-interp-hw-interp",
    ),
    pytest.param(
        "pypto_mlir.sim",
        "pypto_mlir.dialects",
        "the simulator knows nothing about IR",
        id="sim-dialects",
    ),
    pytest.param(
        "pypto_mlir.targets",
        "pypto_mlir.dialects",
        "the dialects read the targets, not the other way round",
        id="targets-dialects",
    ),
    pytest.param(
        "pypto_mlir.dialects",
        "pypto_mlir.passes",
        "a dialect must not depend on a pass",
        id="dialects-passes",
    ),
]


@pytest.mark.parametrize("importer,imported,why", LAYER_RULES)
def test_layer_does_not_import(importer: str, imported: str, why: str) -> None:
    pairs = _violations(importer, imported)
    assert not pairs, f"{why}:\n{_describe(pairs)}"


def test_no_library_module_imports_the_cli() -> None:
    """cli/ is the command-line tools; the library they are built on is below it."""
    graph = import_graph()
    pairs = sorted(
        (a, b)
        for a, targets in graph.items()
        if not _in(a, "pypto_mlir.cli")
        for b in targets
        if _in(b, "pypto_mlir.cli")
    )
    assert not pairs, f"library modules import the cli:\n{_describe(pairs)}"


def test_the_simulator_imports_no_xdsl() -> None:
    """sim/ and what it imports of pypto_mlir (the target loader) run without xDSL."""
    seen: set[str] = set()
    todo = [m for m in modules() if _in(m, "pypto_mlir.sim")]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += import_graph()[module]
    users = sorted(
        module
        for module in seen
        if any(
            d == "xdsl" or d.startswith("xdsl.")
            for d in _imported_names(module, modules()[module])
        )
    )
    assert not users, "sim/ imports xDSL through: " + ", ".join(users)
