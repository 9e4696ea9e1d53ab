"""`tv-to-tile{target=... tile-sizes=... matmul-tile-sizes=...}`: tile `tv` functions.

Bufferizes every function on `!tv.tensor` values into destination-passing style
over GM memrefs and turns its ops into loop nests of `tile` ops (docs/tiling.md):

    func.func @f(%x: !tv.tensor<MxNxf16>) -> !tv.tensor<MxNxf16>
    becomes
    func.func @f(%x: memref<MxNxf16>, %out: memref<MxNxf16>)

- Calling convention: each tensor argument becomes a memref of its shape (`?`
  dims stay `?`, read with `memref.dim`); each tensor result becomes a trailing
  memref argument the function writes (in result order); scalar arguments and
  results stay as they are.
- Ops are fused into groups (passes/tv_fusion.py), one loop nest each
  (passes/vector_nests.py, passes/matmul_nests.py). A value computed by one nest and read by another goes
  through GM: its output memref when it is also a function result, otherwise a
  `memref.alloc` temporary (deallocated before the return).
- `tv.view` becomes `memref.subview`; `tv.dim` becomes the size it names.
- `tv.reshape` of a value contiguous in GM becomes a view of the same bytes
  (`memref.collapse_shape` to one dim, then `memref.expand_shape`): no copy. A
  reshape of a strided GM view is refused with a diagnostic (no copy is made).
- Tile sizes come from `tile-sizes`/`matmul-tile-sizes` or from the target
  (passes/tiling_model.py, passes/matmul_model.py); every nest gets a remark
  with its sizes, and the module gets `pypto.target`.

The module is over 1,000 lines because it is the one driver that needs the whole
function: which groups share a nest, how each vector nest is tiled, the GM
buffers and views, and the order the nests go in. How a matmul group is tiled
(and the choices that compare a fused nest with a split one: epilogues, row
fusion, prologues) is passes/matmul_lowering.py; the nests themselves, the
tiling models and the fusion analysis live in their own modules
(docs/architecture.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from pypto_mlir.diagnostics import emit_remark, op_error
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects.tile import (
    TARGET_ATTR,
    MemorySpace,
    element_bytes,
)
from pypto_mlir.targets import Target

from .attention_nests import (
    AttentionGroup,
    AttentionNest,
    AttentionOptions,
    attention_remark,
    fuse_attention,
)
from .bufferize import finish_function, memref_type
from .hw_isel import PhysicalExtents, Selector
from .located_builder import LocatedBuilder
from .matmul_fusion import fuse_matmul_prologues, fuse_matmul_rows
from .matmul_lowering import MatmulLowering, MatmulOptions
from .nest_builder import (
    GmBuffers,
    discard_block,
    i64_array_attr,
    memref_strides,
    reassociation_attr,
)
from .set_target import required_target
from .sparse_outline import calls_outlined, inline_outlined
from .tiling_candidates import record_request
from .tiling_model import (
    BUFFERING,
    LiveProfile,
    LiveTerm,
    TilingError,
    VectorRequest,
    VectorTiling,
    auto_vector_tiling,
    balanced_tiling,
    column_unit,
    core_tiles,
    explicit_vector_tiling,
)
from .topk_overlap import overlap_mask_rows
from .tv_fusion import (
    ExtentAnalysis,
    FusionAnalysis,
    Group,
    GroupKind,
    index_constant,
    is_tensor,
    static_extent,
    tensor_type,
    tensor_users,
)
from .tv_schedule import apply_groups, balance_cores, group_balance
from .vector_nests import VectorNest

PROBE_SIZES = (3, 5)
"""Tile sizes of the nest a group is measured with (distinct, > 1)."""


@dataclass(frozen=True)
class TvToTilePass(ModulePass):
    """Tile tensor_view functions into loop nests of tile ops over GM memrefs.

    Sizes are chosen from the target unless given: `tile-sizes=ROWS,COLS` for
    the UB tiles of elementwise, reduction, softmax and transpose nests (a 1-d
    nest uses COLS); `matmul-tile-sizes=M0,N0,K0` (L0 base block, L1 block the
    same), `M1,N1,M0,N0,K0` (L1 block of base blocks) or `M1,N1,K1,M0,N0,K0`
    (L1 chunks K1 deep, each feeding K1/K0 cube steps).
    """

    name = "tv-to-tile"

    target: str | None = None
    """A builtin target name or a TOML file; default: the module's pypto.target."""

    tile_sizes: tuple[int, ...] = ()
    """ROWS,COLS of vector-nest tiles; empty: chosen from the target."""

    matmul_tile_sizes: tuple[int, ...] = ()
    """M0,N0,K0, M1,N1,M0,N0,K0 or M1,N1,K1,M0,N0,K0 of matmul nests; empty:
    chosen from the target."""

    nest_tile_sizes: tuple[int, ...] = ()
    """NEST,ROWS,COLS triples: the tile sizes of vector nest NEST alone (0-based,
    in the order this pass tiles the module's vector nests), as pypto-tune sets
    them per nest; they take precedence over tile-sizes for that nest."""

    max_cores: int = 0
    """The cores tile-to-hw spreads the nests over (0: all of the target's);
    the matmul model sizes blocks for them."""

    matmul_panels: bool = True
    """Let the matmul model keep A panels in L1 across a core's blocks of one
    block row (passes/matmul_model.py); false: A is loaded per block."""

    matmul_split_k: bool = True
    """Let the matmul model split K over the cores when M x N has too few
    blocks (a matmul without epilogue or batch; f32 partial sums in a GM
    workspace, added by a combine nest); false: never."""

    matmul_unroll_k: bool = True
    """Unroll the K chunks of a matmul block (static K, 2 to 32 chunks, auto
    tiles without a panel or K split), each chunk loaded one ahead: no loop
    entry or exit inside a block, where the sync waits for all of a loop's L0
    moves before the next load; false: a loop over the chunks."""

    matmul_l2_order: bool = True
    """Let the matmul model stagger the K chunks of the blocks (block (i, j)
    starts at chunk (i + j) mod chunks) so that cores sharing an operand panel
    hit it in the L2 (targets with an L2, static K of whole chunks); false: every
    block runs its K chunks in order."""

    attention_fusion: bool = True
    """Fuse softmax(q @ k.T ...) @ v into one flash-attention nest
    (passes/attention_nests.py); false: three nests, the scores in GM."""

    late_invariants: bool = True
    """In a vector nest whose loop each core runs at most once, load the
    loop-invariant tiles (layernorm's gamma and beta) in the loop after the
    tiles that vary, so that their GM latency overlaps the first tile's vector
    work; false: before the loop."""

    attention_cube_sum: bool = True
    """Let the attention nest take the probabilities' row sums on the cube
    (times a block of ones) when its estimate says so; false: vector row sums."""

    attention_scale_multiply: bool = True
    """Divide the attention scores by a power-of-two scale as a multiply by its
    exact reciprocal (the same values); false: a division."""

    attention_scale_fold: bool = True
    """Fold another positive constant attention scale into the exponent's f32
    argument (no f16 division); false: the scaled scores rounded as tv does."""

    attention_key_split: bool = True
    """When the attention nest's query blocks are fewer than the cores, let its
    estimate split each block's keys into ranges run on cores of their own,
    their partial results combined after (flash-decoding); false: never."""

    attention_f32_max: bool = True
    """Take the attention nest's row maxima from the scores in f32 (the copy
    the exponent reads, the same values) when an f32 row is one vector
    repeat (reduced 8 rows a repeat by blocks); false: from the f16 scores,
    a repeat per row."""

    attention_prefetch: bool = True
    """Load the mask (any tensor the ops between the attention matmuls read
    per key block) of a group of key blocks with their K and V blocks, so
    that MTE2 loads it while the vector unit works; false: right before each
    block's softmax, the vector unit waiting for it."""

    epilogue_fusion: bool = True
    """Compute a matmul's elementwise epilogue in UB on each block before the
    one store; false: the result goes to GM and the epilogue is a nest of its
    own (after a sync_all)."""

    row_fusion: bool = True
    """Reduce a matmul result along its rows (reductions, softmax) in the
    matmul's nest, on blocks spanning whole rows (passes/matmul_fusion.py),
    where estimated faster; false: the result goes to GM and a row nest reads
    it back."""

    prologue_fusion: bool = True
    """Compute a matmul operand's elementwise ops in UB on each operand block
    and move it UB -> L1 (passes/matmul_fusion.py); false: the operand goes
    through GM, computed by a nest of its own."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target_name, target = required_target(op, self.target, "tv-to-tile")
        if self.tile_sizes and (len(self.tile_sizes) != 2 or min(self.tile_sizes) <= 0):
            raise op_error(
                op,
                "tv-to-tile: tile-sizes takes two positive numbers ROWS,COLS, got "
                f"{','.join(map(str, self.tile_sizes))}",
            )
        if self.max_cores < 0:
            raise op_error(
                op, f"tv-to-tile: max-cores must be >= 0, got {self.max_cores}"
            )
        if self.matmul_tile_sizes and len(self.matmul_tile_sizes) not in (3, 5, 6):
            raise op_error(
                op,
                "tv-to-tile: matmul-tile-sizes takes M0,N0,K0, M1,N1,M0,N0,K0 or "
                f"M1,N1,K1,M0,N0,K0, got {','.join(map(str, self.matmul_tile_sizes))}",
            )
        per_nest = _nest_sizes(op, self.nest_tile_sizes)
        nests = NestCount()
        for function in list(op.walk()):
            if (
                isinstance(function, func.FuncOp)
                and _uses_tensors(function)
                and not calls_outlined(function)
            ):
                FunctionLowering(function, target, self, per_nest, nests).run()
        beyond = sorted(n for n in per_nest if n >= nests.vector)
        if beyond:
            raise op_error(
                op,
                f"tv-to-tile: nest-tile-sizes names vector nest {beyond[0]} but the "
                f"module has {nests.vector} vector nest(s)",
            )
        inline_outlined(op)  # dense ops of sparse functions (passes/sparse_outline.py)
        overlap_mask_rows(op)  # top-k mask rows into the flash nest (topk_overlap.py)
        op.attributes[TARGET_ATTR] = StringAttr(target_name)


@dataclass
class NestCount:
    """The vector nests tiled so far in the module: the next one's number in
    `nest-tile-sizes`."""

    vector: int = 0


def _nest_sizes(op: ModuleOp, flat: Sequence[int]) -> dict[int, tuple[int, int]]:
    """`nest-tile-sizes` as {nest: (ROWS, COLS)}, checked."""
    shown = ",".join(map(str, flat))
    if len(flat) % 3 or any(v < 0 for v in flat[::3]):
        raise op_error(
            op,
            "tv-to-tile: nest-tile-sizes takes NEST,ROWS,COLS triples (NEST >= 0), "
            f"got {shown}",
        )
    sizes: dict[int, tuple[int, int]] = {}
    for nest, rows, cols in zip(flat[::3], flat[1::3], flat[2::3], strict=True):
        if rows <= 0 or cols <= 0 or nest in sizes:
            raise op_error(
                op,
                "tv-to-tile: nest-tile-sizes takes positive ROWS,COLS, each nest "
                f"once, got {shown}",
            )
        sizes[nest] = (rows, cols)
    return sizes


def _uses_tensors(function: func.FuncOp) -> bool:
    types = [*function.function_type.inputs.data, *function.function_type.outputs.data]
    if any(isinstance(t, tv.TensorViewType) for t in types):
        return True
    return any(
        isinstance(r.type, tv.TensorViewType)
        for op in function.walk()
        for r in op.results
    )


class FunctionLowering:
    """Tiles one function (see the module doc)."""

    def __init__(
        self,
        function: func.FuncOp,
        target: Target,
        options: TvToTilePass,
        nest_sizes: dict[int, tuple[int, int]] | None = None,
        nests: NestCount | None = None,
    ):
        if not function.body.blocks:
            raise op_error(function, "tv-to-tile cannot tile a function declaration")
        self.function = function
        self.target = target
        self.options = options
        self.nest_sizes = nest_sizes or {}
        """`nest-tile-sizes`, by vector nest number."""
        self.nests = nests or NestCount()
        self.block = function.body.block
        self.extents = ExtentAnalysis()
        self.gm = GmBuffers()
        self.allocs: list[SSAValue] = []
        self._profiles: dict[tuple[int, bool, bool], tuple[Group, LiveProfile]] = {}
        """Keyed by the group's id; the group is kept so its id is not reused by a
        later group (a throwaway copy nest's) while the cache lives."""
        self._selector = Selector(target, PhysicalExtents())
        self.sum_lanes = target.vector.repeat_bytes // 2
        """f16 lanes of a repeat: a vreduce sums them in f32 (tile-to-hw)."""
        self.matmuls = MatmulLowering(
            self,
            MatmulOptions(
                matmul_tile_sizes=options.matmul_tile_sizes,
                tile_sizes=options.tile_sizes,
                max_cores=options.max_cores,
                matmul_panels=options.matmul_panels,
                matmul_split_k=options.matmul_split_k,
                matmul_unroll_k=options.matmul_unroll_k,
                matmul_l2_order=options.matmul_l2_order,
                epilogue_fusion=options.epilogue_fusion,
            ),
        )

    def run(self) -> None:
        self._check()
        self._fold_transposes_into_matmuls()
        self._erase_dead_ops()
        return_op = self.block.last_op
        assert isinstance(return_op, func.ReturnOp)
        outputs = self._signature(return_op)
        ops = [op for op in self.block.ops if op.dialect_name() == "tv"]
        for op in ops:
            self.extents.visit(op)
        analysis = FusionAnalysis(ops, self.extents)
        apply_groups(analysis)  # the fused groups tv-schedule chose, if it ran
        if self.options.attention_fusion:
            cores = self.options.max_cores or self.target.cores
            fuse_attention(
                analysis,
                self.target,
                min(cores, self.target.cores),
                AttentionOptions(
                    self.options.attention_cube_sum,
                    self.options.attention_scale_multiply,
                    self.options.attention_scale_fold,
                    self.options.attention_key_split,
                    self.options.attention_f32_max,
                    self.options.attention_prefetch,
                ),
            )
        if self.options.row_fusion and self.options.epilogue_fusion:
            for decision in fuse_matmul_rows(analysis):
                emit_remark(decision.op, decision.text)
        if self.options.prologue_fusion:
            for decision in fuse_matmul_prologues(analysis, self.target):
                emit_remark(decision.op, decision.text)
        self._plan_buffers(analysis, outputs, return_op)
        for op in ops:
            if isinstance(op, tv.DimOp):
                self._dim(op)
        # Scalars are computed in the entry block before the return, so every nest
        # can go there, in an order where each reads what earlier ones wrote.
        end = LocatedBuilder(InsertPoint.before(return_op))
        for item in _schedule(ops, analysis):
            with end.located(
                item.location if isinstance(item, _GM_VIEWS) else item.root.location
            ):
                if isinstance(item, tv.ViewOp):
                    self._view(item, end)
                elif isinstance(item, tv.ReshapeOp):
                    self._reshape(item, end)
                else:
                    self.emit_group(item, end)
        self._copy_returned_gm_values(analysis, outputs, return_op)
        for buffer in self.allocs:
            LocatedBuilder(InsertPoint.before(return_op)).insert(
                memref.DeallocOp.get(buffer)
            )
        self._finish(ops, return_op, outputs)

    # Checks ---------------------------------------------------------------------------

    def _check(self) -> None:
        for op in self.function.walk():
            if op is self.function:
                continue
            tensors = [v for v in (*op.operands, *op.results) if is_tensor(v)]
            if not tensors:
                continue
            if isinstance(op, tv.SPARSE_OPS):
                raise op_error(
                    op,
                    f"tv-to-tile cannot lower '{op.name}': run tv-sparse-to-tile "
                    "first (docs/sparse.md)",
                )
            for value in tensors:
                if tensor_type(value).is_sparse:
                    raise op_error(
                        op,
                        f"tv-to-tile does not tile sparse tensors ({value.type}); run "
                        "tv-sparse-to-tile first",
                    )
            if op.parent_block() is not self.block:
                raise op_error(
                    op, "tv-to-tile tiles tensors only at the top level of a function"
                )
            if op.dialect_name() != "tv" and not isinstance(op, func.ReturnOp):
                raise op_error(op, f"tv-to-tile cannot lower '{op.name}' on tensors")
        for arg in self.block.args:
            if is_tensor(arg) and tensor_type(arg).is_sparse:
                raise op_error(
                    self.function,
                    f"tv-to-tile does not tile sparse tensors ({arg.type}); run "
                    "tv-sparse-to-tile first",
                )

    def _fold_transposes_into_matmuls(self) -> None:
        """A matmul operand transposed in its last two dims becomes the matmul's
        transpose flag (as tv's canonicalization does; in place, so the op keeps
        its location), so that the cube reads it as stored instead of through a
        transposed copy in GM. The cube moves only 16-bit operands transposed
        into L0 (`tile.move` transpose): an f32 or i8 operand with a flag is
        transposed in UB by a nest of its own (a `tv.transpose` into GM)."""
        for op in list(self.block.ops):
            if not isinstance(op, tv.MatmulOp):
                continue
            if element_bytes(tensor_type(op.lhs).element_type) != 2:
                self._unfold_transposes(op)
                continue
            for index, flag in ((0, "transpose_a"), (1, "transpose_b")):
                source = op.operands[index].owner
                while isinstance(source, tv.TransposeOp) and _swaps_last_two(
                    source.permutation.get_values()
                ):
                    op.operands[index] = source.input
                    if flag in op.properties:
                        del op.properties[flag]
                    else:
                        op.properties[flag] = UnitAttr()
                    source = op.operands[index].owner

    def _unfold_transposes(self, op: tv.MatmulOp) -> None:
        """Replace `op`'s transpose flags by `tv.transpose` ops of its operands."""
        for index, flag in ((0, "transpose_a"), (1, "transpose_b")):
            if flag not in op.properties:
                continue
            rank = tensor_type(op.operands[index]).get_num_dims()
            permutation = [*range(rank - 2), rank - 1, rank - 2]
            transpose = tv.TransposeOp(op.operands[index], permutation)
            transpose.location = op.location
            self.block.insert_op_before(transpose, op)
            op.operands[index] = transpose.result
            del op.properties[flag]

    def _erase_dead_ops(self) -> None:
        for op in reversed(list(self.block.ops)):
            if op.dialect_name() == "tv" and all(not r.uses for r in op.results):
                op.detach()
                op.erase()

    # Signature ------------------------------------------------------------------------

    def _signature(self, return_op: func.ReturnOp) -> list[SSAValue | None]:
        """New memref arguments for tensor arguments and results; returns, per
        return operand, its output memref (None for a scalar result)."""
        first = self.block.first_op
        for arg in list(self.block.args):
            if not is_tensor(arg):
                continue
            arg_type = tensor_type(arg)
            buffer = self.block.insert_arg(memref_type(arg_type), arg.index + 1)
            buffer.name_hint = arg.name_hint
            dynamic: list[SSAValue] = []
            for dim, size in enumerate(arg_type.get_shape()):
                if size == DYNAMIC_INDEX:
                    index = LocatedBuilder(InsertPoint.before(first)).value(
                        index_constant(dim)
                    )
                    dynamic.append(
                        LocatedBuilder(InsertPoint.before(first)).value(
                            memref.DimOp(buffer, index)
                        )
                    )
            self.extents.set_argument(arg, dynamic)
            self.gm.source[arg] = buffer
        outputs: list[SSAValue | None] = []
        count = sum(is_tensor(v) for v in return_op.arguments)
        for value in return_op.arguments:
            if is_tensor(value):
                buffer = self.block.insert_arg(
                    memref_type(tensor_type(value)), len(self.block.args)
                )
                buffer.name_hint = "out" if count == 1 else f"out{len(outputs)}"
                outputs.append(buffer)
            else:
                outputs.append(None)
        return outputs

    def _plan_buffers(
        self,
        analysis: FusionAnalysis,
        outputs: Sequence[SSAValue | None],
        return_op: func.ReturnOp,
    ) -> None:
        """The GM memrefs each group output is stored to (and loaded from)."""
        for group in analysis.groups:
            for value in group.outputs:
                targets = [
                    buffer
                    for operand, buffer in zip(
                        return_op.arguments, outputs, strict=True
                    )
                    if operand is value and buffer is not None
                ]
                read_elsewhere = any(
                    analysis.group_of.get(u) is not group for u in tensor_users(value)
                )
                self.gm.targets[value] = targets
                if read_elsewhere:
                    self.gm.source[value] = targets[0] if targets else value

    def _temporary(self, value: SSAValue, cursor: LocatedBuilder) -> SSAValue:
        """A GM temporary for `value` (allocated before its nest)."""
        extents = self.extents.of(value)
        dynamic = [e for e in extents if isinstance(e, SSAValue)]
        buffer = cursor.value(
            memref.AllocOp(dynamic, [], memref_type(tensor_type(value)))
        )
        self.allocs.append(buffer)
        return buffer

    # Views and dims -------------------------------------------------------------------

    def _view(self, op: tv.ViewOp, cursor: LocatedBuilder) -> None:
        """`tv.view` of a GM value: a strided `memref.subview` of its buffer."""
        source = self.gm.source[op.source]
        source_type = cast(MemRefType[Attribute], source.type)
        strides = memref_strides(source_type)
        offsets = op.mixed_offsets()
        view_strides = op.mixed_strides()
        if isinstance(source_type.layout, StridedLayoutAttr):
            offset = source_type.layout.get_offset()
        else:
            offset = 0
        for start, stride in zip(offsets, strides, strict=True):
            if offset is None or stride is None or not isinstance(start, int):
                offset = None
                break
            offset += start * stride
        kept_strides: list[int | None] = []
        for stride, step, drop in zip(
            strides, view_strides, op.dropped_dims(), strict=True
        ):
            if drop:
                continue
            kept_strides.append(
                stride * step if stride is not None and isinstance(step, int) else None
            )
        result_shape = tensor_type(op.result).get_shape()
        result_type = MemRefType(
            source_type.get_element_type(),
            result_shape,
            StridedLayoutAttr(kept_strides, offset),
        )
        subview = memref.SubviewOp.get(
            source, offsets, op.mixed_sizes(), view_strides, result_type
        )
        self.gm.source[op.result] = cursor.value(subview)

    def _reshape(self, op: tv.ReshapeOp, cursor: LocatedBuilder) -> None:
        """`tv.reshape` of a contiguous GM value: the same bytes seen with the
        result's shape (collapsed to one dim, then expanded), no copy."""
        source = self.gm.source[op.input]
        source_type = cast(MemRefType[Attribute], source.type)
        shape = source_type.get_shape()
        result_shape = tensor_type(op.result).get_shape()
        offset = (
            source_type.layout.get_offset()
            if isinstance(source_type.layout, StridedLayoutAttr)
            else 0
        )
        if memref_strides(source_type) != _row_major_strides(shape) or offset is None:
            raise op_error(
                op,
                f"tv-to-tile reshapes only tensors contiguous in GM (no copy), but "
                f"the operand is the strided {source_type}",
            )
        if not shape or not result_shape:
            raise op_error(op, "tv-to-tile does not reshape rank-0 tensors")
        element_type = source_type.get_element_type()

        def layout(extents: Sequence[int]) -> Attribute:
            if not offset:
                return NoneAttr()
            return StridedLayoutAttr(_row_major_strides(extents), offset)

        count = [math.prod(shape)]
        flat = source
        if len(shape) > 1:
            collapse = memref.CollapseShapeOp.create(
                operands=[source],
                result_types=[MemRefType(element_type, count, layout(count))],
                properties={
                    "reassociation": reassociation_attr([list(range(len(shape)))])
                },
            )
            flat = cursor.value(collapse)
        if len(result_shape) == 1:
            self.gm.source[op.result] = flat
            return
        expand = memref.ExpandShapeOp.create(
            operands=[flat],
            result_types=[MemRefType(element_type, result_shape, layout(result_shape))],
            properties={
                "reassociation": reassociation_attr([list(range(len(result_shape)))]),
                "static_output_shape": i64_array_attr(result_shape),
            },
        )
        self.gm.source[op.result] = cursor.value(expand)

    def _dim(self, op: tv.DimOp) -> None:
        extent = self.extents.of(op.source)[op.index.value.data]
        if isinstance(extent, int):
            extent = LocatedBuilder(InsertPoint.before(op)).value(
                index_constant(extent)
            )
        op.result.replace_all_uses_with(extent)

    # Nests ----------------------------------------------------------------------------

    def emit_group(self, group: Group, cursor: LocatedBuilder) -> None:
        for value in group.outputs:
            if self.gm.source.get(value) is value:
                buffer = self._temporary(value, cursor)
                self.gm.source[value] = buffer
                self.gm.targets[value] = [buffer]
            elif not self.gm.targets[value]:
                self.gm.targets[value] = [self.gm.source[value]]
        if any(e == 0 for e in group.frame):
            if any(group.frame[d] == 0 for d in group.reduced):
                raise op_error(
                    group.root,
                    "tv-to-tile cannot tile a reduction over an empty dimension",
                )
            return
        try:
            if isinstance(group, AttentionGroup):
                nest = AttentionNest(group, self.extents, self.gm, cursor)
                nest.emit()
                self.allocs.extend(nest.workspaces)
                emit_remark(group.root, attention_remark(group))
            elif group.kind == GroupKind.MATMUL:
                self.matmuls.emit(group, cursor)
            else:
                self._emit_vector(group, cursor)
        except TilingError as error:
            raise op_error(group.root, str(error)) from error

    def probe(self, group: Group, resident: bool, by_rows: bool = False) -> LiveProfile:
        """The live UB tiles of `group`'s nest, measured on a throwaway copy
        (`by_rows`: a row at a time, see `_vector_request`)."""
        key = (id(group), resident, by_rows)
        if key in self._profiles:
            return self._profiles[key][1]
        block = Block()
        emitter = VectorNest(
            group,
            self.extents,
            self.gm,
            LocatedBuilder(InsertPoint.at_end(block)),
            self.sum_lanes,
        )
        probe = PROBE_SIZES[-len(emitter.tile_dims) :]
        if by_rows:
            probe = (1, *probe[1:])
        emitter.emit(VectorTiling(probe, probe), resident)
        profile = LiveProfile.of_block(
            block,
            probe,
            MemorySpace.UB,
            self.target.memories["ub"].alignment,
            self.scratch_terms,
        )
        discard_block(block)
        self._profiles[key] = (group, profile)
        return profile

    def scratch_terms(
        self, op: Operation, term: Callable[[SSAValue], LiveTerm | None]
    ) -> list[LiveTerm]:
        """The UB scratch tile-to-hw's instructions for `op` need (offset
        tables, cast intermediates, broadcast blocks, reduction partials, f16
        copies of i8 transposes), bounded by the probe's physical extents."""
        terms = [term(v) for v in (*op.operands, *op.results)]
        known = [t for t in terms if t is not None]
        if not known:
            return []  # no UB tile

        def spans_of(value: SSAValue) -> tuple[bool, ...]:
            live = term(value)
            return live.spans if live is not None else (False,) * len(known[0].spans)

        terms = self._selector.scratch_terms(op, spans_of)
        return [LiveTerm(per, spans) for per, spans in terms]

    def _vector_request(
        self, group: Group, resident: bool, by_rows: bool = False
    ) -> VectorRequest:
        """What the model sizes the tile of `group` from. Transposes align the row
        step too (the result's rows are the source's columns); `by_rows` asks for
        single rows instead (physical extent 1: a source column gathered, then
        copied), for when even the smallest aligned square does not fit."""
        profile = self.probe(group, resident, by_rows)
        tile_dims = range(group.rank - min(group.rank, 2), group.rank)
        has_transpose = any(isinstance(m, tv.TransposeOp) for m in group.members)
        ub = self.target.memories["ub"]
        extents = tuple(static_extent(group.frame[d]) for d in tile_dims)
        if by_rows:
            extents = (1, *extents[1:])
        return VectorRequest(
            extents=extents,
            cover=tuple(resident and d in group.reduced for d in tile_dims),
            aligned=tuple(
                d == group.rank - 1 or (has_transpose and len(tile_dims) == 2)
                for d in tile_dims
            ),
            unit=column_unit(profile.element_types, ub.alignment),
            profile=profile,
        )

    def _search(
        self, group: Group, candidates: Sequence[bool], ub_size: int, by_rows: bool
    ) -> tuple[tuple[VectorTiling, bool, VectorRequest], int] | None:
        """The first tiling that fits, double-buffered before single-buffered,
        over the residency `candidates`; with the buffering it fits with."""
        for buffering in (BUFFERING, 1):
            for resident in candidates:
                request = self._vector_request(group, resident, by_rows)
                tiling = auto_vector_tiling(request, ub_size // buffering)
                if tiling is not None:
                    return (tiling, resident, request), buffering
        return None

    def _rows_can_be_single(self, group: Group) -> bool:
        """Whether a row step of 1 is worth trying: a nest with a transpose
        (which aligns its row step) and two tile dims."""
        return group.rank >= 2 and any(
            isinstance(m, tv.TransposeOp) for m in group.members
        )

    def _can_be_resident(self, group: Group) -> bool:
        lead = group.rank - min(group.rank, 2)
        return all(
            isinstance(group.frame[d], int) and (d >= lead or group.frame[d] == 1)
            for d in group.reduced
        )

    def _emit_vector(self, group: Group, cursor: LocatedBuilder) -> None:
        nest = self.nests.vector
        self.nests.vector += 1
        explicit: Sequence[int] = self.options.tile_sizes
        source = ""
        if nest in self.nest_sizes:
            explicit = self.nest_sizes[nest]
            source = (
                f"; tile sizes from the tuner (nest-tile-sizes, vector nest {nest})"
            )
        try:
            choice = self.vector_choice(group, explicit)
        except TilingError as error:
            if not source:
                raise
            raise TilingError(
                f"nest-tile-sizes of vector nest {nest}: {error}"
            ) from error
        tiling, resident, request, buffering, balanced = choice
        record_request(request)
        hoist, placed = self._hoist_invariants(group, tiling, resident, explicit)
        VectorNest(group, self.extents, self.gm, cursor, self.sum_lanes).emit(
            tiling, resident, hoist
        )
        peak = request.profile.peak(tiling.physical)
        emit_remark(
            group.root,
            self._vector_remark(group, tiling, resident, peak, buffering)
            + balanced
            + placed
            + source,
        )

    def vector_choice(
        self, group: Group, explicit: Sequence[int]
    ) -> tuple[VectorTiling, bool, VectorRequest, int, str]:
        """The tiling of `group`'s vector nest (`explicit` sizes, or the largest
        that fits UB, balanced over the cores by cost): tiling, residency,
        request, buffering and the remark's words on the balance."""
        ub_size = self.target.memories["ub"].size
        assert ub_size is not None
        choice: tuple[VectorTiling, bool, VectorRequest] | None = None
        candidates = (
            [True, False]
            if group.reduced and self._can_be_resident(group)
            else [not group.reduced]
        )
        buffering = BUFFERING
        if explicit:
            request = self._vector_request(group, False)
            tiling = explicit_vector_tiling(request, explicit)
            resident = not group.reduced or (
                self._can_be_resident(group)
                and all(
                    tiling.steps[i] >= cast(int, group.frame[d])
                    for i, d in enumerate(
                        range(group.rank - len(tiling.steps), group.rank)
                    )
                    if d in group.reduced
                )
            )
            if resident and group.reduced:
                request = self._vector_request(group, True)
            needed = request.profile.peak(tiling.physical)
            if needed > ub_size:
                raise TilingError(
                    f"tile-sizes {','.join(map(str, explicit))}: the tiles live at once "
                    f"need {needed} bytes of ub but ub of target '{self.target.name}' "
                    f"holds {ub_size} bytes"
                )
            choice = (tiling, resident, request)
            buffering = 1 if needed * BUFFERING > ub_size else BUFFERING
        else:
            found = self._search(group, candidates, ub_size, False)
            if found is None and self._rows_can_be_single(group):
                lead = group.rank - 2
                single = [r for r in candidates if not (r and lead in group.reduced)]
                found = self._search(group, single, ub_size, True)
            if found is not None:
                choice, buffering = found
            if choice is None:
                request = self._vector_request(group, False)
                smallest = auto_vector_tiling(request, 1 << 62)
                assert smallest is not None
                minimum = [
                    min(p, request.unit if a else 1)
                    for p, a in zip(smallest.physical, request.aligned, strict=True)
                ]
                needed = request.profile.peak(minimum)
                raise TilingError(
                    f"the smallest tile of this nest does not fit: the tiles live at "
                    f"once need {needed} bytes of ub but ub of target "
                    f"'{self.target.name}' holds {ub_size} bytes"
                )
        tiling, resident, request = choice
        balanced = ""
        cores = balance_cores(group)
        if cores and not explicit:
            if self.options.max_cores:
                cores = min(cores, self.options.max_cores)
            balance = group_balance(group, len(tiling.steps), cores)
            better = (
                None
                if balance is None
                else balanced_tiling(
                    self.target, request, tiling, ub_size // buffering, balance
                )
            )
            if better is not None:
                tiling, balanced = better, f", sized for {cores} cores by cost"
        return tiling, resident, request, buffering, balanced

    def _hoist_invariants(
        self,
        group: Group,
        tiling: VectorTiling,
        resident: bool,
        explicit: Sequence[int],
    ) -> tuple[bool, str]:
        """Whether the nest of `group` loads its loop-invariant tiles before its
        loops, and the remark's words when not (`late-invariants`): not when it
        has such tiles, is resident, and no core runs two iterations of it (by
        the multi-core split's shares, `tiling_model.core_tiles`), where
        hoisting saves no load and only delays the first tile's."""
        if not self.options.late_invariants or explicit:
            return True, ""
        if group.reduced and not resident:
            return True, ""
        if not any(
            len(self.extents.of(v)) < group.rank
            or any(
                e == 1 and f != 1
                for e, f in zip(self.extents.of(v), group.frame, strict=True)
            )
            for v in self._inputs_of(group)
        ):
            return True, ""
        cores = self.options.max_cores or self.target.cores
        balance = group_balance(group, len(tiling.steps), cores)
        extents = [
            static_extent(e) for e in group.frame[group.rank - len(tiling.steps) :]
        ]
        if balance is None or any(e is None for e in extents):
            return True, ""
        units, serial = core_tiles(
            self.target, tiling, cast(list[int], extents), balance
        )
        if units * serial > 1:
            return True, ""
        return False, (
            "; loop-invariant tiles loaded in the loop after the varying ones "
            "(no core runs two iterations)"
        )

    @staticmethod
    def _inputs_of(group: Group) -> list[SSAValue]:
        """The tensors the members of `group` read from outside it."""
        members = set(group.members)
        return [
            v
            for m in group.members
            for v in m.operands
            if is_tensor(v)
            and not (isinstance(v.owner, Operation) and v.owner in members)
        ]

    def _vector_remark(
        self,
        group: Group,
        tiling: VectorTiling,
        resident: bool,
        peak: int,
        buffering: int,
    ) -> str:
        names = ", ".join(m.name for m in group.members) or "copy"
        tile = "x".join(map(str, tiling.physical))
        steps = "x".join(map(str, tiling.steps))
        frame = "x".join(str(e) if isinstance(e, int) else "?" for e in group.frame)
        text = f"tiled {names} as one loop nest over {frame}: ub tiles {tile}"
        if steps != tile:
            text += f" (step {steps})"
        if group.reduced:
            dims = ",".join(map(str, sorted(group.reduced)))
            if resident:
                text += f", reduced dims [{dims}] kept whole in ub"
            else:
                emitter = VectorNest(
                    group,
                    self.extents,
                    self.gm,
                    LocatedBuilder(InsertPoint.at_end(Block())),
                    self.sum_lanes,
                )
                text += f", {emitter.pass_count()} pass(es) over reduced dims [{dims}]"
        ub = self.target.memories["ub"].size
        buffers = "double-buffered" if buffering > 1 else "single-buffered"
        text += f"; {peak} bytes live of {ub} in ub ({buffers})"
        return text

    # Returned GM values and the new signature -----------------------------------------

    def _copy_returned_gm_values(
        self,
        analysis: FusionAnalysis,
        outputs: Sequence[SSAValue | None],
        return_op: func.ReturnOp,
    ) -> None:
        """Results that no nest stores (arguments, views, a value returned twice by a
        group that stored it once) are copied by a nest of their own."""
        for value, buffer in zip(return_op.arguments, outputs, strict=True):
            if buffer is None:
                continue
            owner = value.owner
            group = (
                analysis.group_of.get(owner) if isinstance(owner, Operation) else None
            )
            if group is not None and buffer in self.gm.targets.get(value, []):
                continue
            frame = self.extents.of(value) or (1,)
            copy = Group(GroupKind.MAP, return_op, frame, outputs=[value])
            self.gm.targets[value] = [buffer]
            # Located at the view (or argument use) it copies, not the function.
            where = owner if isinstance(owner, Operation) else return_op
            self.emit_group(
                copy,
                LocatedBuilder(InsertPoint.before(return_op), location=where.location),
            )

    def _finish(
        self,
        ops: Sequence[Operation],
        return_op: func.ReturnOp,
        outputs: Sequence[SSAValue | None],
    ) -> None:
        scalars = [
            v for v, b in zip(return_op.arguments, outputs, strict=True) if b is None
        ]
        finish_function(self.function, return_op, scalars, ops)


def _swaps_last_two(permutation: Sequence[int]) -> bool:
    rank = len(permutation)
    return rank >= 2 and list(permutation) == [*range(rank - 2), rank - 1, rank - 2]


_GM_VIEWS = (tv.ViewOp, tv.ReshapeOp)
"""The tv ops that become views of GM buffers, not nests."""

_GmView = tv.ViewOp | tv.ReshapeOp


def _schedule(
    ops: Sequence[Operation], analysis: FusionAnalysis
) -> list[Group | _GmView]:
    """Groups and views in an order where each comes after what it reads, as
    close to program order as that allows."""
    position = {op: i for i, op in enumerate(ops)}
    items: list[Group | _GmView] = [*analysis.groups]
    items += [op for op in ops if isinstance(op, _GM_VIEWS)]

    def producer(value: SSAValue) -> Group | _GmView | None:
        owner = value.owner
        if isinstance(owner, _GM_VIEWS):
            return owner
        return analysis.group_of.get(owner) if isinstance(owner, Operation) else None

    def needs(item: Group | _GmView) -> list[Group | _GmView]:
        values = (
            [item.operands[0]]
            if isinstance(item, _GM_VIEWS)
            else [
                o
                for m in [
                    *item.members,
                    *(p for g in item.prologues.values() for p in g.members),
                ]
                for o in m.operands
            ]
        )
        found: list[Group | _GmView] = []
        for value in values:
            source = producer(value)
            if source is not None and source is not item and source not in found:
                found.append(source)
        return found

    def key(item: Group | _GmView) -> int:
        return position[item if isinstance(item, _GM_VIEWS) else item.root]

    done: list[Group | _GmView] = []
    pending = sorted(items, key=key)
    while pending:
        ready = next(i for i in pending if all(n in done for n in needs(i)))
        done.append(ready)
        pending.remove(ready)
    return done


def _row_major_strides(shape: Sequence[int]) -> list[int | None]:
    """The element strides of a contiguous (row-major) array of `shape`."""
    return memref_strides(MemRefType(IndexType(), shape))
