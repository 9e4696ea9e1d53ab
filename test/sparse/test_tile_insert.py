"""`tile.insert` (a scalar write into a ub tile, docs/sparse.md, *The tile
level*) at every level: the tile interpreter, its `store_scalar` on the
simulator of both targets equal to it bit for bit, the flags around the
scalar writes needed (the race detector sees them), an element outside the
tile's valid region or the buffer an error."""

from __future__ import annotations

import numpy as np
import pytest
from test_sparse_hw import TARGETS, assert_flags_needed, lower, parse, run_both
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import run_tile_level
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.sim import AccessError
from pypto_mlir.targets import load_target

SCATTER = """
builtin.module {
  func.func @f(%src: memref<4x64xf32>, %pos: memref<8xindex>,
               %out: memref<4x64xf32>, %ipos: memref<4x8xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0.0 : f32
    %zi = arith.constant 0 : i32
    scf.for %r = %c0 to %c4 step %c1 {
      %row = tile.load %src[%r, %c0] : memref<4x64xf32> -> !tile.tile<1x64xf32, ub>
      %z = tile.fill %zero : f32 -> !tile.tile<1x64xf32, ub>
      %i0 = tile.fill %zi : i32 -> !tile.tile<8xi32, ub>
      %dense, %ids = scf.for %p = %c0 to %c8 step %c1
          iter_args(%acc = %z, %it = %i0)
          -> (!tile.tile<1x64xf32, ub>, !tile.tile<8xi32, ub>) {
        %col = memref.load %pos[%p] : memref<8xindex>
        %v = tile.extract %row[%c0, %col] : !tile.tile<1x64xf32, ub> -> f32
        %next = tile.insert %v, %acc[%c0, %col] : f32, !tile.tile<1x64xf32, ub>
        %shifted = arith.addi %col, %r : index
        %it2 = tile.insert %shifted, %it[%p] : index, !tile.tile<8xi32, ub>
        scf.yield %next, %it2 : !tile.tile<1x64xf32, ub>, !tile.tile<8xi32, ub>
      }
      tile.store %dense, %out[%r, %c0] : !tile.tile<1x64xf32, ub> -> memref<4x64xf32>
      tile.store %ids, %ipos[%r, %c0] : !tile.tile<8xi32, ub> -> memref<4x8xi32>
    }
    func.return
  }
}
"""
"""Per row: the elements at 8 run-time columns copied into a zero row by
`tile.insert` (f32), and their columns plus the row into an i32 tile."""

POSITIONS = np.array([3, 17, 5, 63, 0, 40, 41, 9], dtype=np.int64)


def _arguments() -> list[np.ndarray]:
    src = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    return [
        src,
        POSITIONS.copy(),
        np.zeros((4, 64), np.float32),
        np.zeros((4, 8), np.int32),
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_insert_scatters_on_the_simulator(target: str) -> None:
    """The lowered kernel (store_scalar into the tile's buffer, in place)
    equals the tile interpreter, which equals numpy."""
    args = _arguments()
    dense, _ = run_both(SCATTER, args, 2, target)
    expected = np.zeros((4, 64), np.float32)
    expected[:, POSITIONS] = args[0][:, POSITIONS]
    np.testing.assert_array_equal(dense, expected)
    ids = [a.copy() for a in args]
    run_tile_level(parse(SCATTER), "f", ids)
    np.testing.assert_array_equal(ids[3], POSITIONS[None, :] + np.arange(4)[:, None])
    lowered = lower(parse(SCATTER), target)
    stores = [op for op in lowered.walk() if isinstance(op, hw.StoreScalarOp)]
    assert len(stores) == 2
    # in place: the accumulator's buffer is written, never copied
    assert not any(isinstance(op, hw.VCopyOp) for op in lowered.walk())


def test_every_flag_of_the_scalar_writes_is_needed() -> None:
    """Without either set/wait pair of the scalar writes (v -> s: the fill
    before the writes; s -> mte3: the writes before the store), the simulator
    reports a race, a deadlock or an event misuse, or the result changes. (The
    s -> mte2 pair after the `tile.extract` reads changes nothing here: S
    waits for each read before it issues the next DMA.)"""
    lowered = lower(parse(SCATTER), "ascend910b")
    chip = load_target("ascend910b")

    def run(module: ModuleOp) -> bytes:
        args = _arguments()
        run_hw_function(module, "f", args, chip)
        return args[2].tobytes() + args[3].tobytes()

    writes = {(hw.Pipe.V, hw.Pipe.S), (hw.Pipe.S, hw.Pipe.MTE3)}
    assert_flags_needed(lowered, run, writes, 2)


def test_insert_outside_the_valid_region_is_an_error() -> None:
    module = parse(
        "func.func @f(%t: memref<8xf32>, %v: f32, %j: index) -> f32 {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %a = tile.load %t[%c0] : memref<8xf32> -> !tile.tile<8xf32, ub, valid = [5]>\n"
        "  %b = tile.insert %v, %a[%j] : f32, !tile.tile<8xf32, ub, valid = [5]>\n"
        "  %w = tile.extract %b[%j] : !tile.tile<8xf32, ub, valid = [5]> -> f32\n"
        "  func.return %w : f32\n}"
    )
    data = np.zeros(8, np.float32)
    assert run_tile_level(module, "f", [data, 2.5, 4]) == (2.5,)
    with pytest.raises(Exception, match=r"tile.insert: index \[5\] is outside"):
        run_tile_level(module, "f", [data, 2.5, 5])


def test_store_scalar_outside_its_buffer_is_an_error() -> None:
    module = parse(
        'builtin.module attributes {pypto.target = "ascend910b"} {\n'
        "  func.func @f(%v: f32, %j: index) {\n"
        "    %a = ascend_hw.alloc [0, 32) : !ascend_hw.buf<8xf32, ub>\n"
        "    ascend_hw.store_scalar %v, %a[%j] : f32, !ascend_hw.buf<8xf32, ub>\n"
        "    func.return\n  }\n}"
    )
    chip = load_target("ascend910b")
    run_hw_function(module, "f", [1.0, 7], chip)
    with pytest.raises(AccessError, match=r"store_scalar: index \[8\] is outside"):
        run_hw_function(module, "f", [1.0, 8], chip)
