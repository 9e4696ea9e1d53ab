"""What the loop nests of `tv-to-tile` share (docs/tiling.md): vector nests
(passes/vector_nests.py) and matmul nests (passes/matmul_nests.py) are both built
by a `NestBuilder` subclass.

- Every frame dim is a loop (`scf.for` from 0 to its extent); the last one or two
  frame dims are *tile dims* (the tile's extent along them is the step), the
  others step by 1. A loop with one trip is not emitted.
- Tails: the valid extent of a tile along a dim is `min(step, extent - offset)`,
  computed with `arith.subi`, `arith.cmpi slt` and `arith.select`; it is a static
  number wherever the step divides a static extent (or covers it).
- A value's tile spans the tile dims its mapping places it on with an extent
  other than 1; along the others it has extent 1 and broadcasts.
- A value's tile is computed (or loaded) once, in the innermost loop over a dim
  it varies along (`Scope`), and reused below it.
- Placing and computing a member's tile walk its operands with explicit stacks
  (`placement`, `tile_of`), not Python recursion: a fused chain of any length
  lowers at the default recursion limit, in time linear in its length.
- bf16 values compute in f32 and i8 values in i16 (the vector unit has neither),
  and are cast back after each op, so they round exactly as `tv` does.

Every op of a nest is inserted by one `LocatedBuilder` at an `InsertPoint` (the
nest's top, or the body of a loop being built): the ops implementing a tv op get
its location (`compute`), the others that of the group, so that a later pass that
refuses one reports the kernel's op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
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
    bf16,
    f32,
    i8,
    i16,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType
from pypto_mlir.numerics import round_to_element_type

from .located_builder import LocatedBuilder
from .tv_fusion import (
    Extent,
    ExtentAnalysis,
    Group,
    GroupKind,
    Mapping,
    tensor_type,
)

Valid = int | SSAValue
"""A valid extent: static, or computed at run time."""

TILE_OPS: dict[str, type[Operation]] = {
    op.name.removeprefix("tile."): op
    for op in (*tile.UNARY_OPS, *tile.BINARY_OPS, *tile.REDUCE_OPS)
}
"""The tile op of each tv elementwise op and reduction, by suffix (`exp`, ...)."""


def compute_type(element_type: Attribute) -> Attribute:
    """The type the vector unit computes a value of `element_type` in."""
    if element_type == bf16:
        return f32
    if element_type == i8:
        return i16
    return element_type


def op_suffix(op: Operation) -> str:
    return op.name.split(".", 1)[1]


@dataclass
class Scope:
    """Where values of one loop level are emitted, and those already emitted."""

    at: InsertPoint
    dims: frozenset[int] = frozenset()
    """The frame dims the loops of this level iterate over."""
    cache: dict[tuple[SSAValue, Mapping, Attribute], SSAValue] = field(
        default_factory=dict[tuple[SSAValue, Mapping, Attribute], SSAValue]
    )


@dataclass(frozen=True)
class TileRequest:
    """An operand a member's tile ops read as a tile: the tile of `value` under
    `mapping`, converted to `element_type` (None: in `value`'s own type)."""

    value: SSAValue
    mapping: Mapping
    element_type: Attribute | None = None


@dataclass(frozen=True)
class ScalarRequest:
    """A scalar operand of a member, in `element_type` (`scalar_as`)."""

    value: SSAValue
    element_type: Attribute


OperandRequest = TileRequest | ScalarRequest
"""What `_compute` needs resolved before it emits a member's tile ops."""


@dataclass
class PendingMember:
    """A member whose operands `tile_of` is resolving (a frame of its explicit
    stack, where a recursive lowering would have a Python frame)."""

    request: TileRequest
    requested_at: Attribute | None
    """The builder's location when the tile was asked for: a load or a cast of the
    tile is located there (at the op that reads it)."""
    op: Operation
    scope: Scope
    operands: list[OperandRequest]
    resolved: list[SSAValue] = field(default_factory=list[SSAValue])


@dataclass
class GmBuffers:
    """Where tensors are in GM: the memref to load a value from, and the memrefs
    each group output is stored to."""

    source: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    targets: dict[SSAValue, list[SSAValue]] = field(
        default_factory=dict[SSAValue, list[SSAValue]]
    )


class LoopBuilder:
    """Constants, tails and `scf.for` loops of a loop nest built at `builder`'s
    insertion point: what the tv-to-tile nests and the sparse nests
    (passes/sparse_nests.py) share."""

    def __init__(self, builder: LocatedBuilder):
        self.builder = builder
        """Inserts every op of the nest; its location is that of the tv op being
        lowered (`compute`), else the group's."""
        self.top = builder.insertion_point
        self._constants: dict[tuple[str, Attribute], SSAValue] = {}

    def insert(self, at: InsertPoint, op: Operation) -> None:
        self.builder.insert(op, at)

    def value(self, at: InsertPoint, op: Operation) -> SSAValue:
        """Insert `op` at `at` and return its single result."""
        return self.builder.insert(op, at).results[0]

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
            self._constants[key] = self.value(self.top, arith.ConstantOp(attr))
        return self._constants[key]

    def index_value(self, extent: Valid) -> SSAValue:
        return self.constant(extent) if isinstance(extent, int) else extent

    def add(self, at: InsertPoint, a: Valid, b: int) -> Valid:
        if isinstance(a, int):
            return a + b
        if b == 0:
            return a
        return self.value(at, arith.AddiOp(a, self.constant(b)))

    def tail(
        self, at: InsertPoint, extent: Valid, offset: Valid, step: int, aligned: bool
    ) -> Valid:
        """The valid extent `min(step, extent - offset)` of a tile at `offset`;
        `aligned` says offsets are multiples of `step`."""
        if isinstance(extent, int) and isinstance(offset, int):
            return min(step, extent - offset)
        if isinstance(extent, int) and aligned and extent % step == 0:
            return step
        left = self.value(
            at, arith.SubiOp(self.index_value(extent), self.index_value(offset))
        )
        step_value = self.constant(step)
        less = self.value(at, arith.CmpiOp(left, step_value, "slt"))
        return self.value(at, arith.SelectOp(less, left, step_value))

    # Loops ----------------------------------------------------------------------------

    def loop(
        self,
        at: InsertPoint,
        start: Valid,
        end: Valid,
        step: int,
        inits: Sequence[SSAValue],
        body: Callable[[InsertPoint, Valid, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """`for iv = start to end step step` carrying `inits`; a static single trip
        is emitted without a loop (iv is then a static int)."""
        if isinstance(start, int) and isinstance(end, int) and end - start <= step:
            if end <= start:
                return list(inits)
            return body(at, start, list(inits))
        block = Block(arg_types=[IndexType(), *[v.type for v in inits]])
        inner = InsertPoint.at_end(block)
        results = body(inner, block.args[0], list(block.args[1:]))
        self.insert(inner, scf.YieldOp(*results))
        loop = scf.ForOp(
            self.index_value(start),
            self.index_value(end),
            self.constant(step),
            inits,
            block,
        )
        self.insert(at, loop)
        return list(loop.results)


class NestBuilder(LoopBuilder):
    """Builds the loop nest of one group at `builder`'s insertion point; the
    subclasses add the loops of a group kind (see the module doc)."""

    def __init__(
        self,
        group: Group,
        extents: ExtentAnalysis,
        gm: GmBuffers,
        builder: LocatedBuilder,
    ):
        super().__init__(builder)
        self.group = group
        self.extents = extents
        self.gm = gm
        rank = group.rank
        tile_rank = 2 if group.kind == GroupKind.MATMUL else min(rank, 2)
        self.lead = rank - tile_rank
        self.tile_dims = tuple(range(self.lead, rank))
        self.steps: dict[int, int] = {}
        self.physical: dict[int, int] = {}
        self.index: dict[int, SSAValue] = {}
        self.valid: dict[int, Valid] = {}
        self.scopes: list[Scope] = [Scope(self.top)]
        """Outermost first: the nest's top, then one per loop being built."""
        self._homes: dict[tuple[SSAValue, Mapping], Scope] = {}
        """Where values computed outside `tile_of` (a pass's reductions) were put."""
        self.hoist = True
        """Compute loop-invariant tiles before the loops (false: in the innermost
        loop, after the tiles that vary, see `VectorNest.emit`)."""
        self._members = set(group.members)
        self._placed: dict[tuple[SSAValue, Mapping], Scope] = {}
        """`placement`'s answers, valid while `scopes` is `_placed_under`."""
        self._placed_under: tuple[Scope, ...] = ()
        self._expanded: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}

    def frame_loops(
        self,
        at: InsertPoint,
        dims: Sequence[int],
        inits: Sequence[SSAValue],
        body: Callable[[InsertPoint, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """Nested loops over frame `dims` (outermost first); sets `index` and
        `valid` of each dim for `body`."""
        if not dims:
            return body(at, list(inits))
        dim, rest = dims[0], dims[1:]
        extent = self.group.frame[dim]
        step = self.steps[dim]

        def level(
            inner: InsertPoint, iv: Valid, iters: list[SSAValue]
        ) -> list[SSAValue]:
            self.index[dim] = self.index_value(iv)
            self.valid[dim] = self.tail(inner, extent, iv, step, True)
            if isinstance(iv, int):
                return self.frame_loops(inner, rest, iters, body)
            self.scopes.append(Scope(inner, frozenset([dim])))
            results = self.frame_loops(inner, rest, iters, body)
            self.scopes.pop()
            return results

        return self.loop(at, 0, extent, step, inits, level)

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
                "reassociation": reassociation_attr(groups),
                "static_output_shape": i64_array_attr(static),
            },
        )
        view = self.value(self.top, op)
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

    def load(self, at: InsertPoint, value: SSAValue, mapping: Mapping) -> SSAValue:
        buffer, frames = self.gm_view(self.gm.source[value], value, mapping)
        element_type = tensor_type(value).element_type
        tile_type, dynamic = self.tile_type(value, mapping, element_type)
        indices = self.window(value, mapping, frames)
        return self.value(at, tile.LoadOp(buffer, indices, tile_type, dynamic))

    def mapping_of(self, value: SSAValue) -> Mapping:
        """A member's mapping; a GM value copied by the group aligns trailing dims."""
        if value in self.group.mapping:
            return self.group.mapping[value]
        return self._leaf_mapping(value)

    def store(self, at: InsertPoint, value: SSAValue, tile_value: SSAValue) -> None:
        mapping = self.mapping_of(value)
        for target in self.gm.targets[value]:
            buffer, frames = self.gm_view(target, value, mapping)
            indices = self.window(value, mapping, frames)
            self.insert(at, tile.StoreOp(tile_value, buffer, indices))

    def _leaf_mapping(self, value: SSAValue) -> Mapping:
        rank = tensor_type(value).get_num_dims()
        return tuple(range(self.group.rank - rank, self.group.rank))

    def scope_for(self, value: SSAValue, mapping: Mapping) -> Scope:
        """The innermost loop level over a dim `value` varies along: the value is
        computed once per iteration of that loop (loop-invariant tiles, such as
        a bias row in a loop over rows, are loaded before it)."""
        if not self.hoist:
            return self.scopes[-1]
        spanned = {d for d in range(self.group.rank) if self.spans(value, mapping, d)}
        for scope in reversed(self.scopes):
            if scope.dims & spanned:
                return scope
        return self.scopes[0]

    def _depth(self, scope: Scope) -> int:
        return next(i for i, s in enumerate(self.scopes) if s is scope)

    def is_member(self, value: SSAValue) -> bool:
        """Whether `value` is the result of one of the group's ops."""
        owner = value.owner
        return isinstance(owner, Operation) and owner in self._members

    def set_home(self, value: SSAValue, mapping: Mapping, scope: Scope) -> None:
        """Record that the tile of `value` was computed in `scope` (outside
        `tile_of`), so that its readers are placed there or deeper."""
        self._homes[(value, mapping)] = scope
        self._placed.clear()

    def _placements(self) -> dict[tuple[SSAValue, Mapping], Scope]:
        """The memo of `placement` for the current loop levels."""
        scopes = self.scopes
        under = self._placed_under
        if len(under) != len(scopes) or any(
            a is not b for a, b in zip(under, scopes, strict=True)
        ):
            self._placed_under = tuple(scopes)
            self._placed.clear()
        return self._placed

    def placement(self, value: SSAValue, mapping: Mapping) -> Scope:
        """Where the tile of `value` is computed: the innermost loop over a dim it
        varies along, or deeper if an operand is computed deeper (a reduction's
        result comes from its input's level). Memoised per loop level, and walked
        operands first with an explicit stack."""
        placed = self._placements()
        root = (value, mapping)
        stack = [root]
        while stack:
            key = stack[-1]
            if key in placed:
                stack.pop()
                continue
            home = self._homes.get(key)
            if home is not None and any(s is home for s in self.scopes):
                placed[key] = home
                stack.pop()
                continue
            operands: list[tuple[SSAValue, Mapping]] = []
            if self.is_member(key[0]):
                owner = cast(Operation, key[0].owner)
                operands = self._operand_mappings(owner, key[1])
            missing = [o for o in operands if o not in placed]
            if missing:
                stack.extend(reversed(missing))
                continue
            scope = self.scope_for(*key)
            for operand in operands:
                inner = placed[operand]
                if self._depth(inner) > self._depth(scope):
                    scope = inner
            placed[key] = scope
            stack.pop()
        return placed[root]

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
        return self._resolve(TileRequest(value, mapping))

    def tile_as(
        self, value: SSAValue, mapping: Mapping, element_type: Attribute
    ) -> SSAValue:
        """The tile of `value` converted to `element_type`."""
        return self._resolve(TileRequest(value, mapping, element_type))

    def _resolve(self, request: TileRequest) -> SSAValue:
        """The tile `request` asks for, computing the members it depends on first
        (operands in order, depth first: the order a recursive descent would
        emit them in) with an explicit stack of `PendingMember`s."""
        builder = self.builder
        location = builder.location
        stack: list[PendingMember] = []
        try:
            result = self._start(request, stack)
            while stack:
                pending = stack[-1]
                if result is not None:
                    pending.resolved.append(result)
                    result = None
                if len(pending.resolved) < len(pending.operands):
                    operand = pending.operands[len(pending.resolved)]
                    builder.location = pending.op.location
                    if isinstance(operand, ScalarRequest):
                        at = pending.scope.at
                        result = self.scalar_as(at, operand.value, operand.element_type)
                    else:
                        result = self._start(operand, stack)
                    continue
                stack.pop()
                builder.location = pending.op.location
                computed = self._compute(
                    pending.scope.at,
                    pending.op,
                    pending.request.mapping,
                    pending.resolved,
                )
                value = pending.request.value
                key = (value, pending.request.mapping, tensor_type(value).element_type)
                pending.scope.cache[key] = computed
                builder.location = pending.requested_at
                result = self._converted(pending.request, computed)
        finally:
            builder.location = location
        assert result is not None
        return result

    def _start(
        self, request: TileRequest, stack: list[PendingMember]
    ) -> SSAValue | None:
        """The tile `request` asks for if it is cached or loaded; None when its
        member was pushed on `stack` to be computed once its operands are."""
        value, mapping = request.value, request.mapping
        found = self.lookup((value, mapping, tensor_type(value).element_type))
        if found is not None:
            return self._converted(request, found)
        scope = self.placement(value, mapping)
        if self.is_member(value):
            owner = cast(Operation, value.owner)
            operands = self._requests(owner, mapping)
            stack.append(
                PendingMember(request, self.builder.location, owner, scope, operands)
            )
            return None
        loaded = self.load(scope.at, value, mapping)
        scope.cache[(value, mapping, tensor_type(value).element_type)] = loaded
        return self._converted(request, loaded)

    def _converted(self, request: TileRequest, source: SSAValue) -> SSAValue:
        """`source` (the tile of `request.value`) in the requested element type:
        a `tile.cast` emitted once where the tile is placed."""
        element_type = request.element_type
        if (
            element_type is None
            or cast(TileType, source.type).element_type == element_type
        ):
            return source
        key = (request.value, request.mapping, element_type)
        found = self.lookup(key)
        if found is not None:
            return found
        scope = self.placement(request.value, request.mapping)
        result = self.value(scope.at, tile.CastOp(source, element_type))
        scope.cache[key] = result
        return result

    def scalar_as(
        self, at: InsertPoint, scalar: SSAValue, element_type: Attribute
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
            return self.value(at, arith.ExtSIOp(scalar, element_type))
        ones = TileType([1] * len(self.tile_dims), scalar.type, MemorySpace.UB)
        filled = self.value(at, tile.FillOp(scalar, ones))
        return self.value(at, tile.CastOp(filled, element_type))

    def to_storage(
        self, at: InsertPoint, value: SSAValue, element_type: Attribute
    ) -> SSAValue:
        if cast(TileType, value.type).element_type == element_type:
            return value
        return self.value(at, tile.CastOp(value, element_type))

    # Ops ------------------------------------------------------------------------------

    @staticmethod
    def operand_mapping(operand: SSAValue, mapping: Mapping) -> Mapping:
        """The mapping of an elementwise op's operand: numpy broadcasting aligns
        its dims with the result's trailing ones."""
        rank = tensor_type(operand).get_num_dims()
        return mapping[len(mapping) - rank :]

    def _requests(self, op: Operation, mapping: Mapping) -> list[OperandRequest]:
        """The operands `_compute` reads for elementwise member `op` (whose
        result has `mapping`), in the order it reads them (a subclass adds its
        kinds)."""
        result_type = tensor_type(op.results[0]).element_type
        if isinstance(op, tv.UnaryOp):
            return [TileRequest(op.input, mapping, compute_type(result_type))]
        if (x := tv.silu_input(op)) is not None:
            return [TileRequest(x, mapping, compute_type(result_type))]
        if isinstance(op, tv.BinaryOp):
            ctype = self._binary_type(op, result_type)
            return [
                TileRequest(o, self.operand_mapping(o, mapping), ctype)
                if isinstance(o.type, tv.TensorViewType)
                else ScalarRequest(o, ctype)
                for o in (op.lhs, op.rhs)
            ]
        if isinstance(op, tv.SelectOp):
            compared = compute_type(tensor_type(op.lhs).element_type)
            selected = compute_type(result_type)
            return [
                TileRequest(o, self.operand_mapping(o, mapping), ctype)
                for o, ctype in zip(
                    op.operands, (compared, compared, selected, selected), strict=True
                )
            ]
        if isinstance(op, tv.CastOp):
            return [TileRequest(op.input, mapping)]
        return []

    def _compute(
        self,
        at: InsertPoint,
        op: Operation,
        mapping: Mapping,
        operands: Sequence[SSAValue],
    ) -> SSAValue:
        """The tile ops of an elementwise member, given the `operands` its
        `_requests` asked for (a subclass adds its kinds)."""
        result_type = tensor_type(op.results[0]).element_type
        if isinstance(op, tv.UnaryOp):
            op_type = cast(type[tile.TileUnaryOp], TILE_OPS[op_suffix(op)])
            value = self.value(at, op_type(operands[0]))
            return self.to_storage(at, value, result_type)
        if tv.silu_input(op) is not None:
            # x * sigmoid(x) as one silu: muls, exp, adds, div instead of
            # muls, exp, adds, reciprocal, mul (docs/tiling.md, Fusion).
            value = self.value(at, tile.SiluOp(operands[0]))
            return self.to_storage(at, value, result_type)
        if isinstance(op, tv.BinaryOp):
            op_type = cast(type[tile.TileBinaryOp], TILE_OPS[op_suffix(op)])
            value = self.value(at, op_type(operands[0], operands[1]))
            return self.to_storage(at, value, result_type)
        if isinstance(op, tv.SelectOp):
            value = self.value(at, tile.SelectOp(op.cmp.data, *operands))
            return self.to_storage(at, value, result_type)
        if isinstance(op, tv.CastOp):
            return self.value(at, tile.CastOp(operands[0], result_type))
        if isinstance(op, tv.FillOp):
            scalar_type = op.value.type
            tile_type, dynamic = self.tile_type(op.result, mapping, scalar_type)
            filled = self.value(at, tile.FillOp(op.value, tile_type, dynamic))
            return self.to_storage(at, filled, result_type)
        if isinstance(op, tv.TransposeOp):
            return self._transposed_load(at, op, mapping)
        raise AssertionError(f"{op.name} is not a vector group member")

    @staticmethod
    def _binary_type(op: tv.BinaryOp, result_type: Attribute) -> Attribute:
        """The type a binary member computes in: f32 when a float scalar operand
        of another type is not exact in the result's type."""
        ctype = compute_type(result_type)
        for operand in (op.lhs, op.rhs):
            if (
                not isinstance(operand.type, tv.TensorViewType)
                and tile.is_float(operand.type)
                and operand.type != result_type
                and not _exact_constant(operand, result_type)
            ):
                ctype = f32
        return ctype

    def _transposed_load(
        self, at: InsertPoint, op: tv.TransposeOp, mapping: Mapping
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
            view = self._subview_2d(at, buffer, source, low, high, index_of)
            indices = [index_of(low), index_of(high)]
        loaded = self.value(at, tile.LoadOp(view, indices, load_type, dynamic))
        if not swap:
            return loaded
        return self.value(at, tile.TransposeOp(loaded))

    def _subview_2d(
        self,
        at: InsertPoint,
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
        return self.value(
            at, memref.SubviewOp.get(buffer, offsets, sizes, [1] * rank, result_type)
        )


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


def reassociation_attr(groups: list[list[int]]) -> Attribute:
    """The `reassociation` property of memref.expand_shape/collapse_shape."""
    return ArrayAttr(ArrayAttr(IntegerAttr(i, i64) for i in group) for group in groups)


def i64_array_attr(values: Sequence[int]) -> Attribute:
    """An `array<i64: ...>` property (static shapes and offsets)."""
    return DenseArrayBase.from_list(i64, values)


def discard_block(block: Block) -> None:
    """Erase the ops of a throwaway block (a nest built only to be measured),
    users before their operands' definers."""
    for op in reversed(list(block.ops)):
        op.detach()
        op.erase(safe_erase=False)
