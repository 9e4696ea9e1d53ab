"""The sparse lowering (tv-sparse-to-tile, in pypto-lower) on the tile
interpreter against the tv reference (pypto_mlir/interp/sparse.py) and scipy:
exact for spmm/spmv (the row loop adds in the reference's entry order; block-CSR
on the cube too), to_dense, gather and sparse_softmax; sddmm within 4 ulps; the
patterns that break sparse
code (empty rows, all empty, one dense row, a single nonzero, nnz = rows x cols,
odd shapes, power-law rows, 16x16 blocks), on both targets."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from lowered import lower_once
from sparse_patterns import ODD_SHAPES, PATTERNS, block_pattern
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import pypto_mlir as pto
from pypto_mlir.check import check_lowering, compare_levels, lower
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.universe import default_context

TARGETS = ("ascend910b", "tiny")
DTYPES = {"f16": np.float16, "f32": np.float32}


def _module(text: str) -> ModuleOp:
    return Parser(default_context(), text).parse_module()


def _csr(rows: int, cols: int, dtype: str, block: tuple[int, int] = (1, 1)) -> str:
    extra = "" if block == (1, 1) else f", block = [{block[0]}, {block[1]}]"
    return (
        f"!tv.tensor<{rows}x{cols}x{dtype}, #tv.csr<rows = {rows}, cols = {cols}, "
        f"nnz = ?, index = i32{extra}>>"
    )


def spmm_module(m: int, k: int, n: int, dtype: str, block=(1, 1)) -> ModuleOp:
    a = _csr(m, k, dtype, block)
    return _module(
        f"""
func.func @f(%a: {a}, %b: !tv.tensor<{k}x{n}x{dtype}>) -> !tv.tensor<{m}x{n}x{dtype}> {{
  %c = tv.spmm %a, %b : {a}, !tv.tensor<{k}x{n}x{dtype}> -> !tv.tensor<{m}x{n}x{dtype}>
  func.return %c : !tv.tensor<{m}x{n}x{dtype}>
}}"""
    )


def spmv_module(m: int, k: int, dtype: str) -> ModuleOp:
    a = _csr(m, k, dtype)
    return _module(
        f"""
func.func @f(%a: {a}, %x: !tv.tensor<{k}x{dtype}>) -> !tv.tensor<{m}x{dtype}> {{
  %c = tv.spmv %a, %x : {a}, !tv.tensor<{k}x{dtype}> -> !tv.tensor<{m}x{dtype}>
  func.return %c : !tv.tensor<{m}x{dtype}>
}}"""
    )


def dense_module(m: int, n: int, dtype: str, block=(1, 1)) -> ModuleOp:
    a = _csr(m, n, dtype, block)
    return _module(
        f"""
func.func @f(%a: {a}) -> !tv.tensor<{m}x{n}x{dtype}> {{
  %c = tv.to_dense %a : {a} -> !tv.tensor<{m}x{n}x{dtype}>
  func.return %c : !tv.tensor<{m}x{n}x{dtype}>
}}"""
    )


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _sparse(matrix: sp.sparray, dtype: str) -> SparseArray:
    block = (1, 1) if matrix.format == "csr" else matrix.blocksize
    values = matrix.data.astype(DTYPES[dtype])
    return SparseArray(
        matrix.shape,
        tuple(block),
        matrix.indptr.astype(np.int32),
        matrix.indices.astype(np.int32),
        values,
    )


def _check(
    module: ModuleOp, inputs: list, target: str, exact: bool = True, **options
) -> ModuleOp:
    lowered = lower_once(module, "tile", LowerPipeline(target=target, **options))
    for comparison in compare_levels(module, lowered, "f", inputs):
        assert comparison.ok, comparison.describe()
        if exact:
            np.testing.assert_array_equal(comparison.actual, comparison.expected)
    return lowered


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_csr_spmm_patterns(pattern: str, target: str) -> None:
    rng = _rng(pattern, target)
    a = PATTERNS[pattern]((9, 13), rng)
    b = rng.standard_normal((13, 20)).astype(np.float16)
    _check(spmm_module(9, 13, 20, "f16"), [_sparse(a, "f16"), b], target)


@pytest.mark.parametrize("shape", ODD_SHAPES)
def test_csr_spmm_odd_shapes_f32(shape: tuple[int, int]) -> None:
    rng = _rng("odd", shape)
    a = PATTERNS["random"](shape, rng)
    b = rng.standard_normal((shape[1], 11)).astype(np.float32)
    _check(spmm_module(*shape, 11, "f32"), [_sparse(a, "f32"), b], "tiny")


def test_csr_spmm_matches_scipy() -> None:
    rng = _rng("scipy")
    a = PATTERNS["power_law"]((40, 24), rng)
    b = rng.standard_normal((24, 70)).astype(np.float32)
    lowered = lower(
        spmm_module(40, 24, 70, "f32"), "tile", LowerPipeline(target="tiny")
    )
    from pypto_mlir.check import run_tile_level

    out = np.full((40, 70), np.nan, np.float32)
    args = [a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data, b, out]
    run_tile_level(lowered, "f", args)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "pattern", ["empty_rows", "all_empty", "single_nonzero", "full"]
)
def test_csr_spmv(pattern: str, target: str) -> None:
    rng = _rng("spmv", pattern)
    a = PATTERNS[pattern]((17, 9), rng)
    x = rng.standard_normal(9).astype(np.float16)
    _check(spmv_module(17, 9, "f16"), [_sparse(a, "f16"), x], target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_bsr_spmm_on_the_cube(density: float, target: str) -> None:
    rng = _rng("bsr", density, target)
    a = block_pattern((64, 48), (16, 16), rng, density)
    b = rng.standard_normal((48, 40)).astype(np.float16)
    _check(spmm_module(64, 48, 40, "f16", (16, 16)), [_sparse(a, "f16"), b], target)


def test_bsr_spmm_without_the_cube() -> None:
    """bsr-cube=false: the vector row loop adds the terms of a block one by
    one, where the reference multiplies blocks with numpy: within 4 ulps."""
    rng = _rng("bsr-vector")
    a = block_pattern((32, 32), (16, 16), rng, 0.5)
    b = rng.standard_normal((32, 24)).astype(np.float16)
    lowered = _check(
        spmm_module(32, 32, 24, "f16", (16, 16)),
        [_sparse(a, "f16"), b],
        "tiny",
        exact=False,
        bsr_cube=False,
    )
    assert "tile.matmul" not in str(lowered)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("block", [(1, 1), (2, 4), (16, 16)])
def test_to_dense(block: tuple[int, int], target: str) -> None:
    rng = _rng("dense", block)
    shape = (32, 48)
    a = (
        PATTERNS["power_law"](shape, rng)
        if block == (1, 1)
        else block_pattern(shape, block, rng, 0.3)
    )
    _check(dense_module(*shape, "f32", block), [_sparse(a, "f32")], target)


@pytest.mark.parametrize("target", TARGETS)
def test_gather_rows(target: str) -> None:
    rng = _rng("gather", target)
    module = _module(
        """
func.func @f(%x: !tv.tensor<50x40xf16>, %idx: !tv.tensor<3x4xi32>) -> !tv.tensor<3x4x40xf16> {
  %g = tv.gather %x[%idx] : !tv.tensor<50x40xf16>, !tv.tensor<3x4xi32> -> !tv.tensor<3x4x40xf16>
  func.return %g : !tv.tensor<3x4x40xf16>
}"""
    )
    x = rng.standard_normal((50, 40)).astype(np.float16)
    idx = rng.integers(0, 50, (3, 4)).astype(np.int32)
    _check(module, [x, idx], target)


def softmax_module(m: int, n: int, dtype: str, block=(1, 1)) -> ModuleOp:
    a = _csr(m, n, dtype, block)
    return _module(
        f"""
func.func @f(%a: {a}) -> {a} {{
  %p = tv.sparse_softmax %a : {a}
  func.return %p : {a}
}}"""
    )


def sddmm_module(m: int, n: int, k: int, dtype: str, block=(1, 1), transpose_b=True):
    mask = _csr(m, n, dtype, block)
    rhs = f"{n}x{k}" if transpose_b else f"{k}x{n}"
    flag = " transpose_b" if transpose_b else ""
    return _module(
        f"""
func.func @f(%m: {mask}, %q: !tv.tensor<{m}x{k}x{dtype}>, %k: !tv.tensor<{rhs}x{dtype}>) -> {mask} {{
  %s = tv.sddmm %m, %q, %k{flag} : {mask}, !tv.tensor<{m}x{k}x{dtype}>, !tv.tensor<{rhs}x{dtype}> -> {mask}
  func.return %s : {mask}
}}"""
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "pattern", ["empty_rows", "all_empty", "one_dense_row", "power_law"]
)
def test_csr_sparse_softmax(pattern: str, target: str) -> None:
    rng = _rng("softmax", pattern)
    a = PATTERNS[pattern]((12, 20), rng)
    _check(softmax_module(12, 20, "f16"), [_sparse(a, "f16")], target)


@pytest.mark.parametrize("block", [(2, 4), (16, 16)])
def test_bsr_sparse_softmax(block: tuple[int, int]) -> None:
    rng = _rng("bsr-softmax", block)
    a = block_pattern((32, 64), block, rng, 0.4)
    _check(softmax_module(32, 64, "f32", block), [_sparse(a, "f32")], "tiny")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", ["empty_rows", "single_nonzero", "full"])
def test_csr_sddmm(pattern: str, target: str) -> None:
    """Within 4 ulps: the reference's dot products are numpy matmuls, the
    nest sums lane products with a row reduction."""
    rng = _rng("sddmm", pattern)
    mask = PATTERNS[pattern]((10, 14), rng)
    q = rng.standard_normal((10, 40)).astype(np.float16)
    k = rng.standard_normal((14, 40)).astype(np.float16)
    _check(sddmm_module(10, 14, 40, "f16"), [_sparse(mask, "f16"), q, k], target, False)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("transpose_b", [True, False])
def test_bsr_sddmm_on_the_cube(transpose_b: bool, target: str) -> None:
    """Within 4 ulps: numpy's batched matmul (the reference) and its 2-d one
    (the cube's) may order the K sums differently."""
    rng = _rng("bsr-sddmm", transpose_b)
    mask = block_pattern((48, 32), (16, 16), rng, 0.5)
    q = rng.standard_normal((48, 32)).astype(np.float16)
    k = rng.standard_normal((32, 32)).astype(np.float16)
    module = sddmm_module(48, 32, 32, "f16", (16, 16), transpose_b)
    _check(module, [_sparse(mask, "f16"), q, k], target, False)


@pytest.mark.parametrize("target", TARGETS)
def test_block_attention_chain(target: str) -> None:
    """`softmax(sddmm(mask, q, k.T)) @ v` from the frontend: the scores and
    probabilities go through GM temporaries of the mask's pattern (values
    only); within 4 ulps (the sddmm)."""

    @pto.kernel(backend="reference")
    def attention(
        mask: pto.BSR[(64, 64), pto.f16, (16, 16)],
        q: pto.Tensor[(64, 32), pto.f16],
        k: pto.Tensor[(64, 32), pto.f16],
        v: pto.Tensor[(64, 40), pto.f16],
    ):
        return pto.softmax(pto.sddmm(mask, q, k, transpose_b=True)) @ v

    rng = _rng("attention", target)
    mask = block_pattern((64, 64), (16, 16), rng, 0.4)
    q, k = (rng.standard_normal((64, 32)).astype(np.float16) for _ in range(2))
    v = rng.standard_normal((64, 40)).astype(np.float16)
    module = attention.module()
    inputs = [_sparse(mask, "f16"), q, k, v]
    lowered = lower(module, "tile", LowerPipeline(target=target))
    assert str(lowered).count("memref.alloc") == 2
    for comparison in compare_levels(module, lowered, "attention", inputs):
        assert comparison.ok, comparison.describe()


def test_csr_chain_to_dense() -> None:
    """A sparse result read by another sparse op (a GM temporary) and one
    returned (its values buffer): exact."""
    a = _csr(12, 20, "f32")
    module = _module(
        f"""
func.func @f(%a: {a}) -> ({a}, !tv.tensor<12x20xf32>) {{
  %p = tv.sparse_softmax %a : {a}
  %d = tv.to_dense %p : {a} -> !tv.tensor<12x20xf32>
  func.return %p, %d : {a}, !tv.tensor<12x20xf32>
}}"""
    )
    rng = _rng("chain")
    _check(module, [_sparse(PATTERNS["power_law"]((12, 20), rng), "f32")], "tiny")


@settings(max_examples=10, deadline=None, derandomize=True)
@given(
    rows=st.integers(1, 12),
    cols=st.integers(1, 12),
    n=st.integers(1, 40),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
)
def test_drawn_csr_spmm(
    rows: int, cols: int, n: int, density: float, seed: int
) -> None:
    """Drawn shapes and patterns: the row nest of whole rows is exact (tiny,
    f32; divided rows: test_spmm_divide_rows.py)."""
    rng = np.random.default_rng(seed)
    mask = rng.random((rows, cols)) < density
    a = sp.csr_array(np.where(mask, rng.standard_normal((rows, cols)), 0.0))
    b = rng.standard_normal((cols, n)).astype(np.float32)
    module = spmm_module(rows, cols, n, "f32")
    _check(module, [_sparse(a, "f32"), b], "tiny", sparse_divide_rows=False)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", ["random", "all_empty", "one_dense_row"])
def test_bsr_softmax_on_the_simulator(pattern: str, target: str) -> None:
    """Block-CSR softmax by whole-block tiles, its block rows split over the
    cores (pypto.row_entries): exact against the tv reference on the
    simulator, no race between the cores' entry ranges."""
    rng = _rng("bsr-softmax-hw", pattern, target)
    blocks = PATTERNS[pattern]((8, 4), rng).toarray() != 0
    a = sp.bsr_array(
        np.kron(blocks, rng.standard_normal((16, 16))).astype(np.float32),
        blocksize=(16, 16),
    )
    module = softmax_module(128, 64, "f16", (16, 16))
    check = check_lowering(
        module, "f", [_sparse(a, "f16")], pipeline=LowerPipeline(target=target)
    )
    for comparison in check.comparisons:
        assert comparison.ok, comparison.describe()
        np.testing.assert_array_equal(comparison.actual, comparison.expected)
    assert "ascend_hw.block_idx" in str(check.lowered)


def _gather_module(rows: int, cols: int, index_shape: tuple[int, ...]) -> ModuleOp:
    shape = "x".join(map(str, index_shape))
    return _module(
        f"""
func.func @f(%x: !tv.tensor<{rows}x{cols}xf16>, %idx: !tv.tensor<{shape}xi32>) -> !tv.tensor<{shape}x{cols}xf16> {{
  %g = tv.gather %x[%idx] : !tv.tensor<{rows}x{cols}xf16>, !tv.tensor<{shape}xi32> -> !tv.tensor<{shape}x{cols}xf16>
  func.return %g : !tv.tensor<{shape}x{cols}xf16>
}}"""
    )


# The CSR row nest on the simulator (passes/csr_spmm_nest.py): index prefetch
# (windows of 64 entries: nnz >= 64 takes them, a row of 80 entries two) and the
# nnz-balanced core split, each switched off; exact against the tv reference,
# and no race between cores (the split's rows end on whole GM blocks).
SPMM_OPTIONS = (
    {},
    {"sparse_index_prefetch": False},
    {"sparse_nnz_balance": False},
    {"sparse_index_prefetch": False, "sparse_nnz_balance": False},
)


def _check_hw(module: ModuleOp, inputs: list, target: str, **options) -> None:
    lowered = lower_once(module, "ascend_hw", LowerPipeline(target=target, **options))
    for comparison in compare_levels(module, lowered, "f", inputs):
        np.testing.assert_array_equal(comparison.actual, comparison.expected)


@pytest.mark.xdist_group("csr_spmm_hw")  # one worker: lower_once reuses
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_csr_spmm_on_the_simulator(pattern: str, target: str) -> None:
    rng = _rng("hw", pattern, target)
    a = PATTERNS[pattern]((40, 80), rng)
    b = rng.standard_normal((80, 24)).astype(np.float16)
    _check_hw(spmm_module(40, 80, 24, "f16"), [_sparse(a, "f16"), b], target)


@pytest.mark.xdist_group("csr_spmm_switches")  # one worker: lower_once reuses
@pytest.mark.parametrize("options", SPMM_OPTIONS, ids=str)
@pytest.mark.parametrize("pattern", ["power_law", "full", "empty_rows"])
def test_csr_spmm_switches_on_the_simulator(pattern: str, options: dict) -> None:
    rng = _rng("switches", pattern)
    a = PATTERNS[pattern]((37, 70), rng)
    b = rng.standard_normal((70, 40)).astype(np.float32)
    _check_hw(
        spmm_module(37, 70, 40, "f32"), [_sparse(a, "f32"), b], "ascend910b", **options
    )


# The resident slice of b (resident-b, passes/csr_spmm_nest.py): the cores over
# row groups x column slices, each entry's row of b gathered on chip with
# tile.gather. Shapes where the cost model takes it: on ascend910b 1000 deep x
# 96 columns (2 slices of 48: 192 KB of f16 do not fit ub beside the windows)
# and 300 x 64 (1 slice); on tiny 40 x 32 (2 slices of 16 in its 4 KiB).
# Exact against the tv reference (the entry order of the sums is kept; the
# dense fallback, which tiny takes from a few entries, is off).
RESIDENT_SHAPES = {
    "ascend910b": [(37, 1000, 96), (21, 300, 64)],
    "tiny": [(13, 40, 32)],
}


@pytest.mark.xdist_group("csr_spmm_resident")  # one worker: lower_once reuses
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_csr_spmm_resident_slices_on_the_simulator(pattern: str, target: str) -> None:
    for m, k, n in RESIDENT_SHAPES[target]:
        if pattern == "full" and m * k > 10000:
            continue  # nnz = rows x cols on the small shapes only (time)
        rng = _rng("resident", pattern, target, m)
        a = PATTERNS[pattern]((m, k), rng)
        b = rng.standard_normal((k, n)).astype(np.float16)
        module = spmm_module(m, k, n, "f16")
        pipeline = LowerPipeline(target=target, sparse_dense_fallback=False)
        assert "tile.gather" in str(lower_once(module, "tile", pipeline))
        _check_hw(module, [_sparse(a, "f16"), b], target, sparse_dense_fallback=False)


def _gather_sources(module: ModuleOp, **options) -> set[str]:
    """The tile types `tile.gather` takes rows of in `module` lowered to tile."""
    tiled = str(lower(module, "tile", LowerPipeline(target="ascend910b", **options)))
    return set(re.findall(r"tile\.gather %\S+\[[^\]]*\] : (!tile\.tile<[^>]*>)", tiled))


def test_csr_spmm_resident_slices_off() -> None:
    """resident-b=false gathers no row of a slice of b (300 x 64) in ub: the
    rows of b come from GM, and the only `tile.gather`s left take rows of the
    8-row tiles of gather-runs; with that off too, none."""
    module = spmm_module(21, 300, 64, "f16")
    runs = _gather_sources(module, sparse_resident_b=False)
    assert runs == {"!tile.tile<8x64xf16, ub>"}
    none = _gather_sources(module, sparse_resident_b=False, sparse_gather_runs=False)
    assert none == set()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("run", [1, 2, 4])
def test_gather_runs_on_the_simulator(run: int, target: str) -> None:
    """Runs of consecutive indices (one DMA of `run` rows), groups that are
    not (rows one by one: a descending pair, a repeat, a gap), a run near the
    source's last row, and a remainder of n mod run: exact on the simulator,
    for every gather-run."""
    idx = np.array(
        [
            [0, 1, 2, 3, 9, 8, 7, 6, 5, 5, 6],
            [30, 31, 33, 34, 10, 11, 12, 13, 1, 2, 3],
            [45, 46, 47, 48, 20, 21, 22, 23, 46, 47, 49],
        ],
        np.int32,
    )
    x = _rng("gather-runs").standard_normal((50, 72)).astype(np.float16)
    check = check_lowering(
        _gather_module(50, 72, idx.shape),
        "f",
        [x, idx],
        pipeline=LowerPipeline(target=target, sparse_gather_run=run),
    )
    for comparison in check.comparisons:
        assert comparison.ok, comparison.describe()
        np.testing.assert_array_equal(comparison.actual, x[idx])
    assert ("scf.if" in str(check.lowered)) == (run > 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("window", [1, 4, 8])
@pytest.mark.parametrize("pattern", ["one_dense_row", "power_law", "full"])
def test_csr_softmax_windows_on_the_simulator(
    pattern: str, window: int, target: str
) -> None:
    """CSR softmax: the max and the quotients by windows of entries, the sum
    entry by entry: exact on the simulator for every entry-window."""
    rng = _rng("csr-softmax-hw", pattern, target)
    a = PATTERNS[pattern]((12, 21), rng)
    check = check_lowering(
        softmax_module(12, 21, "f16"),
        "f",
        [_sparse(a, "f16")],
        pipeline=LowerPipeline(target=target, sparse_entry_window=window),
    )
    for comparison in check.comparisons:
        assert comparison.ok, comparison.describe()
        np.testing.assert_array_equal(comparison.actual, comparison.expected)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", ["random", "one_dense_row", "power_law"])
def test_csr_spmv_on_the_simulator(pattern: str, target: str) -> None:
    rng = _rng("spmv-hw", pattern, target)
    a = PATTERNS[pattern]((50, 90), rng)
    x = rng.standard_normal(90).astype(np.float16)
    _check_hw(spmv_module(50, 90, "f16"), [_sparse(a, "f16"), x], target)
