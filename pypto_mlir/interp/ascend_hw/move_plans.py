"""Per-op static data of the data movement and cube ops: burst DMA, matrix moves
(nd2nz, load_l0, fixpipe) and mmad, and the blocks they read and write.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import bf16, i8

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw.errors import HwRunError, _at, _op_loc, _short_name
from pypto_mlir.interp.ascend_hw.float_formats import _F32, _I32
from pypto_mlir.interp.ascend_hw.values import (
    _INSTANCE_LIMIT,
    GmRef,
    HwBuffer,
    _element_type,
    _space,
    _strided,
)
from pypto_mlir.sim import Access, AccessError, GmTensor, Pipe, SimError
from pypto_mlir.sim.machine import Core
from pypto_mlir.targets import Target
from pypto_mlir.targets.cost import dma_cost, mmad_cycles


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
            address = side.byte_address(
                index, self.loc, (self.bursts - 1) * pitch + self.length, self.name
            )
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
            address = side.byte_address(
                index, self.loc, (self.bursts - 1) * pitch + self.length, self.name
            )
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

    def blocks(self) -> np.ndarray | None:
        """The (rows, column blocks, c0) view of an nz side whose columns fill
        whole blocks (None otherwise): elements in the order `read` gives them,
        without `read`'s copy."""
        if not self.c0 or self.cols % self.c0:
            return None
        return self._view()

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
        access = core.access(side.space, base, cols * e, rows, total_cols * e)
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
        accesses += (core.access(side.space, base, rows * frac * e, full, block_pitch),)
    if rest:
        accesses += (
            core.access(
                side.space, base + full * block_pitch, rest * e, rows, frac * e
            ),
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
