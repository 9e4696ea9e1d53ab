"""Run-time values of the `ascend_hw` interpreter.

A buffer is an `HwBuffer` (memory, byte address, type); a GM memref is a `GmRef`
(a simulator `GmTensor` and the memref's layout); index, integer and float
values are the xDSL interpreter's usual attributes. Also the small helpers that
read operands as these values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, SSAValue

from pypto_mlir.dialects.ascend_hw import BufferType, Layout
from pypto_mlir.interp.ascend_hw.errors import HwRunError, _at
from pypto_mlir.interp.ascend_hw.float_formats import storage_dtype
from pypto_mlir.sim import AccessError, GmTensor
from pypto_mlir.sim.machine import Core
from pypto_mlir.targets import Target

_INSTANCE_LIMIT = 64
"""Cached operand-address instances per op (a loop cycles through a few)."""


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

    __slots__ = ("tensor", "shape", "strides", "offset", "dtype", "ebytes", "end")

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
        last = sum((d - 1) * abs(s) for d, s in zip(shape, strides, strict=True))
        self.end = (offset + last + 1) * self.ebytes if all(shape) else 0
        """One past the memref's last byte in its tensor (strides >= 0)."""

    def byte_address(
        self, index: Sequence[int], loc: str, span: int = 0, what: str = ""
    ) -> int:
        """Byte address of element `index`; AccessError (naming `what`, the
        instruction) when it is outside the memref, or when the `span` bytes from
        it run past the memref's end: a run-time address (a gathered row, a
        CSR offset) is checked here, never read silently."""
        if len(index) == 2 and len(self.shape) == 2:  # the common case, unrolled
            i, j = index
            rows, cols = self.shape
            if 0 <= i < rows and 0 <= j < cols:
                row_stride, col_stride = self.strides
                address = (self.offset + i * row_stride + j * col_stride) * self.ebytes
                if address + span <= self.end:
                    return address
        element = self.offset
        for i, d, s in zip(index, self.shape, self.strides, strict=True):
            if not 0 <= i < d:
                raise AccessError(
                    f"{_at(loc)}{what + ': ' if what else ''}index {list(index)} is "
                    f"outside memref '{self.tensor.name}' of shape {list(self.shape)}",
                    (loc,),
                )
            element += i * s
        address = element * self.ebytes
        if address + span > self.end:
            raise AccessError(
                f"{_at(loc)}{what + ': ' if what else ''}the {span} bytes from index "
                f"{list(index)} run past the end of memref '{self.tensor.name}' of "
                f"shape {list(self.shape)}",
                (loc,),
            )
        return address

    def __repr__(self) -> str:
        return f"GmRef({self.tensor.name}, {list(self.shape)}, strides={list(self.strides)})"


def _indices(values: Sequence[Any]) -> tuple[int, ...]:
    """Index operands (IntegerAttr at run time) as ints."""
    if len(values) == 2:  # the usual 2-d index, without a comprehension
        first, second = values
        return (first.value.data, second.value.data)
    return tuple([v.value.data for v in values])


def _strided(
    buf: np.ndarray,
    offset: int,
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    dtype: np.dtype[Any],
) -> np.ndarray:
    """A typed view of the byte array `buf` (strides in bytes; bounds checked before)."""
    return np.ndarray(shape, dtype, buffer=buf, offset=offset, strides=strides)


def _space(value: SSAValue) -> str:
    return str(value.type.memory_space) if isinstance(value.type, BufferType) else "gm"


def _element_type(value: SSAValue) -> Attribute:
    value_type = value.type
    if isinstance(value_type, BufferType | MemRefType):
        return value_type.element_type
    raise HwRunError(f"{value_type} is not a buffer or a memref")


def _bytes_of(core: Core, mem: str | GmTensor) -> np.ndarray:
    return mem.bytes if type(mem) is GmTensor else core.memories[mem]
