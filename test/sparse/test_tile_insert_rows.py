"""`tile.insert_rows` (rows written into a ub tile at a run-time row): the
tile interpreter against numpy, the lowered kernel on the simulator against
the interpreter (both targets), a row outside the destination as an error at
the interpreter and at the simulator's subview, and the sync that orders the
block's store after the rows' copies."""

from __future__ import annotations

import numpy as np
import pytest
from test_sparse_hw import TARGETS, assert_flags_needed, lower, parse, run_both
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import InterpretationError

from pypto_mlir.check import run_tile_level
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.sim import AccessError
from pypto_mlir.targets import load_target

KERNEL = """
func.func @f(%x: memref<4x16xf32>, %at: memref<4xi32>, %out: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %init = tile.fill %zero : f32 -> !tile.tile<8x16xf32, ub>
  %block = scf.for %k = %c0 to %c4 step %c1 iter_args(%b = %init)
      -> (!tile.tile<8x16xf32, ub>) {
    %row = tile.load %x[%k, %c0] : memref<4x16xf32> -> !tile.tile<1x16xf32, ub>
    %i = memref.load %at[%k] : memref<4xi32>
    %r = arith.index_cast %i : i32 to index
    %next = tile.insert_rows %row, %b[%r] : !tile.tile<1x16xf32, ub>,
              !tile.tile<8x16xf32, ub>
    scf.yield %next : !tile.tile<8x16xf32, ub>
  }
  tile.store %block, %out[%c0, %c0] : !tile.tile<8x16xf32, ub> -> memref<8x16xf32>
  func.return
}
"""


def arguments(rows: list[int]) -> list[np.ndarray]:
    x = np.arange(4 * 16, dtype=np.float32).reshape(4, 16) + 1
    return [x, np.array(rows, np.int32), np.full((8, 16), -1, np.float32)]


@pytest.mark.parametrize("target", TARGETS)
def test_rows_inserted_on_the_interpreter_and_the_simulator(target: str) -> None:
    rows = [7, 0, 3, 0]  # row 0 written twice: the last write holds
    args = arguments(rows)
    actual, _ = run_both(KERNEL, args, 2, target)
    want = np.zeros((8, 16), np.float32)
    for k, r in enumerate(rows):
        want[r] = args[0][k]
    np.testing.assert_array_equal(actual, want)


def test_a_row_outside_the_destination_is_an_error() -> None:
    args = arguments([0, 1, 8, 2])
    with pytest.raises(InterpretationError, match=r"rows \[8, 9\) are outside"):
        run_tile_level(parse(KERNEL), "f", args)
    lowered = lower(parse(KERNEL), "tiny")
    with pytest.raises(AccessError, match=r"subview index \[8, 0\] is outside"):
        run_hw_function(lowered, "f", args, load_target("tiny"))


def test_the_block_store_waits_for_the_inserted_rows() -> None:
    """hw-insert-sync orders the rows' vcopy after the row's load (mte2 -> v)
    and the block's dma_store after the vcopies (v -> mte3): without any one
    of those flags the simulator reports a race or the result changes."""
    lowered = lower(parse(KERNEL), "ascend910b")
    chip = load_target("ascend910b")

    def run(module: ModuleOp) -> bytes:
        args = arguments([7, 0, 3, 1])
        run_hw_function(module, "f", args, chip)
        return args[2].tobytes()

    pairs = {(hw.Pipe.MTE2, hw.Pipe.V), (hw.Pipe.V, hw.Pipe.MTE3)}
    assert_flags_needed(lowered, run, pairs, 2)
