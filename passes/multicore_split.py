"""The multi-core split of `tile-to-hw`: a function's parallel tile loops over
the target's cores.

The outermost parallel tile loop at the top of the function is split over the
cores in contiguous, balanced chunks of iterations (`ascend_hw.block_idx`, a grid
over two loop levels when one has too few); a peeled last iteration after the
loop counts as one more iteration and runs on the last core. Where one part of
the body reads GM that an earlier part writes, an `ascend_hw.sync_all` cuts the
body into phases, each split on its own (`distribute`).

It is a hand-written driver, not a rewrite pattern: whether and how a loop is
split depends on the whole function (every store of the loops and of the
peeled work after them, what later phases read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import gcd, lcm
from typing import cast

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, i64
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import MemoryEffectKind, get_effects

from pypto_mlir.diagnostics import emit_remark
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.passes.index_range import (
    MAX_TRIPS_ATTR,
    ROW_ENTRIES_ATTR,
    Range,
    index_ranges,
    loop_trip_count,
)

CORE_LOOP_ATTR = "pypto.core_loop"
"""On a loop of one iteration per core whose iterations write disjoint GM
windows found at run time (the CSR row ranges each core searches for,
passes/csr_spmm_nest.py): split with one iteration a unit although its stores
do not move affinely with it. The simulator's race detector checks the bytes
actually written."""


def _tile_ops(op: Operation) -> list[Operation]:
    return [o for o in op.walk() if o.dialect_name() == "tile"]


def _memref_root(value: SSAValue) -> SSAValue:
    """The memref a view (subview, reshape, cast: ops without effects) looks into."""
    while isinstance(value, OpResult):
        op = value.op
        sources = [o for o in op.operands if isinstance(o.type, MemRefType)]
        if len(sources) != 1 or get_effects(op) != set():
            break
        value = sources[0]
    return value


def _memrefs(ops: Sequence[Operation]) -> tuple[set[SSAValue], set[SSAValue]]:
    """The GM memrefs (the roots of views) the ops and the ops nested in them read
    and write."""
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    for op in ops:
        for nested in op.walk():
            memrefs = {
                _memref_root(o)
                for o in nested.operands
                if isinstance(o.type, MemRefType)
            }
            if not memrefs:
                continue
            if isinstance(nested, tile.LoadOp):
                reads |= memrefs
                continue
            if isinstance(nested, tile.StoreOp):
                writes |= memrefs
                continue
            effects = get_effects(nested)
            kinds = {e.kind for e in effects} if effects is not None else None
            if kinds is None or MemoryEffectKind.READ in kinds:
                reads |= memrefs
            if kinds is None or kinds - {MemoryEffectKind.READ}:
                writes |= memrefs
    return reads, writes


def _depends_on(value: SSAValue, root: SSAValue) -> bool:
    """Whether `value` is computed from `root` by arith ops."""
    stack, seen = [value], set[SSAValue]()
    while stack:
        current = stack.pop()
        if current is root:
            return True
        if current in seen:
            continue
        seen.add(current)
        if isinstance(current, OpResult) and current.op.dialect_name() == "arith":
            stack.extend(current.op.operands)
    return False


def _is_parallel(loop: scf.ForOp) -> bool:
    """Iterations are independent: nothing carried, no GM tensor both read and
    written, and every store writes a window that moves with the iteration."""
    if loop.results:
        return False
    reads, writes = _memrefs([loop])
    if any(not _own_rows(loop, m) for m in reads & writes):
        return False
    induction = loop.body.block.args[0]
    stores = [op for op in loop.walk() if isinstance(op, tile.StoreOp)]
    rest = [s for s in stores if not any(_depends_on(i, induction) for i in s.indices)]
    if not rest:
        return True
    ranges = index_ranges_of(loop)  # only for stores at entries of a sparse row
    return all(
        any(_entries_row(i, induction, ranges) is not None for i in store.indices)
        for store in rest
    )


def _own_rows(loop: scf.ForOp, root: SSAValue) -> bool:
    """Each iteration reads and writes only its own rows of GM tensor `root`
    (the top-k mask rows a query block builds, then reads:
    passes/topk_overlap.py): every load and store of it is tile.load or
    tile.store at rows `iv + b` with its rows within `[iv, iv + step)` (its
    columns anywhere: iterations own disjoint rows). The core's own store ->
    load order is hw-insert-sync's."""
    ranges = index_ranges_of(loop)
    step = ranges.get(loop.step, Range()).constant
    induction = loop.body.block.args[0]
    for op in loop.walk():
        memrefs = [o for o in op.operands if isinstance(o.type, MemRefType)]
        if not any(_memref_root(m) is root for m in memrefs):
            continue
        if isinstance(op, tile.LoadOp) and op.source is root:
            rows = cast(tile.TileType, op.result.type).get_shape()[0]
        elif isinstance(op, tile.StoreOp) and op.dest is root:
            rows = cast(tile.TileType, op.value.type).get_shape()[0]
        else:
            return False
        if step is None:
            return False
        affine = _affine_in(op.indices[0], induction, ranges)
        if affine is None or affine[0] != 1 or not 0 <= affine[1] <= step - rows:
            return False
    return True


def index_ranges_of(loop: scf.ForOp) -> dict[SSAValue, Range]:
    """The index ranges of the function around `loop` (its constants)."""
    parent = loop.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return index_ranges(parent) if isinstance(parent, func.FuncOp) else {}


def _entries_row(
    value: SSAValue, induction: SSAValue, ranges: dict[SSAValue, Range]
) -> tuple[int, int] | None:
    """(a, b) when `value` is an entry of row `a * induction + b` (a > 0): the
    induction variable (plus a constant) of a loop marked `ROW_ENTRIES_ATTR`
    whose bounds are read from one offsets memref at rows affine in
    `induction` (b: the least of them). The canonical form makes the entries
    of different rows disjoint and increasing with the row."""
    while isinstance(value, OpResult) and isinstance(value.op, arith.AddiOp):
        constants = [ranges.get(v, Range()).constant for v in value.op.operands]
        if constants[1] is not None:
            value = value.op.operands[0]
        elif constants[0] is not None:
            value = value.op.operands[1]
        else:
            return None
    if not isinstance(value, BlockArgument) or value.index != 0:
        return None
    loop = value.block.parent_op()
    if not isinstance(loop, scf.ForOp) or ROW_ENTRIES_ATTR not in loop.attributes:
        return None
    loads: list[memref.LoadOp] = []
    stack, seen = [loop.lb, loop.ub], set[SSAValue]()
    while stack:
        current = stack.pop()
        if current in seen or not isinstance(current, OpResult):
            continue
        seen.add(current)
        if isinstance(current.op, memref.LoadOp):
            loads.append(current.op)
        elif current.op.dialect_name() == "arith":
            stack.extend(current.op.operands)
    rows = [
        _affine_in(load.indices[0], induction, ranges)
        for load in loads
        if len(load.indices) == 1
    ]
    if (
        len(rows) != len(loads)
        or not rows
        or len({load.memref for load in loads}) != 1
        or any(row is None for row in rows)
    ):
        return None
    coefficients = {row[0] for row in rows if row is not None}
    if len(coefficients) != 1 or min(coefficients) <= 0:
        return None
    return min(coefficients), min(row[1] for row in rows if row is not None)


def _affine_in(
    value: SSAValue, induction: SSAValue, ranges: dict[SSAValue, Range]
) -> tuple[int, int] | None:
    """(a, b) with `value = a * induction + b` for constants a, b, if so."""
    if value is induction:
        return 1, 0
    constant = ranges.get(value, Range()).constant
    if constant is not None:
        return 0, constant
    if not isinstance(value, OpResult):
        return None
    op = value.op
    if not isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp):
        return None
    lhs, rhs = (_affine_in(v, induction, ranges) for v in op.operands)
    if lhs is None or rhs is None:
        return None
    if isinstance(op, arith.AddiOp):
        return lhs[0] + rhs[0], lhs[1] + rhs[1]
    if isinstance(op, arith.SubiOp):
        return lhs[0] - rhs[0], lhs[1] - rhs[1]
    if lhs[0] and rhs[0]:
        return None
    return lhs[0] * rhs[1] + rhs[0] * lhs[1], lhs[1] * rhs[1]


@dataclass(frozen=True)
class _StoreSplit:
    """Where a store in a distributed loop writes GM: iteration u starts at byte
    `base + u * stride` along the one memref dim that moves with the loop."""

    base: int
    stride: int


@dataclass(frozen=True)
class _Moving:
    """The memref dim a store's window moves along with a loop: index
    `coefficient * iv + rest`; with `entries`, an entry of row `coefficient *
    iv + rest` of a sparse tensor (`_entries_row`)."""

    dim: int
    coefficient: int
    rest: int
    entries: bool = False


def _moving_dim(
    loop: scf.ForOp, store: tile.StoreOp, ranges: dict[SSAValue, Range]
) -> _Moving | None:
    induction = loop.body.block.args[0]
    moving: list[_Moving] = []
    for dim, index in enumerate(store.indices):
        affine = _affine_in(index, induction, ranges)
        row = _entries_row(index, induction, ranges) if affine is None else None
        if row is not None:
            moving.append(_Moving(dim, *row, entries=True))
        elif affine is None:
            if _depends_on(index, induction):
                return None
        elif affine[0]:
            moving.append(_Moving(dim, *affine))
    return moving[0] if len(moving) == 1 and moving[0].coefficient > 0 else None


def _store_split(
    loop: scf.ForOp, store: tile.StoreOp, ranges: dict[SSAValue, Range], alignment: int
) -> _StoreSplit | None:
    """How a store moves with the loop, when cutting the loop between two
    iterations cuts its GM tensor on `alignment`-byte blocks given an aligned
    cut position (else None: cores would share a block, which is a race)."""
    memref_type = store.dest.type
    assert isinstance(memref_type, MemRefType)
    strides, offset = memref_type.get_strides(), memref_type.get_offset()
    if strides is None or offset is None or any(s is None for s in strides):
        return None
    moving = _moving_dim(loop, store, ranges)
    if moving is None:
        return None
    e = tile.element_bytes(memref_type.element_type)
    if moving.entries:
        # Rows own disjoint, increasing runs of whole entries: a cut between
        # two rows is on a block when every entry is whole blocks.
        stride = strides[moving.dim]
        assert stride is not None
        if moving.dim or (stride * e) % alignment or (offset * e) % alignment:
            return None
        return _StoreSplit(offset * e, alignment)
    lb, step = ranges[loop.lb].constant, ranges[loop.step].constant
    assert lb is not None and step is not None
    shape = memref_type.get_shape()
    if any(
        shape[d] != 1 and strides[d] * e % alignment  # type: ignore[operator]
        for d in range(moving.dim)
    ):
        return None
    stride = strides[moving.dim]
    assert stride is not None
    base = (offset + (moving.coefficient * lb + moving.rest) * stride) * e
    return _StoreSplit(base, moving.coefficient * step * stride * e)


def _bounds(
    loop: scf.ForOp, ranges: dict[SSAValue, Range]
) -> tuple[int, int, int] | None:
    lb, ub, step = (
        ranges.get(v, Range()).constant for v in (loop.lb, loop.ub, loop.step)
    )
    if lb is None or ub is None or step is None:
        return None
    return lb, ub, step


def _tail_fits(
    tail: Sequence[Operation],
    loops: Sequence[scf.ForOp],
    trips: int,
    ranges: dict[SSAValue, Range],
) -> bool:
    """Every store of the tail to a memref a loop writes lies beyond the loop's
    last iteration along the dim the loop's stores move (a peeled iteration).

    A store's last window ends at its start in the last iteration plus the
    tile's rows along that dim (when the tile has the memref's rank), else at
    its start in the iteration after (a loop unrolled by tile-pipeline stores
    several windows per iteration, each shorter than the step)."""
    moving: dict[SSAValue, list[tuple[_Moving, int]]] = {}
    for loop in loops:
        lb, _, step = _bounds(loop, ranges)  # type: ignore[misc]
        for store in loop.walk():
            if isinstance(store, tile.StoreOp):
                found = _moving_dim(loop, store, ranges)
                assert found is not None
                if found.entries:  # where a row's entries end is run-time data
                    moving.setdefault(_memref_root(store.dest), []).append((found, -1))
                    continue
                end = found.coefficient * (lb + trips * step) + found.rest
                shape = store.value.type.get_shape()
                if len(shape) == len(store.indices):
                    last = end - found.coefficient * step
                    end = min(end, last + shape[found.dim])
                moving.setdefault(_memref_root(store.dest), []).append((found, end))
    for op in tail:
        for store in op.walk():
            if not isinstance(store, tile.StoreOp):
                continue
            for found, end in moving.get(_memref_root(store.dest), []):
                if found.entries:
                    return False
                index = ranges.get(store.indices[found.dim], Range()).lo
                if index is None or index < end:
                    return False
    return True


def _same_space(
    loops: Sequence[scf.ForOp], ranges: dict[SSAValue, Range]
) -> list[scf.ForOp]:
    """The first loop and the later ones that iterate the same space: same
    bounds, parallel, and every store moves like a store of the first loop to
    the same GM tensor (so a core's windows in them lie inside its windows in the
    first). The others are work for the last core. Empty when a store of the
    first loop does not move with it."""
    first = loops[0]
    moves: dict[SSAValue, set[_Moving]] = {}
    for store in first.walk():
        if isinstance(store, tile.StoreOp):
            moving = _moving_dim(first, store, ranges)
            if moving is None:
                return []
            moves.setdefault(_memref_root(store.dest), set()).add(moving)
    same = [first]
    for loop in loops[1:]:
        if _bounds(loop, ranges) != _bounds(first, ranges) or not _is_parallel(loop):
            continue
        stores = [s for s in loop.walk() if isinstance(s, tile.StoreOp)]
        if all(
            _moving_dim(loop, store, ranges) in moves.get(_memref_root(store.dest), ())
            for store in stores
        ):
            same.append(loop)
    return same


@dataclass
class _Split:
    """How the loops of one block are split over cores (see `distribute`)."""

    loops: list[scf.ForOp]
    tail: list[Operation]
    lb: int
    step: int
    trips: int
    granule: int
    units: int


def _plan_split(
    ops: Sequence[Operation],
    later: Sequence[Operation],
    ranges: dict[SSAValue, Range],
    alignment: int,
) -> _Split | None:
    """Whether and how the loops among `ops` (a block without its terminator, or
    one phase of the function's body) can be split over cores; None when they
    cannot. `later` are the ops after them (the terminator, later phases)."""
    ops = list(ops)
    candidates = [op for op in ops if isinstance(op, scf.ForOp) and _tile_ops(op)]
    if candidates and CORE_LOOP_ATTR in candidates[0].attributes:
        return _core_loop_split(candidates[0], ops, ranges)
    if not candidates or not _is_parallel(candidates[0]):
        return None
    loops = _same_space(candidates, ranges)
    if not loops:
        return None
    first = ops.index(loops[0])
    # The tail: other work with tiles after the first loop, and what uses it.
    tail: list[Operation] = []
    for op in ops[first + 1 :]:
        if op not in loops and (
            _tile_ops(op) or any(o.owner in tail for o in op.operands)
        ):
            tail.append(op)
    used_later = [
        o.owner for op in (*loops, *later) for n in op.walk() for o in n.operands
    ]
    if any(owner in tail for owner in used_later):
        return None
    bounds = _bounds(loops[0], ranges)
    trips = loop_trip_count(loops[0], ranges)
    if bounds is None or trips is None or trips < 1:
        return None
    # Work before the loops runs on every core: it may read GM, not write it.
    prologue = ops[:first]
    if _memrefs(prologue)[1]:
        return None
    parts: list[Sequence[Operation]] = [[loop] for loop in loops] + [tail, prologue]
    accesses = [_memrefs(part) for part in parts]
    for i, (_, writes) in enumerate(accesses):
        for j, (reads, _) in enumerate(accesses):
            if i != j and writes & reads:
                return None
    splits = [
        _store_split(loop, store, ranges, alignment)
        for loop in loops
        for store in loop.walk()
        if isinstance(store, tile.StoreOp)
    ]
    if not splits or not _tail_fits(tail, loops, trips, ranges):
        return None
    granule = 1
    for split in splits:
        if split is None or split.base % alignment:
            return None
        granule = lcm(granule, alignment // gcd(alignment, abs(split.stride)))
    separate_tail = bool(tail) and all(
        (s.base + trips * s.stride) % alignment == 0 for s in splits if s is not None
    )
    units = -(-trips // granule) + int(separate_tail)
    lb, _, step = bounds
    return _Split(loops, tail, lb, step, trips, granule, units)


def _core_loop_split(
    loop: scf.ForOp,
    ops: Sequence[Operation],
    ranges: dict[SSAValue, Range],
) -> _Split | None:
    """A `CORE_LOOP_ATTR` loop alone in its phase (nothing carried, no other
    tile work, no GM both read and written; later phases start after a
    `sync_all`): one iteration a unit."""
    bounds = _bounds(loop, ranges)
    trips = loop_trip_count(loop, ranges)
    reads, writes = _memrefs([loop])
    others = [op for op in ops if op is not loop and _tile_ops(op)]
    if loop.results or reads & writes or others or bounds is None or not trips:
        return None
    lb, _, step = bounds
    return _Split([loop], [], lb, step, trips, 1, trips)


def _apply_split(
    split: _Split,
    core: SSAValue,
    count: int,
    point: InsertPoint | None = None,
    spare: bool = False,
) -> scf.IfOp | None:
    """Give the loops the chunk of core `core` (of `count`) and move the tail into
    an `scf.if` on the last core, where the last tail op was; returns that
    `scf.if`. The bounds are computed at `point` (default: before the first
    loop). With `spare`, `core` may also be `count`: a core without work (its
    chunk is empty)."""
    share, extra = divmod(split.units, count)
    point = point or InsertPoint.before(split.loops[0])
    location = split.loops[0].location

    def emit(op: Operation) -> SSAValue:
        op.location = location
        Rewriter.insert_op(op, point)
        return op.results[0]

    def const(value: int) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def times(value: SSAValue, factor: int) -> SSAValue:
        return value if factor == 1 else emit(arith.MuliOp(value, const(factor)))

    def plus(value: SSAValue, term: int) -> SSAValue:
        return value if term == 0 else emit(arith.AddiOp(value, const(term)))

    def iteration_value(unit: SSAValue, largest: int) -> SSAValue:
        """lb + min(unit * granule, trips) * step, for unit <= largest."""
        first = times(unit, split.granule)
        if largest * split.granule > split.trips:
            bound = const(split.trips)
            first = emit(
                arith.SelectOp(emit(arith.CmpiOp(first, bound, "slt")), first, bound)
            )
        return plus(times(first, split.step), split.lb)

    start = times(core, share)
    if extra:
        longer = emit(arith.CmpiOp(core, const(extra), "ult"))
        start = emit(
            arith.AddiOp(start, emit(arith.SelectOp(longer, core, const(extra))))
        )
        end = emit(
            arith.AddiOp(
                start, emit(arith.SelectOp(longer, const(share + 1), const(share)))
            )
        )
    else:
        end = plus(start, share)
    low = iteration_value(start, split.units - share + int(spare) * share)
    high = iteration_value(end, split.units + int(spare) * share)
    most = min(split.trips, (share + int(extra > 0)) * split.granule)
    for loop in split.loops:
        loop.operands[0], loop.operands[1] = low, high
        loop.attributes[MAX_TRIPS_ATTR] = IntegerAttr(most, i64)
    if not split.tail:
        return None
    last = emit(arith.CmpiOp(core, const(count - 1), "eq"))
    return _guard(split.tail, last, location)


def _guard(ops: Sequence[Operation], condition: SSAValue, location) -> scf.IfOp:
    """Move `ops` into an `scf.if` on `condition` where the last of them was."""
    body = Block()
    guard = scf.IfOp(condition, [], Region(body))
    guard.location = location
    Rewriter.insert_op(guard, InsertPoint.after(ops[-1]))
    for op in ops:
        op.detach()
        body.add_op(op)
    body.add_op(scf.YieldOp())
    return guard


def core_split(
    outer: int, inner: int, cores: int, matmul: bool = False
) -> tuple[int, int]:
    """Cores along the outer and inner loop of a nest of `outer` x `inner`
    units as `distribute` splits it: the outer loop alone when it has a unit
    per core (its chunks run every inner unit), else the grid of `_grid`. For
    the block loops of a matmul (`matmul`) with more rows than cores, the grid
    when it gives the busiest core fewer units (32 x 16 blocks on 24 cores: 24
    instead of 32). The matmul tiling model (passes/matmul_model.py)
    estimates a core's blocks with it."""
    if outer >= cores:
        if matmul and outer % cores:
            n_outer, n_inner = _grid(outer, inner, cores, matmul)
            if -(-outer // n_outer) * -(-inner // n_inner) < -(-outer // cores) * inner:
                return n_outer, n_inner
        return cores, 1
    return _grid(outer, inner, cores, matmul)


def _grid(outer: int, inner: int, cores: int, matmul: bool = False) -> tuple[int, int]:
    """Cores along the outer and inner loops: the least work per core (in units),
    then the fewest cores; for matmul block loops (`matmul`) then the fewest
    block rows per core (8 x 4 blocks on 16 cores: one row and two columns
    each, not two rows and one column: a core's blocks of one row share its A
    panel, or its A chunks in the L2), else the fewest cores along the outer
    loop."""
    best = (outer * inner, 1, 0, 1, 1)
    for n_outer in range(1, min(outer, cores) + 1):
        for n_inner in range(1, min(inner, cores // n_outer) + 1):
            load = -(-outer // n_outer) * -(-inner // n_inner)
            rows = -(-outer // n_outer) if matmul else 0
            best = min(best, (load, n_outer * n_inner, rows, n_outer, n_inner))
    return best[3], best[4]


@dataclass
class _PhasePlan:
    """How one phase is split: its loops over `n_outer` cores, and when they
    have too few units, the loops of their bodies over `n_inner` (a grid)."""

    outer: _Split
    inner: list[_Split]
    n_outer: int
    n_inner: int

    @property
    def cores(self) -> int:
        return self.n_outer * self.n_inner


def _plan_phase(
    ops: Sequence[Operation],
    later: Sequence[Operation],
    ranges: dict[SSAValue, Range],
    alignment: int,
    cores: int,
    matmul_grid: bool = True,
) -> _PhasePlan | None:
    """The split of one phase over up to `cores` cores; None when it runs on
    one core. With `matmul_grid`, matmul block rows that the cores do not
    divide evenly may be split as a grid (`core_split`)."""
    outer = _plan_split(ops, later, ranges, alignment)
    if outer is None:
        return None
    inner: list[_Split] = []
    if outer.units < cores or (matmul_grid and _matmul_rows(outer, cores)):
        blocks: list[tuple[list[Operation], list[Operation]]] = []
        for loop in outer.loops:
            body_ops = list(loop.body.block.ops)
            blocks.append((body_ops[:-1], body_ops[-1:]))
        if outer.tail:
            blocks.append((outer.tail, list(later)))
        plans = [_plan_split(b, end, ranges, alignment) for b, end in blocks]
        if all(plans) and len({p.units for p in plans if p}) == 1:
            inner = [p for p in plans if p is not None]
    if inner and outer.units >= cores:
        n_outer, n_inner = core_split(outer.units, inner[0].units, cores, True)
        if n_inner == 1:
            inner = []
        else:
            rows = -(-outer.units // cores) * inner[0].units
            busiest = -(-outer.units // n_outer) * -(-inner[0].units // n_inner)
            emit_remark(
                outer.loops[0],
                f"matmul block rows {outer.units} x columns {inner[0].units} "
                f"split over a {n_outer}x{n_inner} grid of cores: {busiest} "
                f"blocks on the busiest core instead of {rows} by rows "
                "(tile-to-hw matmul-grid)",
            )
    if not inner or outer.units < cores:
        columns = inner[0].units if inner else 1
        n_outer, n_inner = _grid(outer.units, columns, cores)
        if matmul_grid and inner and _has_matmul(outer):
            plain = -(-outer.units // n_outer)
            n_outer, n_inner = _grid(outer.units, columns, cores, True)
            rows = -(-outer.units // n_outer)
            if rows < plain:
                emit_remark(
                    outer.loops[0],
                    f"matmul block rows {outer.units} x columns {columns} split "
                    f"over a {n_outer}x{n_inner} grid of cores: {rows} block "
                    f"row(s) a core instead of {plain}, the same blocks a core "
                    "(tile-to-hw matmul-grid)",
                )
    if n_outer * n_inner <= 1:
        return None
    return _PhasePlan(outer, inner, n_outer, n_inner)


def _matmul_rows(split: _Split, cores: int) -> bool:
    """Whether the loops are matmul block rows that the cores do not divide
    evenly: a grid over rows and columns may then give the busiest core fewer
    blocks (`core_split`)."""
    return split.units % cores != 0 and _has_matmul(split)


def _has_matmul(split: _Split) -> bool:
    """Whether the split's loops run matmuls (their units are block rows)."""
    return any(
        isinstance(op, tile.MatmulOp) for loop in split.loops for op in loop.walk()
    )


def _apply_phase(plan: _PhasePlan, block_dim: int) -> None:
    """Split the phase's loops over its cores; cores `plan.cores` .. `block_dim
    - 1` (when it uses fewer) get empty chunks."""
    outer = plan.outer
    location = outer.loops[0].location
    point = InsertPoint.before(outer.loops[0])

    def emit(op: Operation) -> SSAValue:
        op.location = location
        Rewriter.insert_op(op, point)
        return op.results[0]

    core = emit(hw.BlockIdxOp())
    spare = plan.cores < block_dim
    if spare:  # the cores beyond the phase's are all its core `plan.cores`
        limit = emit(arith.ConstantOp(IntegerAttr(plan.cores, IndexType())))
        core = emit(arith.MinUIOp(core, limit))
    outer_core, inner_core = core, core
    if plan.n_inner > 1:
        width = emit(arith.ConstantOp(IntegerAttr(plan.n_inner, IndexType())))
        outer_core = emit(arith.DivSIOp(core, width))
        inner_core = emit(arith.RemSIOp(core, width))
    _apply_split(outer, outer_core, plan.n_outer, spare=spare)
    if plan.n_inner > 1:
        # The inner bounds depend on the core only: computed once, before the loop.
        for inner in plan.inner:
            _apply_split(inner, inner_core, plan.n_inner, point)


def _phases(ops: Sequence[Operation]) -> list[list[Operation]]:
    """`ops` (the function's body) cut before every op with tiles that reads GM
    an earlier op of the same phase writes, or writes GM such an op reads: the
    cores must all finish one phase before any starts the next."""
    phases: list[list[Operation]] = [[]]
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    # Tile work without GM access (an accumulator's fill before a loop), and
    # the ops after it up to the next tile op with GM access, go with that
    # op's phase: left at the end of the earlier phase it would be work whose
    # value a later phase uses, and nothing would be split.
    pending: list[Operation] = []
    for op in ops:
        if not _tile_ops(op) and pending:
            pending.append(op)
            continue
        if _tile_ops(op):
            op_reads, op_writes = _memrefs([op])
            if not op_reads and not op_writes:
                pending.append(op)
                continue
            if op_reads & writes or op_writes & reads:
                phases.append([])
                reads, writes = set(), set()
            reads |= op_reads
            writes |= op_writes
        phases[-1].extend(pending)
        pending.clear()
        phases[-1].append(op)
    phases[-1].extend(pending)
    return phases


INTERLEAVE_ATTR = "pypto.interleave_groups"
"""A unit attribute on a function (set by `tv-schedule`): independent loops of
one phase each split over all the cores, one after the other on every core,
instead of the later ones running on the last core."""


def _independent_parts(
    phase: Sequence[Operation], ranges: dict[SSAValue, Range]
) -> list[list[Operation]]:
    """`phase` cut before each top-level tile loop that neither iterates the
    space of the current part's first loop nor writes a GM tensor the part
    writes: the parts do not depend on each other (the phase has no barrier
    inside), so each can be split over all the cores on its own."""
    parts: list[list[Operation]] = [[]]
    first: scf.ForOp | None = None
    writes: set[SSAValue] = set()
    for op in phase:
        if isinstance(op, scf.ForOp) and _tile_ops(op):
            op_writes = _memrefs([op])[1]
            if first is None:
                first = op
            elif (
                not (op_writes & writes)
                and op not in _same_space([first, op], ranges)
                and _is_parallel(op)
            ):
                parts.append([])
                first, writes = op, set()
            writes |= op_writes
        elif _tile_ops(op):
            writes |= _memrefs([op])[1]
        parts[-1].append(op)
    return [part for part in parts if part]


def _single_core_work(
    phase: Sequence[Operation], later: Sequence[Operation]
) -> list[Operation] | None:
    """The ops of a phase that no split applies to which must run on one core:
    its tile work and what uses it; None when something after uses their values."""
    work: list[Operation] = []
    for op in phase:
        if _tile_ops(op) or any(o.owner in work for o in op.operands):
            work.append(op)
    others = [op for op in phase if op not in work] + list(later)
    used = {o.owner for op in others for n in op.walk() for o in n.operands}
    if any(op in used for op in work):
        return None
    return work


def distribute(
    function: func.FuncOp, cores: int, alignment: int, matmul_grid: bool = True
) -> int:
    """Split the parallel tile loops of `function` over up to `cores` cores;
    returns the number of cores used (the function's block_dim).

    The body is cut into phases (`_phases`) where a part reads GM that an
    earlier part writes (a temporary between two nests, an output read back):
    an `ascend_hw.sync_all` separates two phases. In each phase, the first
    top-level loop with tiles, and the later ones that iterate the same space
    (`_same_space`), run their iterations in units of g iterations, chosen so
    that no two cores write one `alignment`-byte block of GM (g = 1 when an
    iteration's output window starts on a block). The other work with tiles of
    the phase (the peeled last iterations) is one more unit when it starts on a
    block, else part of the last one, and runs on the last core; work before
    the loops runs on every core (it must not write GM). Units 0..T-1 are split
    into N contiguous chunks: core c starts at unit `c * (T // N) + min(c, T %
    N)`, and the first T % N cores get one unit more. When the loop has fewer
    units than there are cores and its body (and its peeled copy) is again such
    a loop, the cores form a grid over both levels. Each phase uses the cores it
    can; the function's block_dim is the most any uses, and a phase of fewer
    gives the others no work (they still reach the barrier). A phase that
    cannot be split runs on core 0. With `INTERLEAVE_ATTR` on the function, a
    phase is first cut into independent parts (`_independent_parts`), each
    split on its own over all the cores with no barrier between them. Nothing is split when no phase can be, or
    when a single-core phase's values are used after it.
    """
    interleave = function.attributes.pop(INTERLEAVE_ATTR, None) is not None
    ranges = index_ranges(function)
    block = function.body.block
    terminator = block.last_op
    assert terminator is not None
    ops = [op for op in block.ops if op is not terminator]
    phases = _phases(ops)
    barriers = [phase[0] for phase in phases[1:]]
    if interleave:
        phases = [part for p in phases for part in _independent_parts(p, ranges)]
    plans: list[_PhasePlan | None] = []
    for k, phase in enumerate(phases):
        later = [op for p in phases[k + 1 :] for op in p] + [terminator]
        plans.append(_plan_phase(phase, later, ranges, alignment, cores, matmul_grid))
    if not any(plans):
        return 1
    single: list[list[Operation]] = []
    for k, (phase, plan) in enumerate(zip(phases, plans, strict=True)):
        if plan is None:
            later = [op for p in phases[k + 1 :] for op in p] + [terminator]
            work = _single_core_work(phase, later)
            if work is None:
                return 1
            if work:
                single.append(work)
    block_dim = max(plan.cores for plan in plans if plan is not None)
    for first in barriers:
        barrier = hw.SyncAllOp()
        barrier.location = first.location
        Rewriter.insert_op(barrier, InsertPoint.before(first))
    for plan in plans:
        if plan is not None:
            _apply_phase(plan, block_dim)
    for work in single:
        location = work[0].location
        core = hw.BlockIdxOp()
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        first = arith.CmpiOp(core.result, zero.result, "eq")
        for op in (core, zero, first):
            op.location = location
        Rewriter.insert_op([core, zero, first], InsertPoint.before(work[0]))
        _guard(work, first.result, location)
    return block_dim
