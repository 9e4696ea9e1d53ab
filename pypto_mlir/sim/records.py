"""The instruction records a kernel's execution leaves, and the run they form.

A leaf of `sim/`: the machine (machine.py) issues `Record`s, and the replay
(timing.py), the race detector (race.py) and the report (report.py) read them
through `RecordedRun`, the part of a finished `Machine` they need. So none of
them imports the machine, and the machine imports the replay to finish a run.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple, Protocol, overload

import numpy as np

from pypto_mlir.sim.access import Access, GmTensor, Pipe
from pypto_mlir.targets import DmaPath, Target

__all__ = [
    "Record",
    "RecordKind",
    "RecordStore",
    "RecordedCore",
    "RecordedRun",
    "RunRecords",
    "int_column",
]


def int_column(n: int) -> array[int]:
    """`n` zeros as 64-bit ints, for a value per record (times, clocks): a list
    holds a pointer and an int object per value, an array 8 bytes, and numpy
    reads it without a copy (`np.frombuffer`)."""
    return array("q", bytes(8 * n))


class RecordKind:
    INSTR = 0
    SET = 1
    WAIT = 2
    BARRIER = 3
    SYNC_ALL = 4


class Record(NamedTuple):
    """One issued instruction (or set/wait/barrier) in program order.

    A tuple (built with `tuple.__new__` when issued): records are created once per
    simulated instruction, so they must be cheap to make and to read.
    """

    gid: int
    core: int
    kind: int
    pipe: int
    name: str
    loc: str
    cycles: int = 0
    reads: tuple[Access, ...] = ()
    writes: tuple[Access, ...] = ()
    path: DmaPath | None = None
    nbytes: int = 0
    wire_bytes: int = 0
    key: tuple[int, int, int] | None = None
    scalar_cycles: int = 0
    head: int = 0
    """Start-up cycles added to `cycles` when the instruction starts a stream on
    its pipe (docs/simulator.md, "Start-up"); 0 for everything but V and M."""

    def describe(self) -> str:
        """`name` on `pipe` at `loc`, for error messages."""
        where = f" at {self.loc}" if self.loc else ""
        return f"'{self.name}' (core {self.core}, {Pipe(self.pipe).name}){where}"


_new_record = tuple.__new__
_new_object = object.__new__


_CHUNK_BITS = 10
_CHUNK = 1 << _CHUNK_BITS
"""Records a `RecordStore` packs at a time (and rebuilds at a time): small, so
that the few rebuilt chunks of every core stay small next to the run."""

_CACHED_CHUNKS = 4
"""Materialised chunks a store keeps: the replays walk a core's records with S
and each pipe near one another, a few chunks apart at most."""

_INT_FIELDS = (0, 2, 3, 6, 10, 11, 13, 14)
"""Record fields packed as int columns: gid, kind, pipe, cycles, nbytes,
wire_bytes, scalar_cycles, head."""

_OBJECT_FIELDS = (4, 5, 9, 12)
"""Record fields packed as codes into the store's objects: name, loc, path, key."""

_ACCESS_FIELDS = ("mem", "start", "length", "count", "stride")


def _narrow(values: list[int]) -> np.ndarray:
    """`values` in the smallest signed int dtype that holds them all."""
    column = np.array(values, np.int64)
    if not column.size:
        return column.astype(np.int8)
    lo, hi = int(column.min()), int(column.max())
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return column.astype(dtype)
    return column


class _Chunk(NamedTuple):
    """`_CHUNK` records as columns: `ints` (one per `_INT_FIELDS`), `codes` (one
    per `_OBJECT_FIELDS`), reads and writes per record, and the accesses (reads
    then writes, records in order) as one column per `_ACCESS_FIELDS` (mem a
    code)."""

    ints: tuple[np.ndarray, ...]
    codes: tuple[np.ndarray, ...]
    reads: np.ndarray
    writes: np.ndarray
    accesses: tuple[np.ndarray, ...]


class RecordStore(Sequence[Record]):
    """One core's records in program order, packed into int columns `_CHUNK` (1024) at
    a time: a record is a tuple of 15 fields with an int object or two and its
    own accesses (about 300 bytes), its columns about 40 bytes and 15 per access.

    Indexing rebuilds the records of a packed chunk (a few kept: the replays
    read them in order); the same fields, equal accesses, the same name, loc,
    path and key objects. `packed()` gives every record as columns, for the
    passes that read them all (the access table, the report's columns).
    """

    def __init__(self, core: int) -> None:
        self.core = core
        self._tail: list[Record] = []
        self._chunks: list[_Chunk] = []
        self._cache: dict[int, list[Record]] = {}
        self._objects: list[object] = [None]
        """Code -> name, loc, path, key or memory (code 0: None)."""
        self._by_value: dict[object, int] = {}
        self._by_id: dict[int, int] = {}

    def append(self, rec: Record) -> None:
        tail = self._tail
        tail.append(rec)
        if len(tail) >= _CHUNK:
            self._chunks.append(self._pack(tail))
            self._tail = []

    def __len__(self) -> int:
        return (len(self._chunks) << _CHUNK_BITS) + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...
    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        if type(index) is not int:
            if isinstance(index, slice):
                return [self[i] for i in range(*index.indices(len(self)))]
            index = operator.index(index)
        if index < 0:
            index += len(self)
            if index < 0:
                raise IndexError("record index out of range")
        c = index >> _CHUNK_BITS
        if c < len(self._chunks):
            recs = self._cache.get(c)
            if recs is None:
                recs = self._materialise(c)
            return recs[index & (_CHUNK - 1)]
        return self._tail[index - (len(self._chunks) << _CHUNK_BITS)]

    def __iter__(self) -> Iterator[Record]:
        for c in range(len(self._chunks)):
            recs = self._cache.get(c)
            yield from recs if recs is not None else self._build(self._chunks[c])
        yield from self._tail

    def drop_cache(self) -> None:
        """Forget the rebuilt records (a pass that read them in order is done)."""
        self._cache.clear()

    # --- columns ---------------------------------------------------------------------------
    @property
    def objects(self) -> list[object]:
        """What the codes of `packed()` name (0: None)."""
        return self._objects

    def packed(self) -> _Chunk:
        """Every record as columns (int64), the unpacked ones packed on the fly."""
        chunks = [*self._chunks, self._pack(self._tail)]

        def joined(columns: list[np.ndarray]) -> np.ndarray:
            return np.concatenate([c.astype(np.int64, copy=False) for c in columns])

        return _Chunk(
            tuple(joined([c.ints[i] for c in chunks]) for i in range(len(_INT_FIELDS))),
            tuple(
                joined([c.codes[i] for c in chunks]) for i in range(len(_OBJECT_FIELDS))
            ),
            joined([c.reads for c in chunks]),
            joined([c.writes for c in chunks]),
            tuple(
                joined([c.accesses[i] for c in chunks])
                for i in range(len(_ACCESS_FIELDS))
            ),
        )

    def access_count(self) -> int:
        """How many accesses the records have (reads and writes)."""
        return sum(len(c.accesses[0]) for c in self._chunks) + sum(
            len(r[7]) + len(r[8]) for r in self._tail
        )

    def column(self, field: int) -> np.ndarray:
        """Field `field` of `Record` of every record as int64: the value of an
        int field (`_INT_FIELDS`), the code into `objects` of the others
        (`_OBJECT_FIELDS`)."""
        tail = self._tail
        if field in _INT_FIELDS:
            i = _INT_FIELDS.index(field)
            parts = [c.ints[i] for c in self._chunks]
            values = [r[field] for r in tail]
        else:
            i = _OBJECT_FIELDS.index(field)
            parts = [c.codes[i] for c in self._chunks]
            values = [self._code(r[field]) for r in tail]
        return np.concatenate(
            [
                *(part.astype(np.int64) for part in parts),
                np.array(values, np.int64),
            ]
        )

    # --- packing -----------------------------------------------------------------------------
    def _code(self, value: object) -> int:
        """The code of a name, loc, path, key or memory (strings and tuples by
        value, other objects by identity)."""
        if value is None:
            return 0
        if type(value) is str or type(value) is tuple:
            code = self._by_value.get(value)
            if code is None:
                code = self._by_value[value] = len(self._objects)
                self._objects.append(value)
            return code
        code = self._by_id.get(id(value))
        if code is None:
            code = self._by_id[id(value)] = len(self._objects)
            self._objects.append(value)  # keeps the object (and its id) alive
        return code

    def _pack(self, recs: list[Record]) -> _Chunk:
        code = self._code
        ints = tuple(_narrow([r[i] for r in recs]) for i in _INT_FIELDS)
        codes = tuple(_narrow([code(r[i]) for r in recs]) for i in _OBJECT_FIELDS)
        accesses = [a for r in recs for a in (*r[7], *r[8])]
        return _Chunk(
            ints,
            codes,
            _narrow([len(r[7]) for r in recs]),
            _narrow([len(r[8]) for r in recs]),
            (
                _narrow([code(a.mem) for a in accesses]),
                *(
                    _narrow([getattr(a, field) for a in accesses])
                    for field in _ACCESS_FIELDS[1:]
                ),
            ),
        )

    def _materialise(self, c: int) -> list[Record]:
        cache = self._cache
        if len(cache) >= _CACHED_CHUNKS:
            del cache[next(iter(cache))]
        recs = cache[c] = self._build(self._chunks[c])
        return recs

    def _build(self, chunk: _Chunk) -> list[Record]:
        objects = self._objects
        mems, starts, lengths, counts, strides = (a.tolist() for a in chunk.accesses)
        accesses: list[Access] = []
        for mem, start, length, count, stride in zip(
            mems, starts, lengths, counts, strides, strict=True
        ):
            access = _new_object(Access)
            access.mem = objects[mem]
            access.start = start
            access.length = length
            access.count = count
            access.stride = stride
            access.end = start if length == 0 else start + (count - 1) * stride + length
            accesses.append(access)
        gid, kind, pipe, cycles, nbytes, wire, scalar, head = (
            a.tolist() for a in chunk.ints
        )
        name, loc, path, key = (a.tolist() for a in chunk.codes)
        recs: list[Record] = []
        core = self.core
        at = 0
        for i, (r, w) in enumerate(
            zip(chunk.reads.tolist(), chunk.writes.tolist(), strict=True)
        ):
            reads = tuple(accesses[at : at + r]) if r else ()
            at += r
            writes = tuple(accesses[at : at + w]) if w else ()
            at += w
            recs.append(
                _new_record(
                    Record,
                    (
                        gid[i],
                        core,
                        kind[i],
                        pipe[i],
                        objects[name[i]],
                        objects[loc[i]],
                        cycles[i],
                        reads,
                        writes,
                        objects[path[i]],
                        nbytes[i],
                        wire[i],
                        objects[key[i]],
                        scalar[i],
                        head[i],
                    ),
                )
            )
        return recs


class RunRecords(Sequence[Record]):
    """Every record of a run by gid, over the cores' stores (for the messages
    of the reference replay and the length)."""

    def __init__(self, stores: Sequence[RecordStore]) -> None:
        self._stores = stores
        self._gids: list[np.ndarray] | None = None
        self._length = -1

    def __len__(self) -> int:
        return sum(len(s) for s in self._stores)

    def __getitem__(self, gid: int) -> Record:  # type: ignore[override]
        if gid < 0:
            gid += len(self)
        if self._gids is None or self._length != len(self):
            self._gids = [s.column(0) for s in self._stores]
            self._length = len(self)
        for store, gids in zip(self._stores, self._gids, strict=True):
            j = int(np.searchsorted(gids, gid))
            if j < len(gids) and gids[j] == gid:
                return store[j]
        raise IndexError(f"no record {gid}")


class RecordedCore(Protocol):
    """What the replay and the report read of one core of a run (`machine.Core`)."""

    @property
    def index(self) -> int: ...
    @property
    def records(self) -> RecordStore: ...
    @property
    def syncs(self) -> Sequence[int]:
        """Positions in `records` of the core's `sync_all` records, in order."""
        ...

    @property
    def used_paths(self) -> Mapping[int, DmaPath]:
        """Every DMA path an issued record used (by id)."""
        ...

    @property
    def memories(self) -> Mapping[str, np.ndarray]: ...
    @property
    def allocs(self) -> Mapping[str, Sequence[tuple[int, int]]]: ...
    @property
    def bank_conflict_cycles(self) -> int: ...
    @property
    def bank_conflict_instructions(self) -> int: ...


class RecordedRun(Protocol):
    """What the replay, the race detector and the report read of a run
    (`machine.Machine` once every record is issued)."""

    @property
    def target(self) -> Target: ...
    @property
    def block_dim(self) -> int: ...
    @property
    def cores(self) -> Sequence[RecordedCore]: ...
    @property
    def records(self) -> Sequence[Record]:
        """Every record of every core, by gid."""
        ...

    @property
    def gm_tensors(self) -> Sequence[GmTensor]: ...
