"""Per-op static data of vector ops ("plans") and their per-address instances.

A `_VectorPlan` holds what does not change between executions (cost, lane
patterns, dtypes); a `_VectorCall` what depends on the operand addresses too
(accesses, lane views, UB bank conflicts, whether repeats must run one by one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import Attribute

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw.errors import _op_loc, _short_name
from pypto_mlir.interp.ascend_hw.float_formats import _BITS, _I32, _U8, storage_dtype
from pypto_mlir.interp.ascend_hw.lanes import (
    LanePattern,
    _Lanes,
    lane_pattern,
    make_pattern,
)
from pypto_mlir.interp.ascend_hw.values import HwBuffer, _element_type
from pypto_mlir.sim import Access, Pipe
from pypto_mlir.sim.machine import Core
from pypto_mlir.targets import Target
from pypto_mlir.targets.cost import (
    bank_conflict_cycles,
    vector_cost_key,
    vector_cycles,
    vector_head_cycles,
)

_V = int(Pipe.V)

_BITWISE_OPS = (hw.VCopyOp, hw.VDupOp, hw.VBrcbOp, hw.VSelectOp, hw.VGatherOp)
"""Vector ops that move bits: their operands are read as unsigned integers."""


@dataclass(eq=False)
class _VectorPlan:
    """What a vector op does, independent of its operands' addresses.

    `patterns` has one entry per lane-addressed operand (`lane_operands()`
    order) followed by the other buffers the op reads or writes at fixed
    positions (`sides`: a reduction's results, compare bits, gather offsets...).
    """

    name: str
    loc: str
    cycles: int
    head: int
    """Start-up cycles when the op starts a stream on V (`vector_head_cycles`)."""
    repeat: int
    lanes: int
    active: np.ndarray
    patterns: tuple[LanePattern, ...]
    dtypes: tuple[np.dtype[Any], ...]
    writes: tuple[bool, ...]
    element_types: tuple[Attribute, ...]
    calls: dict[tuple[int, ...], _VectorCall]
    target: Target
    bank_cycles: dict[tuple[int, ...], int]
    """Operand addresses -> cycles lost to UB bank conflicts (any core)."""
    blocks: dict[tuple[int, int], np.ndarray]
    """(operand, address mod bank row) -> `_pattern_rows` of that operand."""


@dataclass(eq=False)
class _VectorCall:
    """A vector op at fixed operand addresses on one core (cached per plan)."""

    operands: tuple[_Lanes, ...]
    reads: tuple[Access, ...]
    writes: tuple[Access, ...]
    cycles: int
    """The plan's cycles plus `bank_cycles`."""
    bank_cycles: int
    sequential: bool
    """Some repeat reads what an earlier one wrote: run repeat by repeat."""
    whole: tuple[np.ndarray, ...] | None = None
    """The (repeat, block, element) views of every lane operand, when all have
    one, of the same shape and a float type, and dst touches no element twice."""
    scalar: Any = None
    """The scalar operand of the execution in progress."""


def _vector_plan(op: hw.VectorOp, target: Target) -> _VectorPlan:
    lanes = op.lanes(target)
    active = tuple(op.active_lanes(target))
    repeat = op.repeat_count()
    block = hw.vector_block_bytes(target)
    lane_values = op.lane_operands()
    lane_types = tuple(_element_type(v) for v in lane_values)
    bitwise = isinstance(op, _BITWISE_OPS)
    dtypes = [
        _BITS[storage_dtype(t).itemsize] if bitwise else storage_dtype(t)
        for t in lane_types
    ]
    pattern_lanes = tuple(range(lanes)) if isinstance(op, hw.VBrcbOp) else active
    patterns = [
        lane_pattern(d.itemsize, blk, rep, repeat, pattern_lanes, block)
        for d, blk, rep in zip(
            dtypes, op.block_strides(), op.repeat_strides(target), strict=True
        )
    ]
    # The written lane operand is the last one (dst) unless dst is per repeat;
    # by position, since a source may be the same value as dst.
    dst_is_lane = not isinstance(op, hw.VectorReduceOp | hw.VectorCompareOp)
    writes = [
        dst_is_lane and k == len(lane_values) - 1 for k in range(len(lane_values))
    ]
    for pattern, dtype, write in _side_patterns(op, lanes, active, repeat, target):
        patterns.append(pattern)
        dtypes.append(dtype)
        writes.append(write)
    key = vector_cost_key(op.name)
    cost_type = _element_type(op.src) if isinstance(op, hw.VCastOp) else lane_types[0]
    return _VectorPlan(
        name=_short_name(op),
        loc=_op_loc(op),
        cycles=vector_cycles(target, key, repeat, str(cost_type)),
        head=vector_head_cycles(target, key, str(cost_type)),
        repeat=repeat,
        lanes=lanes,
        active=np.asarray(active, dtype=np.int64),
        patterns=tuple(patterns),
        dtypes=tuple(dtypes),
        writes=tuple(writes),
        element_types=lane_types,
        calls={},
        target=target,
        bank_cycles={},
        blocks={},
    )


def _pattern_rows(pattern: LanePattern, misalign: int, width: int) -> np.ndarray:
    """(repeat, k) byte offsets of the `width`-byte bank rows each repeat of
    `pattern` touches, from an address `misalign` bytes past a row start rounded
    down to that row (-1 pads repeats that touch fewer rows)."""
    if pattern.pitch % width == 0:  # every repeat: repeat 0's rows, shifted
        first = np.unique((misalign + pattern.offsets[0] * pattern.ebytes) // width)
        shift = np.arange(pattern.repeat, dtype=np.int64)[:, None] * pattern.pitch
        return first[None, :] * width + shift
    rows = (misalign + pattern.offsets * pattern.ebytes) // width
    rows = np.sort(rows, axis=1)
    first = np.ones(rows.shape, dtype=bool)
    first[:, 1:] = rows[:, 1:] != rows[:, :-1]
    order = np.argsort(~first, axis=1, kind="stable")
    k = int(first.sum(axis=1).max())
    compact = np.take_along_axis(rows, order, axis=1)[:, :k]
    keep = np.take_along_axis(first, order, axis=1)[:, :k]
    return np.where(keep, compact * width, -1)


_BANK_CYCLES_LIMIT = 1 << 14
"""Cached bank-conflict figures per op: an int each, so many more than the
views `_INSTANCE_LIMIT` bounds. A row gathered from a resident block of rows
reads at one of its rows' addresses (1000 in a CSR spmm over 1000 rows of b):
at 64 entries the cache was cleared on nearly every call, and the conflicts
computed again (a fifth of that kernel's simulation time)."""


def _bank_cycles(plan: _VectorPlan, operands: Sequence[HwBuffer]) -> int:
    """Cycles the op loses to UB bank conflicts at these operand addresses
    (`cost.bank_conflict_cycles` of the rows each repeat touches; cached)."""
    addresses = tuple(b.address for b in operands)
    cycles = plan.bank_cycles.get(addresses)
    if cycles is not None:
        return cycles
    banks = plan.target.memories["ub"].banks
    cycles = 0
    if banks is not None and banks.conflict_cycles:
        width = banks.width
        reads: list[np.ndarray] = []
        writes: list[np.ndarray] = []
        for i, (address, pattern) in enumerate(
            zip(addresses, plan.patterns, strict=False)
        ):
            key = (i, address % width)
            rows = plan.blocks.get(key)
            if rows is None:
                rows = plan.blocks[key] = _pattern_rows(pattern, key[1], width)
            base = address - key[1]
            (writes if plan.writes[i] else reads).append(
                np.where(rows >= 0, rows + base, -1)
            )
        cycles = bank_conflict_cycles(plan.target, reads, writes)
    if len(plan.bank_cycles) >= _BANK_CYCLES_LIMIT:
        plan.bank_cycles.clear()
    plan.bank_cycles[addresses] = cycles
    return cycles


def _side_patterns(
    op: hw.VectorOp, lanes: int, active: tuple[int, ...], repeat: int, target: Target
) -> list[tuple[LanePattern, np.dtype[Any], bool]]:
    """Patterns of the buffers a vector op addresses by repeat, not by lane."""
    if isinstance(op, hw.VectorBlockReduceOp):
        dtype = storage_dtype(_element_type(op.dst))
        per_repeat = target.vector.repeat_bytes // hw.vector_block_bytes(target)
        e = dtype.itemsize
        view = ((repeat, 1, per_repeat), (per_repeat * e, per_repeat * e, e))
        pattern = make_pattern(range(per_repeat), per_repeat, repeat, e, view)
        return [(pattern, dtype, True)]
    if isinstance(op, hw.VectorReduceOp):
        dtype = storage_dtype(_element_type(op.dst))
        stride = op.dst_stride.value.data
        e = dtype.itemsize
        view = ((repeat, 1, 1), (stride * e, e, e))
        return [(make_pattern([0], stride, repeat, e, view), dtype, True)]
    if isinstance(op, hw.VBrcbOp):
        dtype = _BITS[storage_dtype(_element_type(op.src)).itemsize]
        per_repeat = target.vector.repeat_bytes // hw.vector_block_bytes(target)
        e = dtype.itemsize
        view = ((repeat, 1, per_repeat), (per_repeat * e, per_repeat * e, e))
        pattern = make_pattern(range(per_repeat), per_repeat, repeat, e, view)
        return [(pattern, dtype, False)]
    if isinstance(op, hw.VectorCompareOp):
        nbytes = lanes // 8
        view = ((repeat, 1, nbytes), (nbytes, nbytes, 1))
        return [(make_pattern(range(nbytes), nbytes, repeat, 1, view), _U8, True)]
    if isinstance(op, hw.VSelectOp):
        touched = sorted({lane // 8 for lane in active})
        return [(make_pattern(touched, lanes // 8, repeat, 1), _U8, False)]
    if isinstance(op, hw.VGatherOp):
        return [(make_pattern(active, lanes, repeat, 4), _I32, False)]
    return []


def _vector_call(
    plan: _VectorPlan,
    core: Core,
    operands: Sequence[HwBuffer],
    extra_read: tuple[int, int] | None,
) -> _VectorCall:
    """Accesses, lane views and repeat order of a vector op at these addresses.

    Repeats run one after the other only when needed: when a written range
    overlaps a read range other than the very same elements of the same repeat.
    """
    reads: tuple[Access, ...] = ()
    writes: tuple[Access, ...] = ()
    read_ranges: list[tuple[int, int, int]] = []  # (lo, hi, operand or -1)
    write_ranges: list[tuple[int, int, int]] = []
    lanes: list[_Lanes] = []
    for i, (buffer, pattern) in enumerate(zip(operands, plan.patterns, strict=False)):
        accesses = pattern.accesses(buffer.space, buffer.address)
        span = (buffer.address + pattern.lo, buffer.address + pattern.hi, i)
        if plan.writes[i]:
            writes += accesses
            write_ranges.append(span)
        else:
            reads += accesses
            read_ranges.append(span)
        lanes.append(
            _Lanes(core.memories[buffer.space], buffer.address, pattern, plan.dtypes[i])
        )
    if extra_read is not None:
        read_ranges.append((*extra_read, -1))
    sequential = False
    if plan.repeat > 1:
        for w_lo, w_hi, w in write_ranges:
            for r_lo, r_hi, r in read_ranges:
                if r_lo >= w_hi or w_lo >= r_hi:
                    continue
                same_elements = (
                    r >= 0
                    and operands[w].address == operands[r].address
                    and plan.patterns[w] is plan.patterns[r]
                    and plan.patterns[w].disjoint_repeats
                )
                sequential = sequential or not same_elements
    whole = None
    views = [p.view for p in plan.patterns]
    n_lane = len(plan.element_types)
    if (
        not sequential
        and all(v is not None for v in views[:n_lane])
        and len({v[0] for v in views[:n_lane]}) == 1  # type: ignore[index]
        and all(d.kind == "f" for d in plan.dtypes[:n_lane])
        and all(
            p.distinct for p, w in zip(plan.patterns, plan.writes, strict=True) if w
        )
    ):
        whole = _flattened(tuple(lane._view(0, plan.repeat) for lane in lanes[:n_lane]))
    bank = _bank_cycles(plan, operands)
    return _VectorCall(
        tuple(lanes), reads, writes, plan.cycles + bank, bank, sequential, whole
    )


def _flattened(views: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The views as one-dimensional views of the same elements in the same order
    when all of them can be (contiguous runs: numpy's loops are fastest on them),
    else as they are."""
    flat = []
    for view in views:
        one = view.view()
        try:
            one.shape = (view.size,)  # never copies: raises if a copy were needed
        except AttributeError:
            return views
        flat.append(one)
    return tuple(flat)
