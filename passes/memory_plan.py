"""Static memory planning of tiles for `tile-to-hw`.

Every tile value of a function gets a byte offset in its on-chip memory. Values
share space when their lifetimes do not overlap (lifetime-based reuse), and some
values *must* share one buffer:

- the values an `scf.for` carries (init, block argument, yielded value, result):
  the loop runs in place on one buffer; when the yielded value or the init is
  still needed while the buffer holds the carried value, it keeps a buffer of
  its own and `tile-to-hw` copies it (`MemoryPlan.init_copies`/`yield_copies`);
- a `tile.matmul` result and its accumulator (the cube accumulates in place).

Ops may also let their result reuse the buffer of an operand that dies there
(elementwise vector ops computing in place), and may ask for scratch buffers that
live only while they execute.

Lifetimes are intervals over program points: op number `i` (in program order,
nested regions included) reads its operands at point `2i` and defines its results
at `2i + 1`; a region op also has an exit number after its body, where its results
are defined. A value used inside a loop but defined outside it stays live until
the loop exits (every iteration needs it). Values are then grouped (the required
and in-place sharing), and groups are placed first-fit, aligned as the target
requires: first with the lifetimes inside each innermost loop body widened to
the whole body (every value of an iteration its own buffer, so that the next
iteration never waits on this one for a reused buffer), then, when that does
not fit, with the exact lifetimes. The placement that fits is redone within the
room it took, each group at the offset whose bytes the others use farthest in
time from it (`_farthest`: a load that lands where a tile has just died waits
for that tile's last reader). When no placement fits, the diagnostic names the memory, the bytes the
tiles live at the worst point need and the bytes the target has.

With `bank_offset`, a UB buffer that a vector op reads or writes together with
buffers already placed goes to the aligned offset, among a few near its
first-fit one (and the starts of the memory's bank slices), where the op's
first repeat loses the fewest cycles to bank conflicts by the simulator's
formula (`targets.cost.bank_access_cycles`): two sources in different bank groups,
a destination in other banks than its sources. When that placement does not
fit, the plain first-fit one is used (so the capacity diagnostic is the same).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.dialects import func, scf
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects.tile import LoadOp, MatmulOp, MoveOp, TileType, element_bytes
from pypto_mlir.passes.tile_pipeline import PIPELINE_PROLOGUE_ATTR
from pypto_mlir.targets import BankLayout, Target
from pypto_mlir.targets.cost import bank_access_cycles

Interval = tuple[int, int]
"""Closed interval of program points."""


@dataclass(frozen=True)
class ScratchRequest:
    """A buffer an op needs only while it executes."""

    space: str
    size: int


class _Lifetime:
    """A set of program points as sorted, disjoint intervals (overlapping and
    adjacent ones merged), so that whether two lifetimes meet is a binary search
    per interval of the smaller one instead of a test of every pair: a fused
    chain of N ops computing in place builds one group of N intervals, one
    union at a time.

    Merging adjacent intervals keeps `meets` exact: a touch at a merged seam is
    an overlap with the merged interval."""

    def __init__(self, intervals: Iterable[Interval] = ()) -> None:
        self.los: list[int] = []
        self.his: list[int] = []
        for lo, hi in intervals:
            self.add(lo, hi)

    def __len__(self) -> int:
        return len(self.los)

    def add(self, lo: int, hi: int) -> None:
        first = bisect_left(self.his, lo - 1)
        last = bisect_right(self.los, hi + 1)
        if first < last:
            lo, hi = min(lo, self.los[first]), max(hi, self.his[last - 1])
        self.los[first:last] = [lo]
        self.his[first:last] = [hi]

    def update(self, other: _Lifetime) -> None:
        for lo, hi in zip(other.los, other.his, strict=True):
            self.add(lo, hi)

    def _meets(self, lo: int, hi: int, touching: bool) -> bool:
        """Whether `(lo, hi)` meets an interval of this set (`_Group.meets`)."""
        below = bisect_right(self.los, hi) - 1
        if below >= 0:
            end = self.his[below]
            if end >= lo:
                return True
            if touching and end % 2 == 0 and end + 1 == lo:
                return True
        if touching and hi % 2 == 0:
            above = bisect_left(self.los, hi + 1)
            return above < len(self.los) and self.los[above] == hi + 1
        return False

    def meets(self, other: _Lifetime, touching: bool) -> bool:
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        return any(
            large._meets(lo, hi, touching)
            for lo, hi in zip(small.los, small.his, strict=True)
        )


@dataclass
class _Group:
    """Values that share one buffer."""

    space: str
    size: int
    intervals: list[Interval] = field(default_factory=list[Interval])
    """The lifetimes of the members, as computed (`_iteration_wide` widens each)."""
    members: list[SSAValue] = field(default_factory=list[SSAValue])
    offset: int = -1
    exact: list[Interval] = field(default_factory=list[Interval])
    """The lifetimes as computed, while `intervals` holds widened ones
    (`_place`): `_farthest` measures distances in time with these."""
    lifetime: _Lifetime = field(init=False, repr=False, compare=False)
    """`intervals` merged, for `meets`."""

    def __post_init__(self) -> None:
        self.lifetime = _Lifetime(self.intervals)

    def start(self) -> int:
        return self.lifetime.los[0]

    def end(self) -> int:
        return self.lifetime.his[-1]

    def add(self, lo: int, hi: int) -> None:
        self.intervals.append((lo, hi))
        self.lifetime.add(lo, hi)

    def absorb(self, other: _Group) -> None:
        """Take `other`'s members and lifetimes (a union of groups)."""
        self.intervals += other.intervals
        self.members += other.members
        self.size = max(self.size, other.size)
        self.lifetime.update(other.lifetime)

    def set_intervals(self, intervals: list[Interval]) -> None:
        self.intervals = intervals
        self.lifetime = _Lifetime(intervals)

    def meets(self, other: _Group, touching: bool) -> bool:
        """Whether the two groups are live at a common point. With `touching`,
        a value that dies at an op (its last use at the op's even point) also
        meets one born there (at the next, odd point): they may only share a
        buffer exactly, in place."""
        return self.lifetime.meets(other.lifetime, touching)


_Stream = tuple[_Group, int]
"""A buffer an op's vector instructions go through, and the bytes of it one
repeat touches."""


@dataclass
class _BankUse:
    """The buffers an op's vector instructions read together and write."""

    reads: list[_Stream]
    writes: list[_Stream]
    repeats: int
    """Repeats of one pass over the largest of them."""

    def groups(self) -> list[_Group]:
        return _distinct(g for g, _ in (*self.reads, *self.writes))


@dataclass
class MemoryPlan:
    """Byte offsets of every tile value and scratch buffer of a function."""

    offsets: dict[SSAValue, int]
    scratch: dict[Operation, list[int]]
    init_copies: set[tuple[scf.ForOp, int]]
    """Carried values whose init keeps its own buffer: copy it in before the loop."""
    yield_copies: set[tuple[scf.ForOp, int]]
    """Carried values whose yielded value has its own buffer: copy it back at the end
    of every iteration."""
    high_water: dict[str, int]
    """Per memory: the end of the highest buffer."""


class _Liveness:
    """Program points of the ops of a function and the lifetime of each value."""

    def __init__(
        self, function: func.FuncOp, inplace: Callable[[Operation], Collection[int]]
    ):
        self.entry: dict[Operation, int] = {}
        self.exit: dict[Operation, int] = {}
        self.ops: list[Operation] = []
        self._number(function.body.block)
        self._inplace = inplace

    def _number(self, block: Block) -> None:
        for op in block.ops:
            self.entry[op] = len(self.ops)
            self.ops.append(op)
            for region in op.regions:
                for inner in region.blocks:
                    self._number(inner)
            if op.regions:
                self.exit[op] = len(self.ops)
                self.ops.append(op)
            else:
                self.exit[op] = self.entry[op]

    def definition(self, value: SSAValue) -> int:
        if isinstance(value, OpResult):
            return 2 * self.exit[value.op] + 1
        assert isinstance(value, BlockArgument)
        parent = value.block.parent_op()
        if parent is None or isinstance(parent, func.FuncOp):
            return -1
        return 2 * self.entry[parent] + 1

    def use(self, value: SSAValue, user: Operation, index: int) -> int:
        # A region op hands its operands to its block arguments on entry.
        point = 2 * self.entry[user]
        if not user.regions and index not in self._inplace(user):
            point += 1
        # A value defined outside a loop is needed by every iteration.
        definer = value.op if isinstance(value, OpResult) else value.block.parent_op()
        parent = user.parent_op()
        while parent is not None and not isinstance(parent, func.FuncOp):
            if isinstance(parent, scf.ForOp | scf.WhileOp) and (
                definer is None or not parent.is_ancestor(definer)
            ):
                point = max(point, 2 * self.exit[parent])
            parent = parent.parent_op()
        return point

    def interval(self, value: SSAValue) -> Interval:
        start = self.definition(value)
        end = start
        for use in value.uses:
            end = max(end, self.use(value, use.operation, use.index))
        return start, end

    def op_at(self, point: int) -> Operation:
        return self.ops[max(0, min(point // 2, len(self.ops) - 1))]


def plan_memory(
    function: func.FuncOp,
    target: Target,
    tile_values: Sequence[SSAValue],
    inplace: Callable[[Operation], Collection[int]],
    scratch: Callable[[Operation], Sequence[ScratchRequest]],
    bank_offset: bool = False,
) -> MemoryPlan:
    """Place every value of `tile_values` (all tile values of `function`, in
    program order) and the scratch buffers its ops request.

    `inplace(op)` lists the operand numbers whose value may share the buffer of
    op's result when it dies at op; `scratch(op)` lists the scratch buffers op
    needs; `bank_offset` moves UB buffers a vector op uses together apart in
    the UB banks where space allows. Raises a located diagnostic when a memory
    overflows or a required sharing is impossible.
    """
    live = _Liveness(function, inplace)
    groups: dict[SSAValue, _Group] = {}
    for value in tile_values:
        tile = value.type
        assert isinstance(tile, TileType)
        groups[value] = _Group(
            str(tile.memory_space), tile.byte_size(), [live.interval(value)], [value]
        )

    def union(a: SSAValue, b: SSAValue) -> None:
        ga, gb = groups[a], groups[b]
        if ga is gb:
            return
        if len(ga.members) < len(gb.members):  # the larger absorbs the smaller
            ga, gb = gb, ga
        ga.absorb(gb)
        for member in gb.members:
            groups[member] = ga

    def can_share(a: SSAValue, b: SSAValue) -> bool:
        ga, gb = groups[a], groups[b]
        return ga is gb or (ga.space == gb.space and not ga.meets(gb, False))

    for op in function.walk():
        if isinstance(op, MatmulOp) and op.acc is not None:
            if not can_share(op.acc, op.result):
                raise op_error(
                    op,
                    "the accumulator is still used after tile.matmul accumulates "
                    "into it (the cube accumulates in place)",
                )
            union(op.acc, op.result)

    init_copies: set[tuple[scf.ForOp, int]] = set()
    yield_copies: set[tuple[scf.ForOp, int]] = set()
    for op in function.walk():
        if not isinstance(op, scf.ForOp):
            continue
        yield_op = op.body.block.last_op
        assert isinstance(yield_op, scf.YieldOp)
        for k, result in enumerate(op.results):
            if not isinstance(result.type, TileType):
                continue
            carried = op.body.block.args[k + 1]
            union(carried, result)
            yielded, init = yield_op.arguments[k], op.iter_args[k]
            if can_share(yielded, carried):
                union(yielded, carried)
            else:
                yield_copies.add((op, k))
                point = 2 * live.entry[yield_op]
                groups[carried].add(point, point + 1)
            if can_share(init, carried):
                union(init, carried)
            else:
                init_copies.add((op, k))
                point = 2 * live.entry[op]
                groups[carried].add(point, point + 1)

    for op in function.walk():
        if len(op.results) != 1 or op.results[0] not in groups:
            continue
        for index in inplace(op):
            operand = op.operands[index]
            if operand in groups and can_share(operand, op.results[0]):
                union(operand, op.results[0])
                break

    unique: list[_Group] = []
    for value in tile_values:
        group = groups[value]
        if all(group is not g for g in unique):
            unique.append(group)
    scratch_groups: dict[Operation, list[_Group]] = {}
    for op in function.walk():
        requests = scratch(op)
        if requests:
            point = 2 * live.entry[op]
            scratch_groups[op] = [
                _Group(r.space, r.size, [(point, point + 1)]) for r in requests
            ]
            unique.extend(scratch_groups[op])

    high_water: dict[str, int] = {}
    for space in dict.fromkeys(g.space for g in unique):
        banks = target.memories[space].banks
        uses = (
            _bank_uses(function, groups, scratch_groups, space, target)
            if bank_offset and banks is not None and banks.conflict_cycles
            else []
        )
        placed = _place(
            [g for g in unique if g.space == space], target, space, live, uses
        )
        high_water[space] = placed
    return MemoryPlan(
        {v: g.offset for v, g in groups.items()},
        {op: [g.offset for g in gs] for op, gs in scratch_groups.items()},
        init_copies,
        yield_copies,
        high_water,
    )


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _distinct(groups: Iterable[_Group]) -> list[_Group]:
    unique: list[_Group] = []
    for group in groups:
        if all(group is not g for g in unique):
            unique.append(group)
    return unique


def _bank_uses(
    function: func.FuncOp,
    groups: dict[SSAValue, _Group],
    scratch_groups: dict[Operation, list[_Group]],
    space: str,
    target: Target,
) -> list[_BankUse]:
    """What each vector op (an op other than a DMA or matmul with a result in
    `space`) reads and writes there, as streams: a repeat covers `lanes`
    elements of a tile (lanes = repeat bytes / the widest element), one element
    of a per-row `[M, 1]` tile, one 32-byte block of a scratch buffer."""
    uses: list[_BankUse] = []
    repeat_bytes = target.vector.repeat_bytes
    banks = target.memories[space].banks
    block = banks.width if banks is not None else repeat_bytes
    for op in function.walk():
        if op.regions or isinstance(op, LoadOp | MoveOp | MatmulOp):
            continue
        results = [r for r in op.results if r in groups and groups[r].space == space]
        if not results:
            continue
        operands = [v for v in op.operands if v in groups and groups[v].space == space]
        widest = max(
            element_bytes(cast(TileType, v.type).element_type)
            for v in (*operands, *results)
        )
        lanes = repeat_bytes // widest

        reads = [_stream(groups, v, lanes) for v in operands] + [
            (g, block) for g in scratch_groups.get(op, []) if g.space == space
        ]
        writes = [_stream(groups, r, lanes) for r in results]
        repeats = max(-(-g.size // pitch) for g, pitch in (*reads, *writes))
        uses.append(_BankUse(reads, writes, repeats))
    return uses


def _stream(groups: dict[SSAValue, _Group], value: SSAValue, lanes: int) -> _Stream:
    tile = value.type
    assert isinstance(tile, TileType)
    e = element_bytes(tile.element_type)
    return groups[value], e if tile.get_shape()[-1] == 1 else lanes * e


@dataclass
class _BankChoice:
    """Picks offsets with the fewest bank conflicts for groups with bank uses."""

    banks: BankLayout
    uses: dict[int, list[_BankUse]]
    """id(group) -> the uses it takes part in."""
    limit: int
    alignment: int
    far: bool
    """Also try the later gaps and the starts of the bank slices."""

    def candidates(self, size: int, busy: list[Interval]) -> list[int]:
        """Aligned offsets clear of `busy`: a phase window (one row per bank
        group) from the start of each free gap (the first one only unless
        `far`) and of each bank slice inside it."""
        window = self.banks.groups * self.banks.width
        gaps: list[Interval] = []
        end = 0
        for lo, hi in busy:
            if lo > end:
                gaps.append((end, lo))
            end = max(end, hi)
        gaps.append((end, self.limit))
        found: list[int] = []
        for lo, hi in gaps:
            if lo + size > hi:
                continue
            slice_bytes = self.banks.slice_bytes
            starts = [lo, *range(_round_up(lo + 1, slice_bytes), hi, slice_bytes)]
            for start in starts if self.far else starts[:1]:
                found += [
                    c
                    for c in range(start, min(start + window, hi), self.alignment)
                    if c + size <= hi
                ]
            if not self.far:
                break
        return sorted(set(found))

    def cost(self, group: _Group, offsets: np.ndarray, placed: set[int]) -> np.ndarray:
        """Conflict cycles of the uses of `group` at each of `offsets`, with the
        groups placed so far: `bank_access_cycles` of the first repeats of each
        stream (enough to see every phase of one against another), scaled to
        the use's repeats."""
        total = np.zeros(offsets.size, dtype=np.float64)
        width = self.banks.width
        sample = self.banks.groups
        n = offsets.size

        def blocks(g: _Group, pitch: int) -> np.ndarray:
            """(candidates * sample, blocks) block addresses of `sample` repeats
            (wrapping around inside the buffer)."""
            pitch = min(pitch, g.size)
            starts = np.arange(sample, dtype=np.int64) * pitch % g.size
            rows = -(-pitch // width) + 1
            first = starts // width * width
            block = first[:, None] + width * np.arange(rows)[None, :]
            ends = starts + pitch
            block = np.where(block < ends[:, None], block, -1)
            base = offsets if g is group else np.full(n, g.offset, dtype=np.int64)
            out = base[:, None, None] + block[None, :, :]
            return np.where(block[None, :, :] >= 0, out, -1).reshape(n * sample, rows)

        def known(g: _Group) -> bool:
            return g is group or id(g) in placed

        # Uses that go through the same known streams cost the same per repeat
        # (a fused chain computes in place: hundreds of uses of one pair of
        # buffers): evaluate each such signature once, with their repeats summed.
        repeats: dict[tuple[tuple[int, int], ...], int] = {}
        streams: dict[tuple[tuple[int, int], ...], tuple[list[_Stream], ...]] = {}
        for use in self.uses.get(id(group), []):
            if not any(id(g) in placed for g in use.groups() if g is not group):
                continue
            reads = [(g, p) for g, p in use.reads if known(g)]
            writes = [(g, p) for g, p in use.writes if known(g)]
            key = (
                *((id(g), p) for g, p in reads),
                (-1, -1),
                *((id(g), p) for g, p in writes),
            )
            repeats[key] = repeats.get(key, 0) + use.repeats
            streams.setdefault(key, (reads, writes))
        memo: dict[tuple[int, int], np.ndarray] = {}

        def cached(g: _Group, pitch: int) -> np.ndarray:
            key = (id(g), pitch)
            if key not in memo:
                memo[key] = blocks(g, pitch)
            return memo[key]

        for key, (reads, writes) in streams.items():
            cycles = bank_access_cycles(
                self.banks,
                [cached(g, p) for g, p in reads],
                [cached(g, p) for g, p in writes],
            ).reshape(n, sample)
            extra = (np.maximum(cycles, 1) - 1).sum(axis=1)
            total += extra * (repeats[key] / sample)
        return total

    def choose(self, group: _Group, busy: list[Interval], placed: set[int]) -> int:
        """The candidate with the least conflict cost (the lowest one of those),
        or -1 when `group` has no bank uses or nothing fits."""
        if not self.uses.get(id(group)):
            return -1
        offsets = np.asarray(self.candidates(group.size, busy), dtype=np.int64)
        if not offsets.size:
            return -1
        return int(offsets[int(np.argmin(self.cost(group, offsets, placed)))])


def _farthest(
    group: _Group,
    busy: list[Interval],
    placed: Sequence[_Group],
    ceiling: int,
    alignment: int,
) -> int:
    """Of the offsets clear of `busy` that keep `group` below `ceiling` (0 and
    the ends of the buffers placed so far), the one whose bytes the placed
    groups use farthest in time from `group` (the lowest of those), or -1.

    A tile put where another one has just died makes its load wait for that
    one's last reader (a write after read): the loads of a pipeline's next
    stage then queue behind the compute of the current one."""
    if not placed:
        return -1
    lo = np.array([g.offset for g in placed], dtype=np.int64)
    hi = lo + np.array([_round_up(g.size, alignment) for g in placed], dtype=np.int64)
    ends = np.array([_span(g)[1] for g in placed])
    starts = np.array([_span(g)[0] for g in placed])
    first, last = _span(group)
    distance = np.maximum(first - ends, starts - last).astype(np.float64)
    candidates = np.unique(np.concatenate(([0], [b for _, b in busy], hi)))
    candidates = candidates[candidates + group.size <= ceiling]
    if busy:
        taken = np.array(busy, dtype=np.int64)
        clash = (candidates[:, None] < taken[None, :, 1]) & (
            taken[None, :, 0] < candidates[:, None] + group.size
        )
        candidates = candidates[~clash.any(axis=1)]
    if not candidates.size:
        return -1
    shared = (candidates[:, None] < hi[None, :]) & (
        lo[None, :] < candidates[:, None] + group.size
    )
    score = np.where(shared, distance[None, :], np.inf).min(axis=1)
    return int(candidates[int(np.argmax(score))])


def _span(group: _Group) -> Interval:
    """The first and last point of `group`'s exact lifetimes: two values of one
    loop body both live through the whole body once widened, but the one read
    last is released last, so a later load should take the other's bytes."""
    intervals = group.exact or group.intervals
    return min(lo for lo, _ in intervals), max(hi for _, hi in intervals)


def _first_fit(
    groups: Sequence[_Group],
    alignment: int,
    bank: _BankChoice | None = None,
    ceiling: int | None = None,
) -> int:
    """Give each group the lowest aligned offset clear of the groups placed before
    it that are live at the same time (with `bank`, the one it picks; with
    `ceiling`, the `_farthest` one below it); returns the highest end."""
    placed: list[_Group] = []
    placed_ids: set[int] = set()
    high = 0
    for group in groups:
        busy = sorted(
            (g.offset, g.offset + _round_up(g.size, alignment))
            for g in placed
            if g.meets(group, True)
        )
        offset = bank.choose(group, busy, placed_ids) if bank is not None else -1
        if offset < 0 and ceiling is not None:
            offset = _farthest(group, busy, placed, ceiling, alignment)
        if offset < 0:
            offset = 0
            for lo, hi in busy:
                if offset + group.size <= lo:
                    break
                offset = max(offset, hi)
        group.offset = offset
        placed.append(group)
        placed_ids.add(id(group))
        high = max(high, offset + group.size)
    return high


def _place(
    groups: list[_Group],
    target: Target,
    space: str,
    live: _Liveness,
    uses: Sequence[_BankUse] = (),
) -> int:
    memory = target.memories[space]
    assert memory.size is not None
    orders = (
        sorted(groups, key=lambda g: (g.start(), -g.size)),
        sorted(groups, key=lambda g: (-g.size, g.start())),
    )
    # Bank-aware placements first (far moves, then near ones), each kept only
    # when it fits; the plain first fit last (its failure is the diagnostic).
    choices: list[_BankChoice | None] = [None]
    if uses and memory.banks is not None:
        by_group: dict[int, list[_BankUse]] = {}
        for use in uses:
            for g in use.groups():
                by_group.setdefault(id(g), []).append(use)
        choices = [
            _BankChoice(memory.banks, by_group, memory.size, memory.alignment, far)
            for far in (True, False)
        ] + choices
    exact = [g.intervals for g in groups]
    for group in groups:
        group.exact = group.intervals
    best: tuple[int, list[int]] | None = None
    for intervals in (_iteration_wide(exact, live), exact):
        for group, lifetime in zip(groups, intervals, strict=True):
            group.set_intervals(lifetime)
        for bank in choices:
            best = None
            for order in orders:
                high = _first_fit(order, memory.alignment, bank)
                if best is None or high < best[0]:
                    best = (high, [g.offset for g in groups])
                if high <= memory.size:
                    # the same room, spread out in time where it allows
                    if _first_fit(order, memory.alignment, bank, high) <= high:
                        best = (high, [g.offset for g in groups])
                    break
            assert best is not None
            if best[0] <= memory.size:
                break
        assert best is not None
        if best[0] <= memory.size:
            break
    assert best is not None
    high, offsets = best
    for group, offset, lifetime in zip(groups, offsets, exact, strict=True):
        group.offset = offset
        group.set_intervals(lifetime)
    if high > memory.size:
        point, needed = _peak(groups, memory.alignment)
        if needed > memory.size:
            raise op_error(
                live.op_at(point),
                f"the tiles live here need {needed} bytes of {space} but target "
                f"'{target.name}' has {memory.size} bytes; use smaller tiles",
            )
        raise op_error(
            live.op_at(point),
            f"the buffers of {space} need {high} bytes once placed (the tiles live "
            f"at once need {needed}) but target '{target.name}' has "
            f"{memory.size} bytes; use smaller tiles",
        )
    return high


def _pipeline_span(loop: scf.ForOp) -> tuple[scf.ForOp, scf.ForOp]:
    """`loop` and the loop it runs one pipeline with (tile-pipeline's
    PIPELINE_PROLOGUE_ATTR marks the first of the two), or `loop` alone."""
    before, after = loop.prev_op, loop.next_op
    if PIPELINE_PROLOGUE_ATTR in loop.attributes and isinstance(after, scf.ForOp):
        return loop, after
    if isinstance(before, scf.ForOp) and PIPELINE_PROLOGUE_ATTR in before.attributes:
        return before, loop
    return loop, loop


def _innermost(loop: scf.ForOp) -> bool:
    return not any(isinstance(op, scf.ForOp) for op in loop.body.walk())


def _iteration_wide(
    lifetimes: Sequence[list[Interval]], live: _Liveness
) -> list[list[Interval]]:
    """Lifetimes inside an innermost loop body widened to the whole body (the
    loops that run the steady state).

    Two values of one iteration that share a buffer make the next iteration's
    earlier one wait for this iteration's later one (a write after read across
    the back edge), which serialises the pipes; placing with these lifetimes
    first gives every value of an iteration its own buffer when the memory has
    room, and the exact lifetimes are the fallback."""
    wide: list[list[Interval]] = []
    innermost: dict[scf.ForOp, bool] = {}
    """`_innermost` of each loop met (a walk of its body, once per loop)."""
    for intervals in lifetimes:
        widened = []
        for lo, hi in intervals:
            loop = live.op_at(lo).parent_op()
            while loop is not None and not isinstance(loop, scf.ForOp | func.FuncOp):
                loop = loop.parent_op()
            if isinstance(loop, scf.ForOp) and (
                innermost[loop]
                if loop in innermost
                else innermost.setdefault(loop, _innermost(loop))
            ):
                start, end = _pipeline_span(loop)
                lo, hi = min(lo, 2 * live.entry[start] + 1), max(hi, 2 * live.exit[end])
            widened.append((lo, hi))
        wide.append(widened)
    return wide


def _merged(intervals: Iterable[Interval]) -> list[Interval]:
    merged: list[Interval] = []
    for lo, hi in sorted(intervals):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _peak(groups: Sequence[_Group], alignment: int) -> tuple[int, int]:
    """The program point where the live groups need the most bytes, and those bytes."""
    events: list[tuple[int, int]] = []
    for group in groups:
        size = _round_up(group.size, alignment)
        for lo, hi in _merged(group.intervals):
            events += [(lo, size), (hi + 1, -size)]
    best_point, best, current = 0, 0, 0
    for point, delta in sorted(events):
        current += delta
        if current > best:
            best_point, best = point, current
    return best_point, best
