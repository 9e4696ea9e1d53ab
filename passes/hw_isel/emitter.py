"""The vector-instruction machinery every tile op family emits through.

`Lanes` names a vector operand (a buffer and how the region's elements map onto
it, `Kind`); `Emitter.vector` covers a valid region with instructions: as one
contiguous range (full rows, or one row) in repeats of `lanes` elements with a
masked last repeat, or row by row (one repeat per row, `rep_stride` = the row
pitch) in column chunks of `lanes` elements with a mask on the last chunk; more
than `vector.max_repeat` repeats become several instructions. `ConstantPool`
hoists scalar constants to the function entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum, auto
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import TileType
from pypto_mlir.passes.located_builder import LocatedBuilder
from pypto_mlir.targets import Target

Valid = tuple[int, ...]
"""The static valid extents of a tile, one per dim."""


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
        return as_buffer(self.buffer).element_bytes


def as_buffer(value: SSAValue) -> hw.BufferType:
    assert isinstance(value.type, hw.BufferType)
    return value.type


def as_tile(value: SSAValue) -> TileType:
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


def round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def lane_mask(lo: int, hi: int, lanes: int) -> int | hw.MaskAttr | None:
    """The mask enabling lanes [lo, hi) of a repeat of `lanes` lanes."""
    if lo == 0:
        return None if hi == lanes else hi
    return hw.MaskAttr((1 << hi) - (1 << lo))


MakeOp = Callable[[Sequence[SSAValue], dict[str, object]], Operation]
"""Builds one vector instruction from its lane operands and vector properties."""


class ConstantPool:
    """Constants hoisted to the function entry, one per value and type."""

    def __init__(self, point: InsertPoint):
        self._builder = LocatedBuilder(point)
        self._values: dict[tuple[Attribute, object], SSAValue] = {}

    def get(self, value: float | int, type: Attribute) -> SSAValue:
        key = (type, repr(value))
        if key not in self._values:
            if isinstance(type, IndexType) or not tile.is_float(type):
                attr: Attribute = IntegerAttr(int(value), type)
            else:
                attr = FloatAttr(float(value), type)  # type: ignore[arg-type]
            op = self._builder.insert(arith.ConstantOp(attr))
            self._builder.insertion_point = InsertPoint.after(op)
            self._values[key] = op.result
        return self._values[key]


class Emitter:
    """Inserts ascend_hw ops before the tile op being lowered, with its location
    (a `LocatedBuilder`), and covers regions with vector instructions."""

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
        self._builder: LocatedBuilder | None = None

    def at(self, op: Operation) -> None:
        """Emit before `op`, with its location."""
        self._builder = LocatedBuilder.before(op)

    def emit(self, op: Operation) -> Operation:
        assert self._builder is not None, "Emitter.at(op) first"
        return self._builder.insert(op)

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
        buf = as_buffer(buffer)
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
            issue(base, 1, lane_mask(head, min(lane_count, end - base), lane_count))
            position = base + lane_count
        while position < end:
            repeats = (end - position) // lane_count
            if repeats:
                repeats = min(repeats, self.max_repeat)
                issue(position, repeats, None)
                position += repeats * lane_count
            else:
                issue(position, 1, lane_mask(0, end - position, lane_count))
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
            mask = lane_mask(
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


def fill_offsets(em: Emitter, table: SSAValue, count: int, step: int) -> None:
    """table[l] = l * step (i32) for l < count: one lane at a time over the
    first 32-byte block, then doubling (lanes [k, 2k) = lanes [0, k) + k step)."""
    first = min(em.block // tile.element_bytes(i32), count)
    for lane in range(first):
        em.emit(
            hw.VDupOp(em.scalar(lane * step, i32), table, mask=hw.MaskAttr(1 << lane))
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


def copy_flat(em: Emitter, src: SSAValue, dst: SSAValue, n: int) -> None:
    """dst[0, n) = src[0, n)."""
    em.vector(unary(hw.VCopyOp), [Lanes(src), Lanes(dst)], 1, 0, n)
