"""Cycle costs of AI Core instructions; every number comes from the Target.

The formulas (and their sources) are documented in docs/simulator.md ("Cost model").
Beside the targets, not in sim/: the passes price their choices with the same
formulas (tiling, memory planning, DMA coalescing) as the simulator charges.
No instruction falls back to a default cost: the loader rejects a target that
does not price every vector instruction (`VECTOR_COST_KEYS`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pypto_mlir.targets import VECTOR_COST_KEYS, BankLayout, DmaPath, Target

__all__ = [
    "DmaCost",
    "bank_access_cycles",
    "bank_conflict_cycles",
    "dma_cost",
    "dma_cycles",
    "dtype_key",
    "mmad_cycles",
    "scalar_cycles",
    "vector_cost_key",
    "vector_cycles",
    "vector_head_cycles",
    "vector_repeats",
]

_DTYPE_KEYS = {
    "float16": "f16",
    "f16": "f16",
    "fp16": "f16",
    "half": "f16",
    "bfloat16": "bf16",
    "bf16": "bf16",
    "float32": "f32",
    "f32": "f32",
    "fp32": "f32",
    "int8": "i8",
    "i8": "i8",
    "uint8": "i8",
    "int16": "i16",
    "i16": "i16",
    "int32": "i32",
    "i32": "i32",
}
_DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "i16": 2, "i32": 4}


def dtype_key(dtype: str | np.dtype | type) -> str:
    """Short name of an element type ("f16", "bf16", "f32", "i8", ...)."""
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    try:
        return _DTYPE_KEYS[name.lower()]
    except KeyError:
        raise ValueError(f"unsupported element type {dtype!r}") from None


def dtype_bytes(dtype: str | np.dtype | type) -> int:
    return _DTYPE_BYTES[dtype_key(dtype)]


@dataclass(frozen=True)
class DmaCost:
    """Cost of one DMA instruction on its path, before GM contention.

    `wire_bytes` is what the path really moves: every burst rounded out to whole
    transaction granules. The replay uses it to slow GM transfers down when the
    cores' combined demand exceeds the chip's GM bandwidth.
    """

    cycles: int
    wire_bytes: int
    path: DmaPath


def _granules_touched(
    addr: int, stride: int, bursts: int, burst_bytes: int, granule: int
) -> int:
    """Granules touched by `bursts` bursts of `burst_bytes` at addr + i * stride."""
    if burst_bytes == 0:
        return 0
    if bursts == 1 or stride % granule == 0:
        return bursts * ((addr % granule + burst_bytes + granule - 1) // granule)
    starts = addr + stride * np.arange(bursts, dtype=np.int64)
    return int(((starts % granule + burst_bytes + granule - 1) // granule).sum())


def dma_cost(
    target: Target,
    path: tuple[str, str],
    bursts: int,
    burst_bytes: int,
    src_addr: int = 0,
    dst_addr: int = 0,
    src_stride: int | None = None,
    dst_stride: int | None = None,
) -> DmaCost:
    """latency + bursts * burst_overhead + wire_bytes / bandwidth.

    Alignment is judged on the GM side of a GM path (the source side otherwise): a
    burst that starts inside a granule touches one more granule than it needs.
    """
    info = target.dma_path(*path)
    if bursts < 1 or burst_bytes < 0:
        raise ValueError(f"bad DMA shape: {bursts} bursts of {burst_bytes} bytes")
    if path[1] == "gm":
        addr, stride = dst_addr, dst_stride
    else:
        addr, stride = src_addr, src_stride
    if stride is None:
        stride = burst_bytes
    granule = info.granule
    wire = _granules_touched(addr, stride, bursts, burst_bytes, granule) * granule
    cycles = (
        info.latency
        + bursts * info.burst_overhead
        + math.ceil(wire / info.bytes_per_cycle)
    )
    return DmaCost(cycles=cycles, wire_bytes=wire, path=info)


def dma_cycles(
    target: Target,
    path: tuple[str, str],
    bursts: int,
    burst_bytes: int,
    src_addr: int = 0,
    dst_addr: int = 0,
    src_stride: int | None = None,
    dst_stride: int | None = None,
) -> int:
    """Cycles of one DMA instruction (see `dma_cost`)."""
    return dma_cost(
        target, path, bursts, burst_bytes, src_addr, dst_addr, src_stride, dst_stride
    ).cycles


def l2_dma_cycles(
    target: Target,
    path: tuple[str, str],
    bursts: int,
    burst_bytes: int,
    misses: float = 0.0,
) -> float:
    """`dma_cycles` of a GM read of whose lines the share `misses` is not in
    the L2 (when the target has one): its start-up that share of the way from
    the L2's `hit_latency` to the path's own (docs/simulator.md, "L2 cache");
    other paths unchanged."""
    return _with_l2(target, path, dma_cycles(target, path, bursts, burst_bytes), misses)


def _with_l2(
    target: Target, path: tuple[str, str], cycles: int, misses: float
) -> float:
    """`cycles` of a GM read on `path` with its start-up as the L2 makes it
    when the share `misses` of its lines is not in it (`l2_dma_cycles`)."""
    if path[0] != "gm" or target.l2 is None:
        return cycles
    latency = target.dma_path(*path).latency
    hit = target.l2.hit_latency
    return cycles - latency + (hit + misses * (latency - hit))


def matrix_move_cycles(
    target: Target,
    path: tuple[str, str],
    rows: int,
    row_bytes: int,
    pitch: int,
    misses: float = 0.0,
) -> float:
    """`l2_dma_cycles` of a matrix move (`nd2nz`) of `rows` rows of
    `row_bytes` at a GM pitch of `pitch` bytes: rows that follow each other
    (`pitch == row_bytes`) are one burst, as the simulator's accesses merge
    them (`sim.access.Access`), so they touch the block's granules once
    rather than each row's."""
    if pitch == row_bytes:
        rows, row_bytes = 1, rows * row_bytes
    cost = dma_cost(target, path, rows, row_bytes, 0, 0, pitch, pitch)
    return _with_l2(target, path, cost.cycles, misses)


def l2_hit_dma_cycles(
    target: Target, path: tuple[str, str], bursts: int, burst_bytes: int
) -> int:
    """`dma_cycles` of a GM read whose lines are all in the L2 (`l2_dma_cycles`
    with no misses). The compile-time estimate of data read again and again
    (gathered rows, shared panels)."""
    return round(l2_dma_cycles(target, path, bursts, burst_bytes))


def mmad_cycles(
    target: Target, m: int, n: int, k: int, in_dtype: str | np.dtype | type
) -> int:
    """ceil(fractals * cycles per fractal): an mmad inside a stream on the M pipe
    (one that starts a stream pays `cube.head_cycles` more, docs/simulator.md
    "Start-up").

    A fractal is fractal_m x fractal_n x k0 with k0 = fractal_k_bytes / element size
    (16 for fp16, 8 for fp32); one costs k0 * fractal_m * fractal_n / MACs-per-cycle.
    """
    cube = target.cube
    key = dtype_key(in_dtype)
    if key not in cube.macs_per_cycle:
        raise ValueError(f"target {target.name}: the cube has no {key} datapath")
    if min(m, n, k) < 1:
        raise ValueError(f"bad mmad shape m={m} n={n} k={k}")
    k0 = max(1, cube.fractal_k_bytes // _DTYPE_BYTES[key])
    fractals = (
        math.ceil(m / cube.fractal_m)
        * math.ceil(n / cube.fractal_n)
        * math.ceil(k / k0)
    )
    per_fractal = cube.fractal_m * cube.fractal_n * k0 / cube.macs_per_cycle[key]
    return math.ceil(fractals * per_fractal)


def vector_repeats(target: Target, elements: int, dtype: str | np.dtype | type) -> int:
    """Repeats needed to cover `elements` elements (256 B per repeat on A2)."""
    return math.ceil(elements * dtype_bytes(dtype) / target.vector.repeat_bytes)


_VECTOR_COST_ALIASES = {"cmps": "cmp"}
"""Vector instructions priced by another instruction's profile."""


def vector_cost_key(op_name: str) -> str:
    """The `vector.cycles_per_repeat` key of a vector instruction, by its op name
    ("ascend_hw.vexp" -> "exp"; "ascend_hw.vcmps" -> "cmp")."""
    key = op_name.removeprefix("ascend_hw.v")
    return _VECTOR_COST_ALIASES.get(key, key)


def vector_cycles(
    target: Target, op: str, repeats: int, dtype: str | np.dtype | type = "f16"
) -> int:
    """ceil(repeats * per-op cycles per repeat): the instruction inside a stream on
    the V pipe (one that starts a stream pays `vector_head_cycles` more).

    A request above the hardware's max repeat count is several instructions
    issued back to back: only the first can start a stream, so the split adds no
    cycles. `op` is a cost key (`vector_cost_key`); 8-bit elements use the `b8`
    profile, or the `b16` one when the target has none.
    """
    if repeats < 0:
        raise ValueError(f"negative repeat count {repeats}")
    _check_cost_key(op)
    return math.ceil(repeats * cycles_per_repeat(target, op, 8 * dtype_bytes(dtype)))


def vector_cycles_for(
    target: Target, op: str, elements: int, dtype: str | np.dtype | type
) -> int:
    """`vector_cycles` of `op` over `elements` elements of `dtype` (its
    `vector_repeats`): an estimate's per-instruction figure."""
    return vector_cycles(target, op, vector_repeats(target, elements, dtype), dtype)


def vector_head_cycles(
    target: Target, op: str, dtype: str | np.dtype | type = "f16"
) -> int:
    """The start-up cycles vector instruction `op` (a cost key) pays when it starts
    a stream on the V pipe (docs/simulator.md, "Start-up"), rounded to the nearest
    cycle as the source's profiles are (half up)."""
    _check_cost_key(op)
    head = _per_width(target.vector.head_cycles, 8 * dtype_bytes(dtype))[op]
    return math.floor(head + 0.5)


def _check_cost_key(op: str) -> None:
    if op not in VECTOR_COST_KEYS:
        raise ValueError(
            f"{op!r} is not a vector instruction's cost key "
            f"(known: {', '.join(VECTOR_COST_KEYS)})"
        )


def _per_width(
    tables: Mapping[int, Mapping[str, float]], bits: int
) -> Mapping[str, float]:
    """The table of `bits`-bit elements: 8-bit ones use the b16 table when the
    target has no b8 one."""
    if bits == 8 and bits not in tables:
        bits = 16
    return tables[bits]


def cycles_per_repeat(target: Target, op: str, bits: int) -> float:
    """The cycles one repeat of vector instruction `op` (a cost key) takes on
    `bits`-bit elements: the `b8` profile, or the `b16` one when the target has none."""
    return _per_width(target.vector.cycles_per_repeat, bits)[op]


def _distinct_rows(blocks: Sequence[np.ndarray], width: int) -> np.ndarray:
    """The bank rows of each repeat's blocks, (repeats, k), each row once (-1 pads)."""
    rows = np.concatenate([np.asarray(b, dtype=np.int64) for b in blocks], axis=1)
    rows = np.where(rows >= 0, rows // width, -1)
    rows.sort(axis=1)
    rows[:, 1:][rows[:, 1:] == rows[:, :-1]] = -1
    return rows


def _counts(keys: np.ndarray, buckets: int) -> np.ndarray:
    """(repeats, buckets): how many entries of each repeat's row of `keys` (-1:
    none) fall into each bucket (keys past the last bucket, outside the memory,
    are left out: the access itself is an error the simulator reports)."""
    n = keys.shape[0]
    valid = (keys >= 0) & (keys < buckets)
    flat = (np.arange(n, dtype=np.int64)[:, None] * buckets + keys)[valid]
    return np.bincount(flat, minlength=n * buckets).reshape(n, buckets)


def bank_access_cycles(
    banks: BankLayout, reads: Sequence[np.ndarray], writes: Sequence[np.ndarray]
) -> np.ndarray:
    """Cycles of bank row access of each repeat of a vector instruction.

    `reads`, `writes`: one (repeats, blocks) integer array per operand, the byte
    addresses of the `banks.width`-byte blocks it touches in each repeat (-1
    where a repeat touches fewer). The blocks of one repeat are accessed in the
    same cycle; a bank group delivers one row per cycle to the reads and takes
    one from the writes, and a bank cannot be read and written in one cycle:

        cycles = max(max over groups of the rows read there,
                     max over groups of the rows written there,
                     max over banks both read and written of reads + writes)

    A row read by two operands is read once; a row written where the same repeat
    reads it (in place) is not a read/write conflict.
    """
    repeats = max((b.shape[0] for b in (*reads, *writes)), default=0)
    empty = np.full((repeats, 1), -1, np.int64)
    read_rows = _distinct_rows([*reads, empty], banks.width)
    write_rows = _distinct_rows([*writes, empty], banks.width)
    groups, per_slice = banks.groups, banks.groups * banks.rows
    cycles = np.maximum(
        _counts(np.where(read_rows >= 0, read_rows % groups, -1), groups).max(1),
        _counts(np.where(write_rows >= 0, write_rows % groups, -1), groups).max(1),
    )
    if reads and writes:
        in_place = (write_rows[:, :, None] == read_rows[:, None, :]).any(2)
        other = np.where(in_place, -1, write_rows)

        def bank(rows: np.ndarray) -> np.ndarray:
            return np.where(rows >= 0, rows % groups + groups * (rows // per_slice), -1)

        read_banks = _counts(bank(read_rows), banks.count)
        write_banks = _counts(bank(other), banks.count)
        both = (read_banks > 0) & (write_banks > 0)
        cycles = np.maximum(cycles, np.where(both, read_banks + write_banks, 0).max(1))
    return cycles


def bank_conflict_cycles(
    target: Target, reads: Sequence[np.ndarray], writes: Sequence[np.ndarray]
) -> int:
    """Cycles a vector instruction loses to UB bank conflicts: `conflict_cycles`
    (from the target) per row access cycle beyond the first of each repeat
    (`bank_access_cycles`). The per-op cycles per repeat are the conflict-free
    cost; this is added to them."""
    banks = target.memories["ub"].banks
    if banks is None or not banks.conflict_cycles or not (reads or writes):
        return 0
    cycles = bank_access_cycles(banks, reads, writes)
    return int(np.maximum(cycles - 1, 0).sum()) * banks.conflict_cycles


def scalar_cycles(target: Target, count: int = 1) -> int:
    """Cycles of `count` scalar ALU instructions."""
    return count * target.scalar.op
