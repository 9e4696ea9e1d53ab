"""Kernels compute what the same numpy expression computes.

f16 and f32 add/sub/mul/div are exact in the reference (f32 compute, one
rounding, which is what numpy's float16 arithmetic does too), so they are
compared bit for bit; reductions and matmul accumulate in f32 and are compared
with float64 references within the f32 summation error bound.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pypto_mlir as pto

SETTINGS = settings(max_examples=25, deadline=None)

BINARY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("+", lambda a, b: a + b),
    ("-", lambda a, b: a - b),
    ("*", lambda a, b: a * b),
    ("/", lambda a, b: a / b),
]

M = pto.sym("M")
N = pto.sym("N")
K = pto.sym("K")


@pto.kernel
def binary_ops(a: pto.Tensor[(M, N), pto.f16], b: pto.Tensor[(N,), pto.f16]):
    return tuple(op(a, b) for _, op in BINARY) + (
        pto.maximum(a, b),
        pto.minimum(b, a),
        2.5 - a,
        a / 3.0,
        1.0 / b,
    )


finite_f16 = st.floats(-100, 100, width=16)


@SETTINGS
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.tuples(
            hnp.arrays(
                np.float16,
                st.tuples(st.integers(1, 4), st.just(n)),
                elements=finite_f16,
            ),
            hnp.arrays(np.float16, (n,), elements=finite_f16),
        )
    )
)
def test_elementwise_f16_is_bit_exact(arrays: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = arrays
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        expected = [op(a, b) for _, op in BINARY] + [
            np.maximum(a, b),
            np.minimum(b, a),
            np.float16(2.5) - a,
            a / np.float16(3.0),
            np.float16(1.0) / b,
        ]
        actual = binary_ops(a, b)
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want)


@st.composite
def sliced(draw: st.DrawFn) -> tuple[np.ndarray, tuple[slice | int, ...]]:
    shape = draw(st.tuples(st.integers(1, 6), st.integers(1, 6)))
    array = np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape)
    key: list[slice | int] = []
    for extent in shape:
        if draw(st.booleans()):
            key.append(draw(st.integers(-extent, extent - 1)))
        else:
            bound = st.none() | st.integers(-extent - 2, extent + 2)
            key.append(
                slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3)))
            )
    return array, tuple(key)


@SETTINGS
@given(sliced())
def test_slicing_matches_numpy(
    case: tuple[np.ndarray, tuple[slice | int, ...]],
) -> None:
    array, key = case

    @pto.kernel
    def view(x: pto.Tensor[array.shape, pto.f32]):
        return x[key] + 0.0

    np.testing.assert_array_equal(view(array), array[key] + 0.0)


@SETTINGS
@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
        elements=st.floats(-10, 10, width=32),
    ),
    st.data(),
)
def test_reductions_and_transposes(array: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, array.ndim - 1))
    permutation = data.draw(st.permutations(range(array.ndim)))

    @pto.kernel(backend="reference")  # tv semantics; test_pipeline.py lowers them
    def k(x: pto.Tensor[array.shape, pto.f32]):
        return (
            x.sum(axis=axis),
            x.mean(axis=axis, keepdims=True),
            x.max(axis=axis),
            x.min(),
            x.transpose(permutation),
            x.T,
        )

    total, mean, largest, smallest, permuted, reversed_ = k(array)
    wide = array.astype(np.float64)
    bound = array.shape[axis] * 2.0**-23 * np.abs(wide).sum(axis=axis) + 1e-30
    assert np.all(np.abs(total - wide.sum(axis=axis)) <= bound)
    mean_bound = bound / array.shape[axis] * 2 + 2.0**-23 * np.abs(wide.mean(axis=axis))
    assert np.all(
        np.abs(mean - wide.mean(axis=axis, keepdims=True))
        <= np.expand_dims(mean_bound, axis)
    )
    np.testing.assert_array_equal(largest, array.max(axis=axis))
    np.testing.assert_array_equal(smallest, array.min())
    np.testing.assert_array_equal(permuted, array.transpose(permutation))
    np.testing.assert_array_equal(reversed_, array.T)


def test_matmul_f16_accumulates_in_f32() -> None:
    @pto.kernel
    def mm(a: pto.Tensor[(M, K), pto.f16], b: pto.Tensor[(K, N), pto.f16]):
        return a @ b, pto.matmul(a, b, out_dtype=pto.f32)

    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 256)).astype(np.float16)
    b = rng.standard_normal((256, 8)).astype(np.float16)
    c16, c32 = mm(a, b)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # f32 summation error bound, then one rounding to the result type.
    bound = 256 * 2.0**-23 * (np.abs(a).astype(np.float64) @ np.abs(b))
    assert np.all(np.abs(c32 - exact) <= bound)
    assert c16.dtype == np.float16
    np.testing.assert_array_equal(c16, c32.astype(np.float16))


def test_full_scalar_parameters_and_powers() -> None:
    @pto.kernel
    def k(x: pto.Tensor[(4,), pto.f32], alpha: pto.f32):
        return x * alpha + pto.full((4,), 0.5), x**2, x**-0.5

    x = np.array([1, 4, 9, 16], np.float32)
    y, square, rsqrt = k(x, 3)
    np.testing.assert_array_equal(y, x * 3 + 0.5)
    np.testing.assert_array_equal(square, x * x)
    np.testing.assert_allclose(rsqrt, 1 / np.sqrt(x), rtol=2**-22)
