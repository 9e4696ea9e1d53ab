"""The functional machine: per-core memories, GM tensors and the records they issue.

An interpreter executes a kernel in program order on the numpy views this module
hands out, and issues one record (records.py) per instruction. `Machine.finish()`
then replays the records on the pipes (timing.py) and checks them for races (race.py).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from pypto_mlir.sim.access import (
    _PIPES_BY_NAME,
    Access,
    GmTensor,
    Pipe,
    burst_view,
    typed_view,
)
from pypto_mlir.sim.dcache import DataCache
from pypto_mlir.sim.errors import (
    AccessError,
    EventError,
    SimError,
    UninitializedReadError,
)
from pypto_mlir.sim.records import Record, RecordKind, RecordStore, RunRecords
from pypto_mlir.sim.report import Report
from pypto_mlir.sim.timing import replay
from pypto_mlir.targets import ON_CHIP_MEMORIES, DmaPath, Target
from pypto_mlir.targets.cost import dma_cost

__all__ = ["Core", "Machine", "gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run a block with Python's cyclic garbage collector paused.

    Simulating allocates a few small objects per instruction that stay alive (the
    records, their accesses) and creates almost no cyclic garbage; each automatic
    collection re-scans the young survivors, which took a quarter of the run time
    of a long kernel. Collection resumes (and catches up) afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_INSTR = RecordKind.INSTR
_SET = RecordKind.SET
_WAIT = RecordKind.WAIT

_new_record = tuple.__new__

_PIPE_INDEX: dict[object, int] = {
    **{p: int(p) for p in Pipe},
    **{int(p): int(p) for p in Pipe},
    **{name: int(pipe) for name, pipe in _PIPES_BY_NAME.items()},
}
"""Pipe spellings (names, Pipe members, ints) -> pipe index, for `issue`."""

_ALL = int(Pipe.ALL)

_FEW_BYTES = 64
"""Accesses up to this many bytes `check_initialized` checks through `bytes`:
np.all's call costs more than the check of a scalar's bytes."""

_INTERNED_LIMIT = 1 << 16
"""Distinct on-chip accesses `Core.access` keeps (a bound on its memory; a
kernel names a few buffers' worth)."""


def _accesses(items: Iterable[Access | tuple]) -> tuple[Access, ...]:
    """`items` as a tuple of Access (returned as is when it already is one)."""
    if type(items) is tuple:
        for a in items:
            if type(a) is not Access:
                break
        else:
            return items
    return tuple(a if type(a) is Access else _as_access(a) for a in items)


def _as_access(item: Access | tuple) -> Access:
    if isinstance(item, Access):
        return item
    mem, lo, hi = item
    return Access(mem, lo, hi - lo)


class Core:
    """One AI Core: on-chip byte arrays and the program-order record stream."""

    def __init__(self, machine: Machine, index: int):
        self.machine = machine
        self.target = machine.target
        self.index = index
        self.memories: dict[str, np.ndarray] = {
            name: np.zeros(self.target.memories[name].size, dtype=np.uint8)
            for name in ON_CHIP_MEMORIES
        }
        self.written: dict[str, np.ndarray] = {
            name: np.zeros(buf.size, dtype=bool) for name, buf in self.memories.items()
        }
        self.records = RecordStore(index)
        self.allocs: dict[str, list[tuple[int, int]]] = {
            name: [] for name in ON_CHIP_MEMORIES
        }
        self._pending_scalar = 0
        self._event_ids = self.target.sync.event_ids
        self._max_pending = self.target.sync.max_pending_sets
        self._scalar_op = self.target.scalar.op
        # Sets not yet followed by a wait in program order, per (src, dst, event).
        self._unmatched_sets: dict[tuple[int, int, int], list[str]] = {}
        self._event_keys: dict[tuple[object, object, int], tuple[int, int, int]] = {}
        # On-chip Access objects whose bytes are all written (by id; the value keeps
        # the object alive so that its id is not reused). Written bits are never
        # cleared, so such an access needs no range, initialisation or marking work
        # when it is issued again: the common case of buffers reused every iteration.
        self._known: dict[int, Access] = {}
        # On-chip accesses by (mem, start, length, count, stride), for `access`.
        self._interned: dict[tuple[str, int, int, int, int], Access] = {}
        self._paths: dict[tuple[object, int], DmaPath] = {}
        self._byte_views: dict[str | GmTensor, memoryview] = {}
        # Every DMA path an issued record used (by id; a path runs on one pipe), for
        # the replay's GM sharing.
        self.used_paths: dict[int, DmaPath] = {}
        self.bank_conflict_cycles = 0
        """Cycles of the issued instructions lost to UB bank conflicts."""
        self.bank_conflict_instructions = 0
        """Issued instructions that lost cycles to UB bank conflicts."""
        self.syncs: list[int] = []
        """Positions in `records` of this core's `sync_all` records, in order."""
        scalar = self.target.scalar
        self.dcache = DataCache(scalar.dcache_line, scalar.dcache_size)
        """The scalar unit's GM data cache (timing of `scalar_load` only)."""

    # --- functional memory -----------------------------------------------------------
    def memory(self, space: str) -> np.ndarray:
        """The raw uint8 array of an on-chip memory."""
        try:
            return self.memories[space]
        except KeyError:
            raise AccessError(
                f"unknown on-chip memory {space!r} (known: {', '.join(ON_CHIP_MEMORIES)})"
            ) from None

    def view(
        self,
        space: str,
        byte_offset: int,
        shape: tuple[int, ...],
        dtype: np.dtype | type,
        strides: tuple[int, ...] | None = None,
    ) -> np.ndarray:
        """Typed numpy view of `space` at `byte_offset` (strides in bytes)."""
        return typed_view(self.memory(space), space, byte_offset, shape, dtype, strides)

    def burst_view(self, access: Access) -> np.ndarray:
        """The (count, length) uint8 view of the bytes `access` names (on-chip or GM)."""
        self._check_range(access, "")
        return burst_view(self._bytes_of(access.mem), access)

    def access(
        self, mem: str, start: int, length: int, count: int = 1, stride: int = -1
    ) -> Access:
        """`Access(mem, start, length, count, stride)` of an on-chip memory, one
        object per distinct access: an interpreter that names the same buffer
        bytes every iteration then keeps one object alive, not one per record,
        and `issue` checks it once (`stride` -1: `length`)."""
        key = (mem, start, length, count, stride)
        access = self._interned.get(key)
        if access is None:
            access = Access(mem, start, length, count, None if stride < 0 else stride)
            if len(self._interned) >= _INTERNED_LIMIT:
                self._interned.clear()
            self._interned[key] = access
        return access

    def note_alloc(
        self, space: str, byte_offset: int, size: int, loc: str = ""
    ) -> None:
        """Record a buffer allocation (for occupancy); checks range and alignment."""
        mem = self.target.memories.get(space)
        if mem is None or space == "gm":
            raise AccessError(f"unknown on-chip memory {space!r}", (loc,))
        if byte_offset % mem.alignment:
            raise AccessError(
                f"{_at(loc)}allocation at {space} offset {byte_offset} is not "
                f"{mem.alignment}-byte aligned",
                (loc,),
            )
        if byte_offset < 0 or size < 0 or byte_offset + size > mem.size:
            raise AccessError(
                f"{_at(loc)}allocation [{byte_offset}, {byte_offset + size}) does not fit in "
                f"{space} ({mem.size} bytes on {self.target.name})",
                (loc,),
            )
        self.allocs[space].append((byte_offset, byte_offset + size))

    def mark_written(self, access: Access | tuple, loc: str = "") -> None:
        """Mark bytes as initialised (done by `issue` for every write)."""
        if type(access) is not Access:
            access = _as_access(access)
        mask = self._written_mask(access, loc)
        if mask is None:
            return
        if access.count == 1:
            mask[access.start : access.start + access.length] = True
        else:
            burst_view(mask, access)[...] = True

    def check_initialized(self, access: Access | tuple, loc: str = "") -> None:
        """UninitializedReadError when some byte of an on-chip access was never written."""
        if type(access) is not Access:
            access = _as_access(access)
        mask = self._written_mask(access, loc)
        if mask is None or access.length == 0:
            return
        if access.count == 1:
            touched = mask[access.start : access.start + access.length]
            # A scalar's few bytes: `in` on their copy costs a tenth of np.all.
            if access.length <= _FEW_BYTES and 0 not in touched.tobytes():
                return
        else:
            touched = burst_view(mask, access)
        if touched.all():
            return
        flat = np.asarray(touched).reshape(access.count, access.length)
        burst, byte = np.unravel_index(int(np.argmin(flat)), flat.shape)
        first = access.start + int(burst) * access.stride + int(byte)
        raise UninitializedReadError(
            f"{_at(loc)}read of {access.mem} byte {first} (core {self.index}), which no "
            f"instruction has written",
            (loc,),
        )

    def _written_mask(self, access: Access, loc: str) -> np.ndarray | None:
        """The written-bit array of an on-chip access (None for GM), range-checked."""
        mem = access.mem
        if type(mem) is not str:
            self._check_range(access, loc)
            return None
        mask = self.written.get(mem)
        if mask is None:
            self.memory(mem)  # raises the unknown-memory error
        end = access.start + (access.count - 1) * access.stride + access.length
        if end > mask.size:
            self._check_range(access, loc)
        return mask

    # --- instruction records -----------------------------------------------------------
    def scalar(self, count: int = 1) -> None:
        """Account `count` scalar ALU instructions; they delay the next issued record."""
        self._pending_scalar += count * self._scalar_op

    def issue(
        self,
        pipe: Pipe | str,
        name: str,
        loc: str,
        cycles: int,
        *,
        reads: Iterable[Access | tuple] = (),
        writes: Iterable[Access | tuple] = (),
        path: tuple[str, str] | None = None,
        nbytes: int | None = None,
        wire_bytes: int | None = None,
        bank_cycles: int = 0,
        head: int = 0,
    ) -> int:
        """Record one instruction executed on `pipe`; returns its record id.

        reads/writes: Access objects or (memory, lo, hi) tuples; reads must be
        initialised, writes mark bytes initialised. For a DMA, `path` names the
        direction (it must exist on the target and run on `pipe`), `nbytes` the payload
        and `wire_bytes` the bytes moved after granule rounding (default nbytes).
        `bank_cycles`: how many of `cycles` are lost to UB bank conflicts (counted
        in the report). `head`: the start-up cycles the replay adds when the
        instruction starts a stream on its pipe (docs/simulator.md, "Start-up").
        """
        p = _PIPE_INDEX.get(pipe)
        if p is None or type(pipe) is int:
            p = int(Pipe.parse(pipe))
        if p == _ALL:
            raise SimError(
                f"{_at(loc)}instructions cannot be issued on pipe ALL", (loc,)
            )
        if cycles < 0 or head < 0:
            raise SimError(
                f"{_at(loc)}negative cycle count {min(cycles, head)}", (loc,)
            )
        if not 0 <= bank_cycles <= cycles:
            raise SimError(
                f"{_at(loc)}bank conflict cycles {bank_cycles} not in 0..{cycles}",
                (loc,),
            )
        if bank_cycles:
            self.bank_conflict_cycles += bank_cycles
            self.bank_conflict_instructions += 1
        reads = _accesses(reads)
        writes = _accesses(writes)
        known = self._known
        for access in reads:
            if known.get(id(access)) is not access:
                self._first_read(access, loc)
        for access in writes:
            if known.get(id(access)) is not access:
                self._first_write(access, loc)
        info = None
        if path is not None:
            info = self._paths.get((path, p)) if type(path) is tuple else None
            if info is None:
                info = self._dma_path(path, p, loc)
        if nbytes is None:
            nbytes = sum(a.nbytes for a in writes) if info is not None else 0
        if wire_bytes is None:
            wire_bytes = nbytes
        machine = self.machine
        gid = machine.issued
        machine.issued = gid + 1
        rec = _new_record(
            Record,
            (
                gid,
                self.index,
                _INSTR,
                p,
                name,
                loc,
                int(cycles),
                reads,
                writes,
                info,
                int(nbytes),
                int(wire_bytes),
                None,
                self._pending_scalar,
                int(head),
            ),
        )
        self._pending_scalar = 0
        self.records.append(rec)
        return gid

    def scalar_load(self, name: str, loc: str, access: Access) -> int:
        """A scalar read of `access` on S (`load_scalar`); S waits for it: a UB read
        costs `scalar.ub_load`, a GM read `scalar.dcache_hit` when its line is in
        the DataCache, else `scalar.gm_load` (sim/dcache.py)."""
        scalar = self.target.scalar
        if type(access.mem) is str:
            cycles = scalar.ub_load
        elif self.dcache.read(access.mem.id, access.start, access.end):
            cycles = scalar.dcache_hit
        else:
            cycles = scalar.gm_load
        return self.issue(Pipe.S, name, loc, cycles, reads=(access,))

    def issue_planned(
        self,
        pipe: int,
        name: str,
        loc: str,
        cycles: int,
        reads: tuple[Access, ...],
        writes: tuple[Access, ...],
        path: DmaPath | None = None,
        nbytes: int = 0,
        wire_bytes: int = 0,
        bank_cycles: int = 0,
        head: int = 0,
    ) -> int:
        """`issue` for an interpreter that checked its arguments once per op: `pipe`
        an index (not ALL), `cycles` a non-negative int, accesses as tuples of
        Access, `path` the target's DmaPath running on `pipe`, `nbytes` and
        `wire_bytes` given, `bank_cycles` in 0..cycles, `head` a non-negative
        int. The accesses are checked
        as `issue` checks them."""
        if bank_cycles:
            self.bank_conflict_cycles += bank_cycles
            self.bank_conflict_instructions += 1
        known = self._known
        for access in reads:
            if known.get(id(access)) is not access:
                self._first_read(access, loc)
        for access in writes:
            if known.get(id(access)) is not access:
                self._first_write(access, loc)
        if path is not None and id(path) not in self.used_paths:
            self.used_paths[id(path)] = path
        machine = self.machine
        gid = machine.issued
        machine.issued = gid + 1
        rec = _new_record(
            Record,
            (
                gid,
                self.index,
                _INSTR,
                pipe,
                name,
                loc,
                cycles,
                reads,
                writes,
                path,
                nbytes,
                wire_bytes,
                None,
                self._pending_scalar,
                head,
            ),
        )
        self._pending_scalar = 0
        self.records.append(rec)
        return gid

    def byte_view(self, mem: str | GmTensor) -> memoryview | None:
        """A memoryview of the bytes of `mem` (for fast copies; None if read-only)."""
        view = self._byte_views.get(mem)
        if view is None:
            view = memoryview(self._bytes_of(mem))
            if view.readonly:
                return None
            self._byte_views[mem] = view
        return view

    def _first_read(self, access: Access, loc: str) -> None:
        """Range and initialisation check of a read not known to be written."""
        if type(access.mem) is not str:  # GM is initialised
            if access.end > access.mem.bytes.size:
                self._check_range(access, loc)
            return
        self.check_initialized(access, loc)
        self._known[id(access)] = access

    def _first_write(self, access: Access, loc: str) -> None:
        """Range check and written marks of a write not known to be written."""
        if type(access.mem) is not str:
            if access.end > access.mem.bytes.size:
                self._check_range(access, loc)
            return
        self.mark_written(access, loc)
        self._known[id(access)] = access

    def _dma_path(self, path: tuple[str, str], pipe: int, loc: str) -> DmaPath:
        """The target's path `path`, checked to run on `pipe` (cached per core)."""
        try:
            info = self.target.dma_path(*path)
        except KeyError as e:
            raise SimError(f"{_at(loc)}{e.args[0]}", (loc,)) from None
        if info.pipe != Pipe(pipe).name:
            raise SimError(
                f"{_at(loc)}DMA {path[0]}->{path[1]} runs on {info.pipe}, "
                f"not {Pipe(pipe).name}",
                (loc,),
            )
        if type(path) is tuple:
            self._paths[(path, pipe)] = info
        self.used_paths[id(info)] = info
        return info

    def dma(self, name: str, loc: str, src: Access, dst: Access) -> int:
        """Copy src to dst (same burst count and length) and record it with its cost.

        Performs the functional copy, derives the path from the two memories and the
        pipe from the target, and charges `cost.dma_cost`.
        """
        path = (_space_of(src.mem), _space_of(dst.mem))
        if src.nbytes != dst.nbytes:
            raise SimError(
                f"{_at(loc)}DMA moves {src.nbytes} bytes from {src.mem_name} "
                f"but {dst.nbytes} to {dst.mem_name}",
                (loc,),
            )
        try:
            info = self.target.dma_path(*path)
        except KeyError as e:
            raise SimError(f"{_at(loc)}{e.args[0]}", (loc,)) from None
        self.check_initialized(src, loc)
        self._check_range(dst, loc)
        out = self.burst_view(dst)
        out[...] = self.burst_view(src).reshape(out.shape)
        # The side with more (shorter) bursts sets the burst shape of the transfer.
        shape = src if src.count >= dst.count else dst
        cost = dma_cost(
            self.target,
            path,
            shape.count,
            shape.length,
            src.start,
            dst.start,
            src.stride if src.count > 1 else None,
            dst.stride if dst.count > 1 else None,
        )
        return self.issue(
            info.pipe,
            name,
            loc,
            cost.cycles,
            reads=(src,),
            writes=(dst,),
            path=path,
            nbytes=src.nbytes,
            wire_bytes=cost.wire_bytes,
        )

    def set_flag(
        self, src: Pipe | str, dst: Pipe | str, event: int, loc: str = ""
    ) -> int:
        """Signal `dst` once every earlier instruction on `src` has completed."""
        key = self._event_keys.get((src, dst, event))
        if key is None:
            key = self._event_key(src, dst, event, loc)
        return self.set_flag_key(key, loc)

    def set_flag_key(self, key: tuple[int, int, int], loc: str = "") -> int:
        """`set_flag` of a key `event_key` made (src pipe, dst pipe, event)."""
        unmatched = self._unmatched_sets.get(key)
        if unmatched is None:
            unmatched = self._unmatched_sets[key] = []
        if len(unmatched) >= self._max_pending:
            raise EventError(
                f"{_at(loc)}set_flag({Pipe(key[0]).name} -> {Pipe(key[1]).name}, event "
                f"{key[2]}) follows the set at {unmatched[0] or '?'} with no wait_flag "
                f"between; the hardware allows {self.target.sync.max_pending_sets} pending "
                f"set(s) per pipe pair and event",
                (loc, unmatched[0]),
            )
        unmatched.append(loc)
        machine = self.machine
        gid = machine.issued
        machine.issued = gid + 1
        rec = _new_record(
            Record,
            (
                gid,
                self.index,
                _SET,
                key[0],
                "set_flag",
                loc,
                0,
                (),
                (),
                None,
                0,
                0,
                key,
                self._pending_scalar,
                0,
            ),
        )
        self._pending_scalar = 0
        self.records.append(rec)
        return gid

    def wait_flag(
        self, src: Pipe | str, dst: Pipe | str, event: int, loc: str = ""
    ) -> int:
        """Block `dst` until the matching set_flag (k-th wait matches k-th set)."""
        key = self._event_keys.get((src, dst, event))
        if key is None:
            key = self._event_key(src, dst, event, loc)
        return self.wait_flag_key(key, loc)

    def wait_flag_key(self, key: tuple[int, int, int], loc: str = "") -> int:
        """`wait_flag` of a key `event_key` made (src pipe, dst pipe, event)."""
        unmatched = self._unmatched_sets.get(key)
        if unmatched:
            del unmatched[0]
        return self._append(_WAIT, key[1], "wait_flag", loc, key)

    def barrier(self, pipe: Pipe | str, loc: str = "") -> int:
        """pipe_barrier: ALL waits for every pipe to drain and orders all of them."""
        return self._append(
            RecordKind.BARRIER, int(Pipe.parse(pipe)), "pipe_barrier", loc
        )

    pipe_barrier = barrier

    def sync_all(self, loc: str = "") -> int:
        """A barrier of all cores: this core's pipes drain, then it waits until every
        core has reached its sync_all of the same rank; GM accesses before it are
        ordered before every core's accesses after it."""
        self.syncs.append(len(self.records))
        return self._append(RecordKind.SYNC_ALL, _ALL, "sync_all", loc)

    def event_key(
        self, src: Pipe | str, dst: Pipe | str, event: int, loc: str = ""
    ) -> tuple[int, int, int]:
        """The checked (src pipe, dst pipe, event) of a flag; EventError if bad."""
        return self._event_key(src, dst, event, loc)

    # --- internals ---------------------------------------------------------------------
    def _event_key(
        self, src: Pipe | str, dst: Pipe | str, event: int, loc: str
    ) -> tuple[int, int, int]:
        cached = self._event_keys.get((src, dst, event))
        if cached is not None:
            return cached
        s, d = Pipe.parse(src), Pipe.parse(dst)
        if Pipe.ALL in (s, d):
            raise EventError(
                f"{_at(loc)}set_flag/wait_flag cannot name pipe ALL", (loc,)
            )
        if not 0 <= event < self._event_ids:
            raise EventError(
                f"{_at(loc)}event id {event} out of range: {self.target.name} has "
                f"{self._event_ids} per pipe pair (0..{self._event_ids - 1})",
                (loc,),
            )
        key = (int(s), int(d), int(event))
        self._event_keys[(src, dst, event)] = key
        return key

    def _append(
        self,
        kind: int,
        pipe: int,
        name: str,
        loc: str,
        key: tuple[int, int, int] | None = None,
    ) -> int:
        """Append a record without operands (a flag, a barrier, trailing scalar work)."""
        machine = self.machine
        gid = machine.issued
        machine.issued = gid + 1
        rec = _new_record(
            Record,
            (
                gid,
                self.index,
                kind,
                pipe,
                name,
                loc,
                0,
                (),
                (),
                None,
                0,
                0,
                key,
                self._pending_scalar,
                0,
            ),
        )
        self._pending_scalar = 0
        self.records.append(rec)
        return gid

    def _bytes_of(self, mem: str | GmTensor) -> np.ndarray:
        if isinstance(mem, GmTensor):
            return mem.bytes
        return self.memory(mem)

    def _check_range(self, access: Access, loc: str) -> None:
        size = self._bytes_of(access.mem).size
        if access.end > size:
            raise AccessError(
                f"{_at(loc)}access to {access.mem_name} bytes [{access.start}, {access.end}) "
                f"is outside its {size} bytes (core {self.index})",
                (loc,),
            )

    def _flush_scalar(self) -> None:
        if self._pending_scalar:
            self._append(RecordKind.INSTR, int(Pipe.S), "scalar", "")


def _space_of(mem: str | GmTensor) -> str:
    return "gm" if isinstance(mem, GmTensor) else mem


def _at(loc: str) -> str:
    return f"{loc}: " if loc else ""


class Machine:
    """`block_dim` AI Cores of `target` sharing global memory."""

    def __init__(self, target: Target, block_dim: int = 1):
        if not 1 <= block_dim <= target.cores:
            raise SimError(
                f"block_dim {block_dim} is not in 1..{target.cores} (cores of {target.name})"
            )
        self.target = target
        self.block_dim = block_dim
        self.issued = 0
        """Records issued so far (the next record's gid)."""
        self.gm_tensors: list[GmTensor] = []
        self._gm_by_name: dict[str, GmTensor] = {}
        self.cores: list[Core] = [Core(self, i) for i in range(block_dim)]
        self.records = RunRecords([core.records for core in self.cores])
        """Every record of every core, by gid."""
        self._finished = False

    def core(self, block_idx: int) -> Core:
        return self.cores[block_idx]

    def register_gm(self, name: str, array: np.ndarray) -> GmTensor:
        """Place a numpy array in GM; the machine reads and writes it in place."""
        if name in self._gm_by_name:
            raise SimError(f"GM tensor {name!r} is already registered")
        tensor = GmTensor(len(self.gm_tensors), name, array)
        self.gm_tensors.append(tensor)
        self._gm_by_name[name] = tensor
        return tensor

    def gm(self, name: str) -> GmTensor:
        return self._gm_by_name[name]

    def finish(self) -> Report:
        """Replay every record: timing, races, sync errors; returns the Report."""
        if self._finished:
            raise SimError("Machine.finish() was already called")
        self._finished = True
        for core in self.cores:
            core._flush_scalar()
        with gc_paused():
            return replay(self)
