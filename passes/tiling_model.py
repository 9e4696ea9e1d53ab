"""The tile-size model of `tv-to-tile` (docs/tiling.md).

Every number comes from the target: memory capacities and alignments, the cube's
fractal. Two kinds of nest are sized here:

- *Vector nests* (elementwise chains, reductions, softmax, transposes, matmul
  epilogues) keep their tiles in UB. The pass builds the nest once with probe
  sizes and measures which tiles are live at each point (`LiveProfile`); the
  model then picks the largest tile whose peak live bytes, doubled for double
  buffering, fit UB. Columns are a multiple of the UB alignment (in elements of
  the widest-aligned element type), rows are free.
- *Matmul nests* are tiled on two levels (`MatmulTiling`): L0 base blocks
  m0 x k0 (L0A), k0 x n0 (L0B), m0 x n0 (L0C), multiples of the fractal edge, and
  L1 blocks of fa x fb base blocks whose fa * fb accumulators stay in L0C while
  K advances. Each memory holds its tiles twice (double buffering). Among the
  sizes that fit, the model minimises GM traffic (A is read once per L1 block
  column, B once per L1 block row), then padded cube work, then prefers fewer
  accumulators (less unrolled code) and a deeper k0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial

from xdsl.ir import Attribute, Block, Operation, SSAValue

from pypto_mlir.dialects.tile import LoadOp, MemorySpace, TileType, element_bytes
from pypto_mlir.targets import Target
from pypto_mlir.targets.cost import dma_cost, mmad_cycles

from .multicore_split import core_split

BUFFERING = 2
"""Every memory holds each live tile this many times (double buffering)."""

ASSUMED_DYNAMIC_EXTENT = 4096
"""The size a `?` dim is assumed to have in the matmul cost formula."""

MAX_L1_FACTOR = 4
"""At most this many L0 base blocks per L1 block along M and along N: the base
blocks of an L1 block are unrolled, so the factor bounds the code size."""

MAX_PANEL_CHUNKS = 8
"""At most this many L1 chunks along K in an A panel kept in L1: the K loop of
a panel nest is unrolled (its L0 moves take static windows of the panel), so
the count bounds the code size."""


class TilingError(ValueError):
    """Tile sizes that cannot work; the message names the memory and the bytes."""


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def column_unit(element_types: Sequence[Attribute], alignment: int) -> int:
    """Columns of an nd tile are a multiple of this many elements, so that a row
    of every element type is a multiple of `alignment` bytes."""
    unit = 1
    for element_type in element_types:
        size = element_bytes(element_type)
        unit = max(unit, alignment // math.gcd(alignment, size))
    return unit


# --------------------------------------------------------------------------------------
# Live tiles of a nest
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LiveTerm:
    """One live tile: bytes per element and which tile dims it spans (a
    fraction for a bound such as a value per repeat of a scratch buffer)."""

    element_bytes: int | Fraction
    spans: tuple[bool, ...]

    def bytes(self, physical: Sequence[int]) -> int:
        size = self.element_bytes
        for span, extent in zip(self.spans, physical, strict=True):
            if span:
                size *= extent
        return math.ceil(size)


@dataclass(frozen=True)
class LiveProfile:
    """The tiles of one memory live at each point of a nest, as a function of the
    physical tile sizes. Built from the nest emitted with probe sizes."""

    points: tuple[tuple[LiveTerm, ...], ...]
    element_types: tuple[Attribute, ...]

    def peak(self, physical: Sequence[int]) -> int:
        """The most bytes live at once for these physical tile sizes."""
        return max(
            (sum(t.bytes(physical) for t in point) for point in self.points),
            default=0,
        )

    @staticmethod
    def of_block(
        block: Block,
        probe: Sequence[int],
        space: MemorySpace,
        alignment: int,
        extra: Callable[
            [Operation, Callable[[SSAValue], LiveTerm | None]], list[LiveTerm]
        ]
        | None = None,
    ) -> LiveProfile:
        """Measure the tiles of `space` in `block`, emitted with tile sizes `probe`
        (distinct values > 1, so that a tile's shape says which dims it spans);
        `alignment` is the memory's (the block a strided load stages each
        element in at most); `extra(op, term)` adds what an op needs besides
        its tiles while it runs (tile-to-hw's scratch buffers)."""
        points: set[tuple[LiveTerm, ...]] = set()
        types: set[Attribute] = set()

        def term(value: SSAValue) -> LiveTerm | None:
            value_type = value.type
            if not isinstance(value_type, TileType) or value_type.memory_space != space:
                return None
            types.add(value_type.element_type)
            shape = value_type.get_shape()
            # The probe sizes are distinct, so an extent names the tile dim it
            # spans, in any position (a transposed tile has them swapped).
            spans = tuple(
                len(shape) == len(probe) and p > 1 and p in shape for p in probe
            )
            return LiveTerm(element_bytes(value_type.element_type), spans)

        def scratch(op: Operation) -> list[LiveTerm]:
            return staging(op) + (extra(op, term) if extra is not None else [])

        def staging(op: Operation) -> list[LiveTerm]:
            """A load of elements `s > 1` apart stages each row in UB before a
            gather packs it (tile-to-hw): up to `min(s, alignment / e)` times the
            tile (the rule of hw_isel's `_strided_load`)."""
            if not isinstance(op, LoadOp) or space != MemorySpace.UB:
                return []
            strides = op.source.type.get_strides()
            live = term(op.result)
            if live is None or not strides or strides[-1] in (None, 1):
                return []
            factor = min(int(strides[-1]), alignment // live.element_bytes)
            return [LiveTerm(live.element_bytes * max(factor, 1), live.spans)]

        _collect_points(block, [], term, points, scratch)
        return LiveProfile(
            tuple(sorted(points, key=repr)), tuple(sorted(types, key=str))
        )


def _collect_points(
    block: Block,
    outside: list[LiveTerm],
    term: Callable[[SSAValue], LiveTerm | None],
    points: set[tuple[LiveTerm, ...]],
    scratch: Callable[[Operation], list[LiveTerm]],
) -> None:
    """Add to `points` the live tiles at each op of `block` (and of nested blocks),
    with `outside` the tiles live around the block and `scratch` what an op needs
    while it runs."""
    ops = list(block.ops)
    position = {op: i for i, op in enumerate(ops)}

    def position_in_block(op: Operation) -> int:
        while op.parent_block() is not block:
            parent = op.parent_op()
            assert parent is not None
            op = parent
        return position[op]

    intervals: list[tuple[int, int, LiveTerm]] = []
    values: list[tuple[int, SSAValue]] = [(-1, a) for a in block.args]
    values += [(i, r) for i, op in enumerate(ops) for r in op.results]
    for start, value in values:
        live = term(value)
        if live is None:
            continue
        end = max((position_in_block(u.operation) for u in value.uses), default=start)
        intervals.append((start, end, live))
    for i, op in enumerate(ops):
        here = outside + [t for s, e, t in intervals if s <= i <= e]
        points.add(tuple(here + scratch(op)))
        for region in op.regions:
            for inner in region.blocks:
                _collect_points(inner, here, term, points, scratch)


# --------------------------------------------------------------------------------------
# Vector nests
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VectorTiling:
    """Per tile dim: the elements one iteration covers and the tile's physical size."""

    steps: tuple[int, ...]
    physical: tuple[int, ...]


def _largest(low: int, high: int, ok: Callable[[int], bool]) -> int | None:
    """The largest n in [low, high] with ok(n), for a monotone ok; None if none."""
    if high < low or not ok(low):
        return None
    while low < high:
        middle = (low + high + 1) // 2
        if ok(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _balanced(extent: int | None, step: int, unit: int) -> int:
    """A step of at most `step` (a multiple of `unit`) for a dim of `extent`: the
    largest one that divides the extent if there is one at least half as large
    (no tail at all), else one with the same number of iterations as `step` and
    the elements spread evenly (the smallest tail)."""
    if extent is None or step >= extent:
        return step
    for count in range(step // unit, (step // unit + 1) // 2 - 1, -1):
        if count > 0 and extent % (count * unit) == 0:
            return count * unit
    units = -(-extent // unit)
    count = -(-units // (step // unit))
    return -(-units // count) * unit


@dataclass(frozen=True)
class VectorRequest:
    """What the model needs to size a vector nest's tile."""

    extents: tuple[int | None, ...]
    """Per tile dim; None for a `?` dim."""
    cover: tuple[bool, ...]
    """Per tile dim: the tile must span the whole extent (a row kept in UB)."""
    aligned: tuple[bool, ...]
    """Per tile dim: the physical size must be a multiple of `unit`."""
    unit: int
    profile: LiveProfile


def physical_size(extent_step: int, aligned: bool, unit: int) -> int:
    if extent_step <= 1:
        return 1
    return round_up(extent_step, unit) if aligned else extent_step


def auto_vector_tiling(request: VectorRequest, budget: int) -> VectorTiling | None:
    """The largest tile whose live bytes fit `budget` (None if even the smallest
    does not): the last dim first (long contiguous rows), then the others.

    A dim of unknown extent is capped so that the tile stays about square in
    elements, since the run-time extent may be small.
    """
    rank = len(request.extents)
    unit = request.unit

    def physical(steps: Sequence[int]) -> tuple[int, ...]:
        return tuple(
            physical_size(s, a, unit)
            for s, a in zip(steps, request.aligned, strict=True)
        )

    def fits(steps: Sequence[int]) -> bool:
        return request.profile.peak(physical(steps)) <= budget

    minimum = [
        e
        if c and e is not None
        else min(unit if a else 1, e if e is not None else unit)
        for e, c, a in zip(request.extents, request.cover, request.aligned, strict=True)
    ]
    if not fits(minimum):
        return None
    steps = list(minimum)
    # Without a known extent, aim at a square tile: the budget in elements of the
    # widest tile, square-rooted.
    widest = max(
        (t.element_bytes for p in request.profile.points for t in p), default=1
    )
    square = max(unit, round_up(math.isqrt(max(1, budget // widest)), unit))
    for dim in reversed(range(rank)):
        extent = request.extents[dim]
        if request.cover[dim]:
            continue
        step_unit = unit if request.aligned[dim] else 1
        limit = extent if extent is not None else square
        units = -(-limit // step_unit)

        def ok(
            count: int,
            dim: int = dim,
            step_unit: int = step_unit,
            extent: int | None = extent,
        ) -> bool:
            trial = list(steps)
            trial[dim] = count * step_unit
            if extent is not None:
                trial[dim] = min(trial[dim], extent)
            return fits(trial)

        count = _largest(1, units, ok)
        assert count is not None, "the minimum tile fits"
        step = count * step_unit
        if extent is not None:
            step = min(step, extent)
        steps[dim] = _balanced(extent, step, step_unit)
    return VectorTiling(tuple(steps), physical(steps))


@dataclass(frozen=True)
class CoreBalance:
    """What sizing a vector nest's tiles for the cores (`balanced_tiling`) needs
    besides its `VectorRequest`: tv-to-tile takes it from a tv group
    (tv_schedule.group_balance), `pto.auto` from a tile kernel's loop."""

    cores: int
    outer_units: int
    """Iterations of the dims before the tile dims: each a parallel unit."""
    reduced: frozenset[int]
    """Tile dims (indices into the request's extents) walked one after the other
    on a core (reduced, or carrying values): never split over the cores."""
    element_bytes: int
    """Of the elements the nest loads from GM (the width of its DMA bursts)."""
    outer_pitch: int = 0
    """GM bytes the outputs' windows move per iteration of the outer dims (0:
    they do not move, or no granule is modelled)."""
    pitches: tuple[int, ...] = ()
    """Per tile dim, GM bytes the outputs' windows move per element along it
    (the gcd over the outputs; 0: none moves); empty: no granule is modelled."""


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def split_granule(alignment: int, step_bytes: int) -> int:
    """Iterations a core's share of a loop comes in multiples of, when each
    iteration moves the outputs `step_bytes` and a share must start on an
    `alignment`-byte GM block (multicore_split's rule)."""
    return alignment // math.gcd(alignment, step_bytes)


def busiest_core_units(loops: Sequence[tuple[int, int, bool]], cores: int) -> int:
    """The parallel iterations of the busiest core, for parallel loops
    `(trips, granule, loop)` from the outermost in (`loop`: it stays a loop
    after tile-peel-tails moves a tail iteration out of it, i.e. no tail or
    more than two trips): multicore_split cuts the outermost loop with more
    than one trip in shares of whole granules, and with fewer granules than
    cores also the next one when it is a loop (`core_split`'s grid); the loops
    inside run whole on each core."""
    loops = [(t, g, w) for t, g, w in loops if t > 1]
    if not loops:
        return 1
    (t1, g1, _), rest = loops[0], loops[1:]
    units1 = _ceil(t1, g1)
    if units1 >= cores or not rest or not rest[0][2]:
        n1 = min(units1, cores)
        return min(t1, _ceil(units1, n1) * g1) * math.prod(t for t, _, _ in rest)
    (t2, g2, _), inner = rest[0], rest[1:]
    units2 = _ceil(t2, g2)
    n1, n2 = core_split(units1, units2, cores)
    first = min(t1, _ceil(units1, n1) * g1)
    second = min(t2, _ceil(units2, n2) * g2)
    return first * second * math.prod(t for t, _, _ in inner)


def tiling_cost(
    target: Target,
    tiling: VectorTiling,
    extents: Sequence[int],
    balance: CoreBalance,
) -> int:
    """Cycles of the busiest core, estimated from the target's DMA cost of one
    tile (its bursts of `element_bytes`-byte elements, GM to UB): the parallel
    units (outer dims, and tile dims not reduced, over their steps) spread over
    the cores as multicore_split spreads them (`busiest_core_units`: a core's
    share starts on a GM block, so it comes in granules of
    `split_granule(alignment, step * pitch)` iterations), each loading its tiles along the reduced dims one after the
    other, plus one tile's worth for the pipeline's fill (the core's first load
    and last store do not overlap anything; its tiles overlap each other, so the
    fill is paid once per core, not once per parallel unit)."""
    units, serial = core_tiles(target, tiling, extents, balance)
    bursts = math.prod(tiling.physical[:-1]) if len(tiling.physical) > 1 else 1
    tile = dma_cost(
        target, ("gm", "ub"), bursts, tiling.physical[-1] * balance.element_bytes
    )
    return (units * serial + 1) * tile.cycles


def core_tiles(
    target: Target,
    tiling: VectorTiling,
    extents: Sequence[int],
    balance: CoreBalance,
) -> tuple[int, int]:
    """The busiest core's parallel iterations (`busiest_core_units` over the
    outer dims and the tile dims not reduced, with the split's granules) and
    the tiles it walks one after the other in each (along the reduced dims)."""
    alignment = target.memories["gm"].alignment
    granule = partial(_granule, alignment, bool(balance.pitches))
    loops = [(balance.outer_units, granule(balance.outer_pitch), True)]
    serial = 1
    for dim, (extent, step) in enumerate(zip(extents, tiling.steps, strict=True)):
        if dim in balance.reduced:
            serial *= _ceil(extent, step)
        else:
            pitch = balance.pitches[dim] if balance.pitches else 0
            trips = _ceil(extent, step)
            loops.append(
                (trips, granule(step * pitch), extent % step == 0 or trips > 2)
            )
    return busiest_core_units(loops, balance.cores), serial


def _granule(alignment: int, modelled: bool, step_bytes: int) -> int:
    return split_granule(alignment, step_bytes) if modelled and step_bytes else 1


def balanced_tiling(
    target: Target,
    request: VectorRequest,
    tiling: VectorTiling,
    budget: int,
    balance: CoreBalance,
) -> VectorTiling | None:
    """A tiling with shorter steps along a parallel tile dim when `tiling` (the
    largest that fits) leaves cores idle and the cost model (`tiling_cost`) says
    the smaller tiles on more cores finish sooner; None to keep `tiling`.

    Each candidate caps one parallel dim's step at `extent / k` (k = 2 ..
    cores) and lets the tiling model grow the others within `budget`; dims the
    request covers whole keep their step."""
    extents = request.extents
    if any(e is None for e in extents):
        return None
    sizes = [e for e in extents if e is not None]
    element = balance.element_bytes
    granule = target.memories["gm"].alignment
    if tiling.physical[-1] * element < granule:
        # Rows narrower than a GM granule: each moves a whole granule anyway, and
        # more, smaller tiles only add DMA start-ups.
        return None
    best = tiling
    best_cost = tiling_cost(target, tiling, sizes, balance)
    for dim, extent in enumerate(sizes):
        if dim in balance.reduced or request.cover[dim]:
            continue
        unit = request.unit if request.aligned[dim] else 1
        caps = {
            _ceil(_ceil(extent, k), unit) * unit for k in range(2, balance.cores + 1)
        }
        if balance.pitches and balance.pitches[dim]:
            # Steps whose output windows start on GM blocks split in shares of
            # single iterations (`split_granule` 1).
            whole = math.lcm(unit, split_granule(granule, balance.pitches[dim]))
            caps |= {c // whole * whole for c in caps if c >= whole}
        caps = sorted(caps, reverse=True)
        for cap in caps:
            if cap >= tiling.steps[dim]:
                continue
            capped = replace(
                request, extents=(*extents[:dim], cap, *extents[dim + 1 :])
            )
            candidate = auto_vector_tiling(capped, budget)
            if candidate is None or candidate.physical[-1] * element < granule:
                continue
            cost = tiling_cost(target, candidate, sizes, balance)
            if cost < best_cost:
                best, best_cost = candidate, cost
    return None if best is tiling else best


def explicit_vector_tiling(
    request: VectorRequest, sizes: Sequence[int]
) -> VectorTiling:
    """The tile `tile-sizes` asks for, clamped to the extents; raises TilingError
    for columns that break the alignment."""
    rank = len(request.extents)
    wanted = (
        list(sizes[-rank:])
        if len(sizes) >= rank
        else [1] * (rank - len(sizes)) + list(sizes)
    )
    steps: list[int] = []
    for dim, (want, extent) in enumerate(zip(wanted, request.extents, strict=True)):
        step = want if extent is None else min(want, extent)
        if (
            request.aligned[dim]
            and step > 1
            and step % request.unit
            and (extent is None or step < extent)
        ):
            raise TilingError(
                f"tile-sizes: {want} elements along dim {dim} is not a multiple of "
                f"{request.unit} elements, so tile rows would break the ub alignment"
            )
        steps.append(max(1, step))
    physical = tuple(
        physical_size(s, a, request.unit)
        for s, a in zip(steps, request.aligned, strict=True)
    )
    return VectorTiling(tuple(steps), physical)


# --------------------------------------------------------------------------------------
# Matmul nests
# --------------------------------------------------------------------------------------


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
    other cores hit it later (`matmul_nests`; tv-to-tile's `matmul-l2-order`)."""

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
                        for k1 in _depths(round_up(k, f), k0, r.k is not None, 16):
                            for panel in _panel_choices(r, k1, fa * m0, fb * n0):
                                yield MatmulTiling(m0, n0, k0, fa, fb, k1, panel)
                            if _l2_order_applies(target, r, k1):
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
    blocks = request.batch * _ceil(m, tiling.m1)
    rounds = _ceil(blocks, max(1, request.cores))
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
    rounds = _ceil(units, max(1, min(units, cores)))
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
        text += (
            f"; K chunks staggered for the l2: block (i, j) starts at chunk "
            f"(i + j) mod {chunks} (estimated "
            f"{estimate.cycles(replace(tiling, l2_order=False)):.0f} cycles in order)"
        )
    elif tiling.split == 1 and _l2_order_applies(target, r, tiling.k1):
        staggered = replace(tiling, panel=False, l2_order=True)
        text += (
            f"; K chunks in order (estimated {estimate.cycles(staggered):.0f} "
            "cycles staggered for the l2)"
        )
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


# --------------------------------------------------------------------------------------
# Hand-off to the auto-tuner
# --------------------------------------------------------------------------------------

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
