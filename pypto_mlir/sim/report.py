"""The result of a replay: cycles, pipe utilisation, traffic, occupancy, timeline.

The JSON schema is documented in docs/simulator.md ("Report").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, overload

import numpy as np

from pypto_mlir.sim.access import NUM_PIPES, Pipe
from pypto_mlir.sim.columns import RecordColumns, record_columns
from pypto_mlir.sim.l2 import L2Cache, L2Transfers
from pypto_mlir.sim.race import AccessTable
from pypto_mlir.sim.records import Record, RecordedRun, RecordKind

PIPE_ORDER: tuple[str, ...] = tuple(Pipe(p).name for p in range(NUM_PIPES))


class _CoreTimes(Protocol):
    index: int
    recs: list[Record]
    start: MutableSequence[int]
    end: MutableSequence[int]
    free: list[int]
    busy: list[int]


class _Times(Protocol):
    """What a replay leaves for the report (timing.py's replays all have it)."""

    @property
    def cores(self) -> Sequence[_CoreTimes]: ...

    gm_wire_bytes: int
    l2: L2Cache | None


class Slice(NamedTuple):
    """One executed instruction on the timeline (times in cycles)."""

    core: int
    pipe: str
    name: str
    loc: str
    start: int
    end: int
    nbytes: int


@dataclass
class SyncAllStats:
    """One `sync_all` of all cores: when each core arrived (its pipes drained)
    and when every core went on."""

    loc: str
    """Where core 0 executed it."""
    arrive: list[int]
    """Per core: the cycle its pipes had drained at the barrier."""
    release: int
    """The cycle every core goes on (the last arrival plus sync.all_latency)."""

    @property
    def wait_cycles(self) -> int:
        """Cycles the cores spent at the barrier, summed over the cores."""
        return sum(self.release - t for t in self.arrive)

    def to_dict(self) -> dict[str, Any]:
        return {
            "loc": self.loc,
            "arrive_cycles": list(self.arrive),
            "release_cycle": self.release,
            "wait_cycles": self.wait_cycles,
        }


@dataclass(frozen=True)
class RooflineBound:
    """The roofline of the kernel's problem, as plain numbers: the compiler
    computes it from the IR (`pypto_mlir.roofline`) and attaches it to the report
    (the simulator knows nothing about IR)."""

    cycles: float
    """The fewest cycles the chip needs for the problem."""
    resource: str
    """The resource that bounds it: `cube`, `vector`, a DMA path, `gm`."""

    def to_dict(self, cycles: int, clock_ghz: float) -> dict[str, Any]:
        return {
            "cycles": round(self.cycles, 3),
            "microseconds": round(self.cycles / (clock_ghz * 1e3), 6),
            "bound_by": self.resource,
            "fraction": round(self.cycles / cycles, 6) if cycles else 0.0,
        }


@dataclass
class PipeStats:
    busy_cycles: int
    utilization: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "busy_cycles": self.busy_cycles,
            "utilization": round(self.utilization, 6),
        }


@dataclass
class MemoryStats:
    size: int
    allocated_bytes: int
    """Bytes covered by the buffers allocated in this memory (their union)."""
    high_water: int
    """One past the highest allocated byte."""

    @property
    def occupancy(self) -> float:
        return self.allocated_bytes / self.size if self.size else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "allocated_bytes": self.allocated_bytes,
            "high_water": self.high_water,
            "occupancy": round(self.occupancy, 6),
        }


@dataclass
class L2Stats:
    """GM reads through the L2 (writes are write-through and not counted)."""

    hit_bytes: int
    """Payload bytes read from resident lines."""
    miss_bytes: int
    """Payload bytes read from missed lines."""
    hbm_bytes: int
    """Bytes read from HBM to fill the missed lines (whole lines)."""

    @property
    def hit_rate(self) -> float:
        """Hit bytes / bytes read (0 when nothing was read)."""
        total = self.hit_bytes + self.miss_bytes
        return self.hit_bytes / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "hit_bytes": self.hit_bytes,
            "miss_bytes": self.miss_bytes,
            "hit_rate": round(self.hit_rate, 6),
            "hbm_bytes": self.hbm_bytes,
        }


def _l2_stats(transfers: L2Transfers, mask: np.ndarray | slice) -> L2Stats:
    return L2Stats(
        hit_bytes=int(transfers.hit_bytes[mask].sum()),
        miss_bytes=int(transfers.miss_bytes[mask].sum()),
        hbm_bytes=int(transfers.hbm_bytes[mask].sum()),
    )


@dataclass
class CoreStats:
    index: int
    cycles: int
    instructions: int
    pipes: dict[str, PipeStats]
    bytes_per_path: dict[str, int]
    gm_bytes_read: int
    gm_bytes_written: int
    memories: dict[str, MemoryStats]
    bank_conflict_cycles: int = 0
    """Cycles of this core's instructions lost to UB bank conflicts (part of the
    V pipe's busy cycles)."""
    bank_conflict_instructions: int = 0
    """This core's instructions that lost cycles to UB bank conflicts."""
    sync_wait_cycles: int = 0
    """Cycles this core spent at sync_all barriers after its pipes drained."""
    l2: L2Stats | None = None
    """This core's GM reads through the L2 (None: the target has none)."""

    def to_dict(self) -> dict[str, Any]:
        l2 = {} if self.l2 is None else {"l2": self.l2.to_dict()}
        return {
            "core": self.index,
            "cycles": self.cycles,
            "instructions": self.instructions,
            "pipes": {name: s.to_dict() for name, s in self.pipes.items()},
            "bytes_per_path": dict(self.bytes_per_path),
            "gm_bytes_read": self.gm_bytes_read,
            "gm_bytes_written": self.gm_bytes_written,
            "bank_conflict_cycles": self.bank_conflict_cycles,
            "bank_conflict_instructions": self.bank_conflict_instructions,
            "sync_wait_cycles": self.sync_wait_cycles,
            **l2,
            "memories": {name: m.to_dict() for name, m in self.memories.items()},
        }


@dataclass
class Report:
    target: str
    clock_ghz: float
    block_dim: int
    cycles: int
    instructions: int
    pipes: dict[str, PipeStats]
    """Per pipe over all cores: utilization = busy / (cycles * block_dim)."""
    cores: list[CoreStats]
    bytes_per_path: dict[str, int]
    gm_bytes_read: int
    gm_bytes_written: int
    gm_wire_bytes: int
    """GM-path bytes after rounding bursts to transaction granules."""
    gm_peak_bytes_per_cycle: float
    slices: Sequence[Slice] = field(repr=False)
    """One per instruction, in program order per core (built when first used),
    and one on S per sync_all, from the core's arrival to the release."""
    sync_alls: list[SyncAllStats] = field(default_factory=list)
    """The sync_all barriers, in order."""
    l2: L2Stats | None = None
    """GM reads through the L2, all cores (None: the target has none)."""
    l2_transfers: L2Transfers | None = field(default=None, repr=False, compare=False)
    """Per GM read, in start order: its hit, miss and HBM bytes (None: no L2)."""
    target_cores: int = 0
    """The chip's cores (`block_dim` may use fewer)."""
    roofline: RooflineBound | None = None
    """The problem's roofline, when whoever ran the kernel had its IR."""
    columns_builder: Callable[[], RecordColumns] | None = field(
        default=None, repr=False, compare=False
    )
    _columns: RecordColumns | None = field(default=None, repr=False, compare=False)

    @property
    def columns(self) -> RecordColumns:
        """Every record with its cycles as numpy columns (built on first use)."""
        if self._columns is None:
            if self.columns_builder is None:
                raise ValueError("this report has no records (built without a replay)")
            self._columns = self.columns_builder()
        return self._columns

    @property
    def roofline_fraction(self) -> float | None:
        """The share of the roofline reached: bound / simulated cycles."""
        if self.roofline is None:
            return None
        return self.roofline.cycles / self.cycles if self.cycles else 0.0

    @property
    def microseconds(self) -> float:
        return self.cycles / (self.clock_ghz * 1e3)

    @property
    def bank_conflict_cycles(self) -> int:
        """Cycles lost to UB bank conflicts, summed over the cores."""
        return sum(c.bank_conflict_cycles for c in self.cores)

    @property
    def bank_conflict_instructions(self) -> int:
        return sum(c.bank_conflict_instructions for c in self.cores)

    @property
    def gm_bandwidth_gbps(self) -> float:
        """Achieved GM bandwidth (payload bytes) in GB/s."""
        if not self.cycles:
            return 0.0
        return (
            (self.gm_bytes_read + self.gm_bytes_written) / self.cycles * self.clock_ghz
        )

    @property
    def gm_bandwidth_utilization(self) -> float:
        """Achieved GM payload bandwidth / the target's total GM bandwidth."""
        if not self.cycles:
            return 0.0
        achieved = (self.gm_bytes_read + self.gm_bytes_written) / self.cycles
        return achieved / self.gm_peak_bytes_per_cycle

    def to_dict(self) -> dict[str, Any]:
        l2 = {} if self.l2 is None else {"l2": self.l2.to_dict()}
        return {
            "target": self.target,
            "clock_ghz": self.clock_ghz,
            "block_dim": self.block_dim,
            "cycles": self.cycles,
            "microseconds": round(self.microseconds, 6),
            "instructions": self.instructions,
            "pipes": {name: s.to_dict() for name, s in self.pipes.items()},
            "bytes_per_path": dict(self.bytes_per_path),
            "gm_bytes_read": self.gm_bytes_read,
            "gm_bytes_written": self.gm_bytes_written,
            "gm_wire_bytes": self.gm_wire_bytes,
            "gm_bandwidth_gbps": round(self.gm_bandwidth_gbps, 6),
            "gm_bandwidth_utilization": round(self.gm_bandwidth_utilization, 6),
            "bank_conflict_cycles": self.bank_conflict_cycles,
            "bank_conflict_instructions": self.bank_conflict_instructions,
            **l2,
            "sync_all": [b.to_dict() for b in self.sync_alls],
            "target_cores": self.target_cores,
            "roofline": None
            if self.roofline is None
            else self.roofline.to_dict(self.cycles, self.clock_ghz),
            "cores": [c.to_dict() for c in self.cores],
        }

    def roofline_text(self) -> str:
        """`roofline: 1200 cycles (0.649 us), bound by gm->ub; reached 41.2%`."""
        bound = self.roofline
        if bound is None:
            return "roofline: - (needs the kernel's tv-level IR)"
        us = bound.cycles / (self.clock_ghz * 1e3)
        return (
            f"roofline: {bound.cycles:.0f} cycles ({us:.3f} us), bound by "
            f"{bound.resource}; this run reaches {self.roofline_fraction:.1%} of it"
        )

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_text(self) -> str:
        lines = [
            f"target {self.target}, {self.block_dim} core(s) at {self.clock_ghz} GHz: "
            f"{self.cycles} cycles = {self.microseconds:.3f} us, "
            f"{self.instructions} instructions",
            self.roofline_text(),
            "",
            f"{'pipe':<6}{'busy cycles':>14}{'utilization':>13}",
        ]
        for name, s in self.pipes.items():
            lines.append(f"{name:<6}{s.busy_cycles:>14}{s.utilization:>12.1%}")
        lines.append("")
        lines.append(
            f"GM: {self.gm_bytes_read} B read, {self.gm_bytes_written} B written, "
            f"{self.gm_bandwidth_gbps:.1f} GB/s = {self.gm_bandwidth_utilization:.1%} of peak "
            f"({self.gm_wire_bytes} B on the wire)"
        )
        if self.l2 is not None:
            lines.append(
                f"L2: {self.l2.hit_bytes} B hit, {self.l2.miss_bytes} B missed "
                f"({self.l2.hit_rate:.1%} hit rate), {self.l2.hbm_bytes} B from HBM"
            )
        if self.bytes_per_path:
            lines.append(
                "bytes per path: "
                + ", ".join(f"{p} {b}" for p, b in sorted(self.bytes_per_path.items()))
            )
        v_busy = self.pipes["V"].busy_cycles if "V" in self.pipes else 0
        share = (
            f" ({self.bank_conflict_cycles / v_busy:.1%} of V busy)" if v_busy else ""
        )
        lines.append(
            f"UB bank conflicts: {self.bank_conflict_cycles} cycles in "
            f"{self.bank_conflict_instructions} instructions{share}"
        )
        if self.sync_alls:
            waited = sum(b.wait_cycles for b in self.sync_alls)
            total = self.cycles * self.block_dim
            lines.append(
                f"sync_all: {len(self.sync_alls)} barrier(s), released at cycles "
                + ", ".join(str(b.release) for b in self.sync_alls)
                + f"; the cores waited {waited} cycles"
                + (f" ({waited / total:.1%} of core-cycles)" if total else "")
            )
        peak: dict[str, MemoryStats] = {}
        for core in self.cores:
            for name, m in core.memories.items():
                if name not in peak or m.allocated_bytes > peak[name].allocated_bytes:
                    peak[name] = m
        lines.append(
            "peak occupancy: "
            + ", ".join(
                f"{name} {m.allocated_bytes}/{m.size} B ({m.occupancy:.0%})"
                for name, m in peak.items()
            )
        )
        if self.block_dim > 1:
            lines.append("")
            l2_head = "" if self.l2 is None else f"{'L2 hit':>8}"
            lines.append(
                f"{'core':<6}{'cycles':>10}  "
                + "".join(f"{p:>7}" for p in PIPE_ORDER)
                + f"{'bank conflict cycles':>22}"
                + l2_head
            )
            for core in self.cores:
                utils = "".join(
                    f"{core.pipes[p].utilization:>7.0%}" for p in PIPE_ORDER
                )
                l2_rate = "" if core.l2 is None else f"{core.l2.hit_rate:>8.0%}"
                lines.append(
                    f"{core.index:<6}{core.cycles:>10}  {utils}"
                    f"{core.bank_conflict_cycles:>22}{l2_rate}"
                )
        return "\n".join(lines)


def _union_bytes(intervals: list[tuple[int, int]]) -> int:
    total = 0
    last = -1
    for lo, hi in sorted(intervals):
        lo = max(lo, last)
        if hi > lo:
            total += hi - lo
            last = hi
    return total


class SliceList(Sequence[Slice]):
    """The report's slices, built on first use: a long run has one per instruction,
    and most callers only want the totals."""

    def __init__(self, build: Callable[[], list[Slice]]):
        self._build: Callable[[], list[Slice]] | None = build
        self._slices: list[Slice] = []

    def _list(self) -> list[Slice]:
        if self._build is not None:
            self._slices = self._build()
            self._build = None
        return self._slices

    def __len__(self) -> int:
        return len(self._list())

    @overload
    def __getitem__(self, index: int) -> Slice: ...
    @overload
    def __getitem__(self, index: slice) -> list[Slice]: ...
    def __getitem__(self, index: int | slice) -> Slice | list[Slice]:
        return self._list()[index]

    def __iter__(self) -> Iterator[Slice]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SliceList):
            other = other._list()
        return self._list() == other

    def __repr__(self) -> str:
        return repr(self._list())


def _slices(machine: RecordedRun, replay: _Times) -> list[Slice]:
    slices: list[Slice] = []
    instr, sync_all = RecordKind.INSTR, RecordKind.SYNC_ALL
    for st in replay.cores:
        start, end = st.start, st.end
        for j, rec in enumerate(st.recs):
            kind = rec.kind
            if kind != instr and kind != sync_all:
                continue
            slices.append(
                Slice(
                    st.index,
                    PIPE_ORDER[rec.pipe] if kind == instr else "S",
                    rec.name,
                    rec.loc,
                    start[j],
                    end[j],
                    rec.nbytes,
                )
            )
    return slices


def _sync_alls(machine: RecordedRun, replay: _Times) -> list[SyncAllStats]:
    """The barriers from each core's sync_all records (all cores have as many)."""
    times = [
        [(st.start[j], st.end[j]) for j in core.syncs]
        for st, core in zip(replay.cores, machine.cores, strict=True)
    ]
    first = machine.cores[0]
    return [
        SyncAllStats(
            first.records[j].loc,
            [core[k][0] for core in times],
            max(core[k][1] for core in times),
        )
        for k, j in enumerate(first.syncs)
    ]


def build_report(
    machine: RecordedRun, replay: _Times, table: AccessTable | None = None
) -> Report:
    """The report of a finished replay (`table`: the machine's accesses, if built)."""
    if table is None:
        table = AccessTable(machine)
    target = machine.target
    rec_core = table.rec_core
    nbytes = table.rec_nbytes
    # Path of each instruction as an index into `path_names` (-1: none).
    path_code, path_names = table.rec_path, table.paths
    on_gm = table.gm
    access_core = rec_core[table.rec]
    gm_read = np.zeros(machine.block_dim, np.int64)
    gm_written = np.zeros(machine.block_dim, np.int64)
    gm_rows = np.flatnonzero(on_gm)
    gm_bytes = table.length[gm_rows] * table.count[gm_rows]
    written = table.write[gm_rows]
    np.add.at(gm_read, access_core[gm_rows[~written]], gm_bytes[~written])
    np.add.at(gm_written, access_core[gm_rows[written]], gm_bytes[written])
    cores: list[CoreStats] = []
    total_paths: dict[str, int] = {}
    sync_alls = _sync_alls(machine, replay)
    transfers = None if replay.l2 is None else replay.l2.transfers()
    for st, core in zip(replay.cores, machine.cores, strict=True):
        mine = rec_core == st.index
        with_path = np.flatnonzero(mine & (path_code >= 0))
        codes = path_code[with_path]
        paths: dict[str, int] = {}
        if codes.size:
            used, first = np.unique(codes, return_index=True)
            for code in used[np.argsort(first)].tolist():
                paths[path_names[code]] = int(nbytes[with_path[codes == code]].sum())
        core_cycles = max([*st.end, *st.free], default=0)
        memories = {
            name: MemoryStats(
                size=target.memories[name].size or 0,
                allocated_bytes=_union_bytes(allocs),
                high_water=max((hi for _, hi in allocs), default=0),
            )
            for name, allocs in core.allocs.items()
        }
        cores.append(
            CoreStats(
                index=st.index,
                cycles=core_cycles,
                instructions=int(np.count_nonzero(mine)),
                pipes={},
                bytes_per_path=paths,
                gm_bytes_read=int(gm_read[st.index]),
                gm_bytes_written=int(gm_written[st.index]),
                memories=memories,
                bank_conflict_cycles=core.bank_conflict_cycles,
                bank_conflict_instructions=core.bank_conflict_instructions,
                sync_wait_cycles=sum(b.release - b.arrive[st.index] for b in sync_alls),
                l2=None
                if transfers is None
                else _l2_stats(transfers, transfers.core == st.index),
            )
        )
        for name, b in paths.items():
            total_paths[name] = total_paths.get(name, 0) + b
    cycles = max((c.cycles for c in cores), default=0)
    pipes: dict[str, PipeStats] = {}
    for p, name in enumerate(PIPE_ORDER):
        busy_total = 0
        for st, stats in zip(replay.cores, cores, strict=True):
            busy = st.busy[p]
            busy_total += busy
            stats.pipes[name] = PipeStats(busy, busy / cycles if cycles else 0.0)
        denom = cycles * machine.block_dim
        pipes[name] = PipeStats(busy_total, busy_total / denom if denom else 0.0)
    return Report(
        target=target.name,
        clock_ghz=target.clock_ghz,
        block_dim=machine.block_dim,
        cycles=cycles,
        instructions=sum(c.instructions for c in cores),
        pipes=pipes,
        cores=cores,
        bytes_per_path=total_paths,
        gm_bytes_read=sum(c.gm_bytes_read for c in cores),
        gm_bytes_written=sum(c.gm_bytes_written for c in cores),
        gm_wire_bytes=replay.gm_wire_bytes,
        gm_peak_bytes_per_cycle=target.gm_bytes_per_cycle,
        slices=SliceList(lambda: _slices(machine, replay)),
        sync_alls=sync_alls,
        l2=None if transfers is None else _l2_stats(transfers, slice(None)),
        l2_transfers=transfers,
        target_cores=target.cores,
        columns_builder=lambda: record_columns(machine, replay),
    )
