"""`x.reshape(...)`: a `tv.reshape` of a contiguous tensor, lowered without a
copy; run on the reference and through pypto-lower + the simulator."""

from __future__ import annotations

import numpy as np
import pytest

import pypto_mlir as pto


@pto.kernel
def heads(x: pto.Tensor[(6, 40), pto.f32]) -> pto.Tensor[(12, 20), pto.f32]:
    return pto.exp(x).reshape(12, -1) * 2.0


@pto.kernel
def flatten(x: pto.Tensor[(8, 16), pto.f16]) -> pto.Tensor[(64,), pto.f16]:
    return pto.relu(x[2:6].reshape((64,)))


def test_reshape_records_tv_reshape() -> None:
    text = heads.mlir()
    assert "tv.reshape %0 : !tv.tensor<6x40xf32> to !tv.tensor<12x20xf32>" in text


@pytest.mark.parametrize("backend", ["reference", "sim"])
def test_reshape_runs(backend: str) -> None:
    x = np.linspace(-2, 2, 240, dtype=np.float32).reshape(6, 40)
    np.testing.assert_allclose(
        heads(x, backend=backend), np.exp(x).reshape(12, 20) * 2, rtol=2e-6
    )
    h = np.linspace(-3, 3, 128).astype(np.float16).reshape(8, 16)
    np.testing.assert_array_equal(
        flatten(h, backend=backend), np.maximum(h[2:6].reshape(64), 0)
    )


def test_reshape_to_the_same_shape_is_the_tensor() -> None:
    @pto.kernel
    def same(x: pto.Tensor[(4, 8), pto.f32]) -> pto.Tensor[(4, 8), pto.f32]:
        return x.reshape(4, 8) + 1.0

    assert "tv.reshape" not in same.mlir()


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ((5, 7), "reshape: a (4, 8) tensor (32 elements) cannot become (5, 7)"),
        ((-1, -1), "reshape: only one size can be -1"),
        ((3, -1), "reshape: a (4, 8) tensor cannot become (3, -1)"),
        ((2.5,), "reshape: a size is an integer >= 0"),
    ],
)
def test_reshape_mistakes(shape: tuple[object, ...], message: str) -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f32]):
        return x.reshape(*shape)

    with pytest.raises(
        pto.KernelError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        bad.mlir()


def test_reshape_of_a_strided_slice_is_refused() -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f32]):
        return x[:, ::2].reshape(16)

    with pytest.raises(pto.KernelError, match="tv.reshape needs a contiguous operand"):
        bad.mlir()


@pto.kernel
def new_axes(x: pto.Tensor[(4, 8), pto.f16]):
    return x[:, None, :] * 2.0, x[None], x[2:, None], x[..., None]


@pto.kernel
def matrix_transpose(x: pto.Tensor[(3, 4, 8), pto.f16]):
    return x.mT, x[0].mT


def test_none_inserts_a_dimension_as_numpy() -> None:
    """`None` (np.newaxis) in an index: a dimension of size 1, a tv.reshape
    of the window."""
    assert "tv.reshape %x : !tv.tensor<4x8xf16> to !tv.tensor<4x1x8xf16>" in (
        new_axes.mlir()
    )
    x = np.arange(32, dtype=np.float16).reshape(4, 8)
    results = new_axes(x, backend="reference")
    for got, expected in zip(
        results, (x[:, None, :] * 2, x[None], x[2:, None], x[..., None]), strict=True
    ):
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_mt_swaps_the_last_two_dimensions() -> None:
    x = np.arange(96, dtype=np.float16).reshape(3, 4, 8)
    batch, matrix = matrix_transpose(x, backend="reference")
    np.testing.assert_array_equal(batch, np.swapaxes(x, -1, -2))
    np.testing.assert_array_equal(matrix, x[0].T)
