"""Row softmax with each row kept whole in UB: per block of rows (`pto.auto`
rows, all the columns: `None`), load, convert to f32, subtract the row maximum,
exponentiate, divide by the row sum, convert back and store. The statistics
are [rows, 1] tiles that the vector ops broadcast along the row.

    python examples/tile_softmax.py           # run on both targets, check against numpy
    python examples/tile_softmax.py --mlir    # print its tile IR (1024x512, ascend910b)
"""

from __future__ import annotations

import sys

import numpy as np

import pypto_mlir as pto
from pypto_mlir.frontend.testing import check_run

M, N = pto.sym("M"), pto.sym("N")


@pto.tile_kernel
def softmax(x: pto.Tensor[(M, N), pto.f16], y: pto.Out[(M, N), pto.f16]):
    for i in pto.tiles((x, y), (pto.auto, None)):
        row = pto.load(x[i, :]).astype(pto.f32)
        e = pto.exp(row - row.max(axis=1))
        pto.store(y[i, :], (e / e.sum(axis=1)).astype(pto.f16))


def make_inputs(rng: np.random.Generator, shape: tuple[int, int] = (500, 100)):
    return (rng.standard_normal(shape).astype(np.float16),)


def reference(x: np.ndarray) -> np.ndarray:
    """float64 numpy."""
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def tolerance(x: np.ndarray) -> tuple[float, float]:
    """(rtol, atol): f32 evaluation rounded once to f16 (2**-11), the f32 errors
    of exp and of the sum below 2**-12, as for examples/softmax.py."""
    return 2.0**-11 + 2.0**-12, 2.0**-24


def main() -> int:
    if sys.argv[1:] == ["--mlir"]:
        print(softmax.mlir(M=1024, N=512), end="")
        return 0
    ok = True
    for target in ("ascend910b", "tiny"):
        inputs = make_inputs(np.random.default_rng(0))
        backend = pto.sim_backend(target)
        result, comparison = check_run(softmax, inputs, reference, tolerance, backend)
        print(result.report.to_text(), end="")
        print(f"vs numpy (float64): {comparison}")
        ok &= comparison.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
