"""`ascend_hw.sync_all` in the interpreter: the cores run epoch by epoch, so what
one core writes to GM before a barrier is what another reads after it; without
the barrier the simulator reports the cross-core race; unequal barrier counts are
a located deadlock; errors of any core's thread come out as they would without
threads."""

from __future__ import annotations

import numpy as np
import pytest

from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import verify
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.sim import DeadlockError, RaceError, UninitializedReadError
from pypto_mlir.targets import load_target

TINY = load_target("tiny")
FILE = "k.mlir"

ROTATE = """
builtin.module attributes {pypto.target = "tiny"} {
  func.func @rotate(%x: memref<2x128xf16>, %z: memref<2x128xf16>) attributes {ascend_hw.block_dim = 2 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %steps = arith.constant STEPS : index
    %t = memref.alloc() : memref<2x128xf16>
    %core = ascend_hw.block_idx
    %a = ascend_hw.alloc [0, 256) : !ascend_hw.buf<128xf16, ub>
    ascend_hw.dma_load %x[%core, %c0] -> %a {bursts = 1, burst_bytes = 256} : memref<2x128xf16> -> !ascend_hw.buf<128xf16, ub>
    ascend_hw.set_flag mte2 -> v, 0
    ascend_hw.wait_flag mte2 -> v, 0
    scf.for %i = %c0 to %steps step %c1 {
      // Row (core + i) mod 2 of t gets twice this core's value...
      %k = arith.addi %core, %i : index
      %mine = arith.remui %k, %c2 : index
      %next = arith.addi %k, %c1 : index
      %theirs = arith.remui %next, %c2 : index
      ascend_hw.vadd %a, %a -> %a : !ascend_hw.buf<128xf16, ub>, !ascend_hw.buf<128xf16, ub> -> !ascend_hw.buf<128xf16, ub>
      ascend_hw.set_flag v -> mte3, 0
      ascend_hw.wait_flag v -> mte3, 0
      ascend_hw.dma_store %a -> %t[%mine, %c0] {bursts = 1, burst_bytes = 256} : !ascend_hw.buf<128xf16, ub> -> memref<2x128xf16>
      ascend_hw.set_flag mte3 -> mte2, 0
      SYNC
      // ... and this core goes on with the other core's.
      ascend_hw.wait_flag mte3 -> mte2, 0
      ascend_hw.dma_load %t[%theirs, %c0] -> %a {bursts = 1, burst_bytes = 256} : memref<2x128xf16> -> !ascend_hw.buf<128xf16, ub>
      ascend_hw.set_flag mte2 -> v, 0
      ascend_hw.wait_flag mte2 -> v, 0
      SYNC
    }
    ascend_hw.set_flag v -> mte3, 0
    ascend_hw.wait_flag v -> mte3, 0
    ascend_hw.dma_store %a -> %z[%core, %c0] {bursts = 1, burst_bytes = 256} : !ascend_hw.buf<128xf16, ub> -> memref<2x128xf16>
    memref.dealloc %t : memref<2x128xf16>
    func.return
  }
}
"""
"""Each step doubles the core's row and swaps it with the other core's through
GM temporary t; after `steps` steps core c holds 2^steps x[(c + steps) mod 2]."""


def rotate(steps: int, sync: str = "ascend_hw.sync_all"):
    text = ROTATE.replace("STEPS", str(steps)).replace("SYNC", sync)
    module = parse_chunk(default_context(), SourceChunk(text, 1), FILE)
    verify(module)
    return module


def inputs() -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(0).standard_normal((2, 128)).astype(np.float16)
    return x, np.full((2, 128), np.nan, np.float16)


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_gm_written_before_the_barrier_is_read_after_it(steps: int) -> None:
    x, z = inputs()
    result = run_hw_function(rotate(steps), "rotate", [x, z], TINY)
    expected = x.astype(np.float32) * 2.0**steps
    if steps % 2:
        expected = expected[::-1]
    np.testing.assert_array_equal(z, expected.astype(np.float16))
    report = result.report
    assert len(report.sync_alls) == 2 * steps
    assert all(b.loc.startswith(f"{FILE}:") for b in report.sync_alls)
    assert report.block_dim == 2


def test_without_the_barriers_the_cores_race() -> None:
    x, z = inputs()
    with pytest.raises(RaceError, match="between cores 0 and 1") as info:
        run_hw_function(rotate(1, sync=""), "rotate", [x, z], TINY)
    assert info.value.memory.startswith("gm:")


def test_on_one_core_the_barrier_only_drains() -> None:
    x, z = inputs()
    z = z[:1]
    text = ROTATE.replace("2x128", "1x128").replace("STEPS", "2")
    text = text.replace("SYNC", "ascend_hw.sync_all")
    text = text.replace("ascend_hw.block_dim = 2", "ascend_hw.block_dim = 1")
    text = text.replace("%c2 = arith.constant 2", "%c2 = arith.constant 1")
    module = parse_chunk(default_context(), SourceChunk(text, 1), FILE)
    result = run_hw_function(module, "rotate", [x[:1].copy(), z], TINY)
    np.testing.assert_array_equal(z, (x[:1].astype(np.float32) * 4).astype(np.float16))
    assert len(result.report.sync_alls) == 4


MISMATCH = """
builtin.module attributes {pypto.target = "tiny"} {
  func.func @barrier() {
    ascend_hw.sync_all
    func.return
  }
  func.func @k(%x: memref<2x128xf16>) attributes {ascend_hw.block_dim = 2 : i64} {
    %c0 = arith.constant 0 : index
    %core = ascend_hw.block_idx
    %first = arith.cmpi eq, %core, %c0 : index
    scf.if %first {
      func.call @barrier() : () -> ()
      func.call @barrier() : () -> ()
    }
    ascend_hw.sync_all
    func.return
  }
}
"""


def test_a_barrier_some_core_never_reaches_is_a_deadlock() -> None:
    """(The verifier refuses a sync_all under a branch on block_idx; a call hides
    it.) Core 1 ends after one barrier while core 0 waits at its second."""
    module = parse_chunk(default_context(), SourceChunk(MISMATCH, 1), FILE)
    with pytest.raises(DeadlockError) as info:
        run_hw_function(module, "k", [np.zeros((2, 128), np.float16)], TINY)
    assert info.value.locs == (f"{FILE}:4:5",)
    assert "core 0 waits at its sync_all #2, which core 1 never reaches" in str(
        info.value
    )


def test_an_error_on_a_later_core_after_a_barrier_is_raised() -> None:
    """Core 1 reads UB bytes nothing wrote, after the barrier: the error names
    the op, as without barriers."""
    text = """
builtin.module attributes {pypto.target = "tiny"} {
  func.func @k(%z: memref<2x128xf16>) attributes {ascend_hw.block_dim = 2 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %core = ascend_hw.block_idx
    %a = ascend_hw.alloc [0, 256) : !ascend_hw.buf<128xf16, ub>
    %first = arith.cmpi eq, %core, %c0 : index
    scf.if %first {
      %h = arith.constant 1.0 : f16
      ascend_hw.vdup %h -> %a : f16 -> !ascend_hw.buf<128xf16, ub>
    }
    ascend_hw.sync_all
    ascend_hw.dma_store %a -> %z[%core, %c0] {bursts = 1, burst_bytes = 256} : !ascend_hw.buf<128xf16, ub> -> memref<2x128xf16>
    func.return
  }
}
"""
    module = parse_chunk(default_context(), SourceChunk(text, 1), FILE)
    with pytest.raises(UninitializedReadError, match="core 1") as info:
        run_hw_function(module, "k", [np.zeros((2, 128), np.float16)], TINY)
    assert info.value.locs == (f"{FILE}:14:5",)
