"""`tile-pipeline{stages=N}`: multi-buffering of tile loops.

`tile-to-hw` gives every tile one buffer per loop, so the load of tile `i + 1`
waits until tile `i` is stored: MTE2, V and MTE3 take turns. This pass unrolls a
tile loop by `stages` and schedules the copies of its body in three phases:

    loads of iterations i .. i+N-1   (MTE2)
    computes of i .. i+N-1           (V / M)
    stores of i .. i+N-1             (MTE3)

All loads of one unrolled iteration are alive together, so memory planning gives
each copy its own buffers, and the dataflow sync of `hw-insert-sync` then lets
the load of copy `j + 1` overlap the compute of copy `j`, and the store of copy
`j` overlap the compute of copy `j + 1` and the next iteration's first loads.
Iterations left over (`trips mod stages`) run after the loop as straight-line
copies in the same three phases (prologue-free: the first loads start the
pipeline, the last stores drain it).

Only loops this is safe and simple for are touched: constant bounds, no carried
values, a body of region-free ops, and no GM tensor both loaded (by `tile.load`
or a scalar `memref.load`) and stored in the body (loads move above earlier
stores). A loop of run-time bounds without carried values (a CSR row's
entries, docs/sparse.md) is unrolled after a remainder loop of `max(0,
ceil((ub - lb) / step)) mod stages` trips (`pipeline_split_loop`). When the buffers of `stages` copies
would not fit a memory of the target, fewer stages are used and a remark says so.
A top-level loop, which tile-to-hw splits over the cores in units of its
iterations, keeps at most `ceil(trips / cores) // 2` stages: each core must run
two unrolled units or more for the overlap to pay for coarser units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnitAttr, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from pypto_mlir.diagnostics import emit_remark, op_error
from pypto_mlir.dialects.tile import (
    LoadOp,
    MatmulOp,
    MemorySpace,
    MoveOp,
    StoreOp,
    TileType,
)
from pypto_mlir.passes.index_range import MAX_TRIPS_ATTR, ROW_ENTRIES_ATTR
from pypto_mlir.targets import Target, load_target
from pypto_mlir.targets.resolve import resolve_target

PIPELINE_PROLOGUE_ATTR = "pypto.pipeline_prologue"
"""On `pipeline_split_loop`'s remainder loop, which runs one pipeline with the
unrolled loop after it: memory planning widens the lifetimes of both loops'
tiles over both (passes/memory_plan.py); tile-to-hw drops it."""

SPLIT_STAGES_ATTR = "pypto.pipeline_stages"
"""On a loop tile-to-hw splits over the cores: the stages to unroll each core's
chunk by after the split (`pipeline_split_loop`), so that the split's units stay
single trips."""


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _pipelinable(loop: scf.ForOp, nested: bool = False) -> str | None:
    """Why `loop` cannot be pipelined, or None when it can. With `nested` (a
    loop of run-time bounds) its body may hold loops, which run in the middle
    phase: a CSR row's loops over its entries, after the loads of the row's
    index windows (docs/sparse.md)."""
    body = loop.body.block
    ops = list(body.ops)[:-1]
    if not any(isinstance(op, LoadOp) for op in ops):
        return "it loads no tile"
    carried = set(body.args[1:])
    if any(operand in carried for op in _phases(body)[0] for operand in op.operands):
        return "its loads depend on the values it carries"
    if any(op.regions for op in ops) and not (
        nested and all(isinstance(op, scf.ForOp) for op in ops if op.regions)
    ):
        return "its body has nested regions"
    if any(_moves_outer_l1_tile(op, ops) for op in ops):
        # A matmul's A panel (passes/matmul_nests.py): the copies' moves of it
        # would be one (pure ops, CSE'd), live across copies in L0A.
        return "it moves tiles defined outside it (an A panel kept in l1)"
    for op in ops:
        if not op.results and not isinstance(op, StoreOp):
            return f"'{op.name}' has effects the pass does not model"
    # Scalar reads (CSR offsets and indices, docs/sparse.md) move with the loads.
    every = [nested for op in ops for nested in op.walk()]
    loaded = {op.source for op in every if isinstance(op, LoadOp)} | {
        op.memref for op in every if isinstance(op, memref.LoadOp)
    }
    stored = {op.dest for op in every if isinstance(op, StoreOp)}
    if loaded & stored:
        return "it loads from and stores to the same GM tensor"
    return None


def _moves_outer_l1_tile(op: Operation, ops: Sequence[Operation]) -> bool:
    """Whether `op` moves an L1 tile defined outside the loop body `ops`."""
    if not isinstance(op, MoveOp):
        return False
    source = op.source
    space = source.type.memory_space if isinstance(source.type, TileType) else None
    return space == MemorySpace.L1 and source.owner not in ops


def _phases(body: Block) -> tuple[list[Operation], list[Operation], list[Operation]]:
    """The body's ops split into loads (with the index ops they need), the
    computes, and the stores; each list keeps program order."""
    ops = list(body.ops)[:-1]
    members = set(ops)
    needed: set[Operation] = set()
    for op in reversed(ops):
        if isinstance(op, LoadOp) or op in needed:
            needed.add(op)
            for operand in op.operands:
                if isinstance(operand.owner, Operation) and operand.owner in members:
                    needed.add(operand.owner)
    first = [op for op in ops if op in needed]
    stores = [op for op in ops if isinstance(op, StoreOp)]
    middle = [op for op in ops if op not in needed and not isinstance(op, StoreOp)]
    return first, middle, stores


def _stage_bytes(body: Block, stages: int) -> dict[str, int]:
    """Peak bytes per memory of the tiles live at once in `stages` copies of
    `body` scheduled in phases (each value from its definition to its last use,
    no in-place reuse counted: an upper bound), plus tiles from outside."""
    first, middle, stores = _phases(body)
    order: list[tuple[int, Operation]] = [
        (copy, op)
        for phase in (first, middle, stores)
        for copy in range(stages)
        for op in phase
    ]
    position = {item: n for n, item in enumerate(order)}
    # A matmul with an accumulator accumulates in its buffer: the buffer of the
    # chain's first result lives until the last use of any result of the chain.
    chain: dict[SSAValue, list[SSAValue]] = {}
    root: dict[SSAValue, SSAValue] = {}
    for op in body.ops:
        if isinstance(op, MatmulOp) and op.acc is not None:
            first = root.get(op.acc, op.acc)
            root[op.result] = first
            chain.setdefault(first, [first]).append(op.result)
    intervals: list[tuple[str, int, int, int]] = []
    for (copy, op), n in position.items():
        if isinstance(op, MatmulOp) and op.acc is not None:
            continue  # accumulates in its accumulator's buffer
        for nested in op.walk():  # a nested loop's tiles: live while it runs
            for result in nested.results if nested is not op else ():
                if isinstance(result.type, TileType):
                    space = str(result.type.memory_space)
                    intervals.append((space, result.type.byte_size(), n, n))
        for result in op.results:
            if not isinstance(result.type, TileType):
                continue
            last = max(
                (
                    position[(copy, use.operation)]
                    for member in chain.get(result, [result])
                    for use in member.uses
                    if (copy, use.operation) in position
                ),
                default=n,
            )
            intervals.append(
                (str(result.type.memory_space), result.type.byte_size(), n, last)
            )
    outside: dict[str, int] = {}
    seen: set[SSAValue] = set()
    for op in body.ops:
        for operand in op.operands:
            tile = operand.type
            inside = (
                isinstance(operand.owner, Operation) and operand.owner.parent is body
            )
            if isinstance(tile, TileType) and not inside and operand not in seen:
                seen.add(operand)
                space = str(tile.memory_space)
                outside[space] = outside.get(space, 0) + tile.byte_size()
    # Per memory, the most bytes live at one position: a sweep over the starts
    # and ends of the intervals (an empty interval, ending before it starts, is
    # never live).
    events: dict[str, list[tuple[int, int]]] = {}
    for space, size, start, end in intervals:
        if start <= end:
            events.setdefault(space, []).extend(((start, size), (end + 1, -size)))
    peak: dict[str, int] = dict(outside)
    for space, changes in events.items():
        live = most = 0
        for _, delta in sorted(changes):
            live += delta
            most = max(most, live)
        peak[space] = max(peak.get(space, 0), most + outside.get(space, 0))
    return peak


def _fitting_stages(body: Block, stages: int, target: Target) -> tuple[int, str]:
    """The most stages (<= `stages`) whose buffers fit, and why fewer if so."""
    reason = ""
    while stages > 1:
        for space, size in _stage_bytes(body, stages).items():
            memory = target.memories.get(space)
            if memory is not None and memory.size is not None and size > memory.size:
                reason = (
                    f"{stages} stages need {size} bytes of {space}, "
                    f"target has {memory.size}"
                )
                break
        else:
            return stages, reason
        stages -= 1
    return stages, reason


Clones = list[dict[SSAValue, SSAValue]]
"""Per copy of a loop body: each value of the body -> its copy."""


def _emit_copies(
    rewriter: PatternRewriter,
    body: Block,
    ivs: Sequence[SSAValue],
    point: InsertPoint,
    carried: Sequence[SSAValue] = (),
    clones: Clones | None = None,
) -> list[SSAValue]:
    """Copies of `body` for the induction values `ivs`, in phases, at `point`;
    the first copy gets the `carried` values, each later one what the one
    before yields. Returns what the last copy yields; `clones` gets each copy's
    value map."""
    phases = _phases(body)
    mappings: list[dict[SSAValue, SSAValue]] = [{body.args[0]: iv} for iv in ivs]
    if clones is not None:
        clones.extend(mappings)
    yielded = list(body.last_op.operands) if body.last_op is not None else []
    for phase_index, phase in enumerate(phases):
        for copy, mapping in enumerate(mappings):
            if phase_index == 1:  # loads never read carried values (_pipelinable)
                inputs = carried if copy == 0 else _mapped(yielded, mappings[copy - 1])
                mapping.update(zip(body.args[1:], inputs, strict=True))
            for op in phase:
                clone = op.clone(mapping)
                rewriter.insert(clone, point)
                point = InsertPoint.after(clone)
    if not mappings:
        return list(carried)
    return _mapped(yielded, mappings[-1])


def _mapped(
    values: Sequence[SSAValue], mapping: dict[SSAValue, SSAValue]
) -> list[SSAValue]:
    return [mapping.get(v, v) for v in values]


def _index_constant(
    rewriter: PatternRewriter, value: int, like: SSAValue, point: InsertPoint
) -> SSAValue:
    constant = arith.ConstantOp(IntegerAttr(value, like.type))
    rewriter.insert(constant, point)
    return constant.result


def pipeline_loop(
    loop: scf.ForOp,
    stages: int,
    trips: int,
    clones: Clones | None = None,
    rewriter: PatternRewriter | None = None,
) -> None:
    """Unroll `loop` (constant bounds, `trips` iterations) by `stages` in phases;
    the `trips mod stages` last iterations follow it as straight-line copies.
    `clones` gets the value map of every copy; `rewriter` (that of a pattern)
    is told of every change."""
    clones = [] if clones is None else clones
    rewriter = PatternRewriter(loop) if rewriter is None else rewriter
    lb, step = _constant(loop.lb), _constant(loop.step)
    assert lb is not None and step is not None
    body = loop.body.block
    main = trips // stages * stages
    before = InsertPoint.before(loop)

    def ivs_of(trips: range) -> list[SSAValue]:
        return [
            _index_constant(rewriter, lb + k * step, loop.lb, before) for k in trips
        ]

    if main <= stages:  # at most one iteration: straight-line copies, no loop
        first, rest = ivs_of(range(main)), ivs_of(range(main, trips))
        carried = _emit_copies(rewriter, body, first, before, loop.iter_args, clones)
        results = _emit_copies(rewriter, body, rest, before, carried, clones)
        _replace_loop(rewriter, loop, results)
        return
    new_ub = _index_constant(rewriter, lb + main * step, loop.lb, before)
    new_step = _index_constant(rewriter, step * stages, loop.lb, before)
    rest = ivs_of(range(main, trips))
    new_body = _unrolled_body(rewriter, body, stages, step, clones)
    new_body.last_op.operands = _mapped(  # type: ignore[union-attr]
        body.last_op.operands,  # type: ignore[union-attr]
        clones[-1],
    )
    new_loop = scf.ForOp(loop.lb, new_ub, new_step, loop.iter_args, new_body)
    rewriter.insert(new_loop, InsertPoint.before(loop))
    results = _emit_copies(
        rewriter, body, rest, InsertPoint.after(new_loop), new_loop.results, clones
    )
    _replace_loop(rewriter, loop, results)


def _unrolled_body(
    rewriter: PatternRewriter, body: Block, stages: int, step: int, clones: Clones
) -> Block:
    """A loop body running `stages` copies of `body` in phases, for the
    induction values iv, iv + step, ...; it takes `body`'s carried values and
    yields nothing yet (the caller yields what the last copy does)."""
    new_body = Block(arg_types=[a.type for a in body.args])
    iv = new_body.args[0]
    ivs: list[SSAValue] = [iv]
    for k in range(1, stages):
        offset = arith.ConstantOp(IntegerAttr(k * step, iv.type))
        add = arith.AddiOp(iv, offset.result)
        new_body.add_ops([offset, add])
        ivs.append(add.result)
    new_body.add_op(scf.YieldOp())
    point = InsertPoint.before(new_body.last_op)  # type: ignore[arg-type]
    _emit_copies(rewriter, body, ivs, point, new_body.args[1:], clones)
    return new_body


def pipeline_split_loop(
    loop: scf.ForOp,
    stages: int,
    clones: Clones,
    rewriter: PatternRewriter | None = None,
    any_bounds: bool = False,
) -> None:
    """Unroll by `stages` in phases a loop without carried values whose bounds
    are only known at run time (a core's chunk after tile-to-hw's multi-core
    split). The `trips mod stages` first iterations stay in `loop`, which then
    ends where the unrolled loop starts: they run first, while the pipeline
    fills, rather than after it drains. `clones` gets every copy's value map.
    A core's chunk is a whole number of steps, never empty backwards; with
    `any_bounds` (a CSR row's entries) the trips are `max(0, ceil((ub - lb) /
    step))`."""
    rewriter = PatternRewriter(loop) if rewriter is None else rewriter
    step = _constant(loop.step)
    assert step is not None and not loop.iter_args
    before = InsertPoint.before(loop)

    def emit(op: Operation) -> SSAValue:
        op.location = loop.location
        rewriter.insert(op, before)
        return op.results[0]

    span = emit(arith.SubiOp(loop.ub, loop.lb))
    if any_bounds:
        zero = _index_constant(rewriter, 0, loop.lb, before)
        backwards = emit(arith.CmpiOp(span, zero, "slt"))
        span = emit(arith.SelectOp(backwards, zero, span))
        if step > 1:
            round_up = _index_constant(rewriter, step - 1, loop.lb, before)
            span = emit(arith.AddiOp(span, round_up))
    trips = emit(arith.DivUIOp(span, loop.step))
    stages_value = _index_constant(rewriter, stages, loop.lb, before)
    rest = emit(arith.RemUIOp(trips, stages_value))
    main_lb = emit(arith.AddiOp(loop.lb, emit(arith.MuliOp(rest, loop.step))))
    new_body = _unrolled_body(rewriter, loop.body.block, stages, step, clones)
    new_step = _index_constant(rewriter, step * stages, loop.lb, before)
    new_loop = scf.ForOp(main_lb, loop.ub, new_step, [], new_body)
    new_loop.location = loop.location
    rewriter.insert(new_loop, InsertPoint.after(loop))
    loop.operands[1] = main_lb
    if ROW_ENTRIES_ATTR in loop.attributes:  # still one row's entries
        new_loop.attributes[ROW_ENTRIES_ATTR] = UnitAttr()
    if isinstance(most := loop.attributes.get(MAX_TRIPS_ATTR), IntegerAttr):
        new_loop.attributes[MAX_TRIPS_ATTR] = IntegerAttr(
            most.value.data // stages, i64
        )
        loop.attributes[MAX_TRIPS_ATTR] = IntegerAttr(
            min(most.value.data, stages - 1), i64
        )
    # One pipeline: memory planning keeps the tiles of both loops apart, so
    # that the first unrolled loads need not wait for the remainder's compute.
    loop.attributes[PIPELINE_PROLOGUE_ATTR] = UnitAttr()
    rewriter.notify_op_modified(loop)


def _replace_loop(
    rewriter: PatternRewriter, loop: scf.ForOp, results: Sequence[SSAValue]
) -> None:
    """Erase `loop`, its results replaced by `results` (their names stay)."""
    for old, new in zip(loop.results, results, strict=True):
        rewriter.replace_all_uses_with(old, new)
    rewriter.erase(loop)


def _trips(loop: scf.ForOp) -> int | None:
    lb, ub, step = _constant(loop.lb), _constant(loop.ub), _constant(loop.step)
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))


def _split_cores(loop: scf.ForOp, cores: int) -> int:
    """The cores tile-to-hw may spread `loop`'s iterations over: all of them for
    a top-level loop, the cores a top-level loop of fewer trips leaves per
    iteration for a loop in its body (the grid of tile-to-hw), else 1 (also
    for a loop that carries values, which tile-to-hw never splits)."""
    if loop.iter_args:
        return 1
    parent = loop.parent_op()
    if isinstance(parent, func.FuncOp):
        return cores
    if isinstance(parent, scf.ForOp) and isinstance(parent.parent_op(), func.FuncOp):
        outer = _trips(parent)
        if outer is not None and 0 < outer < cores:
            return cores // outer
    return 1


def _target_of(module: ModuleOp, name: str) -> Target:
    name = resolve_target(module, name or None)
    try:
        return load_target(name)
    except Exception as error:  # the loader names the file and the bad key
        raise op_error(module, f"cannot load target '{name}': {error}") from error


@dataclass(frozen=True)
class PipelineLoop(RewritePattern):
    """Unroll one tile loop of a function by `stages` in phases (see the module
    doc), or mark it for tile-to-hw to unroll each core's chunk of it."""

    stages: int
    target: Target
    cores: int
    """The cores tile-to-hw splits top-level loops over."""
    runtime_bounds: bool = True
    """Whether loops of run-time bounds are pipelined (`_runtime_bounds`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, loop: scf.ForOp, rewriter: PatternRewriter) -> None:
        if not _in_function(loop):
            return
        bounds = (_constant(loop.lb), _constant(loop.ub), _constant(loop.step))
        if None in bounds:
            if self.runtime_bounds:
                self._runtime_bounds(loop, rewriter)
            return
        lb, ub, step = bounds
        assert lb is not None and ub is not None and step is not None
        if step <= 0 or _pipelinable(loop) is not None:
            return
        trips = max(0, -(-(ub - lb) // step))
        stages = min(self.stages, trips)
        cores = _split_cores(loop, self.cores)
        if cores > 1:
            # tile-to-hw splits it over the cores and unrolls each core's
            # chunk (pipeline_split_loop): the split keeps single trips as
            # its units; a chunk of one trip has nothing to overlap.
            stages = min(stages, -(-trips // cores))
        if stages < 2:
            return
        fitting, reason = _fitting_stages(loop.body.block, stages, self.target)
        if fitting < stages:
            emit_remark(
                loop,
                f"tile-pipeline: {fitting} stage(s) instead of {stages}: {reason}",
            )
        if fitting >= 2 and cores > 1:
            loop.attributes[SPLIT_STAGES_ATTR] = IntegerAttr(fitting, i64)
            rewriter.notify_op_modified(loop)
        elif fitting >= 2:
            pipeline_loop(loop, fitting, trips, rewriter=rewriter)

    def _runtime_bounds(self, loop: scf.ForOp, rewriter: PatternRewriter) -> None:
        """A loop whose bounds are only known at run time (a CSR row's entries,
        docs/sparse.md): unrolled by the stages that fit, after a remainder
        loop of `trips mod stages` iterations, as tile-to-hw does a core's
        chunk (`pipeline_split_loop`)."""
        step = _constant(loop.step)
        if (
            PIPELINE_PROLOGUE_ATTR in loop.attributes
            or step is None
            or step <= 0
            or _pipelinable(loop, nested=True) is not None
            or any(
                isinstance(r.type, TileType) and r.type.num_dynamic_valid()
                for op in loop.body.block.ops
                for r in op.results
            )
        ):
            # Tails of a dynamic shape (tv-to-tile's loops to a memref.dim):
            # counts tile-to-hw cannot make static; left as they were.
            return
        if loop.iter_args:
            # Measured: unrolling a row's accumulation (sparse softmax's max
            # and sum, spmm's entries) costs more in remainder loops and
            # flags than its overlap gains (docs/tile_pipeline.md).
            emit_remark(
                loop,
                "tile-pipeline: not pipelined: it carries values and its bounds "
                "are only known at run time",
            )
            return
        fitting, reason = _fitting_stages(loop.body.block, self.stages, self.target)
        if fitting < 2:
            emit_remark(loop, f"tile-pipeline: not pipelined: {reason}")
            return
        emit_remark(
            loop,
            f"tile-pipeline: {fitting} stages over a loop of run-time bounds "
            f"(unrolled after a remainder loop of trips mod {fitting})"
            + (
                f"; fewer than {self.stages}: {reason}" if fitting < self.stages else ""
            ),
        )
        pipeline_split_loop(loop, fitting, [], rewriter, any_bounds=True)


def _in_function(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent is not None


@dataclass(frozen=True)
class TilePipelinePass(ModulePass):
    """Multi-buffer tile loops: unroll by `stages`, loads first, stores last.

    Each copy of the body gets its own buffers, so the loads of the next copy
    and the stores of the previous one overlap the compute of the current one.
    Falls back to fewer stages, with a remark, when the buffers do not fit.
    """

    name = "tile-pipeline"

    stages: int = 2
    """Copies of a loop body in flight (buffers per tile); 1 leaves loops alone."""

    target: str = ""
    """Target name or TOML path; empty: the module's pypto.target, else ascend910b."""

    max_cores: int = 0
    """The cores tile-to-hw splits top-level loops over; 0: all of the target's."""

    runtime_bounds: bool = True
    """Also pipeline loops whose bounds are only known at run time (a gather
    at indices read from GM, docs/sparse.md); false: leave them as they are."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.stages < 1:
            raise op_error(op, f"stages must be >= 1, got {self.stages}")
        if self.max_cores < 0:
            raise op_error(op, f"max_cores must be >= 0, got {self.max_cores}")
        if self.stages == 1:
            return
        target = _target_of(op, self.target)
        cores = min(target.cores, self.max_cores or target.cores)
        pattern = PipelineLoop(self.stages, target, cores, self.runtime_bounds)
        # Each loop once, as found: the loops a rewrite makes are not visited.
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
