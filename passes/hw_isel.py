"""Instruction selection for `tile-to-hw`: each tile op becomes ascend_hw instructions.

The valid extents of every tile are static here (`tile-to-hw` resolved them), and
every tile value, and every scratch buffer an op asked for, has a buffer
(`memory_plan`). `Selector` says, per op, which operands its result may overwrite
and which scratch buffers it needs (for planning), and emits its instructions.

Vector ops cover the valid region exactly: `Emitter.vector` addresses it as one
contiguous range (full rows, or one row) in repeats of `lanes` elements with a
masked last repeat, or row by row (one repeat per row, `rep_stride` = the row
pitch) in column chunks of `lanes` elements with a mask on the last chunk;
more than `vector.max_repeat` repeats become several instructions. A row
operand (`[M, 1]` against `[M, N]`) is first broadcast into one 32-byte block
per row with `vbrcb` and read with block stride 0; a column operand (`[1, N]`)
is read with repeat stride 0. Composite functions are sequences of vector
primitives computed in the result buffer (docs/tile_to_hw.md lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum, auto
from fractions import Fraction
from itertools import pairwise
from math import gcd, prod

import numpy as np
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import Layout, MemorySpace, PadValue, TileType
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    bf16,
    f16,
    f32,
    i8,
    i16,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from pypto_mlir.diagnostics import op_error
from pypto_mlir.targets import Target

Valid = tuple[int, ...]

GELU_SCALE = float(np.float32(2.0 * np.sqrt(2.0 / np.pi)))
"""`2 sqrt(2/pi)`: gelu(x) = x / (1 + exp(-GELU_SCALE (x + GELU_CUBIC x^3)))."""
GELU_CUBIC = 0.044715


class Kind(Enum):
    """How a vector operand's lanes map to the region being computed."""

    FULL = auto()
    """Same shape as the region: element (r, c) at `offset + r * pitch + c`."""
    ROW_BLOCK = auto()
    """One 32-byte block per row holding the row's value (`vbrcb` output)."""
    ROW_VECTOR = auto()
    """A single row `[1, N]` shared by every row of the region."""
    SPLAT_BLOCK = auto()
    """One 32-byte block holding a single value, for every element."""
    SPLAT_REPEAT = auto()
    """One repeat of lanes all holding a value (`vdup` output), for every repeat."""


@dataclass(frozen=True)
class Lanes:
    """A vector operand: a buffer and how the region's elements map onto it.

    `offset` is where the region starts: in elements, except for ROW_BLOCK where
    it is the block of the region's row 0; `pitch` is the row pitch in elements
    of a FULL operand.
    """

    buffer: SSAValue
    kind: Kind = Kind.FULL
    offset: int = 0
    pitch: int = 0

    @property
    def element_bytes(self) -> int:
        return _buf(self.buffer).element_bytes


def _buf(value: SSAValue) -> hw.BufferType:
    assert isinstance(value.type, hw.BufferType)
    return value.type


def _tile(value: SSAValue) -> TileType:
    assert isinstance(value.type, TileType)
    return value.type


def buffer_type(tile_type: TileType) -> hw.BufferType:
    """The buffer that holds a tile: same shape, element type, memory and layout."""
    return hw.BufferType(
        tile_type.get_shape(),
        tile_type.element_type,
        str(tile_type.memory_space),
        str(tile_type.layout_kind),
    )


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _lane_mask(lo: int, hi: int, lanes: int) -> int | hw.MaskAttr | None:
    """The mask enabling lanes [lo, hi) of a repeat of `lanes` lanes."""
    if lo == 0:
        return None if hi == lanes else hi
    return hw.MaskAttr((1 << hi) - (1 << lo))


MakeOp = Callable[[Sequence[SSAValue], dict[str, object]], Operation]
"""Builds one vector instruction from its lane operands and vector properties."""


class ConstantPool:
    """Constants hoisted to the function entry, one per value and type."""

    def __init__(self, point: InsertPoint):
        self._point = point
        self._values: dict[tuple[Attribute, object], SSAValue] = {}

    def get(self, value: float | int, type: Attribute) -> SSAValue:
        key = (type, repr(value))
        if key not in self._values:
            if isinstance(type, IndexType) or not tile.is_float(type):
                attr: Attribute = IntegerAttr(int(value), type)
            else:
                attr = FloatAttr(float(value), type)  # type: ignore[arg-type]
            op = arith.ConstantOp(attr)
            Rewriter.insert_op(op, self._point)
            self._point = InsertPoint.after(op)
            self._values[key] = op.result
        return self._values[key]


class Emitter:
    """Inserts ascend_hw ops before the tile op being lowered, with its location."""

    def __init__(
        self,
        target: Target,
        constants: ConstantPool,
        alias: Callable[[SSAValue, Attribute], SSAValue] | None = None,
    ):
        self.target = target
        self.constants = constants
        self._alias = alias
        self.block = hw.vector_block_bytes(target)
        self.repeat_bytes = target.vector.repeat_bytes
        self.max_repeat = target.vector.max_repeat
        self._point: InsertPoint | None = None
        self._location: Attribute | None = None

    def at(self, op: Operation) -> None:
        """Emit before `op`, with its location."""
        self._point = InsertPoint.before(op)
        self._location = op.location

    def emit(self, op: Operation) -> Operation:
        assert self._point is not None and self._location is not None
        op.location = self._location
        Rewriter.insert_op(op, self._point)
        return op

    def index(self, value: int) -> SSAValue:
        return self.constants.get(value, IndexType())

    def alias(self, buffer: SSAValue, element_type: Attribute) -> SSAValue:
        """The bytes of an allocated buffer seen as a flat buffer of another type."""
        assert self._alias is not None
        return self._alias(buffer, element_type)

    def scalar(self, value: float | int, element_type: Attribute) -> SSAValue:
        return self.constants.get(value, element_type)

    # Addressing ------------------------------------------------------------------------

    def subview(
        self, buffer: SSAValue, offset: int, index: Sequence[int] | None = None
    ) -> SSAValue:
        """The part of `buffer` from element `offset` on, as a flat buffer.

        `index` is the element's index in `buffer` (derived from `offset` for an
        `nd` buffer; an `nz` buffer needs it given).
        """
        if offset == 0:
            return buffer
        buf = _buf(buffer)
        if index is None:
            assert buf.layout_kind == hw.Layout.ND
            rest, index = offset, []
            for dim in reversed(buf.get_shape()):
                index.append(rest % dim)
                rest //= dim
            index.reverse()
        result = hw.BufferType(
            [buf.element_count() - offset], buf.element_type, str(buf.memory_space)
        )
        view = self.emit(hw.SubviewOp(buffer, [self.index(i) for i in index], result))
        return view.results[0]

    def lanes_per_repeat(self, lanes: Sequence[Lanes]) -> int:
        return self.repeat_bytes // max(x.element_bytes for x in lanes)

    # Vector instructions ---------------------------------------------------------------

    def vector(
        self, make: MakeOp, lanes: Sequence[Lanes], rows: int, c0: int, c1: int
    ) -> None:
        """Instructions computing rows [0, rows) x columns [c0, c1) of the region."""
        if rows == 0 or c1 <= c0:
            return
        if rows == 1:
            lanes = [_single_row(x) for x in lanes]
        full = [x for x in lanes if x.kind == Kind.FULL]
        flat = rows == 1 or (
            all(
                x.kind in (Kind.FULL, Kind.SPLAT_BLOCK, Kind.SPLAT_REPEAT)
                for x in lanes
            )
            and c0 == 0
            and all(x.pitch == c1 for x in full)
        )
        if flat:
            self._flat(make, lanes, c0, rows * (c1 - c0) if rows > 1 else c1 - c0)
        else:
            self._rows(make, lanes, rows, c0, c1)

    def _alignment(self, lanes: Sequence[Lanes]) -> int:
        """Chunk starts are multiples of this many elements (32 B for every operand)."""
        return self.block // min(x.element_bytes for x in lanes)

    def _strides(
        self, lanes: Sequence[Lanes], lane_count: int, row_mode: bool
    ) -> tuple[list[int], list[int]] | None:
        """Block and repeat strides: repeats down the rows (`row_mode`) or along
        the elements (a flat region, or the chunks of one row)."""
        blk: list[int] = []
        rep: list[int] = []
        for x in lanes:
            e = x.element_bytes
            match x.kind:
                case Kind.FULL:
                    blk.append(1)
                    rep.append((x.pitch if row_mode else lane_count) * e // self.block)
                case Kind.ROW_BLOCK:
                    blk.append(0)
                    rep.append(1 if row_mode else 0)
                case Kind.ROW_VECTOR:
                    blk.append(1)
                    rep.append(0 if row_mode else lane_count * e // self.block)
                case Kind.SPLAT_BLOCK:
                    blk.append(0)
                    rep.append(0)
                case Kind.SPLAT_REPEAT:
                    blk.append(1)
                    rep.append(0)
        contiguous = [lane_count * x.element_bytes // self.block for x in lanes]
        if blk == [1] * len(lanes) and rep == contiguous:
            return None
        return blk, rep

    def _view(self, x: Lanes, row: int, column: int) -> SSAValue:
        match x.kind:
            case Kind.FULL:
                offset = x.offset + row * x.pitch + column
            case Kind.ROW_BLOCK:
                offset = (x.offset + row) * (self.block // x.element_bytes)
            case Kind.ROW_VECTOR:
                offset = x.offset + column
            case Kind.SPLAT_BLOCK | Kind.SPLAT_REPEAT:
                offset = x.offset
        return self.subview(x.buffer, offset)

    def _flat(self, make: MakeOp, lanes: Sequence[Lanes], start: int, n: int) -> None:
        lane_count = self.lanes_per_repeat(lanes)
        align = self._alignment(lanes)
        strides = self._strides(lanes, lane_count, row_mode=False)
        position, end = start, start + n
        full = [x for x in lanes if x.kind == Kind.FULL]
        heads = {(x.offset + start) % align for x in full}
        assert len(heads) <= 1, "operands misaligned against each other"

        def issue(at: int, repeat: int, mask: int | hw.MaskAttr | None) -> None:
            props: dict[str, object] = {"repeat": repeat, "mask": mask}
            if strides is not None:
                props["blk_stride"], props["rep_stride"] = strides
            self.emit(make([self._view(x, 0, at) for x in lanes], props))

        if head := (heads.pop() if heads else 0):
            base = position - head
            issue(base, 1, _lane_mask(head, min(lane_count, end - base), lane_count))
            position = base + lane_count
        while position < end:
            repeats = (end - position) // lane_count
            if repeats:
                repeats = min(repeats, self.max_repeat)
                issue(position, repeats, None)
                position += repeats * lane_count
            else:
                issue(position, 1, _lane_mask(0, end - position, lane_count))
                position = end

    def _rows(
        self, make: MakeOp, lanes: Sequence[Lanes], rows: int, c0: int, c1: int
    ) -> None:
        """Rows x columns [c0, c1): a repeat per row and column chunk; the
        repeats of one instruction go down the rows of a chunk, or along the
        whole chunks of a row when that issues fewer instructions (each pays
        the vector start-up)."""
        lane_count = self.lanes_per_repeat(lanes)
        strides = self._strides(lanes, lane_count, row_mode=True)
        for x in lanes:
            if x.kind == Kind.FULL:
                assert x.pitch * x.element_bytes % self.block == 0
        whole = c1 // lane_count if c0 == 0 else 0
        down = -(-rows // self.max_repeat)
        along = rows * -(-whole // self.max_repeat) + down * (c1 > whole * lane_count)
        if whole and along < -(-c1 // lane_count) * down:
            along_strides = self._strides(lanes, lane_count, row_mode=False)
            for row in range(rows):
                chunk = 0
                while chunk < whole:
                    repeat = min(whole - chunk, self.max_repeat)
                    props: dict[str, object] = {"repeat": repeat}
                    if along_strides is not None:
                        props["blk_stride"], props["rep_stride"] = along_strides
                    views = [self._view(x, row, chunk * lane_count) for x in lanes]
                    self.emit(make(views, props))
                    chunk += repeat
            c0 = whole * lane_count
            if c0 >= c1:
                return
        column = c0 - c0 % self._alignment(lanes)
        while column < c1:
            mask = _lane_mask(
                max(c0, column) - column,
                min(column + lane_count, c1) - column,
                lane_count,
            )
            row = 0
            while row < rows:
                repeat = min(rows - row, self.max_repeat)
                props: dict[str, object] = {"repeat": repeat, "mask": mask}
                if strides is not None:
                    props["blk_stride"], props["rep_stride"] = strides
                self.emit(make([self._view(x, row, column) for x in lanes], props))
                row += repeat
            column += lane_count


def _single_row(x: Lanes) -> Lanes:
    if x.kind == Kind.ROW_VECTOR:
        return replace(x, kind=Kind.FULL)
    if x.kind == Kind.ROW_BLOCK:
        return replace(x, kind=Kind.SPLAT_BLOCK)
    return x


# --------------------------------------------------------------------------------------
# Vector op builders
# --------------------------------------------------------------------------------------


def _props(props: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in props.items() if v is not None}


def binary(op_type: type[hw.VectorBinaryOp]) -> MakeOp:
    return lambda views, props: op_type(views[0], views[1], views[2], **_props(props))  # type: ignore[arg-type]


def scalar_op(op_type: type[hw.VectorScalarOp], scalar: SSAValue) -> MakeOp:
    return lambda views, props: op_type(views[0], scalar, views[1], **_props(props))  # type: ignore[arg-type]


def unary(op_type: type[hw.VectorUnaryOp]) -> MakeOp:
    return lambda views, props: op_type(views[0], views[1], **_props(props))  # type: ignore[arg-type]


def cast(mode: hw.RoundMode) -> MakeOp:
    return lambda views, props: hw.VCastOp(views[0], views[1], mode, **_props(props))  # type: ignore[arg-type]


def dup(scalar: SSAValue) -> MakeOp:
    return lambda views, props: hw.VDupOp(scalar, views[0], **_props(props))  # type: ignore[arg-type]


UNARY_PRIMITIVES: dict[type[tile.TileUnaryOp], type[hw.VectorUnaryOp]] = {
    tile.ExpOp: hw.VExpOp,
    tile.LogOp: hw.VLnOp,
    tile.SqrtOp: hw.VSqrtOp,
    tile.RsqrtOp: hw.VRsqrtOp,
    tile.ReciprocalOp: hw.VReciprocalOp,
}
"""Unary tile ops that are one vector instruction."""

BINARY_PRIMITIVES: dict[type[tile.TileBinaryOp], type[hw.VectorBinaryOp]] = {
    tile.AddOp: hw.VAddOp,
    tile.SubOp: hw.VSubOp,
    tile.MulOp: hw.VMulOp,
    tile.DivOp: hw.VDivOp,
    tile.MaxOp: hw.VMaxOp,
    tile.MinOp: hw.VMinOp,
}

SCALAR_PRIMITIVES: dict[type[tile.TileBinaryOp], type[hw.VectorScalarOp]] = {
    tile.AddOp: hw.VAddsOp,
    tile.MulOp: hw.VMulsOp,
    tile.MaxOp: hw.VMaxsOp,
    tile.MinOp: hw.VMinsOp,
}
"""Binary ops with a scalar operand that are one vector-scalar instruction."""

REDUCE_PRIMITIVES: dict[type[tile.TileReduceOp], type[hw.VectorReduceOp]] = {
    tile.ReduceSumOp: hw.VReduceSumOp,
    tile.ReduceMaxOp: hw.VReduceMaxOp,
    tile.ReduceMinOp: hw.VReduceMinOp,
}

REDUCE_COMBINE: dict[type[tile.TileReduceOp], type[hw.VectorBinaryOp]] = {
    tile.ReduceSumOp: hw.VAddOp,
    tile.ReduceMaxOp: hw.VMaxOp,
    tile.ReduceMinOp: hw.VMinOp,
}
"""The elementwise op that combines two partial results of a reduction."""

IN_PLACE_UNARY: tuple[type[tile.TileUnaryOp], ...] = (
    tile.NegOp,
    tile.ExpOp,
    tile.LogOp,
    tile.SqrtOp,
    tile.RsqrtOp,
    tile.ReciprocalOp,
    tile.ReluOp,
    tile.SigmoidOp,
    tile.TanhOp,
)
"""Unary ops whose instructions read each element before writing it (and never
again), so that the result may overwrite the operand. `abs` of integers, `gelu`
and `silu` read the operand after writing the result."""

EXACT_CASTS: frozenset[tuple[Attribute, Attribute]] = frozenset(
    pair for pair, modes in hw.CAST_MODES.items() if modes == (hw.RoundMode.NONE,)
)
"""vcast conversions that are exact (round mode none)."""


@dataclass(frozen=True)
class Convert:
    """One `vcast`."""

    source: Attribute
    dest: Attribute
    mode: hw.RoundMode


@dataclass(frozen=True)
class Clamp:
    """Saturate integers to [low, high] in place (`vmaxs`, `vmins`)."""

    type: Attribute
    low: int
    high: int

    @property
    def source(self) -> Attribute:
        return self.type

    @property
    def dest(self) -> Attribute:
        return self.type


@dataclass(frozen=True)
class LowHalves:
    """i32 -> i16 keeping the low 16 bits (int -> int casts wrap): a 16-bit
    `vgather` of the even halfwords of the i32 bytes (little-endian)."""

    source: Attribute = i32
    dest: Attribute = i16


@dataclass(frozen=True)
class WrapToI8:
    """i16 -> i8 keeping the low 8 bits, `x - 256 floor((x + 128) / 256)`,
    computed exactly in f32 (vcast has no i16 -> f16 or i16 -> i8; f16 -> i8
    then converts the value, in [-128, 127])."""

    source: Attribute = i16
    dest: Attribute = i8


@dataclass(frozen=True)
class I32ToBf16:
    """i32 -> bf16 rounded once: `t = trunc_f32(x)` loses `e = x - t`; when
    `e != 0`, x lies strictly beyond t (bf16 midpoints are f32 values), so the
    result is t rounded with ties away from zero, else t rounded to even."""

    source: Attribute = i32
    dest: Attribute = bf16


CastStep = Convert | Clamp | LowHalves | WrapToI8 | I32ToBf16


@dataclass(frozen=True)
class _CastLayout:
    """The scratch buffers of a cast: their types, the one each step writes
    (None: the result), and the temporaries of each composite step."""

    types: list[hw.BufferType]
    outputs: list[int | None]
    internals: list[list[int]]
    tables: list[int] = field(default_factory=list[int])
    """The types that are offset tables (the others hold a chunk's values)."""


@dataclass(frozen=True)
class _CastChunks:
    """The parts of a cast's region converted in turn: (first row, rows, first
    column, columns) each; intermediates hold `rows` rows `pitch` apart."""

    parts: list[tuple[int, int, int, int]]
    rows: int
    pitch: int


def cast_plan(
    source: Attribute,
    dest: Attribute,
    round_mode: tile.RoundMode = tile.RoundMode.TRUNC,
) -> list[CastStep] | None:
    """The steps that implement `tile.cast` source -> dest, rounding once as
    `tv.cast` does: one vcast; exact widenings (to f16 for i8, to f32 for
    i16 and bf16) then a conversion; float -> narrow int through i32 with a
    clamp (f32 -> i32 saturates, then the range of the result); int -> narrow
    int by keeping the low bits. i32 -> f16 goes through f32, which is exact
    for every i32 that f16 does not round to infinity. None: no such steps."""

    def convert(a: Attribute, b: Attribute) -> Convert:
        return Convert(a, b, cast_mode(a, b, round_mode))

    if source == dest:
        return []
    if (source, dest) in hw.CAST_MODES:
        return [convert(source, dest)]
    if source == bf16 or (tile.is_float(source) and tile.is_float(dest)):
        rest = cast_plan(f32, dest, round_mode)
        return None if rest is None else [convert(source, f32), *rest]
    if source == f32 and dest in (i8, i16):
        low, high = (-(2**15), 2**15 - 1) if dest == i16 else (-128, 127)
        steps: list[CastStep] = [convert(f32, i32), Clamp(i32, low, high)]
        if dest == i16:
            return [*steps, LowHalves()]
        return [
            *steps,  # the clamped integer, exact in f32 and f16
            Convert(i32, f32, hw.RoundMode.RINT),
            Convert(f32, f16, hw.RoundMode.RINT),
            Convert(f16, i8, hw.RoundMode.TRUNC),
        ]
    if tile.is_float(source):
        return None
    if (source, dest) == (i32, bf16):
        return [I32ToBf16()]
    if tile.is_float(dest):
        middle = f16 if source == i8 else f32
        rest = cast_plan(middle, dest, round_mode)
        return None if rest is None else [convert(source, middle), *rest]
    if source == i8:  # exact through f16
        return [convert(i8, f16), Convert(f16, dest, hw.RoundMode.TRUNC)]
    if (source, dest) == (i16, i32):
        return [convert(i16, f32), Convert(f32, i32, hw.RoundMode.TRUNC)]
    if (source, dest) == (i16, i8):
        return [WrapToI8()]
    if source == i32:
        return [LowHalves()] + ([WrapToI8()] if dest == i8 else [])
    return None


def cast_mode(
    source: Attribute, dest: Attribute, round_mode: tile.RoundMode
) -> hw.RoundMode:
    """The vcast round mode of one conversion step of `tile.cast`."""
    if (source, dest) in EXACT_CASTS:
        return hw.RoundMode.NONE
    if tile.is_float(source) and not tile.is_float(dest):
        return hw.RoundMode(str(round_mode))
    return hw.RoundMode.RINT


def _gathered(element_type: Attribute) -> Attribute:
    """The element type a gather moves `element_type` as (vgather is 16/32-bit:
    bytes go as the halfwords that start with them)."""
    return i16 if tile.element_bytes(element_type) == 1 else element_type


def _byte_pair(value: int) -> int:
    """The i16 whose two bytes are the 8-bit `value`."""
    pattern = (value & 0xFF) * 257
    return pattern - (1 << 16) if pattern >= 1 << 15 else pattern


def pad_scalar(element_type: Attribute, pad: PadValue) -> float | int:
    """The value a tile's pad stands for."""
    if pad == PadValue.ZERO:
        return 0
    if tile.is_float(element_type):
        return float("-inf") if pad == PadValue.MIN else float("inf")
    info = np.iinfo({i8: np.int8, i16: np.int16, i32: np.int32}[element_type])
    return int(info.min) if pad == PadValue.MIN else int(info.max)


# --------------------------------------------------------------------------------------
# Selection
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _StridedLoad:
    """A GM window whose elements are not contiguous along a row of the tile's
    buffer, staged in UB before a gather packs them.

    Its geometry is that of the buffer: `rows` of `cols` valid elements, `stride`
    GM elements apart within a row and `row_stride` apart from row to row. A
    column tile (`[M, 1]`, contiguous in UB) is one row of M elements whose GM
    stride is the window's row stride (a column of a matrix)."""

    rows: int
    cols: int
    stride: int
    row_stride: int
    step: int
    """Bytes between consecutive elements of a row in the staging buffer."""
    pitch: int
    """Bytes between the staging buffer's rows."""
    spread: bool
    """One element per 32-byte block (else each row's whole GM span)."""


def matrix_shape(tile_type: TileType) -> tuple[int, int]:
    """A tile's physical shape as rows x columns (a 1-D tile is one row)."""
    shape = tile_type.get_shape()
    if len(shape) == 1:
        return 1, shape[0]
    return prod(shape[:-1]), shape[-1]


def matrix_valid(tile_type: TileType, valid: Valid) -> tuple[int, int]:
    """Valid rows x columns of the matrix view: rows are the product of the
    leading extents (callers check that all but the first are whole)."""
    if len(valid) == 1:
        return 1, valid[0]
    return prod(valid[:-1]), valid[-1]


class PhysicalExtents(dict[SSAValue, Valid]):
    """Valid extents for a `Selector` that sizes scratch before they are known
    (the tiling model's probe nests): every tile's physical shape, a bound."""

    def __missing__(self, value: SSAValue) -> Valid:
        return tuple(_tile(value).get_shape())


BufferOf = Callable[[SSAValue], SSAValue]
"""The buffer holding a tile value."""


@dataclass(frozen=True)
class Region:
    """The valid region of a tile in its buffer: rows x columns, row pitch."""

    rows: int
    cols: int
    pitch: int

    def lanes(self, buffer: SSAValue, offset: int = 0) -> Lanes:
        return Lanes(buffer, Kind.FULL, offset, self.pitch)


class Selector:
    """Per tile op: in-place operands, scratch buffers, and its instructions."""

    def __init__(self, target: Target, valid: dict[SSAValue, Valid]):
        self.target = target
        self.valid = valid
        self.block = hw.vector_block_bytes(target)
        self.blocks_per_repeat = target.vector.repeat_bytes // self.block

    # Shapes ----------------------------------------------------------------------------

    def region(self, value: SSAValue) -> Region:
        tile_type = _tile(value)
        rows, cols = matrix_valid(tile_type, self.valid[value])
        return Region(rows, cols, matrix_shape(tile_type)[1])

    def lanes_for(self, element_type: Attribute) -> int:
        return self.target.vector.repeat_bytes // tile.element_bytes(element_type)

    def per_block(self, element_type: Attribute) -> int:
        return self.block // tile.element_bytes(element_type)

    def _check_vector_shape(
        self, op: Operation, value: SSAValue, bytes_ok: bool = False
    ) -> None:
        """Vector ops cover 2-D regions of 16/32-bit elements (`bytes_ok`: the op
        moves 8-bit ones through 16-bit instructions)."""
        tile_type = _tile(value)
        shape, valid = tile_type.get_shape(), self.valid[value]
        if len(shape) > 2 and any(
            v != s for v, s in zip(valid[1:-1], shape[1:-1], strict=True)
        ):
            raise op_error(
                op,
                f"a {len(shape)}-D tile needs whole inner dims: valid "
                f"{list(valid)} of shape {list(shape)}",
            )
        if tile.element_bytes(tile_type.element_type) == 1 and not bytes_ok:
            raise op_error(
                op, f"the vector unit has no {tile_type.element_type} instructions"
            )

    def _operand_lanes(self, value: SSAValue, result: SSAValue) -> tuple[Kind, int]:
        """How a (possibly broadcast) operand maps onto the result region, and the
        number of valid values a block-broadcast operand holds."""
        shape = matrix_shape(_tile(value))
        rows, cols = matrix_shape(_tile(result))
        valid_rows, _ = matrix_valid(_tile(value), self.valid[value])
        if shape == (rows, cols):
            return Kind.FULL, 0
        if shape == (1, 1):
            return Kind.SPLAT_BLOCK, 1
        if shape == (rows, 1):
            return Kind.ROW_BLOCK, valid_rows
        assert shape == (1, cols)
        return Kind.ROW_VECTOR, 0

    # Planning --------------------------------------------------------------------------

    def inplace(self, op: Operation) -> tuple[int, ...]:
        """Operands whose buffer the result may take over when they die at `op`."""
        if isinstance(op, tile.MatmulOp) and op.acc is not None:
            return (2,)
        if isinstance(op, IN_PLACE_UNARY) or (
            isinstance(op, tile.AbsOp) and tile.is_float(_tile(op.source).element_type)
        ):
            return (0,)
        if isinstance(op, tile.TileBinaryOp):
            return tuple(
                i
                for i, operand in enumerate(op.operands)
                if isinstance(operand.type, TileType)
                and matrix_shape(operand.type) == matrix_shape(_tile(op.result))
            )
        if isinstance(op, tile.PadOp):
            return (0,)
        return ()

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        """The scratch buffers `op` needs while it executes, in `lower`'s order."""
        ub = str(MemorySpace.UB)
        if isinstance(op, tile.TransposeOp):
            return self._transpose_scratch(op)
        if isinstance(op, tile.TileBinaryOp):
            types: list[hw.BufferType] = []
            element_type = _tile(op.result).element_type
            for operand in op.operands:
                if isinstance(operand.type, TileType):
                    kind, count = self._operand_lanes(operand, op.result)
                    if kind in (Kind.ROW_BLOCK, Kind.SPLAT_BLOCK):
                        types += self._row_block_scratch(element_type, count)
            if isinstance(op, tile.DivOp) and not all(
                isinstance(o.type, TileType) for o in op.operands
            ):
                types.append(
                    hw.BufferType([self.lanes_for(element_type)], element_type, ub)
                )
            return types
        if isinstance(op, tile.BroadcastOp):
            kind, count = self._operand_lanes(op.source, op.result)
            element_type = _tile(op.result).element_type
            if kind in (Kind.ROW_BLOCK, Kind.SPLAT_BLOCK):
                return self._row_block_scratch(element_type, count)
            return []
        if isinstance(op, tile.CastOp):
            return self._cast_layout(op).types
        if isinstance(op, tile.TileReduceOp):
            return self._reduce_scratch(op)
        if isinstance(op, tile.LoadOp) and (plan := self._strided_load(op)) is not None:
            element_type = _tile(op.result).element_type
            e = tile.element_bytes(element_type)
            types = [
                hw.BufferType([plan.rows * plan.pitch // e], element_type, ub),
                hw.BufferType([self.lanes_for(_gathered(element_type))], i32, ub),
            ]
            if e == 1:  # gathered as halfwords, then wrapped to bytes
                rows, cols = matrix_shape(_tile(op.result))
                types.append(hw.BufferType([rows * cols], i16, ub))
                types += [hw.BufferType([rows * cols], f32, ub)] * 2
            return types
        if isinstance(op, tile.LoadOp | tile.MoveOp) and self._needs_zero_fill(
            op.result
        ):
            tile_type = _tile(op.result)
            return [
                hw.BufferType(
                    [
                        self._zero_fill_bytes(op.result)
                        // tile.element_bytes(tile_type.element_type)
                    ],
                    tile_type.element_type,
                    ub,
                )
            ]
        return []

    def scratch_terms(
        self, op: Operation, spans_of: Callable[[SSAValue], tuple[bool, ...]]
    ) -> list[tuple[Fraction, tuple[bool, ...]]]:
        """An upper bound of the bytes of `scratch(op)` for the tiling model, as
        (bytes per element, spans) terms over the nest's tile sizes: a term spans
        the tile dims `spans_of(value)` gives for a tile of the probe nest the
        model measures (whose valid extents are not known yet: the physical ones
        bound them), no dims for a constant.

        The staging of a load whose rows are strided in GM is the model's own term
        (`LiveProfile.of_block`); its offset table and 8-bit elements are here."""
        Term = tuple[Fraction, tuple[bool, ...]]

        def term(
            value: SSAValue, per: Fraction | int, rows: bool = True, cols: bool = True
        ) -> Term:
            full = spans_of(value)
            last = len(full) - 1
            kept = tuple(
                spanned and (cols if d == last else rows)
                for d, spanned in enumerate(full)
            )
            return Fraction(per), kept

        def constant(value: SSAValue, count: int) -> Term:
            return term(value, count, rows=False, cols=False)

        def tables(value: SSAValue, element_type: Attribute) -> Term:
            types = self._gather_tables(element_type, self.lanes_for(element_type))[2]
            return constant(value, sum(t.byte_size() for t in types))

        def block_operand(value: SSAValue, result: SSAValue, e: int) -> list[Term]:
            shape, out = matrix_shape(_tile(value)), matrix_shape(_tile(result))
            if shape == out or (shape != (1, 1) and shape[0] == 1):
                return []  # a full or a row-vector operand needs none (as _operand_lanes)
            # vbrcb's blocks (a block per value, whole repeats) and a padded copy
            return [term(value, self.block + e, cols=False), constant(value, 320)]

        match op:
            case tile.TransposeOp():
                element_type = _tile(op.result).element_type
                terms: list[Term] = []
                if tile.element_bytes(element_type) == 1:
                    element_type = f16
                    terms = [term(op.source, 2), term(op.result, 2)]
                if self._transpose_copies(op):
                    return terms
                return [*terms, tables(op.result, element_type)]
            case tile.TileBinaryOp():
                e = tile.element_bytes(_tile(op.result).element_type)
                terms = []
                for operand in op.operands:
                    if isinstance(operand.type, TileType):
                        terms += block_operand(operand, op.result, e)
                if isinstance(op, tile.DivOp) and not all(
                    isinstance(o.type, TileType) for o in op.operands
                ):  # the scalar divisor in a repeat
                    terms.append(constant(op.result, self.target.vector.repeat_bytes))
                return terms
            case tile.BroadcastOp():
                e = tile.element_bytes(_tile(op.result).element_type)
                return block_operand(op.source, op.result, e)
            case tile.CastOp():
                # Chunked (`_cast_chunks`): at most the budget per intermediate.
                budget = self._cast_budget()
                layout = self._cast_layout(op)
                return [
                    constant(
                        op.source,
                        t.byte_size()
                        if i in layout.tables
                        else budget * t.element_bytes,
                    )
                    for i, t in enumerate(layout.types)
                ]
            case tile.TileReduceOp():
                return self._reduce_terms(op, term, constant, tables)
            case tile.LoadOp() if _tile(op.result).memory_space == MemorySpace.UB:
                tile_type = _tile(op.result)
                e = tile.element_bytes(tile_type.element_type)
                strides = _memref(op.source).get_strides() or [1]
                rows, cols = matrix_shape(tile_type)
                row = strides[-2] if len(strides) > 1 else 1
                column = cols == 1 and rows > 1 and row != 1
                if strides[-1] in (None, 1) and not column:
                    return []
                terms = [
                    constant(
                        op.result, self.lanes_for(_gathered(tile_type.element_type)) * 4
                    )
                ]
                if column:  # the column's span, or a block per element
                    staged = min(self.block, int(row or self.block) * e)
                    terms += [term(op.result, staged), constant(op.result, self.block)]
                if e == 1:  # a block per element, its halfword, the wrap's f32 pair
                    terms.append(term(op.result, self.block + 2 + 8))
                return terms
        return []

    def _reduce_terms(
        self,
        op: tile.TileReduceOp,
        term: Callable[..., tuple[Fraction, tuple[bool, ...]]],
        constant: Callable[[SSAValue, int], tuple[Fraction, tuple[bool, ...]]],
        tables: Callable[[SSAValue, Attribute], tuple[Fraction, tuple[bool, ...]]],
    ) -> list[tuple[Fraction, tuple[bool, ...]]]:
        """`scratch_terms` of a reduction: the partial results of long float rows
        (a value per repeat and level), the pairwise halves of a column reduction,
        the folded rows, their transpose and its tables for integers."""
        source = op.source
        element_type = _tile(source).element_type
        e = tile.element_bytes(element_type)
        lanes, per_block = self.lanes_for(element_type), self.per_block(element_type)
        rows, cols = matrix_shape(_tile(source))
        along_rows = self._reduces_rows(op)
        if not tile.is_float(element_type):
            # rows * (ceil(cols / 2) + a block); a block per row and per column
            return [
                term(source, Fraction(e, 2)),
                term(source, self.block, cols=False),
                term(source, self.block, rows=False),
                constant(source, per_block * self.block),
                tables(source, element_type),
            ]
        if along_rows and rows > 1 and cols > 1:
            # ceil(cols / lanes) chunks of rows rounded up to a block, or rows
            # of ceil(cols / lanes) partials rounded up to a block
            return [
                term(source, Fraction(e, lanes)),
                term(source, per_block * e, cols=False),
                term(source, Fraction((per_block - 1) * e, lanes), rows=False),
                constant(source, 3 * 2 * self.block),  # or one row, as below
            ]
        if (along_rows and cols > 1) or (not along_rows and cols == 1 and rows > 1):
            # a flat row: each level (three at most in a UB) a value per repeat,
            # rounded up to a block, and a block for its rest
            return [
                term(source, Fraction(2 * e, lanes)),
                constant(source, 3 * 2 * self.block),
            ]
        if not along_rows and rows > 2 and cols > 1:
            return [
                term(source, Fraction(e, 2)),
                term(source, Fraction(e, 2), rows=False),
            ]
        return []

    def _row_block_scratch(
        self, element_type: Attribute, count: int
    ) -> list[hw.BufferType]:
        """vbrcb's output (one block per value) and, for a count that is not a
        multiple of the blocks per repeat, a padded copy of the values."""
        ub = str(MemorySpace.UB)
        padded = _round_up(count, self.blocks_per_repeat)
        per_block = self.per_block(element_type)
        types = [hw.BufferType([padded * per_block], element_type, ub)]
        if count % self.blocks_per_repeat:
            types.append(
                hw.BufferType([_round_up(padded, per_block)], element_type, ub)
            )
        return types

    def _reduce_scratch(self, op: tile.TileReduceOp) -> list[hw.BufferType]:
        source = _tile(op.source)
        element_type = source.element_type
        ub = str(MemorySpace.UB)
        rows, cols = matrix_valid(source, self.valid[op.source])
        shape_rows, shape_cols = matrix_shape(source)
        lanes, per_block = self.lanes_for(element_type), self.per_block(element_type)
        along_rows = self._reduces_rows(op)
        if not tile.is_float(element_type):
            if along_rows and shape_cols > 1:
                return self._int_reduce_scratch(element_type, rows, cols)
            if not along_rows and shape_rows > 1 and shape_cols == 1:
                return self._int_reduce_scratch(element_type, 1, rows)
        if along_rows and shape_cols > 1 and rows > 1 and cols > lanes:
            chunks = -(-cols // lanes)
            if self._reduces_by_row(rows, cols, element_type):
                full = cols // lanes
                size = rows * _round_up(full, per_block) + _round_up(rows, per_block)
            else:
                size = chunks * _round_up(rows, per_block)
            return [hw.BufferType([size], element_type, ub)]
        n = cols if along_rows else rows
        flat = (along_rows and shape_cols > 1 and rows == 1) or (
            not along_rows and shape_rows > 1 and shape_cols == 1
        )
        if flat:
            return self._flat_scratch(n, element_type)
        if not along_rows and shape_rows > 1 and shape_cols > 1 and rows > 2:
            return [hw.BufferType([-(-rows // 2) * shape_cols], element_type, ub)]
        return []

    def _reduces_by_row(self, rows: int, cols: int, element_type: Attribute) -> bool:
        """Whether rows longer than a repeat reduce row by row (a vreduce of each
        row's repeats, then one of the rows' partials) rather than column chunk
        by chunk (a vreduce of each chunk over the rows, then a combine per
        chunk): whichever issues fewer instructions, each paying the vector
        start-up (a tile of 8 rows of 1024 f32: 9 instead of 31)."""
        lanes = self.lanes_for(element_type)
        chunks = -(-cols // lanes)
        if chunks > lanes or rows > self.target.vector.max_repeat:
            return False
        by_row = rows + 1 + 2 * (cols % lanes != 0)
        most = self.target.vector.max_repeat
        by_chunk = chunks * -(-rows // most) + chunks - 1
        return by_row < by_chunk

    def _reduces_rows(self, op: tile.TileReduceOp) -> bool:
        """Whether the reduction runs along rows (the last dim) of the matrix view."""
        return op.axis_index == _tile(op.source).get_num_dims() - 1

    def _needs_zero_fill(self, value: SSAValue) -> bool:
        tile_type = _tile(value)
        return (
            tile_type.layout_kind == Layout.NZ
            and self.valid[value] != tile_type.get_shape()
        )

    def _nz_fill_parts(self, value: SSAValue) -> tuple[int, int, int, int, int]:
        """For an nz tile with a partial valid region: the fractal-rounded rows,
        the whole column blocks, their partial rows' bytes, the partial block's
        bytes and one column block's pitch in bytes."""
        tile_type = _tile(value)
        rows, _ = tile_type.get_shape()
        valid_rows, valid_cols = self.valid[value]
        e = tile.element_bytes(tile_type.element_type)
        c0 = hw.nz_c0(tile_type.element_type, self.target)
        read_rows = _round_up(valid_rows, self.target.cube.fractal_m)
        whole = valid_cols // c0
        gap_bytes = (read_rows - valid_rows) * c0 * e
        partial_bytes = read_rows * c0 * e if valid_cols % c0 else 0
        return read_rows, whole, gap_bytes, partial_bytes, rows * c0 * e

    def _zero_fill_bytes(self, value: SSAValue) -> int:
        _, whole, gap_bytes, partial_bytes, _ = self._nz_fill_parts(value)
        return max(whole * gap_bytes, partial_bytes, self.block)

    # Lowering --------------------------------------------------------------------------

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        """Emit the instructions of tile op `op` (before it)."""
        em.at(op)
        match op:
            case tile.LoadOp():
                self._load(op, em, buffer, scratch)
            case tile.StoreOp():
                self._store(op, em, buffer)
            case tile.MoveOp():
                self._move(op, em, buffer, scratch)
            case tile.MatmulOp():
                self._matmul(op, em, buffer)
            case tile.TileUnaryOp():
                self._check_vector_shape(op, op.result)
                self._unary(op, em, buffer)
            case tile.TileBinaryOp():
                self._check_vector_shape(op, op.result)
                self._binary(op, em, buffer, scratch)
            case tile.CastOp():
                self._cast(op, em, buffer, scratch)
            case tile.TileReduceOp():
                self._check_vector_shape(op, op.source)
                rank = _tile(op.source).get_num_dims()
                if rank > 2 and op.axis_index != rank - 1:
                    raise op_error(
                        op, f"a {rank}-D tile reduces along its last dim only"
                    )
                self._reduce(op, em, buffer, scratch)
            case tile.BroadcastOp():
                self._check_vector_shape(op, op.result)
                self._broadcast(op, em, buffer, scratch)
            case tile.FillOp():
                self._check_vector_shape(op, op.result, bytes_ok=True)
                self._fill(op, em, buffer)
            case tile.PadOp():
                self._check_vector_shape(op, op.result)
                self._pad(op, em, buffer)
            case tile.TransposeOp():
                self._check_vector_shape(op, op.result, bytes_ok=True)
                self._transpose(op, em, buffer, scratch)
            case _:
                raise op_error(op, f"tile-to-hw cannot lower {op.name}")

    # Data movement ---------------------------------------------------------------------

    def _gm_bursts(
        self, op: Operation, memref: MemRefType, value: SSAValue
    ) -> dict[str, int]:
        """The burst descriptor of a DMA between a GM window and a tile's buffer,
        as keyword arguments with the GM gap named `gm_gap`."""
        tile_type = _tile(value)
        e = tile.element_bytes(tile_type.element_type)
        strides = memref.get_strides()
        rank = tile_type.get_num_dims()
        if strides is None or any(s is None for s in strides[-rank:]):
            raise op_error(op, f"a DMA needs static strides, got {memref}")
        region = self.region(value)
        if strides[-1] != 1 and region.cols > 1:
            raise op_error(
                op,
                f"a DMA moves contiguous rows: the innermost stride of {memref} "
                "must be 1",
            )
        alignment = self.target.memories[str(tile_type.memory_space)].alignment
        row_stride = strides[-2] if rank >= 2 else 0
        assert row_stride is not None
        if rank > 2 and any(v != 1 for v in self.valid[value][:-2]):
            raise op_error(
                op, f"a DMA moves 2-D windows; valid {list(self.valid[value])}"
            )
        if region.rows == 1 or (
            region.cols == region.pitch and row_stride == region.cols
        ):
            return {
                "bursts": 1,
                "burst_bytes": region.rows * region.cols * e,
                "gm_gap": 0,
                "chip_gap": 0,
            }
        if region.pitch == 1:
            raise op_error(
                op,
                f"a column tile scatters to GM elements {row_stride} apart in "
                f"{memref}: ascend_hw stores contiguous bursts from 32-byte "
                "aligned UB rows",
            )
        if row_stride < region.cols:
            raise op_error(op, f"rows of {memref} overlap (stride {row_stride})")
        return {
            "bursts": region.rows,
            "burst_bytes": region.cols * e,
            "gm_gap": (row_stride - region.cols) * e,
            "chip_gap": region.pitch * e - _round_up(region.cols * e, alignment),
        }

    def _load(
        self, op: tile.LoadOp, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        tile_type = _tile(op.result)
        dst = buffer(op.result)
        if tile_type.layout_kind == Layout.NZ:
            if scratch:
                self._zero_fill_nz(op.result, em, dst, scratch[0])
            rows, cols = self.valid[op.result]
            zero = em.index(0)
            em.emit(
                hw.Nd2NzOp(
                    op.source, op.indices, dst, [zero, zero], rows=rows, cols=cols
                )
            )
            return
        if tile_type.pad_value is not None and not self._fully_valid(op.result):
            if tile_type.memory_space != MemorySpace.UB:
                raise op_error(op, f"cannot pad a tile in {tile_type.memory_space}")
            self._fill_all(em, dst, tile_type, tile_type.pad_value)
        plan = self._strided_load(op)
        if plan is not None:
            self._gather_load(op, plan, em, dst, scratch)
            return
        d = self._gm_bursts(op, _memref(op.source), op.result)
        for indices, row_buffer in self._row_windows(em, op.indices, dst, d):
            em.emit(
                hw.DmaLoadOp(
                    op.source,
                    indices,
                    row_buffer,
                    bursts=1,
                    burst_bytes=d["burst_bytes"],
                )
            )

    def _row_windows(
        self,
        em: Emitter,
        indices: Sequence[SSAValue],
        buffer: SSAValue,
        d: dict[str, int],
    ) -> list[tuple[list[SSAValue], SSAValue]]:
        """The GM indices and on-chip view of each burst of descriptor `d`: one
        contiguous run per DMA. hw-coalesce-dma merges them back into one DMA
        with a gap per row where the layout allows (docs/hw_coalesce_dma.md), so
        that pass is where bursts are formed and its gain can be measured."""
        if d["bursts"] == 1:
            return [(list(indices), buffer)]
        buf = _buf(buffer)
        alignment = self.target.memories[str(buf.memory_space)].alignment
        pitch = (
            _round_up(d["burst_bytes"], alignment) + d["chip_gap"]
        ) // buf.element_bytes
        *outer, row, column = indices
        windows = []
        for r in range(d["bursts"]):
            shifted = (
                row if r == 0 else em.emit(arith.AddiOp(row, em.index(r))).results[0]
            )
            windows.append(([*outer, shifted, column], em.subview(buffer, r * pitch)))
        return windows

    def _strided_load(self, op: tile.LoadOp) -> _StridedLoad | None:
        """How to load a GM window whose elements are not contiguous along the
        rows of the tile's buffer (innermost stride s > 1, or a column tile of a
        matrix), or None when they are. Each row goes to a UB staging row either
        as its whole span `((n - 1) s + 1) e` bytes or one element per 32-byte
        block, whichever is smaller (the DMA writes bursts at 32-byte aligned UB
        addresses, from any GM byte); a gather then packs the elements."""
        tile_type = _tile(op.result)
        if tile_type.layout_kind == Layout.NZ:  # nd2nz follows any layout
            return None
        memref = _memref(op.source)
        strides = memref.get_strides()
        if strides is None or any(s is None for s in strides):
            return None  # _gm_bursts names the problem
        region = self.region(op.result)
        rank = tile_type.get_num_dims()
        row_stride = int(strides[-2] or 0) if rank >= 2 else 0
        if region.pitch == 1 and region.rows > 1:
            if rank > 2 and any(v != 1 for v in self.valid[op.result][:-2]):
                return None
            if row_stride == 1:
                return None
            rows, cols, stride, row_stride = 1, region.rows, row_stride, 0
        elif strides[-1] == 1 or region.cols == 1:
            return None
        else:
            rows, cols, stride = region.rows, region.cols, int(strides[-1] or 0)
        if tile_type.memory_space != MemorySpace.UB or stride < 1:
            raise op_error(
                op,
                f"a DMA moves contiguous rows: the innermost stride of {memref} "
                "must be 1 (strided rows are gathered into ub tiles only)",
            )
        e = tile.element_bytes(tile_type.element_type)
        span = _round_up(((cols - 1) * stride + 1) * e, self.block)
        if span <= cols * self.block and e > 1:
            return _StridedLoad(rows, cols, stride, row_stride, stride * e, span, False)
        return _StridedLoad(
            rows, cols, stride, row_stride, self.block, cols * self.block, True
        )

    def _fill_offsets(
        self, em: Emitter, table: SSAValue, count: int, step: int
    ) -> None:
        """table[l] = l * step (i32) for l < count: one lane at a time over the
        first 32-byte block, then doubling (lanes [k, 2k) = lanes [0, k) + k step)."""
        first = min(self.per_block(i32), count)
        for lane in range(first):
            em.emit(
                hw.VDupOp(
                    em.scalar(lane * step, i32), table, mask=hw.MaskAttr(1 << lane)
                )
            )
        filled = first
        while filled < count:
            n = min(filled, count - filled)
            em.vector(
                scalar_op(hw.VAddsOp, em.scalar(filled * step, i32)),
                [Lanes(table), Lanes(table, Kind.FULL, filled)],
                1,
                0,
                n,
            )
            filled += n

    def _gather_load(
        self,
        op: tile.LoadOp,
        plan: _StridedLoad,
        em: Emitter,
        dst: SSAValue,
        scratch: list[SSAValue],
    ) -> None:
        tile_type = _tile(op.result)
        e = tile.element_bytes(tile_type.element_type)
        rows, cols, stride, row_stride = (
            plan.rows,
            plan.cols,
            plan.stride,
            plan.row_stride,
        )
        rows_buffer, offsets = scratch[0], scratch[1]
        if e == 1:
            # Halfword gathers read the byte after each element: zero them first.
            zeros = em.alias(rows_buffer, i16)
            count = _buf(zeros).element_count()
            em.vector(dup(em.scalar(0, i16)), [Lanes(zeros)], 1, 0, count)
        if plan.spread:
            per_row = {"bursts": cols, "burst_bytes": e, "src_gap": (stride - 1) * e}
            together = row_stride == cols * stride
            whole = {**per_row, "bursts": rows * cols}
        else:
            span = ((cols - 1) * stride + 1) * e
            per_row = {"bursts": 1, "burst_bytes": span}
            together = row_stride * e >= span
            whole = {
                "bursts": rows,
                "burst_bytes": span,
                "src_gap": row_stride * e - span if rows > 1 else 0,
            }
        if rows == 1 or together:
            em.emit(hw.DmaLoadOp(op.source, op.indices, rows_buffer, **whole))  # type: ignore[arg-type]
        else:
            for row in range(rows):
                indices = list(op.indices)
                if row:
                    indices[-2] = em.emit(
                        arith.AddiOp(indices[-2], em.index(row))
                    ).results[0]
                em.emit(
                    hw.DmaLoadOp(
                        op.source,
                        indices,
                        em.subview(rows_buffer, row * plan.pitch // e),
                        **per_row,  # type: ignore[arg-type]
                    )
                )
        gathered = _gathered(tile_type.element_type)
        lanes = self.lanes_for(gathered)
        self._fill_offsets(em, offsets, min(lanes, cols), plan.step)
        _, pitch = matrix_shape(tile_type)
        staging, packed = rows_buffer, dst
        if e == 1:
            staging, packed = em.alias(rows_buffer, i16), scratch[2]
        g = tile.element_bytes(gathered)
        for row in range(rows):
            for column in range(0, cols, lanes):
                em.emit(
                    hw.VGatherOp(
                        em.subview(
                            staging, (row * plan.pitch + column * plan.step) // g
                        ),
                        offsets,
                        em.subview(packed, row * pitch + column),
                        mask=_lane_mask(0, min(lanes, cols - column), lanes),
                    )
                )
        if e == 1:  # each halfword holds an element's byte (unsigned): wrap it
            region = self.region(op.result)
            self._wrap_to_i8(
                em, region.lanes(packed), region.lanes(dst), region, scratch[3:5]
            )

    def _fully_valid(self, value: SSAValue) -> bool:
        return self.valid[value] == _tile(value).get_shape()

    def _zero_fill_nz(
        self, value: SSAValue, em: Emitter, dst: SSAValue, zeros: SSAValue
    ) -> None:
        """Zero the fractals of an nz tile that readers of its valid region touch
        but the load does not write (rows below the valid ones, and the columns
        right of them in the last column block)."""
        tile_type = _tile(value)
        element_type = tile_type.element_type
        _, whole, gap_bytes, partial_bytes, pitch = self._nz_fill_parts(value)
        valid_rows, _ = self.valid[value]
        e = tile.element_bytes(element_type)
        c0 = hw.nz_c0(element_type, self.target)
        # vdup writes 16/32-bit elements: zero 8-bit data through an i16 view.
        fill = zeros if e > 1 else em.alias(zeros, i16)
        fill_type = _buf(fill).element_type
        em.vector(
            dup(em.scalar(0, fill_type)),
            [Lanes(fill)],
            1,
            0,
            _buf(fill).element_count(),
        )
        if whole and gap_bytes:
            view = em.subview(dst, valid_rows * c0, (valid_rows, 0))
            em.emit(
                hw.DmaCopyOp(
                    zeros,
                    view,
                    bursts=whole,
                    burst_bytes=gap_bytes,
                    dst_gap=pitch - gap_bytes,
                )
            )
        if partial_bytes:
            view = em.subview(dst, whole * pitch // e, (0, whole * c0))
            em.emit(hw.DmaCopyOp(zeros, view, bursts=1, burst_bytes=partial_bytes))

    def _store(self, op: tile.StoreOp, em: Emitter, buffer: BufferOf) -> None:
        tile_type = _tile(op.value)
        src = buffer(op.value)
        if tile_type.memory_space == MemorySpace.L0C:
            rows, cols = self.valid[op.value]
            zero = em.index(0)
            em.emit(
                hw.FixpipeOp(
                    src, [zero, zero], op.dest, op.indices, rows=rows, cols=cols
                )
            )
            return
        d = self._gm_bursts(op, _memref(op.dest), op.value)
        for indices, row_buffer in self._row_windows(em, op.indices, src, d):
            em.emit(
                hw.DmaStoreOp(
                    row_buffer, op.dest, indices, bursts=1, burst_bytes=d["burst_bytes"]
                )
            )

    def _move(
        self, op: tile.MoveOp, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        source, result = _tile(op.source), _tile(op.result)
        src, dst = buffer(op.source), buffer(op.result)
        zero = em.index(0)
        spaces = (source.memory_space, result.memory_space)
        if source.memory_space == MemorySpace.L0C:
            if scratch:  # an nz result read in whole fractals later
                self._zero_fill_nz(op.result, em, dst, scratch[0])
            rows, cols = self.valid[op.result]
            em.emit(
                hw.FixpipeOp(src, [zero, zero], dst, [zero, zero], rows=rows, cols=cols)
            )
        elif result.memory_space in (MemorySpace.L0A, MemorySpace.L0B):
            rows, cols = self.valid[op.result]
            c0 = hw.nz_c0(result.element_type, self.target)
            origin = [em.index(o) for o in op.window_offsets()]
            em.emit(
                hw.LoadL0Op(
                    src,
                    origin,
                    dst,
                    [zero, zero],
                    rows=_round_up(rows, self.target.cube.fractal_m),
                    cols=_round_up(cols, c0),
                    transpose=op.transpose is not None,
                )
            )
        elif result.layout_kind == Layout.NZ:
            raise op_error(
                op,
                "ascend_hw converts to nz only from GM (nd2nz) or from l0c "
                "(fixpipe): load the tile into l1 with layout = nz instead",
            )
        else:
            self._copy_rows(op, em, op.source, src, dst, spaces)

    def _copy_rows(
        self,
        op: Operation,
        em: Emitter,
        value: SSAValue,
        src: SSAValue,
        dst: SSAValue,
        spaces: tuple[MemorySpace, MemorySpace],
    ) -> None:
        """On-chip nd -> nd copy of a tile's valid rows (whole 32-byte blocks)."""
        tile_type = _tile(value)
        e = tile.element_bytes(tile_type.element_type)
        region = self.region(value)
        alignment = max(self.target.memories[str(s)].alignment for s in spaces)
        if region.pitch == 1:
            region = Region(1, region.rows, region.rows)
        row_bytes = _round_up(region.cols * e, alignment)
        # An l1 tile moved from ub was copied in whole blocks: its rows are defined.
        copied = isinstance(value.owner, tile.MoveOp) and (
            _tile(value.owner.source).memory_space == MemorySpace.UB
        )
        if row_bytes != region.cols * e and tile_type.pad_value is None and not copied:
            if spaces[0] != MemorySpace.UB:
                raise op_error(
                    op,
                    f"{spaces[0]} -> {spaces[1]} copies whole {alignment}-byte "
                    f"blocks, but the valid rows of {tile_type} end inside one",
                )
            # The bytes up to the block end are outside the valid region: define them.
            em.vector(
                dup(em.scalar(0, tile_type.element_type)),
                [region.lanes(src)],
                region.rows,
                region.cols,
                row_bytes // e,
            )
        pitch_bytes = region.pitch * e
        em.emit(
            hw.DmaCopyOp(
                src,
                dst,
                bursts=region.rows,
                burst_bytes=row_bytes,
                src_gap=pitch_bytes - row_bytes if region.rows > 1 else 0,
                dst_gap=pitch_bytes - row_bytes if region.rows > 1 else 0,
            )
        )

    def _matmul(self, op: tile.MatmulOp, em: Emitter, buffer: BufferOf) -> None:
        m, k = self.valid[op.lhs]
        _, n = self.valid[op.rhs]
        em.emit(
            hw.MmadOp(
                buffer(op.lhs),
                buffer(op.rhs),
                buffer(op.result),
                m=m,
                n=n,
                k=k,
                accumulate=op.acc is not None,
            )
        )

    # Vector ----------------------------------------------------------------------------

    def _fill_all(
        self, em: Emitter, dst: SSAValue, tile_type: TileType, pad: PadValue
    ) -> None:
        """Every element of a tile's buffer holds the pad value."""
        element_type = tile_type.element_type
        if tile.element_bytes(element_type) == 1:
            dst = em.alias(dst, i16)
            value = em.scalar(_byte_pair(int(pad_scalar(element_type, pad))), i16)
        else:
            value = em.scalar(pad_scalar(element_type, pad), element_type)
        count = _buf(dst).element_count()
        em.vector(dup(value), [Lanes(dst)], 1, 0, count)

    def _unary(self, op: tile.TileUnaryOp, em: Emitter, buffer: BufferOf) -> None:
        region = self.region(op.result)
        element_type = _tile(op.result).element_type
        x = region.lanes(buffer(op.source))
        d = region.lanes(buffer(op.result))

        def step(make: MakeOp, *lanes: Lanes) -> None:
            em.vector(make, lanes, region.rows, 0, region.cols)

        def constant(value: float) -> SSAValue:
            return em.scalar(value, element_type)

        if type(op) in UNARY_PRIMITIVES:
            step(unary(UNARY_PRIMITIVES[type(op)]), x, d)
        elif isinstance(op, tile.NegOp):
            step(scalar_op(hw.VMulsOp, constant(-1)), x, d)
        elif isinstance(op, tile.AbsOp):
            if tile.is_float(element_type):
                step(unary(hw.VAbsOp), x, d)
            else:
                step(scalar_op(hw.VMulsOp, constant(-1)), x, d)
                step(binary(hw.VMaxOp), x, d, d)
        elif isinstance(op, tile.ReluOp):
            if element_type == i16:
                step(scalar_op(hw.VMaxsOp, constant(0)), x, d)
            else:
                step(unary(hw.VReluOp), x, d)
        elif isinstance(op, tile.SigmoidOp | tile.SiluOp):
            # 1 / (1 + e^-x); silu is x / (1 + e^-x), one step fewer than x * it
            step(scalar_op(hw.VMulsOp, constant(-1)), x, d)
            step(unary(hw.VExpOp), d, d)
            step(scalar_op(hw.VAddsOp, constant(1)), d, d)
            if isinstance(op, tile.SiluOp):
                step(binary(hw.VDivOp), x, d, d)
            else:
                step(unary(hw.VReciprocalOp), d, d)
        elif isinstance(op, tile.TanhOp):
            # 2 / (1 + e^-2x) - 1: no overflow to inf - inf for any x
            step(scalar_op(hw.VMulsOp, constant(-2)), x, d)
            step(unary(hw.VExpOp), d, d)
            step(scalar_op(hw.VAddsOp, constant(1)), d, d)
            step(unary(hw.VReciprocalOp), d, d)
            step(scalar_op(hw.VMulsOp, constant(2)), d, d)
            step(scalar_op(hw.VAddsOp, constant(-1)), d, d)
        elif isinstance(op, tile.GeluOp):
            # x / (1 + e^(-s (x + c x^3))), the form of the tv reference
            step(binary(hw.VMulOp), x, x, d)
            step(binary(hw.VMulOp), d, x, d)
            step(scalar_op(hw.VMulsOp, constant(GELU_CUBIC)), d, d)
            step(binary(hw.VAddOp), d, x, d)
            step(scalar_op(hw.VMulsOp, constant(-GELU_SCALE)), d, d)
            step(unary(hw.VExpOp), d, d)
            step(scalar_op(hw.VAddsOp, constant(1)), d, d)
            step(binary(hw.VDivOp), x, d, d)
        else:
            raise op_error(op, f"tile-to-hw cannot lower {op.name}")

    def _block_operand(
        self,
        em: Emitter,
        value: SSAValue,
        count: int,
        buffer: BufferOf,
        scratch: list[SSAValue],
    ) -> SSAValue:
        """Broadcast the first `count` values of a column tile to one 32-byte block
        each (vbrcb reads whole repeats of values: pad a partial one first).
        Consumes its scratch buffers from the front of `scratch`."""
        blocks = scratch.pop(0)
        source = buffer(value)
        element_type = _tile(value).element_type
        if count % self.blocks_per_repeat:
            padded = scratch.pop(0)
            size = _buf(padded).element_count()
            em.vector(dup(em.scalar(0, element_type)), [Lanes(padded)], 1, 0, size)
            em.vector(unary(hw.VCopyOp), [Lanes(source), Lanes(padded)], 1, 0, count)
            source = padded
        repeats = -(-count // self.blocks_per_repeat)
        # Chunks of repeats start on a block of the source values.
        step = self.block // gcd(
            self.block, self.blocks_per_repeat * _buf(source).element_bytes
        )
        most = em.max_repeat - em.max_repeat % step
        done = 0
        while done < repeats:
            chunk = min(repeats - done, most)
            per_repeat = self.blocks_per_repeat
            em.emit(
                hw.VBrcbOp(
                    em.subview(source, done * per_repeat),
                    em.subview(
                        blocks, done * per_repeat * self.per_block(element_type)
                    ),
                    repeat=chunk,
                )
            )
            done += chunk
        return blocks

    def _binary(
        self,
        op: tile.TileBinaryOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
    ) -> None:
        region = self.region(op.result)
        element_type = _tile(op.result).element_type
        d = region.lanes(buffer(op.result))
        operands: list[Lanes | SSAValue] = []
        for operand in op.operands:
            if not isinstance(operand.type, TileType):
                operands.append(operand)
                continue
            kind, count = self._operand_lanes(operand, op.result)
            if kind == Kind.FULL:
                operands.append(region.lanes(buffer(operand)))
            elif kind == Kind.ROW_VECTOR:
                operands.append(Lanes(buffer(operand), kind))
            else:
                blocks = self._block_operand(em, operand, count, buffer, scratch)
                operands.append(Lanes(blocks, kind))
        lhs, rhs = operands

        def step(make: MakeOp, *lanes: Lanes) -> None:
            em.vector(make, lanes, region.rows, 0, region.cols)

        if isinstance(lhs, Lanes) and isinstance(rhs, Lanes):
            step(binary(BINARY_PRIMITIVES[type(op)]), lhs, rhs, d)
            return
        tile_first = isinstance(lhs, Lanes)
        t, s = (lhs, rhs) if tile_first else (rhs, lhs)
        assert isinstance(t, Lanes) and isinstance(s, SSAValue)
        if type(op) in SCALAR_PRIMITIVES:
            step(scalar_op(SCALAR_PRIMITIVES[type(op)], s), t, d)
        elif isinstance(op, tile.SubOp) and tile_first:
            step(scalar_op(hw.VAddsOp, self._negate(em, s)), t, d)
        elif isinstance(op, tile.SubOp):
            step(scalar_op(hw.VMulsOp, em.scalar(-1, element_type)), t, d)
            step(scalar_op(hw.VAddsOp, s), d, d)
        else:
            assert isinstance(op, tile.DivOp)
            splat = scratch.pop(0)
            count = _buf(splat).element_count()
            em.vector(dup(s), [Lanes(splat)], 1, 0, count)
            s_lanes = Lanes(splat, Kind.SPLAT_REPEAT)
            pair = (t, s_lanes) if tile_first else (s_lanes, t)
            step(binary(hw.VDivOp), *pair, d)

    def _negate(self, em: Emitter, value: SSAValue) -> SSAValue:
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            attr = owner.value
            if isinstance(attr, FloatAttr):
                return em.scalar(-attr.value.data, value.type)
            if isinstance(attr, IntegerAttr):
                return em.scalar(-attr.value.data, value.type)
        minus_one = em.scalar(-1, value.type)
        if tile.is_float(value.type):
            return em.emit(arith.MulfOp(value, minus_one)).results[0]
        return em.emit(arith.MuliOp(value, minus_one)).results[0]

    def _cast_plan(self, op: tile.CastOp) -> list[CastStep]:
        source, result = _tile(op.source), _tile(op.result)
        plan = cast_plan(source.element_type, result.element_type, op.round_mode)
        if plan is None:
            raise op_error(
                op,
                f"ascend_hw has no conversion {source.element_type} -> "
                f"{result.element_type}",
            )
        return plan

    def _cast_budget(self) -> int:
        """Elements of a cast's chunk: f32 intermediates of at most 1/32 of UB (or
        a repeat), a multiple of the f32 lanes."""
        ub = self.target.memories[str(MemorySpace.UB)].size
        assert ub is not None
        budget = max(self.target.vector.repeat_bytes, ub // 32) // 4
        unit = self.lanes_for(f32)
        return max(unit, budget - budget % unit)

    def _cast_chunks(self, op: tile.CastOp) -> _CastChunks:
        """The parts of a cast's region converted one after the other, so that
        its intermediate buffers stay small (at most 1/32 of UB or a repeat):
        groups of whole rows, or column chunks of one row when a row is longer;
        a single vcast, which has none, converts the region at once."""
        region = self.region(op.result)
        rows, cols = region.rows, region.cols
        source, result = _tile(op.source), _tile(op.result)
        plan = cast_plan(source.element_type, result.element_type, op.round_mode)
        if plan is not None and len(plan) == 1 and isinstance(plan[0], Convert):
            # One vcast has no intermediates: the region at once.
            return _CastChunks([(0, rows, 0, cols)], rows, region.pitch)
        budget = self._cast_budget()
        unit = self.lanes_for(f32)  # aligns chunk starts for every element type
        if rows == 1 or region.pitch == cols:
            count = rows * cols
            width = min(count, budget)
            return _CastChunks(
                [(0, 1, c, min(width, count - c)) for c in range(0, count, width)],
                1,
                width,
            )
        if region.pitch <= budget:
            group = min(rows, budget // region.pitch)
            return _CastChunks(
                [(r, min(group, rows - r), 0, cols) for r in range(0, rows, group)],
                group,
                region.pitch,
            )
        width = min(budget, _round_up(cols, unit))
        return _CastChunks(
            [
                (r, 1, c, min(width, cols - c))
                for r in range(rows)
                for c in range(0, cols, width)
            ],
            1,
            width,
        )

    def _cast_layout(self, op: tile.CastOp) -> _CastLayout:
        """Where each step of a cast writes (a scratch buffer of a chunk, or the
        result for the last step; a same-width conversion of an intermediate
        writes over it, a clamp works in place) and the temporaries of composite
        steps."""
        source, result = _tile(op.source), _tile(op.result)
        plan = cast_plan(source.element_type, result.element_type, op.round_mode) or []
        chunks = self._cast_chunks(op)
        count = chunks.rows * chunks.pitch
        ub = str(MemorySpace.UB)
        layout = _CastLayout([], [], [])

        def new(element_type: Attribute, size: int = count) -> int:
            layout.types.append(hw.BufferType([size], element_type, ub))
            return len(layout.types) - 1

        previous: int | None = None  # the scratch holding the last step's output
        for number, step in enumerate(plan):
            last = number == len(plan) - 1
            if isinstance(step, Clamp):
                output = previous
            elif last:
                output = None
            elif (
                isinstance(step, Convert)
                and previous is not None
                and tile.element_bytes(layout.types[previous].element_type)
                == tile.element_bytes(step.dest)
            ):
                output = previous  # in place: each repeat reads before it writes
            else:
                output = new(step.dest)
            match step:
                case LowHalves():
                    internal = [new(i32, self.lanes_for(i16))]
                    layout.tables.append(internal[0])
                case WrapToI8():
                    internal = [new(f32), new(f32)]
                case I32ToBf16():
                    internal = [new(f32), new(i32), new(i32), new(bf16)]
                case _:
                    internal = []
            layout.outputs.append(output)
            layout.internals.append(internal)
            previous = output
        return layout

    def _cast(
        self, op: tile.CastOp, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        plan = self._cast_plan(op)
        region = self.region(op.result)
        if not plan:
            em.vector(
                unary(hw.VCopyOp),
                [region.lanes(buffer(op.source)), region.lanes(buffer(op.result))],
                region.rows,
                0,
                region.cols,
            )
            return
        layout = self._cast_layout(op)
        chunks = self._cast_chunks(op)
        for row, rows, column, cols in chunks.parts:
            self._cast_part(
                op,
                em,
                buffer,
                scratch,
                layout,
                row * region.pitch + column,
                Region(rows, cols, chunks.pitch),
            )

    def _cast_part(
        self,
        op: tile.CastOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
        layout: _CastLayout,
        offset: int,
        part: Region,
    ) -> None:
        """Convert the `part.rows` x `part.cols` elements from element `offset` of
        the region; `part.pitch` is the intermediates' row pitch."""
        region = self.region(op.result)
        rows, cols = part.rows, part.cols
        current = region.lanes(buffer(op.source), offset)

        def lanes_of(index: int | None, element_type: Attribute) -> Lanes:
            if index is None:
                return region.lanes(buffer(op.result), offset)
            target = scratch[index]
            if _buf(target).element_type != element_type:
                target = em.alias(target, element_type)
            return part.lanes(target)

        for step, output, internal in zip(
            self._cast_plan(op), layout.outputs, layout.internals, strict=True
        ):
            out = lanes_of(output, step.dest)
            temporaries = [scratch[i] for i in internal]
            match step:
                case Convert():
                    em.vector(cast(step.mode), [current, out], rows, 0, cols)
                case Clamp():
                    for op_type, bound in (
                        (hw.VMaxsOp, step.low),
                        (hw.VMinsOp, step.high),
                    ):
                        em.vector(
                            scalar_op(op_type, em.scalar(bound, step.type)),
                            [out, out],
                            rows,
                            0,
                            cols,
                        )
                case LowHalves():
                    self._low_halves(em, current, out, part, temporaries[0])
                case WrapToI8():
                    self._wrap_to_i8(em, current, out, part, temporaries)
                case I32ToBf16():
                    self._i32_to_bf16(em, current, out, part, temporaries)
            current = out

    def _low_halves(
        self, em: Emitter, x: Lanes, y: Lanes, region: Region, table: SSAValue
    ) -> None:
        """y (i16) = the low halfword of each x (i32) over `region`'s rows and
        columns: a gather of every other halfword of x's bytes, `lanes` results
        per instruction."""
        lanes = self.lanes_for(i16)
        rows, cols = region.rows, region.cols
        if rows == 1 or (x.pitch == cols and y.pitch == cols):
            rows, cols = 1, rows * cols
        self._fill_offsets(em, table, min(lanes, cols), 4)
        halves = em.alias(x.buffer, i16)
        for row in range(rows):
            for column in range(0, cols, lanes):
                start = x.offset + row * x.pitch + column
                em.emit(
                    hw.VGatherOp(
                        em.subview(halves, 2 * start),
                        table,
                        em.subview(y.buffer, y.offset + row * y.pitch + column),
                        mask=_lane_mask(0, min(lanes, cols - column), lanes),
                    )
                )

    def _wrap_to_i8(
        self,
        em: Emitter,
        x: Lanes,
        y: Lanes,
        region: Region,
        temporaries: Sequence[SSAValue],
    ) -> None:
        """y (i8) = x (i16) wrapped: `x - 256 q` with `q = floor((x + 128) / 256)`,
        every step exact in f32 (and the result exact in f16)."""
        a, b = (region.lanes(t) for t in temporaries)
        q = region.lanes(em.alias(temporaries[1], i32))
        h = region.lanes(em.alias(temporaries[0], f16))

        def step(make: MakeOp, *lanes: Lanes) -> None:
            em.vector(make, lanes, region.rows, 0, region.cols)

        step(cast(hw.RoundMode.NONE), x, a)
        step(scalar_op(hw.VAddsOp, em.scalar(128.0, f32)), a, b)
        step(scalar_op(hw.VMulsOp, em.scalar(1 / 256, f32)), b, b)
        step(cast(hw.RoundMode.FLOOR), b, q)
        step(cast(hw.RoundMode.RINT), q, b)
        step(scalar_op(hw.VMulsOp, em.scalar(-256.0, f32)), b, b)
        step(binary(hw.VAddOp), a, b, b)
        step(cast(hw.RoundMode.RINT), b, h)
        step(cast(hw.RoundMode.TRUNC), h, y)

    def _i32_to_bf16(
        self,
        em: Emitter,
        x: Lanes,
        y: Lanes,
        region: Region,
        temporaries: Sequence[SSAValue],
    ) -> None:
        """y (bf16) = x (i32) rounded once (`I32ToBf16`): with `t = trunc_f32(x)`,
        `m = min(|x - t|, 1)`, `y = rint(t) + m (round(t) - rint(t))`, exact in f32."""
        t, e, other, rounded = (region.lanes(v) for v in temporaries)
        m = region.lanes(em.alias(temporaries[1], f32))
        away = region.lanes(em.alias(temporaries[2], f32))

        def step(make: MakeOp, *lanes: Lanes) -> None:
            em.vector(make, lanes, region.rows, 0, region.cols)

        step(cast(hw.RoundMode.TRUNC), x, t)
        step(cast(hw.RoundMode.TRUNC), t, e)
        step(binary(hw.VSubOp), x, e, e)
        step(scalar_op(hw.VMulsOp, em.scalar(-1, i32)), e, other)
        step(binary(hw.VMaxOp), e, other, e)
        step(scalar_op(hw.VMinsOp, em.scalar(1, i32)), e, e)
        step(cast(hw.RoundMode.RINT), e, m)
        step(cast(hw.RoundMode.ROUND), t, rounded)
        step(cast(hw.RoundMode.NONE), rounded, away)
        step(cast(hw.RoundMode.RINT), t, rounded)
        step(cast(hw.RoundMode.NONE), rounded, t)
        step(binary(hw.VSubOp), away, t, away)
        step(binary(hw.VMulOp), away, m, away)
        step(binary(hw.VAddOp), t, away, t)
        step(cast(hw.RoundMode.RINT), t, y)

    def _reduce(
        self,
        op: tile.TileReduceOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
    ) -> None:
        source = _tile(op.source)
        element_type = source.element_type
        src, dst = buffer(op.source), buffer(op.result)
        rows, cols = matrix_valid(source, self.valid[op.source])
        shape_rows, shape_cols = matrix_shape(source)
        combine = binary(REDUCE_COMBINE[type(op)])
        integer = not tile.is_float(element_type)
        if self._reduces_rows(op):
            if shape_cols == 1:
                self._copy_flat(em, src, dst, rows)
            elif integer:
                self._reduce_int_rows(op, em, src, dst, rows, cols, shape_cols, scratch)
            elif rows == 1:
                self._reduce_flat(op, em, src, dst, cols, scratch)
            else:
                self._reduce_rows(op, em, src, dst, rows, cols, shape_cols, scratch)
            return
        if shape_rows == 1:
            self._copy_flat(em, src, dst, cols)
        elif shape_cols == 1 and integer:
            self._reduce_int_rows(op, em, src, dst, 1, rows, rows, scratch)
        elif shape_cols == 1:
            self._reduce_flat(op, em, src, dst, rows, scratch)
        elif rows == 1:
            self._copy_flat(em, src, dst, cols)
        else:
            # Pairwise over rows: row i combines with row i + ceil(rows / 2).
            del element_type
            current, count = src, rows
            while count > 1:
                half = count // 2
                keep = count - half
                target = dst if keep == 1 else scratch[0]
                em.vector(
                    combine,
                    [
                        Lanes(current, Kind.FULL, 0, shape_cols),
                        Lanes(current, Kind.FULL, keep * shape_cols, shape_cols),
                        Lanes(target, Kind.FULL, 0, shape_cols),
                    ],
                    half,
                    0,
                    cols,
                )
                if count % 2 and current is src and keep > 1:
                    em.vector(
                        unary(hw.VCopyOp),
                        [
                            Lanes(src, Kind.FULL, half * shape_cols, shape_cols),
                            Lanes(target, Kind.FULL, half * shape_cols, shape_cols),
                        ],
                        1,
                        0,
                        cols,
                    )
                current, count = target, keep

    def _copy_flat(self, em: Emitter, src: SSAValue, dst: SSAValue, n: int) -> None:
        em.vector(unary(hw.VCopyOp), [Lanes(src), Lanes(dst)], 1, 0, n)

    def _require_vreduce(self, op: tile.TileReduceOp) -> type[hw.VectorReduceOp]:
        element_type = _tile(op.source).element_type
        if not tile.is_float(element_type):
            raise op_error(
                op,
                f"the vector unit reduces a row of {element_type} only by its "
                "float reductions (vreduce_* take f16/f32): cast first",
            )
        return REDUCE_PRIMITIVES[type(op)]

    def _flat_levels(self, n: int, element_type: Attribute) -> list[tuple[int, int]]:
        """(whole repeats, rest) of each level of a long flat reduction: each level
        reduces every repeat of the previous level's results (and its rest)."""
        lanes = self.lanes_for(element_type)
        levels: list[tuple[int, int]] = []
        while n > lanes:
            whole, rest = divmod(n, lanes)
            levels.append((whole, rest))
            n = whole
        return levels

    def _flat_scratch(self, n: int, element_type: Attribute) -> list[hw.BufferType]:
        ub, per_block = str(MemorySpace.UB), self.per_block(element_type)
        types: list[hw.BufferType] = []
        for whole, rest in self._flat_levels(n, element_type):
            types.append(hw.BufferType([_round_up(whole, per_block)], element_type, ub))
            if rest:
                types.append(hw.BufferType([per_block], element_type, ub))
        return types

    def _reduce_flat(
        self,
        op: tile.TileReduceOp,
        em: Emitter,
        src: SSAValue,
        dst: SSAValue,
        n: int,
        scratch: list[SSAValue],
    ) -> None:
        """Reduce n contiguous elements to dst[0]: per repeat into a partial buffer
        (the rest of a partial repeat into a slot of its own), level by level
        until one repeat is left; the rests are combined at the end."""
        vreduce = self._require_vreduce(op)
        element_type = _buf(src).element_type
        lanes = self.lanes_for(element_type)
        most = em.max_repeat - em.max_repeat % self.per_block(element_type)
        rests: list[SSAValue] = []
        pending = list(scratch)
        for whole, rest in self._flat_levels(n, element_type):
            partial = pending.pop(0)
            done = 0
            while done < whole:
                repeat = min(whole - done, most)
                em.emit(
                    vreduce(
                        em.subview(src, done * lanes),
                        em.subview(partial, done),
                        repeat=repeat,
                    )
                )
                done += repeat
            if rest:
                slot = pending.pop(0)
                em.emit(vreduce(em.subview(src, whole * lanes), slot, mask=rest))
                rests.append(slot)
            src, n = partial, whole
        em.emit(vreduce(src, dst, mask=_lane_mask(0, n, lanes)))
        for slot in rests:
            em.vector(
                binary(REDUCE_COMBINE[type(op)]),
                [Lanes(dst), Lanes(slot), Lanes(dst)],
                1,
                0,
                1,
            )

    def _int_folds(self, element_type: Attribute, cols: int) -> list[int]:
        """The widths an integer row reduction folds `cols` columns through: each
        combines columns [h, w) into [0, w - h) with h the half rounded up to a
        32-byte block, until a row fits in one block."""
        per_block = self.per_block(element_type)
        widths = [cols]
        while widths[-1] > per_block:
            widths.append(_round_up(-(-widths[-1] // 2), per_block))
        return widths

    def _int_reduce_scratch(
        self, element_type: Attribute, rows: int, cols: int
    ) -> list[hw.BufferType]:
        """The folded rows (when longer than a block), their transpose and the
        gather's offset tables (`_reduce_int_rows`)."""
        ub = str(MemorySpace.UB)
        per_block = self.per_block(element_type)
        widths = self._int_folds(element_type, cols)
        types: list[hw.BufferType] = []
        if len(widths) > 1:
            types.append(hw.BufferType([rows * widths[1]], element_type, ub))
        types.append(
            hw.BufferType([widths[-1] * _round_up(rows, per_block)], element_type, ub)
        )
        return types + self._gather_tables(element_type, rows)[2]

    def _reduce_int_rows(
        self,
        op: tile.TileReduceOp,
        em: Emitter,
        src: SSAValue,
        dst: SSAValue,
        rows: int,
        cols: int,
        pitch: int,
        scratch: list[SSAValue],
    ) -> None:
        """Reduce each of `rows` integer rows of `cols` elements to dst[row]
        (vreduce is float-only): fold each row with vadd/vmax/vmin into one 32-byte
        block (`_int_folds`), transpose the blocks (a gather) so that a row's
        values lie in one column, then combine those rows pairwise."""
        element_type = _buf(src).element_type
        combine = binary(REDUCE_COMBINE[type(op)])
        per_block = self.per_block(element_type)
        widths = self._int_folds(element_type, cols)
        pending = list(scratch)
        current, current_pitch = src, pitch
        if len(widths) > 1:
            folded, folded_pitch = pending.pop(0), widths[1]
            for number, (width, half) in enumerate(pairwise(widths)):
                source = Lanes(current, Kind.FULL, 0, current_pitch)
                em.vector(
                    combine,
                    [
                        source,
                        replace(source, offset=half),
                        Lanes(folded, Kind.FULL, 0, folded_pitch),
                    ],
                    rows,
                    0,
                    width - half,
                )
                if number == 0 and width - half < half:
                    em.vector(
                        unary(hw.VCopyOp),
                        [source, Lanes(folded, Kind.FULL, 0, folded_pitch)],
                        rows,
                        width - half,
                        half,
                    )
                current, current_pitch = folded, folded_pitch
        width = widths[-1]
        transposed = pending.pop(0)
        t_pitch = _round_up(rows, per_block)
        self._gather_transpose(
            em,
            current,
            current_pitch,
            transposed,
            Region(width, rows, t_pitch),
            element_type,
            pending[0],
            pending[1:],
        )
        if width == 1:
            self._copy_flat(em, transposed, dst, rows)
        count = width
        while count > 1:
            half = count // 2
            keep = count - half
            target = dst if keep == 1 else transposed
            em.vector(
                combine,
                [
                    Lanes(transposed, Kind.FULL, 0, t_pitch),
                    Lanes(transposed, Kind.FULL, keep * t_pitch, t_pitch),
                    Lanes(target, Kind.FULL, 0, t_pitch),
                ],
                half,
                0,
                rows,
            )
            count = keep

    def _reduce_rows(
        self,
        op: tile.TileReduceOp,
        em: Emitter,
        src: SSAValue,
        dst: SSAValue,
        rows: int,
        cols: int,
        pitch: int,
        scratch: list[SSAValue],
    ) -> None:
        """Reduce each of `rows` rows of `cols` elements to dst[row]."""
        vreduce = self._require_vreduce(op)
        element_type = _buf(src).element_type
        lanes = self.lanes_for(element_type)
        e = tile.element_bytes(element_type)
        rep_stride = [pitch * e // self.block]

        # Row chunks start on a block of the packed results.
        most = em.max_repeat - em.max_repeat % self.per_block(element_type)

        def reduce_chunk(column: int, out: SSAValue) -> None:
            mask = _lane_mask(0, min(lanes, cols - column), lanes)
            row = 0
            while row < rows:
                repeat = min(rows - row, most)
                em.emit(
                    vreduce(
                        em.subview(src, row * pitch + column),
                        em.subview(out, row),
                        repeat=repeat,
                        mask=mask,
                        rep_stride=rep_stride,
                    )
                )
                row += repeat

        if cols <= lanes:
            reduce_chunk(0, dst)
            return
        partials = scratch[0]
        chunks = -(-cols // lanes)
        if self._reduces_by_row(rows, cols, element_type):
            # Each row's whole repeats in one vreduce (a row of partials each),
            # one vreduce of the rows of partials; a partial last repeat of
            # every row in one more vreduce (by rows), combined at the end.
            full, rest = divmod(cols, lanes)
            partial_pitch = _round_up(full, self.per_block(element_type))
            for row in range(rows):
                em.emit(
                    vreduce(
                        em.subview(src, row * pitch),
                        em.subview(partials, row * partial_pitch),
                        repeat=full,
                        rep_stride=[lanes * e // self.block],
                    )
                )
            em.emit(
                vreduce(
                    partials,
                    dst,
                    repeat=rows,
                    mask=_lane_mask(0, full, lanes),
                    rep_stride=[partial_pitch * e // self.block],
                )
            )
            if rest:
                tail = em.subview(partials, rows * partial_pitch)
                reduce_chunk(full * lanes, tail)
                em.vector(
                    binary(REDUCE_COMBINE[type(op)]),
                    [Lanes(dst), Lanes(tail), Lanes(dst)],
                    1,
                    0,
                    rows,
                )
            return
        stride = _round_up(rows, self.per_block(element_type))
        for chunk in range(chunks):
            reduce_chunk(chunk * lanes, em.subview(partials, chunk * stride))
        combine = binary(REDUCE_COMBINE[type(op)])
        em.vector(
            combine,
            [Lanes(partials), Lanes(partials, Kind.FULL, stride), Lanes(dst)],
            1,
            0,
            rows,
        )
        for chunk in range(2, chunks):
            em.vector(
                combine,
                [Lanes(dst), Lanes(partials, Kind.FULL, chunk * stride), Lanes(dst)],
                1,
                0,
                rows,
            )

    @staticmethod
    def _transpose_copies(op: tile.TransposeOp) -> bool:
        """Whether the transpose is a copy: a row `[1, N]` and a column `[N, 1]`
        are both N contiguous elements."""
        return 1 in matrix_shape(_tile(op.source))

    def _gather_tables(
        self, element_type: Attribute, used: int
    ) -> tuple[int, int, list[hw.BufferType]]:
        """Lanes of a gather into a transpose's result, the rows of its offset
        table (one per element of a 32-byte block of the source, or a single row
        rebuilt for every result row when that table would take more than 1/16 of
        UB) and the scratch buffers: the table, then for a one-row table the row
        rebuilt. `used` lanes (the result's valid columns) are filled."""
        ub = str(MemorySpace.UB)
        lanes = self.lanes_for(element_type)
        used = min(used, lanes)
        rows = self.per_block(element_type)
        entries = (rows - 1) * lanes + used
        size = self.target.memories[ub].size
        assert size is not None
        if entries * tile.element_bytes(i32) > size // 16:
            rows, entries = 1, used
        entries = _round_up(entries, self.per_block(i32))
        types = [hw.BufferType([entries], i32, ub)]
        if rows == 1:
            types.append(hw.BufferType([entries], i32, ub))
        return lanes, rows, types

    def _transpose(
        self,
        op: tile.TransposeOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
    ) -> None:
        """Result row j gathers column j of the source: lane l reads byte
        `(l * C + j) * e` (C the source's row pitch). The gather's source starts on
        the 32-byte block holding column j, so the byte offsets only depend on
        `j mod (32 / e)`: a table of those rows serves every block of result rows."""
        source = _tile(op.source)
        element_type = source.element_type
        src, dst = buffer(op.source), buffer(op.result)
        _, pitch = matrix_shape(source)
        region = self.region(op.result)  # rows = source columns, cols = source rows
        if tile.element_bytes(element_type) == 1:
            self._transpose_bytes(op, em, src, dst, scratch)
            return
        if self._transpose_copies(op):
            self._copy_flat(em, src, dst, region.rows * region.cols)
            return
        self._gather_transpose(
            em, src, pitch, dst, region, element_type, scratch[0], scratch[1:]
        )

    def _transpose_scratch(self, op: tile.TransposeOp) -> list[hw.BufferType]:
        """The gather's offset tables; for 8-bit elements, which the vector unit
        moves only by conversion, f16 copies of the source and the result."""
        ub = str(MemorySpace.UB)
        element_type = _tile(op.result).element_type
        types: list[hw.BufferType] = []
        if tile.element_bytes(element_type) == 1:
            element_type = f16
            for value in (op.source, op.result):
                region = self.region(value)
                types.append(hw.BufferType([region.rows * region.pitch], f16, ub))
        if self._transpose_copies(op):
            return types[:1]
        return types + self._gather_tables(element_type, self.region(op.result).cols)[2]

    def _transpose_bytes(
        self,
        op: tile.TransposeOp,
        em: Emitter,
        src: SSAValue,
        dst: SSAValue,
        scratch: list[SSAValue],
    ) -> None:
        """An 8-bit transpose: to f16 (exact), transposed, back (exact)."""
        source, result = self.region(op.source), self.region(op.result)
        wide = scratch[0]
        em.vector(
            cast(hw.RoundMode.NONE),
            [source.lanes(src), source.lanes(wide)],
            source.rows,
            0,
            source.cols,
        )
        if not self._transpose_copies(op):
            transposed = scratch[1]
            self._gather_transpose(
                em, wide, source.pitch, transposed, result, f16, scratch[2], scratch[3:]
            )
            wide = transposed
        em.vector(
            cast(hw.RoundMode.TRUNC),
            [result.lanes(wide), result.lanes(dst)],
            result.rows,
            0,
            result.cols,
        )

    def _gather_transpose(
        self,
        em: Emitter,
        src: SSAValue,
        pitch: int,
        dst: SSAValue,
        region: Region,
        element_type: Attribute,
        table: SSAValue,
        offsets_scratch: Sequence[SSAValue],
    ) -> None:
        """dst[j, i] = src[i, j] for the result `region` (its rows are the source's
        columns); `pitch` is the source's row pitch, `table` (and, for a
        one-row table, `offsets_scratch[0]`) the scratch of `_gather_tables`."""
        e = tile.element_bytes(element_type)
        lanes, table_rows, _ = self._gather_tables(element_type, region.cols)
        per_block = self.per_block(element_type)
        used = min(lanes, region.cols)
        self._fill_offsets(em, table, used, pitch * e)
        # Row i = row 0 + i * e, doubling again.
        rows_done = 1
        while rows_done < table_rows:
            count = min(rows_done, table_rows - rows_done)
            em.vector(
                scalar_op(hw.VAddsOp, em.scalar(rows_done * e, i32)),
                [
                    Lanes(table, pitch=lanes),
                    Lanes(table, Kind.FULL, rows_done * lanes, lanes),
                ],
                count,
                0,
                used,
            )
            rows_done += count
        dst_stride = region.pitch * e // self.block
        for column in range(0, region.cols, lanes):
            mask = _lane_mask(0, min(lanes, region.cols - column), lanes)
            row = 0
            while row < region.rows:
                block_start = row - row % per_block
                src_view = em.subview(src, column * pitch + block_start)
                if table_rows == 1:
                    offsets = offsets_scratch[0]
                    em.vector(
                        scalar_op(hw.VAddsOp, em.scalar((row - block_start) * e, i32)),
                        [Lanes(table), Lanes(offsets)],
                        1,
                        0,
                        min(lanes, region.cols - column),
                    )
                    repeat = 1
                else:
                    offsets = table
                    repeat = min(per_block, region.rows - row)
                em.emit(
                    hw.VGatherOp(
                        src_view,
                        offsets,
                        em.subview(dst, row * region.pitch + column),
                        repeat=repeat,
                        mask=mask,
                        rep_stride=[dst_stride],
                    )
                )
                row += repeat

    def _broadcast(
        self,
        op: tile.BroadcastOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
    ) -> None:
        region = self.region(op.result)
        kind, count = self._operand_lanes(op.source, op.result)
        if kind == Kind.FULL:
            source = region.lanes(buffer(op.source))
        elif kind == Kind.ROW_VECTOR:
            source = Lanes(buffer(op.source), kind)
        else:
            source = Lanes(
                self._block_operand(em, op.source, count, buffer, scratch), kind
            )
        em.vector(
            unary(hw.VCopyOp),
            [source, region.lanes(buffer(op.result))],
            region.rows,
            0,
            region.cols,
        )

    def _fill(self, op: tile.FillOp, em: Emitter, buffer: BufferOf) -> None:
        tile_type = _tile(op.result)
        dst = buffer(op.result)
        if tile_type.pad_value is not None and not self._fully_valid(op.result):
            self._fill_all(em, dst, tile_type, tile_type.pad_value)
        region = self.region(op.result)
        if tile.element_bytes(tile_type.element_type) > 1:
            em.vector(dup(op.value), [region.lanes(dst)], region.rows, 0, region.cols)
            return
        # vdup writes 16/32-bit elements: the byte twice, over halfwords.
        halves = em.alias(dst, i16)
        pattern = self._byte_pattern(em, op.value)
        if region.pitch == 1:
            em.vector(dup(pattern), [Lanes(halves)], 1, 0, -(-region.rows // 2))
        else:
            em.vector(
                dup(pattern),
                [Lanes(halves, Kind.FULL, 0, region.pitch // 2)],
                region.rows,
                0,
                -(-region.cols // 2),
            )

    @staticmethod
    def _byte_pattern(em: Emitter, value: SSAValue) -> SSAValue:
        """The i16 whose two bytes are the i8 `value` (`(v & 0xff) * 257`)."""
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return em.scalar(_byte_pair(owner.value.value.data), i16)
        widened = em.emit(arith.ExtUIOp(value, i16)).results[0]
        return em.emit(arith.MuliOp(widened, em.scalar(257, i16))).results[0]

    def _pad(self, op: tile.PadOp, em: Emitter, buffer: BufferOf) -> None:
        tile_type = _tile(op.result)
        region = self.region(op.result)
        src, dst = buffer(op.source), buffer(op.result)
        if src is not dst:
            em.vector(
                unary(hw.VCopyOp),
                [region.lanes(src), region.lanes(dst)],
                region.rows,
                0,
                region.cols,
            )
        pad = tile_type.pad_value
        assert pad is not None
        value = em.scalar(
            pad_scalar(tile_type.element_type, pad), tile_type.element_type
        )
        shape_rows, pitch = matrix_shape(tile_type)
        if pitch > 1:
            em.vector(dup(value), [region.lanes(dst)], region.rows, region.cols, pitch)
            em.vector(
                dup(value),
                [Lanes(dst, Kind.FULL, region.rows * pitch, pitch)],
                shape_rows - region.rows,
                0,
                pitch,
            )
        else:
            em.vector(dup(value), [Lanes(dst)], 1, region.rows, shape_rows)


def _memref(value: SSAValue) -> MemRefType:
    assert isinstance(value.type, MemRefType)
    return value.type
