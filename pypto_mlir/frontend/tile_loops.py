"""Loops over tiles: `pto.tiles(out, (64, 128))` (docs/tile_views.md).

A `TileGrid` cuts a shape (of a tensor, or of several tensors iterated in step)
into tiles; each dim given a size (or `pto.auto`) is iterated, a dim given
`None` is whole in every tile. Three forms run a body per tile:

- `for i, j in grid:` traces the body once into an `scf.for` nest (a dim with
  a single tile gets no loop, as in tv-to-tile) and yields a `TileIndex` per
  iterated dim; values do not outlive the loop;
- `grid.for_each(body)`: the article's `ForEachTile`, `body(ctx)` with a
  `TileContext` that loads and stores the tile of any tensor in step;
- `grid.fold(body, init)`: carries values across the iterations
  (`scf.for` iteration arguments); with `init=None` the first iteration is
  peeled and defines them, as an L0C accumulator that cannot be filled needs.

Tails are valid extents `min(step, extent - offset)`, static when the step
divides the extent. A grid with `pto.auto` dims is first traced with probe
steps; `size_auto_grids` then picks the largest steps whose live tiles fit the
target's memories twice over (double buffering), with the tiling model of
`tv-to-tile` (`passes/tiling_model.py`), shortened for the cores by its cost
model where that finishes sooner (`balanced_tiling`, as tv-to-tile sizes a tv
group), and the kernel is traced again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from pypto_mlir.dialects.tile import (
    LoadOp,
    MemorySpace,
    StoreOp,
    element_bytes,
    fractal_edge,
)
from pypto_mlir.frontend.errors import KernelError, kernel_error, user_location
from pypto_mlir.frontend.tensor import format_shape
from pypto_mlir.frontend.tile_trace import (
    MEMORIES,
    UB,
    Auto,
    Extent,
    TileTrace,
    active_tile_trace,
    auto,
)
from pypto_mlir.frontend.tile_views import (
    GmTensor,
    Region,
    Tile,
    TileIndex,
    TileView,
    describe,
    load,
    store,
)
from pypto_mlir.passes.hw_isel import PhysicalExtents, Selector
from pypto_mlir.passes.tiling_model import (
    BUFFERING,
    CoreBalance,
    LiveProfile,
    LiveTerm,
    VectorRequest,
    auto_vector_tiling,
    balanced_tiling,
    column_unit,
)
from pypto_mlir.targets import Target

Step = int | Auto | None

PROBES = (3, 5, 7, 11, 13)
"""Steps an auto dim is measured with: distinct, > 1, so that a tile's shape
says which dims it spans (tiling_model.LiveProfile)."""


@dataclass
class AutoRequest:
    """What a grid with auto dims asks the tiling model, measured on its probe."""

    extents: tuple[int, ...]
    """Per tile dim (the grid's last one or two): the size of the dim."""
    steps: tuple[Step, ...]
    """Per tile dim as declared (a size, auto, or None: whole)."""
    profiles: dict[MemorySpace, LiveProfile]
    probed: tuple[bool, ...]
    """Per tile dim: an auto dim measured with a probe step (else whole)."""
    lead: tuple[int | None, ...]
    """The steps of the dims before the tile dims (not sized)."""
    balance: CoreBalance | None
    """How the grid's tiles spread over the cores (`balanced_tiling`); None when
    they do not (a loop carrying values, one nested in another, cube tiles)."""
    where: Any


def tiles(over: object, shape: object) -> TileGrid:
    """The tiles of `over` (a tensor, a tuple of tensors iterated in step, or a
    shape) of `shape` (a tuple of sizes, `pto.auto` or None per dim, or a
    `TileView`)."""
    what = "pto.tiles"
    trace = active_tile_trace(what)
    if isinstance(over, GmTensor):
        extents = over.shape
    elif (
        isinstance(over, tuple | list)
        and over
        and all(isinstance(t, GmTensor) for t in over)
    ):
        tensors: list[GmTensor] = list(over)  # pyright: ignore[reportAssignmentType]
        extents = tensors[0].shape
        for t in tensors[1:]:
            if t.shape != extents:
                raise kernel_error(
                    f"{what}: tensors iterated in step must have one shape: "
                    f"{tensors[0].name} is {format_shape(extents)}, {t.name} "
                    f"{format_shape(t.shape)}"
                )
    elif isinstance(over, tuple | list) and all(
        isinstance(d, int) and d > 0 for d in over
    ):
        extents = tuple(int(d) for d in over)
    else:
        raise kernel_error(
            f"{what}: iterate over a tensor, a tuple of tensors or a shape, got "
            f"{over!r}"
        )
    declared = shape.shape if isinstance(shape, TileView) else shape
    if isinstance(declared, int | Auto) or declared is None:
        declared = (declared,)
    if not isinstance(declared, tuple | list) or not all(
        d is None or d is auto or (isinstance(d, int) and d > 0) for d in declared
    ):
        raise kernel_error(
            f"{what}: the tile shape is a tuple of sizes > 0, pto.auto or None "
            f"(whole dim), got {shape!r}"
        )
    if len(declared) > len(extents):
        raise kernel_error(
            f"{what}: a rank-{len(declared)} tile shape for a rank-{len(extents)} "
            "iteration space"
        )
    steps: tuple[Step, ...] = (1,) * (len(extents) - len(declared)) + tuple(declared)
    return TileGrid(trace, tuple(extents), steps)


class TileContext:
    """The tile a `for_each` body is at: `ctx.load(x, view)`, `ctx.store(t, out)`,
    and `ctx.index` (the tile index of each iterated dim)."""

    def __init__(self, key: tuple[TileIndex | slice, ...]) -> None:
        self._key = key
        self.index = tuple(k for k in key if isinstance(k, TileIndex))

    def region(self, tensor: object) -> Region:
        if not isinstance(tensor, GmTensor):
            raise kernel_error(f"expected a kernel tensor, got {tensor!r}")
        if tensor.ndim != len(self._key):
            raise kernel_error(
                f"the tiles run over a rank-{len(self._key)} space, {tensor.name} is "
                f"rank {tensor.ndim}"
            )
        return tensor[self._key]

    def load(self, tensor: object, into: TileView | MemorySpace | None = None) -> Tile:
        return load(self.region(tensor), into)

    def store(self, value: object, tensor: object) -> None:
        store(self.region(tensor), value)


class TileGrid:
    """Tiles of a shape; see the module docstring."""

    def __init__(
        self, trace: TileTrace, extents: tuple[int, ...], steps: tuple[Step, ...]
    ) -> None:
        self.trace = trace
        self.extents = extents
        self.where = user_location()
        self.ordinal = trace.grid_count
        trace.grid_count += 1
        self.probing = False
        self.top_level = len(trace.scopes) == 1
        """Whether the grid's loops are the function's own (not in another loop):
        tile-to-hw splits them over the cores."""
        self.carries = False
        """Whether the loops carry values (`fold`): their iterations are serial."""
        self.probed: tuple[bool, ...] = ()
        """Per dim, whether a probe step measures it (the auto dims)."""
        resolved: list[int | None] = []
        if any(s is auto for s in steps):
            chosen = trace.sizing.get(self.ordinal)
            if chosen is None:
                self.probing = True
                chosen, self.probed = _probe_steps(extents, steps)
            resolved = list(chosen)
        else:
            resolved = [s if isinstance(s, int) else None for s in steps]
        self.declared = steps
        self.steps: tuple[int, ...] = tuple(
            e if s is None else min(s, e)
            for s, e in zip(resolved, extents, strict=True)
        )
        self.iterated = tuple(d for d, s in enumerate(steps) if s is not None)

    def __repr__(self) -> str:
        return f"<tiles {format_shape(self.steps)} of {format_shape(self.extents)}>"

    @property
    def counts(self) -> tuple[int, ...]:
        """The number of tiles along each dim."""
        return tuple(-(-e // s) for e, s in zip(self.extents, self.steps, strict=True))

    # A static tile: grid[n, m].

    def __getitem__(self, key: object) -> Any:
        numbers = key if isinstance(key, tuple) else (key,)
        if len(numbers) != len(self.iterated) or not all(
            isinstance(n, int) for n in numbers
        ):
            raise kernel_error(
                f"a tile of the grid is numbered by {len(self.iterated)} integers, "
                f"got {key!r}"
            )
        indices: list[TileIndex] = []
        for dim, n in zip(self.iterated, numbers, strict=True):
            count = self.counts[dim]
            if not -count <= n < count:  # pyright: ignore[reportOperatorIssue]
                raise kernel_error(
                    f"tile index {n} is out of range: the grid has {count} tiles "
                    f"along dim {dim} ({self.extents[dim]} elements in tiles of "
                    f"{self.steps[dim]})"
                )
            offset = (n % count) * self.steps[dim]  # pyright: ignore[reportOperatorIssue]
            indices.append(self._index(dim, offset, None))
        return indices[0] if len(indices) == 1 else tuple(indices)

    def _index(self, dim: int, offset: Extent, trace: TileTrace | None) -> TileIndex:
        step, extent = self.steps[dim], self.extents[dim]
        valid: Extent
        if isinstance(offset, int):
            valid = min(step, extent - offset)
        else:
            assert trace is not None
            valid = trace.tail(extent, offset, step)
        return TileIndex(offset, step, extent, valid, self.probing)

    def _key(self, indices: Sequence[TileIndex]) -> tuple[TileIndex | slice, ...]:
        found = iter(indices)
        return tuple(
            next(found) if d in self.iterated else slice(None)
            for d in range(len(self.extents))
        )

    # Loops.

    def _loops(
        self,
        inits: Sequence[Tile],
        body: Callable[[list[TileIndex], list[Tile]], list[Tile]],
        start: int = 0,
    ) -> list[SSAValue]:
        """The loop nest over the iterated dims (from `start` along the first)
        carrying `inits`; returns the carried values after it."""
        trace = self.trace
        self.carries = bool(inits)
        if self.probing:
            trace.probing += 1
        try:
            results = self._level(0, [], list(inits), body, start)
        finally:
            if self.probing:
                trace.probing -= 1
        return results

    def _level(
        self,
        level: int,
        indices: list[TileIndex],
        carried: list[Tile],
        body: Callable[[list[TileIndex], list[Tile]], list[Tile]],
        start: int,
    ) -> list[SSAValue]:
        trace = self.trace
        if level == len(self.iterated):
            return [t.value for t in body(indices, carried)]
        dim = self.iterated[level]
        step, extent = self.steps[dim], self.extents[dim]
        first = start if level == 0 else 0
        if extent - first <= step and not self.probing:
            index = self._index(dim, first, None)
            return self._level(level + 1, [*indices, index], carried, body, start)
        block = Block(arg_types=[IndexType(), *[t.value.type for t in carried]])
        with trace.inside(block, self._name()):
            index = self._index(dim, block.args[0], trace)
            inner = [
                Tile(arg, trace, t.valid_extents)
                for arg, t in zip(block.args[1:], carried, strict=True)
            ]
            results = self._level(level + 1, [*indices, index], inner, body, start)
            trace.insert(scf.YieldOp(*results))
        if self.probing and level == len(self.iterated) - 1:
            self._measure(block)
        loop = scf.ForOp(
            trace.index(first),
            trace.index(extent),
            trace.index(step),
            [t.value for t in carried],
            block,
        )
        trace.insert(loop)
        return list(loop.results)

    def _name(self) -> str:
        line = self.where.line if self.where is not None else 0
        return f"the tile loop at line {line}"

    def __iter__(self) -> _GridIterator:
        return _GridIterator(self)

    def for_each(self, body: Callable[[TileContext], object]) -> None:
        """Run `body(ctx)` for every tile (the article's `ForEachTile`)."""

        def run(indices: list[TileIndex], carried: list[Tile]) -> list[Tile]:
            if body(TileContext(self._key(indices))) is not None:
                raise kernel_error(
                    "a for_each body stores its results and returns nothing"
                )
            return []

        self._loops([], run)

    def fold(self, body: Callable[..., Any], init: object) -> Any:
        """Carry values across the tiles: `body(*indices, *carried)` returns the
        new carried values (a tile or a tuple of tiles); `init` gives the first
        (a tile, a tuple of tiles, or None: the first iteration makes them)."""
        what = "fold"
        if init is None:
            if len(self.iterated) != 1:
                raise kernel_error(
                    f"{what} with init=None peels the first tile; it iterates one "
                    f"dim, this grid {len(self.iterated)}"
                )
            dim = self.iterated[0]
            first = self._index(dim, 0, None)
            carried = _carried(what, body(first, None), None)
            if self.extents[dim] <= self.steps[dim]:
                return _unpack(carried)
            start = self.steps[dim]
        else:
            carried = _carried(what, init, None)
            start = 0

        def run(indices: list[TileIndex], inner: list[Tile]) -> list[Tile]:
            returned = body(*indices, *inner)
            return _carried(what, returned, inner)

        results = self._loops(carried, run, start)
        return _unpack(
            [
                Tile(value, self.trace, t.valid_extents)
                for value, t in zip(results, carried, strict=True)
            ]
        )

    def _measure(self, block: Block) -> None:
        """Record the live tiles of the probe's body for `size_auto_grids`."""
        trace = self.trace
        tile_dims = range(max(0, len(self.extents) - 2), len(self.extents))
        probe = [self.steps[d] for d in tile_dims]
        selector = Selector(trace.target, PhysicalExtents())

        def scratch(
            op: Operation, term: Callable[[SSAValue], LiveTerm | None]
        ) -> list[LiveTerm]:
            known = [t for t in map(term, (*op.operands, *op.results)) if t is not None]
            if not known:
                return []

            def spans_of(value: SSAValue) -> tuple[bool, ...]:
                live = term(value)
                return live.spans if live is not None else (False,) * len(probe)

            return [
                LiveTerm(per, spans)
                for per, spans in selector.scratch_terms(op, spans_of)
            ]

        profiles: dict[MemorySpace, LiveProfile] = {}
        for space in MEMORIES:
            profile = LiveProfile.of_block(
                block,
                probe,
                space,
                trace.target.memories[str(space)].alignment,
                scratch if space is UB else None,
            )
            if profile.element_types:
                profiles[space] = profile
        lead = range(tile_dims.start)
        trace.requests[self.ordinal] = AutoRequest(
            tuple(self.extents[d] for d in tile_dims),
            tuple(self.declared[d] for d in tile_dims),
            profiles,
            tuple(self.probed[d] for d in tile_dims),
            tuple(
                s if isinstance(s, int) else None
                for s in (self.declared[d] for d in lead)
            ),
            self._balance(block, profiles),
            self.where,
        )

    def _balance(
        self, block: Block, profiles: dict[MemorySpace, LiveProfile]
    ) -> CoreBalance | None:
        """What `balanced_tiling` needs of the grid: its loops are split over
        the cores when they are the function's own and carry nothing; each
        iteration of a dim not sized here (before the tile dims, or of a step
        the author gave) is a parallel unit of its own."""
        if not self.top_level or self.carries or any(s is not UB for s in profiles):
            return None
        units = 1
        for dim, (extent, step) in enumerate(
            zip(self.extents, self.declared, strict=True)
        ):
            if isinstance(step, int) and not self.probed[dim]:
                units *= -(-extent // step)
        loaded = [
            element_bytes(op.result.type.element_type)
            for op in block.walk()
            if isinstance(op, LoadOp)
        ]
        pitches = self._store_pitches(block)
        first = max(0, len(self.extents) - 2)
        return CoreBalance(
            cores=self.trace.target.cores,
            outer_units=units,
            reduced=frozenset(),
            element_bytes=max(loaded, default=2),
            outer_pitch=pitches[first - 1] if first and pitches else 0,
            pitches=tuple(pitches[first:]),
        )

    def _store_pitches(self, block: Block) -> list[int]:
        """Per grid dim, the GM bytes the stores' windows move per element
        along it (the gcd over the stores of the grid's rank), which decides
        the multi-core split's granule; empty when a store has another rank
        or a dynamic layout."""
        pitches = [0] * len(self.extents)
        for op in block.walk():
            if not isinstance(op, StoreOp):
                continue
            dest = op.dest.type
            assert isinstance(dest, MemRefType)
            strides = dest.get_strides()
            shape = dest.get_shape()
            if len(shape) != len(pitches) or strides is None or None in strides:
                return []
            size = element_bytes(dest.element_type)
            for dim, (extent, stride) in enumerate(zip(shape, strides, strict=True)):
                if extent != 1:
                    pitches[dim] = math.gcd(pitches[dim], size * int(stride))  # pyright: ignore[reportArgumentType]
        return pitches


class _GridIterator:
    """`for i, j in grid`: the first step opens the loop nest and yields the
    tile indices; the second (after the body ran once) closes it."""

    def __init__(self, grid: TileGrid) -> None:
        self.grid = grid
        self.state = 0
        self.saved: list[Any] = []
        self.loops: list[tuple[Block, SSAValue, int, int]] = []

    def __iter__(self) -> _GridIterator:
        return self

    def __next__(self) -> Any:
        grid, trace = self.grid, self.grid.trace
        if self.state == 0:
            self.state = 1
            if grid.probing:
                trace.probing += 1
            indices: list[TileIndex] = []
            for dim in grid.iterated:
                step, extent = grid.steps[dim], grid.extents[dim]
                if extent <= step and not grid.probing:
                    indices.append(grid._index(dim, 0, None))
                    continue
                block = Block(arg_types=[IndexType()])
                self.saved.append(trace.push(block, grid._name()))
                self.loops.append((block, block.args[0], step, extent))
                indices.append(grid._index(dim, block.args[0], trace))
            trace.open_loops.append(grid)
            return indices[0] if len(indices) == 1 else tuple(indices)
        if self.state == 1:
            self.state = 2
            if not trace.open_loops or trace.open_loops[-1] is not grid:
                raise kernel_error(
                    "tile loops must end in the order they began (a loop was left "
                    "early)"
                )
            trace.open_loops.pop()
            for n, (block, _, step, extent) in reversed(list(enumerate(self.loops))):
                trace.insert(scf.YieldOp())
                trace.pop(self.saved.pop())
                if grid.probing and n == len(self.loops) - 1:
                    grid._measure(block)
                trace.insert(
                    scf.ForOp(
                        trace.index(0),
                        trace.index(extent),
                        trace.index(step),
                        [],
                        block,
                    )
                )
            if grid.probing:
                trace.probing -= 1
        raise StopIteration


def _carried(what: str, value: object, like: Sequence[Tile] | None) -> list[Tile]:
    values = list(value) if isinstance(value, tuple | list) else [value]
    if not values or not all(isinstance(v, Tile) for v in values):
        raise kernel_error(
            f"{what}: the body returns the carried tiles (a tile or a tuple of "
            f"tiles), got {value!r}"
        )
    tiles: list[Tile] = [v for v in values if isinstance(v, Tile)]
    if like is not None:
        if len(tiles) != len(like):
            raise kernel_error(
                f"{what}: the body returns {len(tiles)} tiles but carries {len(like)}"
            )
        for new, old in zip(tiles, like, strict=True):
            same_valid = all(
                a is b if isinstance(a, SSAValue) or isinstance(b, SSAValue) else a == b
                for a, b in zip(new.valid_extents, old.valid_extents, strict=True)
            )
            if new.type != old.type or not same_valid:
                raise kernel_error(
                    f"{what}: a carried tile changes from {describe(old.type)} to "
                    f"{describe(new.type)}; each iteration must return the same tile"
                )
    return tiles


def _unpack(tiles: list[Tile]) -> Any:
    return tiles[0] if len(tiles) == 1 else tuple(tiles)


def _probe_steps(
    extents: Sequence[int], steps: Sequence[Step]
) -> tuple[list[int | None], tuple[bool, ...]]:
    """Steps to measure a grid with, and which dims are probed: an auto dim gets
    a probe size of its own (distinct, > 1, within the dim; a dim too small for
    one is whole), other dims their own step."""
    used = {s for s in steps if isinstance(s, int)}
    used |= {e for e, s in zip(extents, steps, strict=True) if s is None}
    chosen: list[int | None] = []
    probed: list[bool] = []
    for extent, step in zip(extents, steps, strict=True):
        if step is not auto:
            chosen.append(step if isinstance(step, int) else None)
            probed.append(False)
            continue
        free = [p for p in (*PROBES, extent) if p not in used and 1 < p <= extent]
        chosen.append(free[0] if free else extent)
        probed.append(bool(free))
        used.add(chosen[-1])  # pyright: ignore[reportArgumentType]
    return chosen, tuple(probed)


def size_auto_grids(
    requests: dict[int, AutoRequest], target: Target
) -> dict[int, tuple[int | None, ...]]:
    """The steps of every measured grid: the largest tile whose live bytes in
    every memory fit it twice (once if no tile fits twice), then balanced over
    the cores by cost, as tv-to-tile sizes its vector nests."""
    return {
        ordinal: (*request.lead, *_size(request, target))
        for ordinal, request in requests.items()
    }


def _size(request: AutoRequest, target: Target) -> tuple[int | None, ...]:
    ub = target.memories["ub"]
    assert ub.size is not None
    cube = any(s is not UB for s in request.profiles)
    types = {t for p in request.profiles.values() for t in p.element_types}
    unit = column_unit(sorted(types, key=str), ub.alignment)
    if cube:
        edges = [fractal_edge(t, target) for t in types]
        unit = math.lcm(unit, *edges)
    points: list[tuple[LiveTerm, ...]] = []
    for space, profile in request.profiles.items():
        size = target.memories[str(space)].size
        assert size is not None
        scale = Fraction(ub.size, size)
        points += [
            tuple(LiveTerm(t.element_bytes * scale, t.spans) for t in point)
            for point in profile.points
        ]
    combined = LiveProfile(tuple(points), tuple(sorted(types, key=str)))
    fixed = [not probed for probed in request.probed]
    extents = tuple(
        e if s is None or s is auto else min(int(s), e)  # pyright: ignore[reportArgumentType]
        for s, e in zip(request.steps, request.extents, strict=True)
    )
    vector_request = VectorRequest(
        extents=extents,
        cover=tuple(fixed),
        aligned=tuple(cube or d == len(extents) - 1 for d in range(len(extents))),
        unit=unit,
        profile=combined,
    )
    for buffering in (BUFFERING, 1):
        budget = ub.size // buffering
        tiling = auto_vector_tiling(vector_request, budget)
        if tiling is not None:
            if request.balance is not None:
                balanced = balanced_tiling(
                    target, vector_request, tiling, budget, request.balance
                )
                tiling = balanced or tiling
            return tuple(
                None if s is None else step
                for s, step in zip(request.steps, tiling.steps, strict=True)
            )
    smallest = format_shape(
        [
            e if f else min(e, unit if a else 1)
            for f, e, a in zip(fixed, extents, vector_request.aligned, strict=True)
        ]
    )
    raise KernelError(
        f"pto.auto: not even a {smallest} tile of this loop's body fits the "
        f"memories of {target.name}",
        request.where,
    )
