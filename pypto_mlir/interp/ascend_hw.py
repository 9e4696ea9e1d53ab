"""Interpreter of the `ascend_hw` dialect on the AI Core simulator (`pypto_mlir.sim`).

Each instruction runs functionally, in program order, on numpy views of the
simulated memories of the current core (exact numerics, as the op docstrings in
`dialects/ascend_hw.py` state them), and hands the simulator one record: its pipe,
its cycles from `targets.cost`, the bytes it reads and writes as `Access` ranges
(`count`/`stride` bursts for strided DMA and vector lanes) and its source location
(`FILE:LINE:COL`), so that races and timing are reported against the IR.
`run_hw_function` runs a kernel on `block_dim` cores and returns the `Report`.
docs/ascend_hw_interp.md describes the mapping from ops to records.

Run-time values: a buffer is an `HwBuffer` (memory, byte address, type); a GM
memref is a `GmRef` (a `GmTensor` of the simulator with the memref's layout);
index, integer and float values are the xDSL interpreter's usual attributes.

Everything an op needs that does not change between executions (attributes, lane
index patterns, costs, byte ranges relative to the operands) is computed once per
op and cached; per execution only the operand addresses are looked at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from math import prod
from operator import itemgetter
from threading import Condition, Thread
from time import perf_counter
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BFloat16Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StridedLayoutAttr,
    bf16,
    f16,
    f32,
    i8,
    i16,
    i32,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImplResult,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import BuiltinFunctions, scalar_attr
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.math import MathFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.comparisons import to_signed, to_unsigned

from pypto_mlir.diagnostics import op_location
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects.ascend_hw import (
    BufferType,
    CmpMode,
    Layout,
    RoundMode,
    element_offset,
)
from pypto_mlir.sim import (
    Access,
    AccessError,
    GmTensor,
    Machine,
    Pipe,
    Report,
    SimError,
)
from pypto_mlir.sim.machine import Core, gc_paused
from pypto_mlir.targets import Target
from pypto_mlir.targets.cost import (
    bank_conflict_cycles,
    dma_cost,
    mmad_cycles,
    vector_cost_key,
    vector_cycles,
)

__all__ = [
    "BLOCK_DIM_ATTR",
    "AscendHwFunctions",
    "GmRef",
    "HwBuffer",
    "HwRunError",
    "HwRunResult",
    "HwRuntime",
    "HwScfFunctions",
    "declared_block_dim",
    "hw_interpreter",
    "run_hw_function",
]

BLOCK_DIM_ATTR = "ascend_hw.block_dim"
"""`func.func` attribute declaring how many cores run the kernel (an integer)."""


class HwRunError(SimError):
    """A kernel that cannot be run: bad arguments, unsupported ops, bad indices."""


# --------------------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------------------

_STORAGE: dict[Attribute, np.dtype[Any]] = {
    f16: np.dtype(np.float16),
    bf16: np.dtype(np.uint16),  # the bits; numpy has no bfloat16
    f32: np.dtype(np.float32),
    i8: np.dtype(np.int8),
    i16: np.dtype(np.int16),
    i32: np.dtype(np.int32),
}
"""How an element type is stored in the simulated memories."""

_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32)}
"""Unsigned dtype of each element size: for ops that move bits, not values."""

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def storage_dtype(element_type: Attribute) -> np.dtype[Any]:
    try:
        return _STORAGE[element_type]
    except KeyError:
        raise HwRunError(f"{element_type} is not an ascend_hw element type") from None


def _to_compute(values: np.ndarray) -> np.ndarray:
    """f16 values as f32 (float arithmetic is evaluated in f32); others as they are."""
    return values.astype(_F32) if values.dtype == _F16 else values


@dataclass(frozen=True)
class _FloatFormat:
    """A binary float format, for rounding with an explicit mode."""

    mantissa_bits: int
    min_exponent: int
    max_finite: float


_FORMATS = {
    "f16": _FloatFormat(10, -14, 65504.0),
    "bf16": _FloatFormat(7, -126, float.fromhex("0x1.fe00000000000p+127")),
    "f32": _FloatFormat(23, -126, float(np.finfo(np.float32).max)),
}


def _round_integral(q: np.ndarray, mode: RoundMode) -> np.ndarray:
    """Round f64 values to integers with `mode` (`odd`: truncate, then make odd if
    inexact)."""
    if mode in (RoundMode.RINT, RoundMode.NONE):
        return np.rint(q)
    if mode == RoundMode.ROUND:
        return np.copysign(np.floor(np.abs(q) + 0.5), q)
    if mode == RoundMode.FLOOR:
        return np.floor(q)
    if mode == RoundMode.CEIL:
        return np.ceil(q)
    truncated = np.trunc(q)
    if mode == RoundMode.TRUNC:
        return truncated
    inexact_even = (truncated != q) & (np.fmod(truncated, 2) == 0)
    return np.where(inexact_even, truncated + np.sign(q), truncated)


def round_float(values: np.ndarray, fmt: str, mode: RoundMode) -> np.ndarray:
    """`values` rounded to the float format `fmt` with `mode`, as f64.

    The rounding is done as if the exponent range were unbounded; a result beyond
    the format's largest finite value becomes +-inf (vcast's overflow rule).
    Subnormals round on their fixed quantum.
    """
    spec = _FORMATS[fmt]
    x = np.asarray(values, dtype=np.float64)
    _, exponent = np.frexp(x)
    quantum = np.ldexp(
        1.0, np.maximum(exponent - 1, spec.min_exponent) - spec.mantissa_bits
    )
    rounded = _round_integral(x / quantum, mode) * quantum
    return np.where(np.abs(rounded) > spec.max_finite, np.copysign(np.inf, x), rounded)


def bf16_bits(values: np.ndarray, mode: RoundMode = RoundMode.RINT) -> np.ndarray:
    """The bf16 bit patterns (uint16) of float values, rounded with `mode`
    (an array, also for a rank-0 one: GM writes land in it)."""
    exact = np.asarray(round_float(values, "bf16", mode), dtype=np.float32)
    return np.asarray((exact.view(np.uint32) >> 16).astype(np.uint16))


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """The f32 values of bf16 bit patterns."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _round_to_int(values: np.ndarray, dtype: np.dtype[Any], mode: RoundMode):
    """Float -> integer: round with `mode`, saturate to the range, NaN -> 0."""
    info = np.iinfo(dtype)
    rounded = _round_integral(np.asarray(values, dtype=np.float64), mode)
    rounded = np.clip(np.nan_to_num(rounded, nan=0.0), info.min, info.max)
    return rounded.astype(dtype)


def convert(
    values: np.ndarray, src: Attribute, dst: Attribute, mode: RoundMode
) -> np.ndarray:
    """`vcast`/`fixpipe` conversion of stored `src` values to stored `dst` values."""
    if src == bf16:
        values = bf16_values(values)
    if dst == f32:
        if isinstance(src, IntegerType) and src.width.data > 16:
            return round_float(values, "f32", mode).astype(np.float32)
        return values.astype(np.float32)
    if dst == f16:
        if src == i8:
            return values.astype(np.float16)
        return round_float(values, "f16", mode).astype(np.float16)
    if dst == bf16:
        return bf16_bits(values, mode)
    return _round_to_int(values, storage_dtype(dst), mode)


def scalar_value(value: Any, element_type: Attribute) -> Any:
    """A scalar operand as a numpy scalar of `element_type`'s storage."""
    if isinstance(value, IntegerAttr | FloatAttr):
        value = value.value.data
    dtype = storage_dtype(element_type)
    if element_type == bf16:
        return bf16_bits(np.array([value]))[0]
    if dtype.kind == "f":
        return dtype.type(value)
    return np.array(int(value), dtype=np.int64).astype(dtype)[()]


# --------------------------------------------------------------------------------------
# Run-time values
# --------------------------------------------------------------------------------------


class HwBuffer:
    """The run-time value of an `!ascend_hw.buf`: a typed window of one memory."""

    __slots__ = ("space", "address", "type", "info")

    def __init__(
        self, space: str, address: int, buffer_type: BufferType, target: Target
    ):
        self.space = space
        self.address = address
        self.type = buffer_type
        self.info = _buffer_info(buffer_type, target.cube.fractal_k_bytes)

    @property
    def end(self) -> int:
        return self.address + self.info.nbytes

    def __repr__(self) -> str:
        return f"HwBuffer({self.space}, [{self.address}, {self.end}), {self.type})"


@dataclass(frozen=True)
class _BufferInfo:
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    ebytes: int
    nbytes: int
    nz: bool
    c0: int
    """Columns of one nz fractal (0 for nd)."""


@cache
def _buffer_info(buffer_type: BufferType, fractal_k_bytes: int) -> _BufferInfo:
    nz = buffer_type.layout_kind == Layout.NZ
    ebytes = buffer_type.element_bytes
    return _BufferInfo(
        buffer_type.get_shape(),
        storage_dtype(buffer_type.element_type),
        ebytes,
        buffer_type.byte_size(),
        nz,
        fractal_k_bytes // ebytes if nz else 0,
    )


class GmRef:
    """The run-time value of a GM memref: a simulator `GmTensor` and the memref's
    layout (element `[i]` is at element `offset + sum(i_d * strides_d)`)."""

    __slots__ = ("tensor", "shape", "strides", "offset", "dtype", "ebytes")

    def __init__(
        self,
        tensor: GmTensor,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: np.dtype[Any],
    ):
        self.tensor = tensor
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.dtype = dtype
        self.ebytes = dtype.itemsize

    def byte_address(self, index: Sequence[int], loc: str) -> int:
        """Byte address of element `index`; AccessError when it is outside."""
        if len(index) == 2 and len(self.shape) == 2:  # the common case, unrolled
            i, j = index
            rows, cols = self.shape
            if 0 <= i < rows and 0 <= j < cols:
                row_stride, col_stride = self.strides
                return (self.offset + i * row_stride + j * col_stride) * self.ebytes
        element = self.offset
        for i, d, s in zip(index, self.shape, self.strides, strict=True):
            if not 0 <= i < d:
                raise AccessError(
                    f"{_at(loc)}index {list(index)} is outside memref "
                    f"'{self.tensor.name}' of shape {list(self.shape)}",
                    (loc,),
                )
            element += i * s
        return element * self.ebytes

    def __repr__(self) -> str:
        return f"GmRef({self.tensor.name}, {list(self.shape)}, strides={list(self.strides)})"


def _at(loc: str) -> str:
    return f"{loc}: " if loc else ""


def _indices(values: Sequence[Any]) -> tuple[int, ...]:
    """Index operands (IntegerAttr at run time) as ints."""
    if len(values) == 2:  # the usual 2-d index, without a comprehension
        first, second = values
        return (first.value.data, second.value.data)
    return tuple([v.value.data for v in values])


def _op_loc(op: Operation) -> str:
    location = op_location(op)
    return "" if location is None else str(location)


def _short_name(op: Operation) -> str:
    return op.name.removeprefix("ascend_hw.")


def _strided(
    buf: np.ndarray,
    offset: int,
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    dtype: np.dtype[Any],
) -> np.ndarray:
    """A typed view of the byte array `buf` (strides in bytes; bounds checked before)."""
    return np.ndarray(shape, dtype, buffer=buf, offset=offset, strides=strides)


# --------------------------------------------------------------------------------------
# Vector lane addressing
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LanePattern:
    """The elements one operand of a vector op touches, relative to its address:
    the same `in_repeat` offsets in every repeat, `pitch` elements apart."""

    repeat: int
    ebytes: int
    offsets: np.ndarray
    """(repeat, elements) element offsets from the operand's address, in lane order."""
    view: tuple[tuple[int, ...], tuple[int, ...]] | None
    """(shape, byte strides) of a strided view holding the same elements in the same
    order, as (repeat, blocks, elements), when there is one."""
    runs: tuple[tuple[int, int], ...]
    """Byte runs (offset, length) that repeat 0 touches."""
    pitch: int
    """Bytes from one repeat to the next."""
    lo: int
    hi: int
    """Byte extent touched by all repeats, relative to the address."""
    disjoint_repeats: bool
    """No element is touched by two different repeats."""
    distinct: bool
    """No element is touched twice (by two repeats or two lanes of one)."""

    def accesses(self, space: str, address: int) -> tuple[Access, ...]:
        """The touched bytes: one burst per run and repeat (fewer when regular)."""
        count = self.repeat if self.pitch else 1
        runs = self.runs
        if count == 1 and len(runs) > 1:
            first, length = runs[0]
            spacing = runs[1][0] - first
            if all(r == (first + k * spacing, length) for k, r in enumerate(runs)):
                return (Access(space, address + first, length, len(runs), spacing),)
        return tuple(
            Access(space, address + start, length, count, self.pitch)
            for start, length in runs
        )


def make_pattern(
    in_repeat: Sequence[int] | np.ndarray,
    pitch: int,
    repeat: int,
    ebytes: int,
    view: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
) -> LanePattern:
    """A pattern touching elements `i * pitch + in_repeat[j]` for repeat i."""
    inner = np.asarray(in_repeat, dtype=np.int64)
    offsets = np.arange(repeat, dtype=np.int64)[:, None] * pitch + inner[None, :]
    offsets.setflags(write=False)
    touched = np.unique(inner)
    breaks = np.flatnonzero(np.diff(touched) != 1) + 1
    runs = tuple(
        (int(run[0]) * ebytes, len(run) * ebytes) for run in np.split(touched, breaks)
    )
    return LanePattern(
        repeat=repeat,
        ebytes=ebytes,
        offsets=offsets,
        view=view,
        runs=runs,
        pitch=pitch * ebytes,
        lo=int(offsets.min()) * ebytes,
        hi=(int(offsets.max()) + 1) * ebytes,
        disjoint_repeats=np.unique(offsets).size == repeat * touched.size,
        distinct=np.unique(offsets).size == offsets.size,
    )


@cache
def lane_pattern(
    ebytes: int,
    block_stride: int,
    repeat_stride: int,
    repeat: int,
    lanes: tuple[int, ...],
    block: int = 32,
) -> LanePattern:
    """Lanes `lanes` of an operand with `ebytes`-byte elements (`VectorOp`):

    lane l of repeat i is element `(i * repeat_stride + (l // pb) * block_stride)
    * pb + l % pb` from the address, with `pb = block / ebytes` elements per block.
    """
    per_block = block // ebytes
    lane = np.asarray(lanes, dtype=np.int64)
    in_repeat = (lane // per_block) * block_stride * per_block + lane % per_block
    view = None
    count = len(lanes)
    if lanes == tuple(range(count)) and (count % per_block == 0 or count < per_block):
        blocks, width = (
            (count // per_block, per_block) if count >= per_block else (1, count)
        )
        view = (
            (repeat, blocks, width),
            (repeat_stride * block, block_stride * block, ebytes),
        )
    return make_pattern(in_repeat, repeat_stride * per_block, repeat, ebytes, view)


class _Lanes:
    """The elements of one vector operand at one address of one core's memory."""

    __slots__ = ("mem", "address", "pattern", "dtype", "_full")

    def __init__(
        self, mem: np.ndarray, address: int, pattern: LanePattern, dtype: np.dtype[Any]
    ):
        self.mem = mem
        self.address = address
        self.pattern = pattern
        self.dtype = dtype
        self._full: np.ndarray | None = None

    def _view(self, lo: int, hi: int) -> np.ndarray:
        shape, strides = self.pattern.view  # type: ignore[misc]
        if lo == 0 and hi == shape[0]:
            if self._full is None:
                self._full = _strided(
                    self.mem, self.address, shape, strides, self.dtype
                )
            return self._full
        return _strided(
            self.mem,
            self.address + lo * strides[0],
            (hi - lo, *shape[1:]),
            strides,
            self.dtype,
        )

    def _indices(self, lo: int, hi: int) -> np.ndarray:
        return self.address // self.dtype.itemsize + self.pattern.offsets[lo:hi]

    def read(self, lo: int, hi: int) -> np.ndarray:
        """The values of repeats [lo, hi): shape (repeats, elements)."""
        if self.pattern.view is not None:
            return self._view(lo, hi).reshape(hi - lo, -1)
        return self.mem.view(self.dtype)[self._indices(lo, hi)]

    def write(self, lo: int, hi: int, values: np.ndarray) -> None:
        if self.pattern.view is not None:
            view = self._view(lo, hi)
            view[...] = values.reshape(view.shape)
        else:
            self.mem.view(self.dtype)[self._indices(lo, hi)] = values


# --------------------------------------------------------------------------------------
# Per-op static data ("plans")
# --------------------------------------------------------------------------------------

_INSTANCE_LIMIT = 64
"""Cached operand-address instances per op (a loop cycles through a few)."""

_U8 = np.dtype(np.uint8)
_V = int(Pipe.V)
_I32 = np.dtype(np.int32)

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
    if len(plan.bank_cycles) >= _INSTANCE_LIMIT:
        plan.bank_cycles.clear()
    plan.bank_cycles[addresses] = cycles
    return cycles


def _side_patterns(
    op: hw.VectorOp, lanes: int, active: tuple[int, ...], repeat: int, target: Target
) -> list[tuple[LanePattern, np.dtype[Any], bool]]:
    """Patterns of the buffers a vector op addresses by repeat, not by lane."""
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


# --- numerics of the vector families ---------------------------------------------------


def _arith(fn: Callable[..., np.ndarray], dtype: np.dtype[Any], *values: Any):
    """`fn` evaluated in f32 for floats and rounded once to `dtype`; ints wrap."""
    if dtype.kind == "f":
        return fn(*(_to_compute(v) for v in values)).astype(dtype, copy=False)
    return np.asarray(fn(*values)).astype(dtype, copy=False)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0))


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.float32(1) / np.sqrt(x)


def _reciprocal(x: np.ndarray) -> np.ndarray:
    return np.float32(1) / x


def _sum(x: np.ndarray) -> np.ndarray:
    return np.sum(_to_compute(x), axis=1, dtype=np.float32)


_BINARY: dict[type[hw.VectorBinaryOp], Callable[..., np.ndarray]] = {
    hw.VAddOp: np.add,
    hw.VSubOp: np.subtract,
    hw.VMulOp: np.multiply,
    hw.VDivOp: np.divide,
    hw.VMaxOp: np.maximum,
    hw.VMinOp: np.minimum,
}
_SCALAR: dict[type[hw.VectorScalarOp], Callable[..., np.ndarray]] = {
    hw.VAddsOp: np.add,
    hw.VMulsOp: np.multiply,
    hw.VMaxsOp: np.maximum,
    hw.VMinsOp: np.minimum,
}
_UNARY: dict[type[hw.VectorUnaryOp], Callable[..., np.ndarray]] = {
    hw.VExpOp: np.exp,
    hw.VLnOp: np.log,
    hw.VAbsOp: np.abs,
    hw.VReluOp: _relu,
    hw.VSqrtOp: np.sqrt,
    hw.VRsqrtOp: _rsqrt,
    hw.VReciprocalOp: _reciprocal,
}
_REDUCE: dict[type[hw.VectorReduceOp], Callable[..., np.ndarray]] = {
    hw.VReduceSumOp: _sum,
    hw.VReduceMaxOp: lambda x: np.max(x, axis=1),
    hw.VReduceMinOp: lambda x: np.min(x, axis=1),
}
_COMPARE: dict[CmpMode, Callable[..., np.ndarray]] = {
    CmpMode.LT: np.less,
    CmpMode.LE: np.less_equal,
    CmpMode.GT: np.greater,
    CmpMode.GE: np.greater_equal,
    CmpMode.EQ: np.equal,
    CmpMode.NE: np.not_equal,
}

VectorKernel = Callable[["_VectorPlan", "_VectorCall", int, int], None]
"""Runs repeats [lo, hi) of a vector op: reads its operands, computes, writes."""


_EXACT_UFUNCS = frozenset(
    (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum)
    + (np.abs, np.sqrt)
)
"""Ufuncs whose f32 result is correctly rounded (IEEE): the same whichever numpy
loop (SIMD or not, buffered or not) computes them. exp and ln are not: their
SIMD and scalar loops may differ in the last bit, so they keep one code path."""


def _elementwise_kernel(fn: Callable[..., np.ndarray], inputs: int) -> VectorKernel:
    """`dst = fn(lane inputs..., [scalar])` for ops whose last lane operand is dst."""
    exact = fn in _EXACT_UFUNCS

    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        operands = call.operands
        if exact and call.whole is not None and hi - lo == plan.repeat:
            # One ufunc call on the views: numpy casts to f32, computes and
            # rounds once into dst, as `_arith` does in four steps (inputs that
            # overlap dst are read first, as numpy guarantees for ufuncs). Not
            # the f16 loop: its results are equal but when both operands are
            # NaN it may keep the other one's payload.
            args = call.whole[:inputs]
            if call.scalar is not None:
                args = (*args, call.scalar)
            fn(*args, out=call.whole[inputs], dtype=_F32)
            return
        args = [operands[i].read(lo, hi) for i in range(inputs)]
        if call.scalar is not None:
            args.append(call.scalar)
        operands[inputs].write(lo, hi, _arith(fn, plan.dtypes[inputs], *args))

    return kernel


def _copy_kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
    src, dst = call.operands
    dst.write(lo, hi, src.read(lo, hi))


def _cast_kernel(mode: RoundMode) -> VectorKernel:
    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        src, dst = call.operands
        values = convert(src.read(lo, hi), *plan.element_types, mode)
        dst.write(lo, hi, values)

    return kernel


def _reduce_kernel(fn: Callable[..., np.ndarray]) -> VectorKernel:
    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        src, dst = call.operands
        result = fn(src.read(lo, hi)).astype(plan.dtypes[1], copy=False)
        dst.write(lo, hi, result)

    return kernel


def _dup_kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
    (dst,) = call.operands
    bits = np.asarray(call.scalar).view(plan.dtypes[0])
    dst.write(lo, hi, np.full((hi - lo, plan.active.size), bits))


def _brcb_kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
    dst, src = call.operands
    per_block = 32 // plan.dtypes[0].itemsize
    dst.write(lo, hi, np.repeat(src.read(lo, hi), per_block, axis=1))


def _compare_kernel(mode: CmpMode) -> VectorKernel:
    """Compare bits of a repeat: enabled lanes' results, 0 for the others."""
    fn = _COMPARE[mode]

    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        *inputs, bits_out = call.operands
        args = [_to_compute(lanes.read(lo, hi)) for lanes in inputs]
        if call.scalar is not None:
            args.append(_to_compute(np.asarray(call.scalar)))
        bits = np.zeros((hi - lo, plan.lanes), dtype=bool)
        bits[:, plan.active] = fn(*args)
        bits_out.write(lo, hi, np.packbits(bits, axis=1, bitorder="little"))

    return kernel


def _select_kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
    a, b, dst, cond = call.operands
    active = plan.active
    touched = np.unique(active // 8)
    column = np.searchsorted(touched, active // 8)
    bits = (cond.read(lo, hi)[:, column] >> (active % 8).astype(np.uint8)) & 1
    dst.write(lo, hi, np.where(bits.astype(bool), a.read(lo, hi), b.read(lo, hi)))


# --------------------------------------------------------------------------------------
# DMA and matrix plans
# --------------------------------------------------------------------------------------


def _space(value: SSAValue) -> str:
    return str(value.type.memory_space) if isinstance(value.type, BufferType) else "gm"


def _element_type(value: SSAValue) -> Attribute:
    value_type = value.type
    if isinstance(value_type, BufferType | MemRefType):
        return value_type.element_type
    raise HwRunError(f"{value_type} is not a buffer or a memref")


def _dma_pipe(target: Target, path: tuple[str, str], loc: str) -> str:
    try:
        return target.dma_path(*path).pipe
    except KeyError as e:
        raise SimError(f"{_at(loc)}{e.args[0]}", (loc,)) from None


class _BurstPlan:
    """A burst DMA's descriptor, path, pipe and cost cache."""

    def __init__(self, op: hw.BurstDmaOp, target: Target):
        self.name = _short_name(op)
        self.loc = _op_loc(op)
        self.bursts, self.length, _, _ = op.burst_descriptor()
        self.src_pitch, self.dst_pitch = op.pitches(target)
        self.path = (_space(op.src_value), _space(op.dst_value))
        self.pipe = _dma_pipe(target, self.path, self.loc)
        self.path_info = target.dma_path(*self.path)
        self.pipe_index = int(Pipe.parse(self.pipe))
        self.target = target
        self.granule = self.path_info.granule
        self.costs: dict[int, tuple[int, int]] = {}
        """(cycles, wire bytes) by the addresses' offsets in a granule (src * granule
        + dst)."""
        self.buffer_accesses: dict[tuple[str, int, int], Access] = {}
        self.gm_accesses: dict[tuple[GmTensor, int], Access] = {}
        # id(side) -> (side, its Access if a buffer, else the GM access to move)
        self.src_sides: dict[int, tuple[Any, Access | None, Access | None]] = {}
        self.dst_sides: dict[int, tuple[Any, Access | None, Access | None]] = {}

    def access(
        self,
        side: Any,
        index: tuple[int, ...],
        pitch: int,
        sides: dict[int, tuple[Any, Access | None, Access | None]],
    ) -> Access:
        """The bursts on one side; a buffer side's is the same every time.

        `sides` remembers what `_access` gave for each side object (its caches are
        never invalidated, so that is what it would give again).
        """
        entry = sides.get(id(side))
        if entry is not None and entry[0] is side:
            if entry[1] is not None:
                return entry[1]
            address = side.byte_address(index, self.loc)
            if address >= 0:
                return entry[2].at(address)  # type: ignore[union-attr]
        access = self._access(side, index, pitch)
        if len(sides) >= _INSTANCE_LIMIT:
            sides.clear()
        if type(side) is GmRef:
            sides[id(side)] = (side, None, self.gm_accesses[(side.tensor, pitch)])
        else:
            sides[id(side)] = (side, access, None)
        return access

    def _access(self, side: Any, index: tuple[int, ...], pitch: int) -> Access:
        if type(side) is GmRef:
            address = side.byte_address(index, self.loc)
            # The shape is the same every time: move the first access made.
            shape = self.gm_accesses.get((side.tensor, pitch))
            if shape is None or address < 0:
                shape = Access(side.tensor, address, self.length, self.bursts, pitch)
                self.gm_accesses[(side.tensor, pitch)] = shape
                return shape
            return shape.at(address)
        if type(side) is not HwBuffer:
            raise HwRunError(
                f"{_at(self.loc)}expected a buffer or a GM memref, got {side!r}",
                (self.loc,),
            )
        key = (side.space, side.address, pitch)
        access = self.buffer_accesses.get(key)
        if access is None:
            access = Access(side.space, side.address, self.length, self.bursts, pitch)
            _check_inside(side, access, self.loc)
            self.buffer_accesses[key] = access
        return access

    def cost(self, src_addr: int, dst_addr: int) -> tuple[int, int]:
        """(cycles, wire bytes); only the addresses' offsets in a granule matter."""
        granule = self.granule
        src_offset, dst_offset = src_addr % granule, dst_addr % granule
        key = src_offset * granule + dst_offset
        cost = self.costs.get(key)
        if cost is None:
            result = dma_cost(
                self.target,
                self.path,
                self.bursts,
                self.length,
                src_offset,
                dst_offset,
                self.src_pitch,
                self.dst_pitch,
            )
            cost = self.costs[key] = (result.cycles, result.wire_bytes)
        return cost


class _MatrixPlan:
    """A matrix move's block, path, pipe and conversion."""

    def __init__(self, op: hw.MatrixMoveOp, target: Target):
        self.name = _short_name(op)
        self.loc = _op_loc(op)
        self.rows, self.cols = op.block_shape()
        self.transposed = op.transposed
        self.src_type = _element_type(op.src)
        dst_type = _element_type(op.dst)
        self.convert_to = dst_type if dst_type != self.src_type else None
        self.path = (_space(op.src), _space(op.dst))
        self.pipe = _dma_pipe(target, self.path, self.loc)
        self.target = target
        self.fractal_rows = target.cube.fractal_m
        self.n_src = len(op.src_indices)

    def cost(self, source: _MatrixSide, destination: _MatrixSide) -> tuple[int, int]:
        """Cost of the bursts on the GM side (the source's when neither is GM)."""
        shape = (destination if self.path[1] == "gm" else source).accesses[0]
        result = dma_cost(
            self.target,
            self.path,
            shape.count,
            shape.length,
            shape.start,
            shape.start,
            shape.stride,
            shape.stride,
        )
        return result.cycles, result.wire_bytes


class _MmadPlan:
    def __init__(self, op: hw.MmadOp, target: Target):
        self.loc = _op_loc(op)
        self.mnk = op.mnk()
        self.accumulate = op.accumulate is not None
        in_type = _element_type(op.lhs)
        self.bf16 = in_type == bf16
        self.compute_dtype = _I32 if in_type == i8 else _F32
        self.cycles = mmad_cycles(target, *self.mnk, str(in_type))
        self.fractal_rows = target.cube.fractal_m


class _MatrixSide:
    """A rows x cols block of a GM memref or a buffer, as logical elements.

    `strides` are the byte strides of (row, column) for an nd side; an nz side
    (`c0` > 0) is viewed as (rows, column blocks, c0) with `block_pitch` bytes
    between column blocks.
    """

    __slots__ = (
        "accesses",
        "base",
        "block_pitch",
        "c0",
        "cols",
        "dtype",
        "mem",
        "rows",
        "strides",
    )

    def __init__(
        self,
        mem: np.ndarray,
        base: int,
        dtype: np.dtype[Any],
        block: tuple[int, int],
        accesses: tuple[Access, ...],
        strides: tuple[int, int] = (0, 0),
        c0: int = 0,
        block_pitch: int = 0,
    ):
        self.mem = mem
        self.base = base
        self.dtype = dtype
        self.rows, self.cols = block
        self.accesses = accesses
        self.strides = strides
        self.c0 = c0
        self.block_pitch = block_pitch

    def _view(self) -> np.ndarray:
        if not self.c0:
            return _strided(
                self.mem, self.base, (self.rows, self.cols), self.strides, self.dtype
            )
        e = self.dtype.itemsize
        shape = (self.rows, -(-self.cols // self.c0), self.c0)
        return _strided(
            self.mem, self.base, shape, (self.c0 * e, self.block_pitch, e), self.dtype
        )

    def read(self) -> np.ndarray:
        view = self._view()
        if not self.c0:
            return view
        return view.reshape(self.rows, -1)[:, : self.cols]

    def write(self, values: np.ndarray) -> None:
        view = self._view()
        if not self.c0:
            view[...] = values
            return
        full, rest = divmod(self.cols, self.c0)
        if full:
            view[:, :full, :] = values[:, : full * self.c0].reshape(
                self.rows, full, self.c0
            )
        if rest:
            view[:, full, :rest] = values[:, full * self.c0 :]


def _matrix_side(
    core: Core,
    side: Any,
    index: tuple[int, ...],
    block: tuple[int, int],
    fractal_rows: int,
    loc: str,
) -> _MatrixSide:
    """The `block` (rows, cols) of `side` at the last two indices of `index`."""
    rows, cols = block
    if isinstance(side, GmRef):
        if any(
            o + n > d
            for o, n, d in zip(index[-2:], block, side.shape[-2:], strict=True)
        ):
            raise AccessError(
                f"{_at(loc)}block {rows}x{cols} at {list(index[-2:])} does not fit "
                f"memref '{side.tensor.name}' of shape {list(side.shape)}",
                (loc,),
            )
        base = side.byte_address(index, loc)
        e = side.ebytes
        row_stride, col_stride = side.strides[-2] * e, side.strides[-1] * e
        tensor = side.tensor
        if col_stride == e:
            accesses: tuple[Access, ...] = (
                Access(tensor, base, cols * e, rows, row_stride),
            )
        else:
            accesses = tuple(
                Access(tensor, base + r * row_stride, e, cols, col_stride)
                for r in range(rows)
            )
        return _MatrixSide(
            tensor.bytes, base, side.dtype, block, accesses, (row_stride, col_stride)
        )
    if not isinstance(side, HwBuffer):
        raise HwRunError(
            f"{_at(loc)}expected a buffer or a GM memref, got {side!r}", (loc,)
        )
    info = side.info
    r0, c0 = index
    total_rows, total_cols = info.shape
    if r0 + rows > total_rows or c0 + cols > total_cols:
        raise AccessError(
            f"{_at(loc)}block {rows}x{cols} at {[r0, c0]} does not fit {side.type}",
            (loc,),
        )
    e = info.ebytes
    mem = core.memories[side.space]
    if not info.nz:
        base = side.address + (r0 * total_cols + c0) * e
        access = Access(side.space, base, cols * e, rows, total_cols * e)
        return _MatrixSide(mem, base, info.dtype, block, (access,), (total_cols * e, e))
    frac = info.c0
    if r0 % fractal_rows or c0 % frac:
        raise AccessError(
            f"{_at(loc)}nz block at {[r0, c0]} of {side.type} does not start on a "
            f"{fractal_rows}x{frac} fractal boundary",
            (loc,),
        )
    block_pitch = total_rows * frac * e
    base = side.address + ((c0 // frac) * total_rows + r0) * frac * e
    full, rest = divmod(cols, frac)
    accesses = ()
    if full:
        accesses += (Access(side.space, base, rows * frac * e, full, block_pitch),)
    if rest:
        accesses += (
            Access(side.space, base + full * block_pitch, rest * e, rows, frac * e),
        )
    return _MatrixSide(
        mem, base, info.dtype, block, accesses, c0=frac, block_pitch=block_pitch
    )


def _check_inside(buffer: HwBuffer, access: Access, loc: str) -> None:
    """The bursts of a DMA stay inside their buffer (the verifier checks it for
    static shapes; a subview made at run time can still be too small)."""
    if access.end > buffer.end:
        raise AccessError(
            f"{_at(loc)}{buffer.space} bytes [{access.start}, {access.end}) run past "
            f"the buffer [{buffer.address}, {buffer.end})",
            (loc,),
        )


# --------------------------------------------------------------------------------------
# The run-time state shared by the interpreter functions
# --------------------------------------------------------------------------------------


class HwRuntime:
    """The machine being run, the core executing now, and per-op caches."""

    def __init__(self, machine: Machine):
        self.machine = machine
        self.target = machine.target
        self.core: Core = machine.core(0)
        self.plans: dict[int, Any] = {}
        """Per-op data by `id(op)` (the module keeps its ops alive during a run;
        ids hash faster than ops, whose `__hash__` is Python code)."""
        self.locs: dict[Operation, str] = {}
        self.noted_allocs: set[tuple[int, Operation]] = set()
        self.scalar_ops: dict[Block, int] = {}
        self.workspaces: dict[Operation, Any] = {}
        """The GM workspace of each `memref.alloc`, shared by the cores."""
        self.threads: _CoreThreads | None = None
        """Set while the cores of a kernel with `sync_all` run epoch by epoch."""

    def loc(self, op: Operation) -> str:
        loc = self.locs.get(op)
        if loc is None:
            loc = self.locs[op] = _op_loc(op)
        return loc

    def scalar_work(self, block: Block) -> int:
        """Scalar ALU instructions of one run of `block`: its arith ops (not
        constants) and subviews, the address arithmetic of the kernel."""
        count = self.scalar_ops.get(block)
        if count is None:
            count = sum(
                isinstance(op, hw.SubviewOp)
                or (
                    op.dialect_name() == "arith"
                    and not isinstance(op, arith.ConstantOp)
                )
                for op in block.ops
            )
            self.scalar_ops[block] = count
        return count


# --------------------------------------------------------------------------------------
# Interpreter functions
# --------------------------------------------------------------------------------------


HwImpl = Callable[[Any, Interpreter, Any, PythonValues], PythonValues]

_HW_IMPLS: dict[type[Operation], HwImpl] = {}
"""The ascend_hw interpreter functions by op class, unwrapped: the scf.for fast
path (`_CompiledBlock`) calls them directly instead of through xDSL's dispatch."""


_ARITH_IMPLS: dict[type[Operation], HwImpl] = {}
"""The integer arith functions of `HwArithFunctions`, unwrapped, for the same
purpose (called with the `AscendHwFunctions` instance as `self`, unused)."""


def _arith_impl(op_type: type[Operation]) -> Callable[[HwImpl], Any]:
    """xDSL's `impl`, also recording the function in `_ARITH_IMPLS`."""

    def register(function: HwImpl) -> Any:
        _ARITH_IMPLS[op_type] = function
        return impl(op_type)(function)

    return register


def _hw_impl(op_type: type[Operation]) -> Callable[[HwImpl], Any]:
    """xDSL's `impl`, also recording the function in `_HW_IMPLS`."""

    def register(function: HwImpl) -> Any:
        _HW_IMPLS[op_type] = function
        return impl(op_type)(function)

    return register


class AscendHwFunctions(InterpreterFunctions):
    """Interpreter functions of every `ascend_hw` op, issuing to `runtime.core`.

    The vector ops are registered below the class, from one table per family.
    """

    def __init__(self, runtime: HwRuntime):
        self.runtime = runtime

    # --- buffers -----------------------------------------------------------------------

    @_hw_impl(hw.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: hw.AllocOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        buffer = runtime.plans.get(id(op))
        if buffer is None:
            buffer_type = cast(BufferType, op.result.type)
            space = str(buffer_type.memory_space)
            buffer = HwBuffer(space, op.byte_offset, buffer_type, runtime.target)
            runtime.plans[id(op)] = buffer
        key = (runtime.core.index, op)
        if key not in runtime.noted_allocs:
            runtime.noted_allocs.add(key)
            runtime.core.note_alloc(
                buffer.space, buffer.address, buffer.info.nbytes, runtime.loc(op)
            )
        return (buffer,)

    @_hw_impl(hw.SubviewOp)
    def run_subview(
        self, interpreter: Interpreter, op: hw.SubviewOp, args: PythonValues
    ) -> PythonValues:
        source = cast(HwBuffer, args[0])
        index = _indices(args[1:])
        views = self.runtime.plans.get(id(op))
        if views is None:
            views = self.runtime.plans[id(op)] = {}
        key = (source.address, index)
        buffer = views.get(key)
        if buffer is None:
            buffer = self._subview(op, source, index)
            if len(views) >= _INSTANCE_LIMIT:
                views.clear()
            views[key] = buffer
        return (buffer,)

    def _subview(
        self, op: hw.SubviewOp, source: HwBuffer, index: tuple[int, ...]
    ) -> HwBuffer:
        target = self.runtime.target
        loc = self.runtime.loc(op)
        result_type = cast(BufferType, op.result.type)
        if any(not 0 <= i < d for i, d in zip(index, source.info.shape, strict=True)):
            raise AccessError(
                f"{_at(loc)}subview index {list(index)} is outside the source shape "
                f"{list(source.info.shape)}",
                (loc,),
            )
        start = element_offset(source.type, index, target) * source.info.ebytes
        size = result_type.byte_size()
        if start + size > source.info.nbytes:
            raise AccessError(
                f"{_at(loc)}subview bytes [{start}, {start + size}) run past the "
                f"{source.info.nbytes} bytes of the source",
                (loc,),
            )
        alignment = target.memories[source.space].alignment
        if (source.address + start) % alignment:
            raise AccessError(
                f"{_at(loc)}subview starts at {source.space} byte "
                f"{source.address + start}, not a multiple of {alignment}",
                (loc,),
            )
        return HwBuffer(source.space, source.address + start, result_type, target)

    # --- cores ---------------------------------------------------------------------------

    @_hw_impl(hw.BlockIdxOp)
    def run_block_idx(
        self, interpreter: Interpreter, op: hw.BlockIdxOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        runtime.core.issue("S", "block_idx", runtime.loc(op), runtime.target.scalar.op)
        return (
            scalar_attr(runtime.core.index, IndexType(), interpreter.index_bitwidth),
        )

    @_hw_impl(hw.BlockDimOp)
    def run_block_dim(
        self, interpreter: Interpreter, op: hw.BlockDimOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        runtime.core.issue("S", "block_dim", runtime.loc(op), runtime.target.scalar.op)
        dim = runtime.machine.block_dim
        return (scalar_attr(dim, IndexType(), interpreter.index_bitwidth),)

    # --- synchronisation -------------------------------------------------------------

    @_hw_impl(hw.SetFlagOp)
    def run_set_flag(
        self, interpreter: Interpreter, op: hw.SetFlagOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        key, loc = runtime.plans.get(id(op)) or self._flag(op)
        runtime.core.set_flag_key(key, loc)
        return ()

    @_hw_impl(hw.WaitFlagOp)
    def run_wait_flag(
        self, interpreter: Interpreter, op: hw.WaitFlagOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        key, loc = runtime.plans.get(id(op)) or self._flag(op)
        runtime.core.wait_flag_key(key, loc)
        return ()

    def _flag(self, op: hw.FlagOp) -> tuple[tuple[int, int, int], str]:
        """The op's checked event key (EventError at the op if bad) and its loc."""
        runtime = self.runtime
        loc = _op_loc(op)
        key = runtime.core.event_key(
            str(op.src_pipe), str(op.dst_pipe), op.event_id, loc
        )
        plan = runtime.plans[id(op)] = (key, loc)
        return plan

    @_hw_impl(hw.PipeBarrierOp)
    def run_pipe_barrier(
        self, interpreter: Interpreter, op: hw.PipeBarrierOp, args: PythonValues
    ) -> PythonValues:
        self.runtime.core.barrier(str(op.pipe), self.runtime.loc(op))
        return ()

    @_hw_impl(hw.SyncAllOp)
    def run_sync_all(
        self, interpreter: Interpreter, op: hw.SyncAllOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        runtime.core.sync_all(runtime.loc(op))
        if runtime.threads is not None:  # the other cores run up to it first
            runtime.threads.sync_all()
        return ()

    # --- burst DMA -----------------------------------------------------------------------

    @_hw_impl(hw.DmaLoadOp)
    def run_dma_load(
        self, interpreter: Interpreter, op: hw.DmaLoadOp, args: PythonValues
    ) -> PythonValues:
        index = _indices(args[1:-1])
        return self._burst_dma(op, args[0], index, args[-1], ())

    @_hw_impl(hw.DmaStoreOp)
    def run_dma_store(
        self, interpreter: Interpreter, op: hw.DmaStoreOp, args: PythonValues
    ) -> PythonValues:
        index = _indices(args[2:])
        return self._burst_dma(op, args[0], (), args[1], index)

    @_hw_impl(hw.DmaCopyOp)
    def run_dma_copy(
        self, interpreter: Interpreter, op: hw.DmaCopyOp, args: PythonValues
    ) -> PythonValues:
        return self._burst_dma(op, args[0], (), args[1], ())

    def _burst_dma(
        self,
        op: hw.BurstDmaOp,
        src: Any,
        src_index: tuple[int, ...],
        dst: Any,
        dst_index: tuple[int, ...],
    ) -> PythonValues:
        """Burst b copies `burst_bytes` from src + b * src_pitch to dst + b * dst_pitch."""
        runtime = self.runtime
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _BurstPlan(op, runtime.target)
        core = runtime.core
        src_access = plan.access(src, src_index, plan.src_pitch, plan.src_sides)
        dst_access = plan.access(dst, dst_index, plan.dst_pitch, plan.dst_sides)
        src_mem, src_addr = src_access.mem, src_access.start
        dst_mem, dst_addr = dst_access.mem, dst_access.start
        bursts, length, loc = plan.bursts, plan.length, plan.loc
        cycles, wire = plan.cost(src_addr, dst_addr)
        core.issue_planned(
            plan.pipe_index,
            plan.name,
            loc,
            cycles,
            (src_access,),
            (dst_access,),
            plan.path_info,
            bursts * length,
            wire,
        )
        if bursts == 1:
            src_view = core.byte_view(src_mem)
            dst_view = core.byte_view(dst_mem)
            if src_view is not None and dst_view is not None:
                # memoryview slices copy a short burst in half numpy's time
                dst_view[dst_addr : dst_addr + length] = src_view[
                    src_addr : src_addr + length
                ]
                return ()
        src_bytes = _bytes_of(core, src_mem)
        dst_bytes = _bytes_of(core, dst_mem)
        shape = (bursts, length)
        _strided(dst_bytes, dst_addr, shape, (plan.dst_pitch, 1), _U8)[...] = _strided(
            src_bytes, src_addr, shape, (plan.src_pitch, 1), _U8
        )
        return ()

    # --- matrix moves ----------------------------------------------------------------------

    @_hw_impl(hw.Nd2NzOp)
    def run_nd2nz(
        self, interpreter: Interpreter, op: hw.Nd2NzOp, args: PythonValues
    ) -> PythonValues:
        return self._matrix_move(op, args)

    @_hw_impl(hw.LoadL0Op)
    def run_load_l0(
        self, interpreter: Interpreter, op: hw.LoadL0Op, args: PythonValues
    ) -> PythonValues:
        return self._matrix_move(op, args)

    @_hw_impl(hw.FixpipeOp)
    def run_fixpipe(
        self, interpreter: Interpreter, op: hw.FixpipeOp, args: PythonValues
    ) -> PythonValues:
        return self._matrix_move(op, args)

    def _matrix_move(self, op: hw.MatrixMoveOp, args: PythonValues) -> PythonValues:
        """dst[d0 + r, d1 + c] = convert(src[s0 + r, s1 + c]) (or src[s0 + c, s1 + r])."""
        runtime = self.runtime
        core = runtime.core
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _MatrixPlan(op, runtime.target)
        n_src = plan.n_src
        src, dst = args[0], args[1 + n_src]
        src_index = _indices(args[1 : 1 + n_src])
        dst_index = _indices(args[2 + n_src :])
        rows, cols = plan.rows, plan.cols
        src_block = (cols, rows) if plan.transposed else (rows, cols)
        frac, loc = plan.fractal_rows, plan.loc
        source = _matrix_side(core, src, src_index, src_block, frac, loc)
        destination = _matrix_side(core, dst, dst_index, (rows, cols), frac, loc)
        cycles, wire = plan.cost(source, destination)
        core.issue(
            plan.pipe,
            plan.name,
            loc,
            cycles,
            reads=source.accesses,
            writes=destination.accesses,
            path=plan.path,
            nbytes=sum(a.nbytes for a in destination.accesses),
            wire_bytes=wire,
        )
        values = source.read()
        if plan.transposed:
            values = values.T
        if plan.convert_to is not None:
            values = convert(values, plan.src_type, plan.convert_to, RoundMode.RINT)
        destination.write(values)
        return ()

    # --- cube ----------------------------------------------------------------------------------

    @_hw_impl(hw.MmadOp)
    def run_mmad(
        self, interpreter: Interpreter, op: hw.MmadOp, args: PythonValues
    ) -> PythonValues:
        """C[:m, :n] = (C if accumulate else 0) + A[:m, :k] @ B[:k, :n] in f32 (i32)."""
        runtime = self.runtime
        core = runtime.core
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _MmadPlan(op, runtime.target)
        m, n, k = plan.mnk
        frac, loc = plan.fractal_rows, plan.loc
        a = _matrix_side(core, args[0], (0, 0), (m, k), frac, loc)
        b = _matrix_side(core, args[1], (0, 0), (k, n), frac, loc)
        c = _matrix_side(core, args[2], (0, 0), (m, n), frac, loc)
        reads = a.accesses + b.accesses + (c.accesses if plan.accumulate else ())
        core.issue("M", "mmad", loc, plan.cycles, reads=reads, writes=c.accesses)
        left, right = a.read(), b.read()
        if plan.bf16:
            left, right = bf16_values(left), bf16_values(right)
        compute = plan.compute_dtype
        result = left.astype(compute) @ right.astype(compute)
        if plan.accumulate:
            result = c.read() + result
        c.write(result)
        return ()

    # --- vector ------------------------------------------------------------------------------

    def run_vector(
        self,
        op: hw.VectorOp,
        operands: Sequence[HwBuffer],
        kernel: VectorKernel,
        scalar: Any = None,
    ) -> PythonValues:
        """Issue a vector op and run `kernel` on its repeats.

        `operands`: the lane-addressed buffers in `lane_operands()` order, then
        the buffers addressed per repeat (see `_side_patterns`).
        """
        runtime = self.runtime
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _vector_plan(op, runtime.target)
        core = runtime.core
        key = (core.index, *[b.address for b in operands])
        call = plan.calls.get(key)
        if call is None:
            call = _vector_call(plan, core, operands, None)
            if len(plan.calls) >= _INSTANCE_LIMIT:
                plan.calls.clear()
            plan.calls[key] = call
        core.issue_planned(
            _V,
            plan.name,
            plan.loc,
            call.cycles,
            call.reads,
            call.writes,
            bank_cycles=call.bank_cycles,
        )
        _run_repeats(plan, call, kernel, scalar)
        return ()

    def run_vgather(
        self, interpreter: Interpreter, op: hw.VGatherOp, args: PythonValues
    ) -> PythonValues:
        """dst lane = element at byte offsets[i * lanes + l] of src (data-dependent reads)."""
        runtime = self.runtime
        src, offsets, dst = cast(tuple[HwBuffer, HwBuffer, HwBuffer], args)
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _vector_plan(op, runtime.target)
        core = runtime.core
        call = _vector_call(plan, core, (dst, offsets), (src.address, src.end))
        dst_lanes, offset_lanes = call.operands
        for access in call.reads:
            core.check_initialized(access, plan.loc)
        byte_offsets = _gather_offsets(plan, offset_lanes, src, 0, plan.repeat)
        e = plan.dtypes[0].itemsize
        touched = make_pattern(np.unique(byte_offsets) // e, 0, 1, e)
        reads = call.reads + touched.accesses(src.space, src.address)
        core.issue(
            "V",
            plan.name,
            plan.loc,
            call.cycles,
            reads=reads,
            writes=call.writes,
            bank_cycles=call.bank_cycles,
        )
        elements = core.memories[src.space].view(plan.dtypes[0])
        base = src.address // e
        if not call.sequential:
            dst_lanes.write(0, plan.repeat, elements[base + byte_offsets // e])
            return ()
        # dst overlaps src or the offsets: each repeat sees the ones before it.
        for i in range(plan.repeat):
            offsets_i = _gather_offsets(plan, offset_lanes, src, i, i + 1)
            dst_lanes.write(i, i + 1, elements[base + offsets_i // e])
        return ()


def _gather_offsets(
    plan: _VectorPlan, offsets: _Lanes, src: HwBuffer, lo: int, hi: int
) -> np.ndarray:
    """The byte offsets of repeats [lo, hi) of a vgather, checked: multiples of the
    element size inside the source buffer."""
    byte_offsets = offsets.read(lo, hi).astype(np.int64)
    e = plan.dtypes[0].itemsize
    bad = (
        (byte_offsets < 0)
        | (byte_offsets % e != 0)
        | (byte_offsets > src.info.nbytes - e)
    )
    if bad.any():
        first = int(byte_offsets[bad][0])
        raise AccessError(
            f"{_at(plan.loc)}gather offset {first} is not a multiple of {e} inside "
            f"the {src.info.nbytes} bytes of {src.type}",
            (plan.loc,),
        )
    return byte_offsets


def _run_repeats(
    plan: _VectorPlan, call: _VectorCall, kernel: VectorKernel, scalar: Any
) -> None:
    call.scalar = scalar
    if call.sequential:
        for i in range(plan.repeat):
            kernel(plan, call, i, i + 1)
    else:
        kernel(plan, call, 0, plan.repeat)


def _bytes_of(core: Core, mem: str | GmTensor) -> np.ndarray:
    return mem.bytes if type(mem) is GmTensor else core.memories[mem]


def _register_vector_family(
    op_types: Sequence[type[hw.VectorOp]],
    make_kernel: Callable[[hw.VectorOp], VectorKernel],
    operands: Callable[[PythonValues], tuple[Sequence[HwBuffer], Any]],
    element_type_of_scalar: Callable[[hw.VectorOp], Attribute] | None = None,
) -> None:
    """Register one interpreter function per op of a vector family.

    `operands(args)` orders the op's run-time operands as `run_vector` wants them
    and picks the scalar operand; `make_kernel(op)` builds the kernel (once per
    op: kernels depend on the op's class and properties only).
    """
    kernels: dict[int, tuple[Operation, VectorKernel]] = {}
    """id(op) -> (op, its kernel); the op is kept so that its id is not reused."""

    def run(
        self: AscendHwFunctions,
        interpreter: Interpreter,
        op: hw.VectorOp,
        args: PythonValues,
    ) -> PythonValues:
        entry = kernels.get(id(op))
        if entry is not None and entry[0] is op:
            kernel = entry[1]
        else:
            kernel = make_kernel(op)
            kernels[id(op)] = (op, kernel)
        buffers, scalar = operands(args)
        if scalar is not None and element_type_of_scalar is not None:
            scalar = scalar_value(scalar, element_type_of_scalar(op))
        return self.run_vector(op, buffers, kernel, scalar)

    for op_type in op_types:
        name = "run_" + op_type.name.removeprefix("ascend_hw.")
        setattr(AscendHwFunctions, name, _hw_impl(op_type)(run))


def _dst_type(op: hw.VectorOp) -> Attribute:
    return _element_type(cast(Any, op).dst)


def _src_type(op: hw.VectorOp) -> Attribute:
    return _element_type(cast(Any, op).src)


_register_vector_family(
    tuple(_BINARY),
    lambda op: _elementwise_kernel(_BINARY[type(op)], 2),
    lambda args: (args, None),
)
_register_vector_family(
    tuple(_SCALAR),
    lambda op: _elementwise_kernel(_SCALAR[type(op)], 1),
    lambda args: ((args[0], args[2]), args[1]),
    _dst_type,
)
_register_vector_family(
    tuple(_UNARY),
    lambda op: _elementwise_kernel(_UNARY[type(op)], 1),
    lambda args: (args, None),
)
_register_vector_family((hw.VCopyOp,), lambda op: _copy_kernel, lambda a: (a, None))
_register_vector_family(
    (hw.VCastOp,),
    lambda op: _cast_kernel(cast(hw.VCastOp, op).round.data),
    lambda args: (args, None),
)
_register_vector_family(
    tuple(_REDUCE),
    lambda op: _reduce_kernel(_REDUCE[type(op)]),
    lambda args: (args, None),
)
_register_vector_family(
    (hw.VDupOp,), lambda op: _dup_kernel, lambda a: ((a[1],), a[0]), _dst_type
)
_register_vector_family(
    (hw.VBrcbOp,), lambda op: _brcb_kernel, lambda a: ((a[1], a[0]), None)
)
_register_vector_family(
    (hw.VCmpOp,),
    lambda op: _compare_kernel(cast(hw.VCmpOp, op).cmp.data),
    lambda args: (args, None),
)
_register_vector_family(
    (hw.VCmpsOp,),
    lambda op: _compare_kernel(cast(hw.VCmpsOp, op).cmp.data),
    lambda a: ((a[0], a[2]), a[1]),
    _src_type,
)
_register_vector_family(
    (hw.VSelectOp,),
    lambda op: _select_kernel,
    lambda a: ((a[1], a[2], a[3], a[0]), None),
)
AscendHwFunctions.run_vgather = _hw_impl(hw.VGatherOp)(  # type: ignore[method-assign]
    AscendHwFunctions.run_vgather
)
register_impls(AscendHwFunctions)


def _integer_op(
    interpreter: Interpreter,
    op: Operation,
    args: PythonValues,
    fn: Callable[[int, int], int],
    signed: bool,
) -> PythonValues:
    """An integer/index binary op on the operands read as signed or unsigned."""
    result_type = op.results[0].type
    if type(result_type) is IndexType:  # the usual case; isinstance on ABCs is slow
        bitwidth = interpreter.index_bitwidth
    elif isinstance(result_type, IntegerType):
        bitwidth = result_type.width.data
    else:
        bitwidth = interpreter.index_bitwidth
    first, second = args
    lhs, rhs = first.value.data, second.value.data
    # to_signed / to_unsigned, skipped for values already in their range
    if signed:
        half = 1 << (bitwidth - 1)
        if not -half <= lhs < half:
            lhs = to_signed(lhs, bitwidth)
        if not -half <= rhs < half:
            rhs = to_signed(rhs, bitwidth)
    else:
        full = 1 << bitwidth
        if not 0 <= lhs < full:
            lhs = to_unsigned(lhs, bitwidth)
        if not 0 <= rhs < full:
            rhs = to_unsigned(rhs, bitwidth)
    try:
        value = fn(lhs, rhs)
    except ZeroDivisionError:
        raise HwRunError(
            f"{_at(_op_loc(op))}division by zero", (_op_loc(op),)
        ) from None
    return (_int_attr(value, result_type, interpreter.index_bitwidth),)


_new_object = object.__new__


def _int_attr(value: int, value_type: Attribute, bitwidth: int) -> IntegerAttr:
    """`scalar_attr` of an integer: the same attribute, made without xDSL's checks.

    An index value is made for every loop iteration and address computation, and
    `IntegerAttr(...)` (parameter verification, normalisation) costs more than
    the instruction it indexes. A value its storage type holds as it is needs no
    normalisation and passes verification, so its two attributes are assembled
    directly (as `ParametrizedAttribute.new` does, without `__post_init__`);
    other values go through `IntegerAttr`.
    """
    storage, lo, hi = _int_storage(value_type, bitwidth)
    if not lo <= value < hi:
        return IntegerAttr(value, storage, truncate_bits=True)
    data = _new_object(IntAttr)
    data.__dict__["data"] = value
    attr = _new_object(IntegerAttr)
    fields = attr.__dict__
    fields["value"] = data
    fields["type"] = storage
    return attr


@cache
def _int_storage(value_type: Attribute, bitwidth: int) -> tuple[IntegerType, int, int]:
    """The integer type `scalar_attr` stores an index or integer value as, and the
    values [lo, hi) it keeps unchanged (`IntegerType.normalized_value`)."""
    if isinstance(value_type, IndexType):
        value_type = IntegerType(bitwidth)
    assert isinstance(value_type, IntegerType)
    width = value_type.width.data
    if value_type.signedness.data == Signedness.UNSIGNED:
        return value_type, 0, 1 << width
    return value_type, -(1 << (width - 1)), 1 << (width - 1)


def _ceil_div(lhs: int, rhs: int) -> int:
    return -(-lhs // rhs)


_INTEGER_OPS: dict[type[Operation], tuple[Callable[[int, int], int], bool]] = {
    arith.AddiOp: (int.__add__, True),
    arith.SubiOp: (int.__sub__, True),
    arith.MuliOp: (int.__mul__, True),
    arith.DivUIOp: (int.__floordiv__, False),
    arith.RemUIOp: (int.__mod__, False),
    arith.CeilDivUIOp: (_ceil_div, False),
    arith.CeilDivSIOp: (_ceil_div, True),
    arith.MinUIOp: (min, False),
    arith.MaxUIOp: (max, False),
    arith.MinSIOp: (min, True),
    arith.MaxSIOp: (max, True),
}
"""The integer ops of `HwArithFunctions`: op class -> (the function of the two
operand values, whether they are read as signed)."""


class HwArithFunctions(ArithFunctions):
    """xDSL's arith functions plus the unsigned and min/max integer ops kernels use
    for index arithmetic (divui, remui, ceildiv, min, max); addi, subi and muli
    with cached result attributes (one function per op of `_INTEGER_OPS`)."""


def _integer_impl(fn: Callable[[int, int], int], signed: bool) -> HwImpl:
    """The interpreter function of an op of `_INTEGER_OPS`."""

    def run(
        self: HwArithFunctions,
        interpreter: Interpreter,
        op: Operation,
        args: PythonValues,
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, fn, signed)

    return run


for _op_type, (_fn, _signed) in _INTEGER_OPS.items():
    setattr(
        HwArithFunctions,
        "run_" + _op_type.name.removeprefix("arith."),
        _arith_impl(_op_type)(_integer_impl(_fn, _signed)),
    )
register_impls(HwArithFunctions)


def _getter(slots: Sequence[int]) -> Callable[[list[Any]], tuple]:
    """A function reading the values in `slots` of an environment, as a tuple."""
    if not slots:
        return lambda env: ()
    if len(slots) == 1:
        (slot,) = slots
        return lambda env: (env[slot],)
    return itemgetter(*slots)


class _CompiledBlock:
    """An `scf.for` body prepared for running many times without xDSL's per-op
    dispatch (a scope per iteration, environment lookups through the scope chain,
    result checks): ascend_hw ops and the integer arith ops call their interpreter
    functions directly, the other ops go through `Interpreter.run_op`, in a scope
    holding the body's values when they have regions.

    Values live in a list (an environment) indexed by slot: the values from
    outside the body first, then the block arguments, then each op's results. It
    is kept across iterations (each iteration redefines every value the body
    defines before using it)."""

    def __init__(
        self, block: Block, functions: AscendHwFunctions, interpreter: Interpreter
    ):
        self.interpreter = interpreter
        self.args = tuple(block.args)
        ops = list(block.ops)
        terminator = ops.pop()
        defined: set[SSAValue] = set(block.args)
        outer: dict[SSAValue, None] = {}
        for op in [*ops, terminator]:
            for value in op.operands:
                if value not in defined:
                    outer[value] = None
            defined.update(op.results)
        self.outer = tuple(outer)
        values = [*self.outer, *self.args]
        for op in ops:
            values.extend(op.results)
        self.values = tuple(values)
        """The SSA value of each slot."""
        slot = {value: i for i, value in enumerate(values)}
        self.first_arg = len(self.outer)
        steps = []
        defined_slots = len(self.outer) + len(self.args)
        for op in ops:
            function = _HW_IMPLS.get(type(op)) or _ARITH_IMPLS.get(type(op))
            steps.append(
                (
                    op,
                    None
                    if function is None
                    else partial(function, functions, interpreter, op),
                    _getter([slot[v] for v in op.operands]),
                    tuple(slot[r] for r in op.results),
                    defined_slots if op.regions else 0,
                )
            )
            defined_slots += len(op.results)
        self.steps = tuple(steps)
        self.yielded = _getter([slot[v] for v in terminator.operands])

    def environment(self, interpreter: Interpreter) -> list[Any]:
        """A new environment holding the values from outside the body."""
        env: list[Any] = [None] * len(self.values)
        env[: len(self.outer)] = interpreter.get_values(self.outer)
        return env

    def run(self, env: list[Any]) -> tuple:
        """Run the ops once; returns the values the terminator yields."""
        interpreter = self.interpreter
        op: Operation | None = None
        try:
            for op, call, get, results, nested in self.steps:
                inputs = get(env)
                if call is not None:  # the op's function with its first arguments
                    outputs = call(inputs)
                elif nested:
                    interpreter.push_scope("for_body")
                    interpreter.set_values(
                        zip(self.values[:nested], env[:nested], strict=True)
                    )
                    try:
                        outputs = interpreter.run_op(op, inputs)
                    finally:
                        interpreter.pop_scope()
                else:
                    outputs = interpreter.run_op(op, inputs)
                if results:
                    for slot, value in zip(results, outputs, strict=True):
                        env[slot] = value
        except SimError:
            raise
        except Exception as error:
            assert op is not None
            raise _execution_error(op, error) from error
        return self.yielded(env)


def _execution_error(op: Operation, error: Exception) -> HwRunError:
    loc = _op_loc(op)
    message = str(error).split("\n")[0] or type(error).__name__
    return HwRunError(f"{_at(loc)}cannot execute '{op.name}': {message}", (loc,))


@register_impls
class HwScfFunctions(ScfFunctions):
    """`scf` with `scf.for` bodies run by `_CompiledBlock` and the scalar unit's
    work accounted: each iteration costs its body's address arithmetic plus one
    loop-control instruction."""

    def __init__(self, runtime: HwRuntime, functions: AscendHwFunctions):
        self.runtime = runtime
        self.functions = functions
        self.blocks: dict[Block, _CompiledBlock] = {}

    @impl(scf.ForOp)
    def run_for(
        self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues
    ) -> PythonValues:
        lb, ub, step, *loop_args = args
        runtime = self.runtime
        body = op.body.block
        compiled = self.blocks.get(body)
        if compiled is None:
            compiled = self.blocks[body] = _CompiledBlock(
                body, self.functions, interpreter
            )
        work = runtime.scalar_work(body) + 1
        index_type = compiled.args[0].type
        bitwidth = interpreter.index_bitwidth
        env = compiled.environment(interpreter)
        index = compiled.first_arg
        carried = slice(index + 1, index + len(compiled.args))
        n_carried = len(compiled.args) - 1
        values = tuple(loop_args)
        run = compiled.run
        for i in range(lb.value.data, ub.value.data, step.value.data):
            runtime.core.scalar(work)
            env[index] = _int_attr(i, index_type, bitwidth)
            if n_carried:
                if len(values) != n_carried:  # verified IR never has it
                    raise ValueError(
                        f"{len(values)} values yielded for {n_carried} carried ones"
                    )
                env[carried] = values
            values = run(env)
        return values


# --------------------------------------------------------------------------------------
# Running a kernel
# --------------------------------------------------------------------------------------


class _HwInterpreter(Interpreter):
    """An interpreter that reports a failing op by its location: any error that is
    not already a simulator error becomes an `HwRunError` at the op."""

    def _run_op(self, op: Operation, inputs: PythonValues) -> OpImplResult:
        try:
            return super()._run_op(op, inputs)
        except SimError:
            raise
        except Exception as error:
            raise _execution_error(op, error) from error


def hw_interpreter(module: ModuleOp, runtime: HwRuntime) -> Interpreter:
    """An interpreter of `module` with ascend_hw, scf, arith, math, func, builtin
    and the memref ops on GM that tv-to-tile emits (`interp.hw_gm_memref`)."""
    from pypto_mlir.interp.hw_gm_memref import HwGmMemRefFunctions  # imports this
    from pypto_mlir.interp.scalar_casts import ScalarCastFunctions

    interpreter = _HwInterpreter(module, index_bitwidth=64)
    hw_functions = AscendHwFunctions(runtime)
    for functions in (
        HwArithFunctions(),
        ScalarCastFunctions(),
        BuiltinFunctions(),
        FuncFunctions(),
        MathFunctions(),
        HwGmMemRefFunctions(runtime),
        HwScfFunctions(runtime, hw_functions),
        hw_functions,
    ):
        interpreter.register_implementations(functions)
    return interpreter


@dataclass
class HwRunResult:
    """What `run_hw_function` returns: the GM memref arguments after the run (the
    arrays passed in, written in place) and the simulator's report."""

    outputs: list[np.ndarray]
    report: Report
    records: int = 0
    """Records issued to the simulator: instructions, flags and barriers."""
    interpret_seconds: float = 0.0
    """Wall time of executing the kernel and issuing its records."""
    finish_seconds: float = 0.0
    """Wall time of `Machine.finish()`: replay, race detection, report."""


class _Abandoned(BaseException):
    """Unwinds the thread of a core whose run was stopped (a BaseException, so
    that no handler of the interpreter turns it into an error of the op)."""


class _CoreThreads:
    """The cores of a kernel with `sync_all`, each calling the kernel in a thread
    of its own, one thread running at a time, epoch by epoch: every core runs to
    its next sync_all (or its end), core 0 first, before any goes past it. So
    what a core writes to GM before a sync_all is there when any core reads it
    after (program order per core, as without barriers).

    When some cores finish while others wait at a sync_all, the waiting cores
    are stopped there: `Machine.finish()` reports the deadlock.
    """

    def __init__(self, runtime: HwRuntime, run_core: Callable[[int], None]):
        self.runtime = runtime
        self.run_core = run_core
        cores = runtime.machine.block_dim
        self.turn = Condition()
        self.current: int | None = None
        """The core whose thread may run; None: the scheduler's."""
        self.stopping = False
        self.done = [False] * cores
        self.error: BaseException | None = None

    def run(self) -> None:
        cores = len(self.done)
        threads = [
            Thread(target=self._main, args=(c,), daemon=True) for c in range(cores)
        ]
        for thread in threads:
            thread.start()
        try:
            while not all(self.done):
                for c in range(cores):
                    if not self.done[c]:
                        self._hand(c)
                        if self.error is not None:
                            raise self.error
                if any(self.done):
                    break  # the others wait at a sync_all these never reach
        finally:
            self.stopping = True
            for c in range(cores):
                if threads[c].is_alive() and not self.done[c]:
                    self._hand(c)
            for thread in threads:
                thread.join()

    def sync_all(self) -> None:
        """In a core's thread: let the other cores run up to this barrier."""
        core = self.current
        assert core is not None
        self._give_back()
        self._wait_turn(core)

    def _main(self, core: int) -> None:
        try:
            self._wait_turn(core)
            with np.errstate(all="ignore"):  # numpy's error state is per thread
                self.run_core(core)
        except _Abandoned:
            pass
        except BaseException as error:  # raised again by the scheduler
            self.error = error
        finally:
            self.done[core] = True
            self._give_back()

    def _hand(self, core: int) -> None:
        """Run `core`'s thread until it reaches a sync_all or ends."""
        self.runtime.core = self.runtime.machine.core(core)
        with self.turn:
            self.current = core
            self.turn.notify_all()
            while self.current is not None:
                self.turn.wait()

    def _give_back(self) -> None:
        with self.turn:
            self.current = None
            self.turn.notify_all()

    def _wait_turn(self, core: int) -> None:
        with self.turn:
            while self.current != core:
                self.turn.wait()
        if self.stopping:
            raise _Abandoned


def declared_block_dim(func_op: func.FuncOp) -> int | None:
    """The `ascend_hw.block_dim` attribute of a kernel, if it declares one."""
    attr = func_op.attributes.get(BLOCK_DIM_ATTR)
    if attr is None:
        return None
    if not isinstance(attr, IntegerAttr):
        raise HwRunError(
            f"{_at(_op_loc(func_op))}{BLOCK_DIM_ATTR} must be an integer, got {attr}",
            (_op_loc(func_op),),
        )
    return attr.value.data


def _gm_argument(
    machine: Machine,
    name: str,
    array: Any,
    memref: MemRefType,
    what: str,
    loc: str,
) -> tuple[GmRef, np.ndarray, Callable[[], None] | None]:
    """A GM memref argument: (its GmRef, the array to return, a write-back)."""
    if not isinstance(array, np.ndarray):
        raise HwRunError(f"{_at(loc)}{what} is a {memref}: pass a numpy array", (loc,))
    element_type = memref.element_type
    dtype = storage_dtype(element_type)
    data = array
    write_back = None
    if element_type == bf16 and array.dtype == np.float32:
        data = bf16_bits(array)
        write_back = lambda: np.copyto(array, bf16_values(data))  # noqa: E731
    elif array.dtype != dtype:
        expected = (
            "float32 (bf16 values) or uint16 (bf16 bits)"
            if element_type == bf16
            else dtype
        )
        raise HwRunError(
            f"{_at(loc)}{what} is a {memref}: expected a {expected} array, "
            f"got {array.dtype}",
            (loc,),
        )
    elif not array.flags.c_contiguous:
        data = np.ascontiguousarray(array)
        write_back = lambda: np.copyto(array, data)  # noqa: E731
    shape = memref.get_shape()
    layout = memref.layout
    if isinstance(layout, StridedLayoutAttr):
        strides = layout.get_strides()
        offset = layout.get_offset()
        if offset is None or any(s is None for s in strides):
            raise HwRunError(
                f"{_at(loc)}{what}: dynamic offsets and strides of {memref} are not "
                "supported at run time",
                (loc,),
            )
        if any(d == DYNAMIC_INDEX for d in shape):
            raise HwRunError(
                f"{_at(loc)}{what}: a strided {memref} needs a static shape", (loc,)
            )
        need = (
            offset
            + sum((d - 1) * cast(int, s) for d, s in zip(shape, strides, strict=True))
            + 1
        )
        if data.size < need:
            raise HwRunError(
                f"{_at(loc)}{what} is a {memref}, which indexes {need} elements; "
                f"the array has {data.size}",
                (loc,),
            )
        ref_shape, ref_strides = shape, tuple(cast(int, s) for s in strides)
    else:
        if len(shape) != array.ndim or any(
            d != DYNAMIC_INDEX and d != n
            for d, n in zip(shape, array.shape, strict=True)
        ):
            raise HwRunError(
                f"{_at(loc)}{what} is a {memref}: got an array of shape "
                f"{list(array.shape)}",
                (loc,),
            )
        ref_shape = array.shape
        ref_strides = tuple(prod(array.shape[d + 1 :]) for d in range(len(array.shape)))
        offset = 0
    tensor = machine.register_gm(name, data)
    ref = GmRef(tensor, tuple(ref_shape), ref_strides, offset, dtype)
    return ref, array, write_back


def _scalar_argument(value: Any, arg_type: Attribute, what: str, loc: str) -> Any:
    if isinstance(arg_type, IndexType | IntegerType):
        if isinstance(value, IntegerAttr):
            return value
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise HwRunError(f"{_at(loc)}{what} is {arg_type}: pass an integer", (loc,))
        return scalar_attr(int(value), arg_type, 64)
    if isinstance(arg_type, AnyFloat):
        if isinstance(value, FloatAttr):
            return value
        if not isinstance(value, int | float | np.floating | np.integer):
            raise HwRunError(f"{_at(loc)}{what} is {arg_type}: pass a number", (loc,))
        if isinstance(arg_type, BFloat16Type):
            value = float(bf16_values(bf16_bits(np.array([value])))[0])
        return FloatAttr(float(value), arg_type)
    raise HwRunError(f"{_at(loc)}{what} has unsupported type {arg_type}", (loc,))


def run_hw_function(
    module: ModuleOp,
    name: str,
    args: Sequence[Any],
    target: Target,
    block_dim: int | None = None,
) -> HwRunResult:
    """Run kernel `name` of `module` on `block_dim` cores of `target`.

    `args`: a numpy array per memref argument (GM; written in place), a number per
    index/integer/float argument. `block_dim` defaults to the function's
    `ascend_hw.block_dim` attribute, else 1. Each core runs the function with its
    own `block_idx`, one after the other (epoch by epoch when the kernel has
    `sync_all`: every core up to its next sync_all before any goes past it);
    `Machine.finish()` then replays every record. Raises `SimError` (races, deadlocks, out-of-range and uninitialised
    accesses, bad arguments...) whose `locs` name the ops involved.
    """
    func_op = SymbolTable.lookup_symbol(module, name)
    if not isinstance(func_op, func.FuncOp):
        raise HwRunError(f"no function @{name} in the module")
    loc = _op_loc(func_op)
    arg_types = func_op.function_type.inputs.data
    if len(args) != len(arg_types):
        raise HwRunError(
            f"{_at(loc)}@{name} takes {len(arg_types)} arguments, got {len(args)}",
            (loc,),
        )
    if block_dim is None:
        block_dim = declared_block_dim(func_op) or 1
    if not 1 <= block_dim <= target.cores:
        raise HwRunError(
            f"{_at(loc)}block_dim {block_dim} is not in 1..{target.cores} "
            f"(cores of {target.name})",
            (loc,),
        )
    machine = Machine(target, block_dim)
    runtime_args: list[Any] = []
    outputs: list[np.ndarray] = []
    write_backs: list[Callable[[], None]] = []
    block_args = func_op.body.block.args
    for i, (value, arg_type) in enumerate(zip(args, arg_types, strict=True)):
        arg_name = block_args[i].name_hint or f"arg{i}"
        what = f"argument #{i} (%{arg_name})"
        if isinstance(arg_type, MemRefType):
            ref, array, write_back = _gm_argument(
                machine,
                arg_name if arg_name not in machine._gm_by_name else f"{arg_name}.{i}",
                value,
                arg_type,
                what,
                loc,
            )
            runtime_args.append(ref)
            outputs.append(array)
            if write_back is not None:
                write_backs.append(write_back)
        else:
            runtime_args.append(_scalar_argument(value, arg_type, what, loc))
    runtime = HwRuntime(machine)
    interpreter = hw_interpreter(module, runtime)
    entry_work = runtime.scalar_work(func_op.body.block)
    start = perf_counter()
    with np.errstate(all="ignore"), gc_paused():
        if block_dim > 1 and any(isinstance(op, hw.SyncAllOp) for op in module.walk()):
            interpreters = [interpreter] + [
                hw_interpreter(module, runtime) for _ in range(block_dim - 1)
            ]

            def run_core(block_idx: int) -> None:
                runtime.core.scalar(entry_work)
                interpreters[block_idx].call_op(func_op, tuple(runtime_args))

            runtime.threads = _CoreThreads(runtime, run_core)
            try:
                runtime.threads.run()
            finally:
                runtime.threads = None
        else:
            for block_idx in range(block_dim):
                runtime.core = machine.core(block_idx)
                runtime.core.scalar(entry_work)
                interpreter.call_op(func_op, tuple(runtime_args))
        records = len(machine.records)
        interpreted = perf_counter()
        report = machine.finish()
        finished = perf_counter()
    for write_back in write_backs:
        write_back()
    return HwRunResult(
        outputs, report, records, interpreted - start, finished - interpreted
    )
