"""`tile-to-hw{target=...}`: from tiles to buffers and instructions.

For every function that computes with tiles:

1. **Static extents.** Every tile must fit the target, and every valid extent
   must be a constant by now (run `tile-peel-tails` first, or a loop range that
   divides by its step); a dynamic one is an error naming the op.
2. **Multi-core** (`multicore_split`): the outermost parallel tile loop at the
   top of the function is split over the target's cores in contiguous,
   balanced chunks of iterations, and the function gets
   `ascend_hw.block_dim = N`.
3. **Memory planning** (`memory_plan`): every tile value gets an `ascend_hw.alloc`
   at the function entry, at an aligned offset of its memory, sharing space
   with values whose lifetimes do not overlap.
4. **Instruction selection** (`hw_isel`): every tile op becomes DMA, cube, fixpipe
   and vector instructions on those buffers, one rewrite pattern per op family;
   loops stop carrying tiles (their buffer is fixed). The result has no synchronisation: `hw-insert-sync` adds it;
   executed in program order with every instruction completing before the
   next, it computes what the tile IR computes.

The module gets `pypto.target`. docs/tile_to_hw.md describes the lowering of
each op and the numerical tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Operation,
    OpResult,
    SSAValue,
)
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import VerifyException

from pypto_mlir.diagnostics import op_error
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
    lower_tile_ops,
    unary,
)
from pypto_mlir.passes.index_range import Range, index_ranges
from pypto_mlir.passes.memory_plan import MemoryPlan, ScratchRequest, plan_memory
from pypto_mlir.passes.multicore_split import distribute
from pypto_mlir.passes.tile_pipeline import (
    PIPELINE_PROLOGUE_ATTR,
    SPLIT_STAGES_ATTR,
    Clones,
    pipeline_loop,
    pipeline_split_loop,
)
from pypto_mlir.targets import Target, load_target
from pypto_mlir.targets.resolve import TARGET_ATTR, resolve_target

BLOCK_DIM_ATTR = "ascend_hw.block_dim"


def _is_tile(value: SSAValue) -> bool:
    return isinstance(value.type, TileType)


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
    """The driver of one function's lowering.

    Hand-written, not a rewrite pattern: each step decides for the whole
    function before any op is rewritten (the extents of every tile, the core
    split, the buffers of every tile and scratch from all lifetimes); only
    instruction selection then goes op by op (`hw_isel.lower_tile_ops`), and
    the loops that carry tiles are rebuilt once every tile op is lowered."""

    def __init__(
        self,
        ctx: Context,
        function: func.FuncOp,
        target: Target,
        target_name: str,
        cores: int,
        bank_offset: bool = True,
        matmul_grid: bool = True,
        block_reduce: bool = True,
    ):
        self.matmul_grid = matmul_grid
        self.block_reduce = block_reduce
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
            function,
            self.cores,
            self.target.memories["gm"].alignment,
            self.matmul_grid,
        )
        function.attributes[BLOCK_DIM_ATTR] = IntegerAttr(block_dim, i64)
        if _pipeline_split_loops(function, valid):
            values = tile_values(function)
        selector = Selector(self.target, valid, self.block_reduce)
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
        lower_tile_ops(function.body, selector, emitter, buffer, scratch)
        PatternRewriteWalker(LowerScalarLoad(), apply_recursively=False).rewrite_region(
            function.body
        )
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


class LowerScalarLoad(RewritePattern):
    """`memref.load` of a GM memref (CSR offsets and column indices, sparse
    values: docs/sparse.md) becomes `ascend_hw.load_scalar`, a read on S."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        memref_type = op.memref.type
        assert isinstance(memref_type, MemRefType)
        element = memref_type.element_type
        if element not in hw.SCALAR_LOAD_TYPES:
            raise op_error(
                op,
                f"tile-to-hw reads scalars of {hw.names(hw.SCALAR_LOAD_TYPES)}, "
                f"not {element} from {memref_type}",
            )
        read = hw.LoadScalarOp(op.memref, op.indices, op.res.type)
        read.location = op.location
        rewriter.replace(op, read)


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

    matmul_grid: bool = True
    """Split matmul block rows that the cores do not divide evenly over a grid
    of rows and columns when the busiest core gets fewer blocks
    (multicore_split.core_split); false: by rows alone."""

    block_reduce: bool = True
    """Reduce rows of whole 32-byte blocks to their maxima (minima) 8 rows a
    vector repeat (`vblock_reduce_max/min`, hw_isel/reductions.py) instead of
    a `vreduce` repeat per row."""

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
        # A declaration (no body) has nothing to lower.
        functions = [
            f for f in op.walk() if isinstance(f, func.FuncOp) and not f.is_declaration
        ]
        for function in functions:
            if any(
                _is_tile(v) for o in function.walk() for v in (*o.results, *o.operands)
            ) or any(map(_is_tile, function.args)):
                _FunctionLowering(
                    ctx,
                    function,
                    target,
                    name,
                    cores,
                    self.bank_offset,
                    self.matmul_grid,
                    self.block_reduce,
                ).run()
