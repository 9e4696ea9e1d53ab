"""Flash-attention fusion of `tv-to-tile` (docs/tiling.md, *Attention*).

`softmax(q @ k.T * s [+ mask]) @ v` is recognised from the groups of
passes/tv_fusion.py, not from one spelling: a MATMUL group that is only a
matmul (the *output* matmul) whose left operand is a softmax over the last dim
(`tv.softmax` or spelled out, `SoftmaxForm`), computed by a ROW group whose
other members are elementwise ops (the scale, a mask, casts) and whose only
output is that softmax, which reads the result of another MATMUL group that is
only a matmul (the *scores* matmul). The three become one
`AttentionGroup` and one loop nest per query block (`AttentionNest`):

    for each batch index, for each query block of `br` rows:
        Q block -> L1 -> L0A (once)
        m = -inf, l = 0, acc = 0                       (ub, f32, carried)
        for each group of STAGES key blocks of `bc` keys:
            K and V blocks -> L1, then every block's s = Q @ K^T
                                  (cube, l0c f32 -> ub in the scores' type),
                                  so loads and cube run ahead of the vector unit
          per block: the ROW group's elementwise ops on s
            m' = max(m, rowmax(s)); p = exp(s - m'); c = exp(m - m')
            l = l * c + rowsum(p); acc = acc * c + p(f16) @ V (p via ub -> l1;
                                  the update after the next block's softmax)
        out = acc / l, in the output's type, stored once

so the scores never go to GM. The elementwise ops between the two matmuls are
computed as in any nest (passes/nest_builder.py: each rounds as `tv` does);
only the softmax is evaluated online (running max and sum, the accumulator
rescaled by `c`). `p` is rounded to the softmax's type before the second
matmul, unnormalised: its relative rounding error is that of the reference's
normalised `p`, which the error bound of the output already carries.

A pattern that has the shape but cannot be fused (a dim that is not static, an
operand type the cube does not take, blocks that do not fit) keeps its three
nests and gets a remark saying why.

When the query blocks are fewer than the cores, `choose_tiling` may split each
block's keys into ranges run as units of their own (flash-decoding: partial
max, sum and accumulator to GM workspaces, a combine nest after a `sync_all`;
docs/tiling.md, *The key split*).

The estimate (which blocks fit, the cycles of a key step, the key split) is
passes/attention_model.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, MemRefType, f16, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.diagnostics import emit_remark
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType
from pypto_mlir.targets import Target

from .attention_model import STAGES, AttentionTiling, KeyLayout, choose_tiling
from .attention_steps import (
    F32_MAX,
    ones_l0b,
    probabilities_l0,
    product_ub,
    rescale,
    running_max,
    to_l0,
)
from .located_builder import LocatedBuilder
from .nest_builder import GmBuffers, NestBuilder, Scope, Valid
from .tv_fusion import (
    MAP_OPS,
    ExtentAnalysis,
    FusionAnalysis,
    Group,
    GroupKind,
    Mapping,
    is_returned,
    tensor_type,
    tensor_users,
)

Prefetched = dict[tuple[SSAValue, Mapping, Attribute], SSAValue]
"""Tiles loaded ahead of a key step, by their key in a `Scope`'s cache."""


@dataclass(frozen=True)
class AttentionOptions:
    """The switches of the nest's decisions (tv-to-tile options)."""

    cube_sum: bool = True
    """Let the estimate take the row sums on the cube (`attention-cube-sum`)."""
    scale_multiply: bool = True
    """Divide by a power-of-two scale as a multiply by its exact reciprocal
    (`attention-scale-multiply`)."""
    scale_fold: bool = True
    """Fold another positive constant scale into the exponent's f32 argument
    (`attention-scale-fold`, `folded_scale`)."""
    key_split: bool = True
    """Let the estimate split the keys of each query block over several cores
    when the query blocks are fewer than the cores (`attention-key-split`)."""
    f32_max: bool = True
    """Take the row maxima from the f32 scores where that pays
    (`attention-f32-max`, `AttentionTiling.f32_max`)."""
    prefetch: bool = True
    """Load a group's masks with its K and V blocks (`attention-prefetch`,
    `AttentionTiling.prefetch`)."""


@dataclass(frozen=True)
class SoftmaxForm:
    """A softmax over the last dim of `input`: a `tv.softmax`, or spelled out as
    `e = exp(x - reduce_max(x)); e / reduce_sum(e)` (keepdims), either maybe
    followed by a cast. The nest evaluates it online from `input`, whatever
    the spelling: the forms differ only in rounding (each op of the spelled
    form rounds to its type, `tv.softmax` once), which the error bound of the
    reference carries."""

    input: SSAValue
    result: SSAValue
    ops: tuple[Operation, ...]
    """The ops from `input` (excluded) to `result`, in program order."""


@dataclass(eq=False)
class AttentionGroup(Group):
    """The scores matmul, the ROW group around its softmax and the output matmul
    as one nest (see the module doc)."""

    scores: tv.MatmulOp | None = None
    softmax: SoftmaxForm | None = None
    product: tv.MatmulOp | None = None
    tiling: AttentionTiling = AttentionTiling(16, 16)
    head_dim: int = 0
    value_dim: int = 0
    scale_multiply: bool = True
    scale_fold: bool = True


# --------------------------------------------------------------------------------------
# Recognition
# --------------------------------------------------------------------------------------


def fuse_attention(
    analysis: FusionAnalysis,
    target: Target,
    cores: int,
    options: AttentionOptions = AttentionOptions(),
) -> None:
    """Replace every scores-softmax-output triple of `analysis` by one
    `AttentionGroup` (remarks on the triples that cannot be fused)."""
    for group in list(analysis.groups):
        product = group.matmul
        if group.kind != GroupKind.MATMUL or group.members != [product]:
            continue
        assert product is not None
        softmax = softmax_form(product.lhs)
        if softmax is None:
            continue
        row = analysis.group_of.get(cast(Operation, softmax.result.owner))
        if row is None or row.kind != GroupKind.ROW:
            continue
        scores = _scores_matmul(analysis, row)
        if scores is None:
            continue
        reason, fused = _attention_group(
            analysis, target, cores, scores, row, group, softmax, options
        )
        if fused is None:
            emit_remark(product, f"attention not fused: {reason}")
            continue
        for old in (analysis.group_of[scores], row, group):
            analysis.groups.remove(old)
        analysis.groups.append(fused)
        analysis.groups.sort(key=lambda g: analysis.position[g.root])
        for member in fused.members:
            analysis.group_of[member] = fused


def _last_dim_reduction(value: SSAValue, kind: type[tv.ReduceOp]) -> tv.ReduceOp | None:
    """The `kind` reduction over the last dim, keepdims, that computes `value`."""
    op = value.owner
    if not isinstance(op, kind) or op.keepdims is None:
        return None
    rank = tensor_type(op.input).get_num_dims()
    return op if list(op.axes.get_values()) == [rank - 1] else None


def softmax_form(value: SSAValue) -> SoftmaxForm | None:
    """`value` as a softmax over the last dim (`SoftmaxForm`), if it is one: a
    `tv.softmax`, or `e / reduce_sum(e)` with `e = exp(x - reduce_max(x))`
    (`pto.exp(x - x.max(axis=-1, keepdims=True))`, both reductions keepdims
    over the last dim, `e` read by both), either maybe cast afterwards."""
    op = value.owner
    if isinstance(op, tv.CastOp):
        inner = softmax_form(op.input)
        if inner is None:
            return None
        return SoftmaxForm(inner.input, value, (*inner.ops, op))
    if isinstance(op, tv.SoftmaxOp):
        rank = tensor_type(op.input).get_num_dims()
        if op.axis.value.data != rank - 1:
            return None
        return SoftmaxForm(op.input, value, (op,))
    if not isinstance(op, tv.DivOp):
        return None
    exp = op.lhs.owner
    total = _last_dim_reduction(op.rhs, tv.ReduceSumOp)
    if not isinstance(exp, tv.ExpOp) or total is None or total.input != op.lhs:
        return None
    shifted = exp.input.owner
    if not isinstance(shifted, tv.SubOp):
        return None
    maximum = _last_dim_reduction(shifted.rhs, tv.ReduceMaxOp)
    if maximum is None or maximum.input != shifted.lhs:
        return None
    shape = tensor_type(shifted.lhs).get_shape()
    if tensor_type(value).get_shape() != shape:
        return None
    return SoftmaxForm(shifted.lhs, value, (maximum, shifted, exp, total, op))


def _scores_matmul(analysis: FusionAnalysis, row: Group) -> tv.MatmulOp | None:
    """The matmul whose result the ROW group `row` reads, if it is alone in its
    group and read only by `row`."""
    found: list[tv.MatmulOp] = []
    for member in row.members:
        for operand in member.operands:
            owner = operand.owner
            if isinstance(owner, tv.MatmulOp) and owner not in found:
                found.append(owner)
    if len(found) != 1:
        return None
    scores = found[0]
    group = analysis.group_of.get(scores)
    if group is None or group.members != [scores]:
        return None
    if any(analysis.group_of.get(u) is not row for u in tensor_users(scores.result)):
        return None
    if is_returned(scores.result):
        return None
    if any(isinstance(use.operation, tv.TransposeOp) for use in scores.result.uses):
        return None
    return scores


def _attention_group(
    analysis: FusionAnalysis,
    target: Target,
    cores: int,
    scores: tv.MatmulOp,
    row: Group,
    output: Group,
    softmax: SoftmaxForm,
    options: AttentionOptions,
) -> tuple[str, AttentionGroup | None]:
    """The fused group of the triple, or why there is none."""
    product = output.matmul
    assert product is not None
    frame = row.frame
    rank = len(frame)
    if row.reduced != frozenset([rank - 1]):
        return "the softmax is not over the keys (the last dim)", None
    if row.outputs != [softmax.result] or len(tensor_users(softmax.result)) != 1:
        return "the softmax or a value before it is also read elsewhere", None
    if is_returned(softmax.result):
        return "the softmax is also a result (the fused nest keeps it on chip)", None
    if any(analysis.group_of.get(op) is not row for op in softmax.ops):
        return "the softmax's steps are not one nest", None
    for inner in softmax.ops:
        if inner.results[0] is softmax.result:
            continue
        if any(user not in softmax.ops for user in tensor_users(inner.results[0])):
            return (
                f"a step of the softmax ('{inner.name}') is also read elsewhere",
                None,
            )
    for member in row.members:
        if member not in softmax.ops and not isinstance(member, MAP_OPS):
            return f"'{member.name}' between the matmuls is not elementwise", None
    if scores.transpose_a is not None or product.transpose_a is not None:
        return "a transposed query or probability operand", None
    if not all(isinstance(e, int) for e in frame):
        return "a dim is not static", None
    input_types = {
        tensor_type(v).element_type
        for v in (scores.lhs, scores.rhs, product.rhs, softmax.result)
    }
    if input_types != {f16}:
        return "the matmul operands and the softmax are not all f16", None
    head_dim = cast(int, analysis.extents.of(scores.lhs)[-1])
    value_dims = analysis.extents.of(product.rhs)
    value_dim = cast(
        int, value_dims[-2] if product.transpose_b is not None else value_dims[-1]
    )
    if not isinstance(head_dim, int) or not isinstance(value_dim, int):
        return "a dim is not static", None
    fractal = 16
    if head_dim % fractal or value_dim % fractal:
        return f"head dims {head_dim}, {value_dim} are not multiples of {fractal}", None
    if frame[-2] != analysis.extents.of(product.result)[-2]:
        return "the output's rows are not the query rows", None
    keys = frame[-1]
    row_bytes = sum(
        tile.element_bytes(tensor_type(value).element_type)
        for value in _key_inputs(analysis, row, scores)
        if analysis.extents.of(value)[-1] == keys
    )
    tiling = choose_tiling(
        target,
        cores,
        cast(tuple[int, ...], frame),
        head_dim,
        value_dim,
        options.cube_sum,
        options.key_split,
        options.f32_max,
        options.prefetch,
        row_bytes,
        KeyLayout(scores.transpose_b is not None, product.transpose_b is None, keys),
    )
    if tiling is None:
        return f"no query and key block fits target '{target.name}'", None
    members = sorted(
        [scores, *row.members, product], key=lambda m: analysis.position[m]
    )
    mapping = dict(row.mapping)
    mapping[scores.result] = tuple(range(rank))
    fused = AttentionGroup(
        GroupKind.MATMUL,
        product,
        frame,
        members=members,
        mapping=mapping,
        matmul=scores,
        outputs=list(output.outputs),
        scores=scores,
        softmax=softmax,
        product=product,
        tiling=tiling,
        head_dim=head_dim,
        value_dim=value_dim,
        scale_multiply=options.scale_multiply,
        scale_fold=options.scale_fold,
    )
    return "", fused


def _key_inputs(
    analysis: FusionAnalysis, row: Group, scores: tv.MatmulOp
) -> list[SSAValue]:
    """The tensors from outside the nest that the ROW group's ops read (a
    mask), for the estimate of their loads."""
    found: list[SSAValue] = []
    for member in row.members:
        for operand in member.operands:
            if (
                isinstance(operand.type, tv.TensorViewType)
                and operand is not scores.result
                and analysis.group_of.get(cast(Operation, operand.owner)) is not row
                and operand not in found
            ):
                found.append(operand)
    return found


# --------------------------------------------------------------------------------------
# Block sizes
# --------------------------------------------------------------------------------------


class AttentionNest(NestBuilder):
    """Builds the nest of an `AttentionGroup` (see the module doc)."""

    def __init__(
        self,
        group: AttentionGroup,
        extents: ExtentAnalysis,
        gm: GmBuffers,
        builder: LocatedBuilder,
    ):
        super().__init__(group, extents, gm, builder)
        self.attention = group
        self._shift: SSAValue | None = None
        """The rotation of the key blocks of the current query block."""
        self._ones: SSAValue | None = None
        """The block of ones in L0B the cube sums the probabilities with."""
        self._base: SSAValue | None = None
        """The first key of the current unit of a key split."""
        self._span = 0
        """The keys the current query block (or unit) runs over."""
        self.workspaces: list[SSAValue] = []
        """A key split's f32 GM workspaces (accumulators, row maxima, row
        sums), allocated by `emit`; the caller deallocates them."""

    def emit(self) -> None:
        group = self.attention
        rank = group.rank
        rows = rank - 2
        tiling = group.tiling
        for dim in range(rank):
            self.steps[dim] = 1
        self.steps[rows] = tiling.br
        self.physical = {rows: tiling.br, rank - 1: tiling.bc}
        if tiling.split > 1:
            self._emit_split()
            return

        def block_body(at: InsertPoint, _: list[SSAValue]) -> list[SSAValue]:
            self._query_block(at)
            return []

        self.frame_loops(self.top, range(rank - 1), [], block_body)

    # The key split ------------------------------------------------------------------

    def _emit_split(self) -> None:
        """The key split: one loop over units u = block * split + part (block:
        a query block of a batch index, part: a range of the keys), parallel,
        each storing its accumulator, row max and row sum (f32) to rows u * br
        of GM workspaces (affine in u, so that the multi-core split can cut
        it); then the combine nest (`_combine`), which the multi-core split
        runs after a `sync_all`."""
        group = self.attention
        rank = group.rank
        rows = rank - 2
        tiling = group.tiling
        frame = cast(tuple[int, ...], group.frame)
        query_blocks = -(-frame[rows] // tiling.br)
        units = math.prod(frame[:rows]) * query_blocks * tiling.split
        workspace_rows = units * tiling.br
        self.workspaces = [
            self.value(self.top, memref.AllocOp([], [], MemRefType(f32, shape)))
            for shape in (
                [workspace_rows, group.value_dim],
                [workspace_rows, tiling.stat_columns],
                [workspace_rows, tiling.stat_columns],
            )
        ]
        span = frame[rank - 1] // tiling.split

        def unit_body(at: InsertPoint, u: Valid, _: list[SSAValue]) -> list[SSAValue]:
            unit = self.index_value(u)
            part = self.value(at, arith.RemUIOp(unit, self.constant(tiling.split)))
            block = self.value(at, arith.DivUIOp(unit, self.constant(tiling.split)))
            self._block_indices(at, block, query_blocks)
            self.valid[rows] = self.tail(
                at, frame[rows], self.index[rows], tiling.br, True
            )
            self.scopes.append(Scope(at, frozenset(range(rank - 1))))
            base = self.value(at, arith.MuliOp(part, self.constant(span)))
            first_row = self.value(at, arith.MuliOp(unit, self.constant(tiling.br)))
            self._query_block(at, (base, span, first_row))
            self.scopes.pop()
            return []

        self.loop(self.top, 0, units, 1, [], unit_body)
        self._combine(query_blocks)

    def _block_indices(
        self, at: InsertPoint, block: SSAValue, query_blocks: int
    ) -> None:
        """Set the batch indices and the query row of query block `block`
        (numbered batch-major)."""
        rows = self.attention.rank - 2
        frame = cast(tuple[int, ...], self.attention.frame)
        rest = self.value(at, arith.DivUIOp(block, self.constant(query_blocks)))
        row_block = self.value(at, arith.RemUIOp(block, self.constant(query_blocks)))
        self.index[rows] = self.value(
            at, arith.MuliOp(row_block, self.constant(self.attention.tiling.br))
        )
        for dim in reversed(range(rows)):
            extent = self.constant(frame[dim])
            self.index[dim] = self.value(at, arith.RemUIOp(rest, extent))
            self.valid[dim] = 1
            rest = self.value(at, arith.DivUIOp(rest, extent))

    def _store_partials(
        self,
        at: InsertPoint,
        first_row: SSAValue,
        acc: SSAValue,
        maximum: SSAValue,
        total: SSAValue,
    ) -> None:
        """A unit's accumulator, row max and row sum to its workspace rows,
        the statistics broadcast to `stat_columns` columns."""
        zero = self.constant(0)
        rows = self.attention.rank - 2
        valid = self.valid[rows]
        wide = TileType(
            [self.attention.tiling.br, self.attention.tiling.stat_columns],
            f32,
            MemorySpace.UB,
            [
                valid if isinstance(valid, int) else DYNAMIC_INDEX,
                self.attention.tiling.stat_columns,
            ],
        )
        dynamic = [valid] if isinstance(valid, SSAValue) else []
        zeros = self.value(at, tile.FillOp(self.constant(0.0, f32), wide, dynamic))
        maximum = self.value(at, tile.AddOp(zeros, maximum))
        total = self.value(at, tile.AddOp(zeros, total))
        for value, workspace in zip(
            (acc, maximum, total), self.workspaces, strict=True
        ):
            self.insert(at, tile.StoreOp(value, workspace, [first_row, zero]))

    def _combine(self, query_blocks: int) -> None:
        """Per tile of `combine_rows` rows: the partials of its query block's
        key ranges, m = max(m_j), c_j = exp(m_j - m), out = sum(c_j acc_j) /
        sum(c_j l_j) in the output's type, stored once."""
        group = self.attention
        product = group.product
        assert product is not None
        rank = group.rank
        rows = rank - 2
        tiling = group.tiling
        frame = cast(tuple[int, ...], group.frame)
        height = tiling.combine_rows
        self.steps[rows] = height
        zero = self.constant(0)

        def body(at: InsertPoint, _: list[SSAValue]) -> list[SSAValue]:
            valid = self.valid[rows]
            block = self.value(
                at, arith.DivUIOp(self.index[rows], self.constant(tiling.br))
            )
            within = self.value(
                at, arith.RemUIOp(self.index[rows], self.constant(tiling.br))
            )
            for dim in range(rows):
                block = self.value(
                    at,
                    arith.AddiOp(
                        self.value(
                            at,
                            arith.MuliOp(
                                self.index[dim],
                                self.constant(
                                    math.prod(frame[dim + 1 : rows]) * query_blocks
                                ),
                            ),
                        ),
                        block,
                    ),
                )
            first_unit = self.value(
                at, arith.MuliOp(block, self.constant(tiling.split))
            )

            def load(part: int, which: int, width: int) -> SSAValue:
                unit = self.add(at, first_unit, part)
                row = self.value(
                    at,
                    arith.AddiOp(
                        self.value(
                            at,
                            arith.MuliOp(
                                self.index_value(unit), self.constant(tiling.br)
                            ),
                        ),
                        within,
                    ),
                )
                tile_type = TileType(
                    [height, width],
                    f32,
                    MemorySpace.UB,
                    [valid if isinstance(valid, int) else DYNAMIC_INDEX, width],
                )
                dynamic = [valid] if isinstance(valid, SSAValue) else []
                return self.value(
                    at,
                    tile.LoadOp(
                        self.workspaces[which], [row, zero], tile_type, dynamic
                    ),
                )

            stats = tiling.stat_columns
            maxima = [load(part, 1, stats) for part in range(tiling.split)]
            maximum = maxima[0]
            for other in maxima[1:]:
                maximum = self.value(at, tile.MaxOp(maximum, other))
            out: SSAValue | None = None
            total: SSAValue | None = None
            for part, part_max in enumerate(maxima):
                scale = self.value(
                    at, tile.ExpOp(self.value(at, tile.SubOp(part_max, maximum)))
                )
                # The columns of the statistics are equal: one of them scales
                # the accumulator's rows.
                column = self.value(at, tile.ReduceMaxOp(scale, 1))
                acc = self.value(at, tile.MulOp(load(part, 0, group.value_dim), column))
                sums = self.value(at, tile.MulOp(load(part, 2, stats), scale))
                out = acc if out is None else self.value(at, tile.AddOp(out, acc))
                total = (
                    sums if total is None else self.value(at, tile.AddOp(total, sums))
                )
            assert out is not None and total is not None
            total = self.value(at, tile.ReduceMaxOp(total, 1))
            result = self.value(at, tile.DivOp(out, total))
            result = self.to_storage(
                at, result, tensor_type(product.result).element_type
            )
            indices = [self.index[d] for d in range(rows)] + [self.index[rows], zero]
            for target in self.gm.targets[product.result]:
                self.insert(at, tile.StoreOp(result, target, indices))
            return []

        self.frame_loops(self.top, range(rank - 1), [], body)

    # Loads --------------------------------------------------------------------------

    def _load_l1(
        self,
        at: InsertPoint,
        operand: SSAValue,
        dims: Sequence[tuple[SSAValue, Valid, int]],
        pad: bool = False,
    ) -> SSAValue:
        """Load a 2-d block of a matmul operand (as stored) into L1 in nz: per
        stored dim (offset, valid extent, physical extent)."""
        rank = tensor_type(operand).get_num_dims()
        indices = [self.index[d] for d in range(rank - 2)] + [d[0] for d in dims]
        dynamic = [v for _, v, _ in dims if isinstance(v, SSAValue)]
        tile_type = TileType(
            [d[2] for d in dims],
            tensor_type(operand).element_type,
            MemorySpace.L1,
            [v if isinstance(v, int) else DYNAMIC_INDEX for _, v, _ in dims],
            tile.Layout.NZ,
            "zero" if pad else None,
        )
        return self.value(
            at, tile.LoadOp(self.gm.source[operand], indices, tile_type, dynamic)
        )

    def _to_l0(
        self, at: InsertPoint, source: SSAValue, space: MemorySpace, transpose: bool
    ) -> SSAValue:
        return to_l0(self, at, source, space, transpose)

    def _key_blocks(
        self, at: InsertPoint, key: Valid, valid: Valid
    ) -> tuple[SSAValue, SSAValue, Prefetched]:
        """The K and V blocks of the key block at `key`, in L1 (as stored),
        and with `prefetch` the block's ROW inputs loaded between them (in
        the order the key step reads them)."""
        group = self.attention
        scores, product = group.scores, group.product
        assert scores is not None and product is not None
        bc, d, dv = group.tiling.bc, group.head_dim, group.value_dim
        zero = self.constant(0)
        key_index = self.index_value(key)
        k_dims = [(key_index, valid, bc), (zero, d, d)]
        if scores.transpose_b is None:
            k_dims.reverse()
        v_dims = [(key_index, valid, bc), (zero, dv, dv)]
        if product.transpose_b is not None:
            v_dims.reverse()
        k_l1 = self._load_l1(at, scores.rhs, k_dims)
        fetched = self._prefetch(at, key, valid) if group.tiling.prefetch else {}
        return k_l1, self._load_l1(at, product.rhs, v_dims, valid != bc), fetched

    def _prefetch(self, at: InsertPoint, key: Valid, valid: Valid) -> Prefetched:
        """The loads of the tensors from outside the nest that the key step
        of the block at `key` reads (a mask: those placed at the key level),
        emitted at `at` (`attention-prefetch`)."""
        group = self.attention
        scores, softmax = group.scores, group.softmax
        assert scores is not None and softmax is not None
        cols = group.rank - 1
        self.index[cols] = self.index_value(key)
        self.valid[cols] = valid
        scope = Scope(at, frozenset([cols]))
        self.scopes.append(scope)
        fetched: Prefetched = {}
        pending = [(softmax.input, group.identity())]
        seen: set[tuple[SSAValue, Mapping]] = set()
        while pending:
            value, mapping = pending.pop()
            if (value, mapping) in seen or value is scores.result:
                continue
            seen.add((value, mapping))
            if self.is_member(value):
                owner = cast(Operation, value.owner)
                pending.extend(reversed(self._operand_mappings(owner, mapping)))
            elif self.placement(value, mapping) is scope:
                element_type = tensor_type(value).element_type
                fetched[(value, mapping, element_type)] = self.load(at, value, mapping)
        self.scopes.pop()
        return fetched

    # One query block ------------------------------------------------------------------

    def _query_block(
        self, at: InsertPoint, split: tuple[SSAValue, int, SSAValue] | None = None
    ) -> None:
        """One query block over all its keys, or, with `split` (the first key,
        the keys, the first workspace row of a unit of the key split), over
        that range of keys, storing the partial results."""
        group = self.attention
        scores, softmax, product = group.scores, group.softmax, group.product
        assert scores is not None and softmax is not None and product is not None
        rank = group.rank
        rows, cols = rank - 2, rank - 1
        br, bc = group.tiling.br, group.tiling.bc
        d = group.head_dim
        row_index, row_valid = self.index[rows], self.valid[rows]
        zero = self.constant(0)
        q_l1 = self._load_l1(at, scores.lhs, [(row_index, row_valid, br), (zero, d, d)])
        q_l0 = self._to_l0(at, q_l1, MemorySpace.L0A, False)
        keys = cast(int, group.frame[cols])
        self._base = None
        if split is not None:
            self._base, keys = split[0], split[1]
        if group.tiling.cube_sum:
            self._ones = self._ones_block(at, bc)

        # The key blocks in groups of STAGES: the loads of a group's blocks come
        # first, so that a block's loads overlap the work of the blocks before
        # it (hw-insert-sync orders only what shares a buffer). The first block
        # starts the statistics; the whole groups are a loop; the rest (at
        # most STAGES blocks, the last maybe partial) follows it.
        # A unit of a key split rotates within its range of keys.
        self._span = keys
        self._shift = self._rotation(at, keys)
        first = [(k, min(bc, keys - k)) for k in range(0, min(keys, 2 * bc), bc)]
        carried = self._key_group(at, first, q_l0, None)
        start = len(first) * bc
        group_keys = STAGES * bc
        whole = start + max(keys - start, 0) // group_keys * group_keys
        if whole > start:

            def group_body(
                inner: InsertPoint, key: Valid, state: list[SSAValue]
            ) -> list[SSAValue]:
                blocks: list[tuple[Valid, Valid]] = [(key, bc)]
                for stage in range(1, STAGES):
                    blocks.append((self.add(inner, key, stage * bc), bc))
                return self._key_group(inner, blocks, q_l0, state)

            carried = self.loop(at, start, whole, group_keys, carried, group_body)
        rest = [(k, min(bc, keys - k)) for k in range(whole, keys, bc)]
        if rest:
            carried = self._key_group(at, rest, q_l0, carried)
        total, acc = self._settle(at, carried)
        if group.tiling.cube_sum:
            # The ONES columns of the sums are equal: their maximum is the sum.
            total = self.value(at, tile.ReduceMaxOp(total, 1))
        if split is not None:
            self._store_partials(at, split[2], acc, carried[0], total)
            return
        out = self.value(at, tile.DivOp(acc, total))
        result_type = tensor_type(product.result).element_type
        out = self.to_storage(at, out, result_type)
        indices = [self.index[d] for d in range(rank - 2)] + [row_index, zero]
        for target in self.gm.targets[product.result]:
            self.insert(at, tile.StoreOp(out, target, indices))

    def _ones_block(self, at: InsertPoint, valid: int) -> SSAValue:
        return ones_l0b(self, at, self.attention.tiling.bc, valid)

    def _rotation(self, at: InsertPoint, keys: int) -> SSAValue | None:
        """Where the key blocks of this query block start (in keys): query
        block `i` of batch `b` starts at key block `i + b` and wraps around, so
        that cores, which run different query blocks at the same time, read
        different K and V blocks instead of all asking the L2 for the same
        lines at once (the online softmax takes the blocks in any order). None
        with a partial key block (its valid extent is static only last) or a
        query block at a static offset."""
        bc, br = self.attention.tiling.bc, self.attention.tiling.br
        if keys % bc or keys <= bc:
            return None
        rows = self.attention.rank - 2
        parts = [self.index[d] for d in range(rows)] + [self.index[rows]]
        if all(isinstance(p.owner, arith.ConstantOp) for p in parts):
            return None
        block = self.value(at, arith.DivSIOp(self.index[rows], self.constant(br)))
        for dim in range(rows):
            block = self.value(at, arith.AddiOp(block, self.index[dim]))
        return self.value(at, arith.MuliOp(block, self.constant(bc)))

    def _key_group(
        self,
        at: InsertPoint,
        blocks: Sequence[tuple[Valid, Valid]],
        q_l0: SSAValue,
        carried: list[SSAValue] | None,
    ) -> list[SSAValue]:
        """The loads of `blocks` (key offset, valid keys), then their steps."""
        if self._shift is not None:
            keys = self.constant(self._span)
            blocks = [
                (
                    self.value(
                        at,
                        arith.RemSIOp(
                            self.value(
                                at, arith.AddiOp(self.index_value(key), self._shift)
                            ),
                            keys,
                        ),
                    ),
                    valid,
                )
                for key, valid in blocks
            ]
        if self._base is not None:
            base = self._base
            blocks = [
                (self.value(at, arith.AddiOp(self.index_value(key), base)), valid)
                for key, valid in blocks
            ]
        loaded = [self._key_blocks(at, key, valid) for key, valid in blocks]
        # Every block's scores before the first block's softmax: the cube (in
        # order) computes the next scores while the vector unit works.
        block_scores = [self._scores(at, q_l0, k_l1) for k_l1, _, _ in loaded]
        state = carried
        for (key, valid), (_, v_l1, fetched), s_ub in zip(
            blocks, loaded, block_scores, strict=True
        ):
            stats = None if state is None else state[:2]
            maximum, total, product, correction = self._key_step(
                at, key, valid, s_ub, v_l1, stats, fetched
            )
            if state is None:
                state = [maximum, total, product]
                continue
            assert correction is not None
            # The previous block's update of the accumulator (and of the sums
            # taken on the cube) comes after this block's softmax, so that the
            # vector unit (in order) does not wait for the previous product's
            # cube and moves.
            settled_total, acc = self._settle(at, state)
            if self.attention.tiling.cube_sum:
                state = [maximum, settled_total, acc, product, correction, total]
            else:
                state = [maximum, total, acc, product, correction]
        assert state is not None
        return state

    def _settle(
        self, at: InsertPoint, state: list[SSAValue]
    ) -> tuple[SSAValue, SSAValue]:
        """The row sums and the accumulator of `state` with its pending
        updates applied: [max, sum, acc] has none; [max, sum, acc, product,
        correction] the accumulator's; with a last entry, the cube's sums
        of the block, the sums' too."""
        if len(state) == 3:
            return state[1], state[2]
        acc = self._rescale(at, state[2], state[3], state[4])
        if len(state) == 5:
            return state[1], acc
        return self._rescale(at, state[1], state[5], state[4]), acc

    def _scores(self, at: InsertPoint, q_l0: SSAValue, k_l1: SSAValue) -> SSAValue:
        """Q @ K^T of one key block, moved to ub in the scores' type."""
        scores = self.attention.scores
        assert scores is not None
        k_l0 = self._to_l0(at, k_l1, MemorySpace.L0B, scores.transpose_b is not None)
        s_l0c = self.value(at, tile.MatmulOp(q_l0, k_l0))
        s_type = cast(TileType, s_l0c.type)
        scores_type = tensor_type(scores.result).element_type
        return self.value(
            at,
            tile.MoveOp(
                s_l0c,
                TileType(
                    s_type.get_shape(), scores_type, MemorySpace.UB, s_type.get_valid()
                ),
            ),
        )

    def _key_step(
        self,
        at: InsertPoint,
        key: Valid,
        valid: Valid,
        s_ub: SSAValue,
        v_l1: SSAValue,
        carried: list[SSAValue] | None,
        prefetched: Prefetched | None = None,
    ) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue | None]:
        """One key block from its scores `s_ub` (and its inputs `prefetched`
        with the group's loads): the ROW group's ops, the online
        softmax update of the row max and sum `carried` (None: the first block
        starts them), and the product with V; returns the new max and sum (the
        block's own sums with `cube_sum`), the product and the correction the
        accumulator is to be scaled by (None first)."""
        group = self.attention
        scores, softmax, product = group.scores, group.softmax, group.product
        assert scores is not None and softmax is not None and product is not None
        rank = group.rank
        cols = rank - 1
        identity = group.identity()
        scores_type = tensor_type(scores.result).element_type
        self.index[cols] = self.index_value(key)
        self.valid[cols] = valid
        scope = Scope(at, frozenset([cols]))
        self.scopes.append(scope)
        scope.cache[(scores.result, identity, scores_type)] = s_ub
        self.set_home(scores.result, identity, scope)
        for key_value, tile_value in (prefetched or {}).items():
            scope.cache[key_value] = tile_value
        factor = folded_scale(group)
        wide = group.tiling.f32_max
        if factor is None:
            # The row maximum of the scores in their own type (exact: a cast
            # to f32 changes no value), half the repeats of an f32 one for
            # f16; or, with `f32_max`, of the f32 copy the exponent reads
            # (the same values), 8 rows a repeat by blocks.
            narrow = None if wide else self.tile_of(softmax.input, identity)
            x = self.tile_as(softmax.input, identity, f32)
            self.scopes.pop()
            if narrow is None:
                local = self.value(at, tile.ReduceMaxOp(x, 1))
            else:
                local = self.value(at, tile.ReduceMaxOp(narrow, 1))
                local = self.to_storage(at, local, f32)
        else:
            # The scale folded into the f32 argument of the exponent: s * f
            # in f32 (no f16 division), the row maximum of the unscaled
            # scores times f (f > 0), or, with `f32_max`, that of s * f (the
            # same value: rounding s * f is monotonic in s).
            scale = self.constant(factor, f32)
            x = self.tile_as(scores.result, identity, f32)
            x = self.value(at, tile.MulOp(x, scale))
            self.scopes.pop()
            if wide:
                local = self.value(at, tile.ReduceMaxOp(x, 1))
            else:
                local = self.value(at, tile.ReduceMaxOp(s_ub, 1))
                local = self.value(
                    at, tile.MulOp(self.to_storage(at, local, f32), scale)
                )
        new_max, correction = running_max(
            self, at, local, None if carried is None else carried[0]
        )
        shifted = self.value(at, tile.SubOp(x, new_max))
        exponent = self.value(at, tile.ExpOp(shifted))
        local_sum = None
        if not group.tiling.cube_sum:
            local_sum = self.value(at, tile.ReduceSumOp(exponent, 1))
        probability_type = tensor_type(softmax.result).element_type
        p_l0 = self._probabilities_l0(at, exponent, valid, probability_type)
        v_l0 = self._to_l0(at, v_l1, MemorySpace.L0B, product.transpose_b is not None)
        o_ub = self._product_ub(at, p_l0, v_l0)
        if local_sum is None:
            # The block's sums from the cube, added to the running ones later
            # (`_settle`), with the accumulator.
            ones = self._ones
            if valid != group.tiling.bc:
                ones = self._ones_block(at, cast(int, valid))
            assert ones is not None
            return new_max, self._product_ub(at, p_l0, ones), o_ub, correction
        if correction is None:
            new_total = local_sum
        else:
            new_total = self.value(
                at,
                tile.AddOp(
                    self.value(at, tile.MulOp(carried[1], correction)), local_sum
                ),
            )

        return new_max, new_total, o_ub, correction

    def _probabilities_l0(
        self, at: InsertPoint, exponent: SSAValue, valid: Valid, element_type: Attribute
    ) -> SSAValue:
        """The probabilities (unnormalised) in `element_type`, in L0A through
        L1 (nz); padded with zeros past a partial key or query block."""
        group = self.attention
        rows = self.valid[group.rank - 2]
        pad = valid != group.tiling.bc or rows != group.tiling.br
        return probabilities_l0(self, at, exponent, element_type, pad)

    def _product_ub(self, at: InsertPoint, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return product_ub(self, at, lhs, rhs)

    def _compute(
        self,
        at: InsertPoint,
        op: Operation,
        mapping: Mapping,
        operands: Sequence[SSAValue],
    ) -> SSAValue:
        """A member of the ROW group; `x / c` by a power of two `c` (the
        `/ sqrt(d)` of d = 4^k) as `x * (1 / c)`: the same value (1 / c is
        exact), vmuls instead of vdup and vdiv."""
        reciprocal = exact_reciprocal(op) if self.attention.scale_multiply else None
        if reciprocal is None:
            return super()._compute(at, op, mapping, operands)
        result_type = tensor_type(op.results[0]).element_type
        factor = self.constant(reciprocal, operands[1].type)
        value = self.value(at, tile.MulOp(operands[0], factor))
        return self.to_storage(at, value, result_type)

    def _rescale(
        self, at: InsertPoint, acc: SSAValue, product: SSAValue, correction: SSAValue
    ) -> SSAValue:
        return rescale(self, at, acc, product, correction)


def _constant_scale(op: Operation) -> tuple[float, Attribute] | None:
    """The finite nonzero float constant (and its type) that the tensor of
    `op`, a `tv.div` or `tv.mul`, is divided or multiplied by."""
    if not isinstance(op, tv.DivOp | tv.MulOp):
        return None
    owner = op.rhs.owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(
        owner.value, FloatAttr
    ):
        return None
    value = owner.value.value.data
    if not math.isfinite(value) or value == 0:
        return None
    return value, owner.value.type


def exact_reciprocal(op: Operation) -> float | None:
    """1 / c for `x / c` with `c` a float constant that is a power of two whose
    reciprocal is a normal number of its type (x * (1 / c) then rounds to the
    same value as x / c: both are the one exact quotient, rounded once)."""
    found = _constant_scale(op)
    if not isinstance(op, tv.DivOp) or found is None:
        return None
    value, element_type = found
    if math.frexp(abs(value))[0] != 0.5:
        return None
    reciprocal = 1.0 / value
    smallest = {f16: 2.0**-14, f32: 2.0**-126}.get(element_type)
    largest = {f16: 65504.0, f32: F32_MAX}.get(element_type)
    if smallest is None or largest is None:
        return None
    return reciprocal if smallest <= abs(reciprocal) <= largest else None


def folded_scale(group: AttentionGroup) -> float | None:
    """The factor f of a scale that the nest folds into the exponent's f32
    argument (`attention-scale-fold`): the softmax's input is the scores
    divided by (or multiplied by) a positive float constant whose reciprocal
    is not exact (an exact one is a multiply already, `exact_reciprocal`).
    The reference rounds s / c to its type; the nest computes s * (1 / c) in
    f32, closer to the exact value than that rounding, which the reference's
    error bound carries. None when there is no such scale or the fold is
    off."""
    softmax, scores = group.softmax, group.scores
    if not group.scale_fold or softmax is None or scores is None:
        return None
    op = softmax.input.owner
    if not isinstance(op, Operation) or op.operands[0] is not scores.result:
        return None
    found = _constant_scale(op)
    if found is None or found[0] < 0 or exact_reciprocal(op) is not None:
        return None
    return 1.0 / found[0] if isinstance(op, tv.DivOp) else found[0]


def attention_remark(group: AttentionGroup) -> str:
    """The remark of a fused nest: its blocks, the ops it computes and its
    decisions (where the row sums are taken, a scale as a multiply)."""
    frame = "x".join(str(e) for e in group.frame)
    names = ", ".join(m.name for m in group.members)
    tiling = group.tiling
    if tiling.cube_sum:
        sums = (
            f"row sums on the cube (p times ones: estimated {tiling.step:.0f} "
            f"cycles per key step, {tiling.vector_step:.0f} on the vector unit)"
        )
    else:
        sums = "row sums on the vector unit"
    scaled = [
        f"{m.name} by {1 / r:g} as * {r:g} (exact)"
        for m in group.members
        if group.scale_multiply and (r := exact_reciprocal(m)) is not None
    ]
    factor = folded_scale(group)
    if factor is not None:
        scaled.append(
            f"the scale folded into the exponent (s * {factor:.6g} in f32, no "
            "f16 division)"
        )
    if tiling.f32_max:
        scaled.append("row maxima from the f32 scores by blocks")
    if tiling.prefetch:
        scaled.append("masks loaded with the K and V blocks")
    parts = [sums, *scaled]
    keys = cast(int, group.frame[-1])
    if tiling.split > 1:
        parts.append(
            f"keys split in {tiling.split} ranges of {keys // tiling.split} per "
            f"query block, combined after a sync_all in tiles of "
            f"{tiling.combine_rows} rows (estimated {tiling.estimate:.0f} cycles, "
            f"{tiling.other:.0f} without the split)"
        )
    elif tiling.other_split > 1:
        parts.append(
            f"no key split (estimated {tiling.estimate:.0f} cycles, "
            f"{tiling.other:.0f} with the keys in {tiling.other_split} ranges)"
        )
    return (
        f"fused attention ({names}) as one nest over {frame}: query blocks of "
        f"{tiling.br} rows, key blocks of {tiling.bc}, online softmax in ub; the "
        f"scores stay on chip; {'; '.join(parts)}"
    )


def is_attention(group: Group) -> bool:
    return isinstance(group, AttentionGroup)
