"""The matmul part of the tile-size model of `tv-to-tile` (docs/tiling.md).

Matmul nests are tiled on two levels (`MatmulTiling`): L0 base blocks m0 x k0
(L0A), k0 x n0 (L0B), m0 x n0 (L0C), multiples of the fractal edge, and L1 blocks
of fa x fb base blocks whose fa * fb accumulators stay in L0C while K advances.
Each memory holds its tiles twice (double buffering). Among the sizes that fit,
the model ranks by estimated cycles (`_CycleEstimate`: the cube, each core's
GM -> L1 transfer with its start-ups and L2 hits, the multi-core split's grid),
then GM traffic, padded cube work, fewer accumulators and a deeper k0. A panels,
K splits over the cores, staggered K chunks for the L2, and the cost of a row
epilogue fused into the nest (`fused_rows_cycles` against `row_nest_cycles`)
are chosen here too. The vector part of the model is `tiling_model.py`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from pypto_mlir.targets import Target
from pypto_mlir.targets.cost import dma_cost, mmad_cycles

from .multicore_split import core_split
from .tiling_model import BUFFERING, TilingError, ceil_div, round_up

ASSUMED_DYNAMIC_EXTENT = 4096
"""The size a `?` dim is assumed to have in the matmul cost formula."""

MAX_L1_FACTOR = 4
"""At most this many L0 base blocks per L1 block along M and along N: the base
blocks of an L1 block are unrolled, so the factor bounds the code size."""

MAX_PANEL_CHUNKS = 8
"""At most this many L1 chunks along K in an A panel kept in L1: the K loop of
a panel nest is unrolled (its L0 moves take static windows of the panel), so
the count bounds the code size."""


@dataclass(frozen=True)
class MatmulTiling:
    """L0 base block m0 x n0 x k0 and L1 block (fa * m0) x (fb * n0) x k1, where
    the L1 depth k1 is a multiple of k0 (0: k1 = k0)."""

    m0: int
    n0: int
    k0: int
    fa: int = 1
    fb: int = 1
    k1: int = 0
    panel: bool = False
    """The A rows of an L1 block row stay in L1 (one load of all of K per base
    row block) while the core runs the blocks of that row: only B is loaded per
    block, in double-buffered chunks `k1` deep (`matmul_nests`)."""

    split: int = 1
    """K is split into this many equal ranges, each a block of its own (more
    blocks for the cores when M x N has too few); the f32 partial sums go to a
    GM workspace and a combine nest adds them (`matmul_nests`)."""

    l2_order: bool = False
    """The K chunks of L1 block (i, j) run from chunk (i + j) mod chunks on,
    wrapping around: cores that share an A row or a B column at the same time
    read different chunks of it, so each chunk misses the L2 once and the
    other cores hit it later (`matmul_nests`; tv-to-tile's `matmul-l2-order`).
    With a panel, from chunk i mod chunks (the panel serves the row's
    blocks), the panel loaded chunk by chunk in that order."""

    unroll_k: bool = False
    """The K chunks of a block are unrolled, each loaded one chunk ahead
    (`matmul_nests`; tv-to-tile's `matmul-unroll-k`): no loop entry or exit
    between a block's chunks for the sync to wait at."""

    def __post_init__(self) -> None:
        if self.k1 == 0:
            object.__setattr__(self, "k1", self.k0)

    @property
    def m1(self) -> int:
        return self.fa * self.m0

    @property
    def n1(self) -> int:
        return self.fb * self.n0


@dataclass(frozen=True)
class MatmulRequest:
    m: int | None
    n: int | None
    k: int | None
    in_bytes: int
    acc_bytes: int
    fractal: int
    """Edge of the cube's fractal in elements of the input type."""
    epilogue: Callable[[int, int], int] | None
    """Peak UB bytes of the epilogue on an m0 x n0 block, when there is one."""
    in_type: str = "f16"
    """The operands' element type (the cube's rate), e.g. "f16"."""
    out_bytes: int = 2
    """Bytes of one element of the result."""
    transpose_a: bool = False
    transpose_b: bool = False
    batch: int = 1
    """Product of the leading (batch) extents."""
    cores: int = 1
    """The cores the nest's blocks are spread over."""
    panels: bool = True
    """Consider keeping A panels in L1 across a core's blocks (tv-to-tile's
    `matmul-panels`)."""
    split_k: bool = False
    """Consider splitting K over the cores (tv-to-tile's `matmul-split-k`; the
    caller allows it only for a matmul without epilogue or batch)."""
    l2_order: bool = False
    """Consider staggering the K chunks of the blocks for the L2 (tv-to-tile's
    `matmul-l2-order`; `MatmulTiling.l2_order`)."""
    unroll_k: bool = False
    """Unroll the K chunks of a block when there are few (tv-to-tile's
    `matmul-unroll-k`; `MatmulTiling.unroll_k`, `with_unrolled_k`)."""
    prologue: Callable[[int, int, int], int] | None = None
    """Peak UB bytes of the operand prologues (`matmul_fusion`) on a block
    m0 x n0 chunk k1 deep, when there are any."""
    whole_rows: bool = False
    """Only base blocks holding whole rows of N (n0 >= N, one per L1 block): the
    epilogue reduces along them (`matmul_fusion`, row fusion)."""


def panel_bytes(request: MatmulRequest, tiling: MatmulTiling) -> int:
    """L1 bytes of the A panel of one L1 block row: fa base rows of all of K
    (rounded to whole chunks)."""
    k = request.k if request.k is not None else ASSUMED_DYNAMIC_EXTENT
    return tiling.fa * tiling.m0 * round_up(k, tiling.k1) * request.in_bytes


def matmul_footprint(
    target: Target, request: MatmulRequest, tiling: MatmulTiling
) -> dict[str, int]:
    """Bytes each memory holds once (without double buffering) for `tiling`.

    UB holds the epilogue and, when an L1 tile's rows or columns may end inside
    a fractal, the zeros tile-to-hw copies where the cube reads but nd2nz does
    not write."""
    t, r = tiling, request

    def tail(extent: int | None, step: int) -> bool:
        return extent is None or extent % step != 0

    # Each operand tile as stored: rows, columns, and whether each may have a
    # tail. tile-to-hw zeroes the rows below a partial last fractal row (up to
    # fractal - 1 rows across the tile) and the whole fractal column holding a
    # partial last column (all rows, one fractal row of bytes).
    a = (
        (t.k1, t.m0, tail(r.k, t.k1), tail(r.m, t.m0))
        if r.transpose_a
        else (t.m0, t.k1, tail(r.m, t.m0), tail(r.k, t.k1))
    )
    b = (
        (t.n0, t.k1, tail(r.n, t.n0), tail(r.k, t.k1))
        if r.transpose_b
        else (t.k1, t.n0, tail(r.k, t.k1), tail(r.n, t.n0))
    )
    fractal_row = r.fractal * r.in_bytes
    zero_fill = max(
        [0]
        + [
            (r.fractal - 1) * cols * r.in_bytes
            for _, cols, rows_tail, _ in (a, b)
            if rows_tail
        ]
        + [rows * fractal_row for rows, _, _, cols_tail in (a, b) if cols_tail]
    )
    footprint = {
        "l0a": t.fa * t.m0 * t.k0 * r.in_bytes,
        "l0b": t.fb * t.k0 * t.n0 * r.in_bytes,
        "l0c": t.fa * t.fb * t.m0 * t.n0 * r.acc_bytes,
        "l1": (t.fa * t.m0 + t.fb * t.n0) * t.k1 * r.in_bytes,
    }
    if t.panel:
        # The panel once, and two B chunks (the next one loads during this one).
        footprint["l1"] = panel_bytes(r, t) + 2 * t.fb * t.n0 * t.k1 * r.in_bytes
    ub = zero_fill + (r.epilogue(t.m0, t.n0) if r.epilogue is not None else 0)
    if r.prologue is not None:
        ub += r.prologue(t.m0, t.n0, t.k1)
    if ub:
        footprint["ub"] = ub
    return footprint


def matmul_fits(
    target: Target, request: MatmulRequest, tiling: MatmulTiling, buffering: int
) -> str | None:
    """None if `tiling` fits with `buffering` copies of every tile, else why not.
    The cube steps of an L1 chunk deeper than one step are skewed (the moves of
    step s + 1 come before the matmuls of step s), so L0A and L0B hold two
    steps' tiles even with a single buffer."""
    skewed = 2 if tiling.k1 > tiling.k0 else 1
    for space, needed in matmul_footprint(target, request, tiling).items():
        available = target.memories[space].size
        assert available is not None
        copies = max(buffering, skewed) if space in ("l0a", "l0b") else buffering
        if needed * copies > available:
            shown = f" ({copies} buffers)" if copies > 1 else ""
            return (
                f"{space} needs {needed * copies} bytes{shown} but {space} of "
                f"target '{target.name}' holds {available} bytes"
            )
    return None


def auto_matmul_tiling(
    target: Target, request: MatmulRequest, buffering: int = BUFFERING
) -> MatmulTiling | None:
    """The tiling with the fewest estimated cycles (`_CycleEstimate`) among
    those whose tiles fit (`_fits`: `buffering` copies of the L0 tiles, which the
    skewed cube steps keep live); None if none fits. Ties go to less GM traffic, less
    padded cube work, fewer accumulators, then deeper k0."""
    ranked, _ = ranked_matmul_tilings(target, request, buffering)
    return ranked[0] if ranked else None


def ranked_matmul_tilings(
    target: Target, request: MatmulRequest, buffering: int = BUFFERING
) -> tuple[list[MatmulTiling], Counter[str]]:
    """Every candidate tiling that fits, best first by the key of
    `auto_matmul_tiling`, and how many were pruned by which memory they
    overflow (the auto-tuner seeds its search with this ranking)."""
    r = request
    m = r.m if r.m is not None else ASSUMED_DYNAMIC_EXTENT
    n = r.n if r.n is not None else ASSUMED_DYNAMIC_EXTENT
    k = r.k if r.k is not None else ASSUMED_DYNAMIC_EXTENT
    estimate = _CycleEstimate(target, r)
    keyed: list[tuple[tuple[float, ...], int, MatmulTiling]] = []
    pruned: Counter[str] = Counter()
    for tiling in _matmul_candidates(target, r, buffering):
        overflow = _overflow(target, r, tiling, buffering)
        if overflow is not None:
            pruned[f"does not fit {overflow}"] += 1
        if overflow is not None or not covers_rows(r, tiling):
            continue
        a_reads = 1 if tiling.panel else -(-n // tiling.n1)
        traffic = m * k * a_reads + k * n * -(-m // tiling.m1)
        padded = (
            round_up(m, tiling.m0) * round_up(n, tiling.n0) * round_up(k, tiling.k0)
        )
        key = (
            estimate.cycles(tiling),
            traffic,
            padded,
            tiling.fa * tiling.fb,
            -tiling.k0,
            -tiling.k1,
            -tiling.m0 * tiling.n0,
            tiling.panel,
        )
        keyed.append((key, len(keyed), tiling))
    keyed.sort(key=lambda item: item[:2])
    return [tiling for _, _, tiling in keyed], pruned


def covers_rows(request: MatmulRequest, tiling: MatmulTiling) -> bool:
    """Whether `tiling` suits `request.whole_rows` (one base block spans N)."""
    if not request.whole_rows:
        return True
    return request.n is not None and tiling.fb == 1 and tiling.n0 >= request.n


def _matmul_candidates(
    target: Target, r: MatmulRequest, buffering: int
) -> Iterator[MatmulTiling]:
    """Every tiling worth estimating: base blocks of power-of-two fractals, L1
    factors up to MAX_L1_FACTOR, L0 depths that fit L0A/L0B, L1 depths, with
    and without an A panel."""
    f = r.fractal
    m = r.m if r.m is not None else ASSUMED_DYNAMIC_EXTENT
    n = r.n if r.n is not None else ASSUMED_DYNAMIC_EXTENT
    k = r.k if r.k is not None else ASSUMED_DYNAMIC_EXTENT
    l0a, l0b = target.memories["l0a"].size, target.memories["l0b"].size
    assert l0a is not None and l0b is not None
    for m0 in _block_candidates(m, f):
        for n0 in _block_candidates(n, f):
            for fa in range(1, MAX_L1_FACTOR + 1):
                if fa > 1 and r.m is not None and fa * m0 > r.m:
                    break
                for fb in range(1, MAX_L1_FACTOR + 1):
                    if fb > 1 and r.n is not None and fb * n0 > r.n:
                        break
                    k_room = min(
                        l0a // (buffering * fa * m0 * r.in_bytes),
                        l0b // (buffering * fb * n0 * r.in_bytes),
                    )
                    deepest = min(k_room // f * f, round_up(k, f))
                    for k0 in _depths(deepest, f):
                        # Every halving of K: a long K needs shallow chunks
                        # for two of them to fit L1 (double buffering).
                        for k1 in _chunk_depths(r, round_up(k, f), k0):
                            staggers = _l2_order_applies(target, r, k1)
                            for panel in _panel_choices(r, k1, fa * m0, fb * n0):
                                yield MatmulTiling(m0, n0, k0, fa, fb, k1, panel)
                                if panel and staggers:
                                    yield MatmulTiling(
                                        m0, n0, k0, fa, fb, k1, True, l2_order=True
                                    )
                            if staggers:
                                yield MatmulTiling(
                                    m0, n0, k0, fa, fb, k1, l2_order=True
                                )
                            for split in _splits(r, k1, fa * m0):
                                yield MatmulTiling(m0, n0, k0, fa, fb, k1, split=split)


def _l2_order_applies(target: Target, request: MatmulRequest, k1: int) -> bool:
    """Whether staggered K chunks (`MatmulTiling.l2_order`) can be tried: with
    `l2_order`, a target with an L2, and a static K of two whole `k1` chunks
    or more (the chunk offsets wrap around K; a partial chunk could not)."""
    r = request
    if not r.l2_order or target.l2 is None or r.k is None:
        return False
    return r.k % k1 == 0 and r.k // k1 > 1


MAX_UNROLLED_CHUNKS = 32
"""At most this many K chunks in a block's unrolled K loop (`with_unrolled_k`):
the count bounds the code size."""


def with_unrolled_k(
    target: Target, request: MatmulRequest, tiling: MatmulTiling
) -> MatmulTiling:
    """`tiling` with its K chunks unrolled (`MatmulTiling.unroll_k`) when the
    request allows it, K is static with 2 to MAX_UNROLLED_CHUNKS chunks, two
    chunks fit L1 (each is loaded one chunk ahead), and the nest is a plain
    one (a panel nest is unrolled already; a K split's ranges keep their
    loop)."""
    r, t = request, tiling
    if not r.unroll_k or r.k is None or t.panel or t.split > 1:
        return t
    if not 2 <= -(-r.k // t.k1) <= MAX_UNROLLED_CHUNKS:
        return t
    l1 = target.memories["l1"].size
    assert l1 is not None
    if 2 * matmul_footprint(target, r, t)["l1"] > l1:
        return t
    return replace(t, unroll_k=True)


MAX_K_SPLITS = 8
"""At most this many K ranges: the combine nest adds that many partial sums."""


def _splits(request: MatmulRequest, k1: int, m1: int) -> list[int]:
    """The K splits worth trying (besides 1): with `split_k`, static extents
    and whole L1 block rows (M a multiple of `m1`, or one row), those that cut K into
    whole `k1` chunks (no tails), at most one range per core."""
    r = request
    if not r.split_k or r.m is None or r.n is None or r.k is None or r.batch != 1:
        return []
    chunks = r.k // k1
    if r.k % k1 or (r.m % m1 and r.m > m1):
        return []
    return [s for s in range(2, MAX_K_SPLITS + 1) if chunks % s == 0 and s <= r.cores]


def _panel_choices(
    request: MatmulRequest, k1: int, m1: int, n1: int
) -> tuple[bool, ...]:
    """Whether to try an A panel: only with `panels`, a static K of at most
    MAX_PANEL_CHUNKS chunks, A stored [m, k], L1 block rows that tile M (the
    rows past the last whole L1 block are a loop of their own, which the
    multi-core split runs on one core), and two whole L1 blocks or more per
    row, so that the loop over them stays a loop: blocks emitted one after
    the other would share their (pure, CSE'd) L0 moves of the panel, which
    then stay live across blocks and overflow L0A."""
    r = request
    if not r.panels or r.k is None or r.transpose_a:
        return (False,)
    if r.m is None or (r.m % m1 and m1 < r.m):
        return (False,)
    if r.n is not None and r.n // n1 < 2:
        return (False,)
    if -(-r.k // k1) > MAX_PANEL_CHUNKS:
        return (False,)
    return (False, True)


def _chunk_depths(request: MatmulRequest, deepest: int, k0: int) -> list[int]:
    """L1 chunk depths worth trying: every halving of K (`_depths`), and the
    multiples of `k0` by powers of two that cut a static K into whole chunks
    (K = 6144 halves to 384 and 192 only: 256 reads 512-byte rows of A, the
    GM granule, where 192 reads rows of 384 bytes that pay for 512)."""
    depths = _depths(deepest, k0, request.k is not None, 16)
    if request.k is None:
        return depths
    depth = k0
    while depth <= deepest:
        if request.k % depth == 0 and depth not in depths:
            depths.append(depth)
        depth *= 2
    return sorted(depths)


def _depths(deepest: int, unit: int, deeper: bool = True, count: int = 4) -> list[int]:
    """K depths worth trying: `deepest` and up to `count - 1` halvings, down to
    `unit` (with `deeper` false, only `unit`: a `?` K keeps L1 chunks one cube
    step deep)."""
    if deepest < unit:
        return []
    if not deeper:
        return [unit]
    depths = []
    depth = deepest
    while depth >= unit and len(depths) < count:
        depths.append(depth - depth % unit)
        depth //= 2
    return sorted(set(depths))


def _fits(
    target: Target, request: MatmulRequest, tiling: MatmulTiling, buffering: int
) -> bool:
    """Whether L0A/L0B (and the epilogue in UB) hold `buffering` copies, and L1
    and L0C one (a second copy there is a matter of speed, `_CycleEstimate`).
    L0A and L0B hold two steps' tiles even single-buffered when an L1 chunk
    feeds more than one (skewed) cube step."""
    return _overflow(target, request, tiling, buffering) is None


def _overflow(
    target: Target, request: MatmulRequest, tiling: MatmulTiling, buffering: int
) -> str | None:
    """The first memory that does not hold `tiling` as `_fits` counts it."""
    skewed = 2 if tiling.k1 > tiling.k0 else 1
    for space, needed in matmul_footprint(target, request, tiling).items():
        available = target.memories[space].size
        assert available is not None
        copies = 1 if space in ("l0c", "l1") else buffering
        if space in ("l0a", "l0b"):
            copies = max(copies, skewed)
        if needed * copies > available:
            return space
    return None


class _CycleEstimate:
    """`cycles(tiling)`: a matmul nest's cycles on the target, estimated from the
    simulator's own cost formulas (pypto_mlir.targets.cost) for one L1 block and the
    GM bandwidth the cores share:

        max(rounds * block, wire bytes of all blocks / GM bytes per cycle)

    where rounds = ceil(blocks / cores) and a block takes the busiest of MTE2
    (its L1 loads), MTE1 (its L0 moves) and the cube, plus one chunk of the
    lesser of MTE2 and cube (filling the pipeline), when the K loop is
    pipelined (two copies of its L1 chunk fit and there are two chunks or
    more); MTE2 then the busier of MTE1 and cube otherwise. The fixpipe adds
    to it unless two sets of accumulators fit L0C (then it overlaps too)."""

    def __init__(self, target: Target, request: MatmulRequest):
        self.target = target
        self.r = request
        self._dma: dict[tuple[object, ...], tuple[int, int]] = {}

    def dma(
        self, path: tuple[str, str], rows: int, row_bytes: int, pitch: int
    ) -> tuple[int, int]:
        key = (path, rows, row_bytes, pitch)
        if key not in self._dma:
            cost = dma_cost(self.target, path, rows, row_bytes, 0, 0, pitch, pitch)
            self._dma[key] = (cost.cycles, cost.wire_bytes)
        return self._dma[key]

    def combine(self, t: MatmulTiling) -> float:
        return _combine_cycles(self.target, self.r, t.split)

    def cycles(self, t: MatmulTiling) -> float:
        r, target = self.r, self.target
        m = r.m if r.m is not None else ASSUMED_DYNAMIC_EXTENT
        n = r.n if r.n is not None else ASSUMED_DYNAMIC_EXTENT
        k = r.k if r.k is not None else ASSUMED_DYNAMIC_EXTENT
        e = r.in_bytes
        k = -(-k // t.split)
        chunks = -(-k // t.k1)
        steps = -(-k // t.k0)
        # Loads as stored: A [m, k] (or [k, m]), B [k, n] (or [n, k]).
        a_rows, a_cols, a_pitch = (t.k1, t.m0, m) if r.transpose_a else (t.m0, t.k1, k)
        b_rows, b_cols, b_pitch = (t.n0, t.k1, k) if r.transpose_b else (t.k1, t.n0, n)
        a_cycles, a_wire = self.dma(("gm", "l1"), a_rows, a_cols * e, a_pitch * e)
        b_cycles, b_wire = self.dma(("gm", "l1"), b_rows, b_cols * e, b_pitch * e)
        rows, columns = r.batch * -(-m // t.m1), -(-n // t.n1)
        a_cycles, b_cycles = self._with_l2(t, rows, columns, chunks, a_cycles, b_cycles)
        mte2 = chunks * (t.fa * a_cycles + t.fb * b_cycles)
        mte1 = steps * (
            t.fa * self.dma(("l1", "l0a"), 1, t.m0 * t.k0 * e, 0)[0]
            + t.fb * self.dma(("l1", "l0b"), 1, t.k0 * t.n0 * e, 0)[0]
        )
        cube = steps * t.fa * t.fb * mmad_cycles(target, t.m0, t.n0, t.k0, r.in_type)
        out = ("l0c", "ub") if r.epilogue is not None else ("l0c", "gm")
        out_bytes = r.acc_bytes if t.split > 1 else r.out_bytes
        fix_cycles, fix_wire = self.dma(out, t.m0, t.n0 * out_bytes, n * out_bytes)
        fix = t.fa * t.fb * fix_cycles
        footprint = matmul_footprint(target, r, t)
        l1 = target.memories["l1"].size
        l0c = target.memories["l0c"].size
        assert l1 is not None and l0c is not None
        if t.panel:
            # Only B per block, its chunks double-buffered (`footprint` has both).
            mte2 = chunks * t.fb * b_cycles
        if (t.panel or 2 * footprint["l1"] <= l1) and chunks > 1:
            # Pipelined: one chunk's load (or cube work) is not overlapped.
            block = max(mte2, mte1, cube) + min(mte2, cube) / chunks
        else:
            block = mte2 + max(mte1, cube)
        block = max(block, fix) if 2 * footprint["l0c"] <= l0c else block + fix
        blocks = rows * columns
        fixes = t.fa * t.fb * fix_wire if out[1] == "gm" else 0
        if not t.panel:
            blocks *= t.split
            rounds = -(-blocks // max(1, r.cores))
            wire = blocks * chunks * (t.fa * a_wire + t.fb * b_wire)
            wire = self._hbm_bytes(t, wire) + blocks * fixes
            combine = self.combine(t) if t.split > 1 else 0.0
            return max(rounds * block, wire / target.gm_bytes_per_cycle) + combine
        # A panel: a core loads the panel of each of its block rows once (one
        # DMA per base row block, not overlapped with its first block), then
        # runs that row's blocks (multicore_split's grid decides which).
        panel_cycles, panel_wire = self.dma(("gm", "l1"), t.m0, k * e, k * e)
        if t.l2_order:
            # A staggered panel is loaded chunk by chunk, rotated by its row.
            cycles, wire = self.dma(("gm", "l1"), t.m0, t.k1 * e, k * e)
            panel_cycles, panel_wire = chunks * cycles, chunks * wire
        row_cores, column_cores = core_split(rows, columns, max(1, r.cores), True)
        core_rows = -(-rows // row_cores)
        core_columns = -(-columns // column_cores)
        cycles = core_rows * (t.fa * panel_cycles + core_columns * block)
        wire = rows * column_cores * t.fa * panel_wire + blocks * chunks * t.fb * b_wire
        wire = self._hbm_bytes(t, wire) + blocks * fixes
        return max(cycles, wire / target.gm_bytes_per_cycle)

    def _hbm_bytes(self, t: MatmulTiling, wire: float) -> float:
        """The operand bytes read from HBM when the blocks read `wire` bytes.
        With an L2 each line is filled once (the other reads hit, or wait for
        the fill in flight: docs/simulator.md, "L2 cache") when a B line is
        still resident when the next block row reads it: the L2 holds B and
        what the cores read and write meanwhile, a block row of A and C each;
        else, and without an L2, all of them."""
        l2, r = self.target.l2, self.r
        if l2 is None or r.m is None or r.n is None or r.k is None:
            return wire
        rows = min(-(-r.m // t.m1), max(1, self.r.cores))
        sweep = r.k * r.n * r.in_bytes
        sweep += rows * t.m1 * (r.k * r.in_bytes + r.n * r.out_bytes)
        operands = r.batch * (r.m + r.n) * r.k * r.in_bytes
        return min(wire, operands) if sweep <= l2.size else wire

    def _with_l2(
        self,
        t: MatmulTiling,
        rows: int,
        columns: int,
        chunks: int,
        a_cycles: int,
        b_cycles: int,
    ) -> tuple[float, float]:
        """The A and B chunk loads' cycles with an L2 (unchanged without one).

        A core runs its blocks row by row (`multicore_split` grids the block
        loops): a chunk of its A row misses in its first block of the row and
        hits in the others, a chunk of a B column misses in its first row. The
        cores that run one A row (B column) at the same time read the same
        chunk at once and all wait for its fill, unless the chunks are
        staggered (`l2_order`): then one of them misses each chunk and the
        others hit it a chunk later. A hit starts after the L2's hit latency
        instead of the path's."""
        l2 = self.target.l2
        if l2 is None:
            return a_cycles, b_cycles
        units = rows * t.split
        row_cores, column_cores = core_split(units, columns, max(1, self.r.cores), True)
        core_rows = -(-units // row_cores)
        core_columns = -(-columns // column_cores)
        a_slow = 1 / core_columns
        b_slow = 1 / core_rows
        if t.l2_order:
            # The sharers start at min(sharers, chunks) different chunks: all
            # miss at the first one, then one group misses each chunk.
            a_slow *= _staggered_misses(min(columns, column_cores), chunks)
            b_slow *= _staggered_misses(min(units, row_cores), chunks)
        saved = self.target.dma_path("gm", "l1").latency - l2.hit_latency
        return a_cycles - saved * (1 - a_slow), b_cycles - saved * (1 - b_slow)


def _staggered_misses(sharers: int, chunks: int) -> float:
    """The share of their chunk loads that miss the L2 when `sharers` cores
    read the same `chunks` chunks at once from staggered starts."""
    groups = max(1, min(sharers, chunks))
    return 1 / chunks + (1 - 1 / chunks) / groups


def matmul_cycles(
    target: Target, request: MatmulRequest, tiling: MatmulTiling
) -> float:
    """The estimated cycles of `request`'s nest with `tiling` (`_CycleEstimate`)."""
    return _CycleEstimate(target, request).cycles(tiling)


@dataclass(frozen=True)
class RowEpilogue:
    """What the row-fusion estimates need of a matmul's row epilogue (its
    reductions and softmax along the rows)."""

    vector_per_row: float
    """Vector cycles per row of the result, from the roofline's step counts
    (`pypto_mlir.roofline.ops_vector_cycles`)."""
    in_row_bytes: int
    """Bytes of a row of the matmul result (what a row nest loads)."""
    out_row_bytes: int
    """Bytes the epilogue stores per row (all its outputs)."""


def _row_store(target: Target, rows: int, epilogue: RowEpilogue) -> float:
    if not epilogue.out_row_bytes:
        return 0.0
    return dma_cost(target, ("ub", "gm"), rows, epilogue.out_row_bytes).cycles


def fused_rows_cycles(
    target: Target,
    request: MatmulRequest,
    tiling: MatmulTiling,
    epilogue: RowEpilogue,
) -> float:
    """A row-fused matmul nest (`request.whole_rows`): the matmul's estimate,
    and per L1 block of m1 whole rows the epilogue's vector work and store,
    pipelined with the next block's matmul on the core (each core's rounds
    take the longer of the two; one block's shorter part is not overlapped)."""
    m = request.m if request.m is not None else ASSUMED_DYNAMIC_EXTENT
    blocks = request.batch * ceil_div(m, tiling.m1)
    rounds = ceil_div(blocks, max(1, request.cores))
    per_block = matmul_cycles(target, request, tiling) / rounds
    rows = min(tiling.m1, m)
    epi = epilogue.vector_per_row * rows + _row_store(target, rows, epilogue)
    return rounds * max(per_block, epi) + min(per_block, epi)


def row_nest_cycles(
    target: Target, epilogue: RowEpilogue, tile_rows: int, units: int, cores: int
) -> float:
    """The row nest of an unfused epilogue: `units` tiles of `tile_rows` rows
    over `cores`, each loaded (from the L2 when the target has one: the matmul
    has just written the rows), reduced and stored, double-buffered (a core's
    rounds take the busiest of the three; the first load and the last store
    overlap nothing)."""
    rounds = ceil_div(units, max(1, min(units, cores)))
    latency = target.dma_path("gm", "ub").latency
    hit = target.l2.hit_latency if target.l2 is not None else latency
    load = (
        dma_cost(target, ("gm", "ub"), tile_rows, epilogue.in_row_bytes).cycles
        - latency
        + hit
    )
    store = _row_store(target, tile_rows, epilogue)
    vector = epilogue.vector_per_row * tile_rows
    return load + store + rounds * max(load, vector, store)


@dataclass(frozen=True)
class OperandPrologue:
    """The elementwise ops computing a matmul operand (`matmul_fusion`'s
    prologue), as its cost estimates see them."""

    lhs: bool
    """The operand is A (else B)."""
    vector_per_element: float
    """The vector unit's cycles per element of the operand (the roofline's
    step counts, `roofline.ops_vector_cycles`)."""
    rows: int
    """The operand's rows as stored (batch included)."""
    columns: int
    """The operand's elements per stored row."""
    element_bytes: int


def fused_prologue_cycles(
    target: Target,
    request: MatmulRequest,
    tiling: MatmulTiling,
    prologues: Sequence[OperandPrologue],
) -> float:
    """The matmul nest with its operand prologues: the matmul's estimate, and
    on each block, for each chunk of a computed operand (A: fa chunks m0 x k1;
    B: fb chunks k1 x n0), its vector work, its move UB -> L1 and the load's
    GM -> UB cycles instead of GM -> L1 (not overlapped: the cube waits for
    the chunk it multiplies)."""
    m = request.m if request.m is not None else ASSUMED_DYNAMIC_EXTENT
    n = request.n if request.n is not None else ASSUMED_DYNAMIC_EXTENT
    k = request.k if request.k is not None else ASSUMED_DYNAMIC_EXTENT
    e = request.in_bytes
    chunks = ceil_div(k, tiling.k1)
    per_block = 0.0
    for prologue in prologues:
        rows, cols, count = (
            (tiling.m0, tiling.k1, tiling.fa)
            if prologue.lhs
            else (tiling.k1, tiling.n0, tiling.fb)
        )
        load = dma_cost(target, ("gm", "ub"), rows, cols * e).cycles - (
            dma_cost(target, ("gm", "l1"), rows, cols * e).cycles
        )
        move = dma_cost(target, ("ub", "l1"), rows, cols * e).cycles
        vector = prologue.vector_per_element * rows * cols
        per_block += chunks * count * (load + move + vector)
    blocks = request.batch * ceil_div(m, tiling.m1) * ceil_div(n, tiling.n1)
    rounds = ceil_div(blocks, max(1, request.cores))
    return matmul_cycles(target, request, tiling) + rounds * per_block


def prologue_nest_cycles(
    target: Target, prologue: OperandPrologue, cores: int
) -> float:
    """The prologue as a nest of its own over the cores: each core's rows
    loaded from GM (the kernel's input: the HBM latency), computed and stored
    (the matmul then reads them, a `sync_all` after)."""
    rows = ceil_div(prologue.rows, max(1, min(prologue.rows, cores)))
    row_bytes = prologue.columns * prologue.element_bytes
    load = dma_cost(target, ("gm", "ub"), rows, row_bytes).cycles
    store = dma_cost(target, ("ub", "gm"), rows, row_bytes).cycles
    return load + prologue.vector_per_element * rows * prologue.columns + store


def matmul_choice_text(
    target: Target, request: MatmulRequest, tiling: MatmulTiling
) -> str:
    """What the model estimates for `tiling` and, for an A panel, a K split or
    staggered K chunks, for the same blocks without it (or, when staggering was
    possible but not chosen, with it): the remark's reason for the choice."""
    r = request
    estimate = _CycleEstimate(target, r)
    m = r.m if r.m is not None else ASSUMED_DYNAMIC_EXTENT
    n = r.n if r.n is not None else ASSUMED_DYNAMIC_EXTENT
    rows, columns = r.batch * -(-m // tiling.m1), -(-n // tiling.n1)
    row_cores, column_cores = core_split(
        rows * tiling.split, columns, max(1, r.cores), True
    )
    cores = min(rows * tiling.split, row_cores) * min(columns, column_cores)
    text = (
        f"; {rows}x{columns} L1 block(s) over {cores} core(s), estimated "
        f"{estimate.cycles(tiling):.0f} cycles"
    )
    plain = replace(tiling, panel=False, split=1)
    if tiling.split > 1:
        text += (
            f"; K split in {tiling.split} ranges of {(r.k or 0) // tiling.split} "
            f"({rows * columns * tiling.split} blocks for {r.cores} cores), f32 "
            f"partial sums combined in a second phase (estimated "
            f"{estimate.combine(tiling):.0f} cycles of it; "
            f"{estimate.cycles(plain):.0f} cycles without the split)"
        )
    if tiling.l2_order:
        chunks = (r.k or 0) // tiling.k1
        order = (
            f"block row i starts at chunk i mod {chunks}, its panel loaded chunk "
            "by chunk in that order"
            if tiling.panel
            else f"block (i, j) starts at chunk (i + j) mod {chunks}"
        )
        text += (
            f"; K chunks staggered for the l2: {order} (estimated "
            f"{estimate.cycles(replace(tiling, l2_order=False)):.0f} cycles in order)"
        )
    elif tiling.split == 1 and _l2_order_applies(target, r, tiling.k1):
        staggered = replace(tiling, panel=False, l2_order=True)
        text += (
            f"; K chunks in order (estimated {estimate.cycles(staggered):.0f} "
            "cycles staggered for the l2)"
        )
    if tiling.unroll_k:
        text += f"; K loop unrolled ({-(-(r.k or 0) // tiling.k1)} chunks)"
    if tiling.panel:
        text += (
            f"; A panel {tiling.m1}x{r.k} kept in l1 across a core's blocks of a "
            f"row ({panel_bytes(r, tiling)} bytes; estimated "
            f"{estimate.cycles(plain):.0f} cycles without)"
        )
    return text


def _combine_cycles(target: Target, r: MatmulRequest, split: int) -> float:
    """The combine phase of a K split: the barrier after the partial sums, then
    per core its share of M x N read `split` times in f32 (GM -> UB), added and
    written once (UB -> GM), at the paths' rates, with one start-up each."""
    assert r.m is not None and r.n is not None
    share = -(-r.m * r.n // max(1, r.cores))
    read, write = target.dma_path("gm", "ub"), target.dma_path("ub", "gm")
    barrier = target.sync.all_latency
    return (
        barrier
        + split * (read.latency + share * r.acc_bytes / read.bytes_per_cycle)
        + write.latency
        + share * r.out_bytes / write.bytes_per_cycle
    )


def _block_candidates(extent: int, fractal: int) -> list[int]:
    """Base-block sizes worth trying along a dim: power-of-two numbers of
    fractals, and the whole (rounded) extent."""
    whole = round_up(extent, fractal)
    sizes = {whole}
    size = fractal
    while size < whole:
        sizes.add(size)
        size *= 2
    return sorted(sizes)


def explicit_matmul_tiling(
    target: Target, request: MatmulRequest, sizes: Sequence[int]
) -> MatmulTiling:
    """`matmul-tile-sizes=m0,n0,k0`, `m1,n1,m0,n0,k0` or `m1,n1,k1,m0,n0,k0`;
    raises TilingError."""
    if len(sizes) == 3:
        m0, n0, k0 = sizes
        m1, n1, k1 = m0, n0, k0
    elif len(sizes) == 5:
        m1, n1, m0, n0, k0 = sizes
        k1 = k0
    elif len(sizes) == 6:
        m1, n1, k1, m0, n0, k0 = sizes
    else:
        raise TilingError(
            f"matmul-tile-sizes takes 3 values (m0,n0,k0), 5 (m1,n1,m0,n0,k0) or 6 "
            f"(m1,n1,k1,m0,n0,k0), got {len(sizes)}"
        )
    f = request.fractal
    for name, value in (("m0", m0), ("n0", n0), ("k0", k0)):
        if value <= 0 or value % f:
            raise TilingError(
                f"matmul-tile-sizes: {name} = {value} is not a positive multiple of "
                f"the {f}-element fractal"
            )
    if m1 % m0 or n1 % n0 or m1 <= 0 or n1 <= 0:
        raise TilingError(
            f"matmul-tile-sizes: the L1 block {m1}x{n1} is not made of {m0}x{n0} "
            "base blocks"
        )
    if k1 <= 0 or k1 % k0:
        raise TilingError(
            f"matmul-tile-sizes: the L1 depth k1 = {k1} is not a multiple of k0 = {k0}"
        )
    if k1 > k0 and request.k is None:
        raise TilingError(
            f"matmul-tile-sizes: an L1 depth k1 = {k1} deeper than k0 = {k0} needs a "
            "static K"
        )
    tiling = MatmulTiling(m0, n0, k0, m1 // m0, n1 // n0, k1)
    problem = matmul_fits(target, request, tiling, 1)
    if problem is not None:
        raise TilingError(f"matmul-tile-sizes {','.join(map(str, sizes))}: {problem}")
    return tiling
