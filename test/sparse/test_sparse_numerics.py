"""Sparse kernels end to end (frontend, tv reference interpreter) against scipy
and numpy, on the patterns that break sparse code: empty rows, an all-empty
matrix, one dense row among empty ones, a single nonzero, nnz = rows x cols,
odd shapes, power-law rows, and hypothesis-drawn patterns."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sparse_patterns import (
    ODD_SHAPES,
    PATTERNS,
    block_pattern,
    masked_softmax,
    softmax_rows,
)

import pypto_mlir as pto
from pypto_mlir.error_bound import run_with_error_bounds
from pypto_mlir.interp.sparse import SparseArray

M, N, K, D = (pto.sym(name) for name in "MNKD")


@pto.kernel(backend="reference")
def spmm32(a: pto.CSR[(M, K), pto.f32], b: pto.Tensor[(K, N), pto.f32]):
    return a @ b


@pto.kernel(backend="reference")
def spmv32(a: pto.CSR[(M, K), pto.f32], x: pto.Tensor[(K,), pto.f32]):
    return a @ x


@pto.kernel(backend="reference")
def sddmm32(
    mask: pto.CSR[(M, N), pto.f32],
    q: pto.Tensor[(M, D), pto.f32],
    k: pto.Tensor[(N, D), pto.f32],
):
    return pto.sddmm(mask, q, k, transpose_b=True)


@pto.kernel(backend="reference")
def softmax32(a: pto.CSR[(M, N), pto.f32]):
    return pto.softmax(a)


@pto.kernel(backend="reference")
def dense32(a: pto.CSR[(M, N), pto.f32]):
    return a.to_dense()


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("shape", ODD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_csr_ops_match_scipy(pattern: str, shape: tuple[int, int]) -> None:
    rng = _rng(zlib.crc32(f"{pattern}{shape}".encode()))
    a = PATTERNS[pattern](shape, rng)
    b = rng.standard_normal((shape[1], 3)).astype(np.float32)
    x = rng.standard_normal(shape[1]).astype(np.float32)
    np.testing.assert_allclose(spmm32(a, b), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(spmv32(a, x), a @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(dense32(a), a.toarray())
    q = rng.standard_normal((shape[0], 4)).astype(np.float32)
    k = rng.standard_normal((shape[1], 4)).astype(np.float32)
    scores = sddmm32(a, q, k)
    assert isinstance(scores, sp.csr_array)
    np.testing.assert_array_equal(scores.indptr, a.indptr)
    np.testing.assert_array_equal(scores.indices, a.indices)
    expected = (q @ k.T)[a.nonzero()] if a.nnz else np.zeros(0)
    np.testing.assert_allclose(scores.data, expected, rtol=1e-5, atol=1e-5)
    probabilities = softmax32(a)
    np.testing.assert_allclose(probabilities.toarray(), softmax_rows(a), atol=1e-6)


def test_softmax_ignores_entries_that_are_not_stored() -> None:
    """A stored -10 among absent entries gets probability 1, not exp(-10)/(…+exp(0))."""
    a = sp.csr_array((np.array([-10.0, 3.0], np.float32), [1, 0], [0, 1, 1, 2]), (3, 4))
    p = softmax32(a).toarray()
    np.testing.assert_array_equal(p, [[0, 1, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]])


def test_nnz_is_a_runtime_size() -> None:
    """Same shape, other nnz: the traced kernel is reused (no recompile)."""

    @pto.kernel(backend="reference")
    def scale(a: pto.CSR[(16, 16), pto.f32], b: pto.Tensor[(16, 2), pto.f32]):
        return (a * 2.0) @ b

    b = np.ones((16, 2), np.float32)
    for density in (0.1, 0.5, 1.0):
        a = sp.random_array((16, 16), density=density, format="csr", rng=_rng(1))
        np.testing.assert_allclose(scale(a, b), 2.0 * (a @ b), rtol=1e-5)
    assert scale.cache_info().misses == 1
    assert "nnz = ?" in scale.mlir()


@pytest.mark.parametrize("block", [(16, 16), (4, 8)])
def test_bsr_attention_matches_dense_masked(block: tuple[int, int]) -> None:
    """softmax(sddmm(mask, q, k.T) * s) @ v with a BSR mask, in f16, against the
    dense masked form in float64."""

    @pto.kernel(backend="reference")
    def attention(
        mask: pto.BSR[(64, 64), pto.f16, block],
        q: pto.Tensor[(64, 32), pto.f16],
        k: pto.Tensor[(64, 32), pto.f16],
        v: pto.Tensor[(64, 32), pto.f16],
    ):
        p = pto.softmax(pto.sddmm(mask, q, k, transpose_b=True) * 0.125)
        return p @ v, p

    rng = _rng(2)
    mask = block_pattern((64, 64), block, rng)
    q, k, v = (rng.uniform(-1, 1, (64, 32)).astype(np.float16) for _ in range(3))
    out, p = attention(mask, q, k, v)
    assert isinstance(p, sp.bsr_array) and p.blocksize == block
    assert p.data.dtype == np.float32  # scipy has no float16: the f16 values, exactly
    np.testing.assert_array_equal(p.data.astype(np.float16), p.data)
    expected_p = masked_softmax(mask.toarray() != 0, q, k, 0.125)
    np.testing.assert_allclose(p.toarray(), expected_p, atol=2e-3)
    np.testing.assert_allclose(out, expected_p @ v.astype(np.float64), atol=4e-3)


def test_bsr_spmm_and_to_dense() -> None:
    @pto.kernel(backend="reference")
    def both(a: pto.BSR[(M, K), pto.f32, (8, 4)], b: pto.Tensor[(K, 5), pto.f32]):
        return a @ b, a.to_dense()

    rng = _rng(3)
    for density in (0.0, 0.3, 1.0):
        a = block_pattern((24, 12), (8, 4), rng, density)
        b = rng.standard_normal((12, 5)).astype(np.float32)
        product, dense = both(a, b)
        np.testing.assert_allclose(product, a @ b, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(dense, a.toarray())


def test_topk_gather_rows() -> None:
    """Top-k attention's gather: each query row picks k key rows."""

    @pto.kernel(backend="reference")
    def topk(
        q: pto.Tensor[(8, 16), pto.f16],
        kv: pto.Tensor[(128, 16), pto.f16],
        idx: pto.Tensor[(8, 4), pto.i32],
    ):
        picked = kv[idx]  # 8 x 4 x 16
        return pto.gather(kv, idx), picked

    rng = _rng(4)
    kv = rng.standard_normal((128, 16)).astype(np.float16)
    idx = rng.integers(0, 128, (8, 4)).astype(np.int32)
    via_function, via_index = topk(np.zeros((8, 16), np.float16), kv, idx)
    np.testing.assert_array_equal(via_function, kv[idx])
    np.testing.assert_array_equal(via_index, kv[idx])


def test_triples_and_scipy_arrays_agree() -> None:
    rng = _rng(5)
    a = PATTERNS["power_law"]((40, 24), rng)
    b = rng.standard_normal((24, 3)).astype(np.float32)
    from_triple = spmm32((a.indptr, a.indices, a.data), b)
    np.testing.assert_array_equal(from_triple, spmm32(a, b))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    rows=st.integers(1, 12),
    cols=st.integers(1, 12),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
)
def test_drawn_patterns(rows: int, cols: int, density: float, seed: int) -> None:
    rng = _rng(seed)
    a = sp.csr_array(
        np.where(
            rng.random((rows, cols)) < density, rng.standard_normal((rows, cols)), 0
        ).astype(np.float32)
    )
    b = rng.standard_normal((cols, 2)).astype(np.float32)
    np.testing.assert_allclose(spmm32(a, b), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(softmax32(a).toarray(), softmax_rows(a), atol=1e-6)


def test_error_bounds_cover_the_sparse_ops() -> None:
    """pypto_mlir.error_bound has a rule for every sparse op: the bound of the
    BSR attention's outputs contains the f16 result's distance from float64."""

    @pto.kernel(backend="reference")
    def attention(
        mask: pto.BSR[(32, 32), pto.f16, (8, 8)],
        q: pto.Tensor[(32, 16), pto.f16],
        k: pto.Tensor[(32, 16), pto.f16],
    ):
        p = pto.softmax(pto.sddmm(mask, q, k, transpose_b=True) * 0.25)
        return p @ q, p.to_dense()

    rng = _rng(6)
    mask = block_pattern((32, 32), (8, 8), rng)
    q = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    k = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    args = [
        SparseArray(
            mask.shape,
            (8, 8),
            mask.indptr.astype(np.int32),
            mask.indices.astype(np.int32),
            mask.data.astype(np.float16),
        ),
        q,
        k,
    ]
    outputs, bounds = run_with_error_bounds(attention.module(), "attention", args)
    exact_p = masked_softmax(mask.toarray() != 0, q, k, 0.25)
    for output, bound, exact in zip(
        outputs, bounds, (exact_p @ q.astype(np.float64), exact_p), strict=True
    ):
        assert bound is not None and np.all(np.isfinite(bound))
        assert np.max(bound) < 0.05  # a bound, not "anything"
        assert np.all(np.abs(output.astype(np.float64) - exact) <= bound + 1e-12)
