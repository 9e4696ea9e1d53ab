"""`hw-insert-sync`: `set_flag`/`wait_flag` pairs from a dataflow analysis of buffers.

Pipes execute their own instructions in order but overtake one another: two
instructions on different pipes that touch overlapping bytes, one of them writing,
must be ordered by a flag (a chain of flags will do). The pass finds those pairs in
each block, in program order and around `scf.for` loops (the next iteration's access
against this one's), and covers them with as few flags as it can: a flag is placed
only when the flags already chosen do not order the pair transitively, and one flag
serves every pair whose producer and consumer it can reach without delaying
anything. Flags live in the innermost block that holds both ends; event ids are
allocated per pipe pair within the target's limit and reused when the reuse cannot
leave two sets pending. When a pair runs out of ids, flags fall back to coarser
orderings (merged flags, fences, a flag through a third pipe, in the end a
`pipe_barrier all`): no kernel is refused for want of ids. docs/hw_insert_sync.md
has the algorithm and its reasoning.

`hw-strip-sync` removes every flag and barrier: re-synchronising hand-written IR
starts from it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from math import inf

from pypto_mlir.dialects.ascend_hw import (
    AllocOp,
    BufferType,
    DmaLoadOp,
    DmaStoreOp,
    FlagOp,
    HwInstruction,
    Layout,
    MatrixMoveOp,
    Pipe,
    PipeBarrierOp,
    SetFlagOp,
    SubviewOp,
    WaitFlagOp,
    element_bytes,
    element_offset,
    target_of,
)
from pypto_mlir.passes.index_range import MAX_TRIPS_ATTR, Range, index_ranges
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from pypto_mlir.diagnostics import op_error
from pypto_mlir.targets import Target

# --------------------------------------------------------------------------------------
# Addresses: affine expressions over run-time values
# --------------------------------------------------------------------------------------


class Affine:
    """`const + sum(coeff * symbol)`: an address known up to run-time values.

    A symbol is an SSA value (a loop index, a kernel argument, the result of an op
    the analysis does not fold) or a tagged tuple derived from one.
    """

    __slots__ = ("const", "coeffs")

    def __init__(self, const: int = 0, coeffs: Mapping[Hashable, int] | None = None):
        self.const = const
        self.coeffs: dict[Hashable, int] = {
            s: c for s, c in (coeffs or {}).items() if c
        }

    @staticmethod
    def symbol(symbol: Hashable) -> Affine:
        return Affine(0, {symbol: 1})

    def __add__(self, other: Affine) -> Affine:
        coeffs = dict(self.coeffs)
        for s, c in other.coeffs.items():
            coeffs[s] = coeffs.get(s, 0) + c
        return Affine(self.const + other.const, coeffs)

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scaled(-1)

    def scaled(self, factor: int) -> Affine:
        return Affine(
            self.const * factor, {s: c * factor for s, c in self.coeffs.items()}
        )


def _symbol_value(symbol: Hashable) -> SSAValue:
    """The SSA value a symbol stands for (tagged symbols wrap one)."""
    while isinstance(symbol, tuple):
        symbol = symbol[1]  # pyright: ignore[reportUnknownVariableType]
    assert isinstance(symbol, SSAValue)
    return symbol


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def affine_of(value: SSAValue) -> Affine:
    """`value` as an affine expression: constants, +, -, * and << by constants fold."""
    if (const := _constant(value)) is not None:
        return Affine(const)
    owner = value.owner
    match owner:
        case arith.AddiOp():
            return affine_of(owner.lhs) + affine_of(owner.rhs)
        case arith.SubiOp():
            return affine_of(owner.lhs) - affine_of(owner.rhs)
        case arith.MuliOp():
            for factor, term in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
                if (const := _constant(factor)) is not None:
                    return affine_of(term).scaled(const)
        case arith.ShLIOp():
            if (const := _constant(owner.rhs)) is not None and 0 <= const < 64:
                return affine_of(owner.lhs).scaled(1 << const)
        case arith.IndexCastOp():
            return affine_of(owner.input)
        case _:
            pass
    return Affine.symbol(value)


# --------------------------------------------------------------------------------------
# What an instruction touches
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    """Bytes `[start, start + size)` of a memory; `start` None: anywhere in it.

    `memory` is an on-chip memory name ("ub", ...) or ("gm", root memref value).
    """

    memory: Hashable
    start: Affine | None
    size: int


@dataclass(frozen=True)
class Access:
    op: HwInstruction
    pipe: Pipe
    region: Region
    write: bool


@dataclass(frozen=True)
class LoopShift:
    """Compares an access with another one some iterations of `loop` later."""

    loop: scf.ForOp
    step: int | None

    @property
    def iv(self) -> SSAValue:
        return self.loop.body.block.args[0]

    def varies(self, symbol: Hashable) -> bool:
        """Whether the symbol's value may change from one iteration to the next."""
        value = _symbol_value(symbol)
        if isinstance(value, BlockArgument):
            defining: Operation | None = value.block.parent_op()
        else:
            defining = value.owner  # pyright: ignore[reportAssignmentType]
        return defining is not None and (
            defining is self.loop or self.loop.is_ancestor(defining)
        )


def _intersects(size_a: int, offset_b: int, size_b: int) -> bool:
    """Whether [0, size_a) and [offset_b, offset_b + size_b) share a byte."""
    return offset_b < size_a and offset_b + size_b > 0


def _intersects_later(size_a: int, delta: int, size_b: int, stride: int) -> bool:
    """Whether [0, size_a) meets [delta + stride*d, ... + size_b) for some d >= 1."""
    if stride < 0:
        return _intersects_later(size_b, -delta, size_a, -stride)
    first = max(1, (-size_b - delta) // stride + 1)
    return delta + stride * first < size_a


def may_overlap(first: Region, second: Region, later: LoopShift | None) -> bool:
    """Whether `first` and `second` (in a later iteration of `later`) share a byte."""
    if first.memory != second.memory:
        return False
    if first.start is None or second.start is None:
        return True
    # The starts differ by a constant when their symbols and coefficients are the
    # same; in a later iteration, when no symbol but the loop index varies (one
    # that does is a fresh symbol there).
    if first.start.coeffs != second.start.coeffs:
        return True
    delta = second.start.const - first.start.const
    if later is None:
        return _intersects(first.size, delta, second.size)
    iv = later.iv
    if any(s != iv and later.varies(s) for s in second.start.coeffs):
        return True
    per_iteration = second.start.coeffs.get(iv, 0)
    if per_iteration == 0:
        return _intersects(first.size, delta, second.size)
    if later.step is None:
        return True
    return _intersects_later(first.size, delta, second.size, per_iteration * later.step)


def _gm_root(value: SSAValue) -> tuple[SSAValue, bool]:
    """The memref a view was made from, and whether `value` is a view of it."""
    root, view = value, False
    while (
        isinstance(owner := root.owner, Operation)
        and owner.name.startswith("memref.")
        and owner.operands
        and isinstance(owner.operands[0].type, MemRefType)
    ):
        root, view = owner.operands[0], True
    return root, view


class AccessAnalysis:
    """The byte regions an instruction reads and writes (cached per value)."""

    def __init__(self, target: Target):
        self.target = target
        self._buffers: dict[SSAValue, Region] = {}

    def accesses(self, op: HwInstruction) -> list[Access]:
        pipe = op.pipe
        return [
            Access(op, pipe, self.region(op, value), write)
            for values, write in (
                (op.read_buffers(), False),
                (op.write_buffers(), True),
            )
            for value in values
        ]

    def region(self, op: HwInstruction, value: SSAValue) -> Region:
        if isinstance(value.type, BufferType):
            return self.buffer_region(value)
        return self.gm_region(op, value)

    def buffer_region(self, value: SSAValue) -> Region:
        if (known := self._buffers.get(value)) is None:
            known = self._buffers[value] = self._buffer_region(value)
        return known

    def _buffer_region(self, value: SSAValue) -> Region:
        buf = value.type
        assert isinstance(buf, BufferType)
        space = str(buf.memory_space)
        owner = value.owner
        if isinstance(owner, AllocOp):
            return Region(space, Affine(owner.byte_offset), buf.byte_size())
        if isinstance(owner, SubviewOp):
            source = self.buffer_region(owner.source)
            offset = self._subview_offset(owner)
            if source.start is None or offset is None:
                return source  # somewhere inside its source
            return Region(space, source.start + offset, buf.byte_size())
        return Region(space, None, self.target.memories[space].size or 0)

    def _subview_offset(self, op: SubviewOp) -> Affine | None:
        """Bytes from the source's start to the subview's, when affine."""
        src = op.source.type
        assert isinstance(src, BufferType)
        if src.layout_kind == Layout.ND:
            offset, stride = Affine(), src.element_bytes
            for index, dim in reversed(
                list(zip(op.indices, src.get_shape(), strict=True))
            ):
                offset = offset + affine_of(index).scaled(stride)
                stride *= dim
            return offset
        index = [_constant(i) for i in op.indices]
        if any(i is None for i in index):
            return None
        elements = element_offset(src, index, self.target)  # pyright: ignore[reportArgumentType]
        return Affine(elements * src.element_bytes)

    def gm_region(self, op: HwInstruction, value: SSAValue) -> Region:
        root, view = _gm_root(value)
        memory = ("gm", root)
        mtype = value.type
        assert isinstance(mtype, MemRefType)
        whole = Region(memory, None, 0)
        strides = mtype.get_strides()
        if view or strides is None or any(s is None or s < 0 for s in strides):
            return whole
        window = _gm_window(op, value, strides)  # pyright: ignore[reportArgumentType]
        if window is None:
            return whole
        indices, span = window
        e = element_bytes(mtype.element_type)
        offset = mtype.get_offset()
        start = (
            Affine(offset) if offset is not None else Affine.symbol(("offset", value))
        )
        for index, stride in zip(indices, strides, strict=True):
            start = start + affine_of(index).scaled(stride)  # pyright: ignore[reportArgumentType]
        return Region(memory, start.scaled(e), span)


def _gm_window(
    op: HwInstruction, value: SSAValue, strides: Sequence[int]
) -> tuple[Sequence[SSAValue], int] | None:
    """The indices where `op` starts in memref `value` and the bytes it spans."""
    if isinstance(op, DmaLoadOp | DmaStoreOp):
        bursts, length, src_gap, dst_gap = op.burst_descriptor()
        if isinstance(op, DmaLoadOp):
            return op.src_indices, (bursts - 1) * (length + src_gap) + length
        return op.dst_indices, (bursts - 1) * (length + dst_gap) + length
    if isinstance(op, MatrixMoveOp):
        rows, cols = op.block_shape()
        if value is op.src:
            indices = op.src_indices
            if op.transposed:
                rows, cols = cols, rows
        else:
            indices = op.dst_indices
        elements = (rows - 1) * strides[-2] + (cols - 1) * strides[-1] + 1
        return indices, elements * element_bytes(value.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
    return None


# --------------------------------------------------------------------------------------
# Frames: the blocks of a function, their nodes, dependencies and flags
# --------------------------------------------------------------------------------------

PIPES = tuple(pipe for pipe in Pipe if pipe != Pipe.ALL)
"""The pipes that run instructions."""

# Positions in a block are keys, five per node, so that every place a flag can be
# put is ordered: gap g (before node g) holds sets, then waits; then node g
# starts, finishes its own instructions and ends (its nested flags included).
_KEYS = 5


def _set_key(gap: int) -> int:
    return _KEYS * gap


def _wait_key(gap: int) -> int:
    return _KEYS * gap + 1


def _start_key(node: int) -> int:
    return _KEYS * node + 2


def _ops_key(node: int) -> int:
    return _KEYS * node + 3


def _exit_key(node: int) -> int:
    return _KEYS * node + 4


@dataclass(eq=False)
class Node:
    """An op of a block that touches buffers: an instruction or a loop/if."""

    op: Operation
    accesses: list[Access]
    children: list[Frame] = field(default_factory=list["Frame"])

    @property
    def pipes(self) -> frozenset[Pipe]:
        return frozenset(a.pipe for a in self.accesses)


@dataclass(frozen=True)
class Dep:
    """`src` must finish the producer before `dst` starts the consumer.

    Keys and gaps are in the frame's coordinates: in a loop, `n + i` is node i of
    the next iteration. The set may go anywhere in gaps [set_lo, set_hi] and the
    wait in [wait_lo, wait_hi] without delaying anything.
    """

    src: Pipe
    dst: Pipe
    src_key: int
    dst_key: int
    set_lo: int
    set_hi: int
    wait_lo: int
    wait_hi: int
    producer: Operation
    consumer: Operation
    src_inner: tuple[tuple[Frame, int], ...] = ()
    """When the producer is inside a loop or if node: the frames (loop bodies,
    branches) down to it, outermost first, each with its node holding it."""
    dst_inner: tuple[tuple[Frame, int], ...] = ()
    """The same for the consumer."""


@dataclass(eq=False)
class Sync:
    """A set_flag/wait_flag pair: set at gap `set_gap`, wait at gap `wait_gap`.

    In a loop `set_gap` is in [0, n] (n: the end of the body); a `wait_gap` >= n
    waits in the next iteration (at gap wait_gap - n): a loop-carried flag,
    balanced by a set before the outermost loop and a wait after it.
    """

    src: Pipe
    dst: Pipe
    set_lo: int
    set_hi: int
    wait_lo: int
    wait_hi: int
    set_gap: int
    wait_gap: int
    producer: Operation
    consumer: Operation
    event: int = -1
    ops: list[Operation] = field(default_factory=list[Operation])
    """The flag ops written for it (sets and waits, prologue and drain)."""
    fenced: bool = False
    """A `pipe_barrier all` precedes the set (see `pending_deps` and
    `allocate_events`)."""
    prologue_gap: int = -1
    """For a loop-carried flag: the top-level gap of its first set."""
    drain_gap: int = -1
    """For a loop-carried flag: the top-level gap of its last wait."""
    late: bool = False
    """The set follows the waits of its gap: the second flag of a relay, set once
    its pipe has waited for the first (`FunctionSync.relay`)."""

    @property
    def set_key(self) -> int:
        return _wait_key(self.set_gap) if self.late else _set_key(self.set_gap)


Ordering = tuple[int, int, Pipe | None, Pipe | None, Sync | None, int]
"""(set key, wait key, source pipe, destination pipe, flag, iteration): once the
source pipe is reached at the set key, the destination is at the wait key. Pipes
None: a fence (orders every pipe); flag None: one of the frame's `edges` or
`fences`."""


class Timeline:
    """A frame's orderings sorted by set key, those of a loop repeated for every
    iteration with set keys in [lo, hi]: a propagation visits only the orderings
    between its start and its limit, and the frame sorts them once per state of
    its flags instead of once per question.

    Ties keep the order the orderings are listed in (flags, edges, fences; earlier
    iterations first), so every propagation sees them in one fixed order.
    """

    __slots__ = ("lo", "hi", "orderings", "set_keys", "answers")

    def __init__(self, frame: Frame, lo: float, hi: float):
        period = frame.period
        self.lo, self.hi = (lo, hi) if period else (-inf, inf)
        base: list[tuple[Pipe | None, int, Pipe | None, int, Sync | None]] = [
            (s.src, s.set_key, s.dst, _wait_key(s.wait_gap), s) for s in frame.syncs
        ]
        base += [(p, k1, q, k2, None) for p, k1, q, k2 in frame.edges]
        # A fence (pipe_barrier all) before a set orders everything before it.
        base += [
            (None, _set_key(s.set_gap), None, _set_key(s.set_gap), s)
            for s in frame.syncs
            if s.fenced
        ]
        base += [(None, _set_key(g), None, _set_key(g), None) for g, _ in frame.fences]
        orderings: list[Ordering] = []
        for p, set_key, q, wait_key, sync in base:
            shifts = range(1)
            if period:  # the iterations m with lo <= set_key + m * period <= hi
                shifts = range(
                    -int((set_key - lo) // period), int((hi - set_key) // period) + 1
                )
            orderings += [
                (set_key + m * period, wait_key + m * period, p, q, sync, m)
                for m in shifts
            ]
        orderings.sort(key=lambda o: (o[0], o[1]))
        self.orderings = orderings
        self.set_keys = [o[0] for o in orderings]
        self.answers: dict[
            tuple[frozenset[tuple[Pipe, float]], int, bool], Mapping[Pipe, float]
        ] = {}
        """`Frame.propagate` results by (start, limit, entered), with all flags."""


@dataclass(eq=False)
class Frame:
    """A block with its nodes; a loop body when `loop` is set."""

    block: Block
    loop: scf.ForOp | None
    parent: Frame | None
    parent_node: int
    nodes: list[Node] = field(default_factory=list[Node])
    deps: list[Dep] = field(default_factory=list[Dep])
    syncs: list[Sync] = field(default_factory=list[Sync])
    edges: list[tuple[Pipe, int, Pipe, int]] = field(
        default_factory=list[tuple[Pipe, int, Pipe, int]]
    )
    """Orderings the prologue and drain of loop-carried flags give at the top."""
    boundary_pipes: frozenset[Pipe] = frozenset()
    """Pipes whose sets may move to the top of the next iteration for free: in a
    top-level loop, those with no work before the loop."""
    forward_pairs: frozenset[tuple[Pipe, Pipe]] = frozenset()
    """Pipe pairs whose flags never cross an iteration boundary (when their event
    ids run out: a loop-carried flag is live around its outermost loop)."""
    fences: list[tuple[int, Operation]] = field(
        default_factory=list[tuple[int, Operation]]
    )
    """Gaps of `pipe_barrier all`s a flag's set left behind (`_squeeze`), with the
    op whose location they take."""
    _timeline: Timeline | None = None
    """`syncs`, `edges` and `fences` as orderings sorted by key; None when they
    changed."""

    @property
    def size(self) -> int:
        return len(self.nodes)

    @property
    def period(self) -> int:
        """Keys per iteration (0 outside loops)."""
        return _KEYS * self.size if self.loop is not None else 0

    def frames(self) -> Iterator[Frame]:
        """This frame and every frame nested in it, parents first."""
        yield self
        for node in self.nodes:
            for child in node.children:
                yield from child.frames()

    def index_of(self, op: Operation) -> int:
        """The node of this frame that is or holds `op`."""
        while op.parent_block() is not self.block:
            parent = op.parent_op()
            assert parent is not None
            op = parent
        return self.positions[id(op)]

    @cached_property
    def positions(self) -> dict[int, int]:
        """Node indices by `id` of their op (asked once the frame is built)."""
        return {id(node.op): i for i, node in enumerate(self.nodes)}

    @cached_property
    def conflicts(self) -> list[Conflict]:
        """The pairs of conflicting accesses that name the frame's dependencies,
        in program order (in a loop, then node `a` against node `b` - n of the
        next iteration): the first pair of each key, except that a loop node
        against itself keeps every pair (`_loop_orders_itself` depends on the
        flags of its body).

        Outside loops only those no earlier one implies are kept (`_tightest`): a
        flag there only gains orderings as `_select` goes on (a merge moves its set
        later and its wait earlier), so they would be ordered when their turn
        comes. Depends only on the IR: kept when the function is synchronised
        again.
        """
        n = self.size
        conflicts: list[Conflict] = []
        keys: set[tuple[object, ...]] = set()
        # Per op: its frames and nodes below the frame's node, and those by id.
        paths: dict[int, tuple[tuple[tuple[Frame, int], ...], tuple[object, ...]]] = {}

        def add(a: int, b: int, x: Access, y: Access) -> None:
            for node, op in ((self.nodes[a], x.op), (self.nodes[b % n], y.op)):
                if id(op) not in paths:
                    path = _inner(node, op)
                    paths[id(op)] = path, tuple((id(f), i) for f, i in path)
            (src_inner, src_key), (dst_inner, dst_key) = (
                paths[id(x.op)],
                paths[id(y.op)],
            )
            key = (a, b, x.pipe, y.pipe, src_key, dst_key)
            if key not in keys or b == a + n:
                keys.add(key)
                conflicts.append((key, a, b, x, y, src_inner, dst_inner))

        for i, first in enumerate(self.nodes):
            for j in range(i + 1, n):
                for x, y in _conflicts(first, self.nodes[j], None):
                    add(i, j, x, y)
        if self.loop is None:
            spans = [
                (x.pipe, y.pipe, _ops_key(a), _start_key(b), not src and not dst)
                for _, a, b, x, y, src, dst in conflicts
            ]
            return [conflicts[i] for i in _tightest(spans)]
        later = LoopShift(self.loop, _constant(self.loop.step))
        for i, first in enumerate(self.nodes):
            for j, second in enumerate(self.nodes):
                if i == j and not first.children:
                    continue
                for x, y in _conflicts(first, second, later):
                    # i < j: ordered in one iteration, hence also across two.
                    add(i, j if i < j else j + n, x, y)
        return conflicts

    @cached_property
    def users(self) -> dict[Pipe, list[int]]:
        """The nodes using each pipe, in order (asked once the frame is built)."""
        users: dict[Pipe, list[int]] = {}
        for i, node in enumerate(self.nodes):
            for pipe in node.pipes:
                users.setdefault(pipe, []).append(i)
        return users

    def next_with(self, pipe: Pipe, index: int) -> int:
        """The first node after `index` using `pipe` (the block's end if none); in
        a loop, in the next iteration when none follows in this one."""
        users = self.users.get(pipe, [])
        if self.loop is None or not users:
            after = bisect_right(users, index)
            return users[after] if after < len(users) else self.size
        iteration = index - index % self.size
        after = bisect_right(users, index - iteration)
        if after < len(users):
            return iteration + users[after]
        return iteration + self.size + users[0]

    def prev_with(self, pipe: Pipe, index: int) -> int:
        """The last node before `index` using `pipe` (-1 if none); in a loop, in
        the previous iteration when none precedes in this one."""
        users = self.users.get(pipe, [])
        if self.loop is None or not users:
            before = bisect_left(users, index)
            return users[before - 1] if before else -1
        iteration = index - index % self.size
        before = bisect_left(users, index - iteration)
        if before:
            return iteration + users[before - 1]
        return iteration - self.size + users[-1]

    def dep(
        self,
        a: int,
        b: int,
        src: Pipe,
        dst: Pipe,
        producer: Operation,
        consumer: Operation,
        src_inner: tuple[tuple[Frame, int], ...] = (),
        dst_inner: tuple[tuple[Frame, int], ...] = (),
    ) -> Dep:
        """Node a's `src` work before node b's `dst` work (b >= n: next iteration)."""
        return Dep(
            src,
            dst,
            _ops_key(a),
            _start_key(b),
            a + 1,
            self.next_with(src, a),
            self.prev_with(dst, b) + 1,
            b,
            producer,
            consumer,
            src_inner,
            dst_inner,
        )

    # --- happens-before -------------------------------------------------------------
    def reaches(self, src: Pipe, src_key: int, dst: Pipe, dst_key: int) -> bool:
        """Whether the flags order `src` at `src_key` before `dst` at `dst_key`.

        Asked up to a horizon past the block's end (in a loop, the next
        iteration's), so that one remembered propagation answers for every later
        key: a key up to a limit does not depend on the limit, as an ordering
        only leads to later ones.
        """
        if src == dst:
            return src_key <= dst_key
        horizon = self.period + _KEYS * (self.size + 1)
        reached = self.propagate({src: src_key}, max(dst_key, horizon))
        return reached.get(dst, inf) <= dst_key

    def propagate(
        self,
        start: Mapping[Pipe, float],
        limit: int,
        without: Sync | None = None,
        entered: bool = False,
        carriers: set[Sync | None] | None = None,
    ) -> Mapping[Pipe, float]:
        """The earliest key up to `limit` at which each pipe is ordered after the
        pipes of `start` at their keys.

        A pipe reached at key k can use any set at a later key of that pipe;
        following flags only moves forward, so one pass in key order suffices.
        `entered`: the loop was just entered, no iteration precedes the first
        (a set at the end of the body counts only from iteration 0 on).
        `carriers` receives the flags whose orderings moved a pipe earlier: without
        any other flag, the result is the same. Answers with all flags are
        remembered until the flags change.
        """
        if not start:
            return {}
        first = min(start.values())
        timeline = self.timeline(first, limit)
        remember = without is None and carriers is None
        if remember:
            question = (frozenset(start.items()), limit, entered)
            if (known := timeline.answers.get(question)) is not None:
                return known
        earliest = dict(start)
        orderings = timeline.orderings
        for index in range(bisect_left(timeline.set_keys, first), len(orderings)):
            set_key, wait_key, p, q, sync, shift = orderings[index]
            if set_key > limit:
                break
            if (
                wait_key > limit
                or (entered and shift < 0)
                or (sync is without and without is not None)
            ):
                continue
            if p is None or q is None:
                if min(earliest.values()) <= set_key:
                    fenced = {
                        pipe: min(earliest.get(pipe, inf), wait_key) for pipe in PIPES
                    }
                    if carriers is not None and fenced != earliest:
                        carriers.add(sync)
                    earliest = fenced
            elif earliest.get(p, inf) <= set_key and wait_key < earliest.get(q, inf):
                earliest[q] = wait_key
                if carriers is not None:
                    carriers.add(sync)
        if remember:
            timeline.answers[question] = earliest  # pyright: ignore[reportPossiblyUnboundVariable]
        return earliest

    def timeline(self, lo: float, hi: int) -> Timeline:
        """The frame's orderings, in a loop for every iteration with keys in
        [lo, hi] at least (built once per state of the flags)."""
        timeline = self._timeline
        if timeline is None or lo < timeline.lo or hi > timeline.hi:
            if timeline is not None:
                lo, hi = min(lo, timeline.lo), max(hi, timeline.hi)
            # Keys of the body and the next iteration cover most queries.
            timeline = Timeline(self, min(lo, 0), max(hi, 2 * self.period))
            self._timeline = timeline
        return timeline

    def flags_changed(self) -> None:
        """Forget the sorted orderings: `syncs`, `edges` or `fences` changed."""
        self._timeline = None

    def covers(
        self,
        dep: Dep,
        without: Sync | None = None,
        carriers: set[Sync | None] | None = None,
    ) -> bool:
        """Whether the flags order `dep`, also through the flags inside the loop or
        if nodes holding its producer (in the run of the producer, up to the
        run's end) and its consumer (in the run of the consumer, from its start).

        `carriers` receives the flags of this frame the answer depends on (see
        `propagate`): without any other one, it is the same.
        """
        # Out of the producer's nodes: the pipes each run orders before its end
        # are ordered when the node holding it ends.
        start: dict[Pipe, float] = {dep.src: 0}
        key = _ops_key
        for frame, node in reversed(dep.src_inner):
            end = _set_key(frame.size) - 1  # key n: the top of the next iteration
            reached = frame.propagate({p: key(node) for p in start}, end)
            start = {p: 0 for p, k in reached.items() if k <= end}
            key = _exit_key
        exit_key = dep.src_key if not dep.src_inner else _exit_key(dep.set_lo - 1)
        entry = {p: dep.src_key for p in start if p == dep.src} | {
            p: exit_key for p in start if p != dep.src
        }
        reached = self.propagate(entry, dep.dst_key, without, carriers=carriers)
        if reached.get(dep.dst, inf) <= dep.dst_key:
            return True
        # Into the consumer's nodes: what is ordered before a run starts.
        limit = dep.dst_key
        for frame, node in dep.dst_inner:
            entered = {p: 0 for p, k in reached.items() if k <= limit}
            limit = _start_key(node)
            reached = frame.propagate(entered, limit, entered=True)
        return bool(dep.dst_inner) and reached.get(dep.dst, inf) <= limit

    # --- flag placement ------------------------------------------------------------------
    def place(
        self,
        pair: tuple[Pipe, Pipe],
        set_lo: int,
        set_hi: int,
        wait_lo: int,
        wait_hi: int,
    ) -> tuple[int, int, int] | None:
        """(set gap, wait gap, shift) for flags in these windows, or None.

        The set goes first in its window and the wait last. In a loop, a set that
        may sit at the iteration boundary goes there when its pipe is in
        `boundary_pipes`: it is then a set at the top of the next iteration, with
        its wait in that same iteration, which needs no prologue or drain (and
        orders no earlier work in the first iteration). For `forward_pairs` every
        set that would cross the boundary goes there, even if that delays it.
        """
        set_gap, wait_gap = set_lo, wait_hi
        if set_lo > set_hi or wait_lo > wait_hi or set_gap > wait_gap:
            return None
        n = self.size
        if self.loop is None:
            return set_gap, wait_gap, 0
        boundary = -(-set_gap // n) * n
        free = pair[0] in self.boundary_pipes and boundary <= set_hi
        if (free or pair in self.forward_pairs) and boundary <= wait_gap:
            set_gap = shift = boundary  # gap 0 of the next iteration
        else:
            shift = (set_gap - 1) // n * n  # set_gap in [1, n]: n is the body's end
        if wait_gap - set_gap >= n:
            return None
        return set_gap - shift, wait_gap - shift, shift

    def new_sync(self, dep: Dep) -> Sync:
        placed = self.place(
            (dep.src, dep.dst), dep.set_lo, dep.set_hi, dep.wait_lo, dep.wait_hi
        )
        assert placed is not None, "a dependency always has a place"
        set_gap, wait_gap, shift = placed
        return Sync(
            dep.src,
            dep.dst,
            dep.set_lo - shift,
            dep.set_hi - shift,
            dep.wait_lo - shift,
            dep.wait_hi - shift,
            set_gap,
            wait_gap,
            dep.producer,
            dep.consumer,
        )

    def merge(self, sync: Sync, dep: Dep) -> bool:
        """Let `sync` also cover `dep` if that delays nothing; whether it did."""
        for shift in (0, -self.size, self.size) if self.loop is not None else (0,):
            windows = (
                max(sync.set_lo, dep.set_lo + shift),
                min(sync.set_hi, dep.set_hi + shift),
                max(sync.wait_lo, dep.wait_lo + shift),
                min(sync.wait_hi, dep.wait_hi + shift),
            )
            placed = self.place((dep.src, dep.dst), *windows)
            if placed is None:
                continue
            set_gap, wait_gap, moved = placed
            sync.set_lo, sync.set_hi, sync.wait_lo, sync.wait_hi = (
                w - moved for w in windows
            )
            sync.set_gap, sync.wait_gap = set_gap, wait_gap
            return True
        return False

    def is_carried(self, sync: Sync) -> bool:
        return self.loop is not None and sync.wait_gap >= self.size


Conflict = tuple[
    tuple[object, ...],
    int,
    int,
    Access,
    Access,
    tuple[tuple[Frame, int], ...],
    tuple[tuple[Frame, int], ...],
]
"""(key, a, b, access of node a, access of node b, `src_inner`, `dst_inner`): the
key names a dependency (nodes, pipes and the nodes inside them holding the ops)."""


# --------------------------------------------------------------------------------------
# The analysis of one function
# --------------------------------------------------------------------------------------


def _has_instructions(op: Operation) -> bool:
    return any(isinstance(o, HwInstruction) for o in op.walk())


class FunctionSync:
    """Builds the frames of a function, chooses its flags and writes them."""

    def __init__(self, func_op: func.FuncOp, target: Target):
        self.target = target
        self.analysis = AccessAnalysis(target)
        self.ranges = index_ranges(func_op)
        self.root = self.build(func_op.body.block, None, None, -1)
        before: set[Pipe] = set()
        for node in self.root.nodes:
            for child in node.children:
                if child.loop is not None:
                    child.boundary_pipes = frozenset(PIPES) - before
            before.update(node.pipes)

    def restart(self, pair: tuple[Pipe, Pipe]) -> None:
        """Forget every flag, to synchronise again with `pair` among the
        `forward_pairs` (the frames and their conflicts stay)."""
        for frame in self.root.frames():
            frame.forward_pairs |= {pair}
            frame.deps, frame.syncs, frame.edges, frame.fences = [], [], [], []
            frame.flags_changed()

    # --- frames and dependencies -----------------------------------------------------------
    def build(
        self, block: Block, loop: scf.ForOp | None, parent: Frame | None, index: int
    ) -> Frame:
        frame = Frame(block, loop, parent, index)
        for op in block.ops:
            if isinstance(op, FlagOp | PipeBarrierOp):
                raise op_error(
                    op,
                    "hw-insert-sync expects IR without set_flag, wait_flag and "
                    "pipe_barrier; run hw-strip-sync first to recompute them",
                )
            if isinstance(op, HwInstruction):
                if accesses := self.analysis.accesses(op):
                    frame.nodes.append(Node(op, accesses))
                continue
            if not op.regions or not _has_instructions(op):
                continue
            if not isinstance(op, scf.ForOp | scf.IfOp):
                raise op_error(
                    op,
                    f"hw-insert-sync handles ascend_hw instructions in scf.for and "
                    f"scf.if, not in '{op.name}'",
                )
            node = Node(op, [])
            position = len(frame.nodes)
            for region in op.regions:
                for child_block in region.blocks:
                    child_loop = (
                        op
                        if isinstance(op, scf.ForOp)
                        and not (
                            loop is None
                            and _innermost(op)
                            and _runs_at_most_once(op, self.ranges)
                        )
                        else None
                    )
                    child = self.build(child_block, child_loop, frame, position)
                    node.children.append(child)
                    node.accesses.extend(a for n in child.nodes for a in n.accesses)
            if node.accesses:
                frame.nodes.append(node)
        return frame

    def dependencies(self, frame: Frame) -> list[Dep]:
        """Every ordering the frame's nodes need: one per node pair, pipe pair and
        the nodes inside loops and ifs that hold the accesses (`Frame.conflicts`).

        A loop node against itself needs none when its own frame orders one
        iteration's access before the next's.
        """
        n = frame.size
        keys: set[tuple[object, ...]] = set()
        deps: list[Dep] = []
        for key, a, b, x, y, src_inner, dst_inner in frame.conflicts:
            if key in keys or _loop_orders_itself(
                frame.nodes[a], frame.nodes[b % n], x, y
            ):
                continue
            keys.add(key)
            deps.append(
                frame.dep(a, b, x.pipe, y.pipe, x.op, y.op, src_inner, dst_inner)
            )
        return deps

    # --- choosing flags --------------------------------------------------------------------
    def synchronise(self, frame: Frame) -> None:
        """Choose the flags of `frame` and of every frame nested in it."""
        for c, node in enumerate(frame.nodes):
            for child in node.children:
                self.synchronise(child)
            if (
                isinstance(node.op, scf.ForOp)
                and not _branches(node)
                and _runs_at_least_once(node.op)
            ):
                frame.edges += _through_first_iteration(node.children[0], c)
                frame.flags_changed()
        if frame is self.root:
            self.plan_prologues()
        frame.deps = self.dependencies(frame)
        _select(frame, frame.deps)
        if frame.loop is None:
            return
        # Each round adds orderings not yet implied, from a finite set: it ends.
        while pending := self.pending_deps(frame):
            frame.deps.extend(pending)
            _select(frame, frame.deps)

    def pending_deps(self, frame: Frame) -> list[Dep]:
        """Orderings that keep a loop's flags from having two sets pending.

        The target allows one unconsumed set per pipe pair and event: the next
        iteration's set must come after this iteration's wait. Dependencies
        between the same buffers in both directions usually imply it; addresses
        that move with the loop index and flags inside an `scf.if` may not. The
        ordering is a flag back from after the wait to before the next set; when
        only one node separates them the wait moves one node earlier to make
        room, and when none does a `pipe_barrier all` precedes the set.
        """
        n = frame.size
        new: list[Dep] = []
        for sync in frame.syncs:
            next_set = sync.set_gap + n
            if sync.fenced or frame.reaches(
                sync.dst, _wait_key(sync.wait_gap), sync.src, _set_key(next_set)
            ):
                continue
            if sync.wait_gap + 1 > next_set - 1:
                frame.flags_changed()
                if sync.wait_gap - 1 < sync.set_gap:
                    sync.fenced = True
                    continue
                sync.wait_gap -= 1
                sync.wait_hi = sync.wait_gap
                sync.wait_lo = min(sync.wait_lo, sync.wait_gap)
            new.append(
                Dep(
                    sync.dst,
                    sync.src,
                    _wait_key(sync.wait_gap),
                    _set_key(next_set),
                    sync.wait_gap + 1,
                    sync.wait_gap + 1,
                    next_set - 1,
                    next_set - 1,
                    sync.consumer,
                    sync.producer,
                )
            )
        for c, node in enumerate(frame.nodes):
            if not _branches(node):
                continue
            for src, dst in sorted(_branch_flag_pairs(node)):
                if not frame.reaches(
                    dst, _exit_key(c), src, _start_key(c) + frame.period
                ):
                    new.append(frame.dep(c, c + n, dst, src, node.op, node.op))
        return new

    def plan_prologues(self) -> None:
        """Place the first set and last wait of each loop-carried flag at the top.

        The prologue set goes before the first top-level node using its source
        pipe (so it waits for nothing), the drain wait after the last one using its
        destination pipe (so it blocks nothing). They order the prologue before the
        drain, and when the flag is set after all its pipe's work in a top-level
        loop, that loop's work before the drain.
        """
        root = self.root
        for t, node in enumerate(root.nodes):
            for child in node.children:
                for frame in child.frames():
                    for sync in frame.syncs:
                        if not frame.is_carried(sync):
                            continue
                        sync.prologue_gap = min(
                            (
                                i
                                for i in range(t + 1)
                                if sync.src in root.nodes[i].pipes
                            ),
                            default=t,
                        )
                        sync.drain_gap = 1 + max(
                            i
                            for i in range(t, root.size)
                            if sync.dst in root.nodes[i].pipes
                        )
                        drain = _wait_key(sync.drain_gap)
                        root.edges.append(
                            (sync.src, _set_key(sync.prologue_gap), sync.dst, drain)
                        )
                        last = frame.prev_with(sync.src, frame.size)
                        if frame.loop is node.op and sync.set_gap > last:
                            root.edges.append((sync.src, _ops_key(t), sync.dst, drain))
        root.flags_changed()

    # --- event ids -------------------------------------------------------------------------
    def allocate_events(self) -> None:
        """Give every flag an event id of its pipe pair, reusing ids when safe.

        When a pair runs out of ids the flag falls back, cheapest first:

        1. when loop-carried flags of the pair hold ids, `OutOfEvents` (to
           synchronise again with flags that stay in their iteration);
        2. it is merged into a live flag of its block (`_squeeze`: its set moves
           later, its wait earlier);
        3. a `pipe_barrier all` before its set orders every earlier wait before
           it, freeing the ids of flags that end there;
        4. it becomes a flag to a third pipe and one from there (`relay`);
        5. a `pipe_barrier all` takes its place (`_to_barrier`): no id.
        """
        placed: list[tuple[Frame, Sync]] = []
        for frame in self.root.frames():
            for sync in sorted(frame.syncs, key=lambda s: (s.set_gap, s.wait_gap)):
                taken = self.taken(frame, sync, placed)
                free = self.free_event(taken)
                pair = (sync.src, sync.dst)
                if free is None and pair not in frame.forward_pairs:
                    holders = [(frame, sync), *placed]
                    if any(
                        f.is_carried(o) for f, o in holders if (o.src, o.dst) == pair
                    ):
                        raise OutOfEvents(pair)
                if free is None and _squeeze(frame, sync, taken):
                    continue
                fenced = sync.fenced
                if free is None and not fenced:
                    # Order every earlier wait before the set: ids of flags that
                    # end before it become free.
                    sync.fenced = True
                    frame.flags_changed()
                    free = self.free_event(
                        [
                            other
                            for other in taken
                            if not self.may_share(
                                frame, sync, _frame_of(placed, other), other
                            )
                        ]
                    )
                    if free is None:
                        sync.fenced = False
                        frame.flags_changed()
                if free is None and self.relay(frame, sync, placed):
                    continue
                if free is None:
                    _to_barrier(frame, sync)
                    continue
                sync.event = free
                placed.append((frame, sync))

    def taken(
        self, frame: Frame, sync: Sync, placed: Sequence[tuple[Frame, Sync]]
    ) -> list[Sync]:
        """The flags placed so far whose event id `sync` may not share."""
        return [
            other
            for other_frame, other in placed
            if (other.src, other.dst) == (sync.src, sync.dst)
            and not self.may_share(frame, sync, other_frame, other)
        ]

    def free_event(self, taken: Sequence[Sync]) -> int | None:
        """The lowest event id no flag of `taken` holds."""
        used = {other.event for other in taken}
        return next(
            (e for e in range(self.target.sync.event_ids) if e not in used), None
        )

    def relay(self, frame: Frame, sync: Sync, placed: list[tuple[Frame, Sync]]) -> bool:
        """Replace `sync` (P -> Q) by P -> R and R -> Q through a third pipe R when
        both pairs have an id free; whether it did.

        R waits where Q did and sets right after (`Sync.late`), so the chain
        orders what the flag did (and R's later work after the producer). R is
        the pipe whose work lies farthest from the wait (the set waits for R's
        earlier work, the wait holds R's later work); S, whose wait holds the
        issue of everything after it, comes last.
        """
        if frame.is_carried(sync):
            return False
        set_gap, wait_gap = sync.set_gap, sync.wait_gap
        index = frame.syncs.index(sync)
        for pipe in self._relay_pipes(frame, sync):
            to = Sync(
                *(sync.src, pipe, set_gap, set_gap, wait_gap, wait_gap),
                *(set_gap, wait_gap, sync.producer, sync.consumer),
                fenced=sync.fenced,
            )
            on = Sync(
                *(pipe, sync.dst, wait_gap, wait_gap, wait_gap, wait_gap),
                *(wait_gap, wait_gap, sync.consumer, sync.consumer),
                late=True,
            )
            # A flag of the frame the same as a leg already serves as that leg.
            legs = [leg for leg in (to, on) if not _has_twin(frame, leg)]
            frame.syncs[index : index + 1] = legs
            frame.flags_changed()
            events: list[int] = []
            for leg in legs:
                if (event := self.free_event(self.taken(frame, leg, placed))) is None:
                    break
                events.append(event)
            else:
                for leg, event in zip(legs, events, strict=True):
                    leg.event = event
                    placed.append((frame, leg))
                return True
            frame.syncs[index : index + len(legs)] = [sync]
            frame.flags_changed()
        return False

    @staticmethod
    def _relay_pipes(frame: Frame, sync: Sync) -> list[Pipe]:
        """The pipes `relay` may go through, best first."""
        gap = sync.wait_gap

        def distance(pipe: Pipe) -> float:
            if pipe not in frame.users:
                return inf
            before = gap - frame.prev_with(pipe, gap)
            after = frame.next_with(pipe, gap - 1) - gap + 1
            return min(before, after)

        others = [p for p in PIPES if p not in (sync.src, sync.dst)]
        return sorted(others, key=lambda p: (p == Pipe.S, -distance(p)))

    def may_share(self, fx: Frame, x: Sync, fy: Frame, y: Sync) -> bool:
        """Whether two flags of one pipe pair may use the same event id: their
        set..wait spans never overlap, and each wait precedes the other's next set.

        The spans are compared in the innermost frame holding both; a flag nested
        deeper spans its whole node there (a loop-carried one, everything from its
        prologue to its drain).
        """
        path_x, path_y = _ancestry(fx), _ancestry(fy)
        common = 0
        while (
            common < min(len(path_x), len(path_y)) and path_x[common] is path_y[common]
        ):
            common += 1
        frame = path_x[common - 1]
        spans: list[tuple[int, int, bool]] = []  # set key, wait key, fenced set
        for path, sync in ((path_x, x), (path_y, y)):
            owner = path[-1]
            if owner is frame:
                spans.append((sync.set_key, _wait_key(sync.wait_gap), sync.fenced))
            elif not owner.is_carried(sync):
                node = path[common].parent_node
                spans.append((_start_key(node), _exit_key(node), sync.fenced))
            elif frame is self.root:
                prologue, drain = _set_key(sync.prologue_gap), _wait_key(sync.drain_gap)
                spans.append((prologue, drain, False))
            else:
                return False  # live from before the outermost loop to after it
        if spans[0][:2] == spans[1][:2]:
            if path_x[-1] is frame or path_y[-1] is frame:
                return False  # one set..wait span, or one flag inside the other's
            # Different branches of one scf.if.
            return not (fx.is_carried(x) or fy.is_carried(y))
        period = frame.period
        if not period:
            first, second = sorted(spans)
            return first[1] < second[0] and self._precedes(frame, x, first[1], second)
        (set_a, wait_a, _), (set_b, wait_b, _) = spans
        for k in range(-2, 3):
            if max(set_a, set_b + k * period) <= min(wait_a, wait_b + k * period):
                return False
        for first, second in (spans, spans[::-1]):
            m = -((second[0] - first[1]) // period)  # b's first set after a's wait
            if second[0] + m * period <= first[1]:
                m += 1
            next_set = (second[0] + m * period, second[1], second[2])
            if not self._precedes(frame, x, first[1], next_set):
                return False
        return True

    @staticmethod
    def _precedes(
        frame: Frame, pair: Sync, wait_key: int, later: tuple[int, int, bool]
    ) -> bool:
        """Whether a wait at `wait_key` is consumed before the set `later` fires."""
        set_key, _, fenced = later
        return fenced or frame.reaches(pair.dst, wait_key, pair.src, set_key)

    # --- writing the flags -----------------------------------------------------------------
    def emit(self) -> None:
        for frame in self.root.frames():
            _emit_frame(frame, self.root)


def _inner(node: Node, op: Operation) -> tuple[tuple[Frame, int], ...]:
    """The frames inside loop or if `node` down to `op`, each with its node
    holding `op` (empty for an instruction node)."""
    for child in node.children:
        if _inside(op, child.block):
            index = child.index_of(op)
            return ((child, index), *_inner(child.nodes[index], op))
    return ()


def _runs_at_most_once(loop: scf.ForOp, ranges: Mapping[SSAValue, Range]) -> bool:
    """Whether the loop's bounds are at most one step apart (tile-pipeline's
    remainder loop of `trips mod 2` iterations) or its `MAX_TRIPS_ATTR` is at
    most 1: its body runs once or not at all, like a branch of an scf.if, and
    nothing in it waits for an earlier iteration."""
    step = _constant(loop.step)
    if step is None or step <= 0:
        return False
    most = loop.attributes.get(MAX_TRIPS_ATTR)
    if isinstance(most, IntegerAttr) and most.value.data <= 1:
        return True
    distance = affine_of(loop.ub) - affine_of(loop.lb)
    high = distance.const
    for symbol, coeff in distance.coeffs.items():
        if not isinstance(symbol, SSAValue) or symbol not in ranges:
            return False
        bound = ranges[symbol].hi if coeff > 0 else ranges[symbol].lo
        if bound is None:
            return False
        high += coeff * bound
    return high <= step


def _innermost(loop: scf.ForOp) -> bool:
    """Whether no loop is nested in `loop`. Only such a loop of at most one
    trip, and not in a loop itself, is taken for a branch: flags carried around
    a branch in a loop, or around loops in a branch, fall back to fences sooner
    (gemm's block loop of one trip per core in a loop of two got one)."""
    return not any(isinstance(op, scf.ForOp) for op in loop.body.walk())


def _branches(node: Node) -> bool:
    """Whether `node` runs its body at most once: an scf.if, or a loop of at
    most one trip (`_runs_at_most_once`)."""
    return bool(node.children) and node.children[0].loop is None


def _runs_at_least_once(loop: scf.ForOp) -> bool:
    """Whether the loop's bounds are a constant distance apart, with a step that
    does not skip the first iteration (a positive constant)."""
    trips = affine_of(loop.ub) - affine_of(loop.lb)
    step = _constant(loop.step)
    return not trips.coeffs and trips.const > 0 and step is not None and step > 0


def _through_first_iteration(
    body: Frame, node: int
) -> list[tuple[Pipe, int, Pipe, int]]:
    """Orderings through a loop node that runs at least once: what its first
    iteration orders after each pipe's position at the loop's start is ordered
    after it when the loop ends."""
    end = _set_key(body.size) - 1
    edges: list[tuple[Pipe, int, Pipe, int]] = []
    for pipe in PIPES:
        reached = body.propagate({pipe: 0}, end, entered=True)
        edges += [
            (pipe, _start_key(node), other, _exit_key(node))
            for other, key in reached.items()
            if other != pipe and key <= end
        ]
    return edges


def _loop_orders_itself(first: Node, second: Node, x: Access, y: Access) -> bool:
    """Whether a loop node's own flags order `x` in one of its iterations before
    `y` in the next: loop-carried flags are set before the outermost loop and
    drained after it, so the next iteration may be in a later run of the loop."""
    if first is not second or not first.children or _branches(first):
        return False
    body = first.children[0]
    a, b = body.index_of(x.op), body.index_of(y.op)
    return body.reaches(x.pipe, _ops_key(a), y.pipe, _start_key(b) + body.period)


def _inside(op: Operation, block: Block) -> bool:
    current: Operation | None = op
    while current is not None:
        if current.parent_block() is block:
            return True
        current = current.parent_op()
    return False


def _conflicts(
    first: Node, second: Node, later: LoopShift | None
) -> Iterator[tuple[Access, Access]]:
    """Access pairs of two nodes on different pipes that may touch the same byte."""
    for x in first.accesses:
        for y in second.accesses:
            if (
                x.pipe != y.pipe
                and (x.write or y.write)
                and may_overlap(x.region, y.region, later)
            ):
                yield x, y


def _branch_flag_pairs(node: Node) -> set[tuple[Pipe, Pipe]]:
    """Pipe pairs of flags in the branches of an scf.if, outside nested loops."""
    pairs: set[tuple[Pipe, Pipe]] = set()
    for child in node.children:
        pairs.update((s.src, s.dst) for s in child.syncs)
        for inner in child.nodes:
            if _branches(inner):
                pairs.update(_branch_flag_pairs(inner))
    return pairs


def _frame_of(placed: Sequence[tuple[Frame, Sync]], sync: Sync) -> Frame:
    return next(frame for frame, other in placed if other is sync)


def _squeeze(frame: Frame, sync: Sync, live: Sequence[Sync]) -> bool:
    """Fold `sync` into the live flag of its block that stays longest apart.

    A fence stays where it is when the set it preceded moves later (in
    `Frame.fences`): the ids of flags placed before may rely on what it orders.
    """
    if frame.is_carried(sync):
        return False
    best: tuple[int, Sync, int, int] | None = None
    for other in live:
        if other not in frame.syncs or frame.is_carried(other):
            continue
        set_gap = max(sync.set_gap, other.set_gap)
        wait_gap = min(sync.wait_gap, other.wait_gap)
        if set_gap <= wait_gap and (best is None or wait_gap - set_gap > best[0]):
            best = (wait_gap - set_gap, other, set_gap, wait_gap)
    if best is None:
        return False
    _, other, set_gap, wait_gap = best
    fenced = False
    for folded in (sync, other):
        if folded.fenced and folded.set_gap != set_gap:
            frame.fences.append((folded.set_gap, folded.producer))
        fenced = fenced or (folded.fenced and folded.set_gap == set_gap)
    other.fenced = fenced
    other.set_gap, other.wait_gap = set_gap, wait_gap
    other.set_lo = other.set_hi = set_gap
    other.wait_lo = other.wait_hi = wait_gap
    frame.syncs.remove(sync)
    frame.flags_changed()
    return True


def _has_twin(frame: Frame, sync: Sync) -> bool:
    """Whether a flag of `frame` orders what `sync` does: the same pipes, set,
    wait and fence."""
    return any(
        (other.src, other.dst, other.set_key, other.wait_gap)
        == (sync.src, sync.dst, sync.set_key, sync.wait_gap)
        and other.fenced >= sync.fenced
        for other in frame.syncs
    )


def _to_barrier(frame: Frame, sync: Sync) -> None:
    """Replace `sync` by a `pipe_barrier all` where it waits: the barrier orders
    everything before it before everything after it, the producer before the
    consumer among them, and needs no event id.

    It orders at least what the flag did (its set is no later than the barrier),
    so the flags chosen and the ids given before stay valid. A fence that
    preceded the set stays, as in `_squeeze`.
    """
    assert not frame.is_carried(sync)
    if sync.fenced:
        frame.fences.append((sync.set_gap, sync.producer))
    frame.fences.append((sync.wait_gap, sync.consumer))
    frame.syncs.remove(sync)
    frame.flags_changed()


def _ancestry(frame: Frame) -> list[Frame]:
    path = [frame]
    while path[-1].parent is not None:
        path.append(path[-1].parent)  # pyright: ignore[reportArgumentType]
    return path[::-1]


def _select(frame: Frame, deps: Sequence[Dep]) -> None:
    """Cover `deps` with flags: shortest first, each only if not yet ordered; then
    drop the flags the others make redundant."""
    ordered = sorted(deps, key=lambda d: (d.dst_key - d.src_key, d.src_key, d.dst_key))
    for dep in ordered:
        if frame.covers(dep):
            continue
        for sync in frame.syncs:
            if (sync.src, sync.dst) == (dep.src, dep.dst) and frame.merge(sync, dep):
                break
        else:
            frame.syncs.append(frame.new_sync(dep))
        frame.flags_changed()
    _drop_redundant(frame, ordered)


def _drop_redundant(frame: Frame, deps: Sequence[Dep]) -> None:
    """Remove, last placed first, every flag without which the others still order
    all of `deps`.

    Only the dependencies no other one implies are asked (`_tightest`), and about
    a flag only those whose last answer it carried: the answers of the others stay
    the same without it. A dependency no flag orders keeps every flag (each
    removal would have to order it).
    """
    spans = [
        (d.src, d.dst, d.src_key, d.dst_key, not d.src_inner and not d.dst_inner)
        for d in deps
    ]
    checked = [deps[i] for i in _tightest(spans)]
    carried: list[set[Sync | None]] = []  # per checked dependency
    for dep in checked:
        carried.append(set())
        if not frame.covers(dep, carriers=carried[-1]):
            return
    for sync in list(reversed(frame.syncs)):
        answers: dict[int, set[Sync | None]] = {}
        for i, dep in enumerate(checked):
            if sync not in carried[i]:
                continue
            answers[i] = set()
            if not frame.covers(dep, without=sync, carriers=answers[i]):
                break
        else:
            frame.syncs.remove(sync)
            frame.flags_changed()
            for i, carriers in answers.items():
                carried[i] = carriers


def _tightest(spans: Sequence[tuple[Pipe, Pipe, int, int, bool]]) -> list[int]:
    """The indices of the dependencies no earlier one implies, given as (source
    pipe, destination pipe, producer key, consumer key, whether both ends are
    instructions of the frame).

    One whose ends are instructions (no `src_inner` or `dst_inner`) implies every
    one of its pipes with a producer no later and a consumer no earlier: ordered,
    the flags that carry it carry those too, and nested ends only add ways to be
    ordered. A shorter span comes earlier in `_select`'s order; of equal spans,
    the one listed first implies the others.
    """
    implied: set[int] = set()
    earliest_end: dict[tuple[Pipe, Pipe], int] = {}
    # Per pipe pair, the latest producer first, then the earliest consumer.
    for i in sorted(
        range(len(spans)), key=lambda i: (*spans[i][:2], -spans[i][2], spans[i][3])
    ):
        src, dst, src_key, dst_key, plain = spans[i]
        if earliest_end.get((src, dst), inf) <= dst_key:
            implied.add(i)
        elif plain:
            earliest_end[src, dst] = dst_key
    return [i for i in range(len(spans)) if i not in implied]


def _emit_frame(frame: Frame, root: Frame) -> None:
    """Insert the frame's flags (and at the top, the prologues and drains of
    loop-carried ones): fences, then sets right after their gap's previous node
    (a fence orders the sets of its gap, as `propagate` takes it), waits right
    before its next one, then late sets and their waits (`Sync.late`)."""
    block = frame.block
    n = frame.size
    fences: dict[int, list[Operation]] = {}
    sets: dict[int, list[Operation]] = {}
    waits: dict[int, list[Operation]] = {}
    late: dict[int, list[Operation]] = {}  # late sets, then their waits

    def fence(gap: int, location_of: Operation) -> PipeBarrierOp:
        barrier = PipeBarrierOp(Pipe.ALL)
        barrier.location = location_of.location
        fences.setdefault(gap, []).append(barrier)
        return barrier

    def add(sync: Sync, set_gap: int, wait_gap: int, fenced: bool) -> None:
        set_op = SetFlagOp(sync.src, sync.dst, sync.event)
        wait_op = WaitFlagOp(sync.src, sync.dst, sync.event)
        set_op.location = sync.producer.location
        wait_op.location = sync.consumer.location
        if fenced:
            sync.ops.append(fence(set_gap, sync.producer))
        if sync.late:
            ops = late.setdefault(set_gap, [])
            ops.insert(sum(isinstance(op, SetFlagOp) for op in ops), set_op)
            late.setdefault(wait_gap, []).append(wait_op)
        else:
            sets.setdefault(set_gap, []).append(set_op)
            waits.setdefault(wait_gap, []).append(wait_op)
        sync.ops += (set_op, wait_op)

    for sync in frame.syncs:
        carried = frame.is_carried(sync)
        wait_gap = sync.wait_gap - n if carried else sync.wait_gap
        add(sync, sync.set_gap, wait_gap, sync.fenced)
    if frame is root:
        for inner in root.frames():
            for sync in inner.syncs:
                if inner.is_carried(sync):
                    add(sync, sync.prologue_gap, sync.drain_gap, False)
    for gap, location_of in frame.fences:
        fence(gap, location_of)
    terminator = block.last_op
    assert terminator is not None
    for gap in sorted(fences.keys() | sets.keys()):
        ops = fences.get(gap, []) + sets.get(gap, [])
        if gap == 0:  # the top of a loop body, or a prologue
            block.insert_ops_before(ops, frame.nodes[0].op)
        else:
            block.insert_ops_after(ops, frame.nodes[gap - 1].op)
    for gap in sorted(waits.keys() | late.keys()):
        ops = waits.get(gap, []) + late.get(gap, [])
        block.insert_ops_before(ops, frame.nodes[gap].op if gap < n else terminator)


# --------------------------------------------------------------------------------------
# The passes
# --------------------------------------------------------------------------------------


class OutOfEvents(Exception):
    """Loop-carried flags of this pipe pair hold more event ids than there are."""

    def __init__(self, pair: tuple[Pipe, Pipe]):
        super().__init__(f"{pair[0]} -> {pair[1]}")
        self.pair = pair


def insert_sync(func_op: func.FuncOp) -> list[Sync]:
    """Synchronise one function; returns the flags placed (`Sync.ops` are their ops)."""
    target, _ = target_of(func_op)
    function = FunctionSync(func_op, target)
    while True:
        function.synchronise(function.root)
        try:
            function.allocate_events()
        except OutOfEvents as e:
            function.restart(e.pair)
            continue
        function.emit()
        return [sync for frame in function.root.frames() for sync in frame.syncs]


@dataclass(frozen=True)
class HwInsertSyncPass(ModulePass):
    """Insert set_flag/wait_flag pairs between pipes from the buffers they share.

    Input: ascend_hw IR without flags or barriers. Event ids come from the
    module's target (`pypto.target`).
    """

    name = "hw-insert-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func_op in op.walk():
            if not isinstance(func_op, func.FuncOp) or not _has_instructions(func_op):
                continue
            insert_sync(func_op)


@dataclass(frozen=True)
class HwStripSyncPass(ModulePass):
    """Remove every set_flag, wait_flag and pipe_barrier (to re-synchronise IR)."""

    name = "hw-strip-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for sync in [o for o in op.walk() if isinstance(o, FlagOp | PipeBarrierOp)]:
            Rewriter.erase_op(sync)
