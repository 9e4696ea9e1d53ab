"""What ascend_hw instructions touch: byte regions at affine addresses.

An address is an affine expression over run-time values (`Affine`: loop indices,
kernel arguments, the results of ops the analysis does not fold, among them the
index values the scalar unit reads with `load_scalar`), so that two
accesses whose addresses differ by a constant can be compared exactly, also
between iterations of a loop (`LoopShift`). hw-insert-sync orders the accesses
of different pipes that may overlap (`may_overlap`); hw-coalesce-dma finds DMAs
whose GM addresses follow each other at a constant pitch.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import BlockArgument, Operation, SSAValue

from pypto_mlir.dialects.ascend_hw import (
    AllocOp,
    BufferType,
    DmaLoadOp,
    DmaStoreOp,
    HwInstruction,
    Layout,
    LoadScalarOp,
    MatrixMoveOp,
    Pipe,
    SubviewOp,
    element_bytes,
    element_offset,
)
from pypto_mlir.targets import Target

# Addresses: affine expressions over run-time values -----------------------------------


class Affine:
    """`const + sum(coeff * symbol)`: an address known up to run-time values.

    A symbol is an SSA value (a loop index, a kernel argument, the result of an op
    the analysis does not fold) or a tagged tuple derived from one.
    """

    __slots__ = ("const", "coeffs")

    def __init__(self, const: int = 0, coeffs: Mapping[Hashable, int] | None = None):
        self.const = const
        self.coeffs: dict[Hashable, int] = {
            s: c for s, c in (coeffs or {}).items() if c
        }

    @staticmethod
    def symbol(symbol: Hashable) -> Affine:
        return Affine(0, {symbol: 1})

    def __add__(self, other: Affine) -> Affine:
        coeffs = dict(self.coeffs)
        for s, c in other.coeffs.items():
            coeffs[s] = coeffs.get(s, 0) + c
        return Affine(self.const + other.const, coeffs)

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scaled(-1)

    def scaled(self, factor: int) -> Affine:
        return Affine(
            self.const * factor, {s: c * factor for s, c in self.coeffs.items()}
        )


def _symbol_value(symbol: Hashable) -> SSAValue:
    """The SSA value a symbol stands for (tagged symbols wrap one)."""
    while isinstance(symbol, tuple):
        symbol = symbol[1]  # pyright: ignore[reportUnknownVariableType]
    assert isinstance(symbol, SSAValue)
    return symbol


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def affine_of(value: SSAValue) -> Affine:
    """`value` as an affine expression: constants, +, -, * and << by constants fold."""
    if (const := constant_int(value)) is not None:
        return Affine(const)
    owner = value.owner
    match owner:
        case arith.AddiOp():
            return affine_of(owner.lhs) + affine_of(owner.rhs)
        case arith.SubiOp():
            return affine_of(owner.lhs) - affine_of(owner.rhs)
        case arith.MuliOp():
            for factor, term in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
                if (const := constant_int(factor)) is not None:
                    return affine_of(term).scaled(const)
        case arith.ShLIOp():
            if (const := constant_int(owner.rhs)) is not None and 0 <= const < 64:
                return affine_of(owner.lhs).scaled(1 << const)
        case arith.IndexCastOp():
            return affine_of(owner.input)
        case _:
            pass
    return Affine.symbol(value)


# What an instruction touches ------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    """Bytes `[start, start + size)` of a memory; `start` None: anywhere in it.

    `memory` is an on-chip memory name ("ub", ...) or ("gm", root memref value).
    """

    memory: Hashable
    start: Affine | None
    size: int


@dataclass(frozen=True)
class Access:
    op: HwInstruction
    pipe: Pipe
    region: Region
    write: bool


@dataclass(frozen=True)
class LoopShift:
    """Compares an access with another one some iterations of `loop` later."""

    loop: scf.ForOp
    step: int | None

    @cached_property
    def iv(self) -> SSAValue:
        """The loop's index (asked for every access pair of the loop's nodes)."""
        return self.loop.body.block.args[0]

    def varies(self, symbol: Hashable) -> bool:
        """Whether the symbol's value may change from one iteration to the next."""
        value = _symbol_value(symbol)
        if isinstance(value, BlockArgument):
            defining: Operation | None = value.block.parent_op()
        else:
            defining = value.owner  # pyright: ignore[reportAssignmentType]
        return defining is not None and (
            defining is self.loop or self.loop.is_ancestor(defining)
        )


def _intersects(size_a: int, offset_b: int, size_b: int) -> bool:
    """Whether [0, size_a) and [offset_b, offset_b + size_b) share a byte."""
    return offset_b < size_a and offset_b + size_b > 0


def _intersects_later(size_a: int, delta: int, size_b: int, stride: int) -> bool:
    """Whether [0, size_a) meets [delta + stride*d, ... + size_b) for some d >= 1."""
    if stride < 0:
        return _intersects_later(size_b, -delta, size_a, -stride)
    first = max(1, (-size_b - delta) // stride + 1)
    return delta + stride * first < size_a


def may_overlap(first: Region, second: Region, later: LoopShift | None) -> bool:
    """Whether `first` and `second` (in a later iteration of `later`) share a byte."""
    if first.memory != second.memory:
        return False
    if first.start is None or second.start is None:
        return True
    # The starts differ by a constant when their symbols and coefficients are the
    # same; in a later iteration, when no symbol but the loop index varies (one
    # that does is a fresh symbol there).
    if first.start.coeffs != second.start.coeffs:
        return True
    delta = second.start.const - first.start.const
    if later is None:
        return _intersects(first.size, delta, second.size)
    iv = later.iv
    if any(s != iv and later.varies(s) for s in second.start.coeffs):
        return True
    per_iteration = second.start.coeffs.get(iv, 0)
    if per_iteration == 0:
        return _intersects(first.size, delta, second.size)
    if later.step is None:
        return True
    return _intersects_later(first.size, delta, second.size, per_iteration * later.step)


def _gm_root(value: SSAValue) -> tuple[SSAValue, bool]:
    """The memref a view was made from, and whether `value` is a view of it."""
    root, view = value, False
    while (
        isinstance(owner := root.owner, Operation)
        and owner.name.startswith("memref.")
        and owner.operands
        and isinstance(owner.operands[0].type, MemRefType)
    ):
        root, view = owner.operands[0], True
    return root, view


class AccessAnalysis:
    """The byte regions an instruction reads and writes (cached per value)."""

    def __init__(self, target: Target):
        self.target = target
        self._buffers: dict[SSAValue, Region] = {}

    def accesses(self, op: HwInstruction) -> list[Access]:
        pipe = op.pipe
        return [
            Access(op, pipe, self.region(op, value), write)
            for values, write in (
                (op.read_buffers(), False),
                (op.write_buffers(), True),
            )
            for value in values
        ]

    def region(self, op: HwInstruction, value: SSAValue) -> Region:
        if isinstance(value.type, BufferType):
            return self.buffer_region(value)
        return self.gm_region(op, value)

    def buffer_region(self, value: SSAValue) -> Region:
        if (known := self._buffers.get(value)) is None:
            known = self._buffers[value] = self._buffer_region(value)
        return known

    def _buffer_region(self, value: SSAValue) -> Region:
        buf = value.type
        assert isinstance(buf, BufferType)
        space = str(buf.memory_space)
        owner = value.owner
        if isinstance(owner, AllocOp):
            return Region(space, Affine(owner.byte_offset), buf.byte_size())
        if isinstance(owner, SubviewOp):
            source = self.buffer_region(owner.source)
            offset = self._subview_offset(owner)
            if source.start is None or offset is None:
                return source  # somewhere inside its source
            return Region(space, source.start + offset, buf.byte_size())
        return Region(space, None, self.target.memories[space].size or 0)

    def _subview_offset(self, op: SubviewOp) -> Affine | None:
        """Bytes from the source's start to the subview's, when affine."""
        src = op.source.type
        assert isinstance(src, BufferType)
        if src.layout_kind == Layout.ND:
            offset, stride = Affine(), src.element_bytes
            for index, dim in reversed(
                list(zip(op.indices, src.get_shape(), strict=True))
            ):
                offset = offset + affine_of(index).scaled(stride)
                stride *= dim
            return offset
        index = [constant_int(i) for i in op.indices]
        if any(i is None for i in index):
            return None
        elements = element_offset(src, index, self.target)  # pyright: ignore[reportArgumentType]
        return Affine(elements * src.element_bytes)

    def gm_region(self, op: HwInstruction, value: SSAValue) -> Region:
        root, view = _gm_root(value)
        memory = ("gm", root)
        mtype = value.type
        assert isinstance(mtype, MemRefType)
        whole = Region(memory, None, 0)
        strides = mtype.get_strides()
        if view or strides is None or any(s is None or s < 0 for s in strides):
            return whole
        window = _gm_window(op, value, strides)  # pyright: ignore[reportArgumentType]
        if window is None:
            return whole
        indices, span = window
        e = element_bytes(mtype.element_type)
        offset = mtype.get_offset()
        start = (
            Affine(offset) if offset is not None else Affine.symbol(("offset", value))
        )
        for index, stride in zip(indices, strides, strict=True):
            start = start + affine_of(index).scaled(stride)  # pyright: ignore[reportArgumentType]
        return Region(memory, start.scaled(e), span)


def _gm_window(
    op: HwInstruction, value: SSAValue, strides: Sequence[int]
) -> tuple[Sequence[SSAValue], int] | None:
    """The indices where `op` starts in memref `value` and the bytes it spans."""
    if isinstance(op, DmaLoadOp | DmaStoreOp):
        bursts, length, src_gap, dst_gap = op.burst_descriptor()
        if isinstance(op, DmaLoadOp):
            return op.src_indices, (bursts - 1) * (length + src_gap) + length
        return op.dst_indices, (bursts - 1) * (length + dst_gap) + length
    if isinstance(op, LoadScalarOp):
        return op.indices, element_bytes(value.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
    if isinstance(op, MatrixMoveOp):
        rows, cols = op.block_shape()
        if value is op.src:
            indices = op.src_indices
            if op.transposed:
                rows, cols = cols, rows
        else:
            indices = op.dst_indices
        elements = (rows - 1) * strides[-2] + (cols - 1) * strides[-1] + 1
        return indices, elements * element_bytes(value.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
    return None
