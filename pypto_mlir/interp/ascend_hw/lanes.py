"""Vector lane addressing: which elements each operand of a vector op touches.

A `LanePattern` is computed once per op (lane offsets, byte runs, a strided
view when there is one); `_Lanes` reads and writes those elements at one
address of one core's memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from pypto_mlir.interp.ascend_hw.values import _strided
from pypto_mlir.sim import Access


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
