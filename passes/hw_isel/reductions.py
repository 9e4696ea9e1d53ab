"""Reductions along a tile's rows or columns (`tile.reduce_sum/max/min`).

Float rows reduce with `vreduce_*` (a value per repeat), long rows in levels or
column chunks; columns combine rows pairwise with the elementwise op of the
reduction; integer rows (vreduce is float-only) fold into one 32-byte block,
are transposed by a gather and combined pairwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from itertools import pairwise

from xdsl.ir import Attribute, Operation, SSAValue

from pypto_mlir.diagnostics import emit_remark, op_error
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace
from pypto_mlir.passes.hw_isel.emitter import (
    BufferOf,
    Emitter,
    Kind,
    Lanes,
    Region,
    as_buffer,
    as_tile,
    binary,
    copy_flat,
    lane_mask,
    matrix_shape,
    matrix_valid,
    round_up,
    unary,
)
from pypto_mlir.passes.hw_isel.gather import (
    gather_table_term,
    gather_tables,
    gather_transpose,
)
from pypto_mlir.passes.hw_isel.strategy import Term, Terms, TileOpStrategy
from pypto_mlir.targets import cost

REDUCE_PRIMITIVES: dict[type[tile.TileReduceOp], type[hw.VectorReduceOp]] = {
    tile.ReduceSumOp: hw.VReduceSumOp,
    tile.ReduceMaxOp: hw.VReduceMaxOp,
    tile.ReduceMinOp: hw.VReduceMinOp,
}

BLOCK_REDUCE_PRIMITIVES: dict[type[tile.TileReduceOp], type[hw.VectorBlockReduceOp]] = {
    tile.ReduceMaxOp: hw.VBlockReduceMaxOp,
    tile.ReduceMinOp: hw.VBlockReduceMinOp,
}
"""The reductions whose rows of whole 32-byte blocks reduce 8 rows a repeat
(`ReduceStrategy._block_levels`): exact, in any order."""

REDUCE_COMBINE: dict[type[tile.TileReduceOp], type[hw.VectorBinaryOp]] = {
    tile.ReduceSumOp: hw.VAddOp,
    tile.ReduceMaxOp: hw.VMaxOp,
    tile.ReduceMinOp: hw.VMinOp,
}
"""The elementwise op that combines two partial results of a reduction."""


class ReduceStrategy(TileOpStrategy):
    """Reductions: partial results in scratch, combined into the result.

    `reduce_*` along rows: `vreduce_*` with one repeat per row (`rep_stride` = row
    pitch, mask = valid columns); rows longer than a repeat, whichever issues fewer
    instructions (each pays the vector start-up): by row, a `vreduce` of each row's
    whole repeats into a row of partials, one `vreduce` of the rows of partials, and
    for a partial last repeat one more `vreduce` over the rows and a
    `vadd`/`vmax`/`vmin` (8 rows of 1024 f32: 9 instructions), or by column chunk,
    one `vreduce` per chunk into a scratch, then `vadd`/`vmax`/`vmin` of the partial
    results (test/filecheck/passes/tile_to_hw/row-reductions.mlir). A single row:
    `vreduce` of every repeat into a scratch, level by level until one repeat is
    left, the partial last repeat of each level in a slot of its own, combined at
    the end. f16/f32 only (vreduce is float-only). Row maxima and minima of
    rows of one 32-byte block, or of 8 such blocks of f32 (64 columns), with
    `block_reduce` (tile-to-hw's option, default on): `vblock_reduce_*` (8
    results a repeat), one level, or two through a scratch of 8 partials a
    row, instead of a repeat per row (a remark gives both estimates;
    test/filecheck/passes/tile_to_hw/block-reductions.mlir); rows of two
    blocks combine them first (a `vmax`/`vmin` of the even and odd blocks)

    `reduce_*` along columns: pairwise over rows: row `i` combines with row `i +
    ceil(rows / 2)` until one row is left (any vector type)
    """

    ops = (tile.ReduceSumOp, tile.ReduceMaxOp, tile.ReduceMinOp)

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        assert isinstance(op, tile.TileReduceOp)
        return self._reduce_scratch(op)

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        assert isinstance(op, tile.TileReduceOp)

        def tables(value: SSAValue, element_type: Attribute) -> Term:
            return gather_table_term(self, terms, value, element_type)

        return self._reduce_terms(op, terms.term, terms.constant, tables)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.TileReduceOp)
        self.check_vector_shape(op, op.source)
        rank = as_tile(op.source).get_num_dims()
        if rank > 2 and op.axis_index != rank - 1:
            raise op_error(op, f"a {rank}-D tile reduces along its last dim only")
        self._reduce(op, em, buffer, scratch)

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
        element_type = as_tile(source).element_type
        e = tile.element_bytes(element_type)
        lanes, per_block = self.lanes_for(element_type), self.per_block(element_type)
        rows, cols = matrix_shape(as_tile(source))
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
        levels = self._block_levels(op, rows, cols, cols)
        if levels in ("blocks", "pairs"):
            # a block a row: the 8 partials of a row of f32 (a repeat), or
            # the larger of a row's two blocks
            return [term(source, Fraction(e, cols // per_block))]
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

    def _reduce_scratch(self, op: tile.TileReduceOp) -> list[hw.BufferType]:
        source = as_tile(op.source)
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
        if self._block_levels(op, rows, cols, shape_cols) in ("blocks", "pairs"):
            return [hw.BufferType([rows * per_block], element_type, ub)]
        if along_rows and shape_cols > 1 and rows > 1 and cols > lanes:
            chunks = -(-cols // lanes)
            if self._reduces_by_row(rows, cols, element_type):
                full = cols // lanes
                size = rows * round_up(full, per_block) + round_up(rows, per_block)
            else:
                size = chunks * round_up(rows, per_block)
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
        return op.axis_index == as_tile(op.source).get_num_dims() - 1

    def _reduce(
        self,
        op: tile.TileReduceOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
    ) -> None:
        source = as_tile(op.source)
        element_type = source.element_type
        src, dst = buffer(op.source), buffer(op.result)
        rows, cols = matrix_valid(source, self.valid[op.source])
        shape_rows, shape_cols = matrix_shape(source)
        combine = binary(REDUCE_COMBINE[type(op)])
        integer = not tile.is_float(element_type)
        if self._reduces_rows(op):
            if shape_cols == 1:
                copy_flat(em, src, dst, rows)
            elif integer:
                self._reduce_int_rows(op, em, src, dst, rows, cols, shape_cols, scratch)
            elif rows == 1:
                self._reduce_flat(op, em, src, dst, cols, scratch)
            else:
                self._reduce_rows(op, em, src, dst, rows, cols, shape_cols, scratch)
            return
        if shape_rows == 1:
            copy_flat(em, src, dst, cols)
        elif shape_cols == 1 and integer:
            self._reduce_int_rows(op, em, src, dst, 1, rows, rows, scratch)
        elif shape_cols == 1:
            self._reduce_flat(op, em, src, dst, rows, scratch)
        elif rows == 1:
            copy_flat(em, src, dst, cols)
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

    def _require_vreduce(self, op: tile.TileReduceOp) -> type[hw.VectorReduceOp]:
        element_type = as_tile(op.source).element_type
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
            types.append(hw.BufferType([round_up(whole, per_block)], element_type, ub))
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
        element_type = as_buffer(src).element_type
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
        em.emit(vreduce(src, dst, mask=lane_mask(0, n, lanes)))
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
            widths.append(round_up(-(-widths[-1] // 2), per_block))
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
            hw.BufferType([widths[-1] * round_up(rows, per_block)], element_type, ub)
        )
        return types + gather_tables(self, element_type, rows)[2]

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
        element_type = as_buffer(src).element_type
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
        t_pitch = round_up(rows, per_block)
        gather_transpose(
            self,
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
            copy_flat(em, transposed, dst, rows)
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
        element_type = as_buffer(src).element_type
        lanes = self.lanes_for(element_type)
        e = tile.element_bytes(element_type)
        rep_stride = [pitch * e // self.block]

        # Row chunks start on a block of the packed results.
        most = em.max_repeat - em.max_repeat % self.per_block(element_type)

        def reduce_chunk(column: int, out: SSAValue) -> None:
            mask = lane_mask(0, min(lanes, cols - column), lanes)
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

        levels = self._block_levels(op, rows, cols, pitch)
        if levels:
            self._reduce_by_blocks(op, em, src, dst, rows, levels, scratch)
            return
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
            partial_pitch = round_up(full, self.per_block(element_type))
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
                    mask=lane_mask(0, full, lanes),
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
        stride = round_up(rows, self.per_block(element_type))
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

    def _block_levels(
        self, op: tile.TileReduceOp, rows: int, cols: int, pitch: int
    ) -> str:
        """How `vblock_reduce_*` reduces `rows` rows of `cols` elements (row
        pitch `pitch`) along the rows, 8 rows a repeat: `"block"` rows of one
        32-byte block; `"pairs"` rows of two blocks, combined into one first
        (`vmax`/`vmin` of the even and the odd blocks); `"blocks"` rows of one
        repeat whose 8 block partials make a block (f32); `""`: not by blocks
        (`block_reduce` off, a sum - it would round in another order -, other
        rows, or not a multiple of 8 rows within one instruction)."""
        element_type = as_tile(op.source).element_type
        if not (
            self.block_reduce
            and type(op) in BLOCK_REDUCE_PRIMITIVES
            and self._reduces_rows(op)
            and tile.is_float(element_type)
            and cols == pitch
            and rows % self.blocks_per_repeat == 0
        ):
            return ""
        per_block = self.per_block(element_type)
        most = self.target.vector.max_repeat
        if cols == per_block and rows // self.blocks_per_repeat <= most:
            return "block"
        if cols == 2 * per_block and rows // self.blocks_per_repeat <= most:
            return "pairs"
        if cols == self.lanes_for(element_type) == per_block**2 and rows <= most:
            return "blocks"
        return ""

    def _reduce_by_blocks(
        self,
        op: tile.TileReduceOp,
        em: Emitter,
        src: SSAValue,
        dst: SSAValue,
        rows: int,
        levels: str,
        scratch: list[SSAValue],
    ) -> None:
        """Rows of whole blocks reduced 8 rows a repeat (`_block_levels`): a
        row of 8 blocks to its 8 block partials in a scratch, then each row of
        partials (one block) to its value."""
        reduce = BLOCK_REDUCE_PRIMITIVES[type(op)]
        element_type = as_buffer(src).element_type
        eight = self.blocks_per_repeat
        steps = [(reduce.name, rows // eight)]
        if levels == "blocks":
            em.emit(reduce(src, scratch[0], repeat=rows))
            src = scratch[0]
            steps.append((reduce.name, rows))
        elif levels == "pairs":
            # block 2r with block 2r + 1 of each row, 8 rows a repeat
            combine = REDUCE_COMBINE[type(op)]
            em.emit(
                combine(
                    src,
                    em.subview(src, self.per_block(element_type)),
                    scratch[0],
                    repeat=rows // eight,
                    blk_stride=[2, 2, 1],
                    rep_stride=[2 * eight, 2 * eight, eight],
                )
            )
            src = scratch[0]
            steps.append((combine.name, rows // eight))
        em.emit(reduce(src, dst, repeat=rows // eight))
        name = str(element_type)
        by_blocks = sum(
            cost.vector_cycles(self.target, cost.vector_cost_key(op_name), n, name)
            + cost.vector_head_cycles(self.target, cost.vector_cost_key(op_name), name)
            for op_name, n in steps
        )
        per_row = cost.vector_cost_key(REDUCE_PRIMITIVES[type(op)].name)
        by_rows = cost.vector_cycles(
            self.target, per_row, rows, name
        ) + cost.vector_head_cycles(self.target, per_row, name)
        names = " then ".join(
            op_name.removeprefix("ascend_hw.") for op_name, _ in reversed(steps)
        )
        emit_remark(
            op,
            f"tile-to-hw: {rows} rows of {as_tile(op.source).get_shape()[-1]} "
            f"{name} reduced by 32-byte blocks, 8 rows a repeat ({names}): "
            f"~{by_blocks} cycles instead of ~{by_rows} by a repeat per row "
            "(block-reduce=false)",
        )
