"""pypto-lower{bank-offset=true|false}: the example kernels give the same outputs
bit for bit either way (only UB offsets move), within tolerance of the tv
reference and without a race (the simulator would raise), and the offsets take
away the bank conflicts they can (memory_plan.py, docs/tile_to_hw.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pipeline import EXAMPLE_KERNELS, TARGETS, Example, check_through_pipeline

from pypto_mlir.dialects import ascend_hw as hw

SHAPES = [(1, 17), (7, 13), (37, 45), (16, 33)]
QUICK = [(1, 17), (37, 45)]
"""The shapes `make test` runs (one row; several tiles); the others are slow."""


def _slow_unless(shape: tuple[int, int]) -> list:
    return [] if shape in QUICK else [pytest.mark.slow]


def ub_offsets(result) -> list[int]:  # noqa: ANN001 - LoweringCheck
    return sorted(
        op.byte_offset
        for op in result.lowered.walk()
        if isinstance(op, hw.AllocOp) and "ub" in str(op.result.type)
    )


def check_both(example: Example, rows: int, cols: int, target: str) -> tuple:
    text = example.ir(rows, cols)
    off, on = (
        check_through_pipeline(text, target, seed=rows + cols, bank_offset=b)
        for b in (False, True)
    )
    for a, b in zip(off.comparisons, on.comparisons, strict=True):
        assert a.actual.tobytes() == b.actual.tobytes(), (example.kernel, rows, cols)
    return off, on


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(shape, id="x".join(map(str, shape)), marks=_slow_unless(shape))
        for shape in SHAPES
    ],
)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "example", EXAMPLE_KERNELS, ids=[e.kernel for e in EXAMPLE_KERNELS]
)
def test_examples_are_unchanged_by_bank_offsets(
    example: Example, target: str, shape: tuple[int, int]
) -> None:
    check_both(example, *shape, target)


@settings(max_examples=8, deadline=None)
@given(
    st.sampled_from(EXAMPLE_KERNELS),
    st.integers(1, 24),
    st.integers(1, 96),
    st.sampled_from(TARGETS),
)
def test_drawn_shapes_are_unchanged_by_bank_offsets(
    example: Example, rows: int, cols: int, target: str
) -> None:
    check_both(example, rows, cols, target)


def test_swish_loses_its_conflicts() -> None:
    """swish's vdiv reads x and 1 + exp(-x), which first fit puts at offsets a
    multiple of 512 bytes apart (a read/read conflict every repeat). At 512x512
    the pipelined tiles leave UB room to move them (at 512x1024 they fill it)."""
    swish = EXAMPLE_KERNELS[0]
    off, on = check_both(swish, 512, 512, "ascend910b")
    assert off.sim_report.bank_conflict_cycles > 0
    assert on.sim_report.bank_conflict_cycles == 0
    assert on.sim_report.cycles < off.sim_report.cycles
    assert ub_offsets(on) != ub_offsets(off)
