"""`tile-to-hw{target=...}`: from tiles to buffers and instructions.

For every function that computes with tiles:

1. **Static extents.** Every tile must fit the target, and every valid extent
   must be a constant by now (run `tile-peel-tails` first, or a loop range that
   divides by its step); a dynamic one is an error naming the op.
2. **Multi-core.** The outermost parallel tile loop at the top of the function
   is split over the target's cores in contiguous, balanced chunks of iterations
   (`ascend_hw.block_idx`, a grid over two loop levels when one has too few), and
   the function gets `ascend_hw.block_dim = N`. A peeled last iteration after
   the loop counts as one more iteration and runs on the last core.
3. **Memory planning** (`memory_plan`): every tile value gets an `ascend_hw.alloc`
   at the function entry, at an aligned offset of its memory, sharing space
   with values whose lifetimes do not overlap.
4. **Instruction selection** (`hw_isel`): every tile op becomes DMA, cube, fixpipe
   and vector instructions on those buffers; loops stop carrying tiles (their
   buffer is fixed). The result has no synchronisation: `hw-insert-sync` adds it;
   executed in program order with every instruction completing before the
   next, it computes what the tile IR computes.

The module gets `pypto.target`. docs/tile_to_hw.md describes the lowering of
each op and the numerical tolerances.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import gcd, lcm
from typing import cast

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType
from pypto_mlir.passes.hw_isel import (
    BufferOf,
    ConstantPool,
    Emitter,
    Lanes,
    Selector,
    Valid,
    buffer_type,
    unary,
)
from pypto_mlir.passes.index_range import (
    MAX_TRIPS_ATTR,
    Range,
    index_ranges,
    loop_trip_count,
)
from pypto_mlir.passes.memory_plan import MemoryPlan, ScratchRequest, plan_memory
from pypto_mlir.passes.tile_pipeline import (
    PIPELINE_PROLOGUE_ATTR,
    SPLIT_STAGES_ATTR,
    Clones,
    pipeline_loop,
    pipeline_split_loop,
)
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Operation,
    OpResult,
    Region,
    SSAValue,
)
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import MemoryEffectKind, get_effects
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import VerifyException

from pypto_mlir.diagnostics import op_error
from pypto_mlir.targets import Target, load_target
from pypto_mlir.targets.resolve import TARGET_ATTR, resolve_target

BLOCK_DIM_ATTR = "ascend_hw.block_dim"


def _is_tile(value: SSAValue) -> bool:
    return isinstance(value.type, TileType)


def _tile_ops(op: Operation) -> list[Operation]:
    return [o for o in op.walk() if o.dialect_name() == "tile"]


# --------------------------------------------------------------------------------------
# Multi-core distribution
# --------------------------------------------------------------------------------------


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
    if reads & writes:
        return False
    induction = loop.body.block.args[0]
    return all(
        any(_depends_on(index, induction) for index in store.indices)
        for store in loop.walk()
        if isinstance(store, tile.StoreOp)
    )


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
    `coefficient * iv + rest`."""

    dim: int
    coefficient: int
    rest: int


def _moving_dim(
    loop: scf.ForOp, store: tile.StoreOp, ranges: dict[SSAValue, Range]
) -> _Moving | None:
    induction = loop.body.block.args[0]
    moving: list[_Moving] = []
    for dim, index in enumerate(store.indices):
        affine = _affine_in(index, induction, ranges)
        if affine is None:
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


def _grid(outer: int, inner: int, cores: int) -> tuple[int, int]:
    """Cores along the outer and inner loops: the least work per core (in units),
    then the fewest cores."""
    best = (outer * inner, 1, 1, 1)
    for n_outer in range(1, min(outer, cores) + 1):
        for n_inner in range(1, min(inner, cores // n_outer) + 1):
            load = -(-outer // n_outer) * -(-inner // n_inner)
            best = min(best, (load, n_outer * n_inner, n_outer, n_inner))
    return best[2], best[3]


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
) -> _PhasePlan | None:
    """The split of one phase over up to `cores` cores; None when it runs on
    one core."""
    outer = _plan_split(ops, later, ranges, alignment)
    if outer is None:
        return None
    inner: list[_Split] = []
    if outer.units < cores:
        blocks: list[tuple[list[Operation], list[Operation]]] = []
        for loop in outer.loops:
            body_ops = list(loop.body.block.ops)
            blocks.append((body_ops[:-1], body_ops[-1:]))
        if outer.tail:
            blocks.append((outer.tail, list(later)))
        plans = [_plan_split(b, end, ranges, alignment) for b, end in blocks]
        if all(plans) and len({p.units for p in plans if p}) == 1:
            inner = [p for p in plans if p is not None]
    n_outer, n_inner = _grid(outer.units, inner[0].units if inner else 1, cores)
    if n_outer * n_inner <= 1:
        return None
    return _PhasePlan(outer, inner, n_outer, n_inner)


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
    for op in ops:
        if _tile_ops(op):
            op_reads, op_writes = _memrefs([op])
            if op_reads & writes or op_writes & reads:
                phases.append([])
                reads, writes = set(), set()
            reads |= op_reads
            writes |= op_writes
        phases[-1].append(op)
    return phases


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


def distribute(function: func.FuncOp, cores: int, alignment: int) -> int:
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
    cannot be split runs on core 0. Nothing is split when no phase can be, or
    when a single-core phase's values are used after it.
    """
    ranges = index_ranges(function)
    block = function.body.block
    terminator = block.last_op
    assert terminator is not None
    ops = [op for op in block.ops if op is not terminator]
    phases = _phases(ops)
    plans: list[_PhasePlan | None] = []
    for k, phase in enumerate(phases):
        later = [op for p in phases[k + 1 :] for op in p] + [terminator]
        plans.append(_plan_phase(phase, later, ranges, alignment, cores))
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
    for phase in phases[1:]:
        barrier = hw.SyncAllOp()
        barrier.location = phase[0].location
        Rewriter.insert_op(barrier, InsertPoint.before(phase[0]))
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


def _index_constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _pipeline_split_loops(function: func.FuncOp, valid: dict[SSAValue, Valid]) -> bool:
    """Unroll the loops tile-pipeline left to this pass (`SPLIT_STAGES_ATTR`):
    after the split, each core's chunk (or, when the loop was not split, the
    whole loop); the copies' tiles get their originals' valid extents. Returns
    whether there were any."""
    loops = [
        op
        for op in function.walk()
        if isinstance(op, scf.ForOp) and SPLIT_STAGES_ATTR in op.attributes
    ]
    for loop in loops:
        stages = cast(IntegerAttr, loop.attributes.pop(SPLIT_STAGES_ATTR)).value.data
        clones: Clones = []
        bounds = [_index_constant(v) for v in (loop.lb, loop.ub, loop.step)]
        if None not in bounds:
            lb, ub, step = cast(list[int], bounds)
            trips = max(0, -(-(ub - lb) // step))
            if trips >= 2:
                pipeline_loop(loop, min(stages, trips), trips, clones)
        else:
            pipeline_split_loop(loop, stages, clones)
        for mapping in clones:
            for old, new in mapping.items():
                if old in valid:
                    valid[new] = valid[old]
    return bool(loops)


def _tile_ops_of(ops: Sequence[Operation]) -> list[Operation]:
    return [t for op in ops for t in _tile_ops(op)]


# --------------------------------------------------------------------------------------
# Static valid extents
# --------------------------------------------------------------------------------------


class _ValidExtents:
    """The static valid extents of every tile value of a function."""

    def __init__(self, function: func.FuncOp):
        self.ranges: dict[SSAValue, Range] = index_ranges(function)
        self.extents: dict[SSAValue, Valid] = {}

    def of(self, value: SSAValue) -> Valid:
        if value in self.extents:
            return self.extents[value]
        tile_type = value.type
        assert isinstance(tile_type, TileType)
        carried = _carried(value)
        if carried is None:
            self.extents[value] = tuple(
                self._extent(value, dim) for dim in range(tile_type.get_num_dims())
            )
            return self.extents[value]
        # A carried tile has the extents of the init, in every iteration.
        loop, k = carried
        valid = self.of(loop.iter_args[k])
        self.extents[loop.body.block.args[k + 1]] = self.extents[loop.results[k]] = (
            valid
        )
        yielded = loop.body.block.last_op
        assert isinstance(yielded, scf.YieldOp)
        if self.of(yielded.arguments[k]) != valid:
            raise op_error(
                loop,
                f"carried tile #{k} has valid extents {list(valid)} on entry but "
                f"{list(self.of(yielded.arguments[k]))} at the end of an iteration",
            )
        return valid

    def _extent(self, value: SSAValue, dim: int) -> int:
        tile_type = value.type
        assert isinstance(tile_type, TileType)
        static = tile_type.get_valid()[dim]
        if static != DYNAMIC_INDEX:
            return static
        origin = tile.valid_extent_origin(value, dim)
        if isinstance(origin, SSAValue):
            constant = self.ranges.get(origin, Range()).constant
            if constant is not None:
                return constant
        elif origin is not None:
            return self.of(origin[0])[origin[1]]
        where = value.owner if isinstance(value, OpResult) else value.block.parent_op()
        assert isinstance(where, Operation)
        raise op_error(
            where,
            f"the valid extent of dim {dim} of {tile_type} is only known at run "
            "time; ascend_hw counts are static (run tile-peel-tails first)",
        )


def _carried(value: SSAValue) -> tuple[scf.ForOp, int] | None:
    """(loop, k) when `value` is the k-th carried block argument or result of a loop."""
    if isinstance(value, OpResult) and isinstance(value.op, scf.ForOp):
        return value.op, value.index
    if isinstance(value, BlockArgument) and isinstance(
        loop := value.block.parent_op(), scf.ForOp
    ):
        return loop, value.index - 1
    return None


def tile_values(function: func.FuncOp) -> list[SSAValue]:
    """Every tile-typed value of `function`, in program order."""
    values: list[SSAValue] = []
    for op in function.walk():
        for region in op.regions:
            for block in region.blocks:
                values += [a for a in block.args if _is_tile(a)]
        values += [r for r in op.results if _is_tile(r)]
    return values


# --------------------------------------------------------------------------------------
# Lowering a function
# --------------------------------------------------------------------------------------


class _FunctionLowering:
    def __init__(
        self,
        ctx: Context,
        function: func.FuncOp,
        target: Target,
        target_name: str,
        cores: int,
        bank_offset: bool = True,
    ):
        self.ctx = ctx
        self.target_name = target_name
        self.function = function
        self.target = target
        self.cores = cores
        self.bank_offset = bank_offset

    def run(self) -> None:
        function = self.function
        for value in [*function.args, *function.function_type.outputs.data]:
            value_type = value.type if isinstance(value, SSAValue) else value
            if isinstance(value_type, TileType):
                raise op_error(
                    function,
                    "tile-to-hw lowers kernels whose arguments and results are "
                    "GM memrefs and scalars, not tiles",
                )
        for op in function.walk():
            touches_tiles = any(map(_is_tile, (*op.operands, *op.results)))
            if touches_tiles and not (
                op.dialect_name() == "tile" or isinstance(op, scf.ForOp | scf.YieldOp)
            ):
                raise op_error(op, f"tile-to-hw does not lower {op.name} on tiles")
        for op in function.walk():
            for result in op.results:
                if isinstance(result.type, TileType):
                    try:
                        tile.verify_tile_fits(result.type, self.target_name)
                    except VerifyException as error:
                        raise op_error(op, str(error)) from error
        # Extents first: splitting the loops makes their bounds dynamic.
        values = tile_values(function)
        extents = _ValidExtents(function)
        valid = {v: extents.of(v) for v in values}
        block_dim = distribute(
            function, self.cores, self.target.memories["gm"].alignment
        )
        function.attributes[BLOCK_DIM_ATTR] = IntegerAttr(block_dim, i64)
        if _pipeline_split_loops(function, valid):
            values = tile_values(function)
        selector = Selector(self.target, valid)
        scratch_types = {op: selector.scratch(op) for op in function.walk()}
        plan = plan_memory(
            function,
            self.target,
            values,
            selector.inplace,
            lambda op: [
                ScratchRequest(str(t.memory_space), t.byte_size())
                for t in scratch_types.get(op, [])
            ],
            self.bank_offset,
        )
        for op in function.walk():
            op.attributes.pop(PIPELINE_PROLOGUE_ATTR, None)  # planning's only
        entry = function.body.block
        self._allocs: dict[tuple[int, hw.BufferType], SSAValue] = {}
        self._alloc_point = InsertPoint.at_start(entry)
        first = entry.first_op
        assert first is not None
        for value in values:
            self._alloc(plan.offsets[value], buffer_type(value.type))  # type: ignore[arg-type]
        scratch = {
            op: [
                self._alloc(offset, t)
                for offset, t in zip(plan.scratch.get(op, []), types, strict=True)
            ]
            for op, types in scratch_types.items()
            if types
        }
        constants = ConstantPool(self._alloc_point)
        emitter = Emitter(self.target, constants, self._alias)

        def buffer(value: SSAValue) -> SSAValue:
            return self._alloc(plan.offsets[value], buffer_type(value.type))  # type: ignore[arg-type]

        self._copies(plan, emitter, buffer, selector)
        tile_ops = _tile_ops(function)
        for op in tile_ops:
            if isinstance(op, tile.ValidDimOp):
                op.result.replace_all_uses_with(
                    constants.get(valid[op.source][op.dim_index], IndexType())
                )
            else:
                selector.lower(op, emitter, buffer, list(scratch.get(op, [])))
        self._drop_tiles()
        _simplify(self.ctx, function)

    def _alloc(self, offset: int, buffer: hw.BufferType) -> SSAValue:
        key = (offset, buffer)
        if key not in self._allocs:
            op = hw.AllocOp(offset, buffer)
            op.location = self.function.location
            Rewriter.insert_op(op, self._alloc_point)
            self._alloc_point = InsertPoint.after(op)
            self._allocs[key] = op.result
        return self._allocs[key]

    def _alias(self, buffer: SSAValue, element_type: Attribute) -> SSAValue:
        """Another alloc of the bytes of `buffer`, as a flat buffer of `element_type`
        (rounded up to whole elements: allocs are aligned, so the last one lies in
        the padding before the next buffer)."""
        alloc = buffer.owner
        assert isinstance(alloc, hw.AllocOp) and isinstance(buffer.type, hw.BufferType)
        count = -(-buffer.type.byte_size() // hw.element_bytes(element_type))
        return self._alloc(
            alloc.byte_offset,
            hw.BufferType([count], element_type, buffer.type.memory_space),
        )

    def _copies(
        self, plan: MemoryPlan, em: Emitter, buffer: BufferOf, selector: Selector
    ) -> None:
        """Copies of carried values that could not share the loop's buffer."""
        for loop, k in sorted(plan.init_copies | plan.yield_copies, key=lambda c: c[1]):
            carried = loop.body.block.args[k + 1]
            yielded = loop.body.block.last_op
            assert isinstance(yielded, scf.YieldOp)
            for kind, source, at in (
                ("init", loop.iter_args[k], loop),
                ("yield", yielded.arguments[k], yielded),
            ):
                copies = plan.init_copies if kind == "init" else plan.yield_copies
                if (loop, k) not in copies:
                    continue
                tile_type = source.type
                assert isinstance(tile_type, TileType)
                if tile_type.memory_space != MemorySpace.UB:
                    raise op_error(
                        at,
                        f"the carried {tile_type} needs a copy into the loop's "
                        f"buffer, and only ub tiles can be copied",
                    )
                em.at(at)
                region = selector.region(source)
                em.vector(
                    unary(hw.VCopyOp),
                    [
                        Lanes(buffer(source), pitch=region.pitch),
                        Lanes(buffer(carried), pitch=region.pitch),
                    ],
                    region.rows,
                    0,
                    region.cols,
                )

    def _drop_tiles(self) -> None:
        """Erase the tile ops and make loops stop carrying tiles."""
        doomed = [
            op
            for op in self.function.walk()
            if op.dialect_name() == "tile"
            or (isinstance(op, scf.ForOp) and any(map(_is_tile, op.results)))
        ]
        loops = [op for op in doomed if isinstance(op, scf.ForOp)]
        new_loops: list[scf.ForOp] = []
        for loop in loops:
            yielded = loop.body.block.last_op
            assert isinstance(yielded, scf.YieldOp)
            new_yield = scf.YieldOp(*[v for v in yielded.arguments if not _is_tile(v)])
            new_yield.location = yielded.location
            Rewriter.replace_op(yielded, new_yield)
            keep = [k for k, r in enumerate(loop.results) if not _is_tile(r)]
            new_loop = scf.ForOp(
                loop.lb,
                loop.ub,
                loop.step,
                [loop.iter_args[k] for k in keep],
                loop.detach_region(loop.body),
            )
            new_loop.location = loop.location
            new_loop.attributes.update(loop.attributes)
            Rewriter.insert_op(new_loop, InsertPoint.before(loop))
            for new_result, k in zip(new_loop.results, keep, strict=True):
                loop.results[k].replace_all_uses_with(new_result)
            new_loops.append(new_loop)
        # Users before definitions: loops hold no body any more.
        for op in reversed(doomed):
            Rewriter.erase_op(op)
        for loop in new_loops:
            block = loop.body.block
            for arg in [a for a in block.args[1:] if _is_tile(a)]:
                block.erase_arg(arg)


def _simplify(ctx: Context, function: func.FuncOp) -> None:
    """Fold the index arithmetic left behind and share equal constants and views."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier(
            [CanonicalizationRewritePattern()], ctx=ctx, folding_enabled=True
        ),
        post_walk_func=region_dce,
    ).rewrite_region(function.body)
    cse(function)


@dataclass(frozen=True)
class TileToHwPass(ModulePass):
    """Lower tiles to ascend_hw: memory planning, instruction selection, cores.

    Every tile gets a buffer at a static, aligned offset of its memory (reusing
    space across lifetimes); tile ops become DMA, cube, fixpipe and vector
    instructions; the outermost parallel tile loop is split over the target's
    cores. Valid extents must be static (run tile-peel-tails first). No
    synchronisation is inserted (hw-insert-sync does that).
    """

    name = "tile-to-hw"

    target: str = ""
    """Target name or TOML path; empty: the module's pypto.target, else ascend910b."""

    max_cores: int = 0
    """Use at most this many cores; 0: all cores of the target."""

    bank_offset: bool = True
    """Place UB buffers one vector instruction uses together in different banks
    where space allows (memory_plan.py)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        name = resolve_target(op, self.target or None)
        try:
            target = load_target(name)
        except Exception as error:  # the loader names the file and the bad key
            raise op_error(op, f"cannot load target '{name}': {error}") from error
        if self.max_cores < 0:
            raise op_error(op, f"max_cores must be >= 0, got {self.max_cores}")
        op.attributes[TARGET_ATTR] = StringAttr(name)
        cores = min(target.cores, self.max_cores or target.cores)
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            if any(
                _is_tile(v) for o in function.walk() for v in (*o.results, *o.operands)
            ) or any(map(_is_tile, function.args)):
                _FunctionLowering(
                    ctx, function, target, name, cores, self.bank_offset
                ).run()
