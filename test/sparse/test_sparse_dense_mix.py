"""Dense ops beside sparse ones (docs/sparse.md, *Dense ops beside sparse
ones*): tv-sparse-to-tile outlines them, tv-to-tile tiles and inlines them.
End to end on the tile interpreter and the simulator, on both targets, against
the tv reference: exact where the dense op adds nothing of its own order
(elementwise), within the error bounds for a dense matmul."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from lowered import lower_once
from sparse_patterns import PATTERNS
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import pypto_mlir as pto
from pypto_mlir.check import compare_levels
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.universe import default_context

TARGETS = ("ascend910b", "tiny")


def _sparse(matrix, dtype=np.float16) -> SparseArray:
    return SparseArray(
        matrix.shape,
        getattr(matrix, "blocksize", (1, 1)),
        matrix.indptr.astype(np.int32),
        matrix.indices.astype(np.int32),
        matrix.data.astype(dtype),
    )


def _check(kernel: pto.Kernel, inputs: list, target: str, exact: bool) -> str:
    """Lower to tile and ascend_hw; compare each with the tv reference."""
    module = Parser(default_context(), kernel.mlir()).parse_module()
    text = _compare(module, inputs, LowerPipeline(target=target), exact)
    assert "tv." not in text and "func.call" not in text
    return text


def _compare(
    module: ModuleOp, inputs: list, pipeline: LowerPipeline, exact: bool
) -> str:
    """Lower `module` to tile and ascend_hw by `pipeline`, compare each with
    the tv reference; the ascend_hw text."""
    name = module.body.block.first_op.sym_name.data
    text = ""
    for level in ("tile", "ascend_hw"):
        lowered = lower_once(module, level, pipeline)
        text = str(lowered)
        for comparison in compare_levels(module, lowered, name, inputs):
            assert comparison.ok, comparison.describe()
            if exact:
                np.testing.assert_array_equal(comparison.actual, comparison.expected)
    return text


@pto.kernel(backend="reference")
def spmm_bias_relu(
    a: pto.CSR[(12, 20), pto.f16],
    b: pto.Tensor[(20, 32), pto.f16],
    c: pto.Tensor[(12, 32), pto.f16],
):
    return pto.relu(a @ b + c)


@pto.kernel(backend="reference")
def scaled_spmm(a: pto.CSR[(12, 20), pto.f16], b: pto.Tensor[(20, 32), pto.f16]):
    return (a * 0.5) @ b


@pto.kernel(backend="reference")
def spmm_then_matmul(
    a: pto.CSR[(32, 48), pto.f16],
    b: pto.Tensor[(48, 32), pto.f16],
    w: pto.Tensor[(32, 64), pto.f16],
):
    return (a @ b) @ w


@pto.kernel(backend="reference")
def scaled_softmax(
    mask: pto.CSR[(16, 24), pto.f16],
    q: pto.Tensor[(16, 32), pto.f16],
    k: pto.Tensor[(24, 32), pto.f16],
):
    return pto.softmax(pto.sddmm(mask, q, k, transpose_b=True) * 0.125)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", ["random", "empty_rows", "all_empty"])
def test_spmm_then_bias_and_relu(target: str, pattern: str) -> None:
    rng = np.random.default_rng(1)
    a = _sparse(PATTERNS[pattern]((12, 20), rng))
    b = rng.standard_normal((20, 32)).astype(np.float16)
    c = rng.standard_normal((12, 32)).astype(np.float16)
    _check(spmm_bias_relu, [a, b, c], target, exact=True)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", ["random", "power_law", "all_empty"])
def test_scaled_then_spmm(target: str, pattern: str) -> None:
    rng = np.random.default_rng(2)
    a = _sparse(PATTERNS[pattern]((12, 20), rng))
    b = rng.standard_normal((20, 32)).astype(np.float16)
    _check(scaled_spmm, [a, b], target, exact=True)


@pytest.mark.parametrize("target", TARGETS)
def test_spmm_result_times_a_dense_matrix(target: str) -> None:
    """The dense matmul sums K on the cube in its own order: within the error
    bounds of tv.matmul."""
    rng = np.random.default_rng(3)
    a = _sparse(PATTERNS["random"]((32, 48), rng))
    b = rng.standard_normal((48, 32)).astype(np.float16)
    w = rng.standard_normal((32, 64)).astype(np.float16)
    text = _check(spmm_then_matmul, [a, b, w], target, exact=False)
    assert "mmad" in text


@pytest.mark.parametrize("target", TARGETS)
def test_scaled_sddmm_softmax(target: str) -> None:
    rng = np.random.default_rng(4)
    mask = _sparse(PATTERNS["random"]((16, 24), rng))
    q = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    k = rng.uniform(-1, 1, (24, 32)).astype(np.float16)
    _check(scaled_softmax, [mask, q, k], target, exact=False)


def _values_map(rows: int, cols: int, block: int) -> str:
    """`exp(values) + 1` of a CSR (block 1) or BSR tensor, as MLIR."""
    blocked = "" if block == 1 else f", block = [{block}, {block}]"
    t = (
        f"!tv.tensor<{rows}x{cols}xf16, #tv.csr<rows = {rows}, cols = {cols}, "
        f"nnz = ?, index = i32{blocked}>>"
    )
    v = "!tv.tensor<?xf16>" if block == 1 else f"!tv.tensor<?x{block}x{block}xf16>"
    o = f"!tv.tensor<{rows // block + 1}xi32>"
    return f"""
func.func @values_map(%a: {t}) -> {t} {{
  %0, %1, %2 = tv.disassemble %a : {t} -> {o}, !tv.tensor<?xi32>, {v}
  %c = arith.constant 1.000000e+00 : f16
  %3 = tv.exp %2 : {v}
  %4 = tv.add %3, %c : {v}, f16 -> {v}
  %5 = tv.assemble %0, %1, %4 : {o}, !tv.tensor<?xi32>, {v} -> {t}
  func.return %5 : {t}
}}"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("window", [0, 16, 6, 1])
@pytest.mark.parametrize("pattern", ["random", "all_empty", "single_nonzero", "full"])
def test_values_map_by_windows(target: str, window: int, pattern: str) -> None:
    """exp(values) + 1 over windows of the values array (split over the
    cores, the rest in static pieces): exact against the tv reference, for
    counts below, at and above a window, whole GM blocks or not (6)."""
    rng = np.random.default_rng(5)
    a = _sparse(PATTERNS[pattern]((24, 40), rng))
    module = Parser(default_context(), _values_map(24, 40, 1)).parse_module()
    pipeline = LowerPipeline(target=target, sparse_values_window=window)
    _compare(module, [a], pipeline, exact=True)


@pytest.mark.parametrize("target", TARGETS)
def test_bsr_values_map_by_windows(target: str) -> None:
    """The values of 16x16 blocks by windows of whole blocks: exact."""
    rng = np.random.default_rng(6)
    keep = rng.random((4, 6)) < 0.6
    dense = np.kron(keep, rng.standard_normal((16, 16))).astype(np.float32)
    a = _sparse(sp.bsr_array(dense, blocksize=(16, 16)))
    module = Parser(default_context(), _values_map(64, 96, 16)).parse_module()
    _compare(module, [a], LowerPipeline(target=target), exact=True)


@pto.kernel(backend="reference")
def spmm_row_bias_relu(
    a: pto.CSR[(12, 20), pto.f16],
    b: pto.Tensor[(20, 32), pto.f16],
    bias: pto.Tensor[(32,), pto.f16],
):
    return pto.relu(a @ b + bias)


@pto.kernel(backend="reference")
def bsr_spmm_bias_relu(
    a: pto.BSR[(64, 48), pto.f16, (16, 16)],
    b: pto.Tensor[(48, 32), pto.f16],
    bias: pto.Tensor[(32,), pto.f16],
):
    return pto.relu(a @ b * 0.5 + bias)


@pytest.mark.xdist_group("spmm_epilogue")  # one worker: lower_once reuses
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("pattern", ["random", "empty_rows", "all_empty", "full"])
def test_spmm_epilogue(target: str, fuse: bool, pattern: str) -> None:
    """relu(a @ b + bias row) with the epilogue in the CSR row nest (and, on
    tiny, in the dense fallback's matmul) or outlined: exact."""
    rng = np.random.default_rng(7)
    a = _sparse(PATTERNS[pattern]((12, 20), rng))
    b = rng.standard_normal((20, 32)).astype(np.float16)
    bias = rng.standard_normal(32).astype(np.float16)
    module = Parser(default_context(), spmm_row_bias_relu.mlir()).parse_module()
    pipeline = LowerPipeline(target=target, sparse_fuse_epilogue=fuse)
    _compare(module, [a, b, bias], pipeline, exact=True)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fuse", [True, False])
def test_bsr_spmm_epilogue(target: str, fuse: bool) -> None:
    """relu(a @ b * 0.5 + bias) with BSR on the cube, empty block rows (their
    zeros go through the epilogue): exact."""
    rng = np.random.default_rng(8)
    keep = rng.random((4, 3)) < 0.5
    keep[1] = False
    dense = np.kron(keep, rng.standard_normal((16, 16))).astype(np.float32)
    a = _sparse(sp.bsr_array(dense, blocksize=(16, 16)))
    b = rng.standard_normal((48, 32)).astype(np.float16)
    bias = rng.standard_normal(32).astype(np.float16)
    module = Parser(default_context(), bsr_spmm_bias_relu.mlir()).parse_module()
    pipeline = LowerPipeline(target=target, sparse_fuse_epilogue=fuse)
    text = _compare(module, [a, b, bias], pipeline, exact=True)
    assert "mmad" in text
