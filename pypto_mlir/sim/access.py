"""Pipes, GM tensors and byte-range accesses: the vocabulary of instruction records."""

from __future__ import annotations

from enum import IntEnum

import numpy as np
from numpy.lib.stride_tricks import as_strided

from pypto_mlir.sim.errors import AccessError


class Pipe(IntEnum):
    """The AI Core pipes; ALL is only valid for `pipe_barrier`."""

    S = 0
    MTE1 = 1
    MTE2 = 2
    MTE3 = 3
    M = 4
    V = 5
    FIX = 6
    ALL = 7

    @classmethod
    def parse(cls, name: str | Pipe) -> Pipe:
        """Pipe from a name such as "mte2", "MTE2" or "PIPE_MTE2" (any case)."""
        if type(name) is Pipe:
            return name
        pipe = _PIPES_BY_NAME.get(name)  # type: ignore[arg-type]
        if pipe is not None:
            return pipe
        key = str(name).strip().upper().removeprefix("PIPE_")
        try:
            return cls[key]
        except KeyError:
            known = ", ".join(p.name.lower() for p in cls)
            raise ValueError(f"unknown pipe {name!r} (known: {known})") from None


_PIPES_BY_NAME: dict[str, Pipe] = {
    spelling: pipe
    for pipe in Pipe
    for spelling in (pipe.name, pipe.name.lower(), f"PIPE_{pipe.name}")
}

NUM_PIPES = 7
"""Pipes that execute instructions (Pipe.ALL excluded)."""


class GmTensor:
    """A tensor in global memory: a C-contiguous numpy array with a name and an id.

    The machine reads and writes `array` in place; `bytes` is its flat byte view.
    """

    __slots__ = ("id", "name", "array", "bytes")

    def __init__(self, tensor_id: int, name: str, array: np.ndarray):
        if not array.flags.c_contiguous:
            raise ValueError(
                f"GM tensor {name!r} must be C-contiguous (use np.ascontiguousarray)"
            )
        self.id = tensor_id
        self.name = name
        self.array = array
        self.bytes = array.reshape(-1).view(np.uint8)

    @property
    def nbytes(self) -> int:
        return self.bytes.size

    def view(
        self,
        byte_offset: int,
        shape: tuple[int, ...],
        dtype: np.dtype | type,
        strides: tuple[int, ...] | None = None,
    ) -> np.ndarray:
        """Typed view of bytes of this tensor (strides in bytes, default contiguous)."""
        return typed_view(
            self.bytes, f"gm:{self.name}", byte_offset, shape, dtype, strides
        )

    def __repr__(self) -> str:
        return f"GmTensor({self.name!r}, {self.array.dtype}{list(self.array.shape)})"


class Access:
    """Bytes touched by an instruction in one memory: `count` bursts of `length` bytes,
    the i-th starting at `start + i * stride`.

    `mem` is an on-chip space name ("ub", "l1", "l0a", "l0b", "l0c") or a GmTensor.
    Contiguous bursts (stride == length) are merged into one.
    """

    __slots__ = ("mem", "start", "length", "count", "stride", "end")

    def __init__(
        self,
        mem: str | GmTensor,
        start: int,
        length: int,
        count: int = 1,
        stride: int | None = None,
    ):
        if stride is None or count == 1:
            stride = length
        if length < 0 or count < 1 or stride < 0 or start < 0:
            raise AccessError(
                f"bad access to {_mem_name(mem)}: start={start} length={length} "
                f"count={count} stride={stride}"
            )
        if stride == length and count > 1:
            length, count = length * count, 1
        self.mem = mem
        self.start = int(start)
        self.length = int(length)
        self.count = int(count)
        self.stride = int(stride)
        self.end = (
            self.start
            if self.length == 0
            else self.start + (self.count - 1) * self.stride + self.length
        )  # one past the last byte touched

    def at(self, start: int) -> Access:
        """The same bursts in the same memory from `start` (the shape is not
        checked again: an interpreter moves one access per op along a tensor)."""
        if start < 0:
            return Access(self.mem, start, self.length, self.count, self.stride)
        access = _new_object(Access)
        access.mem = self.mem
        access.start = start = int(start)
        access.length = self.length
        access.count = self.count
        access.stride = self.stride
        access.end = start + self.end - self.start
        return access

    @classmethod
    def range(cls, mem: str | GmTensor, lo: int, hi: int) -> Access:
        """The contiguous bytes [lo, hi)."""
        return cls(mem, lo, hi - lo)

    @property
    def nbytes(self) -> int:
        return self.count * self.length

    @property
    def mem_name(self) -> str:
        return _mem_name(self.mem)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Access)
            and (
                self.mem is other.mem
                if isinstance(self.mem, GmTensor)
                else self.mem == other.mem
            )
            and (self.start, self.length, self.count, self.stride)
            == (
                other.start,
                other.length,
                other.count,
                other.stride,
            )
        )

    def __hash__(self) -> int:
        return hash((self.mem_name, self.start, self.length, self.count, self.stride))

    def __repr__(self) -> str:
        if self.count == 1:
            return f"Access({self.mem_name}, [{self.start}, {self.end}))"
        return (
            f"Access({self.mem_name}, start={self.start}, {self.count} x {self.length} B, "
            f"stride={self.stride})"
        )


_new_object = object.__new__


def _mem_name(mem: str | GmTensor) -> str:
    return f"gm:{mem.name}" if isinstance(mem, GmTensor) else str(mem)


def burst_view(buf: np.ndarray, access: Access) -> np.ndarray:
    """The (count, length) strided view of `buf` (a flat array) that `access` touches.

    Bounds must have been checked by the caller.
    """
    if access.count == 1:
        return buf[access.start : access.start + access.length].reshape(
            1, access.length
        )
    base = buf[access.start :]
    return as_strided(
        base,
        shape=(access.count, access.length),
        strides=(access.stride * buf.strides[0], buf.strides[0]),
        writeable=True,
    )


def typed_view(
    buf: np.ndarray,
    name: str,
    byte_offset: int,
    shape: tuple[int, ...],
    dtype: np.dtype | type,
    strides: tuple[int, ...] | None = None,
) -> np.ndarray:
    """A typed numpy view into the byte array `buf`; AccessError when it does not fit."""
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)
    if byte_offset < 0 or byte_offset % dtype.itemsize:
        raise AccessError(
            f"{name}: byte offset {byte_offset} is not aligned for {dtype} "
            f"(needs a multiple of {dtype.itemsize})"
        )
    if any(s < 0 for s in shape):
        raise AccessError(f"{name}: negative shape {shape}")
    empty = any(s == 0 for s in shape)
    if strides is None:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        _check_range(buf, name, byte_offset, byte_offset + nbytes)
        return buf[byte_offset : byte_offset + nbytes].view(dtype).reshape(shape)
    strides = tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise AccessError(
            f"{name}: {len(strides)} strides for a rank-{len(shape)} view"
        )
    if any(s < 0 or s % dtype.itemsize for s in strides):
        raise AccessError(
            f"{name}: strides {strides} must be non-negative multiples of {dtype.itemsize}"
        )
    extent = (
        0
        if empty
        else sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
        + dtype.itemsize
    )
    _check_range(buf, name, byte_offset, byte_offset + extent)
    usable = (buf.size - byte_offset) // dtype.itemsize * dtype.itemsize
    base = buf[byte_offset : byte_offset + usable].view(dtype)
    return as_strided(base, shape=shape, strides=strides, writeable=True)


def _check_range(buf: np.ndarray, name: str, lo: int, hi: int) -> None:
    if lo < 0 or hi > buf.size:
        raise AccessError(
            f"{name}: bytes [{lo}, {hi}) are outside the {buf.size}-byte memory"
        )
