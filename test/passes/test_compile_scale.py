"""Compile work grows with the input, not faster (issue 16, "Any size").

Structural, not timed (bench/bench_compile_scale.py has the times): a long fused
chain lowers to tiles at Python's default recursion limit, and the calls of the
nest builder's placement, of its operand walk, and of hw-insert-sync's pairwise
conflict test double (not quadruple) when the chain doubles; and no pass of
pypto-lower needs a stack as deep as the chain is long.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from pypto_mlir.cli.source import default_context
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.passes import nest_builder, sync_frames
from pypto_mlir.pipelines import LowerPipeline

TENSOR = "!tv.tensor<16x128xf16>"


def chain(length: int) -> ModuleOp:
    """`length` elementwise ops, each reading the previous one's result."""
    body = [
        f"%v{i + 1} = tv.{('add', 'mul', 'sub')[i % 3]} %v{i}, %b : {TENSOR}"
        for i in range(length)
    ]
    text = (
        f"func.func @chain(%v0: {TENSOR}, %b: {TENSOR}) -> {TENSOR} {{\n"
        + "\n".join(body)
        + f"\nfunc.return %v{length} : {TENSOR}\n}}\n"
    )
    return Parser(default_context(), text).parse_module()


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def lower(module: ModuleOp, level: str) -> None:
    for stage in LowerPipeline(target="tiny").stages(level):
        stage.apply(default_context(), module)


def calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> Callable[[], int]:
    """Count the calls of `owner.name` from now on."""
    count = 0
    original = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal count
        count += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return lambda: count


def test_long_chain_lowers_at_default_recursion_limit() -> None:
    module = chain(1000)
    with recursion_limit(1000):
        lower(module, "tile")
    ops = [op for op in module.walk() if isinstance(op, tile.TileBinaryOp)]
    assert len(ops) == 1000


def test_chain_lowers_to_hw_in_a_stack_shorter_than_it() -> None:
    """Every pass of pypto-lower, with fewer frames to spare than the chain has
    ops (its depth in each pass may not grow with the chain)."""
    length = 100
    module = chain(length)
    depth = len(traceback.extract_stack())
    with recursion_limit(depth + length - 30):
        lower(module, "ascend_hw")
    assert any(isinstance(op, hw.VectorOp) for op in module.walk())


def test_nest_building_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    """Placements asked, placements computed, and operand tiles resolved."""
    names = ("placement", "scope_for", "_start")
    counts: list[list[int]] = []
    for length in (60, 120):
        module = chain(length)
        counters = [calls(monkeypatch, nest_builder.NestBuilder, n) for n in names]
        lower(module, "tile")
        counts.append([count() for count in counters])
        monkeypatch.undo()
    for name, small, large in zip(names, *counts, strict=True):
        assert small > 0 and large <= 2.2 * small, (name, small, large)


def test_sync_conflict_pairs_are_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = []
    for length in (12, 24):
        module = chain(length)
        count = calls(monkeypatch, sync_frames, "_conflicts")
        lower(module, "ascend_hw")
        counts.append(count())
        monkeypatch.undo()
    assert counts[0] > 0
    assert counts[1] <= 2.2 * counts[0], counts
