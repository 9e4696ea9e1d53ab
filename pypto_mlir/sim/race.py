"""Race detection: happens-before with vector clocks, shadow state per data block.

Each core has one vector clock per pipe (NUM_PIPES counters). Happens-before comes
from program order within a pipe, set_flag -> wait_flag, and pipe_barrier(ALL).
The replay visits records in an order consistent with it and calls `check` for
every access with the accessing pipe's clock.

Shadow state (FastTrack-style): every block (`race_block_bytes`, 32 B) of a memory holds the id of an
immutable state tuple: the last write (pipe, clock value, record) and the last read
clock value of every pipe since that write, plus which cores touched a GM block. An
access by pipe q with clock vc races with a stored access of pipe p != q iff the
stored clock value exceeds vc[p]. Blocks are a numpy array of state ids; an access
usually covers blocks of a single state (a buffer written by one DMA), which is
detected with one byte comparison, so the check is a few Python operations.

Cores synchronise only at `sync_all`: it cuts each core's records into epochs
(the records between two sync_alls), and everything of epoch e on every core is
ordered before everything of epoch e + 1. So two accesses of different cores to
the same GM block, one a write, race when they are in the same epoch; within a
core the sync_all orders everything, like `barrier("all")`.
"""

from __future__ import annotations

from array import array
from operator import gt
from typing import NamedTuple

import numpy as np

from pypto_mlir.sim.access import NUM_PIPES, Access, GmTensor
from pypto_mlir.sim.errors import RaceError
from pypto_mlir.sim.records import Record, RecordedRun, RecordKind, int_column
from pypto_mlir.targets import ON_CHIP_MEMORIES, DmaPath, Target


def race_block_bytes(target: Target) -> int:
    """Race-detection granularity in bytes: the data block that DMA and vector
    instructions move, the UB address unit (`memories.ub.alignment`, 32 B on Atlas
    A2). Accesses to different bytes of one block count as overlapping."""
    return target.memories["ub"].alignment


# State tuple layout.
_W_PIPE = 0  # pipe of the last write, -1 if none
_W_COUNT = 1  # that pipe's clock value at the write
_W_GID = 2  # record id of the last write
_W_CORE = 3  # core of the last write, -1 if none
_R_CORE = 4  # core that read since the last write: -1 none, -2 several
_R_GID = 5  # a read by the first reading core
_R_GID2 = 6  # a read by another core (when _R_CORE is -2)
_R0 = 7  # _R0 + p: clock value of pipe p's last read since the write
_NONE = -1
_SEVERAL = -2
_EMPTY = (_NONE, 0, _NONE, _NONE, _NONE, _NONE, _NONE) + (0,) * NUM_PIPES


class RaceDetector:
    def __init__(self, machine: RecordedRun):
        self.machine = machine
        self.records = machine.records
        self.states: list[tuple[int, ...]] = [_EMPTY]
        self._shadow: dict[object, np.ndarray] = {}
        self._multi_core = machine.block_dim > 1
        self.block = race_block_bytes(machine.target)
        self._index_cache: dict[tuple[int, int, int, int], np.ndarray] = {}
        # (core, pipe) -> record ids in the order that pipe executed them.
        self.executed: list[list[list[int]]] = [
            [[] for _ in range(NUM_PIPES)] for _ in range(machine.block_dim)
        ]

    def release(self) -> None:
        """A sync_all released every core: each access so far is ordered before
        every later one, so no stored access can race any more."""
        for shadow in self._shadow.values():
            shadow.fill(0)

    def _shadow_of(self, core: int, mem: str | GmTensor) -> np.ndarray:
        key: object = mem.id if isinstance(mem, GmTensor) else (core, mem)
        shadow = self._shadow.get(key)
        if shadow is None:
            if isinstance(mem, GmTensor):
                size = mem.nbytes
            else:
                size = self.machine.target.memories[mem].size
            block = self.block
            shadow = np.zeros((size + block - 1) // block, np.int32)
            self._shadow[key] = shadow
        return shadow

    def _blocks(self, a: Access) -> np.ndarray | slice:
        """The blocks `a` touches (a slice when contiguous)."""
        block = self.block
        if a.count == 1:
            return slice(a.start // block, (a.start + a.length + block - 1) // block)
        key = (a.start, a.length, a.count, a.stride)
        idx = self._index_cache.get(key)
        if idx is None:
            starts = a.start + a.stride * np.arange(a.count, dtype=np.int64)
            lo = starts // block
            lens = (starts + a.length + block - 1) // block - lo
            offsets = np.repeat(lo - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            idx = np.unique(offsets + np.arange(int(lens.sum()), dtype=np.int64))
            if len(self._index_cache) > 4096:
                self._index_cache.clear()
            self._index_cache[key] = idx
        return idx

    def check(
        self, rec: Record, pipe: int, vc: list[int], access: Access, write: bool
    ) -> None:
        """Check one access of `rec` (on `pipe`, clock `vc`) and update the shadow.

        A stored access of `pipe` itself never exceeds vc[pipe], and cross-core checks
        run first, so `stored clock > vc[p]` needs no test of p != pipe.
        """
        if access.length == 0:
            return
        mem = access.mem
        if type(mem) is str:
            key: object = (rec.core, mem)
            cross = False
        else:
            key = mem.id
            cross = self._multi_core
        shadow = self._shadow.get(key)
        if shadow is None:
            shadow = self._shadow_of(rec.core, mem)
        if access.count == 1:
            block = self.block
            idx: np.ndarray | slice = slice(
                access.start // block,
                (access.start + access.length + block - 1) // block,
            )
        else:
            idx = self._blocks(access)
        ids = shadow[idx]
        raw = ids.tobytes()
        states = self.states
        count = vc[pipe]
        if raw == raw[:4] * len(ids):
            sid = int(ids[0])
            state = states[sid]
            if cross:
                self._check_cross(rec, access, write, state, idx, ids, sid)
            if state[_W_COUNT] > vc[state[_W_PIPE]] or (
                write and any(map(gt, state[_R0:], vc))
            ):
                self._check_state(rec, vc, access, write, state, idx, ids, sid)
            if write:
                states.append(_written(pipe, count, rec))
                shadow[idx] = len(states) - 1
            else:
                new = _read(state, pipe, count, rec)
                if new is not None:
                    states.append(new)
                    shadow[idx] = len(states) - 1
            return
        unique, inverse = np.unique(ids, return_inverse=True)
        for sid in unique.tolist():
            state = states[sid]
            if cross:
                self._check_cross(rec, access, write, state, idx, ids, sid)
            self._check_state(rec, vc, access, write, state, idx, ids, sid)
        if write:
            states.append(_written(pipe, count, rec))
            shadow[idx] = len(states) - 1
            return
        mapped = []
        for sid in unique.tolist():
            new = _read(states[sid], pipe, count, rec)
            if new is None:
                mapped.append(sid)
            else:
                states.append(new)
                mapped.append(len(states) - 1)
        shadow[idx] = np.asarray(mapped, np.int32)[inverse]

    def _check_cross(
        self,
        rec: Record,
        access: Access,
        write: bool,
        state: tuple[int, ...],
        idx: np.ndarray | slice,
        ids: np.ndarray,
        sid: int,
    ) -> None:
        core = rec.core
        w_core = state[_W_CORE]
        if w_core != _NONE and w_core != core:
            self._raise(rec, access, write, state[_W_GID], "write", idx, ids, sid, True)
        r_core = state[_R_CORE]
        if write and r_core != _NONE and r_core != core:
            other = state[_R_GID]
            if self.records[other].core == core:
                other = state[_R_GID2]
            self._raise(rec, access, write, other, "read", idx, ids, sid, True)

    def _check_state(
        self,
        rec: Record,
        vc: list[int],
        access: Access,
        write: bool,
        state: tuple[int, ...],
        idx: np.ndarray | slice,
        ids: np.ndarray,
        sid: int,
    ) -> None:
        if state[_W_COUNT] > vc[state[_W_PIPE]]:
            self._raise(
                rec, access, write, state[_W_GID], "write", idx, ids, sid, False
            )
        if write:
            for p in range(NUM_PIPES):
                count = state[_R0 + p]
                if count > vc[p]:
                    other = self.executed[rec.core][p][count - 1]
                    self._raise(rec, access, write, other, "read", idx, ids, sid, False)

    def _raise(
        self,
        rec: Record,
        access: Access,
        write: bool,
        other_gid: int,
        other_kind: str,
        idx: np.ndarray | slice,
        ids: np.ndarray,
        sid: int,
        cross: bool,
    ) -> None:
        blocks = np.arange(idx.start, idx.stop) if isinstance(idx, slice) else idx
        bad = np.flatnonzero(ids == sid)
        run = 0
        while run + 1 < len(bad) and blocks[bad[run + 1]] == blocks[bad[run]] + 1:
            run += 1
        lo = max(int(blocks[bad[0]]) * self.block, access.start)
        hi = min((int(blocks[bad[run]]) + 1) * self.block, access.end)
        other = self.records[other_gid]
        this_kind = "write" if write else "read"
        first, second = (other, rec) if other.gid < rec.gid else (rec, other)
        first_kind, second_kind = (
            (other_kind, this_kind) if first is other else (this_kind, other_kind)
        )
        if cross:
            where = f"between cores {first.core} and {second.core}"
            why = "no sync_all separates them"
        else:
            where = f"(core {rec.core})"
            why = "they are not ordered by set_flag/wait_flag or pipe_barrier"
        raise RaceError(
            f"race on {access.mem_name} bytes [{lo}, {hi}) {where}: {first_kind} by "
            f"{first.describe()} and {second_kind} by {second.describe()}; {why}",
            first.loc,
            second.loc,
            access.mem_name,
            lo,
            hi,
        )


def _written(pipe: int, count: int, rec: Record) -> tuple[int, ...]:
    return (pipe, count, rec.gid, rec.core, _NONE, _NONE, _NONE) + (0,) * NUM_PIPES


def _read(
    state: tuple[int, ...], pipe: int, count: int, rec: Record
) -> tuple[int, ...] | None:
    """The state after a read, or None when it does not change."""
    core = rec.core
    r_core = state[_R_CORE]
    if r_core == core:
        if state[_R0 + pipe] == count:
            return None
        return state[: _R0 + pipe] + (count,) + state[_R0 + pipe + 1 :]
    r_gid, r_gid2 = state[_R_GID], state[_R_GID2]
    if r_core == _NONE:
        r_core, r_gid = core, rec.gid
    else:
        if r_core != _SEVERAL or r_gid2 == _NONE:
            r_gid2 = rec.gid
        r_core = _SEVERAL
    reads = list(state[_R0:])
    reads[pipe] = count
    return state[:_R_CORE] + (r_core, r_gid, r_gid2, *reads)


# --- the vectorised check ---------------------------------------------------------------


class ClockLog:
    """What the fast replays record for `find_races`, per instruction record (by
    gid): `seq`, its position in an execution order consistent with happens-before;
    `k`, its pipe's own clock value (1 for the pipe's first record); `row`, a row of
    `rows` (flat, NUM_PIPES per row) holding its pipe's vector clock (the entries of
    other pipes; row 0 is all zeros)."""

    __slots__ = ("seq", "k", "row", "rows")

    def __init__(self, records: int):
        self.seq = int_column(records)
        self.k = int_column(records)
        self.row = int_column(records)
        self.rows = int_column(NUM_PIPES)


_ON_CHIP_CODES = {name: i for i, name in enumerate(ON_CHIP_MEMORIES)}
_MEM_SHIFT = 32
"""Global block address = memory key << _MEM_SHIFT | block (memories < 128 GiB)."""


class AccessTable:
    """The instruction records (flags and barriers have no accesses) as numpy
    columns: `rec_*`, one row per instruction, core after core in program
    order (`rec_path` a code into `paths`, the `src->dst` names; -1: none);
    and every access of every instruction, one row per Access (reads before
    writes within an instruction), `rec` naming its instruction's row. Built
    from the cores' packed records (`RecordStore.packed`), one core at a time
    into the final columns; no record rebuilt. Nothing that reads it depends
    on the order of its rows (sums per core, program order within a core, and
    the race pass sorts the accesses itself)."""

    def __init__(self, machine: RecordedRun):
        kinds = [core.records.column(2) for core in machine.cores]
        n_records = sum(int(np.count_nonzero(k == RecordKind.INSTR)) for k in kinds)
        del kinds
        n = sum(int(core.records.access_count()) for core in machine.cores)
        self.rec_gid = np.empty(n_records, np.int64)
        self.rec_core = np.empty(n_records, np.int64)
        self.rec_pipe = np.empty(n_records, np.int64)
        self.rec_nbytes = np.empty(n_records, np.int64)
        self.rec_path = np.empty(n_records, np.int64)
        self.rec = np.empty(n, np.int64)
        self.write = np.empty(n, bool)
        self.start = np.empty(n, np.int64)
        self.length = np.empty(n, np.int64)
        self.count = np.empty(n, np.int64)
        self.stride = np.empty(n, np.int64)
        self.mem = np.empty(n, np.int64)
        path_objects: dict[int, int] = {}  # id(path) -> index in path_list
        path_list: list[object] = []
        r = a = 0  # rows filled so far
        for core in machine.cores:
            store = core.records
            packed = store.packed()
            gid, kind, pipe, _, size = packed.ints[:5]
            instr = np.flatnonzero(kind == RecordKind.INSTR)
            counts = packed.reads + packed.writes
            objects = store.objects
            mem_code = np.full(len(objects), -1, np.int64)
            path_code = np.full(len(objects), -1, np.int64)
            for code, value in enumerate(objects):
                if type(value) is str and value in _ON_CHIP_CODES:
                    mem_code[code] = _ON_CHIP_CODES[value]
                elif isinstance(value, GmTensor):
                    mem_code[code] = len(_ON_CHIP_CODES) + value.id
                elif isinstance(value, DmaPath):
                    index = path_objects.setdefault(id(value), len(path_list))
                    if index == len(path_list):
                        path_list.append(value)
                    path_code[code] = index
            rows = slice(r, r + len(instr))
            self.rec_gid[rows] = gid[instr]
            self.rec_core[rows] = core.index
            self.rec_pipe[rows] = pipe[instr]
            self.rec_nbytes[rows] = size[instr]
            self.rec_path[rows] = path_code[packed.codes[2][instr]]
            per = counts[instr]  # only instructions have accesses
            m = int(per.sum())
            at = slice(a, a + m)
            self.rec[at] = np.repeat(np.arange(r, r + len(instr), dtype=np.int64), per)
            first = np.cumsum(counts) - counts
            position = np.arange(m, dtype=np.int64) - np.repeat(first, counts)
            self.write[at] = position >= np.repeat(packed.reads, counts)
            del first, position
            self.mem[at] = mem_code[packed.accesses[0]]
            self.start[at] = packed.accesses[1]
            self.length[at] = packed.accesses[2]
            self.count[at] = packed.accesses[3]
            self.stride[at] = packed.accesses[4]
            r += len(instr)
            a += m
        self.gm = self.mem >= len(_ON_CHIP_CODES)
        self.paths = [
            f"{path.src}->{path.dst}"  # type: ignore[attr-defined]
            for path in path_list
        ]


RACE_CHUNK_ENTRIES = 1 << 20
"""Block ranges `find_races` checks at a time (about this many bursts each), so
that its working arrays stay bounded however long the run: a long GEMM's
row-strided GM panels are tens of millions of bursts."""


class _Clocks(NamedTuple):
    """Per instruction row of the table: what `_unordered` compares."""

    core: np.ndarray
    pipe: np.ndarray
    epoch: np.ndarray | None
    seq: np.ndarray
    k: np.ndarray
    row: np.ndarray
    clocks: np.ndarray


def find_races(
    machine: RecordedRun,
    log: ClockLog,
    table: AccessTable,
    chunk_entries: int | None = None,
) -> bool:
    """Whether two accesses might race: False proves the replay race-free.

    Equivalent to running `RaceDetector.check` on every access in `log.seq` order
    (which is consistent with happens-before): per run of blocks with the same
    history, each access is checked against the last write before it, and each
    read against the next write after it (those are the pairs the shadow states
    compare). Memories are cut into segments at every access boundary, so blocks
    of one segment see the same accesses. Accesses of two cores race only in
    the same epoch (between the same two sync_alls).

    The block address space is checked in ranges of about `chunk_entries`
    bursts (default `RACE_CHUNK_ENTRIES`; a range boundary only cuts segments
    in two, so the answer is the same), each range's bursts clipped to it.
    """
    if not len(table.rec):
        return False
    keep = np.flatnonzero(table.length > 0)
    if not keep.size:
        return False
    columns = (table.rec, table.start, table.length, table.count, table.stride)
    gm, mem, write = table.gm, table.mem, table.write
    if keep.size < len(table.rec):  # else the table's own columns, not copies
        columns = tuple(column[keep] for column in columns)
        gm, mem, write = gm[keep], mem[keep], write[keep]
    del keep
    rec, start, length, count, stride = columns
    rec_core = table.rec_core
    # The memory's global key, shifted to its block addresses' high bits: on
    # chip one memory per core, GM one per tensor after them.
    base = rec_core[rec] * len(_ON_CHIP_CODES)
    base += mem
    np.copyto(base, mem + machine.block_dim * len(_ON_CHIP_CODES), where=gm)
    base <<= _MEM_SHIFT
    del gm, mem
    block = race_block_bytes(machine.target)
    lo = start // block
    lo |= base
    hi = count - 1
    hi *= stride
    hi += start
    hi += length + block - 1
    hi //= block
    hi |= base
    # Bursts whose gaps leave no whole block between them touch a block range;
    # others are split into one entry per burst.
    solid = (count == 1) | (stride - length < block)
    entries = np.where(solid, 1, count)
    gid = table.rec_gid
    epochs = _epochs(machine, table)
    clocks = _Clocks(
        rec_core,
        table.rec_pipe,
        epochs,
        _array(log.seq)[gid],
        _array(log.k)[gid],
        _array(log.row)[gid],
        _array(log.rows).reshape(-1, NUM_PIPES),
    )
    accesses = (rec, write, start, length, stride, solid, entries, base, lo, hi)
    limit = chunk_entries or RACE_CHUNK_ENTRIES
    for c_lo, c_hi in _chunk_ranges(lo, hi, entries, limit):
        inside = np.flatnonzero((lo < c_hi) & (hi > c_lo))
        if not inside.size:
            continue
        part = (
            accesses
            if inside.size == len(lo)
            else tuple(column[inside] for column in accesses)
        )
        del inside
        if _races_in(part, block, c_lo, c_hi, clocks):
            return True
    return False


def _chunk_ranges(
    lo: np.ndarray, hi: np.ndarray, entries: np.ndarray, limit: int
) -> list[tuple[int, int]]:
    """Consecutive global block ranges covering every [lo, hi), cut where the
    accesses starting so far (by lo) reach a multiple of `limit` entries."""
    order = np.argsort(lo, kind="stable")
    total = np.cumsum(entries[order])
    marks = limit * np.arange(1, int(total[-1]) // limit + 1, dtype=np.int64)
    at = np.searchsorted(total, marks, side="right")
    cuts = np.unique(lo[order[at[at < len(total)]]])
    edges = [int(lo.min()), *cuts.tolist(), int(hi.max())]
    return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a]


def _races_in(
    accesses: tuple[np.ndarray, ...],
    block: int,
    c_lo: int,
    c_hi: int,
    clocks: _Clocks,
) -> bool:
    """`find_races` on the blocks [c_lo, c_hi) of the accesses that touch them."""
    rec, write, start, length, stride, solid, entries, base, lo, hi = accesses
    entry = np.flatnonzero(solid)
    split = np.flatnonzero(~solid)
    if split.size:
        bursts = entries[split]
        which = np.repeat(split, bursts)
        first = np.cumsum(bursts) - bursts
        index = np.arange(int(bursts.sum()), dtype=np.int64) - np.repeat(first, bursts)
        b_start = start[which] + index * stride[which]
        del index, first
        b_base = base[which]
        lo = np.concatenate((lo[entry], b_base | (b_start // block)))
        hi = np.concatenate(
            (hi[entry], b_base | ((b_start + length[which] + block - 1) // block))
        )
        del b_start, b_base
        entry = np.concatenate((entry, which))
        del which
    else:
        lo, hi = lo[entry], hi[entry]
    np.maximum(lo, c_lo, out=lo)
    np.minimum(hi, c_hi, out=hi)
    nonempty = np.flatnonzero(hi > lo)
    if nonempty.size < len(lo):
        lo, hi, entry = lo[nonempty], hi[nonempty], entry[nonempty]
    if not len(lo):
        return False
    # Elementary segments: between consecutive access boundaries.
    bounds = _sorted_unique(np.concatenate((lo, hi)))
    seg_lo = np.searchsorted(bounds, lo)
    spans = np.searchsorted(bounds, hi) - seg_lo
    del bounds, lo, hi
    which = np.repeat(entry, spans)
    first = np.cumsum(spans) - spans
    seg = np.repeat(seg_lo - first, spans) + np.arange(int(spans.sum()))
    del first, seg_lo, spans, entry
    g = rec[which]
    w = write[which]
    del which
    order = np.lexsort((w, clocks.seq[g], seg))
    seg, g, w = seg[order], g[order], w[order]
    del order
    m = len(seg)
    idx = np.arange(m, dtype=np.int64)
    new_seg = np.ones(m, dtype=bool)
    new_seg[1:] = seg[1:] != seg[:-1]
    del seg
    seg_first = np.maximum.accumulate(np.where(new_seg, idx, 0))
    last_seg = np.ones(m, dtype=bool)
    last_seg[:-1] = new_seg[1:]
    del new_seg
    seg_last = np.minimum.accumulate(np.where(last_seg, idx, m)[::-1])[::-1]
    del last_seg
    # Each access against the last write before it.
    last_write = np.maximum.accumulate(np.where(w, idx, -1))
    prev = np.empty(m, dtype=np.int64)
    prev[0] = -1
    prev[1:] = last_write[:-1]
    del last_write
    i = np.flatnonzero(prev >= seg_first)
    if np.any(_unordered(clocks, g[prev[i]], g[i])):
        return True
    del prev, seg_first, i
    # Each read against the next write after it.
    next_write = np.minimum.accumulate(np.where(w, idx, m)[::-1])[::-1]
    after = np.empty(m, dtype=np.int64)
    after[-1] = m
    after[:-1] = next_write[1:]
    del next_write
    i = np.flatnonzero(~w & (after <= seg_last))
    return bool(np.any(_unordered(clocks, g[i], g[after[i]])))


def _epochs(machine: RecordedRun, table: AccessTable) -> np.ndarray | None:
    """The epoch of each instruction row of `table`: how many sync_alls its core
    executed before it (None when no core has one)."""
    syncs = [
        (core.index, core.records[j].gid) for core in machine.cores for j in core.syncs
    ]
    if not syncs:
        return None
    span = len(machine.records) + 1
    keys = np.sort(np.array([c * span + gid for c, gid in syncs], np.int64))
    base = table.rec_core * span
    return np.searchsorted(keys, base + table.rec_gid) - np.searchsorted(keys, base)


def _unordered(clocks: _Clocks, first: np.ndarray, then: np.ndarray) -> np.ndarray:
    """Whether instruction `first` (earlier in execution order) is not ordered
    before `then` (rows of the table): on one core, another pipe whose clock at
    `then` has not seen it; on two cores, the same epoch. (A sync_all joins a
    core's clocks, so the clock test orders that core's epochs; it compares
    unrelated clocks across cores.)"""
    core, pipe, epoch = clocks.core, clocks.pipe, clocks.epoch
    other = core[first] != core[then]
    clock = (pipe[first] != pipe[then]) & (
        clocks.k[first] > clocks.clocks[clocks.row[then], pipe[first]]
    )
    if epoch is None:
        return other | clock
    return np.where(other, epoch[first] == epoch[then], clock)


def _array(values: array[int]) -> np.ndarray:
    """An `int_column` as an int64 array (a view of its buffer)."""
    return np.frombuffer(values, np.int64)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique of an int array by sorting (numpy 2's hashing unique is slower)."""
    values = np.sort(values)
    keep = np.empty(len(values), dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]
