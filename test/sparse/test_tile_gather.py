"""`tile.gather` (rows of a ub tile at indices read at run time): the tile
interpreter against numpy, the lowered kernel on the simulator against the
interpreter (both targets), and an index outside the source as an error at
the interpreter and at the simulator's subview, never a silent read."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import InterpretationError

from pypto_mlir.check import run_tile_level
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sim import AccessError, RaceError
from pypto_mlir.targets import load_target
from pypto_mlir.universe import default_context

KERNEL = """
func.func @f(%b: memref<64x16xf16>, %idx: memref<8xi32>, %out: memref<8x16xf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %t = tile.load %b[%c0, %c0] : memref<64x16xf16> -> !tile.tile<64x16xf16, ub>
  %i = tile.load %idx[%c0] : memref<8xi32> -> !tile.tile<8xi32, ub>
  scf.for %k = %c0 to %c8 step %c2 {
    %g = tile.gather %t[%i, %k] : !tile.tile<64x16xf16, ub>, !tile.tile<8xi32, ub>
           -> !tile.tile<2x16xf16, ub>
    tile.store %g, %out[%k, %c0] : !tile.tile<2x16xf16, ub> -> memref<8x16xf16>
  }
  func.return
}
"""


def parse() -> ModuleOp:
    module = Parser(default_context(), KERNEL).parse_module()
    module.verify()
    return module


def arguments(indices: list[int]) -> list[np.ndarray]:
    b = np.arange(64 * 16, dtype=np.float32).reshape(64, 16).astype(np.float16)
    return [b, np.array(indices, np.int32), np.zeros((8, 16), np.float16)]


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
def test_gathered_rows_on_the_interpreter_and_the_simulator(target: str) -> None:
    indices = [63, 0, 5, 5, 17, 2, 40, 1]
    args = arguments(indices)
    expected = [a.copy() for a in args]
    run_tile_level(parse(), "f", expected)
    np.testing.assert_array_equal(expected[2], args[0][indices])
    lowered = parse()
    LowerPipeline(target=target, start_level="tile").apply(default_context(), lowered)
    result = run_hw_function(lowered, "f", args, load_target(target))
    np.testing.assert_array_equal(result.outputs[2], expected[2])


PADDED = """
func.func @f(%b: memref<64x12xf16>, %idx: memref<8xi32>, %out: memref<8x12xf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %t = tile.load %b[%c0, %c0] : memref<64x12xf16> -> !tile.tile<64x16xf16, ub, valid = [64, 12]>
  %i = tile.load %idx[%c0] : memref<8xi32> -> !tile.tile<8xi32, ub>
  scf.for %k = %c0 to %c8 step %c2 {
    %g = tile.gather %t[%i, %k] : !tile.tile<64x16xf16, ub, valid = [64, 12]>,
           !tile.tile<8xi32, ub> -> !tile.tile<2x16xf16, ub, valid = [2, 12]>
    tile.store %g, %out[%k, %c0] : !tile.tile<2x16xf16, ub, valid = [2, 12]>
           -> memref<8x12xf16>
  }
  func.return
}
"""


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
def test_gathered_rows_of_padded_rows(target: str) -> None:
    """Rows of 12 f16 DMAed into ub rows of 16: the padding is never written,
    so the vcopy moves the valid columns only (it read the padding, an
    `UninitializedReadError` on the simulator, in the gather runs of a CSR
    spmm of 24 columns)."""
    b = np.arange(64 * 12, dtype=np.float32).reshape(64, 12).astype(np.float16)
    indices = [63, 0, 5, 5, 17, 2, 40, 1]
    args = [b, np.array(indices, np.int32), np.zeros((8, 12), np.float16)]
    module = Parser(default_context(), PADDED).parse_module()
    LowerPipeline(target=target, start_level="tile").apply(default_context(), module)
    result = run_hw_function(module, "f", args, load_target(target))
    np.testing.assert_array_equal(result.outputs[2], b[indices])


def test_an_index_outside_the_source_is_an_error() -> None:
    args = arguments([0, 1, 2, 64, 4, 5, 6, 7])
    with pytest.raises(InterpretationError, match=r"row index 64 at 3 is outside"):
        run_tile_level(parse(), "f", args)
    lowered = parse()
    LowerPipeline(target="tiny", start_level="tile").apply(default_context(), lowered)
    with pytest.raises(
        AccessError, match=r"subview index \[64, 0\] is outside the source shape"
    ):
        run_hw_function(lowered, "f", args, load_target("tiny"))


def test_the_gathered_rows_wait_for_the_source_load() -> None:
    """hw-insert-sync orders the vcopy of a gathered row after the DMA that
    loaded the source (an mte2 -> v flag): without it the race detector sees
    the run-time row read while the DMA may still write it."""
    args = arguments([63, 0, 5, 5, 17, 2, 40, 1])
    lowered = parse()
    LowerPipeline(target="ascend910b", start_level="tile").apply(
        default_context(), lowered
    )
    target = load_target("ascend910b")
    run_hw_function(lowered, "f", [a.copy() for a in args], target)
    flags = [
        op
        for op in lowered.walk()
        if isinstance(op, hw.FlagOp)
        and (op.src_pipe, op.dst_pipe) == (hw.Pipe.MTE2, hw.Pipe.V)
    ]
    assert flags
    for op in flags:
        Rewriter.erase_op(op)
    with pytest.raises(RaceError, match=r"'dma_load'.*'vcopy'"):
        run_hw_function(lowered, "f", [a.copy() for a in args], target)
