"""Data-dependent addressing on the simulator (docs/sparse.md, *The tile level*).

CSR kernels written as tile IR (`sparse_tile_kernels`) are lowered by
`pypto-lower{start-level=tile}` and run on ascend910b and tiny: the results
equal the tile interpreter's bit for bit and scipy's within f32 rounding, on
patterns with empty rows, one nonzero, no nonzero, power-law rows. Also: the
flags around scalar reads are needed (the race detector sees the run-time
footprints), a run-time address outside its memref is an error naming the
instruction, loops of run-time bounds pipelined by tile-pipeline run every
trip count, and the scalar DataCache's hits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sparse_patterns import PATTERNS
from sparse_tile_kernels import (
    csr_arguments,
    padded_indices,
    spmm_kernel,
    spmv_kernel,
    spmv_prefetch_kernel,
)
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.rewriter import Rewriter

from pypto_mlir.check import run_tile_level
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw import HwRunResult, run_hw_function
from pypto_mlir.passes.hw_insert_sync import resynchronise
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sim import AccessError, RaceError, SimError
from pypto_mlir.sim.dcache import DataCache
from pypto_mlir.targets import load_target
from pypto_mlir.universe import default_context

TARGETS = ("ascend910b", "tiny")
SHAPE = (12, 20)
"""Rows and columns of the sparse matrix: 12 rows split over the cores."""


def parse(text: str) -> ModuleOp:
    module = Parser(default_context(), text).parse_module()
    module.verify()
    return module


def lower(module: ModuleOp, target: str, **options: bool) -> ModuleOp:
    lowered = module.clone()
    LowerPipeline(target=target, start_level="tile", **options).apply(
        default_context(), lowered
    )
    lowered.verify()
    return lowered


def run_both(
    text: str, args: list[Any], output: int, target: str
) -> tuple[np.ndarray, HwRunResult]:
    """The tile interpreter's output `output`, and the lowered run's result."""
    module = parse(text)
    expected = [a.copy() for a in args]
    run_tile_level(module, "f", expected)
    result = run_hw_function(
        lower(module, target), "f", [a.copy() for a in args], load_target(target)
    )
    np.testing.assert_array_equal(result.outputs[output], expected[output])
    return expected[output], result


def pattern(name: str, seed: int = 0) -> sp.csr_array:
    return PATTERNS[name](SHAPE, np.random.default_rng(seed))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_spmm(name: str, target: str) -> None:
    a = pattern(name)
    m, k = SHAPE
    b = np.random.default_rng(1).standard_normal((k, 64)).astype(np.float32)
    out = np.full((m, 64), np.nan, np.float32)
    args = [*csr_arguments(a), b, out]
    actual, _ = run_both(spmm_kernel(m, k, 64), args, 4, target)
    np.testing.assert_allclose(actual, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_spmm_i32_indices(target: str) -> None:
    """Column indices of the encoding's i32, read as i32 and cast to index."""
    a = pattern("random")
    m, k = SHAPE
    b = np.random.default_rng(1).standard_normal((k, 64)).astype(np.float32)
    offsets, indices, values = csr_arguments(a)
    args = [offsets, indices.astype(np.int32), values, b, np.zeros((m, 64), np.float32)]
    actual, _ = run_both(spmm_kernel(m, k, 64, index="i32"), args, 4, target)
    np.testing.assert_allclose(actual, a @ b, rtol=1e-5, atol=1e-5)


def test_spmm_f16() -> None:
    a = pattern("power_law")
    m, k = SHAPE
    b = np.random.default_rng(2).standard_normal((k, 128)).astype(np.float16)
    out = np.full((m, 128), np.nan, np.float16)
    args = [*csr_arguments(a, "f16"), b, out]
    actual, _ = run_both(spmm_kernel(m, k, 128, "f16"), args, 4, "ascend910b")
    rounded = sp.csr_array(
        (a.data.astype(np.float16).astype(np.float32), a.indices, a.indptr), a.shape
    )
    reference = rounded @ b.astype(np.float32)
    np.testing.assert_allclose(actual.astype(np.float32), reference, atol=0.05)


SPMV: dict[str, Callable[[int, int], str]] = {
    "scalar reads": spmv_kernel,
    "prefetched indices": spmv_prefetch_kernel,
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kernel", sorted(SPMV))
@pytest.mark.parametrize(
    "name", ["empty_rows", "all_empty", "single_nonzero", "one_dense_row", "full"]
)
def test_spmv(name: str, kernel: str, target: str) -> None:
    a = pattern(name)
    m, k = SHAPE
    offsets, indices, values = csr_arguments(a)
    if kernel == "prefetched indices":
        indices = padded_indices(a)
    x = np.random.default_rng(3).standard_normal(k).astype(np.float32)
    y = np.full(m, np.nan, np.float32)
    actual, _ = run_both(
        SPMV[kernel](m, k), [offsets, indices, values, x, y], 4, target
    )
    np.testing.assert_allclose(actual, a @ x, rtol=1e-5, atol=1e-5)


def _prefetch_module(target: str) -> tuple[ModuleOp, list[np.ndarray]]:
    a = pattern("random")
    m, k = SHAPE
    x = np.random.default_rng(4).standard_normal(k).astype(np.float32)
    offsets, _, values = csr_arguments(a)
    args = [offsets, padded_indices(a), values, x, np.zeros(m, np.float32)]
    return lower(parse(spmv_prefetch_kernel(m, k)), target), args


def test_the_scalar_read_of_an_index_tile_needs_its_flag() -> None:
    """Without the mte2 -> s flag the scalar unit reads the index tile while
    the DMA may still write it: the race detector names both."""
    module, args = _prefetch_module("ascend910b")
    target = load_target("ascend910b")
    run_hw_function(module, "f", [a.copy() for a in args], target)
    flags = [
        op
        for op in module.walk()
        if isinstance(op, hw.FlagOp)
        and (op.src_pipe, op.dst_pipe) == (hw.Pipe.MTE2, hw.Pipe.S)
    ]
    assert len(flags) == 2
    for op in flags:
        Rewriter.erase_op(op)
    with pytest.raises(RaceError, match=r"'dma_load'.*'load_scalar'"):
        run_hw_function(module, "f", [a.copy() for a in args], target)


@pytest.mark.parametrize("target", TARGETS)
def test_a_column_index_outside_b_is_an_error_at_the_dma(target: str) -> None:
    a = pattern("single_nonzero")
    m, k = SHAPE
    offsets, indices, values = csr_arguments(a)
    indices[:] = k  # one past the last row of B
    b = np.zeros((k, 64), np.float32)
    module = lower(parse(spmm_kernel(m, k, 64)), target)
    args = [offsets, indices, values, b, np.zeros((m, 64), np.float32)]
    with pytest.raises(
        AccessError, match=rf"dma_load: index \[{k}, 0\] is outside memref 'b'"
    ):
        run_hw_function(module, "f", args, load_target(target))


def test_an_offset_past_the_indices_is_an_error_at_the_scalar_read() -> None:
    a = pattern("single_nonzero")
    m, k = SHAPE
    offsets, indices, values = csr_arguments(a)
    offsets[-1] += 1  # the last row claims one entry more than there are
    module = lower(parse(spmm_kernel(m, k, 64)), "tiny")
    args = [offsets, indices, values, np.zeros((k, 64), np.float32)]
    with pytest.raises(
        AccessError, match=r"load_scalar: index \[1\] is outside memref 'idx'"
    ):
        run_hw_function(
            module, "f", [*args, np.zeros((m, 64), np.float32)], load_target("tiny")
        )


def test_a_window_past_the_indices_is_an_error_at_the_dma() -> None:
    """The prefetch reads 8 indices from each entry: without the padding its
    last window runs past the memref."""
    module, args = _prefetch_module("tiny")
    args[1] = args[1][:-7].copy()
    with pytest.raises(AccessError, match=r"dma_load: the 32 bytes from index"):
        run_hw_function(module, "f", args, load_target("tiny"))


GATHER = """
builtin.module {
  func.func @f(%idx: memref<64xindex>, %x: memref<32x64xf32>,
               %out: memref<64x64xf32>, %lo: index, %hi: index) {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    scf.for %p = %lo to %hi step %c3 {
      %col = memref.load %idx[%p] : memref<64xindex>
      %row = tile.load %x[%col, %c0] : memref<32x64xf32> -> !tile.tile<1x64xf32, ub>
      %e = tile.exp %row : !tile.tile<1x64xf32, ub>
      tile.store %e, %out[%p, %c0] : !tile.tile<1x64xf32, ub> -> memref<64x64xf32>
    }
    func.return
  }
}
"""


@pytest.mark.parametrize("pipelined", [True, False])
@pytest.mark.parametrize("target", TARGETS)
def test_gather_with_run_time_bounds(target: str, pipelined: bool) -> None:
    """tile-pipeline unrolls the loop of run-time bounds after a remainder
    loop (unless pipeline-runtime-bounds=false): every trip count (none,
    backwards, odd, even) runs exactly."""
    module = parse(GATHER)
    lowered = lower(module, target, pipeline_runtime_bounds=pipelined)
    loads = sum(isinstance(op, hw.DmaLoadOp) for op in lowered.walk())
    assert loads == (3 if pipelined else 1)
    rng = np.random.default_rng(5)
    for lo, hi in ((0, 64), (5, 5), (7, 2), (1, 11), (2, 9), (10, 13)):
        idx = rng.integers(0, 32, 64).astype(np.int64)
        x = rng.standard_normal((32, 64)).astype(np.float32)
        expected = np.zeros((64, 64), np.float32)
        run_tile_level(module, "f", [idx, x, expected, lo, hi])
        result = run_hw_function(
            lowered,
            "f",
            [idx, x, np.zeros((64, 64), np.float32), lo, hi],
            load_target(target),
        )
        np.testing.assert_array_equal(result.outputs[2], expected)


def test_data_cache_lines() -> None:
    """A miss fills the line: the next elements of the line hit; LRU evicts."""
    cache = DataCache(64, 128)  # two lines
    assert not cache.read(0, 0, 8)
    assert cache.read(0, 56, 64)
    assert not cache.read(0, 60, 68)  # spans into line 1
    assert not cache.read(1, 0, 8)  # another tensor: evicts line 0
    assert cache.read(0, 64, 72)
    assert not cache.read(0, 0, 8)


def test_scalar_reads_are_priced_by_the_data_cache() -> None:
    """Every row's offsets: the first read of each 64-byte line misses (a GM
    round trip), the next rows' hit; the S pipe is busy for them."""
    a = pattern("all_empty")
    m, k = SHAPE
    scalar = load_target("tiny").scalar
    module = lower(parse(spmm_kernel(m, k, 64)), "tiny")
    args = [*csr_arguments(a), np.zeros((k, 64), np.float32)]
    result = run_hw_function(
        module, "f", [*args, np.zeros((m, 64), np.float32)], load_target("tiny")
    )
    reads = [s for s in result.report.slices if s.name == "load_scalar"]
    assert len(reads) == 2 * m
    cycles = sorted(s.end - s.start for s in reads)
    misses = sum(c == scalar.gm_load for c in cycles)
    assert {c for c in cycles} <= {scalar.gm_load, scalar.dcache_hit}
    # Offsets 0..12 (13 x 8 bytes) lie in two lines; each core misses on its
    # first line, and once more where its rows cross into the second.
    assert 1 <= misses <= 2 * result.report.block_dim


@pytest.mark.parametrize("target", TARGETS)
def test_every_flag_of_the_scalar_unit_is_needed(target: str) -> None:
    """Without any one set/wait pair to or from S that hw-insert-sync gave the
    spmv with index tiles (rows of 20 entries: three chunks each, every path
    taken), the simulator reports a race, a deadlock or an event misuse, or the
    result changes. (Two flags between V and MTE2 around the loops of run-time
    bounds change nothing in any run: the analysis takes such a loop to run
    possibly zero times, docs/hw_insert_sync.md, *Limits*.)"""
    a = pattern("full")
    m, k = SHAPE
    x = np.random.default_rng(6).standard_normal(k).astype(np.float32)
    offsets, _, values = csr_arguments(a)
    args = [offsets, padded_indices(a), values, x]
    lowered = lower(parse(spmv_prefetch_kernel(m, k)), target)
    chip = load_target(target)

    def run(module: ModuleOp) -> bytes:
        y = np.full(m, np.nan, np.float32)
        run_hw_function(module, "f", [*(v.copy() for v in args), y], chip)
        return y.tobytes()

    # mte2 -> s before the reads, s -> mte2 after them
    assert_flags_needed(
        lowered, run, {(hw.Pipe.MTE2, hw.Pipe.S), (hw.Pipe.S, hw.Pipe.MTE2)}, 2
    )


def assert_flags_needed(
    lowered: ModuleOp,
    run: Callable[[ModuleOp], bytes],
    pairs: set[tuple[hw.Pipe, hw.Pipe]],
    count: int,
) -> None:
    """hw-insert-sync gave `lowered` `count` set/wait pairs between the pipes
    of `pairs`; without any one of them, `run` (the outputs' bytes) raises a
    `SimError` (a race, a deadlock, an event misuse) or returns other bytes."""
    reference = run(lowered.clone())
    syncs = resynchronise(lowered.clone())
    chosen = [i for i, sync in enumerate(syncs) if (sync.src, sync.dst) in pairs]
    assert len(chosen) == count
    kept = []
    for index in chosen:
        module = lowered.clone()
        for op in resynchronise(module)[index].ops:
            Rewriter.erase_op(op)
        try:
            if run(module) == reference:
                kept.append(index)
        except SimError:
            continue
    assert not kept, f"flags {kept} of {len(syncs)} change nothing"


EXTRACT = """
builtin.module {
  func.func @f(%idx: memref<16xi32>, %i: index, %j: index) -> (index, index) {
    %t = tile.load %idx[%i] : memref<16xi32> -> !tile.tile<8xi32, ub, valid = [5]>
    %v = tile.extract %t[%j] : !tile.tile<8xi32, ub, valid = [5]> -> index
    %w = memref.load %idx[%j] : memref<16xi32>
    %u = arith.index_cast %w : i32 to index
    func.return %v, %u : index, index
  }
}
"""


def test_tile_level_scalar_reads() -> None:
    """tile.extract and memref.load in the tile interpreter: the element read,
    sign-extended; outside the valid region or the memref, an error."""
    module = parse(EXTRACT)
    idx = np.arange(16, dtype=np.int32) - 8
    assert run_tile_level(module, "f", [idx, 2, 4]) == (-2, -4)
    with pytest.raises(Exception, match=r"outside the valid region \[5\]"):
        run_tile_level(module, "f", [idx, 2, 5])
    read = parse(
        "func.func @f(%idx: memref<16xi32>, %j: index) -> i32 {\n"
        "  %w = memref.load %idx[%j] : memref<16xi32>\n"
        "  func.return %w : i32\n}"
    )
    with pytest.raises(Exception, match=r"index \[16\] is outside the memref"):
        run_tile_level(read, "f", [idx, 16])
