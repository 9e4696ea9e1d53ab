"""The requests `tv-to-tile` sized its nests from, recorded for the auto-tuner
(pypto_mlir/tune), and the tile sizes the tuner tries for them: candidates
enumerated from the tiling models and pruned by capacity and alignment.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from pypto_mlir.targets import Target

from .matmul_model import MatmulRequest, explicit_matmul_tiling, ranked_matmul_tilings
from .tiling_model import TilingError, VectorRequest, explicit_vector_tiling

_RECORDED: ContextVar[list[VectorRequest | MatmulRequest] | None] = ContextVar(
    "pypto_tiling_requests", default=None
)


def record_request(request: VectorRequest | MatmulRequest) -> None:
    """Give the request a nest was sized from to `recording_requests`, if active
    (tv-to-tile calls it for every nest)."""
    recorded = _RECORDED.get()
    if recorded is not None:
        recorded.append(request)


@contextmanager
def recording_requests() -> Iterator[list[VectorRequest | MatmulRequest]]:
    """The requests of the nests tiled inside the block, in order: the
    auto-tuner (pypto_mlir/tune) enumerates tile sizes for them."""
    recorded: list[VectorRequest | MatmulRequest] = []
    token = _RECORDED.set(recorded)
    try:
        yield recorded
    finally:
        _RECORDED.reset(token)


def vector_size_problem(
    request: VectorRequest, sizes: Sequence[int], capacity: int
) -> str | None:
    """Why `tile-sizes=sizes` cannot tile the nest of `request` (None: it can):
    `alignment` when the columns break the UB alignment, `capacity` when the
    tiles live at once need more than `capacity` bytes (tv-to-tile's checks)."""
    try:
        tiling = explicit_vector_tiling(request, sizes)
    except TilingError:
        return "alignment"
    if request.profile.peak(tiling.physical) > capacity:
        return "capacity"
    return None


SMALLEST_TILE_SHARE = 32
"""Tile sizes with fewer elements than the largest that fits over this are not
candidates: DMA start-ups dominate them, and simulating their many more
instructions is what makes a search slow (balance-cores itself splits a tile
over at most the cores)."""


def vector_size_candidates(
    requests: Sequence[VectorRequest], capacity: int
) -> tuple[list[tuple[int, int]], Counter[str]]:
    """`tile-sizes` values (ROWS, COLS) worth measuring for vector nests: powers
    of two and the extents along each tile dim, kept when every nest takes them
    (`vector_size_problem`) and they tile some nest differently from a larger
    value; largest tiles first (the model's own preference). With the counts
    pruned per reason (`alignment`, `capacity`, `same tiling`)."""
    pruned: Counter[str] = Counter()
    if not requests:
        return [], pruned

    def axis(values: Iterator[int | None]) -> list[int]:
        largest = max((v if v is not None else 4096) for v in values)
        sizes = {1 << i for i in range(largest.bit_length()) if 1 << i <= largest}
        return sorted(sizes | {largest})

    rows = axis(r.extents[-2] if len(r.extents) > 1 else 1 for r in requests)
    columns = axis(r.extents[-1] for r in requests)
    kept: dict[tuple[tuple[int, ...], ...], tuple[int, int]] = {}
    for row in reversed(rows):
        for column in reversed(columns):
            problems = [
                vector_size_problem(r, (row, column), capacity) for r in requests
            ]
            problem = next((p for p in problems if p is not None), None)
            if problem is not None:
                pruned[problem] += 1
                continue
            tilings = tuple(
                explicit_vector_tiling(r, (row, column)).steps for r in requests
            )
            if tilings in kept:
                pruned["same tiling"] += 1
                continue
            kept[tilings] = (row, column)
    ordered = sorted(kept.values(), key=lambda rc: (-rc[0] * rc[1], -rc[1]))
    if ordered:
        largest = ordered[0][0] * ordered[0][1]
        small = [rc for rc in ordered if rc[0] * rc[1] * SMALLEST_TILE_SHARE < largest]
        if small:
            pruned[f"under 1/{SMALLEST_TILE_SHARE} of the largest tile"] += len(small)
            ordered = ordered[: len(ordered) - len(small)]
    return ordered, pruned


def matmul_size_candidates(
    target: Target, requests: Sequence[MatmulRequest], limit: int
) -> tuple[list[tuple[int, ...]], Counter[str]]:
    """`matmul-tile-sizes` values (M1,N1,K1,M0,N0,K0) worth measuring: the
    model's ranking of the first matmul nest's tilings (`ranked_matmul_tilings`),
    kept when every matmul nest takes them (`explicit_matmul_tiling`), best
    first, at most `limit`. With the counts pruned per reason (a memory
    overflowed, another nest refusing, the same sizes as a better-ranked panel
    or split-K variant, or beyond `limit`)."""
    if not requests:
        return [], Counter()
    ranked, pruned = ranked_matmul_tilings(target, requests[0])
    kept: list[tuple[int, ...]] = []
    for tiling in ranked:
        sizes = (
            tiling.m1,
            tiling.n1,
            tiling.k1 or tiling.k0,
            tiling.m0,
            tiling.n0,
            tiling.k0,
        )
        if sizes in kept:
            pruned["same sizes as a panel or split-K variant"] += 1
            continue
        try:
            for other in requests[1:]:
                explicit_matmul_tiling(target, other, sizes)
        except TilingError:
            pruned["another matmul nest cannot take it"] += 1
            continue
        if len(kept) >= limit:
            pruned["ranked below the limit"] += 1
            continue
        kept.append(sizes)
    return kept, pruned
