"""Where a run's time goes, per source line, and what to do about it.

Every record carries the location of the op that issued it (for a Python kernel,
the `file:line` of the user's code, which the frontend puts on the `tv` ops and the
passes keep). `profile(report)` groups the run's records by source line (the
location without its column) and gives each line its pipe-cycles (busy cycles of
its instructions, summed over pipes and cores), its busiest pipe, the cycles pipes
sat blocked at its `wait_flag`s, its DMA bytes (payload and on the wire) and the
cores that ran it. It also computes hints from the run (`Hint`): cores left idle,
pipes that wait on another pipe (and the buffer the flag guards), DMA bursts that
waste wire bytes. All of it is whole-array numpy over `Report.columns`; only the
few rows a hint describes are looked at one by one. profile_text.py renders it.

A wait's blocked time is the gap between the end of the previous record of its
pipe (or the core's last `barrier("all")` / `sync_all`) and the wait's release,
counted only when the wait was released by its set (the set fired at or after
the pipe reached the wait): time the pipe sat idle for that flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pypto_mlir.sim.access import NUM_PIPES, Access, Pipe
from pypto_mlir.sim.columns import RecordColumns, flag_pairs, short_line
from pypto_mlir.sim.records import RecordKind
from pypto_mlir.sim.report import PIPE_ORDER, Report

__all__ = ["Hint", "LineStats", "Profile", "blocked_waits", "profile"]

HINT_SHARE = 0.05
"""A wait or a line below this share of the run's core-cycles gets no hint."""
WASTE_SHARE = 0.10
"""DMA lines wasting less than this share of their wire bytes get no hint."""
MAX_WAIT_HINTS = 3
BOTTLENECK = 0.8
"""A pipe busy this share of the run is called the bottleneck in wait hints."""


@dataclass(frozen=True)
class LineStats:
    """What one source line's records did over the whole run."""

    line: str
    """`file:line` (the records' location without its column)."""
    instructions: int
    cycles: int
    """Busy cycles of the line's instructions, summed over pipes and cores."""
    pipe_cycles: dict[str, int]
    """Busy cycles per pipe (the pipes the line uses)."""
    wait_cycles: int
    """Cycles pipes sat blocked at the line's wait_flags, over all cores."""
    dma_bytes: int
    """Payload bytes of the line's DMA transfers."""
    wire_bytes: int
    """The same transfers' bytes after rounding bursts to whole granules."""
    cores: int
    """Cores that executed some instruction of the line."""

    @property
    def pipe(self) -> str:
        """The pipe the line keeps busiest ('' when it has no instruction)."""
        if not self.pipe_cycles:
            return ""
        return max(self.pipe_cycles.items(), key=lambda item: item[1])[0]

    @property
    def wire_efficiency(self) -> float | None:
        """Payload / wire bytes of the line's DMA (None without DMA)."""
        return self.dma_bytes / self.wire_bytes if self.wire_bytes else None


@dataclass(frozen=True)
class Hint:
    """Something the run shows that a kernel author can act on."""

    kind: str
    """`cores`, `wait` or `dma`."""
    line: str
    """The source line it is about ('' for the whole kernel)."""
    text: str
    cycles: int = 0
    """The cycles at stake (for ordering): idle core-cycles, blocked cycles, or
    the cycles of wasted wire bytes."""


@dataclass
class Profile:
    report: Report
    lines: list[LineStats]
    """Most pipe-cycles first (ties by line)."""
    hints: list[Hint] = field(default_factory=list[Hint])

    @property
    def cycles(self) -> int:
        """Pipe-cycles of all lines."""
        return sum(line.cycles for line in self.lines)


def _segmented_previous_max(
    group: np.ndarray, values: np.ndarray, floor: int = 0
) -> np.ndarray:
    """For rows sorted by `group`: the max of `values` over the earlier rows of
    the same group (`floor` for a group's first row). Values must be >= floor."""
    n = len(values)
    if not n:
        return values.copy()
    big = int(values.max(initial=floor)) - floor + 1
    shifted = group.astype(np.int64) * big + (values - floor)
    running = np.maximum.accumulate(shifted)
    previous = np.empty(n, np.int64)
    previous[0] = -1
    previous[1:] = running[:-1]
    first = np.ones(n, bool)
    first[1:] = group[1:] != group[:-1]
    previous[first] = group[first] * big  # no earlier row: the floor
    return previous - group.astype(np.int64) * big + floor


def blocked_waits(columns: RecordColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(wait rows, their matching set rows, cycles each wait's pipe sat blocked)."""
    c = columns
    n = len(c)
    # Rows in (core, queue pipe, program order): the max end of the earlier rows.
    order = np.lexsort((c.position, c.queue, c.core))
    group = (c.core * (NUM_PIPES + 1) + c.queue)[order]
    prev_pipe = np.empty(n, np.int64)
    prev_pipe[order] = _segmented_previous_max(group, c.end[order])
    # The core's last barrier("all") or sync_all before each row holds every pipe.
    holds_all = (c.kind == RecordKind.SYNC_ALL) | (
        (c.kind == RecordKind.BARRIER) & (c.pipe == int(Pipe.ALL))
    )
    by_core = np.lexsort((c.position, c.core))
    prev_all = np.empty(n, np.int64)
    prev_all[by_core] = _segmented_previous_max(
        c.core[by_core], np.where(holds_all, c.end, 0)[by_core]
    )
    sets, waits = flag_pairs(c)
    ready = np.maximum(prev_pipe[waits], prev_all[waits])
    released_by_set = c.end[sets] >= c.end[waits]
    blocked = np.where(released_by_set, np.maximum(c.end[waits] - ready, 0), 0)
    return waits, sets, blocked


def _bincount(codes: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(codes, weights=weights, minlength=size).astype(np.int64)


def profile(report: Report) -> Profile:
    """The per-line profile of a replayed run, with its hints."""
    c = report.columns
    n_lines = len(c.lines)
    instr = np.flatnonzero(c.kind == RecordKind.INSTR)
    duration = (c.end - c.start)[instr]
    line = c.line[instr]
    busy = _bincount(
        line * NUM_PIPES + c.pipe[instr], duration, n_lines * NUM_PIPES
    ).reshape(n_lines, NUM_PIPES)
    count = np.bincount(line, minlength=n_lines)
    dma = instr[c.path[instr] >= 0]
    dma_bytes = _bincount(c.line[dma], c.nbytes[dma], n_lines)
    wire = _bincount(c.line[dma], c.wire_bytes[dma], n_lines)
    cores_per_line = np.bincount(
        np.unique(line * (int(c.core.max(initial=0)) + 1) + c.core[instr])
        // (int(c.core.max(initial=0)) + 1),
        minlength=n_lines,
    )
    waits, sets, blocked = blocked_waits(c)
    waited = _bincount(c.line[waits], blocked, n_lines)
    stats = []
    for code, name in enumerate(c.lines):
        if not count[code] and not waited[code]:
            continue
        pipes = {
            PIPE_ORDER[p]: int(busy[code, p]) for p in range(NUM_PIPES) if busy[code, p]
        }
        stats.append(
            LineStats(
                line=name,
                instructions=int(count[code]),
                cycles=int(busy[code].sum()),
                pipe_cycles=pipes,
                wait_cycles=int(waited[code]),
                dma_bytes=int(dma_bytes[code]),
                wire_bytes=int(wire[code]),
                cores=int(cores_per_line[code]),
            )
        )
    stats.sort(key=lambda s: (-s.cycles, -s.wait_cycles, s.line))
    hints = [
        *_core_hints(report, c, stats),
        *_wait_hints(report, c, waits, sets, blocked),
        *_dma_hints(report, c, stats),
    ]
    return Profile(report, stats, hints)


# --- hints ---------------------------------------------------------------------------


def _core_hints(report: Report, c: RecordColumns, lines: list[LineStats]) -> list[Hint]:
    """Cores the run leaves idle: the kernel's, a phase's (between sync_alls) and
    a line's that runs on fewer cores than the kernel."""
    hints: list[Hint] = []
    chip = report.target_cores or report.block_dim
    core_cycles = report.cycles * chip
    if report.block_dim < chip:
        idle = (chip - report.block_dim) * report.cycles
        hints.append(
            Hint(
                "cores",
                "",
                f"the kernel runs on {report.block_dim} of {chip} cores: "
                f"{chip - report.block_dim} stay idle for all {report.cycles} cycles "
                "(more blocks would use them)",
                idle,
            )
        )
    working = (c.kind == RecordKind.INSTR) & (c.pipe != int(Pipe.S))
    if report.sync_alls:
        order = np.lexsort((c.position, c.core))
        epoch = np.empty(len(c), np.int64)
        epoch[order] = _segmented_count(
            c.core[order], c.kind[order] == RecordKind.SYNC_ALL
        )
        n_epochs = len(report.sync_alls) + 1
        stride = n_epochs
        pairs = np.unique(c.core[working] * stride + epoch[working])
        cores_in = np.bincount(pairs % stride, minlength=n_epochs)
        for e in range(n_epochs):
            if 0 < cores_in[e] < report.block_dim:
                begin = report.sync_alls[e - 1].release if e else 0
                end = (
                    report.sync_alls[e].release
                    if e < len(report.sync_alls)
                    else report.cycles
                )
                after = (
                    f"after the sync_all at {report.sync_alls[e - 1].loc}"
                    if e
                    else "before the first sync_all"
                )
                hints.append(
                    Hint(
                        "cores",
                        report.sync_alls[e - 1].loc if e else "",
                        f"phase {e} ({after}, cycles {begin}-{end}) runs on "
                        f"{cores_in[e]} of {chip} cores",
                        (chip - int(cores_in[e])) * (end - begin),
                    )
                )
    for stats in lines:
        if stats.cores and stats.cores < report.block_dim and core_cycles:
            busiest = stats.pipe_cycles.get(stats.pipe, 0)
            if busiest / max(report.cycles * stats.cores, 1) >= HINT_SHARE:
                hints.append(
                    Hint(
                        "cores",
                        stats.line,
                        f"{short_line(stats.line)} runs on {stats.cores} of {chip} cores "
                        f"({stats.pipe} busy {busiest} cycles there)",
                        busiest,
                    )
                )
    return hints


def _segmented_count(group: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """For rows sorted by `group`: how many earlier rows of the group are marked."""
    counts = np.cumsum(marks) - marks
    first = np.ones(len(group), bool)
    first[1:] = group[1:] != group[:-1]
    base = np.maximum.accumulate(np.where(first, np.arange(len(group)), 0))
    return counts - counts[base]


def _wait_hints(
    report: Report,
    c: RecordColumns,
    waits: np.ndarray,
    sets: np.ndarray,
    blocked: np.ndarray,
) -> list[Hint]:
    """The (waiting pipe, setting pipe, line) groups that block longest."""
    if not len(waits) or not report.cycles:
        return []
    group = (c.line[waits] * NUM_PIPES + c.dst[waits]) * NUM_PIPES + c.src[waits]
    keys, inverse = np.unique(group, return_inverse=True)
    totals = np.bincount(inverse, weights=blocked).astype(np.int64)
    core_cycles = report.cycles * report.block_dim
    # Blocked cycles per (waiting pipe, setting pipe): to say when the pipe
    # waited for is itself waiting.
    pair = np.zeros((NUM_PIPES, NUM_PIPES), np.int64)
    np.add.at(pair, (c.dst[waits], c.src[waits]), blocked)
    hints: list[Hint] = []
    for k in sorted(range(len(keys)), key=lambda k: (-totals[k], keys[k]))[
        :MAX_WAIT_HINTS
    ]:
        total = int(totals[k])
        if total < HINT_SHARE * core_cycles:
            break
        members = np.flatnonzero(inverse == k)
        worst = members[np.argmax(blocked[members])]
        wait, set_row = int(waits[worst]), int(sets[worst])
        dst, src = PIPE_ORDER[int(c.dst[wait])], PIPE_ORDER[int(c.src[wait])]
        line = short_line(c.lines[int(c.line[wait])])
        share = total / core_cycles
        buffer, writes = _guarded_buffer(c, wait, set_row)
        head = f"{dst} waits for {src} {total} cycles ({share:.0%} of {dst}'s time) at {line}"
        if buffer is None:
            text = f"{head}: {src} is the bottleneck there"
        elif writes:
            text = (
                f"{head} before it overwrites {buffer}: add a stage (another "
                f"buffer) so {dst} fills the next one while {src} works on this one"
            )
        else:
            util = report.pipes[src].utilization if src in report.pipes else 0.0
            upstream = int(np.argmax(pair[int(c.src[wait])]))
            waiting = int(pair[int(c.src[wait]), upstream])
            if util >= BOTTLENECK:
                cause = f"{src} is the bottleneck"
            elif waiting >= HINT_SHARE * core_cycles:
                cause = (
                    f"{src} itself waits for {PIPE_ORDER[upstream]} "
                    f"{waiting / core_cycles:.0%} of its time"
                )
            else:
                cause = f"speed up {src}'s work or give it more in flight"
            text = (
                f"{head} for the data in {buffer}: {src} produces it too late "
                f"({src} busy {util:.0%} of the run); {cause}"
            )
        hints.append(Hint("wait", line, text, total))
    return hints


def _describe_access(access: Access) -> str:
    return f"{access.mem}[{access.start}, {access.end})"


def _overlap(a: Access, b: Access) -> bool:
    return a.mem == b.mem and a.start < b.end and b.start < a.end


def _guarded_buffer(
    c: RecordColumns, wait: int, set_row: int
) -> tuple[str | None, bool]:
    """The on-chip buffer a flag protects: the access of the first instruction
    after the wait on its pipe that overlaps an access of the last instruction
    before the set on the setting pipe; (description, whether the waiter writes)."""
    core, queue = c.core[wait], c.queue[wait]
    after = np.flatnonzero(
        (c.core == core)
        & (c.queue == queue)
        & (c.kind == RecordKind.INSTR)
        & (c.position > c.position[wait])
    )
    before = np.flatnonzero(
        (c.core == core)
        & (c.queue == c.queue[set_row])
        & (c.kind == RecordKind.INSTR)
        & (c.position < c.position[set_row])
    )
    if not len(after):
        return None, False
    guarded = c.on_chip_accesses(int(after[np.argmin(c.position[after])]))
    if not guarded:
        return None, False
    producer = (
        c.on_chip_accesses(int(before[np.argmax(c.position[before])]))
        if len(before)
        else []
    )
    for access, write in guarded:
        if any(_overlap(access, other) for other, _ in producer):
            return _describe_access(access), write
    access, write = guarded[0]
    return _describe_access(access), write


def _dma_hints(report: Report, c: RecordColumns, lines: list[LineStats]) -> list[Hint]:
    """Lines whose DMA bursts waste wire bytes (bursts not whole granules)."""
    total_wire = sum(s.wire_bytes for s in lines)
    hints: list[Hint] = []
    for stats in lines:
        if not stats.wire_bytes or stats.wire_bytes < 0.01 * total_wire:
            continue
        waste = 1 - stats.dma_bytes / stats.wire_bytes
        if waste < WASTE_SHARE:
            continue
        code = c.lines.index(stats.line)
        rows = np.flatnonzero((c.line == code) & (c.path >= 0))
        # The line's largest waste decides the burst shown.
        row = int(rows[np.argmax(c.wire_bytes[rows] - c.nbytes[rows])])
        rec = c.record(row)
        bursts = [a for a in (*rec.reads, *rec.writes) if a.length]
        burst = min(bursts, key=lambda a: a.length) if bursts else None
        granule = rec.path.granule if rec.path is not None else 0
        where = short_line(stats.line)
        shape = (
            f"DMA bursts of {burst.length} B ({burst.count} per transfer)"
            if burst is not None
            else "DMA transfers"
        )
        wasted = stats.wire_bytes - stats.dma_bytes
        bandwidth = rec.path.bytes_per_cycle if rec.path is not None else 1.0
        hints.append(
            Hint(
                "dma",
                stats.line,
                f"{shape} at {where}: {waste:.0%} of the {stats.wire_bytes} wire "
                f"bytes wasted ({rec.path.src}->{rec.path.dst} moves whole "
                f"{granule} B granules); make the bursts longer or granule-aligned"
                if rec.path is not None
                else f"{shape} at {where}: {waste:.0%} of the wire bytes wasted",
                int(wasted / bandwidth),
            )
        )
    return hints
