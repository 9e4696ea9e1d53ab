"""Fusion analysis for `tv-to-tile`: which `tv` ops share one loop nest.

Every `tv` op that does work belongs to one *group*; a group becomes one loop
nest. A group has an iteration space (its *frame*: one extent per dim), and each
tensor value it touches is placed in that frame by a *mapping* (for each dim of
the value, the frame dim it runs along; numpy broadcasting aligns trailing dims,
and a static 1 broadcasts). Kinds of group:

- `MAP`: elementwise ops (unary, binary and select with broadcasting, cast,
  fill) and
  transposes of GM tensors (a transposed load); one pass over the frame.
- `ROW`: additionally reductions and softmax over the same frame dims (the
  *reduced* dims); the nest loops over the other dims and makes one or more
  passes over the reduced dims (docs/tiling.md).
- `MATMUL`: one matmul and an elementwise epilogue on its result.

Groups are formed from the end of the function backwards: an op joins the group
of its users when all of them are in one group, none needs the value in GM
(matmul operands, transpose sources, views) and the group can place it in its
frame; otherwise it starts a group of its own and its result goes to GM. When
the users of an elementwise op are in several vector groups over the same frame
that do not depend on each other through another group, those groups merge
first. A member's value goes to GM only when it is a function result or read
outside the group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from pypto_mlir.dialects import tensor_view as tv

Extent = int | SSAValue
"""A dimension size: a static int or an `index` SSA value."""

Mapping = tuple[int, ...]
"""For each dim of a value, the frame dim it runs along."""

MAP_OPS = (tv.UnaryOp, tv.BinaryOp, tv.SelectOp, tv.CastOp, tv.FillOp)
"""Elementwise ops: any number of them fuse into one nest."""


class GroupKind(Enum):
    MAP = "map"
    ROW = "row"
    MATMUL = "matmul"


# --------------------------------------------------------------------------------------
# Extents
# --------------------------------------------------------------------------------------


class ExtentClasses:
    """Union-find over dynamic extents that `tv` semantics make equal at run time
    (two `?` dims that meet in a broadcast or a matmul contraction)."""

    def __init__(self) -> None:
        self._parent: dict[SSAValue, SSAValue] = {}

    def find(self, value: SSAValue) -> SSAValue:
        parent = self._parent.get(value, value)
        if parent is value:
            return value
        root = self.find(parent)
        self._parent[value] = root
        return root

    def union(self, a: Extent, b: Extent) -> None:
        if isinstance(a, SSAValue) and isinstance(b, SSAValue):
            ra, rb = self.find(a), self.find(b)
            if ra is not rb:
                self._parent[ra] = rb

    def same(self, a: Extent, b: Extent) -> bool:
        if isinstance(a, int) or isinstance(b, int):
            return a == b
        return self.find(a) is self.find(b)


def constant_extent(value: SSAValue) -> Extent:
    """An `index` value as a static int when it is an `arith.constant`."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return value


def static_extent(extent: Extent) -> int | None:
    return extent if isinstance(extent, int) else None


def tensor_type(value: SSAValue) -> tv.TensorViewType:
    assert isinstance(value.type, tv.TensorViewType)
    return value.type


def is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, tv.TensorViewType)


class ExtentAnalysis:
    """The extent of every dim of every tensor value of a function.

    Function arguments get their extents from the caller (`dynamic` maps an
    argument to the SSA values of its `?` dims); every op derives its result's
    extents from its operands', preferring a static size where `tv` semantics
    say two sizes agree.
    """

    def __init__(self) -> None:
        self.extents: dict[SSAValue, tuple[Extent, ...]] = {}
        self.classes = ExtentClasses()

    def of(self, value: SSAValue) -> tuple[Extent, ...]:
        return self.extents[value]

    def set_argument(self, value: SSAValue, dynamic: Sequence[SSAValue]) -> None:
        sizes = iter(dynamic)
        self.extents[value] = tuple(
            next(sizes) if d == DYNAMIC_INDEX else d
            for d in tensor_type(value).get_shape()
        )

    def visit(self, op: Operation) -> None:
        if not op.results or not is_tensor(op.results[0]):
            return
        self.extents[op.results[0]] = self._derive(op)

    def _merge(self, a: Extent, b: Extent) -> Extent:
        """Two extents that must agree; the static one wins."""
        self.classes.union(a, b)
        return a if isinstance(a, int) else b

    def _derive(self, op: Operation) -> tuple[Extent, ...]:
        if isinstance(op, tv.UnaryOp | tv.CastOp | tv.SoftmaxOp):
            return self.of(op.operands[0])
        if isinstance(op, tv.BinaryOp | tv.SelectOp):
            shapes = [self.of(o) for o in op.operands if is_tensor(o)]
            rank = max(len(s) for s in shapes)
            result: list[Extent] = []
            for dim in range(rank):
                present = [
                    s[dim - rank + len(s)] for s in shapes if dim - rank + len(s) >= 0
                ]
                wide = [e for e in present if e != 1]
                extent: Extent = 1
                for e in wide:
                    extent = e if extent == 1 else self._merge(extent, e)
                result.append(extent)
            return tuple(result)
        if isinstance(op, tv.FillOp):
            sizes = iter(op.dynamic_sizes)
            return tuple(
                constant_extent(next(sizes)) if d == DYNAMIC_INDEX else d
                for d in tensor_type(op.result).get_shape()
            )
        if isinstance(op, tv.ReduceOp):
            source = self.of(op.input)
            axes = set(op.axes.get_values())
            keep = op.keepdims is not None
            return tuple(
                1 if d in axes else e
                for d, e in enumerate(source)
                if keep or d not in axes
            )
        if isinstance(op, tv.TransposeOp):
            source = self.of(op.input)
            return tuple(source[p] for p in op.permutation.get_values())
        if isinstance(op, tv.MatmulOp):
            lhs, rhs = self.of(op.lhs), self.of(op.rhs)
            ta, tb = op.transpose_a is not None, op.transpose_b is not None
            m, k1 = (lhs[-1], lhs[-2]) if ta else (lhs[-2], lhs[-1])
            k2, n = (rhs[-1], rhs[-2]) if tb else (rhs[-2], rhs[-1])
            self._merge(k1, k2)
            batch = [self._merge(a, b) for a, b in zip(lhs[:-2], rhs[:-2], strict=True)]
            return (*batch, m, n)
        if isinstance(op, tv.ReshapeOp):
            return tuple(tensor_type(op.result).get_shape())
        if isinstance(op, tv.ViewOp):
            sizes = [
                constant_extent(s) if isinstance(s, SSAValue) else s
                for s in op.mixed_sizes()
            ]
            return tuple(
                s for s, drop in zip(sizes, op.dropped_dims(), strict=True) if not drop
            )
        raise NotImplementedError(f"no extents for {op.name}")


# --------------------------------------------------------------------------------------
# Groups
# --------------------------------------------------------------------------------------


@dataclass(eq=False)
class Group:
    """The ops of one loop nest and where each value sits in its frame."""

    kind: GroupKind
    root: Operation
    """The latest op of the group that started it (where its remark goes)."""
    frame: tuple[Extent, ...]
    """Extent of each frame dim (a rank-0 root gets the frame (1,))."""
    reduced: frozenset[int] = frozenset()
    """Frame dims reduced by the ROW group's reductions and softmax."""
    members: list[Operation] = field(default_factory=list[Operation])
    """In program order once `FusionAnalysis` is done."""
    mapping: dict[SSAValue, Mapping] = field(default_factory=dict[SSAValue, Mapping])
    """Mapping of each member's result."""
    matmul: tv.MatmulOp | None = None
    outputs: list[SSAValue] = field(default_factory=list[SSAValue])
    """Results of members that go to GM (function results or used elsewhere)."""
    prologues: dict[SSAValue, Group] = field(default_factory=dict[SSAValue, "Group"])
    """A MATMUL group's operands computed in its nest, each by a MAP group
    over the operand (prologue fusion, passes/matmul_fusion.py)."""

    @property
    def rank(self) -> int:
        return len(self.frame)

    def identity(self) -> Mapping:
        return tuple(range(self.rank))


def needs_gm(user: Operation) -> bool:
    """Whether `user` reads its tensor operands from GM rather than from tiles."""
    return isinstance(user, tv.MatmulOp | tv.ViewOp | tv.ReshapeOp)


def tensor_users(value: SSAValue) -> list[Operation]:
    """The ops that read `value`, except `tv.dim` (which needs only its shape)
    and `func.return` (a returned value is stored by whichever nest computes it)."""
    users: list[Operation] = []
    for use in value.uses:
        if isinstance(use.operation, tv.DimOp | func.ReturnOp):
            continue
        if use.operation not in users:
            users.append(use.operation)
    return users


def operand_mapping(user: Operation, operand: SSAValue, group: Group) -> Mapping | None:
    """The mapping `user` (a member of `group`) needs for one of its operands."""
    result_mapping = group.mapping[user.results[0]]
    if isinstance(user, tv.ReduceOp | tv.SoftmaxOp):
        return group.identity()
    if isinstance(user, tv.TransposeOp):
        return None
    rank = tensor_type(operand).get_num_dims()
    offset = len(result_mapping) - rank
    if offset < 0:
        return None
    return result_mapping[offset:]


class FusionAnalysis:
    """Partition the `tv` ops of a function into groups (see the module doc)."""

    def __init__(self, ops: Sequence[Operation], extents: ExtentAnalysis):
        self.extents = extents
        self.groups: list[Group] = []
        self.group_of: dict[Operation, Group] = {}
        self.position = {op: i for i, op in enumerate(ops)}
        for op in reversed(ops):
            if isinstance(op, tv.ViewOp | tv.ReshapeOp | tv.DimOp):
                continue
            users = tensor_users(op.results[0])
            if not users and not is_returned(op.results[0]):
                continue
            group = self._group_to_join(op, users)
            if group is None:
                group = self._new_group(op)
                self.groups.append(group)
            self.group_of[op] = group
            group.members.append(op)
        self.finish()

    def finish(self) -> None:
        """Order the groups and their members by program position and find each
        group's outputs (again after groups merge)."""
        self.groups.sort(key=lambda g: self.position[g.root])
        for group in self.groups:
            group.members.sort(key=lambda m: self.position[m])
            group.outputs = [
                m.results[0]
                for m in group.members
                if is_returned(m.results[0])
                or any(
                    self.group_of.get(u) is not group
                    for u in tensor_users(m.results[0])
                )
            ]

    # Sibling groups ---------------------------------------------------------------------

    def inputs(self, group: Group) -> list[SSAValue]:
        """The tensor values `group` reads from outside itself (GM values)."""
        found: list[SSAValue] = []
        for member in group.members:
            for operand in member.operands:
                owner = operand.owner
                inside = (
                    isinstance(owner, Operation) and self.group_of.get(owner) is group
                )
                if is_tensor(operand) and not inside and operand not in found:
                    found.append(operand)
        return found

    def siblings_compatible(self, first: Group, second: Group) -> bool:
        """Whether two groups can run as one nest that reads their inputs once:
        vector groups over the same frame reducing the same dims, neither
        depending on the other (directly or through another group)."""
        if first is second or first.reduced != second.reduced:
            return False
        if first.kind == GroupKind.MATMUL or second.kind == GroupKind.MATMUL:
            return False
        if first in self._reachable(second) or second in self._reachable(first):
            return False
        return self._can_merge([first, second])

    def merge_groups(self, groups: list[Group]) -> Group:
        """Fold `groups` (which `siblings_compatible` accepts pairwise) into one
        and recompute the outputs."""
        merged = self._merge(groups)
        self.finish()
        return merged

    # Placing values in a frame -----------------------------------------------------

    def fits(self, value: SSAValue, mapping: Mapping, group: Group) -> bool:
        """Whether each dim of `value` equals its frame dim or is a static 1."""
        extents = self.extents.of(value)
        if len(extents) != len(mapping):
            return False
        return all(
            e == 1 or self.extents.classes.same(e, group.frame[f])
            for e, f in zip(extents, mapping, strict=True)
        )

    def _group_to_join(self, op: Operation, users: list[Operation]) -> Group | None:
        if not users or any(needs_gm(u) for u in users):
            return None
        groups: list[Group] = []
        for user in users:
            group = self.group_of.get(user)
            if group is None:
                return None
            if all(g is not group for g in groups):
                groups.append(group)
        if len(groups) > 1:
            if not isinstance(op, MAP_OPS) or not self._can_merge(groups):
                return None
            if not self._places_alike(op.results[0], users):
                return None
            self._merge(groups)
        group = self.group_of[users[0]]
        value = op.results[0]
        mappings = {operand_mapping(u, value, group) for u in users}
        if len(mappings) != 1:
            return None
        mapping = mappings.pop()
        if mapping is None or not self.fits(value, mapping, group):
            return None
        if not self._accepts(group, op, mapping):
            return None
        group.mapping[value] = mapping
        return group

    # Merging groups that share a producer ---------------------------------------------

    def _places_alike(self, value: SSAValue, users: list[Operation]) -> bool:
        """Whether every user needs `value` with one mapping that fits its frame."""
        mappings = {operand_mapping(u, value, self.group_of[u]) for u in users}
        if len(mappings) != 1:
            return False
        mapping = mappings.pop()
        return mapping is not None and all(
            self.fits(value, mapping, self.group_of[u]) for u in users
        )

    def _can_merge(self, groups: list[Group]) -> bool:
        """Whether `groups` can become one nest: vector groups over the same frame,
        reducing the same dims (or none), none depending on another through a
        group outside them (which would have to run in between)."""
        first = groups[0]
        reduced = {g.reduced for g in groups if g.reduced}
        if len(reduced) > 1:
            return False
        for group in groups:
            if group.kind == GroupKind.MATMUL or group.rank != first.rank:
                return False
            if not all(
                self.extents.classes.same(a, b)
                for a, b in zip(group.frame, first.frame, strict=True)
            ):
                return False
        outside: set[int] = set()
        for group in groups:
            outside |= {id(g) for g in self._reachable(group)}
        outside -= {id(g) for g in groups}
        by_id = {id(g): g for g in self.groups}
        return not any(
            any(id(g) in {id(r) for r in self._reachable(by_id[o])} for g in groups)
            for o in outside
        )

    def dependencies(self, group: Group) -> list[Group]:
        """The groups whose results `group` reads (through views too)."""
        found: list[Group] = []
        for member in group.members:
            for operand in member.operands:
                producer = operand.owner
                while isinstance(producer, tv.ViewOp | tv.ReshapeOp):
                    producer = producer.operands[0].owner
                other = (
                    self.group_of.get(producer)
                    if isinstance(producer, Operation)
                    else None
                )
                if (
                    other is not None
                    and other is not group
                    and all(f is not other for f in found)
                ):
                    found.append(other)
        return found

    def reaches(self, group: Group, other: Group) -> bool:
        """Whether `group` depends on `other`, directly or through other groups."""
        return any(g is other for g in self._reachable(group))

    def _reachable(self, group: Group) -> list[Group]:
        """Every group `group` depends on, directly or not."""
        seen: dict[int, Group] = {}
        stack = self.dependencies(group)
        while stack:
            current = stack.pop()
            if id(current) not in seen:
                seen[id(current)] = current
                stack.extend(self.dependencies(current))
        return list(seen.values())

    def _merge(self, groups: list[Group]) -> Group:
        """Fold `groups` into the first; its root becomes the latest root."""
        merged = groups[0]
        for group in groups[1:]:
            merged.members.extend(group.members)
            merged.mapping.update(group.mapping)
            if group.reduced:
                merged.kind = GroupKind.ROW
                merged.reduced = group.reduced
            if self.position[group.root] > self.position[merged.root]:
                merged.root = group.root
            for member in group.members:
                self.group_of[member] = merged
            self.groups.remove(group)
        return merged

    def _accepts(self, group: Group, op: Operation, mapping: Mapping) -> bool:
        """Whether `group` can compute `op`, whose result it places by `mapping`;
        updates the group's kind and reduced dims when it can."""
        identity = group.identity()
        if isinstance(op, MAP_OPS):
            return True
        if isinstance(op, tv.TransposeOp):
            return mapping == identity and group.rank >= 2
        if isinstance(op, tv.ReduceOp):
            if group.kind == GroupKind.MATMUL:
                return False
            axes = op.axes.get_values()
            keep = op.keepdims is not None
            expected = identity if keep else tuple(d for d in identity if d not in axes)
            if mapping != expected or not self.fits(op.input, identity, group):
                return False
            source = self.extents.of(op.input)
            if any(source[a] == 1 and group.frame[a] != 1 for a in axes):
                return False
            return self._reduce_over(group, frozenset(axes))
        if isinstance(op, tv.SoftmaxOp):
            axis = op.axis.value.data
            if group.kind == GroupKind.MATMUL or mapping != identity:
                return False
            if self.extents.of(op.input)[axis] == 1 and group.frame[axis] != 1:
                return False
            return self._reduce_over(group, frozenset([axis]))
        if isinstance(op, tv.MatmulOp):
            if group.kind != GroupKind.MAP or mapping != identity:
                return False
            if any(
                e == 1 and f != 1
                for e, f in zip(self.extents.of(op.result), group.frame, strict=True)
            ):
                return False
            group.kind = GroupKind.MATMUL
            group.matmul = op
            return True
        return False

    @staticmethod
    def _reduce_over(group: Group, dims: frozenset[int]) -> bool:
        if group.kind == GroupKind.ROW:
            return group.reduced == dims
        group.kind = GroupKind.ROW
        group.reduced = dims
        return True

    def _new_group(self, op: Operation) -> Group:
        value = op.results[0]
        if isinstance(op, tv.ReduceOp):
            frame = self.extents.of(op.input)
            axes = op.axes.get_values()
            group = Group(GroupKind.ROW, op, frame, frozenset(axes))
            identity = group.identity()
            keep = op.keepdims is not None
            group.mapping[value] = (
                identity if keep else tuple(d for d in identity if d not in axes)
            )
            return group
        epilogue = self._reduction_epilogue(op)
        if epilogue is not None:
            return epilogue
        frame = self.extents.of(value) or (1,)
        if isinstance(op, tv.SoftmaxOp):
            group = Group(GroupKind.ROW, op, frame, frozenset([op.axis.value.data]))
        elif isinstance(op, tv.MatmulOp):
            group = Group(GroupKind.MATMUL, op, frame, matmul=op)
        else:
            group = Group(GroupKind.MAP, op, frame)
        group.mapping[value] = tuple(range(tensor_type(value).get_num_dims()))
        return group

    def _reduction_epilogue(self, op: Operation) -> Group | None:
        """A ROW group over the frame of the reduction `op` reads, when `op` is
        elementwise on that reduction's result alone (its only tensor operand,
        read by nothing else): the reduction then joins it and `op` runs on the
        reduced tile in the same nest (a cast of a column sum's f32 result, as
        reduction_split emits it) instead of in a nest of its own after it."""
        if not isinstance(op, MAP_OPS):
            return None
        operands = [o for o in op.operands if is_tensor(o)]
        if len(operands) != 1 or not isinstance(operands[0].owner, tv.ReduceOp):
            return None
        reduction = operands[0].owner
        source = reduction.result
        if tensor_users(source) != [op] or is_returned(source):
            return None
        if tensor_type(op.results[0]).get_shape() != tensor_type(source).get_shape():
            return None
        group = self._new_group(reduction)
        group.root = op
        group.mapping = {op.results[0]: group.mapping.pop(source)}
        return group


def is_returned(value: SSAValue) -> bool:
    """Whether `value` is a function result (`tensor_users` leaves returns out)."""
    return any(isinstance(use.operation, func.ReturnOp) for use in value.uses)


def index_constant(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))
