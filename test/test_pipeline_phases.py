"""Kernels whose nests communicate through GM, through the whole pipeline on all
cores: FFN (x @ W1 -> swish -> @ W2, its hidden activation in a GM temporary)
at many shapes on ascend910b and tiny, against the tv reference; tile-to-hw
cuts it into two phases separated by an `ascend_hw.sync_all`, and without the
barrier the simulator reports the race between cores."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pipeline import (
    check_through_pipeline,
    inputs_for,
    load_example,
    parse,
    resize,
)
from xdsl.dialects import func
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from pypto_mlir.check import lower, result_buffers
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sim import RaceError
from pypto_mlir.targets import load_target


def ffn(tokens: int, hidden: int, inner: int) -> str:
    """examples/ffn.py at tokens x hidden x inner (the hidden activation is
    tokens x inner)."""
    text = load_example("ffn").ffn.mlir()
    return resize(text, {128: tokens, 768: hidden, 3072: inner})


SHAPES = {
    "ascend910b": [
        (16, 32, 64),
        (37, 45, 48),
        (64, 96, 256),
        (5, 129, 32),
        (128, 64, 512),
    ],
    "tiny": [(16, 32, 64), (40, 24, 80), (32, 32, 128), (17, 40, 160)],
}
"""Rows of the temporary (inner f16) a multiple of 32 bytes, so that the first
nest's stores can be cut between cores, and more than one block of tokens or of
the inner dim (a single block is straight-line code: nothing to split)."""


def phases(result) -> tuple[int, int]:
    """(block_dim, sync_alls) of a checked lowering."""
    barriers = sum(isinstance(op, hw.SyncAllOp) for op in result.lowered.walk())
    assert len(result.sim_report.sync_alls) == barriers
    return result.sim_report.block_dim, barriers


@pytest.mark.parametrize(
    "target, shape", [(t, s) for t, shapes in SHAPES.items() for s in shapes]
)
def test_ffn_runs_on_all_cores(target: str, shape: tuple[int, int, int]) -> None:
    result = check_through_pipeline(ffn(*shape), target, seed=sum(shape))
    block_dim, barriers = phases(result)
    assert block_dim > 1 and barriers == 1


@settings(max_examples=10, deadline=None)
@given(
    st.integers(1, 48),
    st.integers(1, 100),
    st.integers(1, 12),
    st.sampled_from(sorted(SHAPES)),
)
def test_ffn_at_drawn_shapes(
    tokens: int, hidden: int, blocks: int, target: str
) -> None:
    """Any shape, the temporary's rows aligned (`blocks` x 16 f16) or not (one
    more): unaligned temporaries keep the nests on fewer cores or one."""
    inner = 16 * blocks + (tokens % 2)
    result = check_through_pipeline(
        ffn(tokens, hidden, inner), target, seed=tokens + hidden
    )
    block_dim, barriers = phases(result)
    assert barriers <= 1 and (barriers == 0 or block_dim > 1)


@pytest.mark.parametrize("target", sorted(SHAPES))
def test_without_the_barrier_ffn_races_between_cores(target: str) -> None:
    module = parse(ffn(16, 32, 64))
    with diagnostic_handler(lambda _: None):
        lowered = lower(module, "ascend_hw", LowerPipeline(target=target))
    (barrier,) = [op for op in lowered.walk() if isinstance(op, hw.SyncAllOp)]
    Rewriter.erase_op(barrier)
    name, inputs = inputs_for(module, 0)
    entry = SymbolTable.lookup_symbol(module, name)
    assert isinstance(entry, func.FuncOp)
    outputs = result_buffers(entry)
    with pytest.raises(RaceError, match="between cores") as info:
        run_hw_function(lowered, name, [*inputs, *outputs], load_target(target))
    assert "no sync_all separates them" in str(info.value)
