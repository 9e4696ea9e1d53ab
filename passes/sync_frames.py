"""The model hw-insert-sync chooses flags on: frames, dependencies and flags.

A `Frame` is a block of a function (a loop body when it has a loop) with its
`Node`s, the ops that touch buffers (an instruction, or a loop or if holding
some). Positions in a frame are keys, five per node, so that every place a flag
can be put is ordered. A `Dep` is an ordering two conflicting accesses need, a
`Sync` a set_flag/wait_flag pair chosen for some; `Frame.reaches` and
`Frame.covers` answer whether the flags chosen order a pair (happens-before,
through flags, fences and nested frames). passes/hw_insert_sync.py builds the
frames and chooses, allocates and writes the flags; docs/hw_insert_sync.md has
the reasoning.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from math import inf

from xdsl.dialects import scf
from xdsl.ir import Block, Operation

from pypto_mlir.dialects.ascend_hw import Pipe

from .access_analysis import Access, LoopShift, constant_int, may_overlap

PIPES = tuple(pipe for pipe in Pipe if pipe != Pipe.ALL)
"""The pipes that run instructions."""

# Positions in a block are keys, five per node, so that every place a flag can be
# put is ordered: gap g (before node g) holds sets, then waits; then node g
# starts, finishes its own instructions and ends (its nested flags included).
_KEYS = 5


def gap_set_key(gap: int) -> int:
    return _KEYS * gap


def gap_wait_key(gap: int) -> int:
    return _KEYS * gap + 1


def node_start_key(node: int) -> int:
    return _KEYS * node + 2


def node_ops_key(node: int) -> int:
    return _KEYS * node + 3


def node_exit_key(node: int) -> int:
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
    entered: bool = False
    """Its set was moved to the top of its loop's body for a dependency into
    the loop (`Frame.to_boundary`): a remark says so."""
    late: bool = False
    """The set follows the waits of its gap: the second flag of a relay, set once
    its pipe has waited for the first (`FunctionSync.relay`)."""

    @property
    def set_key(self) -> int:
        return gap_wait_key(self.set_gap) if self.late else gap_set_key(self.set_gap)


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
            (s.src, s.set_key, s.dst, gap_wait_key(s.wait_gap), s) for s in frame.syncs
        ]
        base += [(p, k1, q, k2, None) for p, k1, q, k2 in frame.edges]
        # A fence (pipe_barrier all) before a set orders everything before it.
        base += [
            (None, gap_set_key(s.set_gap), None, gap_set_key(s.set_gap), s)
            for s in frame.syncs
            if s.fenced
        ]
        base += [
            (None, gap_set_key(g), None, gap_set_key(g), None) for g, _ in frame.fences
        ]
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
    relaxed: list[tuple[Sync, int]] = field(default_factory=list[tuple[Sync, int]])
    """Flags (with their next set's gap) `consumed_in_time` let go without a flag
    back, to check again once the frames around have their flags."""
    issued: list[tuple[Sync | Operation, Pipe, Pipe]] = field(
        default_factory=list[tuple["Sync | Operation", Pipe, Pipe]]
    )
    """Flags (or scf.ifs, with the pipes of flags in their branches) that need
    no flag back only because S issues their next set (`before_set`), for the
    remarks."""
    strict_pending: bool = False
    """`consumed_in_time` is not asked (hw-insert-sync runtime-loops=false, or
    an answer failed that check)."""
    runtime_loops: bool = True
    """Dependencies into loops ride on the loops' own flags (`_enter_loop` in
    passes/hw_insert_sync.py; hw-insert-sync runtime-loops)."""
    scalar_issue: bool = True
    """A set counts as firing no earlier than S issues it (`before_set`;
    hw-insert-sync scalar-issue)."""
    fences: list[tuple[int, Operation]] = field(
        default_factory=list[tuple[int, Operation]]
    )
    """Gaps of `pipe_barrier all`s a flag's set left behind (`_squeeze`), with the
    op whose location they take."""
    _timeline: Timeline | None = None
    """`syncs`, `edges` and `fences` as orderings sorted by key; None when they
    changed."""
    _exits: dict[tuple[Pipe, tuple[tuple[Frame, int], ...]], frozenset[Pipe]] = field(
        default_factory=dict
    )
    """`exit_pipes` answers by (producer pipe, `Dep.src_inner`), until the flags
    of a frame nested in this one change."""
    _entries: dict[
        tuple[Pipe, tuple[tuple[Frame, int], ...], int, int],
        tuple[dict[Pipe, float], frozenset[tuple[Pipe, float]]],
    ] = field(default_factory=dict)
    """`entry` answers (and their items) of producers inside nodes, forgotten with
    `_exits`: a loop node's thousands of dependencies share a few."""

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

        Outside loops only those no earlier one implies are kept (`tightest`): a
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
            partners = self.partners(first.pipes)
            for j in partners[bisect_right(partners, i) :]:
                for x, y in _conflicts(first, self.nodes[j], None):
                    add(i, j, x, y)
        if self.loop is None:
            spans = [
                (
                    x.pipe,
                    y.pipe,
                    node_ops_key(a),
                    node_start_key(b),
                    not src and not dst,
                )
                for _, a, b, x, y, src, dst in conflicts
            ]
            return [conflicts[i] for i in tightest(spans)]
        later = LoopShift(self.loop, constant_int(self.loop.step))
        for i, first in enumerate(self.nodes):
            for j in self.partners(first.pipes):
                if i == j and not first.children:
                    continue
                for x, y in _conflicts(first, self.nodes[j], later):
                    # i < j: ordered in one iteration, hence also across two.
                    add(i, j if i < j else j + n, x, y)
        return conflicts

    def partners(self, pipes: frozenset[Pipe]) -> list[int]:
        """The nodes with an access on a pipe other than one of `pipes`, in
        order: only those can conflict with a node whose accesses use `pipes`
        (`_conflicts` pairs accesses on different pipes), so that a chain of
        vector instructions is not compared pair by pair."""
        found = self._partners.get(pipes)
        if found is None:
            others = [q for q in self.users if any(p != q for p in pipes)]
            found = sorted({i for q in others for i in self.users[q]})
            self._partners[pipes] = found
        return found

    @cached_property
    def _partners(self) -> dict[frozenset[Pipe], list[int]]:
        return {}

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
            node_ops_key(a),
            node_start_key(b),
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

    def before_set(self, pipe: Pipe, key: int, src: Pipe, set_key: int) -> bool:
        """Whether `pipe` at `key` is ordered before a set of `src` at `set_key`
        fires (never two pending sets): `src`'s work before the set is, and
        with `scalar_issue` so is S's, since S issues the set in program order
        and holds its issue at its own waits. That is a question of when the
        set fires, not of the data the flags order: the race detector's
        happens-before (sim/race.py) does not carry S's waits to other pipes,
        so `covers` does not use it."""
        if self.reaches(pipe, key, src, set_key):
            return True
        return self.scalar_issue and self.reaches(pipe, key, Pipe.S, set_key)

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
        """Forget the sorted orderings: `syncs`, `edges` or `fences` changed; and
        the enclosing frames' `exit_pipes` answers, which go through this one."""
        self._timeline = None
        frame: Frame | None = self.parent
        while frame is not None:
            frame._exits.clear()
            frame._entries.clear()
            frame = frame.parent

    def covers(self, dep: Dep) -> bool:
        """Whether the flags order `dep`, also through the flags inside the loop or
        if nodes holding its producer (in the run of the producer, up to the
        run's end) and its consumer (in the run of the consumer, from its start)."""
        return self.reaches_consumer(dep, self.propagate(self.entry(dep), dep.dst_key))

    def entry(self, dep: Dep) -> Mapping[Pipe, float]:
        """The keys at which `dep`'s producer orders the pipes of `exit_pipes`
        in this frame: `covers` propagates them up to the consumer. Not to be
        changed (remembered for a producer inside a node)."""
        if not dep.src_inner:
            return {dep.src: dep.src_key}
        return self._entry(dep)[0]

    def entry_items(self, dep: Dep) -> frozenset[tuple[Pipe, float]]:
        """`entry(dep).items()`, for grouping dependencies by their entry."""
        if not dep.src_inner:
            return frozenset(((dep.src, dep.src_key),))
        return self._entry(dep)[1]

    def _entry(
        self, dep: Dep
    ) -> tuple[dict[Pipe, float], frozenset[tuple[Pipe, float]]]:
        question = (dep.src, dep.src_inner, dep.src_key, dep.set_lo)
        known = self._entries.get(question)
        if known is None:
            exit_key = node_exit_key(dep.set_lo - 1)
            entry = {
                p: dep.src_key if p == dep.src else exit_key
                for p in self.exit_pipes(dep)
            }
            known = self._entries[question] = entry, frozenset(entry.items())
        return known

    def reaches_consumer(self, dep: Dep, reached: Mapping[Pipe, float]) -> bool:
        """Whether the pipes `reached` (`propagate` from `entry`) order `dep`'s
        consumer: at its node, or into the runs holding it, what is ordered
        before a run starts."""
        if reached.get(dep.dst, inf) <= dep.dst_key:
            return True
        limit = dep.dst_key
        for frame, node in dep.dst_inner:
            entered = {p: 0 for p, k in reached.items() if k <= limit}
            limit = node_start_key(node)
            reached = frame.propagate(entered, limit, entered=True)
        return bool(dep.dst_inner) and reached.get(dep.dst, inf) <= limit

    def exit_pipes(self, dep: Dep) -> frozenset[Pipe]:
        """The pipes ordered after `dep`'s producer when the node of this frame
        holding it ends: out of each run holding it, innermost first, the pipes
        the run's flags order after it by the run's end.

        Remembered per producer pipe and path: a loop node's accesses give
        thousands of dependencies (every access pair of two nests) over a few
        paths, and `covers` asks for each of them on every round of `_select`.
        """
        if not dep.src_inner:
            return frozenset((dep.src,))
        question = (dep.src, dep.src_inner)
        known = self._exits.get(question)
        if known is not None:
            return known
        start: dict[Pipe, float] = {dep.src: 0}
        key = node_ops_key
        for frame, node in reversed(dep.src_inner):
            end = gap_set_key(frame.size) - 1  # key n: the top of the next iteration
            reached = frame.propagate({p: key(node) for p in start}, end)
            start = {p: 0 for p, k in reached.items() if k <= end}
            key = node_exit_key
        known = self._exits[question] = frozenset(start)
        return known

    def consumed_in_time(self, sync: Sync, next_set: int) -> bool:
        """Whether the wait of loop flag `sync` is consumed before its set at
        gap `next_set` fires, though no flag orders the wait's place before it.

        A wait is consumed once its set fired (no later than the next set, on
        the same pipe) and its pipe finished its earlier records. Walking back
        from the wait to the flag's previous one, each of those records that
        may be the last (an instruction that always runs ends the walk, a
        `pipe_barrier all` too; a loop or if may run nothing) must be ordered
        before the next set: an instruction by the flags after it in its
        run, a wait by its set. This holds where the wait sits before a loop of
        run-time bounds whose every iteration orders its loads before the
        vector unit: when the loop runs no iteration, nothing orders the wait
        itself, but nothing of its pipe ran since its last load either.
        """
        p, q = sync.src, sync.dst
        n = self.size
        if self.loop is None or self.strict_pending:
            return False
        if Pipe.S in (p, q) and not self.scalar_issue:
            return False  # a scalar wait holds the issue of everything after it
        target = gap_set_key(next_set)
        fenced = {g % n for g, _ in self.fences}
        fenced |= {s.set_gap % n for s in self.syncs if s.fenced}
        start = sync.wait_gap // n * n  # the top of the wait's iteration
        for gap in range(sync.wait_gap, sync.wait_gap - n, -1):
            if gap == start and not self.alone_with(q):
                return False  # the first wait follows records outside the loop
            for other in self.syncs:
                if other is sync or other.dst != q or (other.wait_gap - gap) % n:
                    continue
                shift = gap - other.wait_gap
                if not self.before_set(other.src, other.set_key + shift, p, target):
                    return False
            if gap % n in fenced:
                return True
            index = gap - 1
            node = self.nodes[index % n]
            if q not in node.pipes:
                continue
            for access in node.accesses:
                if access.pipe != q:
                    continue
                last = Dep(
                    *(q, p, node_ops_key(index), target, index + 1, index + 1),
                    *(target, target, access.op, sync.producer),
                    _inner(node, access.op),
                )
                if not (
                    self.covers(last)
                    or (self.scalar_issue and self.covers(replace(last, dst=Pipe.S)))
                ):
                    return False
            if not node.children:
                return True  # an instruction that always runs
            if not all(_waits_lead_to(f, q) for c in node.children for f in c.frames()):
                return False
        return True

    def alone_with(self, pipe: Pipe) -> bool:
        """Whether no frame around this one has another node using `pipe` or a
        flag waiting on it: before a loop's first iteration, the pipe's last
        record is then in an earlier run of the loop (its flags chosen here).
        The frames around are synchronised later: `consumed_in_time` answers
        are checked again once they are (`FunctionSync.unsound_pending`)."""
        frame = self
        while (parent := frame.parent) is not None:
            if any(
                i != frame.parent_node and pipe in node.pipes
                for i, node in enumerate(parent.nodes)
            ) or any(s.dst == pipe for s in parent.syncs):
                return False
            frame = parent
        return True

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

    def to_boundary(self, sync: Sync) -> None:
        """Move the set of loop-carried `sync` from the end of the body to the top
        of the next iteration (its set window reaches the boundary: no work of
        its pipe lies between). Between iterations it orders the same; in the
        first it also orders the pipe's work before the loop, and it needs no
        prologue or drain: a dependency from before the loop into the body
        rides on it (`_enter_loop` in passes/hw_insert_sync.py)."""
        n = self.size
        sync.set_lo, sync.set_hi = sync.set_lo - n, sync.set_hi - n
        sync.wait_lo, sync.wait_hi = sync.wait_lo - n, sync.wait_hi - n
        sync.set_gap, sync.wait_gap = 0, sync.wait_gap - n
        sync.entered = True
        self.flags_changed()


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


def _inner(node: Node, op: Operation) -> tuple[tuple[Frame, int], ...]:
    """The frames inside loop or if `node` down to `op`, each with its node
    holding `op` (empty for an instruction node)."""
    for child in node.children:
        if _inside(op, child.block):
            index = child.index_of(op)
            return ((child, index), *_inner(child.nodes[index], op))
    return ()


def _waits_lead_to(frame: Frame, pipe: Pipe) -> bool:
    """Whether every wait of `pipe` in `frame` is followed in its run by an
    instruction of `pipe` (an instruction node, which always runs): then the
    pipe's last record in a run is an instruction."""
    last = max(
        (
            i
            for i, node in enumerate(frame.nodes)
            if not node.children and pipe in node.pipes
        ),
        default=-1,
    )
    n = frame.size
    return all(
        s.dst != pipe or (s.wait_gap - n if frame.is_carried(s) else s.wait_gap) <= last
        for s in frame.syncs
    )


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


def tightest(spans: Sequence[tuple[Pipe, Pipe, int, int, bool]]) -> list[int]:
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
    # Per pipe pair, the latest producer first, then the earliest consumer (the
    # keys made in one pass: a loop's spans number thousands, asked every round).
    keys = [(src, dst, -a, b) for src, dst, a, b, _ in spans]
    for i in sorted(range(len(spans)), key=keys.__getitem__):
        src, dst, src_key, dst_key, plain = spans[i]
        if earliest_end.get((src, dst), inf) <= dst_key:
            implied.add(i)
        elif plain:
            earliest_end[src, dst] = dst_key
    return [i for i in range(len(spans)) if i not in implied]
