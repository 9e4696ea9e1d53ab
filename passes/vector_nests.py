"""Vector loop nests of `tv-to-tile` (docs/tiling.md): the nest of a MAP or ROW
group of passes/tv_fusion.py, built before the group's root op.

- A MAP group is one nest over its frame; every output tile is stored where it
  is computed.
- A `ROW` group loops over its other dims outside and over its reduced dims in
  *passes* inside (each pass computes the reductions whose inputs are ready);
  when the reduced dims fit in one tile ("resident") there is a single body and
  every value is loaded and computed once.
- A softmax over non-resident rows keeps a running maximum and sum (online
  softmax) and normalises in a later pass.

Loops, tails, scopes, loads and stores, and the elementwise ops are those of
passes/nest_builder.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import IntegerType, bf16, f16, f32, i8, i16, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import TileType

from .located_builder import LocatedBuilder
from .nest_builder import (
    TILE_OPS,
    GmBuffers,
    NestBuilder,
    OperandRequest,
    TileRequest,
    op_suffix,
)
from .tiling_model import VectorTiling
from .tv_fusion import ExtentAnalysis, Group, Mapping, static_extent, tensor_type


def reduce_op_type(op: Operation) -> type[tile.TileReduceOp]:
    return cast(type[tile.TileReduceOp], TILE_OPS[op_suffix(op)])


class VectorNest(NestBuilder):
    """Builds the nest of a MAP or ROW group (see the module doc)."""

    def __init__(
        self,
        group: Group,
        extents: ExtentAnalysis,
        gm: GmBuffers,
        builder: LocatedBuilder,
        sum_lanes: int = 0,
    ):
        super().__init__(group, extents, gm, builder)
        self.sum_lanes = sum_lanes
        """f16 elements one vector reduction sums in f32 and rounds once (a
        repeat); a longer or other f16 sum accumulates in f32 (0: always)."""
        self.resident = True
        self._stages: dict[SSAValue, int] = {}
        self._softmax_stats: dict[Operation, tuple[SSAValue, SSAValue]] = {}

    def _requests(self, op: Operation, mapping: Mapping) -> list[OperandRequest]:
        if isinstance(op, tv.ReduceOp):
            assert self.resident, "a non-resident reduction comes from its pass"
            identity = self.group.identity()
            return [TileRequest(op.input, identity, self._reduce_type(op, True))]
        if isinstance(op, tv.SoftmaxOp):
            return [TileRequest(op.input, mapping, f32)]
        return super()._requests(op, mapping)

    def _compute(
        self,
        at: InsertPoint,
        op: Operation,
        mapping: Mapping,
        operands: Sequence[SSAValue],
    ) -> SSAValue:
        if isinstance(op, tv.ReduceOp):
            return self._resident_reduce(at, op, operands[0])
        if isinstance(op, tv.SoftmaxOp):
            return self._softmax(at, op, operands[0])
        return super()._compute(at, op, mapping, operands)

    # Reductions -----------------------------------------------------------------------

    def _reduce_type(self, op: tv.ReduceOp, resident: bool) -> Attribute:
        """The type a reduction accumulates in: f32 for sums of 16-bit floats that
        one vector reduction does not cover (more than one step, or a row longer
        than `sum_lanes`, or along a column, which tile-to-hw sums pairwise in the
        element type: partial sums could round and overflow where tv's f32 sum
        does not), i32 for i8 sums."""
        element_type = tensor_type(op.input).element_type
        axes_in_tile = [
            d
            for d in self.group.reduced
            if d in self.tile_dims and self.spans(op.input, self.group.identity(), d)
        ]
        if element_type == i8:
            return i32 if isinstance(op, tv.ReduceSumOp) else i16
        if element_type == bf16:
            return f32
        if element_type == f16 and isinstance(op, tv.ReduceSumOp):
            last = self.tile_dims[-1]
            one_repeat = axes_in_tile == [last] and (
                (extent := static_extent(self.group.frame[last])) is not None
                and extent <= self.sum_lanes
            )
            return f16 if resident and (not axes_in_tile or one_repeat) else f32
        return element_type

    def _reduce_tile(
        self, at: InsertPoint, op_type: type[tile.TileReduceOp], source: SSAValue
    ) -> SSAValue:
        """Reduce `source` along the reduced tile dims it spans."""
        value = source
        for dim in sorted(self.group.reduced):
            if (
                dim in self.tile_dims
                and cast(TileType, value.type).get_shape()[dim - self.lead] > 1
            ):
                value = self.value(at, op_type(value, dim - self.lead))
        return value

    def _resident_reduce(
        self, at: InsertPoint, op: tv.ReduceOp, source: SSAValue
    ) -> SSAValue:
        """A reduction of a resident tile `source` (in `_reduce_type`)."""
        value = self._reduce_tile(at, reduce_op_type(op), source)
        return self.to_storage(at, value, tensor_type(op.result).element_type)

    def _softmax(self, at: InsertPoint, op: tv.SoftmaxOp, x: SSAValue) -> SSAValue:
        """Softmax of the f32 tile `x`, from the pass's statistics if it has them."""
        if op in self._softmax_stats:
            maximum, total = self._softmax_stats[op]
            shifted = self.value(at, tile.SubOp(x, maximum))
            exponent = self.value(at, tile.ExpOp(shifted))
        else:
            maximum = self._reduce_tile(at, tile.ReduceMaxOp, x)
            shifted = self.value(at, tile.SubOp(x, maximum))
            exponent = self.value(at, tile.ExpOp(shifted))
            total = self._reduce_tile(at, tile.ReduceSumOp, exponent)
        value = self.value(at, tile.DivOp(exponent, total))
        return self.to_storage(at, value, tensor_type(op.result).element_type)

    # Vector nests ---------------------------------------------------------------------

    def emit(self, tiling: VectorTiling, resident: bool, hoist: bool = True) -> None:
        """The nest of a MAP or ROW group with this tile. Without `hoist`, a
        resident nest loads its loop-invariant tiles (layernorm's gamma and
        beta) in the loop, after the tiles that vary: for a loop each core runs
        at most once, their loads then queue behind the first tile's on MTE2
        and overlap its vector work instead of delaying it."""
        group = self.group
        for dim in range(group.rank):
            self.steps[dim] = 1
        for dim, step, physical in zip(
            self.tile_dims, tiling.steps, tiling.physical, strict=True
        ):
            self.steps[dim] = step
            self.physical[dim] = physical
        self.resident = resident or not group.reduced
        if self.resident:
            self.hoist = hoist

            def body(at: InsertPoint, _: list[SSAValue]) -> list[SSAValue]:
                for value in group.outputs:
                    self.store(at, value, self.tile_of(value, self.mapping_of(value)))
                return []

            self.frame_loops(self.top, range(group.rank), [], body)
            return
        outer_dims = [d for d in range(group.rank) if d not in group.reduced]

        def outer_body(at: InsertPoint, _: list[SSAValue]) -> list[SSAValue]:
            self._passes(at)
            for value in group.outputs:
                mapping = group.mapping[value]
                if not self.spans_reduced(value, mapping):
                    self.store(at, value, self.tile_of(value, mapping))
            return []

        self.frame_loops(self.top, outer_dims, [], outer_body)

    def stage(self, value: SSAValue) -> int:
        """For a value varying along the reduced dims, the pass that computes it;
        for another value, the number of passes it waits for."""
        stages = self._stages
        stack = [value]
        while stack:
            top = stack[-1]
            if top in stages:
                stack.pop()
                continue
            operands: list[SSAValue] = []
            if self.is_member(top):
                owner = cast(Operation, top.owner)
                operands = [
                    o for o in owner.operands if isinstance(o.type, tv.TensorViewType)
                ]
                if isinstance(owner, tv.ReduceOp | tv.SoftmaxOp):
                    operands = operands[:1]
            missing = [o for o in operands if o not in stages]
            if missing:
                stack.extend(missing)
                continue
            stage = max((stages[o] for o in operands), default=0)
            if isinstance(top.owner, tv.ReduceOp | tv.SoftmaxOp) and operands:
                stage += 1
            stages[top] = stage
            stack.pop()
        return stages[value]

    def pass_count(self) -> int:
        """How many passes over the reduced dims a non-resident nest makes."""
        stages = [
            self.stage(op.operands[0])
            for op in self.group.members
            if isinstance(op, tv.ReduceOp | tv.SoftmaxOp)
        ]
        stages += [
            self.stage(v)
            for v in self.group.outputs
            if self.spans_reduced(v, self.group.mapping[v])
        ]
        return max(stages, default=0) + 1

    def _passes(self, at: InsertPoint) -> None:
        group = self.group
        reduced_dims = sorted(group.reduced)
        for index in range(self.pass_count()):
            reductions = [
                op
                for op in group.members
                if isinstance(op, tv.ReduceOp | tv.SoftmaxOp)
                and self.stage(op.operands[0]) == index
            ]
            outputs = [
                v
                for v in group.outputs
                if self.spans_reduced(v, group.mapping[v]) and self.stage(v) == index
            ]
            if not reductions and not outputs:
                continue
            self._one_pass(at, reduced_dims, reductions, outputs)

    def _one_pass(
        self,
        at: InsertPoint,
        reduced_dims: Sequence[int],
        reductions: Sequence[Operation],
        outputs: Sequence[SSAValue],
    ) -> None:
        """Loop over the reduced dims once: accumulate `reductions`, store
        `outputs`; afterwards the reductions' results are in the outer scope."""
        group = self.group
        inits: list[SSAValue] = []
        for op in reductions:
            inits += self._accumulator_inits(at, op)

        outer = self.scopes[-1]

        def body(inner: InsertPoint, accumulators: list[SSAValue]) -> list[SSAValue]:
            updated: list[SSAValue] = []
            position = 0
            for op in reductions:
                count = 2 if isinstance(op, tv.SoftmaxOp) else 1
                updated += self._accumulate(
                    inner, op, accumulators[position : position + count]
                )
                position += count
            for value in outputs:
                self.store(inner, value, self.tile_of(value, group.mapping[value]))
            return updated

        finals = self.frame_loops(at, reduced_dims, inits, body)
        position = 0
        for op in reductions:
            if isinstance(op, tv.SoftmaxOp):
                self._softmax_stats[op] = (finals[position], finals[position + 1])
                position += 2
                continue
            element_type = tensor_type(op.results[0]).element_type
            value = self.to_storage(at, finals[position], element_type)
            key = (op.results[0], group.mapping[op.results[0]], element_type)
            outer.cache[key] = value
            self.set_home(key[0], key[1], outer)
            position += 1

    def _accumulator_inits(self, at: InsertPoint, op: Operation) -> list[SSAValue]:
        identity = self.group.identity()
        if isinstance(op, tv.SoftmaxOp):
            tile_type, dynamic = self.tile_type(op.input, identity, f32, reduced=True)
            return [
                self.value(
                    at,
                    tile.FillOp(self.constant(float("-inf"), f32), tile_type, dynamic),
                ),
                self.value(
                    at, tile.FillOp(self.constant(0.0, f32), tile_type, dynamic)
                ),
            ]
        assert isinstance(op, tv.ReduceOp)
        element_type = self._reduce_type(op, False)
        tile_type, dynamic = self.tile_type(
            op.input, identity, element_type, reduced=True
        )
        start = _reduction_identity(op, element_type)
        return [
            self.value(
                at, tile.FillOp(self.constant(start, element_type), tile_type, dynamic)
            )
        ]

    def _accumulate(
        self, at: InsertPoint, op: Operation, accumulators: Sequence[SSAValue]
    ) -> list[SSAValue]:
        identity = self.group.identity()
        if isinstance(op, tv.SoftmaxOp):
            maximum, total = accumulators
            x = self.tile_as(op.input, identity, f32)
            local = self._reduce_tile(at, tile.ReduceMaxOp, x)
            new_max = self.value(at, tile.MaxOp(maximum, local))
            shifted = self.value(at, tile.SubOp(x, new_max))
            exponent = self.value(at, tile.ExpOp(shifted))
            local_sum = self._reduce_tile(at, tile.ReduceSumOp, exponent)
            correction = self.value(
                at, tile.ExpOp(self.value(at, tile.SubOp(maximum, new_max)))
            )
            rescaled = self.value(at, tile.MulOp(total, correction))
            return [new_max, self.value(at, tile.AddOp(rescaled, local_sum))]
        assert isinstance(op, tv.ReduceOp)
        (accumulator,) = accumulators
        element_type = cast(TileType, accumulator.type).element_type
        source = self.tile_as(op.input, identity, element_type)
        partial = self._reduce_tile(at, reduce_op_type(op), source)
        combine = {
            tv.ReduceSumOp: tile.AddOp,
            tv.ReduceMaxOp: tile.MaxOp,
            tv.ReduceMinOp: tile.MinOp,
        }[type(op)]
        return [self.value(at, combine(accumulator, partial))]


def _reduction_identity(op: tv.ReduceOp, element_type: Attribute) -> int | float:
    if isinstance(op, tv.ReduceSumOp):
        return 0.0 if tile.is_float(element_type) else 0
    low = isinstance(op, tv.ReduceMaxOp)
    if tile.is_float(element_type):
        return float("-inf") if low else float("inf")
    bits = cast(IntegerType, element_type).width.data
    return -(2 ** (bits - 1)) if low else 2 ** (bits - 1) - 1
