"""Replay of the instruction records on the pipes of every core: timing and sync.

The scalar pipe S walks a core's records in program order: it spends the record's
scalar cycles, then either executes it (an S instruction, a set with source S, a wait
with destination S, a barrier over ALL) or dispatches it to its pipe's in-order queue
at `scalar.issue` cycles per instruction. A queued instruction starts at
max(issue time, its pipe free); a set_flag fires when everything before it on its
source pipe has completed; a wait_flag holds its destination pipe until the matching
set has fired (the k-th wait of a (src, dst, event) matches the k-th set).
An instruction with a start-up (`Record.head`: vector ops and mmad) pays it only
when it starts a stream on its pipe: it starts later than the pipe's previous
instruction ended, or a set_flag from that pipe or a barrier over it came between
(docs/simulator.md, "Start-up"); back-to-back instructions overlap it away.

Events are processed in time order with one heap for all cores, so DMA transfers that
touch GM see how many other GM transfers are in flight when they start: each gets
min(path bandwidth, GM bandwidth / transfers in flight) and is slowed accordingly.

Three implementations give the same result; `replay` picks the fastest that applies:

- `_Replay`, the reference: the event heap above, with the race detector (race.py)
  checking every access as it executes. It is what reports errors: any problem the
  faster replays see (a race, a deadlock, an event misuse) makes `replay` run it
  from scratch, so messages are those of this one algorithm.
- `_DataflowReplay`: when GM sharing can never slow a transfer down (too few GM
  pipes in flight for the target's GM bandwidth to be shared below any path's
  bandwidth), every start time is a function of the records alone: max(pipe free,
  issue time, matching set's fire time). One pass per core in program order runs
  each record as soon as S issues it, parks a pipe on a wait whose set has not
  fired and resumes it when the set fires. No heap, no per-access race work.
- `_LoggedReplay`: the reference heap order (needed when GM is shared) without the
  per-access race checks.

The last two log each instruction's clock and leave race detection to one
vectorised pass over all accesses (`race.find_races`).

With an L2 (`target.l2`), `gm_contention` asks the L2 model (l2.py) what each GM
transfer costs and how many of its bytes use HBM. The L2 is one state shared by
all cores, so it must see the transfers in the order they start on the chip:
the heap replays start GM transfers in time order (ties broken by push order,
the same in both), the dataflow replay runs one core after another and has no
such order, so a target with an L2 always takes the logged replay.

One module of about 1,000 lines: the replay's event loop, its per-pipe queues
and the flag/barrier/sync_all joins are one algorithm over shared state.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import deque
from collections.abc import Generator, MutableSequence
from dataclasses import dataclass
from time import process_time

import numpy as np

from pypto_mlir.sim.access import NUM_PIPES, Pipe
from pypto_mlir.sim.errors import DeadlockError, EventError, SimError
from pypto_mlir.sim.l2 import L2Cache
from pypto_mlir.sim.race import AccessTable, ClockLog, RaceDetector, find_races
from pypto_mlir.sim.records import (
    Record,
    RecordedRun,
    RecordKind,
    RecordStore,
    int_column,
)
from pypto_mlir.sim.report import Report, build_report
from pypto_mlir.targets import DmaPath, Target

_S = int(Pipe.S)
_INSTR = RecordKind.INSTR
_SET = RecordKind.SET
_WAIT = RecordKind.WAIT
_BARRIER = RecordKind.BARRIER
_SYNC_ALL = RecordKind.SYNC_ALL
_ALL = int(Pipe.ALL)


_History = tuple[array, array, array]
"""A flag key's fire times, set positions and consume times, in order."""


def _history() -> _History:
    return array("q"), array("q"), array("q")


_FLUSHED = -1
"""`stream_end` of a pipe with no stream running: nothing ran on it yet, or a
set_flag from it or a barrier over it has drained it."""


def _no_stream() -> list[int]:
    """Per pipe, the end of the last instruction of its running stream: an
    instruction with a start-up (`Record.head`) that starts later than that, or
    after a flush, starts a new stream and pays it (docs/simulator.md, "Start-up")."""
    return [_FLUSHED] * NUM_PIPES


def _queue_pipe(rec: Record) -> int:
    """The pipe whose in-order queue holds `rec` (S for S-executed records:
    `barrier("all")` and `sync_all` are the records on pipe ALL)."""
    if rec.pipe == _ALL:
        return _S
    return rec.pipe


class _CoreState:
    __slots__ = (
        "index",
        "recs",
        "queues",
        "qpos",
        "free",
        "vc",
        "s_pos",
        "issue",
        "start",
        "end",
        "scheduled",
        "waiting",
        "s_barrier",
        "barrier_need",
        "busy",
        "s_paid",
        "stream_end",
    )

    def __init__(self, index: int, recs: list[Record]):
        self.index = index
        self.recs = recs
        n = len(recs)
        self.queues: list[list[int]] = [[] for _ in range(NUM_PIPES)]
        self.barrier_need: dict[int, list[int]] = {}
        for j, rec in enumerate(recs):
            qp = _queue_pipe(rec)
            if qp != _S:
                self.queues[qp].append(j)
            elif rec.kind == _BARRIER or rec.kind == _SYNC_ALL:
                self.barrier_need[j] = [len(q) for q in self.queues]
        self.qpos = [0] * NUM_PIPES
        self.free = [0] * NUM_PIPES
        self.vc = [[0] * NUM_PIPES for _ in range(NUM_PIPES)]
        self.s_pos = 0
        self.issue = int_column(n)
        self.start = int_column(n)
        self.end = int_column(n)
        self.scheduled = [False] * NUM_PIPES
        self.waiting: list[tuple[int, int, int] | None] = [None] * NUM_PIPES
        self.s_barrier = False
        self.busy = [0] * NUM_PIPES
        self.s_paid = -1  # the record whose scalar cycles S has already spent
        self.stream_end = _no_stream()


class _Replay:
    def __init__(self, machine: RecordedRun):
        self.machine = machine
        self.target = machine.target
        self.issue_cycles = self.target.scalar.issue
        self.max_pending = self.target.sync.max_pending_sets
        self.gm_bpc = self.target.gm_bytes_per_cycle
        self.cores = [_CoreState(c.index, c.records) for c in machine.cores]
        self.races = RaceDetector(machine)
        self.executed = self.races.executed
        self.heap: list[tuple[int, int, int, int, int]] = []
        self.seq = 0
        # (core, src, dst, event) -> fired, unconsumed sets: (time, clock, record).
        self.pending: dict[tuple[int, int, int, int], deque] = {}
        # key -> (fire times, set positions, consume times) of its flags in
        # order, int columns: a long run has millions.
        self.history: dict[tuple[int, int, int, int], _History] = {}
        self.gm_in_flight: list[int] = []
        self.gm_wire_bytes = 0
        self.l2 = _l2_of(self.target)
        self.sync_latency = self.target.sync.all_latency
        # The cores that reached the current sync_all: (core, record, drain time).
        self.arrived: list[tuple[_CoreState, int, int]] = []

    # --- scheduling ------------------------------------------------------------------------
    def push(self, st: _CoreState, pipe: int, time: int) -> None:
        st.scheduled[pipe] = True
        if pipe == _S:
            prio = 1
        else:
            head = st.recs[st.queues[pipe][st.qpos[pipe]]]
            prio = 0 if head.kind == _WAIT else 1
        self.seq += 1
        heapq.heappush(self.heap, (time, prio, self.seq, st.index, pipe))

    def run(self) -> None:
        for st in self.cores:
            if st.recs:
                self.push(st, _S, 0)
        heap = self.heap
        cores = self.cores
        while heap:
            time, _, _, core, pipe = heapq.heappop(heap)
            st = cores[core]
            st.scheduled[pipe] = False
            if pipe == _S:
                self.step_scalar(st, time)
            else:
                self.step_pipe(st, pipe, time)
        self.check_finished()

    # --- the scalar pipe ------------------------------------------------------------------
    def step_scalar(self, st: _CoreState, time: int) -> None:
        """Run S from `time` until it blocks or the program ends.

        S may run ahead of the heap's clock: everything it does is ordered after its
        happens-before predecessors, and nothing it does depends on GM contention.
        """
        recs = st.recs
        n = len(recs)
        free = st.free
        t = max(time, free[_S])
        while st.s_pos < n:
            j = st.s_pos
            rec = recs[j]
            if st.s_paid != j:
                st.s_paid = j
                t += rec.scalar_cycles
                st.busy[_S] += rec.scalar_cycles
            qp = _queue_pipe(rec)
            if qp != _S:
                t += self.issue_cycles
                st.busy[_S] += self.issue_cycles
                st.issue[j] = t
                st.s_pos = j + 1
                if (
                    st.queues[qp][st.qpos[qp]] == j
                    and not st.scheduled[qp]
                    and st.waiting[qp] is None
                ):
                    self.push(st, qp, max(free[qp], t))
                continue
            kind = rec.kind
            free[_S] = t
            if kind == _INSTR:
                self.execute(st, _S, j, rec, t)
            elif kind == _SET:
                self.fire(st, _S, j, rec, t)
            elif kind == _WAIT:
                if not self.consume(st, _S, j, rec, t):
                    return
            else:  # barrier or sync_all over ALL pipes
                need = st.barrier_need[j]
                if any(st.qpos[p] < need[p] for p in range(NUM_PIPES)):
                    st.s_barrier = True
                    return
                st.s_barrier = False
                bt = max(t, *free)
                merged = [max(col) for col in zip(*st.vc, strict=True)]
                for p in range(NUM_PIPES):
                    st.vc[p] = list(merged)
                st.stream_end = _no_stream()
                st.issue[j] = st.start[j] = st.end[j] = bt
                free[_S] = bt
                if kind == _SYNC_ALL:
                    self.arrive(st, j, bt)
                    return
            t = free[_S]
            st.s_pos = j + 1
        free[_S] = t

    def arrive(self, st: _CoreState, j: int, time: int) -> None:
        """Core `st` has drained at its sync_all `j`: S waits there until the last
        core arrives; then every core goes on `sync.all_latency` cycles later."""
        arrived = self.arrived
        arrived.append((st, j, time))
        if len(arrived) < len(self.cores):
            return
        release = max(t for _, _, t in arrived) + self.sync_latency
        self.arrived = []
        self.release()
        for core, k, _ in arrived:
            core.end[k] = core.free[_S] = release
            core.s_pos = k + 1
            self.push(core, _S, release)

    def release(self) -> None:
        """Every access so far is ordered before every later one (all cores)."""
        self.races.release()

    # --- the other pipes --------------------------------------------------------------------
    def step_pipe(self, st: _CoreState, pipe: int, time: int) -> None:
        """Run `pipe` from `time` through its issued records.

        It stops (and reschedules itself) before a GM transfer that starts later than
        `time`, so GM transfers are started in time order and see the transfers in
        flight; it parks on a wait whose set has not fired.
        """
        q = st.queues[pipe]
        recs = st.recs
        free = st.free
        while True:
            pos = st.qpos[pipe]
            if pos >= len(q):
                return
            j = q[pos]
            if j >= st.s_pos:  # not issued yet: S schedules the pipe when it issues it
                return
            rec = recs[j]
            t = max(time, free[pipe], st.issue[j])
            kind = rec.kind
            if kind == _INSTR:
                path = rec.path
                if path is not None and path.touches_gm and t > time:
                    self.push(st, pipe, t)
                    return
                self.execute(st, pipe, j, rec, t)
            elif kind == _SET:
                self.fire(st, pipe, j, rec, t)
            elif kind == _WAIT:
                if not self.consume(st, pipe, j, rec, t):
                    return
            else:  # barrier on one pipe: the pipe is in order already
                self.tick(st, pipe, rec)
                st.start[j] = st.end[j] = t
                st.stream_end[pipe] = _FLUSHED
                free[pipe] = t
            st.qpos[pipe] = pos + 1
            if st.s_barrier:
                need = st.barrier_need[st.s_pos]
                if (
                    all(st.qpos[p] >= need[p] for p in range(NUM_PIPES))
                    and not st.scheduled[_S]
                ):
                    self.push(st, _S, free[_S])

    # --- record semantics ---------------------------------------------------------------------
    def tick(self, st: _CoreState, pipe: int, rec: Record) -> list[int]:
        vc = st.vc[pipe]
        vc[pipe] += 1
        self.executed[st.index][pipe].append(rec.gid)
        return vc

    def execute(self, st: _CoreState, pipe: int, j: int, rec: Record, t: int) -> None:
        vc = self.tick(st, pipe, rec)
        check = self.races.check
        for access in rec.reads:
            check(rec, pipe, vc, access, False)
        for access in rec.writes:
            check(rec, pipe, vc, access, True)
        duration = rec.cycles
        if rec.head and t > st.stream_end[pipe]:
            duration += rec.head
        path = rec.path
        if path is not None and path.touches_gm:
            duration += self.gm_contention(t, rec, duration)
        end = t + duration
        st.start[j] = t
        st.end[j] = st.stream_end[pipe] = end
        st.free[pipe] = end
        st.busy[pipe] += duration

    def gm_contention(self, t: int, rec: Record, duration: int) -> int:
        """Cycles to add to `duration` for a GM transfer starting at t: what the
        L2 saves (negative) and what sharing HBM bandwidth costs. Without an L2
        every wire byte shares HBM; with one only those of missed lines do, and a
        transfer none of whose bytes use HBM is not in flight on it."""
        flight = self.gm_in_flight
        while flight and flight[0] <= t:
            heapq.heappop(flight)
        sharing = len(flight) + 1
        share = self.gm_bpc / sharing
        bandwidth = rec.path.bytes_per_cycle
        wire = rec.wire_bytes
        self.gm_wire_bytes += wire
        if self.l2 is None:
            cycles, hbm = duration, wire
        else:
            cycles, hbm = self.l2.transfer(rec, t)
            if not hbm:
                return cycles - duration
        extra = 0
        if share < bandwidth and hbm:
            extra = math.ceil(hbm / share - hbm / bandwidth)
        heapq.heappush(flight, t + cycles + extra)
        return cycles - duration + extra

    def fire(self, st: _CoreState, pipe: int, j: int, rec: Record, t: int) -> None:
        vc = self.tick(st, pipe, rec)
        src, dst, event = rec.key
        key = (st.index, src, dst, event)
        fired = self.pending.get(key)
        if fired is None:
            fired = self.pending[key] = deque()
            self.history[key] = _history()
        fired.append((t, tuple(vc), rec))
        history = self.history[key]
        history[0].append(t)
        history[1].append(j)
        st.start[j] = st.end[j] = t
        st.free[pipe] = t
        st.stream_end[pipe] = _FLUSHED
        if st.waiting[dst] == rec.key:
            st.waiting[dst] = None
            if not st.scheduled[dst]:
                self.push(st, dst, max(st.free[dst], t))

    def consume(self, st: _CoreState, pipe: int, j: int, rec: Record, t: int) -> bool:
        """Complete a wait if its set has fired; otherwise park the pipe."""
        src, dst, event = rec.key
        fired = self.pending.get((st.index, src, dst, event))
        if not fired:
            st.waiting[pipe] = rec.key
            st.free[pipe] = t
            return False
        set_time, clock, _ = fired.popleft()
        vc = self.tick(st, pipe, rec)
        self.history[(st.index, src, dst, event)][2].append(max(t, set_time))
        for p in range(NUM_PIPES):
            if clock[p] > vc[p]:
                vc[p] = clock[p]
        start = max(t, set_time)
        st.issue[j] = st.start[j] = st.end[j] = start
        st.free[pipe] = start
        return True

    # --- the end --------------------------------------------------------------------------
    def check_finished(self) -> None:
        stuck: list[Record] = []
        for st in self.cores:
            if st.s_pos < len(st.recs):
                rec = st.recs[st.s_pos]
                if rec.kind == _WAIT:
                    stuck.append(rec)
            for p in range(NUM_PIPES):
                q = st.queues[p]
                if st.qpos[p] < len(q):
                    rec = st.recs[q[st.qpos[p]]]
                    if rec.kind == _WAIT:
                        stuck.append(rec)
        if stuck or any(st.s_pos < len(st.recs) for st in self.cores):
            if not stuck:  # pragma: no cover - a stuck barrier always has a stuck wait
                raise DeadlockError("the program never finishes", "")
            rec = min(stuck, key=lambda r: r.gid)
            src, dst, event = rec.key
            later_sets = [
                r
                for r in self.cores[rec.core].recs
                if r.kind == _SET and r.key == rec.key and r.gid > rec.gid
            ]
            if later_sets:
                reason = (
                    f"its set_flag at {later_sets[0].loc or '?'} can only run after it "
                    f"(circular wait)"
                )
            else:
                reason = "no matching set_flag is ever executed"
            raise DeadlockError(
                f"{_at(rec.loc)}deadlock on core {rec.core}: wait_flag({Pipe(src).name} -> "
                f"{Pipe(dst).name}, event {event}) can never be satisfied: {reason}",
                rec.loc,
            )
        self.check_pending_limit()
        for (core, src, dst, event), fired in self.pending.items():
            if fired:
                rec = fired[0][2]
                raise EventError(
                    f"{_at(rec.loc)}set_flag({Pipe(src).name} -> {Pipe(dst).name}, event "
                    f"{event}) on core {core} is never waited for (set_flag and wait_flag "
                    f"must be paired)",
                    (rec.loc,),
                )

    def check_pending_limit(self) -> None:
        """The (k + limit)-th set of a key must not fire before the k-th wait consumed."""
        limit = self.max_pending
        for (core, src, dst, event), (fires, sets, waits) in self.history.items():
            recs = self.cores[core].recs
            for k in range(min(len(sets) - limit, len(waits))):
                fire_time = fires[k + limit]
                if fire_time < waits[k]:
                    rec, earlier = recs[sets[k + limit]], recs[sets[k]]
                    raise EventError(
                        f"{_at(rec.loc)}set_flag({Pipe(src).name} -> {Pipe(dst).name}, "
                        f"event {event}) on core {core} fires at cycle {fire_time} while "
                        f"the set at {earlier.loc or '?'} is still pending; the hardware "
                        f"allows {limit} pending set(s) per pipe pair and event",
                        (rec.loc, earlier.loc),
                    )


def _at(loc: str) -> str:
    return f"{loc}: " if loc else ""


# --- the fast replays ---------------------------------------------------------------------

_Channel = tuple[deque[tuple[int, tuple[int, ...]]], list[int], list[int]]

# Record tuple fields (see records.Record).
_GID, _KIND, _PIPE, _CYCLES, _PATH, _KEY, _SCALAR, _HEAD = 0, 2, 3, 6, 9, 12, 13, 14


class _LoggedReplay(_Replay):
    """The reference replay without per-access race checks: each executed
    instruction logs its pipe's vector clock for `race.find_races`.

    The scheduling is the reference's, statement for statement (same heap pushes in
    the same order, so the same tie-breaking between GM transfers); only written
    for speed: records read by index, the clock tick and the path test inlined.
    """

    def __init__(self, machine: RecordedRun, log: ClockLog):
        self.machine = machine
        self.target = machine.target
        self.issue_cycles = self.target.scalar.issue
        self.max_pending = self.target.sync.max_pending_sets
        self.gm_bpc = self.target.gm_bytes_per_cycle
        self.cores = [_core_state(c.index, c.records) for c in machine.cores]
        self.heap = []
        self.seq = 0
        self.pending = {}
        self.history = {}
        self.gm_in_flight = []
        self.gm_wire_bytes = 0
        self.l2 = _l2_of(self.target)
        self.sync_latency = self.target.sync.all_latency
        self.arrived = []
        self.log = log
        self.counter = 0
        self.gm_paths = {id(p) for p in self.target.dma.values() if p.touches_gm}

    def step_scalar(self, st: _CoreState, time: int) -> None:
        recs = st.recs
        n = len(recs)
        free = st.free
        busy = st.busy
        queues = st.queues
        qpos = st.qpos
        issue = self.issue_cycles
        t = free[_S]
        if time > t:
            t = time
        while st.s_pos < n:
            j = st.s_pos
            rec = recs[j]
            if st.s_paid != j:
                st.s_paid = j
                t += rec[_SCALAR]
                busy[_S] += rec[_SCALAR]
            qp = rec[_PIPE]
            if qp == _ALL:
                qp = _S
            if qp != _S:
                t += issue
                busy[_S] += issue
                st.issue[j] = t
                st.s_pos = j + 1
                if (
                    queues[qp][qpos[qp]] == j
                    and not st.scheduled[qp]
                    and st.waiting[qp] is None
                ):
                    f = free[qp]
                    self.push(st, qp, f if f > t else t)
                continue
            kind = rec[_KIND]
            free[_S] = t
            if kind == _INSTR:
                self.execute(st, _S, j, rec, t)
            elif kind == _SET:
                self.fire(st, _S, j, rec, t)
            elif kind == _WAIT:
                if not self.consume(st, _S, j, rec, t):
                    return
            else:  # barrier or sync_all over ALL pipes
                need = st.barrier_need[j]
                if any(qpos[p] < need[p] for p in range(NUM_PIPES)):
                    st.s_barrier = True
                    return
                st.s_barrier = False
                bt = max(t, *free)
                merged = [max(col) for col in zip(*st.vc, strict=True)]
                for p in range(NUM_PIPES):
                    st.vc[p] = list(merged)
                st.stream_end = _no_stream()
                st.issue[j] = st.start[j] = st.end[j] = bt
                free[_S] = bt
                if kind == _SYNC_ALL:
                    self.arrive(st, j, bt)
                    return
            t = free[_S]
            st.s_pos = j + 1
        free[_S] = t

    def step_pipe(self, st: _CoreState, pipe: int, time: int) -> None:
        q = st.queues[pipe]
        recs = st.recs
        free = st.free
        qpos = st.qpos
        issued = st.issue
        gm_paths = self.gm_paths
        while True:
            pos = qpos[pipe]
            if pos >= len(q):
                return
            j = q[pos]
            if j >= st.s_pos:  # not issued yet: S schedules the pipe when it issues it
                return
            rec = recs[j]
            t = free[pipe]
            if time > t:
                t = time
            if issued[j] > t:
                t = issued[j]
            kind = rec[_KIND]
            if kind == _INSTR:
                path = rec[_PATH]
                if (
                    path is not None
                    and (id(path) in gm_paths or path.touches_gm)
                    and t > time
                ):
                    self.push(st, pipe, t)
                    return
                self.execute(st, pipe, j, rec, t)
            elif kind == _SET:
                self.fire(st, pipe, j, rec, t)
            elif kind == _WAIT:
                if not self.consume(st, pipe, j, rec, t):
                    return
            else:  # barrier on one pipe: the pipe is in order already
                st.vc[pipe][pipe] += 1
                st.start[j] = st.end[j] = t
                st.stream_end[pipe] = _FLUSHED
                free[pipe] = t
            qpos[pipe] = pos + 1
            if st.s_barrier:
                need = st.barrier_need[st.s_pos]
                if (
                    all(qpos[p] >= need[p] for p in range(NUM_PIPES))
                    and not st.scheduled[_S]
                ):
                    self.push(st, _S, free[_S])

    def tick(self, st: _CoreState, pipe: int, rec: Record) -> list[int]:
        vc = st.vc[pipe]
        vc[pipe] += 1
        return vc

    def release(self) -> None:
        """No shadow state: `race.find_races` orders accesses by their epochs."""

    def execute(self, st: _CoreState, pipe: int, j: int, rec: Record, t: int) -> None:
        vc = st.vc[pipe]
        vc[pipe] += 1
        log = self.log
        gid = rec[_GID]
        log.seq[gid] = self.counter
        self.counter += 1
        log.k[gid] = vc[pipe]
        rows = log.rows
        log.row[gid] = len(rows) // NUM_PIPES
        rows.extend(vc)
        duration = rec[_CYCLES]
        head = rec[_HEAD]
        if head and t > st.stream_end[pipe]:
            duration += head
        path = rec[_PATH]
        if path is not None and (id(path) in self.gm_paths or path.touches_gm):
            duration += self.gm_contention(t, rec, duration)
        end = t + duration
        st.start[j] = t
        st.end[j] = st.stream_end[pipe] = end
        st.free[pipe] = end
        st.busy[pipe] += duration

    def fire(self, st: _CoreState, pipe: int, j: int, rec: Record, t: int) -> None:
        vc = st.vc[pipe]
        vc[pipe] += 1
        src, dst, event = rec_key = rec[_KEY]
        key = (st.index, src, dst, event)
        fired = self.pending.get(key)
        if fired is None:
            fired = self.pending[key] = deque()
            self.history[key] = _history()
        fired.append((t, tuple(vc), rec))
        history = self.history[key]
        history[0].append(t)
        history[1].append(j)
        st.start[j] = st.end[j] = t
        st.free[pipe] = t
        st.stream_end[pipe] = _FLUSHED
        if st.waiting[dst] == rec_key:
            st.waiting[dst] = None
            if not st.scheduled[dst]:
                f = st.free[dst]
                self.push(st, dst, f if f > t else t)

    def consume(self, st: _CoreState, pipe: int, j: int, rec: Record, t: int) -> bool:
        src, dst, event = rec_key = rec[_KEY]
        key = (st.index, src, dst, event)
        fired = self.pending.get(key)
        if not fired:
            st.waiting[pipe] = rec_key
            st.free[pipe] = t
            return False
        set_time, clock, _ = fired.popleft()
        vc = st.vc[pipe]
        vc[pipe] += 1
        start = t if t > set_time else set_time
        self.history[key][2].append(start)
        for p in range(NUM_PIPES):
            if clock[p] > vc[p]:
                vc[p] = clock[p]
        st.issue[j] = st.start[j] = st.end[j] = start
        st.free[pipe] = start
        return True


def _core_state(index: int, recs: RecordStore) -> _CoreState:
    """`_CoreState(index, recs)`, with the queues built from the record columns."""
    st = _CoreState(index, [])
    st.recs = recs
    n = len(recs)
    pipe = recs.column(_PIPE)
    kind = recs.column(_KIND)
    queued = (pipe != _S) & (pipe != _ALL)
    st.queues = [
        array("q", np.flatnonzero(queued & (pipe == p)).tobytes())
        for p in range(NUM_PIPES)
    ]
    barriers = np.flatnonzero((pipe == _ALL) | ((pipe == _S) & (kind == _BARRIER)))
    if barriers.size:
        # Per barrier, how many records of each queue come before it.
        need = np.stack(
            [np.searchsorted(np.frombuffer(q, np.int64), barriers) for q in st.queues],
            axis=1,
        )
        st.barrier_need = dict(zip(barriers.tolist(), need.tolist(), strict=True))
    st.issue = int_column(n)
    st.start = int_column(n)
    st.end = int_column(n)
    return st


@dataclass
class _CoreTimes:
    """One core's replayed times, as `report.build_report` reads them."""

    index: int
    recs: list[Record]
    start: MutableSequence[int]
    end: MutableSequence[int]
    free: list[int]
    busy: list[int]


class _DataflowReplay:
    """Replay when GM sharing never slows a transfer: see the module docstring."""

    def __init__(self, machine: RecordedRun, log: ClockLog):
        self.machine = machine
        self.target = machine.target
        self.issue_cycles = self.target.scalar.issue
        self.max_pending = self.target.sync.max_pending_sets
        self.log = log
        self.counter = [0]
        self.cores: list[_CoreTimes] = []
        self.gm_wire_bytes = 0
        # (core, src, dst, event) -> (fire times of its sets, consume times of its
        # waits), for the pending-set limit.
        self.history: dict[tuple[int, int, int, int], tuple[list, list]] = {}
        self.unconsumed = False
        self.l2: L2Cache | None = None  # only taken without an L2 (see `replay`)

    def run(self) -> bool:
        """Time every core; False when some core does not finish (deadlock), a set is
        never waited for or too many sets are pending (the reference reports it).

        Each core's pass stops at its sync_alls: the cores run epoch by epoch (all
        of epoch e, core after core, before epoch e + 1 of any), so the execution
        numbers stay consistent with happens-before; epoch e + 1 starts on every
        core `sync.all_latency` cycles after the last core drained epoch e.
        """
        latency = self.target.sync.all_latency
        running = [
            self._run_core(core.index, core.records) for core in self.machine.cores
        ]
        release: int | None = None
        while running:
            waiting = []
            arrivals = []
            for core in running:
                try:
                    arrivals.append(core.send(release))
                except StopIteration as done:
                    if not done.value:
                        return False
                    continue
                waiting.append(core)
            if waiting and len(waiting) < len(running):
                return False  # the cores do not all reach it
            running = waiting
            if arrivals:
                release = max(arrivals) + latency
        if self.unconsumed:
            return False
        limit = self.max_pending
        for sets, waits in self.history.values():
            for k in range(min(len(sets) - limit, len(waits))):
                if sets[k + limit] < waits[k]:
                    return False
        self.gm_wire_bytes = sum(
            _gm_wire_bytes(core.records) for core in self.machine.cores
        )
        return True

    def _run_core(  # noqa: C901
        self, index: int, recs: list[Record]
    ) -> Generator[int, int, bool]:
        """S walks the records; every other pipe runs each record as soon as S issues
        it, unless it is parked on a wait (then its records queue up behind it).

        A generator: at a sync_all it yields the cycle the core has drained and
        goes on at the release cycle it is sent; it returns whether it finished.
        `step` runs one record on a pipe, S included. The loop over S inlines it
        for a record of another pipe that is not parked, the usual case: calling
        `step` there made this pass about 10% slower (bench_sim's 100k records on
        one core: 46 -> 51 ms), so that copy must change with `step`.
        """
        n = len(recs)
        start = int_column(n)
        end = int_column(n)
        free = [0] * NUM_PIPES
        busy = [0] * NUM_PIPES
        vc = [[0] * NUM_PIPES for _ in range(NUM_PIPES)]
        stream = _no_stream()
        row = [0] * NUM_PIPES
        backlog: list[deque[tuple[int, int]] | None] = [None] * NUM_PIPES
        waiting: list[tuple[int, int, int] | None] = [None] * NUM_PIPES
        # Per (src, dst, event): the fired sets not yet consumed (time, clock), the
        # fire times of all its sets and the consume times of all its waits.
        channels: dict[tuple[int, int, int], _Channel] = {}
        history = self.history
        log = self.log
        seq_log, k_log, row_log, rows = log.seq, log.k, log.row, log.rows
        counter = self.counter  # [next execution number], shared by the cores
        self.cores.append(_CoreTimes(index, recs, start, end, free, busy))

        def channel_of(key: tuple[int, int, int]) -> _Channel:
            channel = channels[key] = (deque(), [], [])
            history[(index, *key)] = channel[1:]
            return channel

        def join(p: int, clock: tuple[int, ...]) -> None:
            """Pipe p learns what the set's clock knows; a new row if it changes."""
            v = vc[p]
            changed = False
            for i in range(NUM_PIPES):
                if clock[i] > v[i]:
                    v[i] = clock[i]
                    changed = True
            if changed:
                row[p] = len(rows) // NUM_PIPES
                rows.extend(v)

        def step(p: int, j: int, ti: int) -> bool:
            """Record j, issued at ti, on pipe p (on S: not a barrier); False when it
            parks."""
            rec = recs[j]
            kind = rec[_KIND]
            t = free[p]
            if ti > t:
                t = ti
            v = vc[p]
            if kind == _INSTR:
                v[p] += 1
                gid = rec[_GID]
                seq_log[gid] = counter[0]
                counter[0] += 1
                k_log[gid] = v[p]
                row_log[gid] = row[p]
                c = rec[_CYCLES]
                if rec[_HEAD] and t > stream[p]:
                    c += rec[_HEAD]
                start[j] = t
                end[j] = free[p] = stream[p] = t + c
                busy[p] += c
            elif kind == _SET:
                v[p] += 1
                key = rec[_KEY]
                channel = channels.get(key) or channel_of(key)
                channel[0].append((t, tuple(v)))
                channel[1].append(t)
                start[j] = end[j] = free[p] = t
                stream[p] = _FLUSHED
                if waiting[key[1]] == key:
                    wake(key[1])
            elif kind == _WAIT:
                key = rec[_KEY]
                channel = channels.get(key)
                if channel is None or not channel[0]:
                    waiting[p] = key
                    free[p] = t
                    return False
                set_time, clock = channel[0].popleft()
                v[p] += 1
                join(p, clock)
                if set_time > t:
                    t = set_time
                channel[2].append(t)
                start[j] = end[j] = free[p] = t
            else:  # barrier on one pipe: the pipe is in order already
                v[p] += 1
                start[j] = end[j] = free[p] = t
                stream[p] = _FLUSHED
            return True

        def wake(p: int) -> None:
            """The set pipe p is parked on has fired: run its queued records until
            it parks again or has none (S never parks: see the loop)."""
            waiting[p] = None
            if p == _S:
                return
            q = backlog[p]
            assert q is not None
            while q:
                j, ti = q[0]
                if not step(p, j, ti):
                    return
                q.popleft()
            backlog[p] = None

        t = 0
        s_busy = 0
        issue = self.issue_cycles
        for j, rec in enumerate(recs):
            sc = rec[_SCALAR]
            if sc:
                t += sc
                s_busy += sc
            p = rec[_PIPE]
            kind = rec[_KIND]
            if p != _S and p != _ALL:
                t += issue
                s_busy += issue
                q = backlog[p]
                if q is not None:
                    q.append((j, t))
                    continue
                # `step(p, j, t)`, inlined (see the docstring)
                s = free[p]
                if t > s:
                    s = t
                v = vc[p]
                if kind == _INSTR:
                    v[p] += 1
                    gid = rec[_GID]
                    seq_log[gid] = counter[0]
                    counter[0] += 1
                    k_log[gid] = v[p]
                    row_log[gid] = row[p]
                    c = rec[_CYCLES]
                    if rec[_HEAD] and s > stream[p]:
                        c += rec[_HEAD]
                    start[j] = s
                    end[j] = free[p] = stream[p] = s + c
                    busy[p] += c
                elif kind == _SET:
                    v[p] += 1
                    key = rec[_KEY]
                    channel = channels.get(key) or channel_of(key)
                    channel[0].append((s, tuple(v)))
                    channel[1].append(s)
                    start[j] = end[j] = free[p] = s
                    stream[p] = _FLUSHED
                    if waiting[key[1]] == key:
                        wake(key[1])
                elif kind == _WAIT:
                    key = rec[_KEY]
                    channel = channels.get(key)
                    if channel is None or not channel[0]:
                        waiting[p] = key
                        free[p] = s
                        backlog[p] = deque(((j, t),))
                        continue
                    set_time, clock = channel[0].popleft()
                    v[p] += 1
                    join(p, clock)
                    if set_time > s:
                        s = set_time
                    channel[2].append(s)
                    start[j] = end[j] = free[p] = s
                else:
                    v[p] += 1
                    start[j] = end[j] = free[p] = s
                    stream[p] = _FLUSHED
                continue
            if kind != _BARRIER and kind != _SYNC_ALL:
                # Executed by S itself, on its clock t (S is never behind it); a
                # wait on S whose set has not fired parks S for good: every
                # issued record has run as far as it can, so it never will (the
                # reference reports the deadlock).
                if not step(_S, j, t):
                    return False
                t = free[_S]
                continue
            # A barrier or sync_all over ALL pipes: every issued record has completed.
            if any(q is not None for q in backlog):
                return False
            bt = max(t, *free[1:])
            merged = [max(col) for col in zip(*vc, strict=True)]
            for i in range(NUM_PIPES):
                vc[i] = list(merged)
            new_row = len(rows) // NUM_PIPES
            rows.extend(merged)
            for i in range(NUM_PIPES):
                row[i] = new_row
                stream[i] = _FLUSHED
            start[j] = end[j] = bt
            t = bt
            if kind == _SYNC_ALL:
                end[j] = t = yield bt
        if any(q is not None for q in backlog):
            return False
        free[_S] = t
        busy[_S] += s_busy
        if any(channel[0] for channel in channels.values()):
            self.unconsumed = True
        return True


def _gm_wire_bytes(recs: RecordStore) -> int:
    """The wire bytes of a core's transfers on paths that touch GM."""
    packed = recs.packed()
    gm = np.array([isinstance(v, DmaPath) and v.touches_gm for v in recs.objects], bool)
    return int(packed.ints[5][gm[packed.codes[2]]].sum())


def _l2_of(target: Target) -> L2Cache | None:
    """A fresh (empty) L2 for one replay of a run on `target`, if it has one."""
    return None if target.l2 is None else L2Cache(target.l2)


def _gm_sharing_possible(machine: RecordedRun) -> bool:
    """Whether a GM transfer could ever get less than its path's bandwidth.

    Each pipe runs one instruction at a time, so at most (GM pipes of each core,
    summed over cores) transfers are in flight; the share of each is at least the GM
    bandwidth divided by that.
    """
    in_flight = 0
    bandwidths: list[float] = []
    for core in machine.cores:
        gm = [p for p in core.used_paths.values() if p.touches_gm]
        in_flight += len({p.pipe for p in gm})
        bandwidths += [p.bytes_per_cycle for p in gm]
    if not in_flight:
        return False
    share = machine.target.gm_bytes_per_cycle / in_flight
    return any(share < bandwidth for bandwidth in bandwidths)


last_replay = ""
"""Which replay produced the last report ("dataflow", "logged" or "reference"), for
benchmarks and the tests of the fast paths."""

last_phases: dict[str, float] = {}
"""CPU seconds of the last `replay` by phase ("timing": the replay, "races": the
access table and the race pass, "reference": the reference replay when it ran,
"report"), for benchmarks."""


def replay(machine: RecordedRun, *, reference: bool = False) -> Report:
    """Time every record, check races and sync, and build the report.

    `reference` runs the reference algorithm only (for tests of the fast paths).
    """
    global last_replay
    phases = last_phases
    phases.clear()
    clock = process_time()
    _check_sync_counts(machine)
    if not reference:
        n = len(machine.records)
        log = ClockLog(n)
        fast: _DataflowReplay | _LoggedReplay
        if machine.target.l2 is not None or _gm_sharing_possible(machine):
            fast = _LoggedReplay(machine, log)
            try:
                fast.run()
                ok = True
            except SimError:
                ok = False
        else:
            fast = _DataflowReplay(machine, log)
            ok = fast.run()
        clock = _phase(phases, "timing", clock)
        _drop_replay_state(machine, fast)
        if ok:
            table = AccessTable(machine)
            clean = not find_races(machine, log, table)
            clock = _phase(phases, "races", clock)
            if clean:
                last_replay = "logged" if type(fast) is _LoggedReplay else "dataflow"
                report = build_report(machine, fast, table)
                _phase(phases, "report", clock)
                return report
    last_replay = "reference"
    state = _Replay(machine)
    state.run()
    clock = _phase(phases, "reference", clock)
    report = build_report(machine, state)
    _phase(phases, "report", clock)
    return report


def _drop_replay_state(
    machine: RecordedRun, fast: _DataflowReplay | _LoggedReplay
) -> None:
    """Free what only the timing needed: the records the stores rebuilt for it,
    the pipe queues and issue times (the report reads start and end)."""
    for core in machine.cores:
        core.records.drop_cache()
    for st in fast.cores:
        if type(st) is _CoreState:
            st.queues = []
            st.issue = int_column(0)


def _check_sync_counts(machine: RecordedRun) -> None:
    """DeadlockError unless every core executes as many sync_alls: the cores
    that reach one more than some core wait for it forever."""
    counts = [len(core.syncs) for core in machine.cores]
    fewest, most = min(counts), max(counts)
    if fewest == most:
        return
    waiting = machine.cores[counts.index(most)]
    missing = counts.index(fewest)
    rec = waiting.records[waiting.syncs[fewest]]
    raise DeadlockError(
        f"{_at(rec.loc)}deadlock: core {waiting.index} waits at its sync_all "
        f"#{fewest + 1}, which core {missing} never reaches (it executes {fewest} "
        f"sync_all{'s' if fewest != 1 else ''}); every core must execute every "
        f"sync_all",
        rec.loc,
    )


def _phase(phases: dict[str, float], name: str, since: float) -> float:
    """Add the CPU time since `since` to `name`; returns the time now."""
    now = process_time()
    phases[name] = phases.get(name, 0.0) + now - since
    return now
