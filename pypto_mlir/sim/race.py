"""Race detection: happens-before with vector clocks, shadow state per 32-byte block.

Each core has one vector clock per pipe (NUM_PIPES counters). Happens-before comes
from program order within a pipe, set_flag -> wait_flag, and pipe_barrier(ALL).
The replay visits records in an order consistent with it and calls `check` for
every access with the accessing pipe's clock.

Shadow state (FastTrack-style): every 32-byte block of a memory holds the id of an
immutable state tuple: the last write (pipe, clock value, record) and the last read
clock value of every pipe since that write, plus which cores touched a GM block. An
access by pipe q with clock vc races with a stored access of pipe p != q iff the
stored clock value exceeds vc[p]. Blocks are a numpy array of state ids; an access
usually covers blocks of a single state (a buffer written by one DMA), which is
detected with one byte comparison, so the check is a few Python operations.

Cores never synchronise with each other, so any two accesses of different cores to
the same GM block, one a write, race.
"""

from __future__ import annotations

from operator import gt
from typing import TYPE_CHECKING

import numpy as np

from pypto_mlir.sim.access import NUM_PIPES, Access, GmTensor
from pypto_mlir.sim.errors import RaceError

if TYPE_CHECKING:
    from pypto_mlir.sim.machine import Machine, Record

BLOCK = 32
"""Race-detection granularity in bytes: the 32-byte block that DMA and vector
instructions move (accesses to different bytes of one block count as overlapping)."""

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
    def __init__(self, machine: Machine):
        self.machine = machine
        self.records = machine.records
        self.states: list[tuple[int, ...]] = [_EMPTY]
        self._shadow: dict[object, np.ndarray] = {}
        self._multi_core = machine.block_dim > 1
        self._index_cache: dict[tuple[int, int, int, int], np.ndarray] = {}
        # (core, pipe) -> record ids in the order that pipe executed them.
        self.executed: list[list[list[int]]] = [
            [[] for _ in range(NUM_PIPES)] for _ in range(machine.block_dim)
        ]

    def _shadow_of(self, core: int, mem: str | GmTensor) -> np.ndarray:
        key: object = mem.id if isinstance(mem, GmTensor) else (core, mem)
        shadow = self._shadow.get(key)
        if shadow is None:
            if isinstance(mem, GmTensor):
                size = mem.nbytes
            else:
                size = self.machine.target.memories[mem].size
            shadow = np.zeros((size + BLOCK - 1) // BLOCK, np.int32)
            self._shadow[key] = shadow
        return shadow

    def _blocks(self, a: Access) -> np.ndarray | slice:
        """The 32-byte blocks `a` touches (a slice when contiguous)."""
        if a.count == 1:
            return slice(a.start // BLOCK, (a.start + a.length + BLOCK - 1) // BLOCK)
        key = (a.start, a.length, a.count, a.stride)
        idx = self._index_cache.get(key)
        if idx is None:
            starts = a.start + a.stride * np.arange(a.count, dtype=np.int64)
            lo = starts // BLOCK
            lens = (starts + a.length + BLOCK - 1) // BLOCK - lo
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
            idx: np.ndarray | slice = slice(
                access.start // BLOCK,
                (access.start + access.length + BLOCK - 1) // BLOCK,
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
        lo = max(int(blocks[bad[0]]) * BLOCK, access.start)
        hi = min((int(blocks[bad[run]]) + 1) * BLOCK, access.end)
        other = self.records[other_gid]
        this_kind = "write" if write else "read"
        first, second = (other, rec) if other.gid < rec.gid else (rec, other)
        first_kind, second_kind = (
            (other_kind, this_kind) if first is other else (this_kind, other_kind)
        )
        if cross:
            where = f"between cores {first.core} and {second.core}"
            why = "cores never synchronise"
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
