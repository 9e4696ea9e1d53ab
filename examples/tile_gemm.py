"""A hand-tiled GEMM, C = A @ B in fp16 with fp32 accumulation, written with
explicit L1 and L0 tiles: per (i, j) block of C (the article's ForEachTile
form), the K loop loads a chunk of A and of B into L1, moves its K windows into
L0A / L0B one cube step at a time and accumulates their products in L0C (`fold`
with `init=None`: the first chunk starts the accumulator, as an L0C tile cannot
be filled); the fixpipe converts f32 to f16 on the store. The block sizes are
the author's, per target (`pto.target()`), each tile within its memory;
pipelining of the K loop, buffers, sync and the split over the cores are
`pypto-lower`'s.

    python examples/tile_gemm.py           # run on both targets, check against numpy
    python examples/tile_gemm.py --mlir    # print its tile IR (512x256x384, ascend910b)
"""

from __future__ import annotations

import sys

import numpy as np

import pypto_mlir as pto
from pypto_mlir.frontend.testing import check_run

M, K, N = pto.sym("M"), pto.sym("K"), pto.sym("N")

BLOCKS = {"ascend910b": (128, 256, 64, 4), "tiny": (32, 32, 16, 8)}
"""(m0, n0, k0, depth) per target: an f16 m0 x k0 block fits L0A twice, k0 x n0
L0B, the f32 m0 x n0 accumulator L0C (tiny: 2 KiB L0A/L0B, 4 KiB L0C); L1
holds chunks `depth` cube steps deep when K is a multiple of them (the blocks
tv-to-tile's matmul model picks for 1024^3 on ascend910b, 256^3 on tiny)."""


@pto.tile_kernel
def gemm(
    a: pto.Tensor[(M, K), pto.f16],
    b: pto.Tensor[(K, N), pto.f16],
    c: pto.Out[(M, N), pto.f16],
):
    m0, n0, k0, depth = BLOCKS[pto.target().name]
    k1 = k0 * depth if a.shape[1] % (k0 * depth) == 0 else k0
    a_l1 = pto.TileView((m0, k1), pto.f16, pto.L1)
    b_l1 = pto.TileView((k1, n0), pto.f16, pto.L1)
    a_l0 = pto.TileView((m0, k0), pto.f16, pto.L0A)
    b_l0 = pto.TileView((k0, n0), pto.f16, pto.L0B)

    def c_block(ctx: pto.TileContext) -> None:
        i, j = ctx.index

        def k_chunk(k: pto.TileIndex, acc: pto.Tile | None) -> pto.Tile:
            a1, b1 = a_l1.load(a[i, k]), b_l1.load(b[k, j])
            for step in range(0, k1, k0):  # the cube steps of the chunk
                a0 = pto.move(a1, a_l0, window=(0, step))
                b0 = pto.move(b1, b_l0, window=(step, 0))
                acc = pto.matmul(a0, b0, acc=acc)
            assert acc is not None
            return acc

        ctx.store(pto.tiles(a, (None, k1)).fold(k_chunk, init=None), c)

    pto.tiles(c, (m0, n0)).for_each(c_block)


def make_inputs(
    rng: np.random.Generator, shape: tuple[int, int, int] = (512, 256, 384)
) -> tuple[np.ndarray, np.ndarray]:
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float16)
    return a, b


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float64 numpy (exact products, nearly exact sums)."""
    return a.astype(np.float64) @ b.astype(np.float64)


def tolerance(a: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray]:
    """(rtol, atol): one rounding to f16 (2**-11 relative), and per element the
    f32 summation bound K * 2**-24 * (|A| @ |B|), as for examples/gemm.py."""
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    return 2.0**-11, a.shape[1] * 2.0**-24 * magnitude + 2.0**-24


def main() -> int:
    if sys.argv[1:] == ["--mlir"]:
        print(gemm.mlir(M=512, K=256, N=384), end="")
        return 0
    ok = True
    for target in ("ascend910b", "tiny"):
        inputs = make_inputs(np.random.default_rng(0))
        backend = pto.sim_backend(target)
        result, comparison = check_run(gemm, inputs, reference, tolerance, backend)
        print(result.report.to_text(), end="")
        print(f"vs numpy (float64): {comparison}")
        ok &= comparison.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
