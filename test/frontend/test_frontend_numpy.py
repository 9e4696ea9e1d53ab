"""numpy functions on traced tensors: a located KernelError naming what to write
(a traced tensor has no values; numpy cannot compute on it), while numpy
scalars on the left of an operator still work as Python numbers do."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pypto_mlir as pto

HERE = os.path.basename(__file__)

CASES: list[tuple[str, Callable[[Any, Any], Any], str]] = [
    ("exp", lambda x, y: np.exp(x), "np.exp cannot be applied to a traced tensor"),
    ("sqrt", lambda x, y: np.sqrt(x), "write pto.sqrt(x)"),
    ("log", lambda x, y: np.log(x), "write pto.log(x)"),
    ("tanh", lambda x, y: np.tanh(x), "write pto.tanh(x)"),
    ("abs", lambda x, y: np.abs(x), "write pto.abs(x)"),
    ("negative", lambda x, y: np.negative(x), "write -x (or pto.neg(x))"),
    ("reciprocal", lambda x, y: np.reciprocal(x), "write pto.reciprocal(x)"),
    ("maximum", lambda x, y: np.maximum(x, y), "write pto.maximum(x, y)"),
    ("minimum", lambda x, y: np.minimum(x, 0.0), "write pto.minimum(x, y)"),
    ("add", lambda x, y: np.add(x, y), "write x + y"),
    ("multiply", lambda x, y: np.multiply(x, 2.0), "write x * y"),
    ("sum", lambda x, y: np.sum(x), "np.sum cannot be applied; write x.sum(axis)"),
    ("max", lambda x, y: np.max(x, axis=0), "write x.max(axis)"),
    ("mean", lambda x, y: np.mean(x), "write x.mean(axis)"),
    ("transpose", lambda x, y: np.transpose(x), "write x.transpose(...) or x.T"),
    ("floor", lambda x, y: np.floor(x), "and pto has no function for it"),
    ("where", lambda x, y: np.where(x, x, y), "np.where cannot be applied"),
]


@pytest.mark.parametrize(
    ("name", "call", "message"), CASES, ids=[name for name, _, _ in CASES]
)
def test_numpy_function_on_a_traced_tensor_is_a_located_error(
    name: str, call: Callable[[Any, Any], Any], message: str
) -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f32], y: pto.Tensor[(4, 8), pto.f32]):
        return call(x, y)

    with pytest.raises(pto.KernelError) as caught:
        bad.mlir()
    error = caught.value
    for part in message.split("; "):
        assert part in error.message, error.message
    assert error.location is not None
    assert os.path.basename(error.location.file) == HERE
    # the lambda's line in CASES: the innermost line outside the frontend
    assert "cannot be applied to a traced tensor" in error.message


def test_numpy_scalar_on_the_left_of_an_operator_still_works() -> None:
    @pto.kernel
    def scaled(x: pto.Tensor[(4, 8), pto.f32]) -> pto.Tensor[(4, 8), pto.f32]:
        return np.float32(2) * x - np.float32(1) + x / np.float32(4)

    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_allclose(
        scaled(x, backend="reference"), 2 * x - 1 + x / 4, rtol=1e-6
    )


def test_numpy_array_on_the_left_of_an_operator_is_not_captured() -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f32]):
        return np.ones((4, 8), np.float32) + x

    with pytest.raises(pto.KernelError, match="cannot be captured by a kernel"):
        bad.mlir()


def test_numpy_comparison_with_a_tensor_is_the_comparison_error() -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f32]):
        return np.float32(0) < x

    with pytest.raises(pto.KernelError, match="usable only as the condition"):
        bad.mlir()
