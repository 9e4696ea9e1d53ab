"""Error bounds of tv values (pypto_mlir.error_bound) and their use by
`compare_arrays`: a reordered sum with cancellation is judged against what it
sums, a wrong value is still caught."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp, f32

from pypto_mlir.check import compare_arrays
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.error_bound import epsilon, run_with_error_bounds

EPS = epsilon(f32)


def parse(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "k.mlir")


SUM = """
func.func @f(%x: !tv.tensor<3xf32>) -> !tv.tensor<f32> {
  %s = tv.reduce_sum %x [0] : !tv.tensor<3xf32> -> !tv.tensor<f32>
  func.return %s : !tv.tensor<f32>
}
"""


def test_a_sum_is_bounded_by_the_magnitude_of_its_terms() -> None:
    x = np.array([1e8, 1.0, -1e8], dtype=np.float32)
    (total,), (bound,) = run_with_error_bounds(parse(SUM), "f", [x])
    assert bound == EPS * abs(float(total)) + EPS * (2e8 + 1)
    # Summed in another order, f32 gives another result: within a few ulps of
    # 2e8, far more than ulps of the result.
    reordered = (x[0] + x[2]) + x[1]
    assert reordered != total
    assert compare_arrays(0, total, reordered, f32, 8, bound).ok
    assert not compare_arrays(0, total, reordered, f32, 8).ok
    assert not compare_arrays(0, total, total + np.float32(1000), f32, 8, bound).ok


def test_bounds_carry_through_ops() -> None:
    text = """
func.func @f(%x: !tv.tensor<2x4xf32>, %b: !tv.tensor<4x3xf32>) -> (!tv.tensor<2x4xf32>, !tv.tensor<2x3xf32>, !tv.tensor<2x4xf32>, !tv.tensor<4x2xf32>) {
  %s = tv.reduce_sum %x [1] keepdims : !tv.tensor<2x4xf32> -> !tv.tensor<2x1xf32>
  %d = tv.sub %x, %s : !tv.tensor<2x4xf32>, !tv.tensor<2x1xf32> -> !tv.tensor<2x4xf32>
  %e = tv.exp %d : !tv.tensor<2x4xf32>
  %m = tv.matmul %x, %b acc(f32) : !tv.tensor<2x4xf32>, !tv.tensor<4x3xf32> -> !tv.tensor<2x3xf32>
  %t = tv.transpose %e [1, 0] : !tv.tensor<2x4xf32> -> !tv.tensor<4x2xf32>
  func.return %x, %m, %e, %t : !tv.tensor<2x4xf32>, !tv.tensor<2x3xf32>, !tv.tensor<2x4xf32>, !tv.tensor<4x2xf32>
}
"""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    (_, m, e, t), bounds = run_with_error_bounds(parse(text), "f", [x, b])
    x_bound, m_bound, e_bound, t_bound = bounds
    assert x_bound is not None and not x_bound.any()  # an argument is exact
    wide = np.abs(x.astype(np.float64)) @ np.abs(b.astype(np.float64))
    np.testing.assert_allclose(m_bound, EPS * (np.abs(m) + wide), rtol=1e-6)
    # exp carries the error of x - sum(x) (about eps * sum|x|) relative to e.
    s_bound = EPS * (
        np.abs(x).sum(axis=1, keepdims=True) + np.abs(x.sum(axis=1, keepdims=True))
    )
    d = x - x.sum(axis=1, keepdims=True)
    expected = EPS * np.abs(e) + np.abs(e) * (EPS * np.abs(d) + s_bound)
    np.testing.assert_allclose(e_bound, expected, rtol=1e-5)
    np.testing.assert_array_equal(t_bound, e_bound.T)
    assert t.shape == (4, 2)


def test_integer_results_have_no_bound() -> None:
    text = """
func.func @f(%x: !tv.tensor<4xi32>) -> !tv.tensor<i32> {
  %s = tv.reduce_sum %x [0] : !tv.tensor<4xi32> -> !tv.tensor<i32>
  func.return %s : !tv.tensor<i32>
}
"""
    _, (bound,) = run_with_error_bounds(
        parse(text), "f", [np.arange(4, dtype=np.int32)]
    )
    assert bound is None
