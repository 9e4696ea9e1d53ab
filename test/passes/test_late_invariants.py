"""tv-to-tile's `late-invariants`: loop-invariant tiles loaded in a loop each
core runs once match the tv reference, on both targets and odd shapes."""

from __future__ import annotations

import numpy as np
import pytest

from pypto_mlir.check import check_lowering, lower
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.dialects import tile
from pypto_mlir.pipelines import LowerPipeline


def _layernorm(rows: int, cols: int) -> str:
    x = f"!tv.tensor<{rows}x{cols}xf16>"
    xf = f"!tv.tensor<{rows}x{cols}xf32>"
    s = f"!tv.tensor<{rows}x1xf32>"
    v, vf = f"!tv.tensor<{cols}xf16>", f"!tv.tensor<{cols}xf32>"
    return f"""
func.func @k(%x: {x}, %gamma: {v}, %beta: {v}) -> {x} {{
  %0 = tv.cast %x : {x} to {xf}
  %1 = tv.reduce_sum %0 [1] keepdims : {xf} -> {s}
  %c = arith.constant {1 / cols} : f32
  %3 = tv.mul %1, %c : {s}, f32 -> {s}
  %4 = tv.sub %0, %3 : {xf}, {s} -> {xf}
  %5 = tv.mul %4, %4 : {xf}
  %6 = tv.reduce_sum %5 [1] keepdims : {xf} -> {s}
  %7 = tv.mul %6, %c : {s}, f32 -> {s}
  %e = arith.constant 1.0e-05 : f32
  %9 = tv.add %7, %e : {s}, f32 -> {s}
  %10 = tv.rsqrt %9 : {s}
  %11 = tv.mul %4, %10 : {xf}, {s} -> {xf}
  %12 = tv.cast %gamma : {v} to {vf}
  %13 = tv.mul %11, %12 : {xf}, {vf} -> {xf}
  %14 = tv.cast %beta : {v} to {vf}
  %15 = tv.add %13, %14 : {xf}, {vf} -> {xf}
  %16 = tv.cast %15 : {xf} to {x}
  func.return %16 : {x}
}}
"""


def _inputs(rows: int, cols: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [
        (rng.standard_normal((rows, cols)) * 2 + 0.5).astype(np.float16),
        (1 + 0.1 * rng.standard_normal(cols)).astype(np.float16),
        (0.1 * rng.standard_normal(cols)).astype(np.float16),
    ]


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize("shape", [(128, 768), (37, 45), (5, 1000), (50, 96)])
def test_late_invariants_match_the_reference(
    shape: tuple[int, int], target: str
) -> None:
    module = parse_chunk(default_context(), SourceChunk(_layernorm(*shape), 1), "t")
    check = check_lowering(
        module, "k", _inputs(*shape), pipeline=LowerPipeline(target=target)
    )
    assert check.ok, [str(c) for c in check.comparisons]


def test_the_parameters_load_after_x_in_the_loop() -> None:
    """128x768 on ascend910b (one row block per core): x first in the loop,
    then gamma and beta; without late-invariants, gamma and beta first."""
    module = parse_chunk(default_context(), SourceChunk(_layernorm(128, 768), 1), "t")
    tiled = lower(module, "tile", LowerPipeline(target="ascend910b"))
    loads = [op for op in tiled.walk() if isinstance(op, tile.LoadOp)]
    of_x = [str(op.source.type).startswith("memref<128x768") for op in loads]
    # The loop's body, then its peeled tail (128 rows in tiles of 6).
    assert of_x == [True, False, False] * 2
    assert loads[0].parent_op().name == "scf.for"  # pyright: ignore[reportOptionalMemberAccess]
    off = LowerPipeline(target="ascend910b", late_invariants=False)
    loads = [
        op for op in lower(module, "tile", off).walk() if isinstance(op, tile.LoadOp)
    ]
    assert not str(loads[0].source.type).startswith("memref<128x768")
