"""UB bank conflicts through the ascend_hw interpreter: hand-written kernels whose
layout conflicts cost more cycles than conflict-free ones with the same
instructions and results, the cost page's examples as instructions, and the
report's counts (docs/simulator.md, "UB bank conflicts")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.interp.ascend_hw import (
    HwRunResult,
    _pattern_rows,  # pyright: ignore[reportPrivateUsage]
    lane_pattern,
    make_pattern,
    run_hw_function,
)
from pypto_mlir.targets import load_target

TARGET = load_target("ascend910b")
TILE = "!ascend_hw.buf<16x1024xf16, ub>"
GM = "memref<256x1024xf16>"


def vadd_kernel(x: int, y: int, z: int) -> str:
    """z = x + y over 256x1024 f16 in 16-row tiles at UB offsets x, y, z, on two
    cores (the first z tile in place when z == x)."""
    allocs = [f"%xt = ascend_hw.alloc [{x}, {x + 32768}) : {TILE}"]
    allocs.append(f"%yt = ascend_hw.alloc [{y}, {y + 32768}) : {TILE}")
    if z != x:
        allocs.append(f"%zt = ascend_hw.alloc [{z}, {z + 32768}) : {TILE}")
    dst = "%xt" if z == x else "%zt"
    body = "\n      ".join(allocs)
    return f"""
builtin.module attributes {{pypto.target = "ascend910b"}} {{
  func.func @vadd(%x: {GM}, %y: {GM}, %z: {GM}) attributes {{ascend_hw.block_dim = 2 : i64}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      {body}
      %core = ascend_hw.block_idx
      %base = arith.muli %core, %c128 : index
      scf.for %i = %c0 to %c8 step %c1 {{
        %r0 = arith.muli %i, %c16 : index
        %row = arith.addi %base, %r0 : index
        ascend_hw.dma_load %x[%row, %c0] -> %xt {{bursts = 1, burst_bytes = 32768}} : {GM} -> {TILE}
        ascend_hw.dma_load %y[%row, %c0] -> %yt {{bursts = 1, burst_bytes = 32768}} : {GM} -> {TILE}
        ascend_hw.set_flag mte2 -> v, 0
        ascend_hw.wait_flag mte2 -> v, 0
        ascend_hw.vadd %xt, %yt -> {dst} {{repeat = 128}} : {TILE}, {TILE} -> {TILE}
        ascend_hw.set_flag v -> mte3, 0
        ascend_hw.wait_flag v -> mte3, 0
        ascend_hw.dma_store {dst} -> %z[%row, %c0] {{bursts = 1, burst_bytes = 32768}} : {TILE} -> {GM}
        ascend_hw.set_flag mte3 -> mte2, 0
        ascend_hw.wait_flag mte3 -> mte2, 0
      }}
      func.return
  }}
}}
"""


def run(text: str, args: list[np.ndarray], name: str) -> HwRunResult:
    module = parse_chunk(default_context(), SourceChunk(text, 1), "banks.mlir")
    return run_hw_function(module, name, args, TARGET)


def run_vadd(x: int, y: int, z: int) -> tuple[HwRunResult, np.ndarray]:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((256, 1024)).astype(np.float16) for _ in range(2))
    out = np.zeros_like(a)
    result = run(vadd_kernel(x, y, z), [a, b, out], "vadd")
    np.testing.assert_array_equal(out, a + b)
    return result, out


# Per vadd instruction: 128 repeats of 8 blocks per operand. Bank g + 16 k of
# group g holds the k-th 64 KiB slice; x and y have 32 KiB tiles.
LAYOUTS = [
    # (x, y, z, conflict cycles per vadd)
    (0, 33024, 0, 0),  # y 256 B past a group span: groups 8-15; in place
    (0, 32768, 0, 128),  # both from group 0: two rows of groups 0-7 per repeat
    (0, 131328, 65536, 0),  # y in the third slice, dst in the second: no bank read
    (0, 65792, 32768, 128),  # dst in x's banks: a bank read and written
    (0, 32768, 65536, 128),  # read/read only
]


@pytest.mark.parametrize("x,y,z,per_vadd", LAYOUTS)
def test_layouts_cost_what_the_formula_says(
    x: int, y: int, z: int, per_vadd: int
) -> None:
    result, _ = run_vadd(x, y, z)
    report = result.report
    for core in report.cores:
        assert core.bank_conflict_cycles == 8 * per_vadd
        assert core.bank_conflict_instructions == (8 if per_vadd else 0)
    assert report.bank_conflict_cycles == 16 * per_vadd


def test_a_conflicting_layout_is_slower_with_the_same_results() -> None:
    free, out_free = run_vadd(0, 33024, 0)
    clash, out_clash = run_vadd(0, 32768, 0)
    assert out_free.tobytes() == out_clash.tobytes()
    assert free.report.bank_conflict_cycles == 0
    v_free, v_clash = (r.report.pipes["V"].busy_cycles for r in (free, clash))
    assert v_clash == v_free + clash.report.bank_conflict_cycles
    assert clash.report.cycles > free.report.cycles
    # The JSON and text reports carry the counts.
    data = json.loads(clash.report.to_json())
    assert data["bank_conflict_cycles"] == 2048
    assert [c["bank_conflict_cycles"] for c in data["cores"]] == [1024, 1024]
    assert "UB bank conflicts: 2048 cycles in 16 instructions" in clash.report.to_text()


def one_op(body: str, allocs: str) -> int:
    """Bank conflict cycles of a kernel of `allocs` and `body` (vdups that
    initialise a buffer write contiguous blocks: no conflict)."""
    text = f"""
builtin.module attributes {{pypto.target = "ascend910b"}} {{
  func.func @k(%v: f16) {{
    {allocs}
    {body}
    func.return
  }}
}}
"""
    return run(text, [np.float16(1)], "k").report.bank_conflict_cycles


BLOCK = "!ascend_hw.buf<16xf16, ub>"


@pytest.mark.parametrize(
    "src,dst,cycles",
    [(0x10020, 0x10000, 0), (0x10020, 0x10E20, 1)],
)
def test_the_pages_read_write_example_as_an_instruction(
    src: int, dst: int, cycles: int
) -> None:
    """One 32-byte block in, one out (mask = 16 f16 lanes)."""
    allocs = (
        f"%a = ascend_hw.alloc [{src}, {src + 32}) : {BLOCK}\n"
        f"    %d = ascend_hw.alloc [{dst}, {dst + 32}) : {BLOCK}"
    )
    body = (
        f"ascend_hw.vdup %v -> %a {{mask = 16}} : f16 -> {BLOCK}\n"
        "    ascend_hw.pipe_barrier v\n"
        f"    ascend_hw.vexp %a -> %d {{mask = 16}} : {BLOCK} -> {BLOCK}"
    )
    assert one_op(body, allocs) == cycles


@pytest.mark.parametrize("blk_stride,cycles", [(16, 7), (8, 3), (1, 0)])
def test_the_pages_write_write_example_as_an_instruction(
    blk_stride: int, cycles: int
) -> None:
    """vdup at 0x1FE00 writing 8 blocks blk_stride blocks apart: 8, 4 and 1
    cycles per repeat (7, 3 and 0 lost)."""
    dst = "!ascend_hw.buf<2048xf16, ub>"
    allocs = f"%d = ascend_hw.alloc [{0x1FE00}, {0x1FE00 + 4096}) : {dst}"
    body = (
        f"ascend_hw.vdup %v -> %d {{blk_stride = array<i64: {blk_stride}>}} "
        f": f16 -> {dst}"
    )
    assert one_op(body, allocs) == cycles


def test_pattern_rows_shortcut_equals_the_general_form() -> None:
    """Regular patterns (repeat pitch a multiple of the row) take a shortcut."""
    for pattern in (
        lane_pattern(2, 1, 8, 6, tuple(range(128))),
        lane_pattern(4, 2, 16, 5, tuple(range(0, 64, 3))),
        lane_pattern(2, 0, 1, 7, tuple(range(128))),
    ):
        for misalign in (0, 4):
            rows = _pattern_rows(pattern, misalign, 32)
            expected = [
                sorted({(misalign + int(o) * pattern.ebytes) // 32 * 32 for o in r})
                for r in pattern.offsets
            ]
            assert [[int(v) for v in r if v >= 0] for r in rows] == expected
    # an irregular pitch: a reduction's results, 4 bytes apart
    reduce_dst = make_pattern([0], 1, 20, 4)
    rows = _pattern_rows(reduce_dst, 0, 32)
    assert [int(r[0]) for r in rows] == [i * 4 // 32 * 32 for i in range(20)]
