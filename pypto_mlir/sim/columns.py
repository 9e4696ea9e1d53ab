"""Every record of a replayed run as numpy columns, with its start and end cycle.

The profiler (profile.py) and the timelines (trace.py) read a run through these
columns rather than per-record objects: one row per record of every core (core by
core, program order within a core), so their work is whole-array numpy, linear in
the records. `Report.columns` builds them on first use from the records and the
replay's per-record times, like `Report.slices`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import numpy as np

from pypto_mlir.sim.access import Access, GmTensor, Pipe
from pypto_mlir.sim.records import Record, RecordedRun, RecordKind

__all__ = [
    "RecordColumns",
    "flag_pairs",
    "line_of",
    "record_columns",
    "short_line",
]


class _CoreTimes(Protocol):
    """A replayed core: its start and end cycle per record (timing.py's states)."""

    index: int
    start: Sequence[int]
    end: Sequence[int]


class _ReplayTimes(Protocol):
    @property
    def cores(self) -> Sequence[_CoreTimes]: ...


@cache
def line_of(loc: str) -> str:
    """`file:line` of a `file:line:col` location (the location itself otherwise)."""
    head, sep, tail = loc.rpartition(":")
    if sep and tail.isdigit() and head.rpartition(":")[2].isdigit():
        return head
    return loc


def short_line(line: str) -> str:
    """`swish.py:20` for `/path/to/swish.py:20` (how tables and hints show it)."""
    file, sep, number = line.rpartition(":")
    if not sep or not number.isdigit():
        return line
    return f"{os.path.basename(file)}:{number}"


def _queue_pipe(pipe: np.ndarray) -> np.ndarray:
    """The pipe whose in-order queue holds each record: S for records on ALL
    (barrier("all"), sync_all), as in timing.py."""
    return np.where(pipe == int(Pipe.ALL), int(Pipe.S), pipe)


@dataclass
class RecordColumns:
    """One row per record: `core`, `kind` (`RecordKind`), `pipe`, `queue` (the
    pipe whose queue runs it), `start`, `end` (cycles), `nbytes`, `wire_bytes`,
    `name` and `line` (codes into `names` and `lines`; `line` is the `file:line`
    of the record's loc), `loc` (code into `locs`), and for flags `src`, `dst`,
    `event` (-1 elsewhere), `path` (code into `paths`, `src->dst` of a DMA; -1 for
    other records). `position` is the row's index in its core's records."""

    core: np.ndarray
    kind: np.ndarray
    pipe: np.ndarray
    queue: np.ndarray
    start: np.ndarray
    end: np.ndarray
    nbytes: np.ndarray
    wire_bytes: np.ndarray
    name: np.ndarray
    names: list[str]
    loc: np.ndarray
    locs: list[str]
    line: np.ndarray
    lines: list[str]
    src: np.ndarray
    dst: np.ndarray
    event: np.ndarray
    path: np.ndarray
    paths: list[str]
    position: np.ndarray
    records: Sequence[Sequence[Record]]
    """Each core's records, for the accesses of the few rows hints describe."""

    def __len__(self) -> int:
        return len(self.core)

    def record(self, row: int) -> Record:
        return self.records[int(self.core[row])][int(self.position[row])]

    def on_chip_accesses(self, row: int) -> list[tuple[Access, bool]]:
        """The row's accesses to on-chip memories, each with whether it writes."""
        rec = self.record(row)
        return [
            (access, write)
            for accesses, write in ((rec.reads, False), (rec.writes, True))
            for access in accesses
            if not isinstance(access.mem, GmTensor)
        ]


def _codes(values: list[str]) -> tuple[np.ndarray, list[str]]:
    """Each value's index in the list of distinct values (first-seen order)."""
    table: dict[str, int] = {}
    codes = np.fromiter(
        (table.setdefault(v, len(table)) for v in values), np.int64, len(values)
    )
    return codes, list(table)


def _object_codes(
    machine: RecordedRun, field: int, by_id: bool
) -> tuple[np.ndarray, list[Any]]:
    """Each record's name, loc or path (`field` of `Record`) as an index into
    the distinct values in first-seen order, cores in turn (paths by identity;
    None: -1)."""
    table: dict[object, int] = {}
    values: list[Any] = []
    parts = []
    for core in machine.cores:
        local = core.records.column(field)
        objects = core.records.objects
        used, first = np.unique(local, return_index=True)
        remap = np.full(len(objects), -1, np.int64)
        for code in used[np.argsort(first)].tolist():
            value = objects[code]
            if value is None:
                continue
            key = id(value) if by_id else value
            index = table.get(key)
            if index is None:
                index = table[key] = len(values)
                values.append(value)
            remap[code] = index
        parts.append(remap[local])
    return np.concatenate(parts) if parts else np.zeros(0, np.int64), values


def record_columns(machine: RecordedRun, replay: _ReplayTimes) -> RecordColumns:
    """The columns of a finished replay of `machine`'s records, read field by
    field from the cores' packed records (`RecordStore.column`)."""
    records = [core.records for core in machine.cores]

    def column(field: int) -> np.ndarray:
        parts = [recs.column(field) for recs in records]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    kind = column(2)
    pipe = column(3)
    n = len(kind)
    name, name_list = _object_codes(machine, 4, False)
    loc, loc_list = _object_codes(machine, 5, False)
    line_codes, line_list = _codes([line_of(v) for v in loc_list])
    key = np.full((n, 3), -1, np.int64)
    at = 0
    for recs in records:
        codes = recs.column(12)
        objects = recs.objects
        keys = np.full((len(objects), 3), -1, np.int64)
        for code, value in enumerate(objects):
            if type(value) is tuple:
                keys[code] = value
        key[at : at + len(codes)] = keys[codes]
        at += len(codes)
    is_flag = (kind == RecordKind.SET) | (kind == RecordKind.WAIT)
    key[~is_flag] = -1
    path, paths = _object_codes(machine, 9, True)
    path_names = [f"{p.src}->{p.dst}" for p in paths]
    sizes = [len(recs) for recs in records]
    by_index = {st.index: st for st in replay.cores}
    start = np.concatenate(
        [
            np.asarray(by_index[c.index].start, np.int64)[:k]
            for c, k in zip(machine.cores, sizes, strict=True)
        ]
        or [np.zeros(0, np.int64)]
    )
    end = np.concatenate(
        [
            np.asarray(by_index[c.index].end, np.int64)[:k]
            for c, k in zip(machine.cores, sizes, strict=True)
        ]
        or [np.zeros(0, np.int64)]
    )
    counts = np.asarray(sizes, np.int64)
    first = np.cumsum(counts) - counts
    return RecordColumns(
        core=np.repeat(np.asarray([c.index for c in machine.cores], np.int64), counts),
        kind=kind,
        pipe=pipe,
        queue=_queue_pipe(pipe),
        start=start,
        end=end,
        nbytes=column(10),
        wire_bytes=column(11),
        name=name,
        names=name_list,
        loc=loc,
        locs=loc_list,
        line=line_codes[loc] if n else np.zeros(0, np.int64),
        lines=line_list,
        src=key[:, 0],
        dst=key[:, 1],
        event=key[:, 2],
        path=path,
        paths=path_names,
        position=np.arange(n, dtype=np.int64) - np.repeat(first, counts),
        records=records,
    )


def flag_pairs(columns: RecordColumns) -> tuple[np.ndarray, np.ndarray]:
    """(set rows, wait rows) of the matching flags: the k-th wait of a (core, src,
    dst, event) matches its k-th set, as the replay pairs them."""
    sets = np.flatnonzero(columns.kind == RecordKind.SET)
    waits = np.flatnonzero(columns.kind == RecordKind.WAIT)

    def ranked(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows sorted by (key, program order) and their rank within the key."""
        c = columns
        order = np.lexsort(
            (c.position[rows], c.event[rows], c.dst[rows], c.src[rows], c.core[rows])
        )
        rows = rows[order]
        group = np.stack(
            [c.core[rows], c.src[rows], c.dst[rows], c.event[rows]], axis=1
        )
        new = np.ones(len(rows), bool)
        if len(rows) > 1:
            new[1:] = np.any(group[1:] != group[:-1], axis=1)
        starts = np.flatnonzero(new)
        rank = np.arange(len(rows)) - np.repeat(
            starts, np.diff(np.append(starts, len(rows)))
        )
        return rows, rank

    set_rows, set_rank = ranked(sets)
    wait_rows, wait_rank = ranked(waits)
    c = columns

    def keyed(rows: np.ndarray, rank: np.ndarray) -> np.ndarray:
        return np.stack(
            [c.core[rows], c.src[rows], c.dst[rows], c.event[rows], rank], axis=1
        )

    set_keys, wait_keys = keyed(set_rows, set_rank), keyed(wait_rows, wait_rank)
    # Both are sorted by (core, src, dst, event, rank): match them by a merge.
    both = np.concatenate([set_keys, wait_keys])
    side = np.concatenate(
        [np.zeros(len(set_rows), np.int64), np.ones(len(wait_rows), np.int64)]
    )
    rows = np.concatenate([set_rows, wait_rows])
    order = np.lexsort((side, *both.T[::-1]))
    both, side, rows = both[order], side[order], rows[order]
    same = np.zeros(len(rows), bool)
    if len(rows) > 1:
        same[:-1] = (
            np.all(both[:-1] == both[1:], axis=1) & (side[:-1] == 0) & (side[1:] == 1)
        )
    first = np.flatnonzero(same)
    return rows[first], rows[first + 1]
