"""The generated reference pages (pypto_mlir/docgen.py) cover the code.

Runs the generator in-process, without mkdocs: every op of every dialect and
every registered pass has its section, and every link between the generated
pages reaches an anchor that exists. `make docs` checks the guides' links.
"""

import importlib
import posixpath
import re
from pathlib import Path

import pytest
from xdsl.ir import Dialect
from xdsl.irdl import AnyAttr

from pypto_mlir import sim
from pypto_mlir.docgen import (
    PASSES_PAGE,
    code,
    constraint_text,
    dialect_page_path,
    lowering_brief,
    lowering_lines,
    lowering_of,
    lowering_tables,
    reference_context,
    reference_pages,
    table_cell,
)
from pypto_mlir.universe import PYPTO_UNIVERSE

DIALECTS: dict[str, Dialect] = {
    name: factory() for name, factory in PYPTO_UNIVERSE.all_dialects.items()
}


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return reference_pages()


def _op_section(page: str, op_name: str) -> str:
    start = page.index(f"{{#{op_name}}}")
    end = page.find("\n### ", start)
    return page[start : end if end != -1 else len(page)]


@pytest.mark.parametrize("dialect_name", sorted(DIALECTS))
def test_every_op_has_a_section(pages: dict[str, str], dialect_name: str) -> None:
    dialect = DIALECTS[dialect_name]
    page = pages.get(dialect_page_path(dialect))
    assert page is not None, f"no reference page for dialect {dialect_name}"
    missing = [op.name for op in dialect.operations if f"{{#{op.name}}}" not in page]
    assert not missing, f"ops missing from {dialect_page_path(dialect)}: {missing}"


@pytest.mark.parametrize("dialect_name", sorted(DIALECTS))
def test_every_op_names_its_interpreter(
    pages: dict[str, str], dialect_name: str
) -> None:
    """The impl tables were found: an op whose section says no interpreter is
    either unimplemented or registered in a way docgen cannot see."""
    dialect = DIALECTS[dialect_name]
    page = pages[dialect_page_path(dialect)]
    without = [
        op.name
        for op in dialect.operations
        if "- **Interpreter:** none" in _op_section(page, op.name)
    ]
    assert not without, f"ops without an interpreter in the reference: {without}"


def test_lowered_dialects_name_their_pass(pages: dict[str, str]) -> None:
    """tv ops are lowered by tv-to-tile, tile ops by tile-to-hw (found by the
    `<dialect>-to-` naming convention, not listed in docgen)."""
    for dialect_name, pass_name in (("tv", "tv-to-tile"), ("tile", "tile-to-hw")):
        dialect = DIALECTS[dialect_name]
        page = pages[dialect_page_path(dialect)]
        for op in dialect.operations:
            lowering = _op_section(page, op.name).split("- **Lowering:** ", 1)[1]
            assert lowering.startswith(f"[`{pass_name}`]"), (op.name, lowering)


def test_every_pass_has_a_section(pages: dict[str, str]) -> None:
    page = pages[PASSES_PAGE]
    missing = [
        name
        for name in PYPTO_UNIVERSE.all_passes
        if f"## `{name}` {{#{name}}}" not in page
    ]
    assert not missing, f"passes missing from {PASSES_PAGE}: {missing}"


def test_pass_options_show_types_and_defaults(pages: dict[str, str]) -> None:
    page = pages[PASSES_PAGE]
    assert "| `double-buffer` | `bool` | `true` |" in page
    assert "| `tile-sizes` | `tuple[int, ...]` | empty |" in page


_LINK = re.compile(r"\]\(([^)#]*)#([^)]+)\)")
_ANCHOR = re.compile(r"\{#([^}]+)\}")


def test_links_between_generated_pages_resolve(pages: dict[str, str]) -> None:
    anchors = {path: set(_ANCHOR.findall(text)) for path, text in pages.items()}
    broken = []
    for path, text in pages.items():
        for target, anchor in _LINK.findall(text):
            resolved = posixpath.normpath(
                posixpath.join(posixpath.dirname(path), target)
            )
            resolved = resolved if target else path
            if anchor not in anchors.get(resolved, ()):
                broken.append(f"{path}: {target}#{anchor}")
    assert not broken, broken


def test_a_package_without_lowering_tables_gives_none() -> None:
    assert lowering_tables(sim) == []


STRATEGY_PACKAGE = """
from pypto_mlir.dialects import tile


class ExpStrategy:
    \"\"\"One vexp over the valid region.\"\"\"


STRATEGIES = {tile.ExpOp: ExpStrategy()}
COST_KEYS = {tile.ExpOp: "exp"}
"""


def test_a_strategy_registry_names_the_strategy_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module-level mapping from op classes to strategy objects shows each
    object's class and docstring; a mapping to strings (cost keys) is no lowering."""
    package_dir = tmp_path / "fake_isel"
    package_dir.mkdir()
    (package_dir / "__init__.py").write_text(STRATEGY_PACKAGE)
    monkeypatch.syspath_prepend(str(tmp_path))
    package = importlib.import_module("fake_isel")
    tables = lowering_tables(package)
    assert [(t.module, t.name) for t in tables] == [("fake_isel", "STRATEGIES")]

    context = reference_context()
    context.tables = tables
    tile_dialect = DIALECTS["tile"]
    exp_op = next(op for op in tile_dialect.operations if op.name == "tile.exp")
    lowering = lowering_of(exp_op, tile_dialect, context)
    page = dialect_page_path(tile_dialect)
    assert lowering_brief(lowering, context, page) == (
        "[`tile-to-hw`](../passes.md#tile-to-hw): `ExpStrategy`"
    )
    assert lowering_lines(lowering, tile_dialect, context, page)[1] == (
        "    - `ExpStrategy` in `fake_isel.STRATEGIES`: One vexp over the valid region."
    )


def test_markdown_helpers() -> None:
    assert code("a`b") == "``a`b``"
    assert code("`x`") == "`` `x` ``"
    assert table_cell("`|x|` or a|b") == "`|x|` or a\\|b"
    assert constraint_text(AnyAttr()) == "any"
