"""Empty tensors (a dimension of size 0) through the frontend: each op matches
numpy on the reference, and on the simulator either matches numpy or is a
KernelError at the call naming why (never another exception)."""

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pypto_mlir as pto

# name: (kernel body, numpy meaning, x shape, y shape)
CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple, tuple]] = {
    "add": (lambda x, y: x + y, lambda x, y: x + y, (0, 8), (0, 8)),
    "exp": (lambda x, y: pto.exp(x), lambda x, y: np.exp(x), (0, 8), (0, 8)),
    "sum-kept": (
        lambda x, y: x.sum(axis=1),
        lambda x, y: x.sum(axis=1),
        (0, 8),
        (0, 8),
    ),
    "sum-over-empty": (
        lambda x, y: x.sum(axis=0),
        lambda x, y: x.sum(axis=0),
        (0, 8),
        (0, 8),
    ),
    "matmul-empty-m": (lambda x, y: x @ y.T, lambda x, y: x @ y.T, (0, 16), (16, 16)),
    "matmul-empty-k": (lambda x, y: x @ y.T, lambda x, y: x @ y.T, (16, 0), (16, 0)),
    "softmax": (
        lambda x, y: pto.softmax(x),
        lambda x, y: np.exp(x) / np.exp(x).sum(-1, keepdims=True),
        (0, 8),
        (0, 8),
    ),
    "transpose": (lambda x, y: x.T, lambda x, y: x.T, (0, 8), (0, 8)),
    "reshape": (
        lambda x, y: x.reshape(8, 0),
        lambda x, y: x.reshape(8, 0),
        (0, 8),
        (0, 8),
    ),
    "empty-slice": (lambda x, y: x[2:2] + 1.0, lambda x, y: x[2:2] + 1, (4, 8), (4, 8)),
    "cast": (
        lambda x, y: x.astype(pto.f32),
        lambda x, y: x.astype(np.float32),
        (0, 8),
        (0, 8),
    ),
}


def _kernel(name: str, backend: str) -> Any:
    body, _, xs, ys = CASES[name]

    @pto.kernel(backend=backend)
    def k(x: pto.Tensor[xs, pto.f16], y: pto.Tensor[ys, pto.f16]):
        return body(x, y)

    return k


def _inputs(name: str) -> tuple[np.ndarray, np.ndarray]:
    _, _, xs, ys = CASES[name]
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal(xs).astype(np.float16),
        rng.standard_normal(ys).astype(np.float16),
    )


def _expected(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(CASES[name][1](x.astype(np.float32), y.astype(np.float32)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_empty_tensors_on_the_reference_match_numpy(name: str) -> None:
    x, y = _inputs(name)
    out = _kernel(name, "reference")(x, y)
    expected = _expected(name, x, y)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.astype(np.float32), expected, atol=1e-2)


@pytest.mark.parametrize("name", sorted(CASES))
def test_empty_tensors_on_the_simulator_match_numpy_or_say_why(name: str) -> None:
    x, y = _inputs(name)
    try:
        out = _kernel(name, "sim")(x, y)
    except pto.KernelError as error:
        assert "internal error" not in str(error)
        assert error.location is not None and error.location.file.endswith(
            "test_frontend_empty.py"
        )
        if name == "matmul-empty-k":  # the cause, not 'no tiling fits'
            assert "empty contraction dimension (K = 0" in str(error)
        return
    expected = _expected(name, x, y)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.astype(np.float32), expected, atol=1e-2)
