"""The tile-size model of `tv-to-tile`'s vector nests (docs/tiling.md).

Every number comes from the target: memory capacities and alignments. *Vector
nests* (elementwise chains, reductions, softmax, transposes, matmul epilogues)
keep their tiles in UB. The pass builds the nest once with probe sizes and
measures which tiles are live at each point (`LiveProfile`); the model then
picks the largest tile whose peak live bytes, doubled for double buffering, fit
UB, and shortens it for the cores by cost (`CoreBalance`, `balanced_tiling`,
shared with `pto.auto`). Columns are a multiple of the UB alignment (in elements
of the widest-aligned element type), rows are free. The matmul nests' model is
`matmul_model.py`; the tuner's candidates are `tiling_candidates.py`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial

from xdsl.ir import Attribute, Block, Operation, SSAValue

from pypto_mlir.dialects.tile import LoadOp, MemorySpace, TileType, element_bytes
from pypto_mlir.targets import Target
from pypto_mlir.targets.cost import dma_cost

from .multicore_split import core_split

BUFFERING = 2
"""Every memory holds each live tile this many times (double buffering)."""


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


def ceil_div(a: int, b: int) -> int:
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
    units1 = ceil_div(t1, g1)
    if units1 >= cores or not rest or not rest[0][2]:
        n1 = min(units1, cores)
        return min(t1, ceil_div(units1, n1) * g1) * math.prod(t for t, _, _ in rest)
    (t2, g2, _), inner = rest[0], rest[1:]
    units2 = ceil_div(t2, g2)
    n1, n2 = core_split(units1, units2, cores)
    first = min(t1, ceil_div(units1, n1) * g1)
    second = min(t2, ceil_div(units2, n2) * g2)
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
            serial *= ceil_div(extent, step)
        else:
            pitch = balance.pitches[dim] if balance.pitches else 0
            trips = ceil_div(extent, step)
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
            ceil_div(ceil_div(extent, k), unit) * unit
            for k in range(2, balance.cores + 1)
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
