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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pypto_mlir.dialects.tile import MemorySpace, TileType, element_bytes
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pypto_mlir.targets import Target

BUFFERING = 2
"""Every memory holds each live tile this many times (double buffering)."""

ASSUMED_DYNAMIC_EXTENT = 4096
"""The size a `?` dim is assumed to have in the matmul cost formula."""

MAX_L1_FACTOR = 4
"""At most this many L0 base blocks per L1 block along M and along N: the base
blocks of an L1 block are unrolled, so the factor bounds the code size."""


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
    """One live tile: bytes per element and which tile dims it spans."""

    element_bytes: int
    spans: tuple[bool, ...]

    def bytes(self, physical: Sequence[int]) -> int:
        size = self.element_bytes
        for span, extent in zip(self.spans, physical, strict=True):
            if span:
                size *= extent
        return size


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
    def of_block(block: Block, probe: Sequence[int], space: MemorySpace) -> LiveProfile:
        """Measure the tiles of `space` in `block`, emitted with tile sizes `probe`
        (distinct values > 1, so that a tile's shape says which dims it spans)."""
        points: set[tuple[LiveTerm, ...]] = set()
        types: set[Attribute] = set()

        def term(value: SSAValue) -> LiveTerm | None:
            value_type = value.type
            if not isinstance(value_type, TileType) or value_type.memory_space != space:
                return None
            types.add(value_type.element_type)
            shape = value_type.get_shape()
            spans = tuple(
                len(shape) == len(probe) and s == p and p > 1
                for s, p in zip(shape, probe, strict=False)
            )
            spans += (False,) * (len(probe) - len(spans))
            return LiveTerm(element_bytes(value_type.element_type), spans)

        _collect_points(block, [], term, points)
        return LiveProfile(
            tuple(sorted(points, key=repr)), tuple(sorted(types, key=str))
        )


def _collect_points(
    block: Block,
    outside: list[LiveTerm],
    term: Callable[[SSAValue], LiveTerm | None],
    points: set[tuple[LiveTerm, ...]],
) -> None:
    """Add to `points` the live tiles at each op of `block` (and of nested blocks),
    with `outside` the tiles live around the block."""
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
        points.add(tuple(here))
        for region in op.regions:
            for inner in region.blocks:
                _collect_points(inner, here, term, points)


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
    """L0 base block m0 x n0 x k0 and L1 block (fa * m0) x (fb * n0) x k0."""

    m0: int
    n0: int
    k0: int
    fa: int = 1
    fb: int = 1

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


def matmul_footprint(
    target: Target, request: MatmulRequest, tiling: MatmulTiling
) -> dict[str, int]:
    """Bytes each memory holds once (without double buffering) for `tiling`."""
    t, r = tiling, request
    footprint = {
        "l0a": t.m0 * t.k0 * r.in_bytes,
        "l0b": t.k0 * t.n0 * r.in_bytes,
        "l0c": t.fa * t.fb * t.m0 * t.n0 * r.acc_bytes,
        "l1": (t.fa * t.m0 + t.fb * t.n0) * t.k0 * r.in_bytes,
    }
    if r.epilogue is not None:
        footprint["ub"] = r.epilogue(t.m0, t.n0)
    return footprint


def matmul_fits(
    target: Target, request: MatmulRequest, tiling: MatmulTiling, buffering: int
) -> str | None:
    """None if `tiling` fits with `buffering` copies of every tile, else why not."""
    for space, needed in matmul_footprint(target, request, tiling).items():
        available = target.memories[space].size
        assert available is not None
        if needed * buffering > available:
            copies = f" ({buffering} buffers)" if buffering > 1 else ""
            return (
                f"{space} needs {needed * buffering} bytes{copies} but {space} of "
                f"target '{target.name}' holds {available} bytes"
            )
    return None


def auto_matmul_tiling(
    target: Target, request: MatmulRequest, buffering: int = BUFFERING
) -> MatmulTiling | None:
    """The tiling that fits with `buffering` copies of every tile and moves the
    least GM traffic (see the module doc); None if none fits."""
    r = request
    f = r.fractal
    m = r.m if r.m is not None else ASSUMED_DYNAMIC_EXTENT
    n = r.n if r.n is not None else ASSUMED_DYNAMIC_EXTENT
    k = r.k if r.k is not None else ASSUMED_DYNAMIC_EXTENT
    l0a, l0b = target.memories["l0a"].size, target.memories["l0b"].size
    assert l0a is not None and l0b is not None
    best: tuple[tuple[int, ...], MatmulTiling] | None = None
    for m0 in _block_candidates(m, f):
        for n0 in _block_candidates(n, f):
            k_room = min(
                l0a // (buffering * m0 * r.in_bytes),
                l0b // (buffering * n0 * r.in_bytes),
            )
            k0 = min(k_room // f * f, round_up(k, f))
            if k0 < f:
                continue
            base = MatmulTiling(m0, n0, k0)
            if matmul_fits(target, r, base, buffering) is not None:
                continue
            for fa in range(1, MAX_L1_FACTOR + 1):
                if fa > 1 and r.m is not None and fa * m0 > r.m:
                    break
                for fb in range(1, MAX_L1_FACTOR + 1):
                    if fb > 1 and r.n is not None and fb * n0 > r.n:
                        break
                    tiling = MatmulTiling(m0, n0, k0, fa, fb)
                    if matmul_fits(target, r, tiling, buffering) is not None:
                        continue
                    traffic = m * k * -(-n // tiling.n1) + k * n * -(-m // tiling.m1)
                    padded = round_up(m, m0) * round_up(n, n0) * round_up(k, k0)
                    key = (traffic, padded, fa * fb, -k0, -m0 * n0)
                    if best is None or key < best[0]:
                        best = (key, tiling)
    return None if best is None else best[1]


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
    """`matmul-tile-sizes=m0,n0,k0` or `m1,n1,m0,n0,k0`; raises TilingError."""
    if len(sizes) == 3:
        m0, n0, k0 = sizes
        m1, n1 = m0, n0
    elif len(sizes) == 5:
        m1, n1, m0, n0, k0 = sizes
    else:
        raise TilingError(
            f"matmul-tile-sizes takes 3 values (m0,n0,k0) or 5 (m1,n1,m0,n0,k0), "
            f"got {len(sizes)}"
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
    tiling = MatmulTiling(m0, n0, k0, m1 // m0, n1 // n0)
    problem = matmul_fits(target, request, tiling, 1)
    if problem is not None:
        raise TilingError(f"matmul-tile-sizes {','.join(map(str, sizes))}: {problem}")
    return tiling
