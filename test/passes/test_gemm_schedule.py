"""The matmul schedule of issue 13 end to end, on `ascend910b` and `tiny`: A
panels kept in L1 across a core's blocks (tv-to-tile's `matmul-panels`), K
split over the cores with a combine phase (`matmul-split-k`), K chunks
staggered for the L2 (`matmul-l2-order`) and unrolled (`matmul-unroll-k`).

Every shape is lowered by pypto-lower with the decision on and off, run on the
simulator and compared with the tv reference (`check_lowering`); with it on,
the remark must say that the model took it for the shapes it does (odd K, a
single row, prime M and N, tails), and the model must refuse it where the nest
cannot do it (a panel: transposed A, a `?` K, M rows past the last whole L1
block of several base blocks; a split: an epilogue, K not whole chunks).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pypto_mlir.check import check_lowering
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.passes.matmul_model import (
    MatmulRequest,
    MatmulTiling,
    auto_matmul_tiling,
    matmul_footprint,
    with_unrolled_k,
)
from pypto_mlir.passes.multicore_split import core_split
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

GEMM = """
func.func @k(%a: !tv.tensor<{m}x{k}xf16>, %b: !tv.tensor<{k}x{n}xf16>) -> !tv.tensor<{m}x{n}xf16> {{
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<{m}x{k}xf16>, !tv.tensor<{k}x{n}xf16> -> !tv.tensor<{m}x{n}xf16>
  func.return %c : !tv.tensor<{m}x{n}xf16>
}}
"""

PANEL_SHAPES = {
    "ascend910b": [(64, 100, 200), (1, 64, 1024), (48, 40, 400)],
    "tiny": [(1, 64, 1024), (48, 40, 400), (16, 33, 64)],
}
"""(M, K, N) for which the model keeps an A panel: odd K (zero-padded past K),
one row, M and N tails."""


SPLIT_SHAPES = {
    "ascend910b": [(1, 1024, 64), (32, 2048, 97), (48, 1536, 100)],
    "tiny": [(7, 512, 31), (16, 512, 48)],
}
"""(M, K, N) for which the model splits K: one row, prime M and N (tails in
the blocks and in the combine nest's tiles)."""


def _run(
    target: str,
    m: int,
    k: int,
    n: int,
    panels: bool = True,
    split: bool = True,
    l2_order: bool = True,
    unroll_k: bool = True,
) -> list[str]:
    module = parse_chunk(
        default_context(), SourceChunk(GEMM.format(m=m, k=k, n=n), 1), "gemm.mlir"
    )
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float16)
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        check = check_lowering(
            module,
            "k",
            [a, b],
            pipeline=LowerPipeline(
                target=target,
                matmul_panels=panels,
                matmul_split_k=split,
                matmul_l2_order=l2_order,
                matmul_unroll_k=unroll_k,
            ),
        )
    for comparison in check.comparisons:
        assert comparison.ok, comparison
    return [r for r in remarks if "tiled tv.matmul" in r]


@pytest.mark.parametrize(
    ("target", "shape"),
    [(t, s) for t, shapes in PANEL_SHAPES.items() for s in shapes],
)
def test_panel_numerics(target: str, shape: tuple[int, int, int]) -> None:
    on = _run(target, *shape, panels=True)
    assert any("A panel" in r and "kept in l1" in r for r in on), on
    off = _run(target, *shape, panels=False)
    assert off and not any("A panel" in r for r in off), off


@pytest.mark.parametrize(
    ("target", "shape"),
    [(t, s) for t, shapes in SPLIT_SHAPES.items() for s in shapes],
)
def test_split_k_numerics(target: str, shape: tuple[int, int, int]) -> None:
    on = _run(target, *shape)
    assert any("K split in" in r and "combined" in r for r in on), on
    off = _run(target, *shape, split=False)
    assert off and not any("K split" in r for r in off), off


L2_ORDER_SHAPES = [(256, 1024, 512), (200, 1024, 520), (384, 2048, 256)]
"""(M, K, N) for which the model staggers the K chunks on ascend910b (panels and
K split off): M and N tails, a deep K."""


@pytest.mark.parametrize("shape", L2_ORDER_SHAPES)
def test_l2_order_numerics(shape: tuple[int, int, int]) -> None:
    on = _run("ascend910b", *shape, panels=False, split=False)
    assert any("K chunks staggered for the l2" in r for r in on), on
    off = _run("ascend910b", *shape, panels=False, split=False, l2_order=False)
    assert off and not any("staggered" in r for r in off), off


STAGGERED_PANEL_SHAPES = [(1024, 1024, 1000), (896, 1024, 1024)]
"""(M, K, N) for which the model keeps A panels loaded chunk by chunk in a
rotated order on ascend910b: an N tail, M a multiple of the block rows."""


@pytest.mark.parametrize("shape", STAGGERED_PANEL_SHAPES)
def test_staggered_panel_numerics(shape: tuple[int, int, int]) -> None:
    on = _run("ascend910b", *shape)
    assert any("block row i starts at chunk i mod" in r for r in on), on
    assert any("A panel" in r for r in on), on
    off = _run("ascend910b", *shape, l2_order=False)
    assert off and not any("staggered" in r for r in off), off
    assert any("A panel" in r for r in off), off


UNROLL_SHAPES = {
    "ascend910b": [(200, 1024, 520), (64, 1000, 256), (384, 2048, 256)],
    "tiny": [(48, 200, 40), (33, 256, 31)],
}
"""(M, K, N) whose blocks' K chunks are unrolled (panels and K split off): M
and N tails, a partial last chunk (K = 1000, 200), staggered chunks."""


@pytest.mark.parametrize(
    ("target", "shape"),
    [(t, s) for t, shapes in UNROLL_SHAPES.items() for s in shapes],
)
def test_unroll_k_numerics(target: str, shape: tuple[int, int, int]) -> None:
    on = _run(target, *shape, panels=False, split=False)
    assert any("K loop unrolled" in r for r in on), on
    off = _run(target, *shape, panels=False, split=False, unroll_k=False)
    assert off and not any("unrolled" in r for r in off), off


def test_l2_order_refused() -> None:
    """No staggering without an L2, for a K of no whole chunks, a `?` K, or
    with the option off."""
    for target, request in (
        ("tiny", _request("tiny", 256, 1024, 512, l2_order=True)),
        ("ascend910b", _request("ascend910b", 256, 1000, 512, l2_order=True)),
        ("ascend910b", _request("ascend910b", 256, None, 512, l2_order=True)),
        ("ascend910b", _request("ascend910b", 256, 1024, 512)),
    ):
        tiling = auto_matmul_tiling(load_target(target), request)
        assert tiling is not None and not tiling.l2_order, (request, tiling)
    request = _request("ascend910b", 256, 1024, 512, l2_order=True, panels=False)
    tiling = auto_matmul_tiling(load_target("ascend910b"), request)
    assert tiling is not None and tiling.l2_order


def test_split_k_refused() -> None:
    chip = load_target("ascend910b")
    for request in (
        _request("ascend910b", 128, 3072, 768),  # split_k not allowed (default)
        _request("ascend910b", 128, 3071, 768, split_k=True),  # K not whole chunks
        _request("ascend910b", 128, None, 768, split_k=True),
    ):
        tiling = auto_matmul_tiling(chip, request)
        assert tiling is not None and tiling.split == 1, (request, tiling)
    tiling = auto_matmul_tiling(
        chip, _request("ascend910b", 128, 3072, 768, split_k=True)
    )
    assert tiling is not None and tiling.split > 1


def _request(target: str, m: int | None, k: int | None, n: int, **kw) -> MatmulRequest:
    chip = load_target(target)
    return MatmulRequest(m, n, k, 2, 4, 16, None, "f16", 2, cores=chip.cores, **kw)


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
def test_panel_refused(target: str) -> None:
    chip = load_target(target)
    for request in (
        _request(target, 1024, 1024, 1024, transpose_a=True),
        _request(target, 1024, None, 1024),
        _request(target, 1024, 1024, 1024, panels=False),
    ):
        tiling = auto_matmul_tiling(chip, request)
        assert tiling is not None and not tiling.panel, (request, tiling)
    for m in (97, 131, 1000):
        tiling = auto_matmul_tiling(chip, _request(target, m, 256, 512))
        assert tiling is not None
        if tiling.panel:
            assert tiling.fa == 1 or m % tiling.m1 == 0 or tiling.m1 >= m, tiling


def test_chunk_depths_of_whole_granule_rows() -> None:
    """K = 6144 halves to chunks 384 and 192 deep only; a 256-deep chunk (A rows
    of 512 bytes, the GM granule, where 192 reads rows of 384 that pay for 512)
    cuts it into whole chunks, is tried and taken."""
    chip = load_target("ascend910b")
    tiling = auto_matmul_tiling(chip, _request("ascend910b", 6144, 6144, 6144))
    assert tiling is not None and tiling.k1 == 256, tiling


def test_unroll_k_refused() -> None:
    """No unrolled K without `unroll_k`, for a `?` K, one chunk, too many
    chunks, a panel or a K split, or two chunks that do not fit L1."""
    chip = load_target("ascend910b")
    plain = MatmulTiling(128, 256, 64, 1, 1, 256)
    request = _request("ascend910b", 1024, 2048, 1024, unroll_k=True)
    assert with_unrolled_k(chip, request, plain).unroll_k
    for refused, tiling in (
        (replace(request, unroll_k=False), plain),
        (replace(request, k=None), plain),
        (replace(request, k=256), plain),
        (replace(request, k=256 * 33), plain),
        (request, replace(plain, panel=True)),
        (request, replace(plain, split=2)),
        (request, replace(plain, k1=512)),  # 384 KiB a chunk
    ):
        assert not with_unrolled_k(chip, refused, tiling).unroll_k, (refused, tiling)


def test_panel_footprint() -> None:
    """A panel nest holds the panel once and two B chunks in L1."""
    chip = load_target("ascend910b")
    request = _request("ascend910b", 1024, 1000, 1024)
    tiling = MatmulTiling(128, 256, 64, 1, 1, 256, panel=True)
    panel = 128 * 1024 * 2  # K rounded up to whole 256-deep chunks
    assert matmul_footprint(chip, request, tiling)["l1"] == panel + 2 * 256 * 256 * 2


def test_matmul_block_grid() -> None:
    """Matmul block rows the cores do not divide evenly are split as a grid
    over rows and columns when the busiest core gets fewer blocks."""
    assert core_split(32, 16, 24, True) == (3, 8)  # 24 blocks a core, not 32
    assert core_split(32, 16, 24) == (24, 1)
    assert core_split(48, 24, 24, True) == (24, 1)  # even: rows alone
    assert core_split(5, 4, 2, True) == (1, 2)
    # 8 x 4 blocks on 24 cores: 2 blocks a core either way; a matmul takes one
    # block row and two columns a core (its A panel loaded once), other
    # nests the fewest cores along the outer loop.
    assert core_split(8, 4, 24, True) == (8, 2)
    assert core_split(8, 4, 24) == (4, 4)


def test_matmul_block_grid_numerics() -> None:
    """160 x 128 in 32 x 32 blocks on tiny's 2 cores: 5 block rows, so the
    cores take 2 of the 4 block columns each (10 blocks, not 12)."""
    assert _run("tiny", 160, 64, 128, panels=False)
