"""Transposes, and the gathers that move elements across a tile's rows.

`vgather` writes lane l of its destination from byte `offsets[l]` of its
source: a transpose gathers each result row from a column of the source, with
a table of byte offsets that only depends on the column's position in its
32-byte block (`gather_tables`). Integer row reductions transpose their folded
rows the same way (`reductions`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import f16, i32
from xdsl.ir import Attribute, Operation, SSAValue

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace
from pypto_mlir.passes.hw_isel.emitter import (
    BufferOf,
    Emitter,
    Kind,
    Lanes,
    Region,
    as_tile,
    cast,
    copy_flat,
    fill_offsets,
    lane_mask,
    matrix_shape,
    round_up,
    scalar_op,
)
from pypto_mlir.passes.hw_isel.strategy import IselContext, Term, Terms, TileOpStrategy


def transpose_copies(op: tile.TransposeOp) -> bool:
    """Whether the transpose is a copy: a row `[1, N]` and a column `[N, 1]`
    are both N contiguous elements."""
    return 1 in matrix_shape(as_tile(op.source))


def gather_tables(
    isel: IselContext, element_type: Attribute, used: int
) -> tuple[int, int, list[hw.BufferType]]:
    """Lanes of a gather into a transpose's result, the rows of its offset
    table (one per element of a 32-byte block of the source, or a single row
    rebuilt for every result row when that table would take more than 1/16 of
    UB) and the scratch buffers: the table, then for a one-row table the row
    rebuilt. `used` lanes (the result's valid columns) are filled."""
    ub = str(MemorySpace.UB)
    lanes = isel.lanes_for(element_type)
    used = min(used, lanes)
    rows = isel.per_block(element_type)
    entries = (rows - 1) * lanes + used
    size = isel.target.memories[ub].size
    assert size is not None
    if entries * tile.element_bytes(i32) > size // 16:
        rows, entries = 1, used
    entries = round_up(entries, isel.per_block(i32))
    types = [hw.BufferType([entries], i32, ub)]
    if rows == 1:
        types.append(hw.BufferType([entries], i32, ub))
    return lanes, rows, types


def gather_table_term(
    isel: IselContext, terms: Terms, value: SSAValue, element_type: Attribute
) -> Term:
    """A bound of `gather_tables`' scratch for a gather of `element_type`."""
    types = gather_tables(isel, element_type, isel.lanes_for(element_type))[2]
    return terms.constant(value, sum(t.byte_size() for t in types))


def gather_transpose(
    isel: IselContext,
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
    one-row table, `offsets_scratch[0]`) the scratch of `gather_tables`."""
    e = tile.element_bytes(element_type)
    lanes, table_rows, _ = gather_tables(isel, element_type, region.cols)
    per_block = isel.per_block(element_type)
    used = min(lanes, region.cols)
    fill_offsets(em, table, used, pitch * e)
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
    dst_stride = region.pitch * e // isel.block
    for column in range(0, region.cols, lanes):
        mask = lane_mask(0, min(lanes, region.cols - column), lanes)
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


class TransposeStrategy(TileOpStrategy):
    """`tile.transpose`: a gather per result row (8-bit elements through f16).

    `transpose`: of a row `[1, N]` or a column `[N, 1]`: `vcopy` (both are N
    contiguous elements); else `vgather`: result row `j` reads bytes `(l * C + j) *
    e` of the source (C its row pitch), from a source subview at the 32-byte block
    of column `j`; the offsets are a table of one row per element of a block, built
    by `vdup` on single lanes and doubling `vadds` (one row at a time when the table
    would exceed 1/16 of UB), for the lanes the result's valid columns use. 8-bit
    tiles (vgather moves 16/32-bit elements): the valid rows converted to f16
    (exact), transposed, converted back
    """

    ops = (tile.TransposeOp,)

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        assert isinstance(op, tile.TransposeOp)
        return self._transpose_scratch(op)

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        assert isinstance(op, tile.TransposeOp)
        element_type = as_tile(op.result).element_type
        found: list[Term] = []
        if tile.element_bytes(element_type) == 1:
            element_type = f16
            found = [terms.term(op.source, 2), terms.term(op.result, 2)]
        if transpose_copies(op):
            return found
        return [*found, gather_table_term(self, terms, op.result, element_type)]

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.TransposeOp)
        self.check_vector_shape(op, op.result, bytes_ok=True)
        self._transpose(op, em, buffer, scratch)

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
        source = as_tile(op.source)
        element_type = source.element_type
        src, dst = buffer(op.source), buffer(op.result)
        _, pitch = matrix_shape(source)
        region = self.region(op.result)  # rows = source columns, cols = source rows
        if tile.element_bytes(element_type) == 1:
            self._transpose_bytes(op, em, src, dst, scratch)
            return
        if transpose_copies(op):
            copy_flat(em, src, dst, region.rows * region.cols)
            return
        gather_transpose(
            self, em, src, pitch, dst, region, element_type, scratch[0], scratch[1:]
        )

    def _transpose_scratch(self, op: tile.TransposeOp) -> list[hw.BufferType]:
        """The gather's offset tables; for 8-bit elements, which the vector unit
        moves only by conversion, f16 copies of the source and the result."""
        ub = str(MemorySpace.UB)
        element_type = as_tile(op.result).element_type
        types: list[hw.BufferType] = []
        if tile.element_bytes(element_type) == 1:
            element_type = f16
            for value in (op.source, op.result):
                region = self.region(value)
                types.append(hw.BufferType([region.rows * region.pitch], f16, ub))
        if transpose_copies(op):
            return types[:1]
        return types + gather_tables(self, element_type, self.region(op.result).cols)[2]

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
        if not transpose_copies(op):
            transposed = scratch[1]
            gather_transpose(
                self,
                em,
                wide,
                source.pitch,
                transposed,
                result,
                f16,
                scratch[2],
                scratch[3:],
            )
            wide = transposed
        em.vector(
            cast(hw.RoundMode.TRUNC),
            [result.lanes(wide), result.lanes(dst)],
            result.rows,
            0,
            result.cols,
        )
