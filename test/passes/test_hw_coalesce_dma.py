"""hw-coalesce-dma on the simulator: the merged kernel moves the same bytes (outputs
and GM payload identical to the unmerged one and to numpy), with no more cycles and
no more GM wire bytes; pypto-lower gives the same numerics with it on and off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import lower
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw import HwRunResult, run_hw_function
from pypto_mlir.passes.hw_coalesce_dma import HwCoalesceDmaPass
from pypto_mlir.passes.hw_insert_sync import HwInsertSyncPass
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

TARGET = load_target("ascend910b")
ROWS, COLS = 64, 256


def _parse(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "test.mlir")


def _dmas(module: ModuleOp) -> list[hw.BurstDmaOp]:
    return [op for op in module.walk() if isinstance(op, hw.BurstDmaOp)]


def _kernel(loads: list[tuple[int, int, int]], cols: int, stores: list[int]) -> str:
    """Row-block loads (GM row, GM column, ub row) of `cols` f16 into a ub tile,
    then one store per ub row to the GM rows `stores` (column 0)."""
    tile_rows = len(stores)
    buf = f"!ascend_hw.buf<{tile_rows}x{cols}xf16, ub>"
    row = f"!ascend_hw.buf<1x{cols}xf16, ub>"
    size = tile_rows * cols * 2
    lines = [
        'builtin.module attributes {pypto.target = "ascend910b"} {',
        f"  func.func @k(%x: memref<{ROWS}x{COLS}xf16>, %y: memref<{ROWS}x{COLS}xf16>) {{",
        f"    %t = ascend_hw.alloc [0, {size}) : {buf}",
    ]
    consts = {v for load in loads for v in load} | set(stores)
    lines += [f"    %c{v} = arith.constant {v} : index" for v in sorted(consts)]
    for r in range(1, tile_rows):
        lines.append(f"    %r{r} = ascend_hw.subview %t[%c{r}, %c0] : {buf} -> {row}")

    def view(r: int) -> tuple[str, str]:
        return ("%t", buf) if r == 0 else (f"%r{r}", row)

    for gm_row, gm_col, ub_row in loads:
        name, typ = view(ub_row)
        lines.append(
            f"    ascend_hw.dma_load %x[%c{gm_row}, %c{gm_col}] -> {name} "
            f"{{bursts = 1, burst_bytes = {cols * 2}}} : memref<{ROWS}x{COLS}xf16> -> {typ}"
        )
    for ub_row, gm_row in enumerate(stores):
        name, typ = view(ub_row)
        lines.append(
            f"    ascend_hw.dma_store {name} -> %y[%c{gm_row}, %c0] "
            f"{{bursts = 1, burst_bytes = {cols * 2}}} : {typ} -> memref<{ROWS}x{COLS}xf16>"
        )
    lines += ["    func.return", "  }", "}"]
    return "\n".join(lines)


def _run(text: str, coalesce: bool) -> tuple[ModuleOp, HwRunResult]:
    module = _parse(text)
    if coalesce:
        HwCoalesceDmaPass().apply(default_context(), module)
    HwInsertSyncPass().apply(default_context(), module)
    module.verify()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((ROWS, COLS)).astype(np.float16)
    y = np.full((ROWS, COLS), np.nan, np.float16)
    return module, run_hw_function(module, "k", [x, y], TARGET)


def _same_bytes_cheaper(text: str) -> tuple[int, int]:
    """Run `text` unmerged and merged; check exactness and cost; DMA counts."""
    plain_module, plain = _run(text, coalesce=False)
    merged_module, merged = _run(text, coalesce=True)
    for a, b in zip(plain.outputs, merged.outputs, strict=True):
        assert a.tobytes() == b.tobytes()
    assert merged.report.gm_bytes_read == plain.report.gm_bytes_read
    assert merged.report.gm_bytes_written == plain.report.gm_bytes_written
    assert merged.report.gm_wire_bytes <= plain.report.gm_wire_bytes
    assert merged.report.cycles <= plain.report.cycles
    return len(_dmas(plain_module)), len(_dmas(merged_module))


def test_consecutive_rows_become_one_burst() -> None:
    text = _kernel([(8 + r, 0, r) for r in range(4)], COLS, [0, 1, 2, 3])
    plain, merged = _same_bytes_cheaper(text)
    assert (plain, merged) == (8, 2)
    module = _parse(text)
    HwCoalesceDmaPass().apply(default_context(), module)
    assert [op.burst_descriptor() for op in _dmas(module)] == [
        (1, 4 * COLS * 2, 0, 0),
        (1, 4 * COLS * 2, 0, 0),
    ]


def test_strided_column_block_becomes_one_multi_burst_dma() -> None:
    # x[2r, 32:96] -> ub row r: 64 f16 (128 B) per row, GM pitch two rows.
    text = _kernel([(2 * r, 32, r) for r in range(5)], 64, [3, 4, 5, 6, 7])
    plain, merged = _same_bytes_cheaper(text)
    assert (plain, merged) == (10, 2)
    module = _parse(text)
    HwCoalesceDmaPass().apply(default_context(), module)
    assert [op.burst_descriptor() for op in _dmas(module)] == [
        (5, 128, 2 * COLS * 2 - 128, 0),
        (5, 128, 0, COLS * 2 - 128),
    ]


def test_irregular_rows_are_left_alone() -> None:
    text = _kernel([(0, 0, 0), (1, 0, 1), (3, 0, 2)], COLS, [9, 5, 6])
    module = _parse(text)
    HwCoalesceDmaPass().apply(default_context(), module)
    # rows 0, 1 merge (one burst); row 3 breaks the pitch; stores 5, 6 merge.
    assert [op.burst_descriptor() for op in _dmas(module)] == [
        (1, 2 * COLS * 2, 0, 0),
        (1, COLS * 2, 0, 0),
        (1, COLS * 2, 0, 0),
        (1, 2 * COLS * 2, 0, 0),
    ]
    _same_bytes_cheaper(text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 6),
    st.sampled_from([16, 64, 128, 256]),
    st.integers(0, 3),
    st.lists(st.integers(0, 2), min_size=6, max_size=6),
    st.lists(st.integers(0, ROWS - 1), min_size=6, max_size=6, unique=True),
)
def test_random_row_sets_move_the_same_bytes(
    rows: int, cols: int, pitch: int, jitter: list[int], stores: list[int]
) -> None:
    """Rows at a pitch, some displaced (irregular): whatever merges, the bytes
    moved and every output are those of the unmerged kernel."""
    gm_rows = [
        min(ROWS - 1, r * pitch + (jitter[r] if jitter[r] == 2 else 0))
        for r in range(rows)
    ]
    column = (COLS - cols) if jitter[0] == 1 else 0
    text = _kernel([(g, column, r) for r, g in enumerate(gm_rows)], cols, stores[:rows])
    plain, merged = _same_bytes_cheaper(text)
    assert merged <= plain


# --------------------------------------------------------------------------------------
# pypto-lower with coalesce-dma on and off
# --------------------------------------------------------------------------------------


def _view_kernel(shape: tuple[int, int], view: str, out: tuple[int, int]) -> str:
    src = f"!tv.tensor<{shape[0]}x{shape[1]}xf16>"
    res = f"!tv.tensor<{out[0]}x{out[1]}xf16>"
    return f"""
builtin.module {{
  func.func @k(%x: {src}) -> {res} {{
    %v = tv.view %x{view} : {src} to {res}
    %s = tv.sigmoid %v : {res}
    %y = tv.mul %v, %s : {res}
    func.return %y : {res}
  }}
}}
"""


LOWERED = {
    # name: (source shape, view, result shape, numpy view)
    "column-block": ((256, 512), "[0, 64][256, 64][1, 1]", (256, 64), np.s_[:, 64:128]),
    "every-other": ((64, 128), "[0, 0][64, 64][1, 2]", (64, 64), np.s_[:, ::2]),
    "whole": ((96, 128), "[0, 0][96, 128][1, 1]", (96, 128), np.s_[:, :]),
}


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize("kernel", LOWERED)
def test_lowered_kernel_same_with_and_without(kernel: str, target: str) -> None:
    shape, view, out_shape, window = LOWERED[kernel]
    module = _parse(_view_kernel(shape, view, out_shape))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float16)
    results = []
    for on in (False, True):
        pipeline = LowerPipeline(target=target, coalesce_dma=on)
        lowered = lower(module, pipeline=pipeline)
        out = np.full(out_shape, np.nan, np.float16)
        run = run_hw_function(lowered, "k", [x.copy(), out], load_target(target))
        results.append(run)
    off, on = results
    assert off.outputs[1].tobytes() == on.outputs[1].tobytes()
    v = x[window].astype(np.float64)
    expected = v / (1 + np.exp(-v))
    np.testing.assert_allclose(on.outputs[1], expected, rtol=1e-2, atol=1e-2)
    assert on.report.gm_bytes_read == off.report.gm_bytes_read
    assert on.report.gm_bytes_written == off.report.gm_bytes_written
    assert on.report.cycles <= off.report.cycles


def test_pipeline_switch() -> None:
    names = [p.name for p in LowerPipeline().member_passes()]
    assert names.index("tile-to-hw") < names.index("hw-coalesce-dma")
    assert names.index("hw-coalesce-dma") < names.index("hw-insert-sync")
    off = [p.name for p in LowerPipeline(coalesce_dma=False).member_passes()]
    assert "hw-coalesce-dma" not in off
