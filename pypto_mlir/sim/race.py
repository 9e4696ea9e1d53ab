"""Race detection: happens-before with vector clocks, shadow memory per 32-byte block.

Each core has one vector clock per pipe (NUM_PIPES counters). Happens-before comes
from program order within a pipe, set_flag -> wait_flag, and pipe_barrier(ALL).
The replay visits records in an order consistent with it and calls `check` for
every access with the accessing pipe's clock.

Shadow state (FastTrack-style, vectorised with numpy): for every 32-byte block of a
memory, column p holds the clock value of the last write by pipe p (at most one
column is non-zero) and column NUM_PIPES + p the last read by pipe p. An access by
pipe q with clock `vc` races with a stored access of pipe p != q iff the stored value
exceeds vc[p]; taking the column-wise maximum over the touched blocks makes the test
one numpy reduction per access.

Cores never synchronise with each other, so any two accesses of different cores to
the same GM block, one a write, race; per-block owner arrays find those.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pypto_mlir.sim.access import NUM_PIPES, Access, GmTensor, Pipe
from pypto_mlir.sim.errors import RaceError

if TYPE_CHECKING:
    from pypto_mlir.sim.machine import Machine, Record

BLOCK = 32
"""Race-detection granularity in bytes: the 32-byte block that DMA and vector
instructions move (accesses to different bytes of one block count as overlapping)."""

_MULTI = -1


class _CrossCore:
    """Per-block owners of a GM tensor: which core wrote / read it, and which record."""

    __slots__ = ("w_core", "w_rec", "r_core", "r_rec", "r_rec2")

    def __init__(self, blocks: int):
        self.w_core = np.zeros(blocks, np.int16)  # core + 1, 0 = none
        self.w_rec = np.zeros(blocks, np.int64)
        self.r_core = np.zeros(blocks, np.int16)  # core + 1, 0 = none, -1 = several
        self.r_rec = np.zeros(blocks, np.int64)  # a read by the first reading core
        self.r_rec2 = np.zeros(blocks, np.int64)  # a read by another core


class RaceDetector:
    def __init__(self, machine: Machine):
        self.machine = machine
        self.records = machine.records
        self._shadow: dict[object, np.ndarray] = {}
        self._cross: dict[int, _CrossCore] = {}
        self._multi_core = machine.block_dim > 1
        self._index_cache: dict[tuple[int, int, int, int], np.ndarray | slice] = {}
        # (core, pipe) -> record ids in the order that pipe executed them.
        self.executed: list[list[list[int]]] = [
            [[] for _ in range(NUM_PIPES)] for _ in range(machine.block_dim)
        ]

    # --- shadow lookup ---------------------------------------------------------------
    def _shadow_of(self, core: int, mem: str | GmTensor) -> np.ndarray:
        key: object = mem.id if isinstance(mem, GmTensor) else (core, mem)
        shadow = self._shadow.get(key)
        if shadow is None:
            size = (
                mem.nbytes
                if isinstance(mem, GmTensor)
                else self.machine.target.memories[mem].size
            )
            shadow = np.zeros(((size + BLOCK - 1) // BLOCK, 2 * NUM_PIPES), np.int32)
            self._shadow[key] = shadow
        return shadow

    def _blocks(self, a: Access) -> np.ndarray | slice:
        """Indices of the 32-byte blocks `a` touches (a slice when contiguous)."""
        if a.count == 1:
            return slice(a.start // BLOCK, (a.start + a.length + BLOCK - 1) // BLOCK)
        key = (a.start, a.length, a.count, a.stride)
        idx = self._index_cache.get(key)
        if idx is None:
            starts = a.start + a.stride * np.arange(a.count, dtype=np.int64)
            lo = starts // BLOCK
            hi = (starts + a.length + BLOCK - 1) // BLOCK
            lens = hi - lo
            offsets = np.repeat(lo - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            idx = np.unique(offsets + np.arange(int(lens.sum()), dtype=np.int64))
            if len(self._index_cache) > 4096:
                self._index_cache.clear()
            self._index_cache[key] = idx
        return idx

    # --- the check ---------------------------------------------------------------------
    def check(
        self, rec: Record, pipe: int, vc: list[int], access: Access, write: bool
    ) -> None:
        """Check one access of `rec` (on `pipe` with clock `vc`) and update the shadow."""
        if access.length == 0:
            return
        core = rec.core
        idx = self._blocks(access)
        if self._multi_core and isinstance(access.mem, GmTensor):
            self._check_cross_core(rec, access, idx, write)
        shadow = self._shadow_of(core, access.mem)
        sub = shadow[idx]
        colmax = sub.max(axis=0).tolist()
        limit = 2 * NUM_PIPES if write else NUM_PIPES
        for col in range(limit):
            p = col % NUM_PIPES
            if p != pipe and colmax[col] > vc[p]:
                self._report(rec, pipe, vc, access, idx, sub, col, write)
        count = vc[pipe]
        if write:
            shadow[idx] = 0
            shadow[idx, pipe] = count
        else:
            shadow[idx, NUM_PIPES + pipe] = count

    def _report(
        self,
        rec: Record,
        pipe: int,
        vc: list[int],
        access: Access,
        idx: np.ndarray | slice,
        sub: np.ndarray,
        col: int,
        write: bool,
    ) -> None:
        p = col % NUM_PIPES
        bad = np.flatnonzero(sub[:, col] > vc[p])
        other_gid = self.executed[rec.core][p][int(sub[bad[0], col]) - 1]
        other = self.records[other_gid]
        blocks = np.arange(idx.start, idx.stop) if isinstance(idx, slice) else idx
        run_end = 0
        while (
            run_end + 1 < len(bad)
            and blocks[bad[run_end + 1]] == blocks[bad[run_end]] + 1
        ):
            run_end += 1
        lo = max(int(blocks[bad[0]]) * BLOCK, access.start)
        hi = min((int(blocks[bad[run_end]]) + 1) * BLOCK, access.end)
        other_kind = "write" if col < NUM_PIPES else "read"
        this_kind = "write" if write else "read"
        raise RaceError(
            f"race on {access.mem_name} bytes [{lo}, {hi}) (core {rec.core}): "
            f"{other_kind} by {other.describe()} and {this_kind} by {rec.describe()} "
            f"are not ordered by set_flag/wait_flag or pipe_barrier",
            other.loc,
            rec.loc,
            access.mem_name,
            lo,
            hi,
        )

    def _check_cross_core(
        self, rec: Record, access: Access, idx: np.ndarray | slice, write: bool
    ) -> None:
        tensor = access.mem
        assert isinstance(tensor, GmTensor)
        cross = self._cross.get(tensor.id)
        if cross is None:
            cross = _CrossCore((tensor.nbytes + BLOCK - 1) // BLOCK)
            self._cross[tensor.id] = cross
        me = rec.core + 1
        w_core = cross.w_core[idx]
        foreign_w = (w_core != 0) & (w_core != me)
        if foreign_w.any():
            at = int(np.argmax(foreign_w))
            self._cross_error(
                rec, access, idx, at, int(cross.w_rec[idx][at]), "write", write
            )
        r_core = cross.r_core[idx]
        if write:
            foreign_r = (r_core != 0) & (r_core != me)
            if foreign_r.any():
                at = int(np.argmax(foreign_r))
                other = int(cross.r_rec[idx][at])
                if self.records[other].core == rec.core:
                    other = int(cross.r_rec2[idx][at])
                self._cross_error(rec, access, idx, at, other, "read", write)
            cross.w_core[idx] = me
            cross.w_rec[idx] = rec.gid
        else:
            fresh = r_core == 0
            other_core = (r_core != me) & ~fresh
            if fresh.all():
                cross.r_core[idx] = me
                cross.r_rec[idx] = rec.gid
            elif other_core.any() or fresh.any():
                r_rec = cross.r_rec[idx]
                r_rec2 = cross.r_rec2[idx]
                cross.r_core[idx] = np.where(
                    fresh, me, np.where(other_core, _MULTI, r_core)
                )
                cross.r_rec[idx] = np.where(fresh, rec.gid, r_rec)
                cross.r_rec2[idx] = np.where(other_core, rec.gid, r_rec2)

    def _cross_error(
        self,
        rec: Record,
        access: Access,
        idx: np.ndarray | slice,
        at: int,
        other_gid: int,
        other_kind: str,
        write: bool,
    ) -> None:
        blocks = np.arange(idx.start, idx.stop) if isinstance(idx, slice) else idx
        block = int(blocks[at])
        lo = max(block * BLOCK, access.start)
        hi = min((block + 1) * BLOCK, access.end)
        other = self.records[other_gid]
        raise RaceError(
            f"race on {access.mem_name} bytes [{lo}, {hi}) between cores {other.core} and "
            f"{rec.core}: {other_kind} by {other.describe()} and "
            f"{'write' if write else 'read'} by {rec.describe()} (cores never synchronise)",
            other.loc,
            rec.loc,
            access.mem_name,
            lo,
            hi,
        )


def pipe_name(pipe: int) -> str:
    return Pipe(pipe).name
