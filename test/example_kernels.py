"""The bodies of examples/<name>.py as kernels of any small shape, for tests that
lower them many times (the examples' own shapes are the demo's, too large).

No `from __future__ import annotations` here: the frontend evaluates a kernel's
annotations, which name the shape this module's function was given."""

import importlib.util
from pathlib import Path
from types import ModuleType

import pypto_mlir as pto
from pypto_mlir.frontend.kernel import Kernel

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str) -> ModuleType:
    """examples/<name>.py as a module (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", EXAMPLES / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_kernel(name: str, dims: tuple[int, ...]) -> tuple[Kernel, list[tuple]]:
    """Kernel `name` (swish, softmax, layernorm: rows x cols; gemm: m x k x n)
    and the shapes of its arguments."""
    if name == "gemm":
        m, k, n = dims

        @pto.kernel
        def gemm(
            a: pto.Tensor[(m, k), pto.f16], b: pto.Tensor[(k, n), pto.f16]
        ) -> pto.Tensor[(m, n), pto.f16]:
            return a @ b

        return gemm, [(m, k), (k, n)]
    rows, cols = dims
    matrix = pto.Tensor[(rows, cols), pto.f16]
    vector = pto.Tensor[(cols,), pto.f16]
    if name == "swish":

        @pto.kernel
        def swish(x: matrix) -> matrix:
            return x * pto.sigmoid(x)

        return swish, [(rows, cols)]
    if name == "softmax":

        @pto.kernel
        def softmax(x: matrix) -> matrix:
            return pto.softmax(x, axis=-1)

        return softmax, [(rows, cols)]
    assert name == "layernorm", name

    @pto.kernel
    def layernorm(x: matrix, gamma: vector, beta: vector) -> matrix:
        xf = x.astype(pto.f32)
        centered = xf - xf.mean(axis=-1, keepdims=True)
        variance = (centered * centered).mean(axis=-1, keepdims=True)
        normalized = centered * pto.rsqrt(variance + 1e-5)
        return (normalized * gamma.astype(pto.f32) + beta.astype(pto.f32)).astype(
            pto.f16
        )

    return layernorm, [(rows, cols), (cols,), (cols,)]
