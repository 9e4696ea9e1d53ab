"""The L2 cache shared by all cores: which GM bytes are resident, and what a GM
transfer costs when some of them are.

One job: residency. The replay (timing.py) calls `L2Cache.transfer` for every
GM transfer in the global order of their start times, so the L2 state is that of
one chip whose cores share it. The model (docs/simulator.md, "L2 cache"):

- GM is one address space of lines of `spec.line` bytes; each GM tensor starts
  on a line of its own (tensors are allocated line-aligned).
- Fully associative LRU over `spec.lines` lines: a line is resident iff fewer
  than `spec.lines` distinct lines were touched since its last access. A
  transfer's lines are looked up when it starts and are then the most recent, in
  address order. A later transfer that hits a line still being filled waits
  for its data: its first bytes come no earlier than the fill's (PyPTO merges
  such requests into the miss in flight, CacheMachine::AddMSHR).
- A read's missed lines are filled from HBM; a write is write-through (it costs
  what it costs without an L2) and, when `spec.write_allocate`, makes its lines
  the most recent.

The LRU test needs, per line, how many distinct lines were touched after it.
Each transfer is a batch with a number; every line remembers the batch and the
position in it of its last access. A Fenwick tree over batches counts the lines
whose last access is in each, so "lines touched after batch q" is one prefix
sum, and a bool array per batch says which of its positions are still some
line's last access (the order inside the batch). A transfer costs
O(previous batches of its lines * log batches) Python steps plus numpy work on
its lines: no loop over lines.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass

import numpy as np

from pypto_mlir.sim.access import Access, GmTensor
from pypto_mlir.sim.records import Record
from pypto_mlir.targets import L2Spec

__all__ = ["L2Cache", "L2Transfers", "l2_read_cycles"]


@dataclass(frozen=True)
class L2Transfers:
    """Per GM read the L2 saw, in the order it saw them (numpy arrays, one entry
    each): for the report's totals and the trace's counters."""

    gid: np.ndarray
    core: np.ndarray
    start: np.ndarray
    """Cycle the transfer started (when its lines were looked up)."""
    cycles: np.ndarray
    """Its cycles before HBM sharing (`L2Cache.transfer`)."""
    hit_bytes: np.ndarray
    """Payload bytes in resident lines."""
    miss_bytes: np.ndarray
    """Payload bytes in missed lines."""
    hbm_bytes: np.ndarray
    """Bytes filled from HBM: the missed lines, whole."""


def l2_read_cycles(
    spec: L2Spec, rec: Record, hit_wire: int, miss_wire: int, latency: int
) -> int:
    """Cycles of GM read `rec` before HBM sharing, when `hit_wire` of its wire
    bytes come from L2 and `miss_wire` from HBM, and its first bytes arrive
    `latency` cycles after it starts.

    `rec.cycles` is the path's cost with every byte from HBM (`cost.dma_cost`):
    latency + bursts * burst_overhead + ceil(wire / bandwidth). The hit bytes move
    at min(path, L2 read bandwidth), the missed ones at the path's.
    """
    path = rec.path
    assert path is not None
    delta = latency - path.latency
    bandwidth = path.bytes_per_cycle
    hit_bandwidth = min(bandwidth, spec.read_bytes_per_cycle)
    if hit_bandwidth < bandwidth:
        wire = hit_wire + miss_wire
        delta += math.ceil(hit_wire / hit_bandwidth + miss_wire / bandwidth)
        delta -= math.ceil(wire / bandwidth)
    return rec.cycles + delta


class L2Cache:
    """LRU residency of GM lines in the L2 of `spec`, advanced transfer by
    transfer in start-time order (see the module docstring)."""

    def __init__(self, spec: L2Spec):
        self.spec = spec
        self.line = spec.line
        self.capacity = spec.lines
        # First line of each GM tensor (by id), assigned on first access.
        self.base: dict[int, int] = {}
        # (start % line, length, count, stride) -> `_regular_lines` of that shape.
        self._shapes: dict[
            tuple[int, int, int, int], tuple[np.ndarray, np.ndarray] | None
        ] = {}
        self.lines_used = 0
        # Per line: the batch and the position in it of its last access (-1: never).
        self.last_batch = np.full(0, -1, np.int64)
        self.last_pos = np.zeros(0, np.int64)
        # Per line: the cycle its data is in the L2 (its fill's first bytes arrive).
        self.ready = np.zeros(0, np.int64)
        # Per batch: which positions are still a line's last access (None once
        # every line of the batch moved on or was evicted: no longer needed).
        self.alive: list[np.ndarray | None] = []
        self.counts: list[int] = []
        self.tree: list[int] = [0]  # Fenwick tree over batches, 1-based
        self.distinct = 0
        """Lines ever touched (each has one last access): the tree's total."""
        # The log of GM reads (8 bytes an entry: a long run has many).
        self._gid = array("q")
        self._core = array("q")
        self._start = array("q")
        self._cycles = array("q")
        self._hit = array("q")
        self._miss = array("q")
        self._hbm = array("q")

    # --- the replay's entry point --------------------------------------------------------
    def transfer(self, rec: Record, t: int) -> tuple[int, int]:
        """(cycles before HBM sharing, wire bytes that use HBM) of GM transfer
        `rec` starting at cycle `t`; advances the L2 state."""
        path = rec.path
        assert path is not None
        wire = rec.wire_bytes
        arrival = t + path.latency
        if path.src != "gm":
            if self.spec.write_allocate:
                lines, _ = self._lines_of(
                    [a for a in rec.writes if type(a.mem) is not str]
                )
                if lines.size:
                    self._touch(lines)
                    self.ready[lines] = arrival
            return rec.cycles, wire
        lines, nbytes = self._lines_of([a for a in rec.reads if type(a.mem) is not str])
        if not lines.size:
            return rec.cycles, wire
        hit = self._touch(lines)
        hits = int(np.count_nonzero(hit))
        total_bytes = int(nbytes.sum())
        if hits == lines.size:
            hit_bytes, missed = total_bytes, lines[:0]
            hit_lines = lines
        elif hits:
            hit_bytes, missed = int(nbytes[hit].sum()), lines[~hit]
            hit_lines = lines[hit]
        else:
            hit_bytes, missed, hit_lines = 0, lines, lines[:0]
        hbm_bytes = missed.size * self.line
        # A hit on a line still being filled waits for its data.
        latency = path.latency if missed.size else self.spec.hit_latency
        if hit_bytes:
            latency = max(latency, int(self.ready[hit_lines].max()) - t)
        self.ready[missed] = arrival
        self._gid.append(rec.gid)
        self._core.append(rec.core)
        self._start.append(t)
        self._hit.append(hit_bytes)
        self._miss.append(total_bytes - hit_bytes)
        self._hbm.append(hbm_bytes)
        if not hit_bytes:
            self._cycles.append(rec.cycles)
            return rec.cycles, wire
        miss_wire = min(wire, hbm_bytes)
        cycles = l2_read_cycles(self.spec, rec, wire - miss_wire, miss_wire, latency)
        self._cycles.append(cycles)
        return cycles, miss_wire

    def transfers(self) -> L2Transfers:
        """Every GM read so far, as arrays."""

        def copy(values: array) -> np.ndarray:
            return np.frombuffer(values, np.int64).copy()

        return L2Transfers(
            gid=copy(self._gid),
            core=copy(self._core),
            start=copy(self._start),
            cycles=copy(self._cycles),
            hit_bytes=copy(self._hit),
            miss_bytes=copy(self._miss),
            hbm_bytes=copy(self._hbm),
        )

    # --- lines -------------------------------------------------------------------------
    def _lines_of(self, accesses: list[Access]) -> tuple[np.ndarray, np.ndarray]:
        """The distinct lines `accesses` touch, ascending (= access order: bursts
        go up in address), and the payload bytes of each."""
        parts = [self._burst_lines(a) for a in accesses if a.length]
        if len(parts) == 1 and parts[0][2]:
            return parts[0][0], parts[0][1]
        if not parts:
            empty = np.zeros(0, np.int64)
            return empty, empty
        lines, inverse = np.unique(
            np.concatenate([p[0] for p in parts]), return_inverse=True
        )
        nbytes = np.zeros(lines.size, np.int64)
        np.add.at(nbytes, inverse, np.concatenate([p[1] for p in parts]))
        return lines, nbytes

    def _burst_lines(self, a: Access) -> tuple[np.ndarray, np.ndarray, bool]:
        """The lines each burst of `a` touches, burst after burst, the payload
        bytes of each, and whether no line is touched twice (then the lines
        are ascending and distinct)."""
        assert isinstance(a.mem, GmTensor)
        size = self.line
        base = self._base_of(a.mem)
        offset = a.start % size
        shape = (offset, a.length, a.count, a.stride)
        regular = self._shapes.get(shape)
        if regular is None:
            regular = self._shapes[shape] = self._regular_lines(a)
        if regular:
            lines, nbytes = regular
            return lines + (a.start // size + base), nbytes, True
        starts = a.start + a.stride * np.arange(a.count, dtype=np.int64)
        ends = starts + a.length
        first = starts // size
        spans = (ends - 1) // size - first + 1
        total = int(spans.sum())
        offsets = np.arange(total, dtype=np.int64) - np.repeat(
            np.cumsum(spans) - spans, spans
        )
        line = np.repeat(first, spans) + offsets
        lo = np.maximum(np.repeat(starts, spans), line * size)
        hi = np.minimum(np.repeat(ends, spans), (line + 1) * size)
        return line + base, hi - lo, False

    def _regular_lines(self, a: Access) -> tuple[np.ndarray, np.ndarray] | None:
        """When every burst of `a` covers its lines as the first does and no
        two share one (one burst, or a stride of whole lines): its lines
        relative to the first one's and the payload bytes of each (kept per
        shape: a kernel moves tiles of few shapes). None otherwise."""
        size = self.line
        offset = a.start % size
        span = (offset + a.length - 1) // size + 1  # lines of the first burst
        step = a.stride // size
        if a.count > 1 and (a.stride % size or step < span):
            return None
        first = np.arange(span, dtype=np.int64)
        nbytes = np.minimum(offset + a.length, (first + 1) * size) - np.maximum(
            offset, first * size
        )
        if a.count == 1:
            return first, nbytes
        bursts = step * np.arange(a.count, dtype=np.int64)
        return (bursts[:, None] + first).reshape(-1), np.tile(nbytes, a.count)

    def _base_of(self, tensor: GmTensor) -> int:
        base = self.base.get(id(tensor))
        if base is None:
            base = self.base[id(tensor)] = self.lines_used
            self.lines_used += max(1, -(-tensor.nbytes // self.line))
            grow = self.lines_used - self.last_batch.size
            if grow > 0:
                self.last_batch = np.concatenate(
                    (self.last_batch, np.full(grow, -1, np.int64))
                )
                self.last_pos = np.concatenate(
                    (self.last_pos, np.zeros(grow, np.int64))
                )
                self.ready = np.concatenate((self.ready, np.zeros(grow, np.int64)))
        return base

    # --- LRU ---------------------------------------------------------------------------
    def _touch(self, lines: np.ndarray) -> np.ndarray:
        """Per line: whether it was in the L2; then `lines` become the most
        recent, in their order, as one new batch."""
        hit = np.zeros(lines.size, bool)
        prev = self.last_batch[lines]
        seen = np.flatnonzero(prev >= 0)
        groups: list[tuple[int, np.ndarray]] = []
        if seen.size:
            known = prev[seen]
            low = int(known.min())
            if low == int(known.max()):
                groups = [(low, seen)]
            else:
                order = seen[np.argsort(known, kind="stable")]
                batches, first = np.unique(prev[order], return_index=True)
                bounds = [*first.tolist(), order.size]
                groups = [
                    (q, order[bounds[i] : bounds[i + 1]])
                    for i, q in enumerate(batches.tolist())
                ]
        capacity = self.capacity
        for q, members in groups:  # the lookups, all before any update
            alive = self.alive[q]
            if alive is None:
                continue  # evicted long ago
            newer = self.distinct - self._prefix(q)
            if newer >= capacity:
                self.alive[q] = None  # every line of q is out, and stays out
                continue
            if newer + self.counts[q] <= capacity:
                hit[members] = True
                continue
            # Lines of q touched after each position (inclusive cumsum counts itself).
            after = self.counts[q] - np.cumsum(alive)[self.last_pos[lines[members]]]
            hit[members] = newer + after < capacity
        for q, members in groups:
            alive = self.alive[q]
            if alive is not None:
                alive[self.last_pos[lines[members]]] = False
            self.counts[q] -= members.size
            self._add(q, -members.size)
            if not self.counts[q]:
                self.alive[q] = None
        batch = len(self.counts)
        k = lines.size
        self.distinct += k - seen.size
        self.last_batch[lines] = batch
        self.last_pos[lines] = np.arange(k, dtype=np.int64)
        if batch + 1 >= len(self.tree):
            self._grow()
        self.alive.append(np.ones(k, bool))
        self.counts.append(k)
        self._add(batch, k)
        return hit

    # --- the Fenwick tree over batches -------------------------------------------------------
    def _add(self, batch: int, delta: int) -> None:
        tree = self.tree
        i = batch + 1
        n = len(tree)
        while i < n:
            tree[i] += delta
            i += i & -i

    def _prefix(self, batch: int) -> int:
        """Lines whose last access is in batches 0..batch."""
        tree = self.tree
        i = batch + 1
        total = 0
        while i:
            total += tree[i]
            i &= i - 1
        return total

    def _grow(self) -> None:
        """Double the tree, rebuilt from the per-batch counts in linear time."""
        n = 2 * len(self.tree)
        tree = [0] * n
        for b, count in enumerate(self.counts):
            tree[b + 1] += count
        for i in range(1, n):
            parent = i + (i & -i)
            if parent < n:
                tree[parent] += tree[i]
        self.tree = tree
