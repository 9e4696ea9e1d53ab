"""The estimate of the flash-attention nest (passes/attention_nests.py):
which query and key blocks fit the on-chip memories, the cycles of one key
step on each pipe, and the key split (flash-decoding) when the query blocks
are fewer than the cores. The counterpart of passes/matmul_model.py for the
attention nest (docs/tiling.md, *Attention*, *The key split*).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from pypto_mlir.targets import Target, cost

ROW_BLOCKS = (128, 64, 32, 16)
"""Query-block heights tried (multiples of the cube's 16-row fractal)."""

KEY_BLOCKS = (256, 128, 64, 32, 16)
"""Key-block widths tried."""

STAGES = 4
"""Key blocks per loop iteration, their K and V blocks in L1 at once."""


@dataclass(frozen=True)
class AttentionTiling:
    """The query block (`br` rows) and key block (`bc` keys) of the nest, and
    whether the row sums of the probabilities are taken on the cube (`p` times
    a block of ones, `cube_sum`) instead of by a row reduction on the vector
    unit."""

    br: int
    bc: int
    cube_sum: bool = False
    step: float = 0.0
    """The estimated cycles of a key step (`step_cycles`), for the remark."""
    vector_step: float = 0.0
    """The same with the row sums on the vector unit."""
    split: int = 1
    """The key ranges each query block's keys are split into (flash-decoding:
    each range a unit of work of its own, its partial max, sum and accumulator
    combined after a `sync_all`); 1: no split."""
    estimate: float = 0.0
    """The estimated cycles of the chosen blocks (`choose_tiling`)."""
    other: float = 0.0
    """The best estimate of the other choice: without a key split when it is
    split, with the best key split otherwise (0: none was considered)."""
    other_split: int = 1
    """The key ranges of that other choice."""
    combine_rows: int = 0
    """With a key split: the rows of a tile of the combine nest."""
    stat_columns: int = 1
    """With a key split: the f32 columns a row max or sum is broadcast to
    in its workspace (one UB alignment unit: the rows of the tile and of the
    workspace are then contiguous, one DMA burst instead of one per row)."""
    f32_max: bool = False
    """Take a block's row maxima from its scores in f32 (the copy the
    exponent reads) rather than in f16 (`attention-f32-max`): chosen when an
    f32 row is one vector repeat, which `vblock_reduce_max` reduces at 8 rows
    a repeat instead of a `vreduce_max` repeat per row (`f32_max_pays`)."""
    prefetch: bool = False
    """Load the ROW group's per-key-block inputs (a mask) of a group of key
    blocks with its K and V blocks (`attention-prefetch`), STAGES of them in
    UB at once, instead of right before each block's softmax (where the
    vector unit waits for the load)."""


@dataclass(frozen=True)
class KeyLayout:
    """How the K and V operands lie in GM, for the cost of loading a block of
    `bc` keys: each either a key a row (`k` of `q @ k.T`, `v` of `p @ v`: the
    block is `bc` whole rows, one burst) or a key a column (`k` of `q @ k`:
    `d` rows of `bc` elements at the pitch of `keys`). Each operand is its
    own row-major tensor, as the matmul model assumes."""

    k_key_rows: bool = True
    v_key_rows: bool = True
    keys: int = 0
    """The keys' extent (the pitch of a key-a-column operand's rows)."""

    def blocks(self, bc: int, d: int, dv: int) -> list[tuple[int, int, int]]:
        """The K and V blocks' rows, row bytes and GM pitch (f16)."""
        return [
            (bc, width * 2, width * 2) if key_rows else (width, bc * 2, self.keys * 2)
            for width, key_rows in ((d, self.k_key_rows), (dv, self.v_key_rows))
        ]


class StepCycles(NamedTuple):
    """`step_cycles`' estimate of a key step."""

    first: float
    """The first step's loads (they miss the L2), which nothing overlaps."""
    step: float
    """A step in a stream of them: its busiest pipe."""
    last: float
    """The last step's work, which no load overlaps."""
    loads: float
    """A step's loads on MTE2."""
    work: float
    """A step's vector work and the chain of moves it waits on."""

    def block(self, steps: int, grouped: bool) -> float:
        """Cycles of a query block's `steps` key steps. `grouped` (the ROW
        inputs prefetched, `attention-prefetch`): a group's loads wait for the
        UB that its predecessor's last block frees (`ub_bytes`: the prefetched
        inputs take the place of a block's f32 scores), so each group of
        STAGES steps is a pipeline of loads and work filled and drained again:
        its loads, then a step's busiest pipe per further step, then one
        step's work."""
        if not grouped:
            return self.first + steps * self.step + self.last
        groups, rest = divmod(steps, STAGES)

        def group(size: int) -> float:
            return self.loads + (size - 1) * self.step + self.work if size else 0.0

        return self.first - self.loads + groups * group(STAGES) + group(rest)


ONES = 16
"""Columns of the block of ones the cube sums the probabilities with (a
fractal)."""


def f32_max_pays(target: Target, bc: int) -> bool:
    """Whether a key block's row maxima are cheaper from the scores in f32:
    an f32 row of `bc` keys is one vector repeat (8 blocks), which
    `vblock_reduce_max` reduces 8 rows a repeat (hw_isel/reductions.py,
    "blocks"), where an f16 row takes a `vreduce_max` repeat of its own."""
    return bc * 4 == target.vector.repeat_bytes


def _cube_sum_bytes(br: int, bc: int, cube_sum: bool) -> tuple[int, int]:
    """With `cube_sum`, the bytes of the f16 block of ones (bc x ONES) and of
    the f32 row sums (br x ONES); 0 without."""
    if not cube_sum:
        return 0, 0
    return bc * ONES * 2, br * ONES * 4


def ub_bytes(
    br: int,
    bc: int,
    dv: int,
    cube_sum: bool = False,
    row_bytes: int = 0,
    prefetch: bool = False,
) -> int:
    """The UB bytes `_fits` counts for one key step, an estimate of the peak
    of tile-to-hw's memory plan (test_attention_fusion compares them):
    STAGES blocks of scores in f16, two blocks in f32 (a block's copy, its
    exponent computed in place, and the next block's), the accumulator and
    two products (a block's product waits for the next block's softmax
    before it is added; one was counted before, 32 KiB short at dv = 256
    with 32-row blocks), the row statistics, the ROW group's per-key-block
    inputs (`row_bytes` an element), and with `cube_sum` the block of ones
    and the row sums. With `prefetch`, STAGES blocks of those inputs in
    place of the second f32 block: the peak is at the first block's softmax,
    before any other block's f32 copy (it takes the first block's scores
    and inputs once they are dead)."""
    ones, sums = _cube_sum_bytes(br, bc, cube_sum)
    inputs = STAGES * row_bytes if prefetch else 4 + row_bytes
    ub = br * bc * (2 * STAGES + 4 + inputs) + br * dv * 4 * 3
    return ub + br * 4 * 8 + ones + 2 * sums


def _fits(
    target: Target,
    br: int,
    bc: int,
    d: int,
    dv: int,
    cube_sum: bool = False,
    row_bytes: int = 0,
    prefetch: bool = False,
) -> bool:
    """Whether the tiles of one key step fit every on-chip memory: STAGES L1
    stages of K and V, the UB as `ub_bytes` counts it, and with `cube_sum`
    the block of ones in L1 and L0B and the row sums in L0C."""

    def size(name: str) -> int:
        found = target.memories[name].size
        assert found is not None
        return found

    ones, sums = _cube_sum_bytes(br, bc, cube_sum)
    l0a = br * d * 2 + br * bc * 2
    # One L0B buffer for K and V: each block is moved right before the matmul
    # that consumes it (what tile-to-hw allocates); the ones stay.
    l0b = max(d, dv) * bc * 2 + ones
    l0c = STAGES * br * bc * 4 + br * dv * 4 + sums
    l1 = br * d * 2 + STAGES * (bc * d * 2 + bc * dv * 2) + br * bc * 2 + ones
    ub = ub_bytes(br, bc, dv, cube_sum, row_bytes, prefetch)
    return (
        l0a <= size("l0a")
        and l0b <= size("l0b")
        and l0c <= size("l0c")
        and l1 <= size("l1")
        and ub <= size("ub")
    )


def step_cycles(
    target: Target,
    br: int,
    bc: int,
    d: int,
    dv: int,
    cube_sum: bool = False,
    misses: float = 0.0,
    f32_max: bool = False,
    row_bytes: int = 0,
    prefetch: bool = False,
    layout: KeyLayout = KeyLayout(),
) -> StepCycles:
    """Estimated cycles of one key step on its busiest pipe, from the target's
    costs: MTE2 loads the K and V blocks (nd2nz, a burst per block of whole
    rows), V runs the step's vector instructions over the scores and the
    accumulator, MTE3 moves the probabilities to L1 (a strided copy per
    fractal column). The loads of the next step overlap this one's work, so a
    step takes the largest, but the first loads and the last step's work do
    not overlap anything (`StepCycles`). `misses`: the share of the later K
    and V loads that miss the L2 (`key_misses`). `row_bytes`: the bytes an
    element of the ROW group's per-key-block inputs (a mask, its own rows to
    each query block) that MTE2 also loads each step, and the vector unit
    adds; without `prefetch` the vector unit waits for their load. `f32_max`:
    the row maxima from the f32 scores by blocks (`f32_max_pays`). `layout`:
    how K and V lie in GM (a block of whole rows is one burst)."""
    # The query blocks of a head read the same K and V blocks: after the
    # first, a load hits in the L2 (when the target has one) and starts after
    # its hit latency, unless its core is the one that fills the lines.
    gm_latency = latency = target.dma_path("gm", "l1").latency
    if target.l2 is not None:
        hit = target.l2.hit_latency
        latency = hit + misses * (latency - hit)
    mte2 = sum(
        cost.matrix_move_cycles(target, ("gm", "l1"), *shape, misses)
        for shape in layout.blocks(bc, d, dv)
    )
    rows_in = 0.0
    if row_bytes:
        # A query block's own rows of the inputs, its key blocks in order: a
        # load misses the L2 only in the lines no earlier block touched.
        line = target.l2.line if target.l2 is not None else 1
        share = min(1.0, bc * row_bytes / line)
        rows_in = cost.l2_dma_cycles(target, ("gm", "ub"), br, bc * row_bytes, share)
    mte2 += rows_in
    scores = br * bc
    # (op, repeats, type): a row reduction takes a repeat per row (and per
    # repeat of a long row), the others cover the elements in whole repeats.
    row = -(-bc * 2 // target.vector.repeat_bytes)
    row32 = -(-bc * 4 // target.vector.repeat_bytes)
    work = [
        ("div", cost.vector_repeats(target, scores, "f16"), "f16"),
        ("cast", cost.vector_repeats(target, scores, "f32"), "f32"),
        *(
            # one repeat a row reduced to a block, then 8 rows a repeat
            [("block_reduce_max", br + -(-br // 8), "f32")]
            if f32_max
            else [("reduce_max", br * row, "f16")]
        ),
        ("sub", cost.vector_repeats(target, scores, "f32"), "f32"),
        ("exp", cost.vector_repeats(target, scores, "f32"), "f32"),
        ("cast", cost.vector_repeats(target, scores, "f32"), "f32"),
        ("mul", cost.vector_repeats(target, br * dv, "f32"), "f32"),
        ("add", cost.vector_repeats(target, br * dv, "f32"), "f32"),
    ]
    if row_bytes:
        work += [("add", cost.vector_repeats(target, scores, "f16"), "f16")]
    if cube_sum:
        # The running sums, ONES wide: rescaled and added to (a broadcast).
        sums = cost.vector_repeats(target, br * ONES, "f32")
        work += [("mul", sums, "f32"), ("add", sums, "f32")]
    else:
        work += [("reduce_sum", br * row32, "f32")]
    # Each instruction counted with its start-up (the step's instructions wait
    # for the cube between them, so streams are short).
    vector = sum(
        cost.vector_cycles(target, op, repeats, t)
        + cost.vector_head_cycles(target, op, t)
        for op, repeats, t in work
    )
    mte3 = (bc // 16) * cost.dma_cycles(target, ("ub", "l1"), br, 32)
    # The chain of one step that nothing of the step overlaps: the start-ups
    # of its on-chip moves (probabilities to L1, operands to L0, results out
    # of L0C) between the cube and the vector unit.
    chain = (
        sum(
            target.dma_path(*path).latency
            for path in (("l1", "l0a"), ("l1", "l0b"), ("l0c", "ub"))
        )
        * 2
        + (bc // 16) * target.dma_path("ub", "l1").latency
        # without the prefetch, the vector unit waits for the block's inputs
        + (0 if prefetch else rows_in)
    )
    first = mte2 - 2 * latency + 2 * gm_latency
    return StepCycles(
        first, max(mte2, vector + chain, mte3), vector + mte3, mte2, vector + chain
    )


def choose_tiling(
    target: Target,
    cores: int,
    frame: Sequence[int],
    d: int,
    dv: int,
    cube_sum: bool = True,
    key_split: bool = True,
    f32_max: bool = True,
    prefetch: bool = True,
    row_bytes: int = 0,
    layout: KeyLayout = KeyLayout(),
) -> AttentionTiling | None:
    """The query and key blocks that fit (`_fits`, no larger than the dims
    need) with the fewest estimated cycles on the busiest core: the rounds of
    query blocks it runs times the key steps of a block times `step_cycles`
    (taller query blocks load each K and V block for more rows; more of them
    spread over more cores); ties go to taller blocks. With `cube_sum`, each
    block is also estimated with the row sums on the cube, taken when that is
    cheaper. With `key_split`, when the query blocks are fewer than the cores
    and all whole, each is also estimated with its keys split into ranges run
    as units of their own (`key_splits`) plus the combine after them
    (`split_cycles`). `f32_max`, `prefetch`: let the nest take the row
    maxima in f32 where that pays (`f32_max_pays`) and prefetch the ROW
    group's per-key-block inputs (`row_bytes` an element, 0: none) where
    STAGES of them fit. `layout`: how K and V lie in GM (`KeyLayout`)."""
    batch = math.prod(frame[:-2])
    rows, keys = frame[-2], frame[-1]
    stats = target.memories["ub"].alignment // 4
    stats_ok = stats >= 1
    best: tuple[tuple[float, int, int, int], AttentionTiling] | None = None
    best_of: dict[bool, float] = {}
    """The best estimate without (False) and with (True) a key split."""
    split_of: dict[bool, int] = {}
    for br in ROW_BLOCKS:
        if br >= 2 * max(rows, 16):
            continue
        for bc in KEY_BLOCKS:
            if bc >= 2 * max(keys, 16):
                continue
            blocks = batch * -(-rows // br)
            # A unit's query block is a run-time function of the unit index:
            # its rows are static only if every block is whole.
            splits = [1]
            if key_split and rows % br == 0:
                splits = key_splits(keys, bc, blocks, cores)
            misses = key_misses(rows, br, cores)
            use_f32 = f32_max and f32_max_pays(target, bc)
            for on_cube in (False, True) if cube_sum else (False,):
                fetch = (
                    prefetch
                    and row_bytes > 0
                    and _fits(target, br, bc, d, dv, on_cube, row_bytes, True)
                )
                if not fetch and not _fits(
                    target, br, bc, d, dv, on_cube, row_bytes, False
                ):
                    continue
                shape = (target, br, bc, d, dv)
                vector_step = step_cycles(
                    *shape, False, misses, use_f32, row_bytes, fetch, layout
                )[1]
                cycles = step_cycles(
                    *shape, on_cube, misses, use_f32, row_bytes, fetch, layout
                )
                for split in splits:
                    units = blocks * split
                    rounds = -(-units // max(cores, 1))
                    steps = -(-keys // (bc * split))
                    estimate = rounds * cycles.block(steps, fetch)
                    combine = 0
                    if split > 1 and stats_ok:
                        combine = combine_rows(target, cores, blocks, br, dv)
                        estimate += split_cycles(
                            target, cores, batch, rows, br, dv, split, stats
                        )
                    split_of.setdefault(split > 1, split)
                    if estimate < best_of.get(split > 1, math.inf):
                        best_of[split > 1] = estimate
                        split_of[split > 1] = split
                    key = (estimate, split, -br, int(not on_cube))
                    if best is None or key < best[0]:
                        tiling = AttentionTiling(
                            br,
                            bc,
                            on_cube,
                            cycles.step,
                            vector_step,
                            split,
                            estimate,
                            combine_rows=combine,
                            stat_columns=stats,
                            f32_max=use_f32,
                            prefetch=fetch,
                        )
                        best = (key, tiling)
    if best is None:
        return None
    chosen = best[1]
    other = best_of.get(chosen.split == 1, 0.0)
    other_split = split_of.get(chosen.split == 1, 1)
    return replace(chosen, other=other, other_split=other_split)


def key_misses(rows: int, br: int, cores: int) -> float:
    """The share of a core's K and V loads that miss the L2: the query
    blocks of one head that run at once (at most one per core) read the same
    keys, each from another key block on (`AttentionNest._rotation`), so each
    block is filled by one of them and hit by the others."""
    return 1 / max(1, min(-(-rows // br), cores))


def key_splits(keys: int, bc: int, blocks: int, cores: int) -> list[int]:
    """The key ranges a query block's keys may be split into: 1, and when the
    query blocks are fewer than the cores, every count of equal ranges of
    whole key blocks (static offsets and extents in each unit) that gives at
    most twice as many units as cores."""
    found = [1]
    if blocks >= cores:
        return found
    split = 2
    while blocks * split <= 2 * cores and split * bc <= keys:
        if keys % (split * bc) == 0:
            found.append(split)
        split += 1
    return found


def combine_rows(
    target: Target, cores: int, tiles_per_row: int, br: int, dv: int
) -> int:
    """The rows of a combine tile: a divisor of `br` (a combine tile stays in
    one query block), halved from `br` while the tiles are fewer than the
    cores, and until the partial accumulators, the sum and the product fit a
    half of UB."""
    ub = target.memories["ub"].size
    assert ub is not None
    rows = br
    while rows % 32 == 0 and (
        tiles_per_row * (br // rows) < cores or 3 * rows * dv * 4 > ub // 2
    ):
        rows //= 2
    return rows


def split_cycles(
    target: Target,
    cores: int,
    batch: int,
    rows: int,
    br: int,
    dv: int,
    split: int,
    stats: int,
) -> float:
    """Estimated cycles a key split adds: each unit stores its accumulator in
    f32 and its max and sum instead of the output, a `sync_all`, and the
    combine (per tile of `combine_rows` rows, on the cores: the partials
    loaded from the L2 (just written), rescaled and added, the quotient
    stored)."""

    def hit(path: tuple[str, str], bursts: int, width: int) -> float:
        latency = target.dma_path(*path).latency
        if target.l2 is not None:
            latency = target.l2.hit_latency
        return cost.dma_cycles(target, path, bursts, width) - (
            target.dma_path(*path).latency - latency
        )

    store = (
        cost.dma_cycles(target, ("ub", "gm"), br, dv * 4)
        + 2 * cost.dma_cycles(target, ("ub", "gm"), 1, br * stats * 4)
        - cost.dma_cycles(target, ("ub", "gm"), br, dv * 2)
    )
    blocks = batch * -(-rows // br)
    r = combine_rows(target, cores, blocks, br, dv)
    tiles = batch * -(-rows // r)
    loads = split * (
        hit(("gm", "ub"), r, dv * 4) + 2 * hit(("gm", "ub"), 1, r * stats * 4)
    )
    wide = cost.vector_repeats(target, r * dv, "f32")
    work = [("mul", wide), ("add", wide), ("sub", r), ("exp", r), ("max", r)]
    vector = split * sum(
        cost.vector_cycles(target, op, n, "f32")
        + cost.vector_head_cycles(target, op, "f32")
        for op, n in work
    )
    out = cost.dma_cycles(target, ("ub", "gm"), r, dv * 2)
    combine = -(-tiles // max(cores, 1)) * (loads + vector + out)
    units = blocks * split
    return -(-units // max(cores, 1)) * store + target.sync.all_latency + combine


# --------------------------------------------------------------------------------------
# The nest
# --------------------------------------------------------------------------------------
