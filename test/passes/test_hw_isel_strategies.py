"""Every tile op has exactly one lowering strategy in `hw_isel`'s registry, and
a tile op without one is an error naming it (never a silent default)."""

from __future__ import annotations

import pytest
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.utils.exceptions import PassFailedException

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.passes.hw_isel import STRATEGIES, STRATEGY_OF, Selector
from pypto_mlir.passes.hw_isel.strategy import NoScratch
from pypto_mlir.targets import load_target


def test_every_tile_op_has_a_strategy() -> None:
    missing = [op.name for op in tile.Tile.operations if op not in STRATEGY_OF]
    assert not missing, f"tile ops without a hw_isel strategy: {missing}"


def test_every_strategy_lowers_tile_ops_only() -> None:
    ops = set(tile.Tile.operations)
    for strategy in STRATEGIES:
        assert strategy.ops, f"{strategy.__name__} lowers no op"
        strays = [op.name for op in strategy.ops if op not in ops]
        assert not strays, f"{strategy.__name__} lists non-tile ops {strays}"


@irdl_op_definition
class _UnlistedOp(IRDLOperation):
    """A tile op no strategy lists."""

    name = "tile.unlisted"


def test_a_tile_op_without_a_strategy_is_an_error_naming_it() -> None:
    selector = Selector(load_target("tiny"), {})
    for ask in (selector.scratch, selector.inplace):
        with pytest.raises(PassFailedException, match="tile.unlisted: no strategy"):
            ask(_UnlistedOp())


def test_no_scratch_answers_both_questions() -> None:
    """A family without scratch says so once, for planning and for the model."""
    for strategy in STRATEGIES:
        if issubclass(strategy, NoScratch):
            assert strategy.scratch is NoScratch.scratch
            assert strategy.scratch_terms is NoScratch.scratch_terms


def test_a_strategy_answers_scratch_and_its_bound_together() -> None:
    with pytest.raises(TypeError, match="scratch without its pair"):

        class _HalfAnswered(NoScratch):  # pyright: ignore[reportUnusedClass]
            ops = ()

            def scratch(self, op: Operation) -> list[hw.BufferType]:
                return []
