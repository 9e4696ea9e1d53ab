"""Loop nests of `tile` ops for the groups of `tv-to-tile` (docs/tiling.md).

`NestEmitter` builds the nest of one group (passes/tv_fusion.py) before the
group's root op:

- Every frame dim is a loop (`scf.for` from 0 to its extent); the last one or two
  frame dims are *tile dims* (the tile's extent along them is the step), the
  others step by 1. A loop with one trip is not emitted.
- Tails: the valid extent of a tile along a dim is `min(step, extent - offset)`,
  computed with `arith.subi`, `arith.cmpi slt` and `arith.select`; it is a static
  number wherever the step divides a static extent (or covers it).
- A value's tile spans the tile dims its mapping places it on with an extent
  other than 1; along the others it has extent 1 and broadcasts.
- A `ROW` group loops over its other dims outside and over its reduced dims in
  *passes* inside (each pass computes the reductions whose inputs are ready);
  when the reduced dims fit in one tile ("resident") there is a single body and
  every value is loaded and computed once.
- bf16 values compute in f32 and i8 values in i16 (the vector unit has neither),
  and are cast back after each op, so they round exactly as `tv` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    UnknownLoc,
    bf16,
    f16,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pypto_mlir.interp.tensor_view import round_to_element_type

from .tiling_model import MatmulTiling, VectorTiling
from .tv_fusion import (
    Extent,
    ExtentAnalysis,
    Group,
    GroupKind,
    Mapping,
    static_extent,
    tensor_type,
)

Valid = int | SSAValue
"""A valid extent: static, or computed at run time."""

TILE_OPS: dict[str, type[Operation]] = {
    op.name.removeprefix("tile."): op
    for op in (*tile.UNARY_OPS, *tile.BINARY_OPS, *tile.REDUCE_OPS)
}
"""The tile op of each tv elementwise op and reduction, by suffix (`exp`, ...)."""


def reduce_op_type(op: Operation) -> type[tile.TileReduceOp]:
    return cast(type[tile.TileReduceOp], TILE_OPS[op_suffix(op)])


def compute_type(element_type: Attribute) -> Attribute:
    """The type the vector unit computes a value of `element_type` in."""
    if element_type == bf16:
        return f32
    if element_type == i8:
        return i16
    return element_type


def op_suffix(op: Operation) -> str:
    return op.name.split(".", 1)[1]


_LOCATION: ContextVar[Attribute | None] = ContextVar("nest_location", default=None)
"""The location given to the ops a `Cursor` inserts (that of the tv op they
implement), so that a later pass that refuses one reports the kernel's op."""


@contextmanager
def located(location: Attribute) -> Iterator[None]:
    """Ops inserted inside get `location` (unless they already have one)."""
    token = _LOCATION.set(location)
    try:
        yield
    finally:
        _LOCATION.reset(token)


class Cursor:
    """Inserts ops at the end of a block, or before an anchor op; they get the
    location of the tv op being lowered (`located`)."""

    def __init__(self, block: Block, before: Operation | None = None):
        self.block = block
        self.before = before

    def insert(self, op: Operation) -> Operation:
        location = _LOCATION.get()
        if location is not None and isinstance(op.location, UnknownLoc):
            op.location = location
        if self.before is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.before)
        return op

    def value(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]


@dataclass
class Scope:
    """Where values of one loop level are emitted, and those already emitted."""

    cursor: Cursor
    dims: frozenset[int] = frozenset()
    """The frame dims the loops of this level iterate over."""
    cache: dict[tuple[SSAValue, Mapping, Attribute], SSAValue] = field(
        default_factory=dict[tuple[SSAValue, Mapping, Attribute], SSAValue]
    )


@dataclass
class GmBuffers:
    """Where tensors are in GM: the memref to load a value from, and the memrefs
    each group output is stored to."""

    source: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    targets: dict[SSAValue, list[SSAValue]] = field(
        default_factory=dict[SSAValue, list[SSAValue]]
    )


@dataclass(frozen=True)
class Segment:
    """A range of a matmul dim tiled by L1 blocks of `factor` base blocks."""

    start: Valid
    end: Valid
    factor: int
    full: bool
    """Every base block of the range is whole (its valid extent is the step)."""


class NestEmitter:
    """Builds the loop nest of one group at `top` (see the module doc)."""

    def __init__(
        self,
        group: Group,
        extents: ExtentAnalysis,
        gm: GmBuffers,
        top: Cursor,
        sum_lanes: int = 0,
    ):
        self.group = group
        self.sum_lanes = sum_lanes
        """f16 elements one vector reduction sums in f32 and rounds once (a
        repeat); a longer or other f16 sum accumulates in f32 (0: always)."""
        self.extents = extents
        self.gm = gm
        self.top = top
        rank = group.rank
        tile_rank = 2 if group.kind == GroupKind.MATMUL else min(rank, 2)
        self.lead = rank - tile_rank
        self.tile_dims = tuple(range(self.lead, rank))
        self.steps: dict[int, int] = {}
        self.physical: dict[int, int] = {}
        self.index: dict[int, SSAValue] = {}
        self.valid: dict[int, Valid] = {}
        self.scopes: list[Scope] = [Scope(top)]
        """Outermost first: the nest's top, then one per loop being built."""
        self.resident = True
        self._homes: dict[tuple[SSAValue, Mapping], Scope] = {}
        """Where the results of a pass's reductions were put."""
        self._constants: dict[tuple[str, Attribute], SSAValue] = {}
        self._expanded: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
        self._stages: dict[SSAValue, int] = {}
        self._softmax_stats: dict[Operation, tuple[SSAValue, SSAValue]] = {}

    # Constants and scalar arithmetic ---------------------------------------------------

    def constant(self, value: int | float, type_: Attribute | None = None) -> SSAValue:
        """An `arith.constant` (index by default), emitted once before the nest."""
        type_ = IndexType() if type_ is None else type_
        key = (repr(value), type_)  # repr tells -0.0 from 0.0
        if key not in self._constants:
            if isinstance(type_, IndexType | IntegerType):
                attr: Attribute = IntegerAttr(int(value), type_)
            else:
                attr = FloatAttr(float(value), cast(AnyFloat, type_))
            self._constants[key] = self.top.value(arith.ConstantOp(attr))
        return self._constants[key]

    def index_value(self, extent: Valid) -> SSAValue:
        return self.constant(extent) if isinstance(extent, int) else extent

    def add(self, cursor: Cursor, a: Valid, b: int) -> Valid:
        if isinstance(a, int):
            return a + b
        if b == 0:
            return a
        return cursor.value(arith.AddiOp(a, self.constant(b)))

    def tail(
        self, cursor: Cursor, extent: Valid, offset: Valid, step: int, aligned: bool
    ) -> Valid:
        """The valid extent `min(step, extent - offset)` of a tile at `offset`;
        `aligned` says offsets are multiples of `step`."""
        if isinstance(extent, int) and isinstance(offset, int):
            return min(step, extent - offset)
        if isinstance(extent, int) and aligned and extent % step == 0:
            return step
        left = cursor.value(
            arith.SubiOp(self.index_value(extent), self.index_value(offset))
        )
        step_value = self.constant(step)
        less = cursor.value(arith.CmpiOp(left, step_value, "slt"))
        return cursor.value(arith.SelectOp(less, left, step_value))

    # Loops ----------------------------------------------------------------------------

    def loop(
        self,
        cursor: Cursor,
        start: Valid,
        end: Valid,
        step: int,
        inits: Sequence[SSAValue],
        body: Callable[[Cursor, Valid, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """`for iv = start to end step step` carrying `inits`; a static single trip
        is emitted without a loop (iv is then a static int)."""
        if isinstance(start, int) and isinstance(end, int) and end - start <= step:
            if end <= start:
                return list(inits)
            return body(cursor, start, list(inits))
        block = Block(arg_types=[IndexType(), *[v.type for v in inits]])
        inner = Cursor(block)
        results = body(inner, block.args[0], list(block.args[1:]))
        inner.insert(scf.YieldOp(*results))
        loop = scf.ForOp(
            self.index_value(start),
            self.index_value(end),
            self.constant(step),
            inits,
            block,
        )
        cursor.insert(loop)
        return list(loop.results)

    def frame_loops(
        self,
        cursor: Cursor,
        dims: Sequence[int],
        inits: Sequence[SSAValue],
        body: Callable[[Cursor, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """Nested loops over frame `dims` (outermost first); sets `index` and
        `valid` of each dim for `body`."""
        if not dims:
            return body(cursor, list(inits))
        dim, rest = dims[0], dims[1:]
        extent = self.group.frame[dim]
        step = self.steps[dim]

        def level(inner: Cursor, iv: Valid, iters: list[SSAValue]) -> list[SSAValue]:
            self.index[dim] = self.index_value(iv)
            self.valid[dim] = self.tail(inner, extent, iv, step, True)
            if isinstance(iv, int):
                return self.frame_loops(inner, rest, iters, body)
            self.scopes.append(Scope(inner, frozenset([dim])))
            results = self.frame_loops(inner, rest, iters, body)
            self.scopes.pop()
            return results

        return self.loop(cursor, 0, extent, step, inits, level)

    # Tiles of values ------------------------------------------------------------------

    def spans(self, value: SSAValue, mapping: Mapping, dim: int) -> bool:
        """Whether `value` varies along frame dim `dim`."""
        if dim not in mapping:
            return False
        return self.extents.of(value)[mapping.index(dim)] != 1

    def spans_reduced(self, value: SSAValue, mapping: Mapping) -> bool:
        return any(self.spans(value, mapping, d) for d in self.group.reduced)

    def tile_type(
        self,
        value: SSAValue,
        mapping: Mapping,
        element_type: Attribute,
        space: MemorySpace = MemorySpace.UB,
        reduced: bool = False,
    ) -> tuple[TileType, list[SSAValue]]:
        """The tile of `value` at the current position and its dynamic valid
        extents; `reduced` gives extent 1 along the reduced dims."""
        shape: list[int] = []
        valid: list[int] = []
        dynamic: list[SSAValue] = []
        for dim in self.tile_dims:
            if not self.spans(value, mapping, dim) or (
                reduced and dim in self.group.reduced
            ):
                shape.append(1)
                valid.append(1)
                continue
            shape.append(self.physical[dim])
            extent = self.valid[dim]
            if isinstance(extent, int):
                valid.append(extent)
            else:
                valid.append(DYNAMIC_INDEX)
                dynamic.append(extent)
        return TileType(shape, element_type, space, valid), dynamic

    def gm_view(
        self, buffer: SSAValue, value: SSAValue, mapping: Mapping
    ) -> tuple[SSAValue, list[int | None]]:
        """`buffer` (holding `value`) with a unit dim inserted for each tile dim
        `value` lacks, so that a tile load or store can address it; and the frame
        dim of each of its dims (None for the inserted ones)."""
        target = [d for d in mapping if d < self.lead] + list(self.tile_dims)
        if target == list(mapping):
            return buffer, list(mapping)
        key = (buffer, tuple(target))
        frames: list[int | None] = [d if d in mapping else None for d in target]
        if key in self._expanded:
            return self._expanded[key], frames
        memref_type = cast(MemRefType[Attribute], buffer.type)
        extents = self.extents.of(value)
        groups: list[list[int]] = []
        pending: list[int] = []
        for position, dim in enumerate(target):
            if dim in mapping:
                groups.append([*pending, position])
                pending = []
            elif groups:
                groups[-1].append(position)
            else:
                pending.append(position)
        sizes: list[Extent] = [
            extents[mapping.index(d)] if d in mapping else 1 for d in target
        ]
        layout: Attribute = NoneAttr()
        if not isinstance(memref_type.layout, NoneAttr):
            strides = memref_type.get_strides() or [None] * len(mapping)
            expanded: list[int | None] = []
            for dim in target:
                source_dim = mapping.index(dim) if dim in mapping else None
                if source_dim is not None:
                    expanded.append(strides[source_dim])
                else:
                    expanded.append(1)
            layout = StridedLayoutAttr(expanded, memref_type.get_offset())
        result_type = MemRefType(
            memref_type.get_element_type(),
            [s if isinstance(s, int) else DYNAMIC_INDEX for s in sizes],
            layout,
        )
        static = [s if isinstance(s, int) else DYNAMIC_INDEX for s in sizes]
        op = memref.ExpandShapeOp.create(
            operands=[buffer, *[s for s in sizes if isinstance(s, SSAValue)]],
            result_types=[result_type],
            properties={
                "reassociation": _reassociation(groups),
                "static_output_shape": _i64_array(static),
            },
        )
        view = self.top.value(op)
        self._expanded[key] = view
        return view, frames

    def window(
        self, value: SSAValue, mapping: Mapping, frames: Sequence[int | None]
    ) -> list[SSAValue]:
        """Indices of the current tile of `value` in a GM view with these frame dims."""
        indices: list[SSAValue] = []
        for dim in frames:
            if dim is None or not self.spans(value, mapping, dim):
                indices.append(self.constant(0))
            else:
                indices.append(self.index[dim])
        return indices

    def load(self, cursor: Cursor, value: SSAValue, mapping: Mapping) -> SSAValue:
        buffer, frames = self.gm_view(self.gm.source[value], value, mapping)
        element_type = tensor_type(value).element_type
        tile_type, dynamic = self.tile_type(value, mapping, element_type)
        indices = self.window(value, mapping, frames)
        return cursor.value(tile.LoadOp(buffer, indices, tile_type, dynamic))

    def mapping_of(self, value: SSAValue) -> Mapping:
        """A member's mapping; a GM value copied by the group aligns trailing dims."""
        if value in self.group.mapping:
            return self.group.mapping[value]
        return self._leaf_mapping(value)

    def store(self, cursor: Cursor, value: SSAValue, tile_value: SSAValue) -> None:
        mapping = self.mapping_of(value)
        for target in self.gm.targets[value]:
            buffer, frames = self.gm_view(target, value, mapping)
            indices = self.window(value, mapping, frames)
            cursor.insert(tile.StoreOp(tile_value, buffer, indices))

    def _leaf_mapping(self, value: SSAValue) -> Mapping:
        rank = tensor_type(value).get_num_dims()
        return tuple(range(self.group.rank - rank, self.group.rank))

    def scope_for(self, value: SSAValue, mapping: Mapping) -> Scope:
        """The innermost loop level over a dim `value` varies along: the value is
        computed once per iteration of that loop (loop-invariant tiles, such as
        a bias row in a loop over rows, are loaded before it)."""
        spanned = {d for d in range(self.group.rank) if self.spans(value, mapping, d)}
        for scope in reversed(self.scopes):
            if scope.dims & spanned:
                return scope
        return self.scopes[0]

    def _depth(self, scope: Scope) -> int:
        return next(i for i, s in enumerate(self.scopes) if s is scope)

    def placement(self, value: SSAValue, mapping: Mapping) -> Scope:
        """Where the tile of `value` is computed: the innermost loop over a dim it
        varies along, or deeper if an operand is computed deeper (a reduction's
        result comes from its input's level)."""
        home = self._homes.get((value, mapping))
        if home is not None and any(s is home for s in self.scopes):
            return home
        scope = self.scope_for(value, mapping)
        owner = value.owner
        if isinstance(owner, Operation) and owner in self.group.members:
            for operand, operand_mapping in self._operand_mappings(owner, mapping):
                inner = self.placement(operand, operand_mapping)
                if self._depth(inner) > self._depth(scope):
                    scope = inner
        return scope

    def _operand_mappings(
        self, op: Operation, mapping: Mapping
    ) -> list[tuple[SSAValue, Mapping]]:
        """The tensor operands a member's tile ops read as tiles, and their mappings."""
        if isinstance(op, tv.ReduceOp | tv.SoftmaxOp):
            return [(op.operands[0], self.group.identity())]
        if isinstance(op, tv.TransposeOp | tv.FillOp):
            return []
        return [
            (o, self.operand_mapping(o, mapping))
            for o in op.operands
            if isinstance(o.type, tv.TensorViewType)
        ]

    def lookup(self, key: tuple[SSAValue, Mapping, Attribute]) -> SSAValue | None:
        for scope in reversed(self.scopes):
            if key in scope.cache:
                return scope.cache[key]
        return None

    def tile_of(self, value: SSAValue, mapping: Mapping) -> SSAValue:
        """The tile of `value` (in its element type) at the current position."""
        element_type = tensor_type(value).element_type
        key = (value, mapping, element_type)
        found = self.lookup(key)
        if found is not None:
            return found
        scope = self.placement(value, mapping)
        owner = value.owner
        if isinstance(owner, Operation) and owner in self.group.members:
            result = self.compute(scope.cursor, owner, mapping)
        else:
            result = self.load(scope.cursor, value, mapping)
        scope.cache[key] = result
        return result

    def tile_as(
        self, value: SSAValue, mapping: Mapping, element_type: Attribute
    ) -> SSAValue:
        """The tile of `value` converted to `element_type`."""
        source = self.tile_of(value, mapping)
        if cast(TileType, source.type).element_type == element_type:
            return source
        key = (value, mapping, element_type)
        found = self.lookup(key)
        if found is not None:
            return found
        scope = self.placement(value, mapping)
        result = scope.cursor.value(tile.CastOp(source, element_type))
        scope.cache[key] = result
        return result

    def scalar_as(
        self, cursor: Cursor, scalar: SSAValue, element_type: Attribute
    ) -> SSAValue:
        """A scalar operand in `element_type`: itself, a constant, a sign-extended
        integer (an i8 scalar of an i8 tensor computed in i16), or a one-element
        tile converted by `tile.cast` (which rounds as tv does)."""
        if scalar.type == element_type:
            return scalar
        owner = scalar.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(
            owner.value, FloatAttr | IntegerAttr
        ):
            return self.constant(owner.value.value.data, element_type)
        if isinstance(scalar.type, IntegerType) and isinstance(
            element_type, IntegerType
        ):
            return cursor.value(arith.ExtSIOp(scalar, element_type))
        ones = TileType([1] * len(self.tile_dims), scalar.type, MemorySpace.UB)
        filled = cursor.value(tile.FillOp(scalar, ones))
        return cursor.value(tile.CastOp(filled, element_type))

    @staticmethod
    def to_storage(
        cursor: Cursor, value: SSAValue, element_type: Attribute
    ) -> SSAValue:
        if cast(TileType, value.type).element_type == element_type:
            return value
        return cursor.value(tile.CastOp(value, element_type))

    # Ops ------------------------------------------------------------------------------

    @staticmethod
    def operand_mapping(operand: SSAValue, mapping: Mapping) -> Mapping:
        """The mapping of an elementwise op's operand: numpy broadcasting aligns
        its dims with the result's trailing ones."""
        rank = tensor_type(operand).get_num_dims()
        return mapping[len(mapping) - rank :]

    def compute(self, cursor: Cursor, op: Operation, mapping: Mapping) -> SSAValue:
        """Emit the tile ops of group member `op`, whose result has `mapping`
        (located at `op`)."""
        with located(op.location):
            return self._compute(cursor, op, mapping)

    def _compute(self, cursor: Cursor, op: Operation, mapping: Mapping) -> SSAValue:
        result_type = tensor_type(op.results[0]).element_type
        if isinstance(op, tv.UnaryOp):
            ctype = compute_type(result_type)
            source = self.tile_as(op.input, mapping, ctype)
            op_type = cast(type[tile.TileUnaryOp], TILE_OPS[op_suffix(op)])
            value = cursor.value(op_type(source))
            return self.to_storage(cursor, value, result_type)
        if (x := tv.silu_input(op)) is not None:
            # x * sigmoid(x) as one silu: muls, exp, adds, div instead of
            # muls, exp, adds, reciprocal, mul (docs/tiling.md, Fusion).
            source = self.tile_as(x, mapping, compute_type(result_type))
            value = cursor.value(tile.SiluOp(source))
            return self.to_storage(cursor, value, result_type)
        if isinstance(op, tv.BinaryOp):
            return self._binary(cursor, op, mapping, result_type)
        if isinstance(op, tv.CastOp):
            source = self.tile_of(op.input, mapping)
            return cursor.value(tile.CastOp(source, result_type))
        if isinstance(op, tv.FillOp):
            scalar_type = op.value.type
            tile_type, dynamic = self.tile_type(op.result, mapping, scalar_type)
            filled = cursor.value(tile.FillOp(op.value, tile_type, dynamic))
            return self.to_storage(cursor, filled, result_type)
        if isinstance(op, tv.TransposeOp):
            return self._transposed_load(cursor, op, mapping)
        if isinstance(op, tv.ReduceOp):
            return self._resident_reduce(cursor, op, mapping)
        if isinstance(op, tv.SoftmaxOp):
            return self._softmax(cursor, op, mapping)
        raise AssertionError(f"{op.name} is not a vector group member")

    def _binary(
        self, cursor: Cursor, op: tv.BinaryOp, mapping: Mapping, result_type: Attribute
    ) -> SSAValue:
        ctype = compute_type(result_type)
        for operand in (op.lhs, op.rhs):
            if (
                not isinstance(operand.type, tv.TensorViewType)
                and tile.is_float(operand.type)
                and operand.type != result_type
                and not _exact_constant(operand, result_type)
            ):
                ctype = f32
        operands: list[SSAValue] = []
        for operand in (op.lhs, op.rhs):
            if isinstance(operand.type, tv.TensorViewType):
                operand_map = self.operand_mapping(operand, mapping)
                operands.append(self.tile_as(operand, operand_map, ctype))
            else:
                operands.append(self.scalar_as(cursor, operand, ctype))
        op_type = cast(type[tile.TileBinaryOp], TILE_OPS[op_suffix(op)])
        value = cursor.value(op_type(operands[0], operands[1]))
        return self.to_storage(cursor, value, result_type)

    def _transposed_load(
        self, cursor: Cursor, op: tv.TransposeOp, mapping: Mapping
    ) -> SSAValue:
        """A tile of `transpose(x)` for x in GM: load the tile of x that holds it
        (through a rank-reducing subview when the two transposed source dims are
        not x's last two) and transpose it in UB."""
        source = op.input
        buffer = self.gm.source[source]
        permutation = op.permutation.get_values()
        rank = len(permutation)
        frame_of = {p: mapping[j] for j, p in enumerate(permutation)}
        rows_src, cols_src = permutation[-2], permutation[-1]
        low, high = sorted((rows_src, cols_src))
        swap = rows_src > cols_src
        element_type = tensor_type(source).element_type
        result_tile, dynamic = self.tile_type(op.result, mapping, element_type)
        shape = list(result_tile.get_shape())
        valid = list(result_tile.get_valid())
        if swap:
            shape.reverse()
            valid.reverse()
            dynamic.reverse()
        load_type = TileType(shape, element_type, MemorySpace.UB, valid)
        source_extents = self.extents.of(source)

        def index_of(dim: int) -> SSAValue:
            frame_dim = frame_of[dim]
            if source_extents[dim] == 1:
                return self.constant(0)
            return self.index[frame_dim]

        if (low, high) == (rank - 2, rank - 1):
            indices = [index_of(d) for d in range(rank)]
            view = buffer
        else:
            view = self._subview_2d(cursor, buffer, source, low, high, index_of)
            indices = [index_of(low), index_of(high)]
        loaded = cursor.value(tile.LoadOp(view, indices, load_type, dynamic))
        if not swap:
            return loaded
        return cursor.value(tile.TransposeOp(loaded))

    def _subview_2d(
        self,
        cursor: Cursor,
        buffer: SSAValue,
        value: SSAValue,
        low: int,
        high: int,
        index_of: Callable[[int], SSAValue],
    ) -> SSAValue:
        """The 2-d slice of `buffer` along dims `low` and `high` at the current
        indices of the other dims."""
        memref_type = cast(MemRefType[Attribute], buffer.type)
        extents = self.extents.of(value)
        rank = memref_type.get_num_dims()
        offsets: list[SSAValue | int] = [
            0 if d in (low, high) else index_of(d) for d in range(rank)
        ]
        sizes: list[SSAValue | int] = [
            extents[d] if d in (low, high) else 1 for d in range(rank)
        ]
        strides = memref_strides(memref_type)
        result_type = MemRefType(
            memref_type.get_element_type(),
            [
                e if isinstance(e, int) else DYNAMIC_INDEX
                for e in (extents[low], extents[high])
            ],
            StridedLayoutAttr([strides[low], strides[high]], None),
        )
        return cursor.value(
            memref.SubviewOp.get(buffer, offsets, sizes, [1] * rank, result_type)
        )

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
        self, cursor: Cursor, op_type: type[tile.TileReduceOp], source: SSAValue
    ) -> SSAValue:
        """Reduce `source` along the reduced tile dims it spans."""
        value = source
        for dim in sorted(self.group.reduced):
            if (
                dim in self.tile_dims
                and cast(TileType, value.type).get_shape()[dim - self.lead] > 1
            ):
                value = cursor.value(op_type(value, dim - self.lead))
        return value

    def _resident_reduce(
        self, cursor: Cursor, op: tv.ReduceOp, mapping: Mapping
    ) -> SSAValue:
        assert self.resident, "a non-resident reduction comes from its pass"
        source = self.tile_as(
            op.input, self.group.identity(), self._reduce_type(op, True)
        )
        value = self._reduce_tile(cursor, reduce_op_type(op), source)
        return self.to_storage(cursor, value, tensor_type(op.result).element_type)

    def _softmax(self, cursor: Cursor, op: tv.SoftmaxOp, mapping: Mapping) -> SSAValue:
        x = self.tile_as(op.input, mapping, f32)
        if op in self._softmax_stats:
            maximum, total = self._softmax_stats[op]
            shifted = cursor.value(tile.SubOp(x, maximum))
            exponent = cursor.value(tile.ExpOp(shifted))
        else:
            maximum = self._reduce_tile(cursor, tile.ReduceMaxOp, x)
            shifted = cursor.value(tile.SubOp(x, maximum))
            exponent = cursor.value(tile.ExpOp(shifted))
            total = self._reduce_tile(cursor, tile.ReduceSumOp, exponent)
        value = cursor.value(tile.DivOp(exponent, total))
        return self.to_storage(cursor, value, tensor_type(op.result).element_type)

    # Vector nests ---------------------------------------------------------------------

    def emit_vector(self, tiling: VectorTiling, resident: bool) -> None:
        """The nest of a MAP or ROW group with this tile."""
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

            def body(cursor: Cursor, _: list[SSAValue]) -> list[SSAValue]:
                for value in group.outputs:
                    self.store(
                        cursor, value, self.tile_of(value, self.mapping_of(value))
                    )
                return []

            self.frame_loops(self.top, range(group.rank), [], body)
            return
        outer_dims = [d for d in range(group.rank) if d not in group.reduced]

        def outer_body(cursor: Cursor, _: list[SSAValue]) -> list[SSAValue]:
            self._passes(cursor)
            for value in group.outputs:
                mapping = group.mapping[value]
                if not self.spans_reduced(value, mapping):
                    self.store(cursor, value, self.tile_of(value, mapping))
            return []

        self.frame_loops(self.top, outer_dims, [], outer_body)

    def stage(self, value: SSAValue) -> int:
        """For a value varying along the reduced dims, the pass that computes it;
        for another value, the number of passes it waits for."""
        if value in self._stages:
            return self._stages[value]
        owner = value.owner
        stage = 0
        if isinstance(owner, Operation) and owner in self.group.members:
            if isinstance(owner, tv.ReduceOp | tv.SoftmaxOp):
                stage = self.stage(owner.operands[0]) + 1
            else:
                stage = max(
                    (
                        self.stage(o)
                        for o in owner.operands
                        if isinstance(o.type, tv.TensorViewType)
                    ),
                    default=0,
                )
        self._stages[value] = stage
        return stage

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

    def _passes(self, cursor: Cursor) -> None:
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
            self._one_pass(cursor, reduced_dims, reductions, outputs)

    def _one_pass(
        self,
        cursor: Cursor,
        reduced_dims: Sequence[int],
        reductions: Sequence[Operation],
        outputs: Sequence[SSAValue],
    ) -> None:
        """Loop over the reduced dims once: accumulate `reductions`, store
        `outputs`; afterwards the reductions' results are in the outer scope."""
        group = self.group
        inits: list[SSAValue] = []
        for op in reductions:
            inits += self._accumulator_inits(cursor, op)

        outer = self.scopes[-1]

        def body(inner: Cursor, accumulators: list[SSAValue]) -> list[SSAValue]:
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

        finals = self.frame_loops(cursor, reduced_dims, inits, body)
        position = 0
        for op in reductions:
            if isinstance(op, tv.SoftmaxOp):
                self._softmax_stats[op] = (finals[position], finals[position + 1])
                position += 2
                continue
            element_type = tensor_type(op.results[0]).element_type
            value = self.to_storage(cursor, finals[position], element_type)
            key = (op.results[0], group.mapping[op.results[0]], element_type)
            outer.cache[key] = value
            self._homes[key[:2]] = outer
            position += 1

    def _accumulator_inits(self, cursor: Cursor, op: Operation) -> list[SSAValue]:
        identity = self.group.identity()
        if isinstance(op, tv.SoftmaxOp):
            tile_type, dynamic = self.tile_type(op.input, identity, f32, reduced=True)
            return [
                cursor.value(
                    tile.FillOp(self.constant(float("-inf"), f32), tile_type, dynamic)
                ),
                cursor.value(tile.FillOp(self.constant(0.0, f32), tile_type, dynamic)),
            ]
        assert isinstance(op, tv.ReduceOp)
        element_type = self._reduce_type(op, False)
        tile_type, dynamic = self.tile_type(
            op.input, identity, element_type, reduced=True
        )
        start = _reduction_identity(op, element_type)
        return [
            cursor.value(
                tile.FillOp(self.constant(start, element_type), tile_type, dynamic)
            )
        ]

    def _accumulate(
        self, cursor: Cursor, op: Operation, accumulators: Sequence[SSAValue]
    ) -> list[SSAValue]:
        identity = self.group.identity()
        if isinstance(op, tv.SoftmaxOp):
            maximum, total = accumulators
            x = self.tile_as(op.input, identity, f32)
            local = self._reduce_tile(cursor, tile.ReduceMaxOp, x)
            new_max = cursor.value(tile.MaxOp(maximum, local))
            shifted = cursor.value(tile.SubOp(x, new_max))
            exponent = cursor.value(tile.ExpOp(shifted))
            local_sum = self._reduce_tile(cursor, tile.ReduceSumOp, exponent)
            correction = cursor.value(
                tile.ExpOp(cursor.value(tile.SubOp(maximum, new_max)))
            )
            rescaled = cursor.value(tile.MulOp(total, correction))
            return [new_max, cursor.value(tile.AddOp(rescaled, local_sum))]
        assert isinstance(op, tv.ReduceOp)
        (accumulator,) = accumulators
        element_type = cast(TileType, accumulator.type).element_type
        source = self.tile_as(op.input, identity, element_type)
        partial = self._reduce_tile(cursor, reduce_op_type(op), source)
        combine = {
            tv.ReduceSumOp: tile.AddOp,
            tv.ReduceMaxOp: tile.MaxOp,
            tv.ReduceMinOp: tile.MinOp,
        }[type(op)]
        return [cursor.value(combine(accumulator, partial))]

    # Matmul nests ---------------------------------------------------------------------

    def emit_matmul(self, tiling: MatmulTiling) -> None:
        """The two-level matmul nest of a MATMUL group, epilogue included."""
        group = self.group
        op = group.matmul
        assert op is not None
        rank = group.rank
        rows, cols = rank - 2, rank - 1
        for dim in range(rank):
            self.steps[dim] = 1
        self.physical = {rows: tiling.m0, cols: tiling.n0}

        def batch_body(cursor: Cursor, _: list[SSAValue]) -> list[SSAValue]:
            for m_segment in self._segments(
                cursor, group.frame[rows], tiling.m0, tiling.fa
            ):
                for n_segment in self._segments(
                    cursor, group.frame[cols], tiling.n0, tiling.fb
                ):
                    self._matmul_blocks(cursor, op, tiling, m_segment, n_segment)
            return []

        self.frame_loops(self.top, range(rank - 2), [], batch_body)

    def _segments(
        self, cursor: Cursor, extent: Extent, base: int, factor: int
    ) -> list[Segment]:
        """The whole L1 blocks of a dim, then the rest in base blocks."""
        if factor == 1:
            return [Segment(0, extent, 1, False)]
        block = base * factor
        if isinstance(extent, int):
            whole = extent - extent % block
        else:
            remainder = cursor.value(arith.RemSIOp(extent, self.constant(block)))
            whole = cursor.value(arith.SubiOp(extent, remainder))
        segments = [Segment(0, whole, factor, True), Segment(whole, extent, 1, False)]
        return [
            s
            for s in segments
            if not (
                isinstance(s.start, int) and isinstance(s.end, int) and s.start >= s.end
            )
        ]

    def _matmul_blocks(
        self,
        cursor: Cursor,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        m_segment: Segment,
        n_segment: Segment,
    ) -> None:
        rows, cols = self.group.rank - 2, self.group.rank - 1
        m, n = self.group.frame[rows], self.group.frame[cols]

        def row_body(c1: Cursor, i: Valid, _: list[SSAValue]) -> list[SSAValue]:
            row_blocks = self._base_blocks(c1, i, m, tiling.m0, m_segment)

            def col_body(c2: Cursor, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
                col_blocks = self._base_blocks(c2, j, n, tiling.n0, n_segment)
                accumulators = self._k_loop(c2, op, tiling, row_blocks, col_blocks)
                for a, row in enumerate(row_blocks):
                    for b, col in enumerate(col_blocks):
                        self.epilogue(c2, op, row, col, accumulators[a][b])
                return []

            self.loop(
                c1,
                n_segment.start,
                n_segment.end,
                tiling.n0 * n_segment.factor,
                [],
                col_body,
            )
            return []

        self.loop(
            cursor,
            m_segment.start,
            m_segment.end,
            tiling.m0 * m_segment.factor,
            [],
            row_body,
        )

    def _base_blocks(
        self, cursor: Cursor, offset: Valid, extent: Extent, base: int, segment: Segment
    ) -> list[tuple[SSAValue, Valid]]:
        """(offset, valid extent) of each base block of the L1 block at `offset`."""
        blocks: list[tuple[SSAValue, Valid]] = []
        for part in range(segment.factor):
            start = self.add(cursor, offset, part * base)
            valid = (
                base if segment.full else self.tail(cursor, extent, start, base, True)
            )
            blocks.append((self.index_value(start), valid))
        return blocks

    def _k_loop(
        self,
        cursor: Cursor,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        row_blocks: list[tuple[SSAValue, Valid]],
        col_blocks: list[tuple[SSAValue, Valid]],
    ) -> list[list[SSAValue]]:
        """Accumulate A @ B over K for every base block of the L1 block in l0c:
        L1 chunks `k1` deep, each feeding `k1 / k0` cube steps. The first chunk
        starts the accumulators; with `k1 > k0` (static K) the full chunks are a
        loop and a partial last chunk follows it, else every chunk is a loop
        iteration with a run-time tail (tile-peel-tails makes it static)."""
        k_extent = self.extents.of(op.lhs)[-2 if op.transpose_a is not None else -1]
        k0, k1 = tiling.k0, tiling.k1
        pad = not (isinstance(k_extent, int) and k_extent % k0 == 0)
        if k1 > k0:
            assert isinstance(k_extent, int), "deep L1 chunks need a static K"
        width = len(col_blocks)

        def chunk(
            inner: Cursor,
            p: Valid,
            valid: Valid,
            accumulators: list[list[SSAValue]] | None,
        ) -> list[list[SSAValue]]:
            return self._k_chunk(
                inner,
                op,
                tiling,
                row_blocks,
                col_blocks,
                self.index_value(p),
                valid,
                pad,
                accumulators,
            )

        def grid(flat: Sequence[SSAValue]) -> list[list[SSAValue]]:
            return [
                list(flat[a * width : (a + 1) * width]) for a in range(len(row_blocks))
            ]

        result = chunk(cursor, 0, self.tail(cursor, k_extent, 0, k1, True), None)
        if isinstance(k_extent, int) and k_extent <= k1:
            return result
        full_end: Valid = k_extent
        if isinstance(k_extent, int) and k1 > k0:
            full_end = k_extent - k_extent % k1

        def body(
            inner: Cursor, p: Valid, accumulators: list[SSAValue]
        ) -> list[SSAValue]:
            # The loop covers whole chunks only when there is a static tail.
            valid = (
                k1 if full_end != k_extent else self.tail(inner, k_extent, p, k1, True)
            )
            return [
                acc for row in chunk(inner, p, valid, grid(accumulators)) for acc in row
            ]

        flat = self.loop(cursor, k1, full_end, k1, [a for r in result for a in r], body)
        result = grid(flat)
        if (
            isinstance(k_extent, int)
            and isinstance(full_end, int)
            and full_end < k_extent
        ):
            result = chunk(cursor, full_end, k_extent - full_end, result)
        return result

    def _k_chunk(
        self,
        cursor: Cursor,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        row_blocks: list[tuple[SSAValue, Valid]],
        col_blocks: list[tuple[SSAValue, Valid]],
        k_offset: SSAValue,
        k_valid: Valid,
        pad: bool,
        accumulators: list[list[SSAValue]] | None,
    ) -> list[list[SSAValue]]:
        """One L1 chunk: load its blocks, then its cube steps in a skewed order
        (the L0 moves of step s + 1 before the matmuls of step s), so that two
        steps' L0 tiles are live at once and MTE1 runs ahead of the cube."""
        ta, tb = op.transpose_a is not None, op.transpose_b is not None
        lhs_l1 = [
            self._operand_l1(
                cursor,
                op.lhs,
                ta,
                row,
                (k_offset, k_valid),
                tiling.m0,
                tiling.k1,
                pad,
                True,
            )
            for row in row_blocks
        ]
        rhs_l1 = [
            self._operand_l1(
                cursor,
                op.rhs,
                tb,
                col,
                (k_offset, k_valid),
                tiling.n0,
                tiling.k1,
                pad,
                False,
            )
            for col in col_blocks
        ]
        steps = -(-k_valid // tiling.k0) if tiling.k1 > tiling.k0 else 1
        assert isinstance(steps, int)
        windowed = tiling.k1 > tiling.k0

        def moves(step: int) -> tuple[list[SSAValue], list[SSAValue]]:
            depth = (step * tiling.k0, tiling.k0) if windowed else None
            return (
                [
                    self._to_l0(cursor, t, MemorySpace.L0A, ta, depth, not ta)
                    for t in lhs_l1
                ],
                [
                    self._to_l0(cursor, t, MemorySpace.L0B, tb, depth, tb)
                    for t in rhs_l1
                ],
            )

        acc = accumulators
        ahead = moves(0)
        for step in range(steps):
            lhs_l0, rhs_l0 = ahead
            if step + 1 < steps:
                ahead = moves(step + 1)
            acc = [
                [
                    cursor.value(
                        tile.MatmulOp(lhs, rhs, None if acc is None else acc[a][b])
                    )
                    for b, rhs in enumerate(rhs_l0)
                ]
                for a, lhs in enumerate(lhs_l0)
            ]
        assert acc is not None
        return acc

    def _operand_l1(
        self,
        cursor: Cursor,
        operand: SSAValue,
        transposed: bool,
        block: tuple[SSAValue, Valid],
        k_block: tuple[SSAValue, Valid],
        size: int,
        k0: int,
        pad: bool,
        is_lhs: bool,
    ) -> SSAValue:
        """Load the base block of a matmul operand into L1 (nz, zero-padded when
        K may be partial): lhs [m, k] or rhs [k, n], as stored (transposed or not)."""
        buffer = self.gm.source[operand]
        element_type = tensor_type(operand).element_type
        (offset, valid), (k_offset, k_valid) = block, k_block
        if is_lhs != transposed:
            dims = [(offset, valid, size), (k_offset, k_valid, k0)]
        else:
            dims = [(k_offset, k_valid, k0), (offset, valid, size)]
        rank = tensor_type(operand).get_num_dims()
        indices = [self.index[d] for d in range(rank - 2)] + [d[0] for d in dims]
        shape = [d[2] for d in dims]
        valid_shape = [v if isinstance(v, int) else DYNAMIC_INDEX for _, v, _ in dims]
        dynamic = [v for _, v, _ in dims if isinstance(v, SSAValue)]
        tile_type = TileType(
            shape,
            element_type,
            MemorySpace.L1,
            valid_shape,
            tile.Layout.NZ,
            "zero" if pad else None,
        )
        return cursor.value(tile.LoadOp(buffer, indices, tile_type, dynamic))

    @staticmethod
    def _to_l0(
        cursor: Cursor,
        source: SSAValue,
        space: MemorySpace,
        transpose: bool,
        depth: tuple[int, int] | None = None,
        k_is_column: bool = True,
    ) -> SSAValue:
        """Move an L1 block to L0, or with `depth` = (offset, size) the window of
        it along K (its columns when `k_is_column`, else its rows)."""
        source_type = cast(TileType, source.type)
        shape, valid = list(source_type.get_shape()), list(source_type.get_valid())
        window = None
        if depth is not None:
            k_dim = 1 if k_is_column else 0
            offset, size = depth
            window = [0, 0]
            window[k_dim] = offset
            shape[k_dim] = size
            valid[k_dim] = min(size, valid[k_dim] - offset)
        if transpose:
            shape, valid = shape[::-1], valid[::-1]
        result_type = TileType(
            shape, source_type.element_type, space, valid, pad=source_type.pad_value
        )
        return cursor.value(tile.MoveOp(source, result_type, transpose, window))

    def epilogue(
        self,
        cursor: Cursor,
        op: tv.MatmulOp,
        row: tuple[SSAValue, Valid],
        col: tuple[SSAValue, Valid],
        accumulator: SSAValue,
    ) -> None:
        """Store a finished base block, after the group's epilogue ops if any."""
        rank = self.group.rank
        self.index[rank - 2], self.valid[rank - 2] = row
        self.index[rank - 1], self.valid[rank - 1] = col
        result = op.result
        element_type = tensor_type(result).element_type
        if self.group.members == [op]:
            self.store(cursor, result, accumulator)
            return
        acc_type = cast(TileType, accumulator.type)
        moved_type = TileType(
            acc_type.get_shape(), element_type, MemorySpace.UB, acc_type.get_valid()
        )
        moved = cursor.value(tile.MoveOp(accumulator, moved_type))
        self.scopes = [Scope(cursor)]
        self.scopes[0].cache[(result, self.group.identity(), element_type)] = moved
        for value in self.group.outputs:
            self.store(cursor, value, self.tile_of(value, self.group.mapping[value]))


def _exact_constant(scalar: SSAValue, element_type: Attribute) -> bool:
    """Whether `scalar` is a float constant that `element_type` holds exactly (so
    the op can run in that type and round as tv does)."""
    owner = scalar.owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(
        owner.value, FloatAttr
    ):
        return False
    value = owner.value.value.data
    if math.isnan(value):
        return False
    stored = round_to_element_type(np.asarray(value, np.float64), element_type)
    return float(stored) == value


def _reduction_identity(op: tv.ReduceOp, element_type: Attribute) -> int | float:
    if isinstance(op, tv.ReduceSumOp):
        return 0.0 if tile.is_float(element_type) else 0
    low = isinstance(op, tv.ReduceMaxOp)
    if tile.is_float(element_type):
        return float("-inf") if low else float("inf")
    bits = cast(IntegerType, element_type).width.data
    return -(2 ** (bits - 1)) if low else 2 ** (bits - 1) - 1


def memref_strides(memref_type: MemRefType[Attribute]) -> list[int | None]:
    """Element strides of each dim (None where not static)."""
    if isinstance(memref_type.layout, NoneAttr):
        strides: list[int | None] = []
        running: int | None = 1
        for extent in reversed(memref_type.get_shape()):
            strides.append(running)
            running = (
                None if running is None or extent == DYNAMIC_INDEX else running * extent
            )
        return strides[::-1]
    found = memref_type.get_strides()
    return list(found) if found is not None else [None] * memref_type.get_num_dims()


def _reassociation(groups: list[list[int]]) -> Attribute:
    return ArrayAttr(ArrayAttr(IntegerAttr(i, i64) for i in group) for group in groups)


def _i64_array(values: Sequence[int]) -> Attribute:
    return DenseArrayBase.from_list(i64, values)
