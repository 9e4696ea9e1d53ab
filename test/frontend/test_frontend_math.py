"""pto.sin, pto.cos and pto.erf (made from their op facts): rotary position
embeddings and the exact GELU, on the reference and on the simulator, against
numpy; np.sin / np.cos on a traced tensor name them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pypto_mlir as pto


@pto.kernel
def rotary(
    x1: pto.Tensor[(16, 40), pto.f32],
    x2: pto.Tensor[(16, 40), pto.f32],
    angle: pto.Tensor[(16, 40), pto.f32],
) -> tuple[pto.Tensor[(16, 40), pto.f32], pto.Tensor[(16, 40), pto.f32]]:
    c, s = pto.cos(angle), pto.sin(angle)
    return x1 * c - x2 * s, x1 * s + x2 * c


@pto.kernel
def gelu_exact(x: pto.Tensor[(7, 33), pto.f16]) -> pto.Tensor[(7, 33), pto.f16]:
    return x * 0.5 * (pto.erf(x * (1 / math.sqrt(2))) + 1.0)


def _rotary_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    x1, x2 = (rng.standard_normal((16, 40)).astype(np.float32) for _ in range(2))
    positions = np.arange(16, dtype=np.float64)[:, None] * 500.0
    frequencies = 10000.0 ** (-np.arange(40) / 40.0)
    return x1, x2, (positions * frequencies).astype(np.float32)  # up to 7500 rad


@pytest.mark.parametrize("backend", ["reference", "sim"])
def test_rotary_embedding(backend: str) -> None:
    x1, x2, angle = _rotary_inputs()
    y1, y2 = rotary(x1, x2, angle, backend=backend)
    a = angle.astype(np.float64)
    np.testing.assert_allclose(y1, x1 * np.cos(a) - x2 * np.sin(a), atol=2e-6)
    np.testing.assert_allclose(y2, x1 * np.sin(a) + x2 * np.cos(a), atol=2e-6)


@pytest.mark.parametrize("backend", ["reference", "sim"])
def test_exact_gelu(backend: str) -> None:
    x = np.linspace(-6, 6, 7 * 33).reshape(7, 33).astype(np.float16)
    erf = np.array([math.erf(v / math.sqrt(2)) for v in x.astype(np.float64).ravel()])
    expected = x.astype(np.float64) * 0.5 * (1 + erf.reshape(x.shape))
    np.testing.assert_allclose(
        gelu_exact(x, backend=backend), expected, rtol=4e-3, atol=4e-3
    )


def test_numpy_sin_names_pto_sin() -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4,), pto.f32]):
        return np.sin(x) + np.cos(x)

    with pytest.raises(pto.KernelError, match=r"np.sin .*; write pto.sin\(x\)"):
        bad.mlir()


def test_the_functions_are_documented() -> None:
    for name in ("sin", "cos", "erf"):
        assert name in pto.__all__
        assert getattr(pto, name).__doc__
