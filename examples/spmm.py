"""Sparse times dense: a 1024x1024 CSR matrix at 1 % density times a
1024x128 fp16 matrix (docs/sparse.md).

The sparse argument is a scipy `csr_array` (or an (indptr, indices, data)
triple); `nnz` is a run-time size, so another pattern of the same shape reuses
the compiled kernel. The report's roofline is the sparse one, from this call's
pattern (pypto_mlir/sparse_roofline.py).

python examples/spmm.py           # run it on the simulator and check it against scipy
python examples/spmm.py --mlir    # print its tv IR
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

import pypto_mlir as pto
from pypto_mlir.frontend.testing import compare

ROWS, COLS, N = 1024, 1024, 128
DENSITY = 0.01


@pto.kernel
def spmm(
    a: pto.CSR[(ROWS, COLS), pto.f16], b: pto.Tensor[(COLS, N), pto.f16]
) -> pto.Tensor[(ROWS, N), pto.f16]:
    return a @ b


def make_inputs(rng: np.random.Generator) -> tuple[sp.csr_array, np.ndarray]:
    """A random pattern with f16-representable values (scipy has no f16)."""
    a = sp.random_array(
        (ROWS, COLS), density=DENSITY, format="csr", dtype=np.float32, rng=rng
    )
    a.data = a.data.astype(np.float16).astype(np.float32)
    return a, rng.standard_normal((COLS, N)).astype(np.float16)


def reference(a: sp.csr_array, b: np.ndarray) -> np.ndarray:
    """scipy in float64."""
    return a.astype(np.float64) @ b.astype(np.float64)


def tolerance(a: sp.csr_array, b: np.ndarray) -> tuple[float, float]:
    """(rtol, atol): sums in f32 rounded once to f16 (one f16 ulp, 2**-10
    relative); atol covers the f32 sums' cancellation and f16's subnormals."""
    return 2.0**-9, 2.0**-12


def main() -> int:
    if sys.argv[1:] == ["--mlir"]:
        print(spmm.mlir(), end="")
        return 0
    inputs = make_inputs(np.random.default_rng(0))
    result = spmm.run(*inputs)
    rtol, atol = tolerance(*inputs)
    comparison = compare(result.value, reference(*inputs), rtol=rtol, atol=atol)  # pyright: ignore
    print(result.report.to_text(), end="")
    print(f"vs scipy (float64): {comparison}")
    return 0 if comparison.ok else 1


if __name__ == "__main__":
    sys.exit(main())
