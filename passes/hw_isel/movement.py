"""Data movement: loads, stores and moves of tiles, fills and pads.

A load or store is one DMA per contiguous run of a GM window (hw-coalesce-dma
merges them); a GM window whose elements are strided along the tile's rows is
staged in UB and packed by a gather; nz tiles come from GM by nd2nz and from
l0c by fixpipe, with the fractals their readers touch beyond the valid region
zeroed; l1 -> l0a/l0b moves are `load_l0`; on-chip nd copies move whole
32-byte blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, MemRefType, f32, i8, i16, i32
from xdsl.ir import Attribute, Operation, SSAValue

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import Layout, MemorySpace, PadValue, TileType
from pypto_mlir.passes.hw_isel.casts import wrap_to_i8
from pypto_mlir.passes.hw_isel.emitter import (
    BufferOf,
    Emitter,
    Kind,
    Lanes,
    Region,
    as_buffer,
    as_tile,
    dup,
    fill_offsets,
    lane_mask,
    matrix_shape,
    round_up,
    unary,
)
from pypto_mlir.passes.hw_isel.strategy import (
    IselContext,
    NoScratch,
    Term,
    Terms,
    TileOpStrategy,
)


def as_memref(value: SSAValue) -> MemRefType:
    assert isinstance(value.type, MemRefType)
    return value.type


def gathered_type(element_type: Attribute) -> Attribute:
    """The element type a gather moves `element_type` as (vgather is 16/32-bit:
    bytes go as the halfwords that start with them)."""
    return i16 if tile.element_bytes(element_type) == 1 else element_type


def byte_pair(value: int) -> int:
    """The i16 whose two bytes are the 8-bit `value`."""
    pattern = (value & 0xFF) * 257
    return pattern - (1 << 16) if pattern >= 1 << 15 else pattern


def byte_pattern(em: Emitter, value: SSAValue) -> SSAValue:
    """The i16 whose two bytes are the i8 `value` (`(v & 0xff) * 257`)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return em.scalar(byte_pair(owner.value.value.data), i16)
    widened = em.emit(arith.ExtUIOp(value, i16)).results[0]
    return em.emit(arith.MuliOp(widened, em.scalar(257, i16))).results[0]


def pad_scalar(element_type: Attribute, pad: PadValue) -> float | int:
    """The value a tile's pad stands for."""
    if pad == PadValue.ZERO:
        return 0
    if tile.is_float(element_type):
        return float("-inf") if pad == PadValue.MIN else float("inf")
    info = np.iinfo({i8: np.int8, i16: np.int16, i32: np.int32}[element_type])
    return int(info.min) if pad == PadValue.MIN else int(info.max)


@dataclass(frozen=True)
class StridedLoad:
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


def gm_bursts(
    isel: IselContext, op: Operation, memref: MemRefType, value: SSAValue
) -> dict[str, int]:
    """The burst descriptor of a DMA between a GM window and a tile's buffer,
    as keyword arguments with the GM gap named `gm_gap`."""
    tile_type = as_tile(value)
    e = tile.element_bytes(tile_type.element_type)
    strides = memref.get_strides()
    rank = tile_type.get_num_dims()
    if strides is None or any(s is None for s in strides[-rank:]):
        raise op_error(op, f"a DMA needs static strides, got {memref}")
    region = isel.region(value)
    if strides[-1] != 1 and region.cols > 1:
        raise op_error(
            op,
            f"a DMA moves contiguous rows: the innermost stride of {memref} must be 1",
        )
    alignment = isel.target.memories[str(tile_type.memory_space)].alignment
    row_stride = strides[-2] if rank >= 2 else 0
    assert row_stride is not None
    if rank > 2 and any(v != 1 for v in isel.valid[value][:-2]):
        raise op_error(op, f"a DMA moves 2-D windows; valid {list(isel.valid[value])}")
    if region.rows == 1 or (region.cols == region.pitch and row_stride == region.cols):
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
        "chip_gap": region.pitch * e - round_up(region.cols * e, alignment),
    }


def row_windows(
    isel: IselContext,
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
    buf = as_buffer(buffer)
    alignment = isel.target.memories[str(buf.memory_space)].alignment
    pitch = (round_up(d["burst_bytes"], alignment) + d["chip_gap"]) // buf.element_bytes
    *outer, row, column = indices
    windows = []
    for r in range(d["bursts"]):
        shifted = row if r == 0 else em.emit(arith.AddiOp(row, em.index(r))).results[0]
        windows.append(([*outer, shifted, column], em.subview(buffer, r * pitch)))
    return windows


def strided_load(isel: IselContext, op: tile.LoadOp) -> StridedLoad | None:
    """How to load a GM window whose elements are not contiguous along the
    rows of the tile's buffer (innermost stride s > 1, or a column tile of a
    matrix), or None when they are. Each row goes to a UB staging row either
    as its whole span `((n - 1) s + 1) e` bytes or one element per 32-byte
    block, whichever is smaller (the DMA writes bursts at 32-byte aligned UB
    addresses, from any GM byte); a gather then packs the elements."""
    tile_type = as_tile(op.result)
    if tile_type.layout_kind == Layout.NZ:  # nd2nz follows any layout
        return None
    memref = as_memref(op.source)
    strides = memref.get_strides()
    if strides is None or any(s is None for s in strides):
        return None  # _gm_bursts names the problem
    region = isel.region(op.result)
    rank = tile_type.get_num_dims()
    row_stride = int(strides[-2] or 0) if rank >= 2 else 0
    if region.pitch == 1 and region.rows > 1:
        if rank > 2 and any(v != 1 for v in isel.valid[op.result][:-2]):
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
    span = round_up(((cols - 1) * stride + 1) * e, isel.block)
    if span <= cols * isel.block and e > 1:
        return StridedLoad(rows, cols, stride, row_stride, stride * e, span, False)
    return StridedLoad(
        rows, cols, stride, row_stride, isel.block, cols * isel.block, True
    )


def needs_zero_fill(isel: IselContext, value: SSAValue) -> bool:
    tile_type = as_tile(value)
    return (
        tile_type.layout_kind == Layout.NZ
        and isel.valid[value] != tile_type.get_shape()
    )


def nz_fill_parts(isel: IselContext, value: SSAValue) -> tuple[int, int, int, int, int]:
    """For an nz tile with a partial valid region: the fractal-rounded rows,
    the whole column blocks, their partial rows' bytes, the partial block's
    bytes and one column block's pitch in bytes."""
    tile_type = as_tile(value)
    rows, _ = tile_type.get_shape()
    valid_rows, valid_cols = isel.valid[value]
    e = tile.element_bytes(tile_type.element_type)
    c0 = hw.nz_c0(tile_type.element_type, isel.target)
    read_rows = round_up(valid_rows, isel.target.cube.fractal_m)
    whole = valid_cols // c0
    gap_bytes = (read_rows - valid_rows) * c0 * e
    partial_bytes = read_rows * c0 * e if valid_cols % c0 else 0
    return read_rows, whole, gap_bytes, partial_bytes, rows * c0 * e


def zero_fill_bytes(isel: IselContext, value: SSAValue) -> int:
    _, whole, gap_bytes, partial_bytes, _ = nz_fill_parts(isel, value)
    return max(whole * gap_bytes, partial_bytes, isel.block)


# Lowering --------------------------------------------------------------------------


def zero_fill_nz(
    isel: IselContext, value: SSAValue, em: Emitter, dst: SSAValue, zeros: SSAValue
) -> None:
    """Zero the fractals of an nz tile that readers of its valid region touch
    but the load does not write (rows below the valid ones, and the columns
    right of them in the last column block)."""
    tile_type = as_tile(value)
    element_type = tile_type.element_type
    _, whole, gap_bytes, partial_bytes, pitch = nz_fill_parts(isel, value)
    valid_rows, _ = isel.valid[value]
    e = tile.element_bytes(element_type)
    c0 = hw.nz_c0(element_type, isel.target)
    # vdup writes 16/32-bit elements: zero 8-bit data through an i16 view.
    fill = zeros if e > 1 else em.alias(zeros, i16)
    fill_type = as_buffer(fill).element_type
    em.vector(
        dup(em.scalar(0, fill_type)),
        [Lanes(fill)],
        1,
        0,
        as_buffer(fill).element_count(),
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


def fill_all(
    isel: IselContext, em: Emitter, dst: SSAValue, tile_type: TileType, pad: PadValue
) -> None:
    """Every element of a tile's buffer holds the pad value."""
    element_type = tile_type.element_type
    if tile.element_bytes(element_type) == 1:
        dst = em.alias(dst, i16)
        value = em.scalar(byte_pair(int(pad_scalar(element_type, pad))), i16)
    else:
        value = em.scalar(pad_scalar(element_type, pad), element_type)
    count = as_buffer(dst).element_count()
    em.vector(dup(value), [Lanes(dst)], 1, 0, count)


def zero_fill_scratch(isel: IselContext, value: SSAValue) -> list[hw.BufferType]:
    """The zeros `zero_fill_nz` copies from, for an nz tile with a partial valid
    region (none otherwise)."""
    if not needs_zero_fill(isel, value):
        return []
    tile_type = as_tile(value)
    count = zero_fill_bytes(isel, value) // tile.element_bytes(tile_type.element_type)
    return [hw.BufferType([count], tile_type.element_type, str(MemorySpace.UB))]


class LoadStrategy(TileOpStrategy):
    """`tile.load`: DMA from GM (nd2nz for nz tiles; strided windows gathered).

    `load` → ub / l1 (nd): `dma_load`: one burst when the valid rows are contiguous
    on both sides, else one `dma_load` per valid row (`burst_bytes` = valid columns)
    into the row's place in the buffer; `hw-coalesce-dma` then merges them into one
    DMA with a burst per row (GM gap = row stride − row, on-chip gap = row pitch −
    aligned row), so that `coalesce-dma=false` shows what forming bursts gains
    (test/filecheck/passes/tile_to_hw/rows.mlir). GM views need a static layout. A
    tile with a pad and a partial valid region is first filled with the pad
    (`vdup`).

    `load` → ub from a view with strided rows (innermost stride s > 1), or a column
    tile `[M, 1]` from a GM column (one row of M elements, s = the row stride): the
    DMA writes bursts only at 32-byte aligned UB addresses (from any GM byte), so
    each row is staged in a UB scratch, either as its whole GM span (`((n − 1) s +
    1) e` bytes) or one element per 32-byte block (bursts of one element), whichever
    is smaller; one `dma_load` when the rows are evenly spaced, else one per row;
    then a `vgather` per row packs it, with an offset table `l * step` for the lanes
    used (`vdup` on single lanes, doubling `vadds`). A window with one valid column
    ignores the innermost stride (`x[:, ::2]` of one column is contiguous). 8-bit
    tiles: one element per zeroed 32-byte block, a 16-bit gather of the halfwords
    that start with them (each an unsigned byte), wrapped to i8 as `cast` does

    `load` → l1, `layout = nz`: `nd2nz` of the valid block; with a partial valid
    region, first zero what `load_l0` will read but `nd2nz` does not write (rows up
    to the next fractal row, the partial column block) from a zeroed UB scratch
    (`vdup` + `dma_copy` UB→L1)
    """

    ops = (tile.LoadOp,)

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        assert isinstance(op, tile.LoadOp)
        ub = str(MemorySpace.UB)
        if (plan := strided_load(self, op)) is not None:
            element_type = as_tile(op.result).element_type
            e = tile.element_bytes(element_type)
            types = [
                hw.BufferType([plan.rows * plan.pitch // e], element_type, ub),
                hw.BufferType([self.lanes_for(gathered_type(element_type))], i32, ub),
            ]
            if e == 1:  # gathered as halfwords, then wrapped to bytes
                rows, cols = matrix_shape(as_tile(op.result))
                types.append(hw.BufferType([rows * cols], i16, ub))
                types += [hw.BufferType([rows * cols], f32, ub)] * 2
            return types
        return zero_fill_scratch(self, op.result)

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        """The staging of a load whose rows are strided in GM is the model's own
        term (`LiveProfile.of_block`); its offset table and 8-bit elements are
        here. nz tiles (not in UB) belong to matmul nests, which the tiling
        model sizes by a model of their own."""
        assert isinstance(op, tile.LoadOp)
        tile_type = as_tile(op.result)
        if tile_type.memory_space != MemorySpace.UB:
            return []
        e = tile.element_bytes(tile_type.element_type)
        strides = as_memref(op.source).get_strides() or [1]
        rows, cols = matrix_shape(tile_type)
        row = strides[-2] if len(strides) > 1 else 1
        column = cols == 1 and rows > 1 and row != 1
        if strides[-1] in (None, 1) and not column:
            return []
        found = [
            terms.constant(
                op.result, self.lanes_for(gathered_type(tile_type.element_type)) * 4
            )
        ]
        if column:  # the column's span, or a block per element
            staged = min(self.block, int(row or self.block) * e)
            found += [
                terms.term(op.result, staged),
                terms.constant(op.result, self.block),
            ]
        if e == 1:  # a block per element, its halfword, the wrap's f32 pair
            found.append(terms.term(op.result, self.block + 2 + 8))
        return found

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.LoadOp)
        self._load(op, em, buffer, scratch)

    def _load(
        self, op: tile.LoadOp, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        tile_type = as_tile(op.result)
        dst = buffer(op.result)
        if tile_type.layout_kind == Layout.NZ:
            if scratch:
                zero_fill_nz(self, op.result, em, dst, scratch[0])
            rows, cols = self.valid[op.result]
            zero = em.index(0)
            em.emit(
                hw.Nd2NzOp(
                    op.source, op.indices, dst, [zero, zero], rows=rows, cols=cols
                )
            )
            return
        if tile_type.pad_value is not None and not self.fully_valid(op.result):
            if tile_type.memory_space != MemorySpace.UB:
                raise op_error(op, f"cannot pad a tile in {tile_type.memory_space}")
            fill_all(self, em, dst, tile_type, tile_type.pad_value)
        plan = strided_load(self, op)
        if plan is not None:
            self._gather_load(op, plan, em, dst, scratch)
            return
        d = gm_bursts(self, op, as_memref(op.source), op.result)
        for indices, row_buffer in row_windows(self, em, op.indices, dst, d):
            em.emit(
                hw.DmaLoadOp(
                    op.source,
                    indices,
                    row_buffer,
                    bursts=1,
                    burst_bytes=d["burst_bytes"],
                )
            )

    def _gather_load(
        self,
        op: tile.LoadOp,
        plan: StridedLoad,
        em: Emitter,
        dst: SSAValue,
        scratch: list[SSAValue],
    ) -> None:
        tile_type = as_tile(op.result)
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
            count = as_buffer(zeros).element_count()
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
        gathered = gathered_type(tile_type.element_type)
        lanes = self.lanes_for(gathered)
        fill_offsets(em, offsets, min(lanes, cols), plan.step)
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
                        mask=lane_mask(0, min(lanes, cols - column), lanes),
                    )
                )
        if e == 1:  # each halfword holds an element's byte (unsigned): wrap it
            region = self.region(op.result)
            wrap_to_i8(
                em, region.lanes(packed), region.lanes(dst), region, scratch[3:5]
            )


class StoreStrategy(NoScratch):
    """`tile.store`: DMA to GM (fixpipe from l0c).

    `store` from ub: `dma_store` (mirror of the load)

    `store` from l0c: `fixpipe` of the valid block (f32 → f16/bf16 on the way)
    """

    ops = (tile.StoreOp,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.StoreOp)
        self._store(op, em, buffer)

    def _store(self, op: tile.StoreOp, em: Emitter, buffer: BufferOf) -> None:
        tile_type = as_tile(op.value)
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
        d = gm_bursts(self, op, as_memref(op.dest), op.value)
        for indices, row_buffer in row_windows(self, em, op.indices, src, d):
            em.emit(
                hw.DmaStoreOp(
                    row_buffer, op.dest, indices, bursts=1, burst_bytes=d["burst_bytes"]
                )
            )


class MoveStrategy(TileOpStrategy):
    """`tile.move` between on-chip memories: fixpipe from l0c, load_l0 into
    l0a/l0b, block copies between nd tiles.

    `move` l1 → l0a / l0b: `load_l0` of the valid block rounded up to whole fractals
    (`transpose` kept), from the window's offsets in the source (0, 0 without a
    window)

    `move` l0c → ub / l1: `fixpipe`; an `nz` result in l1 with a partial valid
    region is zeroed up to whole fractals first, as for loads

    `move` l1 ↔ ub (nd): `dma_copy` of whole 32-byte blocks per row; the bytes after
    the valid columns of a UB source are zeroed first (`vdup`), an L1 source must
    end its rows on a block

    `move` ub (nd) → l1 (nz): one `dma_copy` per fractal column of the whole
    physical tile, a 32-byte block per row strided by the UB row
    """

    ops = (tile.MoveOp,)

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        assert isinstance(op, tile.MoveOp)
        return zero_fill_scratch(self, op.result)

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        """None: the zero fill of an nz result belongs to matmul nests, which the
        tiling model sizes by a model of their own."""
        return []

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.MoveOp)
        self._move(op, em, buffer, scratch)

    def _move(
        self, op: tile.MoveOp, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        source, result = as_tile(op.source), as_tile(op.result)
        src, dst = buffer(op.source), buffer(op.result)
        zero = em.index(0)
        spaces = (source.memory_space, result.memory_space)
        if source.memory_space == MemorySpace.L0C:
            if scratch:  # an nz result read in whole fractals later
                zero_fill_nz(self, op.result, em, dst, scratch[0])
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
                    rows=round_up(rows, self.target.cube.fractal_m),
                    cols=round_up(cols, c0),
                    transpose=op.transpose is not None,
                )
            )
        elif result.layout_kind == Layout.NZ and spaces == (
            MemorySpace.UB,
            MemorySpace.L1,
        ):
            self._ub_to_nz(op, em, src, dst)
        elif result.layout_kind == Layout.NZ:
            raise op_error(
                op,
                "ascend_hw converts to nz only from GM (nd2nz) or from l0c "
                "(fixpipe): load the tile into l1 with layout = nz instead",
            )
        else:
            self._copy_rows(op, em, op.source, src, dst, spaces)

    def _ub_to_nz(
        self, op: tile.MoveOp, em: Emitter, src: SSAValue, dst: SSAValue
    ) -> None:
        """ub nd -> l1 nz (a probability tile of the attention nest): one
        `dma_copy` per fractal column, a 32-byte block per row strided by the
        ub row (Ascend C DataCopy's block strides), whole physical tile."""
        rows, cols = as_tile(op.source).get_shape()
        element_type = as_tile(op.source).element_type
        c0 = hw.nz_c0(element_type, self.target)
        block = c0 * tile.element_bytes(element_type)
        for column in range(0, cols, c0):
            em.emit(
                hw.DmaCopyOp(
                    em.subview(src, column),
                    em.subview(dst, column * rows, [0, column]),
                    bursts=rows,
                    burst_bytes=block,
                    src_gap=(cols - c0) * tile.element_bytes(element_type),
                )
            )

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
        tile_type = as_tile(value)
        e = tile.element_bytes(tile_type.element_type)
        region = self.region(value)
        alignment = max(self.target.memories[str(s)].alignment for s in spaces)
        if region.pitch == 1:
            region = Region(1, region.rows, region.rows)
        row_bytes = round_up(region.cols * e, alignment)
        # An l1 tile moved from ub was copied in whole blocks: its rows are defined.
        copied = isinstance(value.owner, tile.MoveOp) and (
            as_tile(value.owner.source).memory_space == MemorySpace.UB
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


class FillStrategy(NoScratch):
    """`tile.fill`: vdup over the valid region (8-bit values as byte pairs).

    `fill`: `vdup` of the valid region (and of the pad elsewhere); 8-bit tiles:
    `vdup` of the byte twice (an i16 pattern; for a scalar known at run time
    `arith.extui`, `arith.muli` by 257) over a halfword view of the buffer
    """

    ops = (tile.FillOp,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.FillOp)
        self.check_vector_shape(op, op.result, bytes_ok=True)
        self._fill(op, em, buffer)

    def _fill(self, op: tile.FillOp, em: Emitter, buffer: BufferOf) -> None:
        tile_type = as_tile(op.result)
        dst = buffer(op.result)
        if tile_type.pad_value is not None and not self.fully_valid(op.result):
            fill_all(self, em, dst, tile_type, tile_type.pad_value)
        region = self.region(op.result)
        if tile.element_bytes(tile_type.element_type) > 1:
            em.vector(dup(op.value), [region.lanes(dst)], region.rows, 0, region.cols)
            return
        # vdup writes 16/32-bit elements: the byte twice, over halfwords.
        halves = em.alias(dst, i16)
        pattern = byte_pattern(em, op.value)
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


class IotaStrategy(NoScratch):
    """`tile.iota`: the column positions of row 0 (`fill_offsets`: a lane at a
    time over its first block, then doubling), copied to the other rows.

    `iota`: `vdup` per lane of the first 32-byte block, `vadds` doubling the
    filled lanes, a `vcopy` of row 0 per further row
    """

    ops = (tile.IotaOp,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.IotaOp)
        self.check_vector_shape(op, op.result)
        region = self.region(op.result)
        dst = buffer(op.result)
        fill_offsets(em, dst, region.cols, 1)
        if region.rows > 1:
            em.vector(
                unary(hw.VCopyOp),
                [
                    Lanes(dst, Kind.ROW_VECTOR),
                    Lanes(dst, Kind.FULL, region.pitch, region.pitch),
                ],
                region.rows - 1,
                0,
                region.cols,
            )


class PadStrategy(NoScratch):
    """`tile.pad`: the pad value beyond the valid region, in place.

    `pad`: `vcopy` (unless in place), `vdup` of the pad outside the valid region
    """

    ops = (tile.PadOp,)

    def inplace(self, op: Operation) -> tuple[int, ...]:
        return (0,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.PadOp)
        self.check_vector_shape(op, op.result)
        self._pad(op, em, buffer)

    def _pad(self, op: tile.PadOp, em: Emitter, buffer: BufferOf) -> None:
        tile_type = as_tile(op.result)
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
