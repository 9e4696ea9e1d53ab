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

What an instruction touches is passes/access_analysis.py; the frames, dependencies
and flags, and whether the flags order a pair, are passes/sync_frames.py. This
module builds the frames, chooses the flags, gives them event ids (with the
fallbacks) and writes them. It is a hand-written driver, not rewrite patterns:
which flags a pair of instructions needs depends on every flag chosen in its
block and the blocks around it, and event ids on every flag of the function.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from math import inf

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from pypto_mlir.diagnostics import emit_remark, op_error
from pypto_mlir.dialects.ascend_hw import (
    FlagOp,
    HwInstruction,
    Pipe,
    PipeBarrierOp,
    SetFlagOp,
    WaitFlagOp,
    target_of,
)
from pypto_mlir.passes.index_range import MAX_TRIPS_ATTR, Range, index_ranges
from pypto_mlir.targets import Target

from .access_analysis import Access, AccessAnalysis, affine_of, constant_int
from .sync_frames import (
    PIPES,
    Dep,
    Frame,
    Node,
    Sync,
    gap_set_key,
    gap_wait_key,
    node_exit_key,
    node_ops_key,
    node_start_key,
    tightest,
)

# --------------------------------------------------------------------------------------
# The analysis of one function
# --------------------------------------------------------------------------------------


def _has_instructions(op: Operation) -> bool:
    return any(isinstance(o, HwInstruction) for o in op.walk())


class FunctionSync:
    """Builds the frames of a function, chooses its flags and writes them."""

    def __init__(
        self,
        func_op: func.FuncOp,
        target: Target,
        runtime_loops: bool,
        scalar_issue: bool = True,
    ):
        self.target = target
        self.runtime_loops = runtime_loops
        self.scalar_issue = scalar_issue
        self.analysis = AccessAnalysis(target)
        self.ranges = index_ranges(func_op)
        self.root = self.build(func_op.body.block, None, None, -1)
        before: set[Pipe] = set()
        for node in self.root.nodes:
            for child in node.children:
                if child.loop is not None:
                    child.boundary_pipes = frozenset(PIPES) - before
            before.update(node.pipes)

    def restart(self, pair: tuple[Pipe, Pipe] | None = None) -> None:
        """Forget every flag, to synchronise again (with `pair` among the
        `forward_pairs` if given; the frames and their conflicts stay)."""
        for frame in self.root.frames():
            if pair is not None:
                frame.forward_pairs |= {pair}
            frame.deps, frame.syncs, frame.edges, frame.fences = [], [], [], []
            frame.relaxed, frame.issued = [], []
            frame.flags_changed()

    def unsound_pending(self) -> Frame | None:
        """A frame whose flags went without a flag back on an answer of
        `Frame.consumed_in_time` that the flags chosen since around it (in
        frames synchronised after it) no longer give."""
        for frame in self.root.frames():
            for sync, next_set in frame.relaxed:
                if sync in frame.syncs and not frame.consumed_in_time(sync, next_set):
                    return frame
        return None

    # --- frames and dependencies -----------------------------------------------------------
    def build(
        self, block: Block, loop: scf.ForOp | None, parent: Frame | None, index: int
    ) -> Frame:
        frame = Frame(block, loop, parent, index)
        frame.runtime_loops = self.runtime_loops
        frame.scalar_issue = self.scalar_issue
        frame.strict_pending = not self.runtime_loops
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
            if loop is not None and self.branch_in_loop(op):
                emit_remark(
                    op,
                    "hw-insert-sync: this loop runs at most once: a branch, what "
                    "one run of it orders against the next is placed in the loop "
                    "around it (runtime-loops)",
                )
            for region in op.regions:
                for child_block in region.blocks:
                    child_loop = (
                        op
                        if isinstance(op, scf.ForOp)
                        and not (
                            self.branch_in_loop(op)
                            if loop is not None
                            else _innermost(op) and _runs_at_most_once(op, self.ranges)
                        )
                        else None
                    )
                    child = self.build(child_block, child_loop, frame, position)
                    node.children.append(child)
                    node.accesses.extend(a for n in child.nodes for a in n.accesses)
            if node.accesses:
                frame.nodes.append(node)
        return frame

    def branch_in_loop(self, op: Operation) -> bool:
        """Whether `op`, in a loop, is a loop taken for a branch (runtime-loops)."""
        return (
            self.runtime_loops
            and isinstance(op, scf.ForOp)
            and _innermost(op)
            and _runs_at_most_once(op, self.ranges)
        )

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
            wait_key, set_key = gap_wait_key(sync.wait_gap), gap_set_key(next_set)
            if sync.fenced or frame.reaches(sync.dst, wait_key, sync.src, set_key):
                continue
            if frame.before_set(sync.dst, wait_key, sync.src, set_key):
                frame.issued.append((sync, sync.dst, sync.src))
                continue
            if frame.consumed_in_time(sync, next_set):
                frame.relaxed.append((sync, next_set))
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
                    gap_wait_key(sync.wait_gap),
                    gap_set_key(next_set),
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
            pairs: set[tuple[Pipe, Pipe]] = set()
            limit = node_start_key(c) + frame.period
            issued: set[tuple[Pipe, Pipe]] = set()
            for sync, run in _branch_flags(node):
                ordered = _ordered_in_run(run, sync)
                later = frame.propagate({p: node_exit_key(c) for p in ordered}, limit)
                if later.get(sync.src, inf) <= limit:
                    continue
                if frame.scalar_issue and later.get(Pipe.S, inf) <= limit:
                    issued.add((sync.dst, sync.src))
                else:
                    pairs.add((sync.src, sync.dst))
            frame.issued += [(node.op, dst, src) for dst, src in sorted(issued)]
            for src, dst in sorted(pairs):
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
                        drain = gap_wait_key(sync.drain_gap)
                        root.edges.append(
                            (sync.src, gap_set_key(sync.prologue_gap), sync.dst, drain)
                        )
                        last = frame.prev_with(sync.src, frame.size)
                        if frame.loop is node.op and sync.set_gap > last:
                            root.edges.append(
                                (sync.src, node_ops_key(t), sync.dst, drain)
                            )
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
                spans.append((sync.set_key, gap_wait_key(sync.wait_gap), sync.fenced))
            elif not owner.is_carried(sync):
                node = path[common].parent_node
                spans.append((node_start_key(node), node_exit_key(node), sync.fenced))
            elif frame is self.root:
                prologue, drain = (
                    gap_set_key(sync.prologue_gap),
                    gap_wait_key(sync.drain_gap),
                )
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
            _remark_decisions(frame)


def _remark_decisions(frame: Frame) -> None:
    """Remarks on what runtime-loops and scalar-issue decided in `frame`."""
    for sync in frame.syncs:
        if sync.entered and frame.loop is not None:
            emit_remark(
                frame.loop,
                f"hw-insert-sync: the loop's {sync.src} -> {sync.dst} flag is set at "
                "the top of its body: its first iteration also waits for the work "
                "before the loop, instead of a flag outside that runs even when "
                "the loop runs no iteration (runtime-loops)",
            )
    seen: set[tuple[int, Pipe, Pipe]] = set()  # pending_deps may ask twice
    for flag, dst, src in frame.issued:
        key = (id(flag), dst, src)
        if key in seen or (isinstance(flag, Sync) and flag not in frame.syncs):
            continue
        seen.add(key)
        op = flag.consumer if isinstance(flag, Sync) else flag
        what = "this wait" if isinstance(flag, Sync) else "the waits in this scf.if"
        emit_remark(
            op,
            f"hw-insert-sync: no {dst} -> {src} flag back after {what}: S "
            f"issues the next {src} -> {dst} set only after a wait that follows "
            "it (scalar-issue)",
        )
    for sync, _ in frame.relaxed:
        if sync in frame.syncs:
            emit_remark(
                sync.consumer,
                f"hw-insert-sync: no {sync.dst} -> {sync.src} flag back after this "
                f"{sync.src} -> {sync.dst} wait: {sync.dst} ran nothing since its "
                f"last flag that is not ordered before the next set "
                "(runtime-loops)",
            )


def _runs_at_most_once(loop: scf.ForOp, ranges: Mapping[SSAValue, Range]) -> bool:
    """Whether the loop's bounds are at most one step apart (tile-pipeline's
    remainder loop of `trips mod 2` iterations) or its `MAX_TRIPS_ATTR` is at
    most 1: its body runs once or not at all, like a branch of an scf.if, and
    nothing in it waits for an earlier iteration."""
    step = constant_int(loop.step)
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
    trip is taken for a branch: flags carried around loops in a branch fall
    back to fences sooner (gemm's block loop of one trip per core in a loop of
    two got one). Inside a loop it is one too (a sparse row's remainder entry
    loop): what one run orders against the next is the outer loop's to place."""
    return not any(isinstance(op, scf.ForOp) for op in loop.body.walk())


def _branches(node: Node) -> bool:
    """Whether `node` runs its body at most once: an scf.if, or a loop of at
    most one trip (`_runs_at_most_once`)."""
    return bool(node.children) and node.children[0].loop is None


def _runs_at_least_once(loop: scf.ForOp) -> bool:
    """Whether the loop's bounds are a constant distance apart, with a step that
    does not skip the first iteration (a positive constant)."""
    trips = affine_of(loop.ub) - affine_of(loop.lb)
    step = constant_int(loop.step)
    return not trips.coeffs and trips.const > 0 and step is not None and step > 0


def _through_first_iteration(
    body: Frame, node: int
) -> list[tuple[Pipe, int, Pipe, int]]:
    """Orderings through a loop node that runs at least once: what its first
    iteration orders after each pipe's position at the loop's start is ordered
    after it when the loop ends."""
    end = gap_set_key(body.size) - 1
    edges: list[tuple[Pipe, int, Pipe, int]] = []
    for pipe in PIPES:
        reached = body.propagate({pipe: 0}, end, entered=True)
        edges += [
            (pipe, node_start_key(node), other, node_exit_key(node))
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
    return body.reaches(
        x.pipe, node_ops_key(a), y.pipe, node_start_key(b) + body.period
    )


_Run = list[tuple[Frame, int]]
"""A flag's frame (with -1) and the frames around it up to a branch, each with
its node holding the one before."""


def _branch_flags(node: Node) -> Iterator[tuple[Sync, _Run]]:
    """The flags in the branches of an scf.if, outside nested loops, each with
    its run (`_Run`)."""
    for child in node.children:
        for sync in child.syncs:
            yield sync, [(child, -1)]
        for index, inner in enumerate(child.nodes):
            if _branches(inner):
                for sync, run in _branch_flags(inner):
                    yield sync, [*run, (child, index)]


def _ordered_in_run(run: _Run, sync: Sync) -> set[Pipe]:
    """The pipes the flags of `sync`'s run order after its wait by the end of
    the branch holding it (the destination pipe at least): a flag back for it
    is needed only if those are not ordered before its next set."""
    ordered = {sync.dst}
    for frame, node in run:
        key = gap_wait_key(sync.wait_gap) if node < 0 else node_exit_key(node)
        end = gap_wait_key(frame.size)
        reached = frame.propagate({p: key for p in ordered}, end)
        ordered = {p for p, k in reached.items() if k <= end}
    return ordered


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
    keys = [(d.dst_key - d.src_key, d.src_key, d.dst_key) for d in deps]
    ordered = [deps[i] for i in sorted(range(len(deps)), key=keys.__getitem__)]
    for dep in ordered:
        if frame.covers(dep) or (
            frame.parent is not None
            and frame.runtime_loops
            and _enter_loop(dep)
            and frame.covers(dep)
        ):
            continue
        for sync in frame.syncs:
            if (sync.src, sync.dst) == (dep.src, dep.dst) and frame.merge(sync, dep):
                break
        else:
            frame.syncs.append(frame.new_sync(dep))
        frame.flags_changed()
    _drop_redundant(frame, ordered)


def _enter_loop(dep: Dep) -> bool:
    """Order `dep`, whose consumer is inside a loop of the frame, by a
    loop-carried flag of that loop with the same pipes whose wait precedes the
    consumer: with its set moved to the top of the iteration
    (`Frame.to_boundary`) it orders the work before the loop too, in the first
    iteration. Whether it moved one. Only when the source pipe does nothing
    between the producer and the loop: the first iteration would wait for that
    too (the BSR softmax's next block row waited for the previous one's last
    vector work, 3 % slower).

    A flag of the frame would run even when the loop runs no iteration (its
    bounds read at run time), and nothing would then order its wait before its
    next set but a flag back. Not for the function's body: the prologues and
    drains of the flags moved are planned before it is synchronised.
    """
    if not dep.dst_inner or dep.set_hi < dep.wait_hi:
        return False  # the source pipe works between the producer and the loop
    inner, node = dep.dst_inner[0]
    if inner.loop is None:
        return False
    n = inner.size
    for sync in inner.syncs:
        if (
            (sync.src, sync.dst) == (dep.src, dep.dst)
            and inner.is_carried(sync)
            and sync.set_hi >= n
            and sync.wait_gap - n <= node
        ):
            inner.to_boundary(sync)
            return True
    return False


def _drop_redundant(frame: Frame, deps: Sequence[Dep]) -> None:
    """Remove, last placed first, every flag without which the others still order
    all of `deps`.

    Only the dependencies no other one implies are asked (`tightest`), and about
    a flag only those whose last answer it carried: the answers of the others stay
    the same without it. A dependency no flag orders keeps every flag (each
    removal would have to order it).

    Dependencies with the same `Frame.entry` and consumer key are asked together:
    the frame's flags carry them alike (one `propagate`), only the runs holding
    their consumers differ (`Frame.reaches_consumer`). A loop node against the next
    iteration's gives one for every pair of their accesses, a few entries each.
    """
    spans = [
        (d.src, d.dst, d.src_key, d.dst_key, not d.src_inner and not d.dst_inner)
        for d in deps
    ]
    groups: dict[tuple[frozenset[tuple[Pipe, float]], int], list[Dep]] = {}
    for i in tightest(spans):
        dep = deps[i]
        entry = frame.entry_items(dep)
        groups.setdefault((entry, dep.dst_key), []).append(dep)
    checked = list(groups.items())

    def ordered(
        question: tuple[frozenset[tuple[Pipe, float]], int],
        group: list[Dep],
        carriers: set[Sync | None],
        without: Sync | None = None,
    ) -> bool:
        entry, limit = question
        reached = frame.propagate(dict(entry), limit, without, carriers=carriers)
        return all(frame.reaches_consumer(dep, reached) for dep in group)

    carried: list[set[Sync | None]] = []  # per checked group
    for question, group in checked:
        carried.append(set())
        if not ordered(question, group, carried[-1]):
            return
    for sync in list(reversed(frame.syncs)):
        answers: dict[int, set[Sync | None]] = {}
        for i, (question, group) in enumerate(checked):
            if sync not in carried[i]:
                continue
            answers[i] = set()
            if not ordered(question, group, answers[i], without=sync):
                break
        else:
            frame.syncs.remove(sync)
            frame.flags_changed()
            for i, carriers in answers.items():
                carried[i] = carriers


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


def insert_sync(
    func_op: func.FuncOp, runtime_loops: bool = True, scalar_issue: bool = True
) -> list[Sync]:
    """Synchronise one function; returns the flags placed (`Sync.ops` are their
    ops). `runtime_loops`: docs/hw_insert_sync.md, "Loops of run-time bounds";
    `scalar_issue`: its "Sets issued by S"."""
    target, _ = target_of(func_op)
    function = FunctionSync(func_op, target, runtime_loops, scalar_issue)
    while True:
        function.synchronise(function.root)
        if (unsound := function.unsound_pending()) is not None:
            unsound.strict_pending = True
            function.restart()
            continue
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

    runtime_loops: bool = True
    """Let a dependency into a loop ride on the loop's own flag, and drop flag
    backs a walk proves needless, around loops of run-time bounds; an innermost
    loop of at most one trip is a branch inside a loop too (remarks say where)."""

    scalar_issue: bool = True
    """Take a set as firing no earlier than S issues it: a wait ordered before
    S there needs no flag back (never two pending sets; remarks say where)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func_op in op.walk():
            if not isinstance(func_op, func.FuncOp) or not _has_instructions(func_op):
                continue
            insert_sync(func_op, self.runtime_loops, self.scalar_issue)


def strip_sync(module: ModuleOp) -> None:
    """Erase every set_flag, wait_flag and pipe_barrier of `module`."""
    for sync in [o for o in module.walk() if isinstance(o, FlagOp | PipeBarrierOp)]:
        Rewriter.erase_op(sync)


def resynchronise(module: ModuleOp) -> list[Sync]:
    """Strip the flags of `module` and synchronise every function again; the
    flags placed (the tests remove each in turn to show it is needed)."""
    strip_sync(module)
    return [
        sync
        for op in module.walk()
        if isinstance(op, func.FuncOp)
        for sync in insert_sync(op)
    ]


@dataclass(frozen=True)
class HwStripSyncPass(ModulePass):
    """Remove every set_flag, wait_flag and pipe_barrier (to re-synchronise IR)."""

    name = "hw-strip-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        strip_sync(op)
