"""Layering of the interpreters: no import hidden in a function (the way a cycle
is dodged), no cycle between interp modules, and `pypto_mlir.numerics` a leaf."""

from __future__ import annotations

import ast
from pathlib import Path

import pypto_mlir

PACKAGE = Path(pypto_mlir.__file__).parent
INTERP = PACKAGE / "interp"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, whether the import is at module level) of a file."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [(name, id(node) in top) for name in [node.module, *names]]
        elif isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
    return found


def test_interp_modules_import_at_module_level() -> None:
    lazy = [
        f"{path.relative_to(PACKAGE.parent)} imports {name} inside a function"
        for path in sorted(INTERP.rglob("*.py"))
        for name, at_top in _imports(path)
        if not at_top and name.startswith("pypto_mlir")
    ]
    assert lazy == []


def test_interp_modules_have_no_import_cycle() -> None:
    modules = {_module_name(p): p for p in INTERP.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps = set()
        for imported, _ in _imports(path):
            # a submodule loads its own package's __init__ first: not a cycle
            own_package = (package + ".").startswith(imported + ".")
            if imported in modules and imported != name and not own_package:
                deps.add(imported)
        graph[name] = deps
    done: set[str] = set()

    def visit(name: str, stack: list[str]) -> None:
        assert name not in stack, "import cycle: " + " -> ".join([*stack, name])
        if name in done:
            return
        for dep in sorted(graph[name]):
            visit(dep, [*stack, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


def test_numerics_is_a_leaf() -> None:
    imported = [name for name, _ in _imports(PACKAGE / "numerics.py")]
    assert [name for name in imported if name.startswith("pypto_mlir")] == []
