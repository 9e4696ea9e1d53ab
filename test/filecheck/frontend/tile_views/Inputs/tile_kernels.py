"""Small tile kernels whose traced tile IR the lit tests here check.

    python tile_kernels.py NAME[@TARGET] ...    # print the tile IR of each kernel

A kernel the frontend refuses prints `error: ` and its located error instead
(one process for every kernel: importing the frontend is most of the time).
"""

import sys

import pypto_mlir as pto

M, N, K = 37, 45, 70
VIEW = pto.TileView((pto.auto, pto.auto), pto.f16, pto.UB)


@pto.tile_kernel
def swish(x: pto.Tensor[(M, N), pto.f16], out: pto.Out[(M, N), pto.f16]):
    for i, j in pto.tiles((x, out), VIEW):
        pto.store(out[i, j], pto.silu(VIEW.load(x[i, j])))


@pto.tile_kernel
def fixed(x: pto.Tensor[(M, N), pto.f16], out: pto.Out[(M, N), pto.f16]):
    for i, j in pto.tiles(out, (16, 32)):
        t = pto.load(x[i, j])
        pto.store(out[i, j], t * pto.sigmoid(t) + 1.0)


@pto.tile_kernel
def gemm(
    a: pto.Tensor[(M, K), pto.f16],
    b: pto.Tensor[(K, N), pto.f16],
    c: pto.Out[(M, N), pto.f16],
):
    a_l1 = pto.TileView((32, 32), pto.f16, pto.L1)
    b_l1 = pto.TileView((32, 48), pto.f16, pto.L1)

    def block(ctx):
        i, j = ctx.index

        def step(k, acc):
            a0 = pto.move(a_l1.load(a[i, k]), pto.L0A)
            b0 = pto.move(b_l1.load(b[k, j]), pto.L0B)
            return pto.matmul(a0, b0, acc=acc)

        ctx.store(pto.tiles(a, (None, 32)).fold(step, None), c)

    pto.tiles(c, (32, 48)).for_each(block)


@pto.tile_kernel
def row_sum(x: pto.Tensor[(M, N), pto.f32], out: pto.Out[(M, 1), pto.f32]):
    zeros = pto.TileView((8, 1), pto.f32, pto.UB)

    def rows(ctx):
        (i,) = ctx.index
        start = zeros.full(0.0, valid=(i, 1))
        step = lambda j, acc: acc + pto.load(x[i, j]).sum(axis=1)  # noqa: E731
        ctx.store(pto.tiles(x, (None, 16)).fold(step, start), out)

    pto.tiles(out, (8, None)).for_each(rows)


@pto.tile_kernel
def vector_on_l1(x: pto.Tensor[(M, N), pto.f16], out: pto.Out[(M, N), pto.f16]):
    for i, j in pto.tiles(out, (16, 32)):
        t = pto.load(x[i, j], pto.L1)
        pto.store(out[i, j], pto.exp(t))


@pto.tile_kernel
def too_big(x: pto.Tensor[(512, 1024), pto.f16], out: pto.Out[(512, 1024), pto.f16]):
    big = pto.TileView((256, 1024), pto.f16, pto.UB)
    for i in pto.tiles(out, (256, None)):
        pto.store(out[i, :], big.load(x[i, :]))


if __name__ == "__main__":
    for request in sys.argv[1:]:
        name, _, target = request.partition("@")
        print(f"// kernel {request}")
        try:
            print(globals()[name].mlir(target=target or None), end="")
        except pto.KernelError as error:
            print(f"error: {error}")
