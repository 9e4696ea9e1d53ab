"""The article's Swish (section 4.2) written with tile views: a loop over the
tiles of the tensor, one load, one declarative compute (`pto.silu`, the
article's `PyptoCompute::Swish`), one store. The tile size is left to the
compiler (`pto.auto`); buffers, double buffering, sync and the split over the
cores are `pypto-lower`'s, as for the tensor-level examples/swish.py.

    python examples/tile_swish.py           # run on both targets, check against numpy
    python examples/tile_swish.py --mlir    # print its tile IR (4096x1024, ascend910b)
"""

from __future__ import annotations

import sys

import numpy as np

import pypto_mlir as pto
from pypto_mlir.frontend.testing import check_run

M, N = pto.sym("M"), pto.sym("N")
VIEW = pto.TileView((pto.auto, pto.auto), pto.f16, pto.UB)


@pto.tile_kernel
def swish(x: pto.Tensor[(M, N), pto.f16], out: pto.Out[(M, N), pto.f16]):
    for i, j in pto.tiles((x, out), VIEW):
        pto.store(out[i, j], pto.silu(VIEW.load(x[i, j])))


@pto.tile_kernel
def swish_for_each(x: pto.Tensor[(M, N), pto.f16], out: pto.Out[(M, N), pto.f16]):
    """The same kernel in the article's ForEachTile form."""
    pto.tiles(out, VIEW).for_each(
        lambda ctx: ctx.store(pto.silu(ctx.load(x, VIEW)), out)
    )


def make_inputs(rng: np.random.Generator, shape: tuple[int, int] = (4096, 1024)):
    return (rng.standard_normal(shape).astype(np.float16),)


def reference(x: np.ndarray) -> np.ndarray:
    """float64 numpy, no intermediate rounding."""
    x64 = x.astype(np.float64)
    return x64 / (1.0 + np.exp(-x64))


def tolerance(x: np.ndarray) -> tuple[float, float]:
    """(rtol, atol): silu evaluated in steps that each round to f16 (x / (1 +
    exp(-x)): a few ulps, 2**-9 covers them, as for examples/swish.py)."""
    return 2.0**-9, 2.0**-24


def main() -> int:
    if sys.argv[1:] == ["--mlir"]:
        print(swish.mlir(M=4096, N=1024), end="")
        return 0
    ok = True
    for target in ("ascend910b", "tiny"):
        inputs = make_inputs(np.random.default_rng(0), (1000, 333))
        backend = pto.sim_backend(target)
        result, comparison = check_run(swish, inputs, reference, tolerance, backend)
        print(result.report.to_text(), end="")
        print(f"vs numpy (float64): {comparison}")
        ok &= comparison.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
