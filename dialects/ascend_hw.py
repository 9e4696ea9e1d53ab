"""The `ascend_hw` dialect: level 3 of pypto-mlir, what an AI Core executes.

Buffers sit at fixed byte offsets in named on-chip memories; every instruction
runs on one pipe (S, MTE1, MTE2, MTE3, M, V, FIX); pipes are ordered against each
other only by `set_flag`/`wait_flag` and `pipe_barrier`. Scalar control stays in
`scf`/`arith`/`func`. Every op's docstring states its exact semantics: the
interpreter (`pypto_mlir/interp/ascend_hw/`) implements them byte for byte.
docs/ascend_hw.md has the op table.

Conventions shared by all ops:

- **Buffers.** A value of type `!ascend_hw.buf<64x1024xf16, ub>` is a typed
  window of one on-chip memory. Its byte *address* is the offset of the `alloc`
  that made it plus the offsets of the `subview`s applied since; its byte size is
  `prod(shape) * element bytes`. In the `nd` layout element `[i0, ..., in]` is at
  `address + row_major_index(i) * element_bytes`. The `nz` layout is the cube's
  fractal format for a 2-D matrix `[R, C]`: fractals of `F` rows by `C0` columns,
  `F = cube.fractal_m` and `C0 = cube.fractal_k_bytes / element_bytes` of the
  target (16 x 16 for f16, 16 x 8 for f32, 16 x 32 for i8). Element `(r, c)` is
  at element offset `(c // C0) * R * C0 + r * C0 + c % C0`: column blocks of
  `C0` columns one after the other, each `R` rows of `C0` contiguous elements.
  `R` is a multiple of `F` and `C` of `C0`. (The hardware keeps f32 L0C data in
  16 x 16 fractals and L0A/L0B in other fractal orders; only the byte order
  differs, never the values an instruction computes.)
- **GM.** GM operands are builtin `memref` values (strided layouts allowed).
  Element `[i]` of a memref is at byte `(offset + sum(i_d * stride_d)) *
  element_bytes` from the start of its GM tensor, with the offset and strides of
  the memref's layout (row-major when it has none).
- **Units.** Byte counts and byte gaps are in bytes; vector block and repeat
  strides are in 32-byte data blocks (the UB alignment of the target); `rows`,
  `cols`, `m`, `n`, `k` count elements.
- **Target.** Hardware numbers come from the target the enclosing
  `builtin.module` names with `pypto.target = "..."` (a builtin name or a TOML
  path); without one they come from the default target (`ascend910b`) and
  capacities are not checked. Addresses that are only known at run time
  (dynamic `subview` offsets) are checked by the simulator.
- **Instructions.** Every op that the core executes is an `HwInstruction`:
  `op.pipe` is the pipe that executes it, `op.read_buffers()` /
  `op.write_buffers()` are the buffer and memref values it reads and writes.

One module for the whole dialect, as xDSL's own dialects are (`builtin`, `arith`):
its length is its 45 ops, each a class with the docstring that states its
semantics; splitting it would scatter the op list a reader looks up.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from enum import auto
from math import prod
from typing import ClassVar, cast

from xdsl.dialects import scf
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    bf16,
    f16,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    OpResult,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    base,
    irdl_attr_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from pypto_mlir.dialects import common
from pypto_mlir.dialects.common import (
    ELEMENT_TYPES,
    MATMUL_TYPES,
    VECTOR_ARITH_TYPES,
    VECTOR_FLOAT_TYPES,
    Layout,
    irdl_op_definition,
    names,
)
from pypto_mlir.dialects.common import (
    TARGET_ATTR as TARGET_ATTR,
)
from pypto_mlir.dialects.common import CmpMode as CmpMode
from pypto_mlir.dialects.common import is_float as is_float_type
from pypto_mlir.dialects.common import target_of as target_of
from pypto_mlir.targets import Target

# --------------------------------------------------------------------------------------
# Enumerations
# --------------------------------------------------------------------------------------


class MemorySpace(StrEnum):
    """The memories of an AI Core: GM (off-chip) and the on-chip ones."""

    GM = auto()
    L1 = auto()
    L0A = auto()
    L0B = auto()
    L0C = auto()
    UB = auto()


class Pipe(StrEnum):
    """The pipes (instruction queues) of an AI Core; `all` only in `pipe_barrier`."""

    S = auto()
    MTE1 = auto()
    MTE2 = auto()
    MTE3 = auto()
    M = auto()
    V = auto()
    FIX = auto()
    ALL = auto()


class RoundMode(StrEnum):
    """How `vcast` rounds (Ascend C RoundMode)."""

    NONE = auto()
    """No rounding: only for conversions that are exact (f16 -> f32, i8 -> f16)."""
    RINT = auto()
    """To nearest, ties to even."""
    ROUND = auto()
    """To nearest, ties away from zero."""
    FLOOR = auto()
    CEIL = auto()
    TRUNC = auto()
    ODD = auto()
    """Von Neumann rounding: truncate, then set the lowest bit if inexact (f32 -> f16)."""


@irdl_attr_definition
class MemorySpaceAttr(EnumAttribute[MemorySpace], SpacedOpaqueSyntaxAttribute):
    name = "ascend_hw.space"


@irdl_attr_definition
class PipeAttr(EnumAttribute[Pipe], SpacedOpaqueSyntaxAttribute):
    name = "ascend_hw.pipe"


@irdl_attr_definition
class LayoutAttr(EnumAttribute[Layout], SpacedOpaqueSyntaxAttribute):
    name = "ascend_hw.layout"


@irdl_attr_definition
class RoundModeAttr(EnumAttribute[RoundMode], SpacedOpaqueSyntaxAttribute):
    name = "ascend_hw.round"


@irdl_attr_definition
class CmpModeAttr(EnumAttribute[CmpMode], SpacedOpaqueSyntaxAttribute):
    name = "ascend_hw.cmp"


@irdl_attr_definition
class MaskAttr(ParametrizedAttribute):
    """A bit-pattern lane mask: `#ascend_hw.mask<0xff00ff>`; bit l enables lane l.

    The hardware's 128-bit mask register (Ascend C `uint64_t mask[2]`, mask[0]
    holding lanes 0-63). Vector ops take it as `mask`, or a lane count instead.
    """

    name = "ascend_hw.mask"

    bits: IntAttr

    def __init__(self, bits: int | IntAttr):
        super().__init__(bits if isinstance(bits, IntAttr) else IntAttr(bits))

    def verify(self) -> None:
        if not 0 < self.bits.data < 1 << 128:
            raise VerifyException(
                f"a lane mask is a non-zero 128-bit pattern, got {self.bits.data:#x}"
            )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.bits.data:#x}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_boolean=False)),)


# --------------------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------------------


INDEX_BYTES = 8
"""Bytes of one element of a GM `memref<..xindex>` (CSR offsets and column
indices, docs/sparse.md): 64-bit, as the interpreters' index values are."""


def element_bytes(element_type: Attribute) -> int:
    """Size in bytes of one element of a buffer element type (or of `index`,
    which only GM memrefs hold)."""
    if isinstance(element_type, IndexType):
        return INDEX_BYTES
    return common.element_bytes(element_type, "an ascend_hw element type")


# --------------------------------------------------------------------------------------
# The buffer type
# --------------------------------------------------------------------------------------


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """A typed window of on-chip memory: `!ascend_hw.buf<64x1024xf16, ub>`.

    Parameters: static shape, element type, memory space (any but `gm`) and
    layout (`nd` when not written; `nz` is written last: `<64x64xf16, l1, nz>`).
    """

    name = "ascend_hw.buf"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    space: MemorySpaceAttr
    layout: LayoutAttr

    def __init__(
        self,
        shape: Sequence[int] | ArrayAttr[IntAttr],
        element_type: Attribute,
        space: MemorySpace | str | MemorySpaceAttr,
        layout: Layout | str | LayoutAttr = Layout.ND,
    ):
        if not isinstance(shape, ArrayAttr):
            shape = ArrayAttr(IntAttr(d) for d in shape)
        if not isinstance(space, MemorySpaceAttr):
            space = MemorySpaceAttr(MemorySpace(space))
        if not isinstance(layout, LayoutAttr):
            layout = LayoutAttr(Layout(layout))
        super().__init__(shape, element_type, space, layout)

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def memory_space(self) -> MemorySpace:
        return self.space.data

    @property
    def layout_kind(self) -> Layout:
        return self.layout.data

    @property
    def element_bytes(self) -> int:
        return element_bytes(self.element_type)

    def element_count(self) -> int:
        return prod(self.get_shape())

    def byte_size(self) -> int:
        return self.element_count() * self.element_bytes

    def verify(self) -> None:
        shape = self.get_shape()
        if not shape or any(d < 1 for d in shape):
            raise VerifyException(
                f"buffer shape must be non-empty with positive sizes, got {list(shape)}"
            )
        if self.element_type not in ELEMENT_TYPES:
            raise VerifyException(
                f"buffer element type must be one of {names(ELEMENT_TYPES)}, "
                f"got {self.element_type}"
            )
        if self.memory_space == MemorySpace.GM:
            raise VerifyException(
                "a buffer lives in an on-chip memory; GM operands are memrefs"
            )
        if self.layout_kind == Layout.NZ and len(shape) != 2:
            raise VerifyException(f"an nz buffer is 2-D, got shape {list(shape)}")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("x".join(str(d) for d in self.get_shape()) + "x")
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.memory_space}")
            if self.layout_kind != Layout.ND:
                printer.print_string(f", {self.layout_kind}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            space = parser.parse_str_enum(MemorySpace)
            layout = Layout.ND
            if parser.parse_optional_punctuation(",") is not None:
                layout = parser.parse_str_enum(Layout)
        return (
            ArrayAttr(IntAttr(d) for d in shape),
            element_type,
            MemorySpaceAttr(space),
            LayoutAttr(layout),
        )


def _buf(value: SSAValue) -> BufferType:
    assert isinstance(value.type, BufferType)
    return value.type


# --------------------------------------------------------------------------------------
# Target lookup
# --------------------------------------------------------------------------------------


def vector_block_bytes(target: Target) -> int:
    """The vector unit's data block (32 B): the unit of block and repeat strides.

    It is the UB alignment (Ascend C: a DataBlock is 32 B, the UB address unit).
    """
    return target.memories["ub"].alignment


def nz_c0(element_type: Attribute, target: Target) -> int:
    """Columns of one `nz` fractal for this element type (16 for f16)."""
    return target.cube.fractal_k_bytes // element_bytes(element_type)


def nz_element_offset(row: int, col: int, rows: int, c0: int) -> int:
    """Element offset of logical (row, col) in an `nz` matrix of `rows` rows."""
    return (col // c0) * rows * c0 + row * c0 + col % c0


def element_offset(buf: BufferType, index: Sequence[int], target: Target) -> int:
    """Element offset of `index` from the start of a buffer, by its layout."""
    shape = buf.get_shape()
    if buf.layout_kind == Layout.NZ:
        return nz_element_offset(
            index[0], index[1], shape[0], nz_c0(buf.element_type, target)
        )
    offset = 0
    for i, d in zip(index, shape, strict=True):
        offset = offset * d + i
    return offset


def _check_nz_shape(what: str, buf: BufferType, target: Target) -> None:
    if buf.layout_kind != Layout.NZ:
        return
    rows, cols = buf.get_shape()
    frac_rows, c0 = target.cube.fractal_m, nz_c0(buf.element_type, target)
    if rows % frac_rows or cols % c0:
        raise VerifyException(
            f"{what} {buf} is not made of {frac_rows}x{c0} nz fractals "
            f"(target {target.name})"
        )


def _constant(value: SSAValue) -> int | None:
    """The value of an `arith.constant` index/integer operand, else None."""
    owner = value.owner
    if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _constants(values: Sequence[SSAValue]) -> list[int] | None:
    """The values of constant operands, or None if any is not a constant."""
    consts: list[int] = []
    for value in values:
        if (const := _constant(value)) is None:
            return None
        consts.append(const)
    return consts


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _i64(value: int | IntegerAttr) -> IntegerAttr:
    return value if isinstance(value, IntegerAttr) else IntegerAttr(value, i64)


def _i64_array(values: Sequence[int] | DenseArrayBase | None) -> DenseArrayBase | None:
    if values is None or isinstance(values, DenseArrayBase):
        return values
    return DenseArrayBase.from_list(i64, values)


# --------------------------------------------------------------------------------------
# Buffer definition: alloc and subview
# --------------------------------------------------------------------------------------


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A buffer at a fixed byte offset of its memory: `alloc [0, 131072) : !buf`.

    The buffer occupies bytes `[offset, offset + byte size)` of the memory named
    by its type. The text shows that half-open byte range; its end must equal
    offset plus the type's byte size. The offset is a multiple of the memory's
    alignment on the target; when the module names a target the range lies
    inside the memory. Nothing is executed: the buffer's contents are whatever
    the memory holds. Several allocs may overlap (the memory planner reuses
    space); the simulator's race detector checks the accesses.
    """

    name = "ascend_hw.alloc"

    offset = prop_def(IntegerAttr[I64])
    result = result_def(BufferType)

    traits = traits_def(Pure())

    def __init__(self, offset: int, buffer_type: BufferType):
        super().__init__(
            properties={"offset": _i64(offset)}, result_types=[buffer_type]
        )

    @property
    def byte_offset(self) -> int:
        return self.offset.value.data

    def verify_(self) -> None:
        buf = _buf(self.result)
        target, named = target_of(self)
        memory = target.memories[str(buf.memory_space)]
        offset = self.byte_offset
        if offset < 0 or offset % memory.alignment:
            raise VerifyException(
                f"offset {offset} of a buffer in {buf.memory_space} must be a non-negative "
                f"multiple of {memory.alignment} (alignment of {buf.memory_space} on "
                f"target {target.name})"
            )
        _check_nz_shape("buffer", buf, target)
        end = offset + buf.byte_size()
        if named and memory.size is not None and end > memory.size:
            raise VerifyException(
                f"buffer [{offset}, {end}) does not fit {buf.memory_space} of target "
                f"{target.name} ({memory.size} bytes)"
            )

    def print(self, printer: Printer) -> None:
        end = self.byte_offset + _buf(self.result).byte_size()
        printer.print_string(f" [{self.byte_offset}, {end})")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        parser.parse_punctuation("[")
        offset = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(",")
        end_start = parser.pos
        end = parser.parse_integer(allow_boolean=False)
        end_stop = parser.pos
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        buffer_type = parser.parse_type()
        if not isinstance(buffer_type, BufferType):
            parser.raise_error(f"expected an !ascend_hw.buf type, got {buffer_type}")
        if end != offset + buffer_type.byte_size():
            parser.raise_error(
                f"byte range end {end} is not offset {offset} plus the "
                f"{buffer_type.byte_size()} bytes of {buffer_type}",
                end_start,
                end_stop,
            )
        op = cls(offset, buffer_type)
        op.attributes |= attrs
        return op


@irdl_op_definition
class SubviewOp(IRDLOperation):
    """A buffer inside another: `subview %a[%i, %c0] : !buf<64x1024..> -> !buf<1x1024..>`.

    The result starts at the source's element `[indices]` (one index per source
    dim; its element offset by the source's layout, module docstring) and spans
    the result type's byte size, which it reinterprets with the result's shape
    and layout (any shape: a row, a ping-pong half, a tail, a flat range). Same
    memory and element type. The result must lie inside the source and start on
    the memory's alignment; both are checked here when the indices are
    constants, else by the simulator.
    """

    name = "ascend_hw.subview"

    source = operand_def(BufferType)
    indices = var_operand_def(IndexType)
    result = result_def(BufferType)

    traits = traits_def(Pure())

    assembly_format = (
        "$source `[` $indices `]` attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        result_type: BufferType,
    ):
        super().__init__(operands=[source, indices], result_types=[result_type])

    def verify_(self) -> None:
        src, res = _buf(self.source), _buf(self.result)
        if res.memory_space != src.memory_space:
            raise VerifyException(
                f"subview stays in {src.memory_space}, got a result in {res.memory_space}"
            )
        if res.element_type != src.element_type:
            raise VerifyException(
                f"subview keeps the element type {src.element_type}, "
                f"got {res.element_type}"
            )
        if len(self.indices) != len(src.get_shape()):
            raise VerifyException(
                f"subview of a {len(src.get_shape())}-D buffer needs "
                f"{len(src.get_shape())} indices, got {len(self.indices)}"
            )
        if res.byte_size() > src.byte_size():
            raise VerifyException(
                f"subview result {res} ({res.byte_size()} bytes) is larger than "
                f"its source {src} ({src.byte_size()} bytes)"
            )
        target, _ = target_of(self)
        _check_nz_shape("subview result", res, target)
        index = _constants(self.indices)
        if index is None:
            return
        for i, d in zip(index, src.get_shape(), strict=True):
            if not 0 <= i < d:
                raise VerifyException(
                    f"subview index {index} is outside the source shape "
                    f"{list(src.get_shape())}"
                )
        start = element_offset(src, index, target) * src.element_bytes
        if start + res.byte_size() > src.byte_size():
            raise VerifyException(
                f"subview bytes [{start}, {start + res.byte_size()}) run past the "
                f"{src.byte_size()} bytes of the source"
            )
        alignment = target.memories[str(src.memory_space)].alignment
        if start % alignment:
            raise VerifyException(
                f"subview starts at byte {start} of the source, not a multiple of "
                f"{alignment} (alignment of {src.memory_space} on target {target.name})"
            )


# --------------------------------------------------------------------------------------
# The instruction interface
# --------------------------------------------------------------------------------------


class HwInstruction(IRDLOperation, abc.ABC):
    """An instruction of the core: runs on one pipe, reads and writes buffers.

    `pipe` is the queue the scalar unit issues it to. `read_buffers()` and
    `write_buffers()` list the buffer and GM memref operands it reads and writes
    (an accumulating op's destination is in both), for the interpreter and for
    synchronisation passes.
    """

    @property
    @abc.abstractmethod
    def pipe(self) -> Pipe: ...

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return ()

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return ()


def _space_of(value: SSAValue) -> MemorySpace:
    if isinstance(value.type, BufferType):
        return value.type.memory_space
    return MemorySpace.GM


def _element_type_of(value: SSAValue) -> Attribute:
    if isinstance(value.type, BufferType):
        return value.type.element_type
    assert isinstance(value.type, MemRefType)
    return value.type.element_type


def _dma_pipe(op: Operation, src: SSAValue, dst: SSAValue) -> Pipe:
    """The pipe of a data move, from the target's DMA path table."""
    target, _ = target_of(op)
    path = (str(_space_of(src)), str(_space_of(dst)))
    if path not in target.dma:
        known = ", ".join(f"{s} -> {d}" for s, d in target.dma)
        raise VerifyException(
            f"target {target.name} has no DMA path {path[0]} -> {path[1]} "
            f"(it has {known})"
        )
    return Pipe(target.dma[path].pipe.lower())


def _require_space(what: str, value: SSAValue, spaces: Sequence[MemorySpace]) -> None:
    space = _space_of(value)
    if space not in spaces:
        raise VerifyException(f"{what} must be in {names(spaces)}, got {space}")


def _verify_gm_window(
    what: str, memref: SSAValue, indices: Sequence[SSAValue], span: int
) -> None:
    """Index count, and when static: the `span` bytes from `memref[indices]` fit."""
    assert isinstance(memref.type, MemRefType)
    mtype = memref.type
    shape = mtype.get_shape()
    if len(indices) != len(shape):
        raise VerifyException(
            f"{what} {mtype} needs {len(shape)} indices, got {len(indices)}"
        )
    index = _constants(indices)
    if index is None or any(d < 0 for d in shape):
        return
    if any(not 0 <= i < d for i, d in zip(index, shape, strict=True)):
        raise VerifyException(f"{what} origin {index} is outside {mtype}")
    strides = [s for s in mtype.get_strides() or () if s is not None and s >= 0]
    if len(strides) != len(shape):
        return  # dynamic or negative strides: the simulator checks
    # Both ends are relative to the layout's offset, which may be dynamic.
    es = element_bytes(mtype.element_type)
    start = sum(i * s for i, s in zip(index, strides, strict=True)) * es
    end = (sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) + 1) * es
    if start + span > end:
        raise VerifyException(
            f"{what} window of {span} bytes from {index} runs past the end of {mtype}"
        )


# --------------------------------------------------------------------------------------
# Byte DMA: dma_load, dma_store, dma_copy
# --------------------------------------------------------------------------------------


class BurstDmaOp(HwInstruction, abc.ABC):
    """A DMA of `bursts` bursts of `burst_bytes` bytes each (Ascend C DataCopyPad).

    Burst b (0 <= b < bursts) copies `burst_bytes` bytes from the source at
    `b * src_pitch` to the destination at `b * dst_pitch`, both relative to the
    start address of each side, with no conversion. A GM side's pitch is
    `burst_bytes + gap`; an on-chip side's pitch is `burst_bytes` rounded up to
    the memory's alignment, plus the gap, which is a multiple of the alignment
    (bursts start aligned). The bytes between a burst's end and the next
    aligned address are neither read nor written. GM starts at the memref
    element given by the indices, a buffer at its address. The pipe is the
    target's for the (source, destination) memories. `burst_bytes` is a
    multiple of the element size, and of the on-chip alignments when neither
    side is GM; the bursts stay inside each buffer.
    """

    bursts = prop_def(IntegerAttr[I64])
    burst_bytes = prop_def(IntegerAttr[I64])
    src_gap = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    dst_gap = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))

    irdl_options = (ParsePropInAttrDict(),)

    @property
    @abc.abstractmethod
    def src_value(self) -> SSAValue: ...

    @property
    @abc.abstractmethod
    def dst_value(self) -> SSAValue: ...

    @property
    def pipe(self) -> Pipe:
        return _dma_pipe(self, self.src_value, self.dst_value)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src_value,)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst_value,)

    def burst_descriptor(self) -> tuple[int, int, int, int]:
        """(bursts, burst_bytes, src_gap, dst_gap) as Python ints."""
        return (
            self.bursts.value.data,
            self.burst_bytes.value.data,
            self.src_gap.value.data,
            self.dst_gap.value.data,
        )

    def pitches(self, target: Target) -> tuple[int, int]:
        """Bytes from one burst's start to the next's, on the source and destination."""
        _, length, src_gap, dst_gap = self.burst_descriptor()
        return (
            self._pitch(self.src_value, length, src_gap, target),
            self._pitch(self.dst_value, length, dst_gap, target),
        )

    @staticmethod
    def _pitch(value: SSAValue, length: int, gap: int, target: Target) -> int:
        space = _space_of(value)
        if space == MemorySpace.GM:
            return length + gap
        return _round_up(length, target.memories[str(space)].alignment) + gap

    def _verify_burst_side(
        self, what: str, value: SSAValue, gap: int, target: Target
    ) -> int:
        """Check one side's gap alignment and extent; return its byte span."""
        bursts, length, _, _ = self.burst_descriptor()
        pitch = self._pitch(value, length, gap, target)
        span = (bursts - 1) * pitch + length
        if not isinstance(value.type, BufferType):
            return span
        buf = value.type
        alignment = target.memories[str(buf.memory_space)].alignment
        if gap % alignment:
            raise VerifyException(
                f"{what} gap {gap} must be a multiple of {alignment} bytes "
                f"(alignment of {buf.memory_space} on target {target.name})"
            )
        if span > buf.byte_size():
            raise VerifyException(
                f"{bursts} bursts of {length} bytes with pitch {pitch} cover {span} "
                f"bytes, more than the {buf.byte_size()} bytes of {what} {buf}"
            )
        return span

    def _verify_bursts(self, target: Target) -> tuple[int, int]:
        """Shared checks; returns the byte spans of the source and destination."""
        bursts, length, src_gap, dst_gap = self.burst_descriptor()
        if bursts < 1 or length < 1:
            raise VerifyException(
                f"bursts and burst_bytes must be positive, got {bursts} and {length}"
            )
        if src_gap < 0 or dst_gap < 0:
            raise VerifyException(
                f"gaps must be non-negative, got src_gap {src_gap}, dst_gap {dst_gap}"
            )
        src_type = _element_type_of(self.src_value)
        if src_type != _element_type_of(self.dst_value):
            raise VerifyException(
                f"a DMA copies bytes: element types must match, got {src_type} "
                f"and {_element_type_of(self.dst_value)}"
            )
        if length % element_bytes(src_type):
            raise VerifyException(
                f"burst_bytes {length} is not a whole number of {src_type} elements"
            )
        self.pipe  # noqa: B018 - raises if the target has no such path
        return (
            self._verify_burst_side("source", self.src_value, src_gap, target),
            self._verify_burst_side("destination", self.dst_value, dst_gap, target),
        )


@irdl_op_definition
class DmaLoadOp(BurstDmaOp):
    """GM -> L1/UB (MTE2): `dma_load %x[%i, %c0] -> %a {bursts = 64, burst_bytes = 2048}`.

    Burst semantics in `BurstDmaOp`: the source starts at byte address of
    `%x[%i, %c0]` and steps `burst_bytes + src_gap` bytes per burst; the
    destination buffer's bursts start on its memory's alignment. Loading into
    an `nz` buffer copies bytes too; for the nd -> nz conversion use `nd2nz`.
    """

    name = "ascend_hw.dma_load"

    src = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    dst = operand_def(BufferType)

    assembly_format = (
        "$src `[` $src_indices `]` `->` $dst attr-dict `:` type($src) `->` type($dst)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        src_indices: Sequence[SSAValue | Operation],
        dst: SSAValue | Operation,
        *,
        bursts: int,
        burst_bytes: int,
        src_gap: int = 0,
        dst_gap: int = 0,
    ):
        super().__init__(
            operands=[src, src_indices, dst],
            properties=_burst_props(bursts, burst_bytes, src_gap, dst_gap),
        )

    @property
    def src_value(self) -> SSAValue:
        return self.src

    @property
    def dst_value(self) -> SSAValue:
        return self.dst

    def verify_(self) -> None:
        target, _ = target_of(self)
        src_span, _ = self._verify_bursts(target)
        _verify_gm_window("source", self.src, self.src_indices, src_span)


@irdl_op_definition
class DmaStoreOp(BurstDmaOp):
    """UB -> GM (MTE3): `dma_store %a -> %y[%i, %c0] {bursts = 64, burst_bytes = 2048}`.

    Burst semantics in `BurstDmaOp`: the destination starts at the byte address
    of `%y[%i, %c0]` and steps `burst_bytes + dst_gap` bytes per burst. L0C is
    written out by `fixpipe`, not by this op.
    """

    name = "ascend_hw.dma_store"

    src = operand_def(BufferType)
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)

    assembly_format = (
        "$src `->` $dst `[` $dst_indices `]` attr-dict `:` type($src) `->` type($dst)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        dst_indices: Sequence[SSAValue | Operation],
        *,
        bursts: int,
        burst_bytes: int,
        src_gap: int = 0,
        dst_gap: int = 0,
    ):
        super().__init__(
            operands=[src, dst, dst_indices],
            properties=_burst_props(bursts, burst_bytes, src_gap, dst_gap),
        )

    @property
    def src_value(self) -> SSAValue:
        return self.src

    @property
    def dst_value(self) -> SSAValue:
        return self.dst

    def verify_(self) -> None:
        if _space_of(self.src) == MemorySpace.L0C:
            raise VerifyException("l0c is read by fixpipe, not by dma_store")
        target, _ = target_of(self)
        _, dst_span = self._verify_bursts(target)
        _verify_gm_window("destination", self.dst, self.dst_indices, dst_span)


@irdl_op_definition
class DmaCopyOp(BurstDmaOp):
    """On-chip -> on-chip bytes, e.g. L1 -> L0A/L0B/UB (MTE1): `dma_copy %a -> %b {...}`.

    Burst semantics in `BurstDmaOp`; both sides are buffers, so both pitches
    are aligned and `burst_bytes` is a multiple of both memories' alignments
    (whole fractals into L0A/L0B). Layouts are not interpreted: bytes move as
    they are. L0C is read by `fixpipe`; for sub-blocks or transposes of nz
    matrices into L0A/L0B use `load_l0`.
    """

    name = "ascend_hw.dma_copy"

    src = operand_def(BufferType)
    dst = operand_def(BufferType)

    assembly_format = "$src `->` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        bursts: int,
        burst_bytes: int,
        src_gap: int = 0,
        dst_gap: int = 0,
    ):
        super().__init__(
            operands=[src, dst],
            properties=_burst_props(bursts, burst_bytes, src_gap, dst_gap),
        )

    @property
    def src_value(self) -> SSAValue:
        return self.src

    @property
    def dst_value(self) -> SSAValue:
        return self.dst

    def verify_(self) -> None:
        if _space_of(self.src) == MemorySpace.L0C:
            raise VerifyException("l0c is read by fixpipe, not by dma_copy")
        target, _ = target_of(self)
        length = self.burst_bytes.value.data
        for value in (self.src, self.dst):
            alignment = target.memories[str(_space_of(value))].alignment
            if length % alignment:
                raise VerifyException(
                    f"burst_bytes {length} of an on-chip copy must be a multiple of "
                    f"{alignment} (alignment of {_space_of(value)} on target "
                    f"{target.name})"
                )
        self._verify_bursts(target)


def _burst_props(
    bursts: int, burst_bytes: int, src_gap: int, dst_gap: int
) -> dict[str, Attribute]:
    return {
        "bursts": _i64(bursts),
        "burst_bytes": _i64(burst_bytes),
        "src_gap": _i64(src_gap),
        "dst_gap": _i64(dst_gap),
    }


# --------------------------------------------------------------------------------------
# Matrix moves: nd2nz, load_l0, fixpipe
# --------------------------------------------------------------------------------------


FIXPIPE_CONVERSIONS: dict[Attribute, tuple[Attribute, ...]] = {
    f32: (f32, f16, bf16),
    i32: (i32,),
}
"""L0C element type -> destination element types fixpipe can write."""


class MatrixMoveOp(HwInstruction, abc.ABC):
    """Copies a `rows` x `cols` block between 2-D views, by logical element.

    For 0 <= r < rows, 0 <= c < cols: destination element `[d0 + r, d1 + c]`
    gets source element `[s0 + r, s1 + c]` (`[s0 + c, s1 + r]` when transposed),
    where `[s0, s1]`/`[d0, d1]` are the last two of the source/destination
    indices (a memref's leading indices pick the matrix) and each side maps its
    logical element to bytes by its layout (module docstring). The pipe is the
    target's for the (source, destination) memories. Blocks on an `nz` side start
    on a fractal boundary; blocks stay inside both sides.
    """

    src = operand_def(base(MemRefType) | base(BufferType))
    src_indices = var_operand_def(IndexType)
    dst = operand_def(base(MemRefType) | base(BufferType))
    dst_indices = var_operand_def(IndexType)
    rows = prop_def(IntegerAttr[I64])
    cols = prop_def(IntegerAttr[I64])

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$src `[` $src_indices `]` `->` $dst `[` $dst_indices `]` attr-dict "
        "`:` type($src) `->` type($dst)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        src_indices: Sequence[SSAValue | Operation],
        dst: SSAValue | Operation,
        dst_indices: Sequence[SSAValue | Operation],
        *,
        rows: int,
        cols: int,
        properties: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            operands=[src, src_indices, dst, dst_indices],
            properties={"rows": _i64(rows), "cols": _i64(cols), **(properties or {})},
        )

    @property
    def pipe(self) -> Pipe:
        return _dma_pipe(self, self.src, self.dst)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    @property
    def transposed(self) -> bool:
        return False

    def block_shape(self) -> tuple[int, int]:
        return self.rows.value.data, self.cols.value.data

    def _verify_side(
        self,
        what: str,
        value: SSAValue,
        indices: Sequence[SSAValue],
        extent: tuple[int, int],
        target: Target,
    ) -> None:
        if isinstance(value.type, MemRefType):
            shape = value.type.get_shape()
            if len(shape) < 2:
                raise VerifyException(f"{what} memref must have at least 2 dims")
            _verify_gm_window(what, value, indices, 0)
        else:
            buf = _buf(value)
            shape = buf.get_shape()
            if len(shape) != 2:
                raise VerifyException(f"{what} buffer must be 2-D, got {buf}")
            _check_nz_shape(what, buf, target)
            if len(indices) != 2:
                raise VerifyException(f"{what} needs 2 indices, got {len(indices)}")
        origin = _constants(indices[-2:])
        if origin is None:
            return
        for o, e, d in zip(origin, extent, shape[-2:], strict=True):
            if d >= 0 and o + e > d:
                raise VerifyException(
                    f"{what} block {extent[0]}x{extent[1]} at {origin} does not fit "
                    f"{value.type}"
                )
        if isinstance(value.type, BufferType) and value.type.layout_kind == Layout.NZ:
            frac = (target.cube.fractal_m, nz_c0(value.type.element_type, target))
            if origin[0] % frac[0] or origin[1] % frac[1]:
                raise VerifyException(
                    f"{what} block at {origin} does not start on a {frac[0]}x{frac[1]} "
                    f"fractal boundary of {value.type}"
                )

    def _verify_matrix(self, target: Target) -> None:
        rows, cols = self.block_shape()
        if rows < 1 or cols < 1:
            raise VerifyException(
                f"rows and cols must be positive, got {rows} and {cols}"
            )
        self.pipe  # noqa: B018 - raises if the target has no such path
        src_extent = (cols, rows) if self.transposed else (rows, cols)
        self._verify_side("source", self.src, self.src_indices, src_extent, target)
        self._verify_side(
            "destination", self.dst, self.dst_indices, (rows, cols), target
        )


@irdl_op_definition
class Nd2NzOp(MatrixMoveOp):
    """GM (row-major) -> L1 `nz` (MTE2): `nd2nz %x[%i, %k] -> %a[%c0, %c0] {rows, cols}`.

    `MatrixMoveOp` semantics: a `rows` x `cols` window of the memref (rows along
    its second-last dim) into the fractal buffer, element types equal. Elements
    of the buffer outside the block keep their contents (pad tails with
    `vdup` or pass the true extents to `mmad`).
    """

    name = "ascend_hw.nd2nz"

    def verify_(self) -> None:
        _require_space("source", self.src, (MemorySpace.GM,))
        _require_space("destination", self.dst, (MemorySpace.L1,))
        if _buf(self.dst).layout_kind != Layout.NZ:
            raise VerifyException(f"destination must be nz, got {self.dst.type}")
        if _element_type_of(self.src) != _element_type_of(self.dst):
            raise VerifyException(
                f"element types must match: {_element_type_of(self.src)} -> "
                f"{_element_type_of(self.dst)}"
            )
        self._verify_matrix(target_of(self)[0])


@irdl_op_definition
class LoadL0Op(MatrixMoveOp):
    """L1 `nz` -> L0A/L0B `nz` (MTE1), whole fractals: `load_l0 %a[%r, %c] -> %b[%c0, %c0]`.

    `MatrixMoveOp` semantics; with `transpose` the destination block is the
    transpose of the source block (`rows` x `cols` of the destination from
    `cols` x `rows` of the source; 16-bit elements only, like the hardware's
    fractal transpose). `rows`/`cols` are multiples of the fractal's.
    """

    name = "ascend_hw.load_l0"

    transpose = opt_prop_def(UnitAttr)

    def __init__(
        self,
        src: SSAValue | Operation,
        src_indices: Sequence[SSAValue | Operation],
        dst: SSAValue | Operation,
        dst_indices: Sequence[SSAValue | Operation],
        *,
        rows: int,
        cols: int,
        transpose: bool = False,
    ):
        super().__init__(
            src,
            src_indices,
            dst,
            dst_indices,
            rows=rows,
            cols=cols,
            properties={"transpose": UnitAttr()} if transpose else None,
        )

    @property
    def transposed(self) -> bool:
        return self.transpose is not None

    def verify_(self) -> None:
        _require_space("source", self.src, (MemorySpace.L1,))
        _require_space("destination", self.dst, (MemorySpace.L0A, MemorySpace.L0B))
        src, dst = _buf(self.src), _buf(self.dst)
        if src.layout_kind != Layout.NZ or dst.layout_kind != Layout.NZ:
            raise VerifyException(
                f"source and destination must be nz, got {src.layout_kind} -> {dst.layout_kind}"
            )
        if src.element_type != dst.element_type:
            raise VerifyException(
                f"element types must match: {src.element_type} -> {dst.element_type}"
            )
        if self.transposed and src.element_bytes != 2:
            raise VerifyException(
                f"only 16-bit fractals transpose, got {src.element_type}"
            )
        target, _ = target_of(self)
        rows, cols = self.block_shape()
        frac = (target.cube.fractal_m, nz_c0(dst.element_type, target))
        if rows % frac[0] or cols % frac[1]:
            raise VerifyException(
                f"rows and cols must be whole {frac[0]}x{frac[1]} fractals, got a "
                f"{rows}x{cols} block"
            )
        self._verify_matrix(target)


@irdl_op_definition
class FixpipeOp(MatrixMoveOp):
    """L0C -> GM/UB/L1 (FIX), converting: `fixpipe %c[%c0, %c0] -> %y[%i, %j] {rows, cols}`.

    `MatrixMoveOp` semantics, reading the `nz` accumulator and writing a
    row-major memref, an `nd` UB/L1 buffer or an `nz` L1 buffer; each element
    is converted to the destination type with rounding to nearest even
    (f32 -> f32/f16/bf16, i32 -> i32).
    """

    name = "ascend_hw.fixpipe"

    def verify_(self) -> None:
        _require_space("source", self.src, (MemorySpace.L0C,))
        src = _buf(self.src)
        if src.layout_kind != Layout.NZ:
            raise VerifyException(f"source must be an nz accumulator, got {src}")
        allowed = FIXPIPE_CONVERSIONS.get(src.element_type, ())
        dst_type = _element_type_of(self.dst)
        if dst_type not in allowed:
            raise VerifyException(
                f"{names(FIXPIPE_CONVERSIONS)} accumulators convert to "
                f"{'/'.join(str(t) for t in allowed) or 'nothing'}: "
                f"cannot write {src.element_type} as {dst_type}"
            )
        self._verify_matrix(target_of(self)[0])


# --------------------------------------------------------------------------------------
# Cube
# --------------------------------------------------------------------------------------


@irdl_op_definition
class MmadOp(HwInstruction):
    """Cube matrix multiply (M): `mmad %a, %b -> %c {m = 128, n = 128, k = 64}`.

    For 0 <= i < m, 0 <= j < n:
    `C[i, j] = (accumulate ? C[i, j] : 0) + sum_{t < k} A[i, t] * B[t, j]`, with A
    the `l0a` buffer `[M, K]`, B the `l0b` buffer `[K, N]`, C the `l0c` buffer
    `[M, N]`, all `nz` (logical elements). Products and sums are exact-input f32
    for f16/bf16/f32 operands (numpy: `A.astype(f32) @ B.astype(f32)`) and i32
    for i8. Elements of C outside `[m, n]` are unchanged.
    """

    name = "ascend_hw.mmad"

    lhs = operand_def(BufferType)
    rhs = operand_def(BufferType)
    acc = operand_def(BufferType)
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    accumulate = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$lhs `,` $rhs `->` $acc attr-dict `:` type($lhs) `,` type($rhs) `->` type($acc)"

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        acc: SSAValue | Operation,
        *,
        m: int,
        n: int,
        k: int,
        accumulate: bool = False,
    ):
        props: dict[str, Attribute] = {"m": _i64(m), "n": _i64(n), "k": _i64(k)}
        if accumulate:
            props["accumulate"] = UnitAttr()
        super().__init__(operands=[lhs, rhs, acc], properties=props)

    @property
    def pipe(self) -> Pipe:
        return Pipe.M

    def read_buffers(self) -> tuple[SSAValue, ...]:
        if self.accumulate is not None:
            return (self.lhs, self.rhs, self.acc)
        return (self.lhs, self.rhs)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.acc,)

    def mnk(self) -> tuple[int, int, int]:
        return self.m.value.data, self.n.value.data, self.k.value.data

    def verify_(self) -> None:
        for what, value, space in (
            ("lhs", self.lhs, MemorySpace.L0A),
            ("rhs", self.rhs, MemorySpace.L0B),
            ("accumulator", self.acc, MemorySpace.L0C),
        ):
            buf = _buf(value)
            if buf.memory_space != space:
                raise VerifyException(
                    f"{what} must be in {space}, got {buf.memory_space}"
                )
            if buf.layout_kind != Layout.NZ:
                raise VerifyException(f"{what} must be nz, got {buf}")
        a, b, c = _buf(self.lhs), _buf(self.rhs), _buf(self.acc)
        if a.element_type != b.element_type or a.element_type not in MATMUL_TYPES:
            raise VerifyException(
                f"inputs must both be one of {names(MATMUL_TYPES)}, got "
                f"{a.element_type} and {b.element_type}"
            )
        if c.element_type != MATMUL_TYPES[a.element_type]:
            raise VerifyException(
                f"{a.element_type} inputs accumulate in "
                f"{MATMUL_TYPES[a.element_type]}, got {c.element_type}"
            )
        m, n, k = self.mnk()
        if min(m, n, k) < 1:
            raise VerifyException(f"m, n, k must be positive, got {m}, {n}, {k}")
        (am, ak), (bk, bn), (cm, cn) = a.get_shape(), b.get_shape(), c.get_shape()
        for name, need, have, buf in (
            ("m", m, am, a),
            ("k", k, ak, a),
            ("k", k, bk, b),
            ("n", n, bn, b),
            ("m", m, cm, c),
            ("n", n, cn, c),
        ):
            if need > have:
                raise VerifyException(f"{name} = {need} exceeds {buf}")


# --------------------------------------------------------------------------------------
# Vector
# --------------------------------------------------------------------------------------

VECTOR_B16_B32 = (f16, bf16, f32, i16, i32)
MASK_ELEMENT = i8
"""Element type of the bit buffers `vcmp` writes and `vselect` reads."""


def _vector_props(
    repeat: int,
    mask: int | MaskAttr | None,
    blk_stride: Sequence[int] | None,
    rep_stride: Sequence[int] | None,
) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {"repeat": _i64(repeat)}
    if mask is not None:
        props["mask"] = mask if isinstance(mask, MaskAttr) else _i64(mask)
    if (blk := _i64_array(blk_stride)) is not None:
        props["blk_stride"] = blk
    if (rep := _i64_array(rep_stride)) is not None:
        props["rep_stride"] = rep
    return props


class VectorOp(HwInstruction, abc.ABC):
    """An instruction of the vector unit (V) on UB, in the repeat/stride/mask form.

    One instruction runs `repeat` repeats (1 <= repeat <= vector.max_repeat).
    A repeat processes `lanes = vector.repeat_bytes / max element bytes` lanes
    (128 for f16, 64 for f32 on ascend910b) of which the `mask` enables some:
    an integer n enables lanes 0..n-1 (1 <= n <= lanes), a `#ascend_hw.mask`
    enables lane l when bit l is set; absent, all lanes. Masked-off lanes are
    neither read nor written.

    Lane-addressed operands (`lane_operands()`, in the op's textual order) are
    read or written per lane: with `B` = 32-byte block, `e` the operand's
    element bytes and `pb = B / e` elements per block, lane l of repeat i is the
    element at byte

        address + (i * rep_stride + (l // pb) * blk_stride) * B + (l % pb) * e

    `blk_stride` and `rep_stride` hold one entry per lane-addressed operand, in
    32-byte blocks; absent, they are contiguous: block stride 1 and repeat
    stride `lanes * e / B`. Every touched byte lies inside its buffer. The
    repeats run in order i = 0, 1, ...; each reads its inputs before writing.

    Numerics: float arithmetic is evaluated in f32 and rounded once to the
    element type (nearest even), which for +, -, *, / is the correctly rounded
    f16 result; integer arithmetic wraps.
    """

    repeat = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    mask = opt_prop_def(base(IntegerAttr) | base(MaskAttr))
    blk_stride = opt_prop_def(DenseArrayBase)
    rep_stride = opt_prop_def(DenseArrayBase)

    irdl_options = (ParsePropInAttrDict(),)

    HAS_MASK: ClassVar[bool] = True

    @property
    def pipe(self) -> Pipe:
        return Pipe.V

    @abc.abstractmethod
    def lane_operands(self) -> tuple[SSAValue, ...]:
        """The buffers addressed per lane, in the order of the stride arrays."""

    def buffer_operands(self) -> tuple[SSAValue, ...]:
        return tuple(o for o in self.operands if isinstance(o.type, BufferType))

    def repeat_count(self) -> int:
        return self.repeat.value.data

    def lanes(self, target: Target) -> int:
        """Lanes of one repeat: the repeat width over the widest lane element."""
        widest = max(_buf(v).element_bytes for v in self.lane_operands())
        return target.vector.repeat_bytes // widest

    def active_lanes(self, target: Target) -> Sequence[int]:
        """The lanes the mask enables, ascending."""
        lanes = self.lanes(target)
        if self.mask is None:
            return range(lanes)
        if isinstance(self.mask, IntegerAttr):
            return range(self.mask.value.data)
        bits = self.mask.bits.data
        return [lane for lane in range(lanes) if bits >> lane & 1]

    def block_strides(self) -> tuple[int, ...]:
        if self.blk_stride is None:
            return (1,) * len(self.lane_operands())
        return tuple(self.blk_stride.get_values())  # type: ignore[arg-type]

    def repeat_strides(self, target: Target) -> tuple[int, ...]:
        if self.rep_stride is not None:
            return tuple(self.rep_stride.get_values())  # type: ignore[arg-type]
        lanes, block = self.lanes(target), vector_block_bytes(target)
        return tuple(
            lanes * _buf(v).element_bytes // block for v in self.lane_operands()
        )

    def lane_extent(self, operand_index: int, target: Target) -> int:
        """Bytes from a lane operand's address to the end of its last touched element."""
        value = self.lane_operands()[operand_index]
        es, block = _buf(value).element_bytes, vector_block_bytes(target)
        per_block = block // es
        lanes = self.active_lanes(target)
        blk = self.block_strides()[operand_index]
        rep = self.repeat_strides(target)[operand_index]
        if blk > 0:  # the address grows with the lane
            last = lanes[-1]
            in_repeat = (last // per_block) * blk * block + (last % per_block + 1) * es
        else:
            in_repeat = (max(lane % per_block for lane in lanes) + 1) * es
        return (self.repeat_count() - 1) * rep * block + in_repeat

    def verify_(self) -> None:
        for value in self.buffer_operands():
            buf = _buf(value)
            if buf.memory_space != MemorySpace.UB:
                raise VerifyException(
                    f"vector operands must be in ub, got {buf.memory_space} ({buf})"
                )
        self._verify_types()
        target, _ = target_of(self)
        repeat, limit = self.repeat_count(), target.vector.max_repeat
        if not 1 <= repeat <= limit:
            raise VerifyException(
                f"repeat must be in 1..{limit} (vector.max_repeat of target "
                f"{target.name}), got {repeat}"
            )
        self._verify_mask(target)
        count = len(self.lane_operands())
        for name, attr in (
            ("blk_stride", self.blk_stride),
            ("rep_stride", self.rep_stride),
        ):
            if attr is None:
                continue
            values = attr.get_values()
            if attr.elt_type != i64 or len(values) != count:
                raise VerifyException(
                    f"{name} needs {count} i64 entries (one per lane-addressed "
                    f"operand), got {attr}"
                )
            if any(v < 0 for v in values):
                raise VerifyException(
                    f"{name} entries must be non-negative, got {attr}"
                )
        for index, value in enumerate(self.lane_operands()):
            extent, size = self.lane_extent(index, target), _buf(value).byte_size()
            if extent > size:
                raise VerifyException(
                    f"{repeat} repeats touch {extent} bytes of operand #{index} "
                    f"{value.type}, which has {size}"
                )
        self._verify_extra(target)

    def _verify_mask(self, target: Target) -> None:
        if self.mask is None:
            return
        if not self.HAS_MASK:
            raise VerifyException("this op has no lane mask")
        lanes = self.lanes(target)
        if isinstance(self.mask, IntegerAttr):
            count = self.mask.value.data
            if not 1 <= count <= lanes:
                raise VerifyException(
                    f"mask must enable 1..{lanes} lanes (of {lanes} per repeat), "
                    f"got {count}"
                )
        elif self.mask.bits.data >> lanes:
            raise VerifyException(
                f"mask {self.mask.bits.data:#x} enables lanes beyond the {lanes} "
                "of a repeat"
            )

    @abc.abstractmethod
    def _verify_types(self) -> None:
        """Element-type rules of the op family."""

    def _verify_extra(self, target: Target) -> None:
        """Extents of operands that are not lane-addressed."""


def _require_types(
    what: str, value: SSAValue | Attribute, allowed: Sequence[Attribute]
):
    element_type = value if isinstance(value, Attribute) else _element_type_of(value)
    if element_type not in allowed:
        raise VerifyException(
            f"{what} element type must be one of {names(allowed)}, got {element_type}"
        )


def _require_same_types(*values: SSAValue) -> None:
    types = [_element_type_of(v) for v in values]
    if any(t != types[0] for t in types):
        raise VerifyException(f"buffers must have one element type, got {names(types)}")


class VectorBinaryOp(VectorOp, abc.ABC):
    """`dst[l] = f(src0[l], src1[l])` on every enabled lane (`VectorOp` addressing).

    Lane-addressed operands: src0, src1, dst.
    """

    TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_ARITH_TYPES

    src0 = operand_def(BufferType)
    src1 = operand_def(BufferType)
    dst = operand_def(BufferType)

    assembly_format = (
        "$src0 `,` $src1 `->` $dst attr-dict `:` type($src0) `,` type($src1) "
        "`->` type($dst)"
    )

    def __init__(
        self,
        src0: SSAValue | Operation,
        src1: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[src0, src1, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride),
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.src0, self.src1, self.dst)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src0, self.src1)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_types(self) -> None:
        _require_same_types(self.src0, self.src1, self.dst)
        _require_types("buffer", self.dst, self.TYPES)


@irdl_op_definition
class VAddOp(VectorBinaryOp):
    """`dst = src0 + src1` per lane (f16, f32, i16, i32; integers wrap)."""

    name = "ascend_hw.vadd"


@irdl_op_definition
class VSubOp(VectorBinaryOp):
    """`dst = src0 - src1` per lane (f16, f32, i16, i32; integers wrap)."""

    name = "ascend_hw.vsub"


@irdl_op_definition
class VMulOp(VectorBinaryOp):
    """`dst = src0 * src1` per lane (f16, f32, i16, i32; integers wrap)."""

    name = "ascend_hw.vmul"


@irdl_op_definition
class VDivOp(VectorBinaryOp):
    """`dst = src0 / src1` per lane, IEEE division (f16, f32)."""

    name = "ascend_hw.vdiv"

    TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_FLOAT_TYPES


@irdl_op_definition
class VMaxOp(VectorBinaryOp):
    """`dst = max(src0, src1)` per lane (f16, f32, i16, i32)."""

    name = "ascend_hw.vmax"


@irdl_op_definition
class VMinOp(VectorBinaryOp):
    """`dst = min(src0, src1)` per lane (f16, f32, i16, i32)."""

    name = "ascend_hw.vmin"


class VectorScalarOp(VectorOp, abc.ABC):
    """`dst[l] = f(src[l], scalar)` on every enabled lane (`VectorOp` addressing).

    The scalar is an SSA value of the buffers' element type. Lane-addressed
    operands: src, dst.
    """

    src = operand_def(BufferType)
    scalar = operand_def(base(Float16Type) | base(Float32Type) | base(IntegerType))
    dst = operand_def(BufferType)

    assembly_format = (
        "$src `,` $scalar `->` $dst attr-dict `:` type($src) `,` type($scalar) "
        "`->` type($dst)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        scalar: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[src, scalar, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride),
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.src, self.dst)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_types(self) -> None:
        _require_same_types(self.src, self.dst)
        _require_types("buffer", self.dst, VECTOR_ARITH_TYPES)
        if self.scalar.type != _element_type_of(self.dst):
            raise VerifyException(
                f"scalar must be {_element_type_of(self.dst)} like the "
                f"buffers, got {self.scalar.type}"
            )


@irdl_op_definition
class VAddsOp(VectorScalarOp):
    """`dst = src + scalar` per lane (f16, f32, i16, i32)."""

    name = "ascend_hw.vadds"


@irdl_op_definition
class VMulsOp(VectorScalarOp):
    """`dst = src * scalar` per lane (f16, f32, i16, i32)."""

    name = "ascend_hw.vmuls"


@irdl_op_definition
class VMaxsOp(VectorScalarOp):
    """`dst = max(src, scalar)` per lane (f16, f32, i16, i32)."""

    name = "ascend_hw.vmaxs"


@irdl_op_definition
class VMinsOp(VectorScalarOp):
    """`dst = min(src, scalar)` per lane (f16, f32, i16, i32)."""

    name = "ascend_hw.vmins"


class VectorUnaryOp(VectorOp, abc.ABC):
    """`dst[l] = f(src[l])` on every enabled lane (`VectorOp` addressing).

    Lane-addressed operands: src, dst. Same element type on both.
    """

    TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_FLOAT_TYPES

    src = operand_def(BufferType)
    dst = operand_def(BufferType)

    assembly_format = "$src `->` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
        properties: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            operands=[src, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride)
            | (properties or {}),
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.src, self.dst)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_types(self) -> None:
        _require_same_types(self.src, self.dst)
        _require_types("buffer", self.dst, self.TYPES)


@irdl_op_definition
class VExpOp(VectorUnaryOp):
    """`dst = exp(src)` per lane (f16, f32)."""

    name = "ascend_hw.vexp"


@irdl_op_definition
class VLnOp(VectorUnaryOp):
    """`dst = ln(src)` per lane (f16, f32; -inf at 0, NaN below)."""

    name = "ascend_hw.vln"


@irdl_op_definition
class VAbsOp(VectorUnaryOp):
    """`dst = |src|` per lane (f16, f32)."""

    name = "ascend_hw.vabs"


@irdl_op_definition
class VReluOp(VectorUnaryOp):
    """`dst = max(src, 0)` per lane (f16, f32, i32)."""

    name = "ascend_hw.vrelu"

    TYPES: ClassVar[tuple[Attribute, ...]] = (f16, f32, i32)


@irdl_op_definition
class VSqrtOp(VectorUnaryOp):
    """`dst = sqrt(src)` per lane (f16, f32)."""

    name = "ascend_hw.vsqrt"


@irdl_op_definition
class VRsqrtOp(VectorUnaryOp):
    """`dst = 1 / sqrt(src)` per lane (f16, f32)."""

    name = "ascend_hw.vrsqrt"


@irdl_op_definition
class VReciprocalOp(VectorUnaryOp):
    """`dst = 1 / src` per lane (f16, f32)."""

    name = "ascend_hw.vreciprocal"


@irdl_op_definition
class VCopyOp(VectorUnaryOp):
    """`dst = src` per lane, bit for bit: strided gathers and scatters within UB.

    Any 16- or 32-bit element type.
    """

    name = "ascend_hw.vcopy"

    TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_B16_B32


CAST_ROUNDING: tuple[RoundMode, ...] = (
    RoundMode.RINT,
    RoundMode.ROUND,
    RoundMode.FLOOR,
    RoundMode.CEIL,
    RoundMode.TRUNC,
)

CAST_MODES: dict[tuple[Attribute, Attribute], tuple[RoundMode, ...]] = {
    (f16, f32): (RoundMode.NONE,),
    (bf16, f32): (RoundMode.NONE,),
    (i8, f16): (RoundMode.NONE,),
    (i16, f32): (RoundMode.NONE,),
    (f32, f16): (*CAST_ROUNDING, RoundMode.ODD),
    (f32, bf16): CAST_ROUNDING,
    (f32, i32): CAST_ROUNDING,
    (i32, f32): CAST_ROUNDING,
    (f16, i32): CAST_ROUNDING,
    (f16, i16): CAST_ROUNDING,
    (f16, i8): CAST_ROUNDING,
}
"""(source, destination) element types of `vcast` -> the round modes it accepts."""


@irdl_op_definition
class VCastOp(VectorUnaryOp):
    """`dst = convert(src)` per lane: `vcast rint %a -> %b : !buf<..f32..> -> !buf<..f16..>`.

    Lanes per repeat follow the wider type (64 for f16 <-> f32), so the narrow
    side's contiguous repeat stride is half a repeat. Exact widenings use round
    mode `none`; the others round with the given mode. Float -> integer
    saturates to the integer range (NaN -> 0); f32 -> f16/bf16 beyond the
    range gives +-inf; `odd` truncates, then sets the lowest mantissa bit if
    the result is inexact. Legal pairs: `CAST_MODES`.
    """

    name = "ascend_hw.vcast"

    round = prop_def(RoundModeAttr)

    assembly_format = "$round $src `->` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        round: RoundMode | str,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            src,
            dst,
            repeat=repeat,
            mask=mask,
            blk_stride=blk_stride,
            rep_stride=rep_stride,
            properties={"round": RoundModeAttr(RoundMode(round))},
        )

    def _verify_types(self) -> None:
        pair = (_element_type_of(self.src), _element_type_of(self.dst))
        if pair not in CAST_MODES:
            raise VerifyException(f"cannot convert {pair[0]} to {pair[1]}")
        modes = CAST_MODES[pair]
        if self.round.data not in modes:
            raise VerifyException(
                f"{pair[0]} -> {pair[1]} takes round mode {' or '.join(modes)}, "
                f"got {self.round.data}"
            )


class VectorReduceOp(VectorOp, abc.ABC):
    """Per-repeat reduction (Ascend C WholeReduce*): one result per repeat.

    Repeat i reduces the enabled lanes of `src` (lane-addressed, `VectorOp`
    addressing) to one value written to `dst` element `i * dst_stride` (in
    elements from dst's address; default 1, packed). Sums accumulate in f32 and
    round once to the element type (numpy: `np.sum(x, dtype=np.float32)`).
    Reduce a long row by reducing each repeat, then the partial results.
    """

    TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_FLOAT_TYPES

    src = operand_def(BufferType)
    dst = operand_def(BufferType)
    dst_stride = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))

    assembly_format = "$src `->` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
        dst_stride: int = 1,
    ):
        super().__init__(
            operands=[src, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride)
            | {"dst_stride": _i64(dst_stride)},
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_types(self) -> None:
        _require_same_types(self.src, self.dst)
        _require_types("buffer", self.dst, self.TYPES)

    def _verify_extra(self, target: Target) -> None:
        stride = self.dst_stride.value.data
        if stride < 1:
            raise VerifyException(f"dst_stride must be positive, got {stride}")
        dst = _buf(self.dst)
        needed = ((self.repeat_count() - 1) * stride + 1) * dst.element_bytes
        if needed > dst.byte_size():
            raise VerifyException(
                f"{self.repeat_count()} results with dst_stride {stride} need "
                f"{needed} bytes of {dst}, which has {dst.byte_size()}"
            )


@irdl_op_definition
class VReduceSumOp(VectorReduceOp):
    """Per-repeat sum of the enabled lanes (vcadd; f16, f32)."""

    name = "ascend_hw.vreduce_sum"


@irdl_op_definition
class VReduceMaxOp(VectorReduceOp):
    """Per-repeat maximum of the enabled lanes (vcmax, value only; f16, f32)."""

    name = "ascend_hw.vreduce_max"


@irdl_op_definition
class VReduceMinOp(VectorReduceOp):
    """Per-repeat minimum of the enabled lanes (vcmin, value only; f16, f32)."""

    name = "ascend_hw.vreduce_min"


class VectorBlockReduceOp(VectorReduceOp, abc.ABC):
    """Per-block reduction (Ascend C BlockReduce*, vcgmax/vcgmin): each 32-byte
    block of a repeat reduced to one value, the repeat's 8 results written
    packed to `dst` from element `8 * i` for repeat i. Whole repeats only (no
    mask, `dst_stride` 1): a row of one block reduces 8 rows a repeat.
    Exact for max and min (no rounding)."""

    def _verify_extra(self, target: Target) -> None:
        if self.dst_stride.value.data != 1:
            raise VerifyException(
                f"writes its results packed: dst_stride must be 1, got "
                f"{self.dst_stride.value.data}"
            )
        if len(self.active_lanes(target)) != self.lanes(target):
            raise VerifyException("reduces whole repeats: takes no lane mask")
        dst = _buf(self.dst)
        blocks = target.vector.repeat_bytes // vector_block_bytes(target)
        needed = self.repeat_count() * blocks * dst.element_bytes
        if needed > dst.byte_size():
            raise VerifyException(
                f"{self.repeat_count()} repeats of {blocks} results need {needed} "
                f"bytes of {dst}, which has {dst.byte_size()}"
            )


@irdl_op_definition
class VBlockReduceMaxOp(VectorBlockReduceOp):
    """Maximum of each 32-byte block of a repeat (vcgmax; f16, f32)."""

    name = "ascend_hw.vblock_reduce_max"


@irdl_op_definition
class VBlockReduceMinOp(VectorBlockReduceOp):
    """Minimum of each 32-byte block of a repeat (vcgmin; f16, f32)."""

    name = "ascend_hw.vblock_reduce_min"


@irdl_op_definition
class VDupOp(VectorOp):
    """`dst[l] = scalar` on every enabled lane (Ascend C Duplicate).

    Lane-addressed operand: dst. The scalar has the buffer's element type
    (16- or 32-bit).
    """

    name = "ascend_hw.vdup"

    scalar = operand_def(
        base(Float16Type) | base(Float32Type) | base(IntegerType) | base(BFloat16Type)
    )
    dst = operand_def(BufferType)

    assembly_format = "$scalar `->` $dst attr-dict `:` type($scalar) `->` type($dst)"

    def __init__(
        self,
        scalar: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[scalar, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride),
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_types(self) -> None:
        _require_types("buffer", self.dst, VECTOR_B16_B32)
        if self.scalar.type != _element_type_of(self.dst):
            raise VerifyException(
                f"scalar must be {_element_type_of(self.dst)} like dst, "
                f"got {self.scalar.type}"
            )


@irdl_op_definition
class VBrcbOp(VectorOp):
    """Broadcast each source element to a whole 32-byte block (Ascend C Brcb).

    Repeat i reads `nb = vector.repeat_bytes / 32` consecutive elements
    `src[i * nb + j]` (0 <= j < nb, from src's address) and fills destination
    block j of the repeat, at byte `address + (i * rep_stride + j * blk_stride)
    * 32`, with `32 / e` copies of it. A per-row value broadcast: afterwards a
    vector op reading that block with block stride 0 sees the row's value in
    every lane. Lane-addressed operand (stride arrays): dst. No mask. 16- or
    32-bit elements.
    """

    name = "ascend_hw.vbrcb"

    HAS_MASK: ClassVar[bool] = False

    src = operand_def(BufferType)
    dst = operand_def(BufferType)

    assembly_format = "$src `->` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[src, dst],
            properties=_vector_props(repeat, None, blk_stride, rep_stride),
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_types(self) -> None:
        _require_same_types(self.src, self.dst)
        _require_types("buffer", self.dst, VECTOR_B16_B32)

    def _verify_extra(self, target: Target) -> None:
        blocks = target.vector.repeat_bytes // vector_block_bytes(target)
        src = _buf(self.src)
        needed = self.repeat_count() * blocks * src.element_bytes
        if needed > src.byte_size():
            raise VerifyException(
                f"{self.repeat_count()} repeats read {needed} bytes of {src}, "
                f"which has {src.byte_size()}"
            )


def _verify_bit_buffer(what: str, value: SSAValue, bits: int) -> None:
    buf = _buf(value)
    if buf.element_type != MASK_ELEMENT:
        raise VerifyException(
            f"{what} is a bit buffer of {MASK_ELEMENT}, got {buf.element_type}"
        )
    needed = -(-bits // 8)
    if needed > buf.byte_size():
        raise VerifyException(
            f"{what} needs {needed} bytes for {bits} lane bits, {buf} has "
            f"{buf.byte_size()}"
        )


class VectorCompareOp(VectorOp, abc.ABC):
    """Lane comparison into a bit buffer (Ascend C Compare).

    Repeat i writes bits `[i * lanes, (i + 1) * lanes)` of the i8 buffer `dst`
    (bit b is bit `b % 8` of byte `b // 8`, from dst's address): bit
    `i * lanes + l` is `cmp(a[l], b[l])` for an enabled lane, 0 for a disabled
    one. Lane-addressed operands: the compared buffers.
    """

    cmp = prop_def(CmpModeAttr)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_extra(self, target: Target) -> None:
        _verify_bit_buffer("dst", self.dst, self.repeat_count() * self.lanes(target))

    def _verify_integer_equality(self, compared: SSAValue) -> None:
        """i32 lanes compare for equality only: the A2/A3 vector unit has no
        ordered int32 compare (PTO-ISA docs/isa/TCMP.md, A2A3: "for int32_t
        the implementation uses the EQ compare path regardless of cmpMode";
        CANN Ascend C Compare lists half/float for Atlas A2). tile-to-hw
        builds the others from `vmin` and `eq` (hw_isel/elementwise.py)."""
        mode = CmpMode(self.cmp.data)
        if _element_type_of(compared) == i32 and mode != CmpMode.EQ:
            raise VerifyException(
                f"compares i32 lanes with {mode.value}: the vector unit compares "
                "int32 for eq only"
            )


@irdl_op_definition
class VCmpOp(VectorCompareOp):
    """`bit = src0 <cmp> src1` per lane: `vcmp lt %a, %b -> %m` (f16, f32; i32
    eq only)."""

    name = "ascend_hw.vcmp"

    src0 = operand_def(BufferType)
    src1 = operand_def(BufferType)
    dst = operand_def(BufferType)

    assembly_format = (
        "$cmp $src0 `,` $src1 `->` $dst attr-dict `:` type($src0) `,` type($src1) "
        "`->` type($dst)"
    )

    def __init__(
        self,
        cmp: CmpMode | str,
        src0: SSAValue | Operation,
        src1: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[src0, src1, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride)
            | {"cmp": CmpModeAttr(CmpMode(cmp))},
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.src0, self.src1)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src0, self.src1)

    def _verify_types(self) -> None:
        _require_same_types(self.src0, self.src1)
        _require_types("compared", self.src0, (f16, f32, i32))
        self._verify_integer_equality(self.src0)


@irdl_op_definition
class VCmpsOp(VectorCompareOp):
    """`bit = src <cmp> scalar` per lane: `vcmps lt %a, %s -> %m` (f16, f32;
    i32 eq only)."""

    name = "ascend_hw.vcmps"

    src = operand_def(BufferType)
    scalar = operand_def(base(Float16Type) | base(Float32Type) | base(IntegerType))
    dst = operand_def(BufferType)

    assembly_format = (
        "$cmp $src `,` $scalar `->` $dst attr-dict `:` type($src) `,` type($scalar) "
        "`->` type($dst)"
    )

    def __init__(
        self,
        cmp: CmpMode | str,
        src: SSAValue | Operation,
        scalar: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[src, scalar, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride)
            | {"cmp": CmpModeAttr(CmpMode(cmp))},
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def _verify_types(self) -> None:
        _require_types("compared", self.src, (f16, f32, i32))
        self._verify_integer_equality(self.src)
        if self.scalar.type != _element_type_of(self.src):
            raise VerifyException(
                f"scalar must be {_element_type_of(self.src)} like src, "
                f"got {self.scalar.type}"
            )


@irdl_op_definition
class VSelectOp(VectorOp):
    """`dst[l] = bit ? src0[l] : src1[l]` per enabled lane (Ascend C Select).

    The bit of lane l in repeat i is bit `i * lanes + l` of the i8 buffer
    `cond` (the layout `vcmp` writes). Lane-addressed operands: src0, src1,
    dst. 16- or 32-bit elements.
    """

    name = "ascend_hw.vselect"

    cond = operand_def(BufferType)
    src0 = operand_def(BufferType)
    src1 = operand_def(BufferType)
    dst = operand_def(BufferType)

    assembly_format = (
        "$cond `,` $src0 `,` $src1 `->` $dst attr-dict `:` type($cond) `,` "
        "type($src0) `,` type($src1) `->` type($dst)"
    )

    def __init__(
        self,
        cond: SSAValue | Operation,
        src0: SSAValue | Operation,
        src1: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[cond, src0, src1, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride),
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.src0, self.src1, self.dst)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.cond, self.src0, self.src1)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_types(self) -> None:
        _require_same_types(self.src0, self.src1, self.dst)
        _require_types("buffer", self.dst, VECTOR_B16_B32)

    def _verify_extra(self, target: Target) -> None:
        _verify_bit_buffer("cond", self.cond, self.repeat_count() * self.lanes(target))


@irdl_op_definition
class VGatherOp(VectorOp):
    """`dst[l] = element at byte offsets[i * lanes + l] of src` (Ascend C Gather).

    `offsets` is an i32 buffer of byte offsets from src's address, read
    contiguously (repeat i, lane l: element `i * lanes + l`); each offset is a
    non-negative multiple of the element size inside src (checked by the
    simulator). Lane-addressed operand: dst. 16- or 32-bit elements.
    """

    name = "ascend_hw.vgather"

    src = operand_def(BufferType)
    offsets = operand_def(BufferType)
    dst = operand_def(BufferType)

    assembly_format = (
        "$src `,` $offsets `->` $dst attr-dict `:` type($src) `,` type($offsets) "
        "`->` type($dst)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        offsets: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        repeat: int = 1,
        mask: int | MaskAttr | None = None,
        blk_stride: Sequence[int] | None = None,
        rep_stride: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[src, offsets, dst],
            properties=_vector_props(repeat, mask, blk_stride, rep_stride),
        )

    def lane_operands(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src, self.offsets)

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def _verify_types(self) -> None:
        _require_same_types(self.src, self.dst)
        _require_types("buffer", self.dst, VECTOR_B16_B32)
        _require_types("offsets", self.offsets, (i32,))

    def _verify_extra(self, target: Target) -> None:
        offsets = _buf(self.offsets)
        lanes = self.lanes(target)
        last = (self.repeat_count() - 1) * lanes + self.active_lanes(target)[-1]
        needed = (last + 1) * offsets.element_bytes
        if needed > offsets.byte_size():
            raise VerifyException(
                f"{self.repeat_count()} repeats read {needed} bytes of offsets "
                f"{offsets}, which has {offsets.byte_size()}"
            )


# --------------------------------------------------------------------------------------
# Synchronisation and multi-core
# --------------------------------------------------------------------------------------


class FlagOp(HwInstruction, abc.ABC):
    """A flag between two pipes: `set_flag mte2 -> v, 0` / `wait_flag mte2 -> v, 0`.

    `set_flag` is issued to the source pipe: it sets event `event` of the pair
    (src, dst) once every earlier instruction of the source pipe has completed.
    `wait_flag` is issued to the destination pipe: the pipe runs no later
    instruction until the event is set, then clears it. Events are numbered
    0 .. sync.event_ids - 1 per pipe pair. Both pipes differ and are not `all`
    (use `pipe_barrier` within one pipe).
    """

    src = prop_def(PipeAttr)
    dst = prop_def(PipeAttr)
    event = prop_def(IntegerAttr[I64])

    assembly_format = "$src `->` $dst `,` $event attr-dict"

    def __init__(self, src: Pipe | str, dst: Pipe | str, event: int):
        super().__init__(
            properties={
                "src": PipeAttr(Pipe(src)),
                "dst": PipeAttr(Pipe(dst)),
                "event": _i64(event),
            }
        )

    @property
    def src_pipe(self) -> Pipe:
        return self.src.data

    @property
    def dst_pipe(self) -> Pipe:
        return self.dst.data

    @property
    def event_id(self) -> int:
        return self.event.value.data

    def verify_(self) -> None:
        src, dst = self.src_pipe, self.dst_pipe
        if Pipe.ALL in (src, dst):
            raise VerifyException("a flag is between two pipes, not all")
        if src == dst:
            raise VerifyException(
                f"{src} -> {dst} orders a pipe with itself; use pipe_barrier"
            )
        target, _ = target_of(self)
        limit = target.sync.event_ids
        if not 0 <= self.event_id < limit:
            raise VerifyException(
                f"event id must be in 0..{limit - 1} (sync.event_ids of target "
                f"{target.name}), got {self.event_id}"
            )


@irdl_op_definition
class SetFlagOp(FlagOp):
    """Sets event (src, dst, event) when the source pipe reaches it (`FlagOp`)."""

    name = "ascend_hw.set_flag"

    @property
    def pipe(self) -> Pipe:
        return self.src_pipe


@irdl_op_definition
class WaitFlagOp(FlagOp):
    """Blocks the destination pipe until event (src, dst, event) is set (`FlagOp`)."""

    name = "ascend_hw.wait_flag"

    @property
    def pipe(self) -> Pipe:
        return self.dst_pipe


@irdl_op_definition
class PipeBarrierOp(HwInstruction):
    """`pipe_barrier v`: later instructions of the pipe wait for all earlier ones.

    `pipe_barrier all` waits for every pipe of the core to drain.
    """

    name = "ascend_hw.pipe_barrier"

    barrier_pipe = prop_def(PipeAttr, prop_name="pipe")

    assembly_format = "$pipe attr-dict"

    def __init__(self, pipe: Pipe | str):
        super().__init__(properties={"pipe": PipeAttr(Pipe(pipe))})

    @property
    def pipe(self) -> Pipe:
        return self.barrier_pipe.data


def _verify_scalar_element(
    verb: str, what: str, value: SSAValue, indices: Sequence[SSAValue]
) -> None:
    """One element of an `nd` buffer: one index per dim, a constant one inside."""
    buf = cast(BufferType, value.type)
    if buf.layout_kind != Layout.ND:
        raise VerifyException(f"{verb} nd buffers")
    shape = buf.get_shape()
    if len(indices) != len(shape):
        raise VerifyException(
            f"{what} {buf} needs {len(shape)} indices, got {len(indices)}"
        )
    index = _constants(indices)
    if index is not None and any(
        not 0 <= i < d for i, d in zip(index, shape, strict=True)
    ):
        raise VerifyException(f"index {index} is outside {buf}")


SCALAR_LOAD_TYPES: tuple[Attribute, ...] = (IndexType(), i16, i32, f16, f32)
"""Element types `load_scalar` reads: indices (GM `index` memrefs, ub i16/i32
index tiles) and the float values of sparse tensors."""


@irdl_op_definition
class LoadScalarOp(HwInstruction):
    """`%v = load_scalar %src[%i] : memref<?xindex> -> index`: the scalar unit reads
    one element of a GM memref or a ub buffer (S).

    The element at `src[indices]` (one index per dim; in a buffer, the `nd`
    element offset) becomes a scalar register value: integers (an `index`
    memref, i16/i32) as a sign-extended `index` or as their own type, floats as
    their own type. The
    scalar unit waits for it, so the instructions it issues after use it
    (loop bounds, DMA addresses, `vmuls` operands); it reads GM through its data
    cache (docs/simulator.md, *Scalar reads*). A ub buffer is read after the
    DMA that wrote it only through an `mte2 -> s` flag (hw-insert-sync derives
    it). The simulator reports an element outside the memref or buffer as an
    error naming this op, never a silent read.
    """

    name = "ascend_hw.load_scalar"

    src = operand_def(base(MemRefType) | base(BufferType))
    indices = var_operand_def(IndexType)
    result = result_def()

    assembly_format = (
        "$src `[` $indices `]` attr-dict `:` type($src) `->` type($result)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        result_type: Attribute | None = None,
    ):
        element = _element_type_of(SSAValue.get(src))
        if result_type is None:
            result_type = element if is_float_type(element) else IndexType()
        super().__init__(operands=[src, indices], result_types=[result_type])

    @property
    def pipe(self) -> Pipe:
        return Pipe.S

    def read_buffers(self) -> tuple[SSAValue, ...]:
        return (self.src,)

    def verify_(self) -> None:
        _require_space("the source", self.src, (MemorySpace.GM, MemorySpace.UB))
        element = _element_type_of(self.src)
        if element not in SCALAR_LOAD_TYPES:
            raise VerifyException(
                f"load_scalar reads {names(SCALAR_LOAD_TYPES)} elements, got {element}"
            )
        allowed = (element,) if is_float_type(element) else (IndexType(), element)
        if self.result.type not in allowed:
            raise VerifyException(
                f"a {element} element is read as {names(dict.fromkeys(allowed))}, "
                f"not {self.result.type}"
            )
        if isinstance(self.src.type, BufferType):
            _verify_scalar_element(
                "load_scalar reads", "source", self.src, self.indices
            )
            return
        _verify_gm_window("source", self.src, self.indices, element_bytes(element))


SCALAR_STORE_TYPES: tuple[Attribute, ...] = (i16, i32, f16, f32)
"""Element types `store_scalar` writes: the elements `tile.insert` writes."""


@irdl_op_definition
class StoreScalarOp(HwInstruction):
    """`store_scalar %v, %dst[%i] : f32, !ascend_hw.buf<64xf32, ub>`: the scalar
    unit writes one element of a ub buffer (S).

    The counterpart of `load_scalar` (`tile.insert` lowers to it): a float value
    of the buffer's element type, or an `index` truncated to an i16/i32 element;
    one index per buffer dim, the `nd` element offset. An element outside the
    buffer is an error of the simulator naming this op. A vector instruction or
    DMA that reads the buffer after it waits for an `s -> v` / `s -> mte3` flag
    (hw-insert-sync derives it like any cross-pipe dependence).
    """

    name = "ascend_hw.store_scalar"

    value = operand_def()
    dst = operand_def(BufferType)
    indices = var_operand_def(IndexType)

    assembly_format = (
        "$value `,` $dst `[` $indices `]` attr-dict `:` type($value) `,` type($dst)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        dst: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
    ):
        super().__init__(operands=[value, dst, indices])

    @property
    def pipe(self) -> Pipe:
        return Pipe.S

    def write_buffers(self) -> tuple[SSAValue, ...]:
        return (self.dst,)

    def verify_(self) -> None:
        _require_space("the destination", self.dst, (MemorySpace.UB,))
        buf = cast(BufferType, self.dst.type)
        element = buf.element_type
        if element not in SCALAR_STORE_TYPES:
            raise VerifyException(
                f"store_scalar writes {names(SCALAR_STORE_TYPES)} elements, got {element}"
            )
        allowed = (element,) if is_float_type(element) else (IndexType(), element)
        if self.value.type not in allowed:
            raise VerifyException(
                f"a {element} element is written from "
                f"{names(dict.fromkeys(allowed))}, not {self.value.type}"
            )
        _verify_scalar_element(
            "store_scalar writes", "destination", self.dst, self.indices
        )


@irdl_op_definition
class BlockIdxOp(HwInstruction):
    """`%i = block_idx`: the index of this core in the launch, 0 .. block_dim - 1 (S)."""

    name = "ascend_hw.block_idx"

    result = result_def(IndexType)

    traits = traits_def(Pure())

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])

    @property
    def pipe(self) -> Pipe:
        return Pipe.S


@irdl_op_definition
class BlockDimOp(HwInstruction):
    """`%n = block_dim`: the number of cores running the kernel (S)."""

    name = "ascend_hw.block_dim"

    result = result_def(IndexType)

    traits = traits_def(Pure())

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])

    @property
    def pipe(self) -> Pipe:
        return Pipe.S


@irdl_op_definition
class SyncAllOp(HwInstruction):
    """`sync_all`: a barrier of all cores of the launch through GM (Ascend C `SyncAll`).

    The core's pipes drain (as for `pipe_barrier all`), then the core waits until
    every core of the launch has reached the same `sync_all`; GM bytes any core
    wrote before it are visible to every core after it. Every core must execute
    it equally often: it may not sit in an `scf.if` whose condition, or an
    `scf.for` whose bounds, depend on `block_idx` (a core that never arrives
    leaves the others waiting forever).

    Its pipe is `all`: like `pipe_barrier all` it orders every pipe of the core
    (the scalar unit runs the cross-core handshake once they have drained), so
    a pass reading `op.pipe` sees that nothing overtakes it. It reads and writes
    no buffer.
    """

    name = "ascend_hw.sync_all"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    @property
    def pipe(self) -> Pipe:
        return Pipe.ALL

    def verify_(self) -> None:
        op = self.parent_op()
        while op is not None:
            if isinstance(op, scf.IfOp) and _depends_on_block_idx([op.cond]):
                raise VerifyException(
                    "every core must reach it equally often, but it is inside an "
                    "scf.if whose condition depends on ascend_hw.block_idx"
                )
            if isinstance(op, scf.ForOp) and _depends_on_block_idx(
                [op.lb, op.ub, op.step]
            ):
                raise VerifyException(
                    "every core must reach it equally often, but it is inside an "
                    "scf.for whose bounds depend on ascend_hw.block_idx"
                )
            op = op.parent_op()


def _depends_on_block_idx(values: Sequence[SSAValue]) -> bool:
    """Whether any of `values` is computed from `block_idx` (through the operands
    of their defining ops, and through the bounds and inits of the loops whose
    block arguments they are)."""
    stack, seen = list(values), set[SSAValue]()
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        if isinstance(value, OpResult):
            if isinstance(value.op, BlockIdxOp):
                return True
            stack.extend(value.op.operands)
        elif isinstance(value, BlockArgument):
            loop = value.block.parent_op()
            if isinstance(loop, scf.ForOp):
                stack.extend(loop.operands)
    return False


AscendHW = Dialect(
    "ascend_hw",
    [
        AllocOp,
        SubviewOp,
        DmaLoadOp,
        DmaStoreOp,
        DmaCopyOp,
        Nd2NzOp,
        LoadL0Op,
        FixpipeOp,
        MmadOp,
        VAddOp,
        VSubOp,
        VMulOp,
        VDivOp,
        VMaxOp,
        VMinOp,
        VAddsOp,
        VMulsOp,
        VMaxsOp,
        VMinsOp,
        VExpOp,
        VLnOp,
        VAbsOp,
        VReluOp,
        VSqrtOp,
        VRsqrtOp,
        VReciprocalOp,
        VCopyOp,
        VCastOp,
        VReduceSumOp,
        VReduceMaxOp,
        VReduceMinOp,
        VBlockReduceMaxOp,
        VBlockReduceMinOp,
        VDupOp,
        VBrcbOp,
        VCmpOp,
        VCmpsOp,
        VSelectOp,
        VGatherOp,
        SetFlagOp,
        WaitFlagOp,
        PipeBarrierOp,
        LoadScalarOp,
        StoreScalarOp,
        BlockIdxOp,
        BlockDimOp,
        SyncAllOp,
    ],
    [
        MemorySpaceAttr,
        PipeAttr,
        LayoutAttr,
        RoundModeAttr,
        CmpModeAttr,
        MaskAttr,
        BufferType,
    ],
)
