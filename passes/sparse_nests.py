"""The loop nests of the sparse tv ops over their GM buffers (docs/sparse.md).

Below `tv` a sparse tensor is three GM memrefs: row offsets
`memref<(R/bm + 1) x index>`, column indices `memref<? x index>` and values
`memref<? x T>` (`memref<? x bm x bn x T>` for block-CSR). The scalar unit reads
offsets and indices with `memref.load`; they bound `scf.for` loops at run time
and place the windows of `tile.load` / `tile.store` (a row gather is
`tile.load %b[%col, %n0]`). Every nest loops over (block) rows outermost, a
static loop that tile-to-hw splits over the cores.

- CSR `spmm`/`spmv` (and block-CSR without the cube): per row and column tile,
  an f32 accumulator in UB; per stored entry, the value (a 1x1 tile) times the
  gathered row of `b`, added in entry order: the reference's order, so the
  result is exact.
- Block-CSR `spmm` on the cube: per block row and column tile, the stored
  blocks (nz in L1, then L0A) times the matching `bn` rows of `b` (L0B),
  accumulated in L0C; an empty block row stores zeros and costs no cube work.
- `to_dense`: per (block) row, zero tiles then the stored blocks scattered.
- `gather`: per index, the source row copied by column tiles; runs of
  consecutive indices (compared on the scalar unit) as one multi-row DMA
  (`SparseNest.runs`, shared with every nest that gathers rows by index).
- `sparse_softmax`: per block row, three passes over its stored blocks, each
  a whole `bm x bn` tile; CSR by windows of entries where exact.
- `sddmm`: CSR per stored entry (a dot product); block-CSR on the cube.

Loops over a row's stored entries are marked `ROW_ENTRIES_ATTR`, so that
tile-to-hw splits their (block) rows over the cores (docs/sparse.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    UnitAttr,
    f32,
)
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType

from .index_range import ROW_ENTRIES_ATTR
from .located_builder import LocatedBuilder
from .nest_builder import (
    LoopBuilder,
    Valid,
    compute_type,
    i64_array_attr,
    reassociation_attr,
)


@dataclass(frozen=True)
class SparseBuffers:
    """The GM memrefs of a sparse tensor and its block shape ((1, 1) for CSR)."""

    offsets: SSAValue
    indices: SSAValue
    values: SSAValue
    shape: tuple[int, int]
    block: tuple[int, int]

    @property
    def element_type(self) -> Attribute:
        return cast(MemRefType[Attribute], self.values.type).get_element_type()


def _memref_shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(cast(MemRefType[Attribute], value.type).get_shape())


@dataclass(frozen=True)
class Column:
    """A column tile: its first column, valid and physical extents."""

    start: Valid
    valid: Valid
    physical: int

    def tile_type(
        self,
        element_type: Attribute,
        rows: int = 1,
        space: MemorySpace = MemorySpace.UB,
        layout: str | None = None,
    ) -> TileType:
        """A `rows x physical` tile whose valid columns are this tile's."""
        valid = self.valid if isinstance(self.valid, int) else DYNAMIC_INDEX
        return TileType(
            [rows, self.physical],
            element_type,
            space,
            valid=[rows, valid],
            layout=layout,
        )


RowEpilogue = Callable[["SparseNest", InsertPoint, SSAValue, Valid, Column], SSAValue]
"""Element-wise ops on a product's row tile in UB before its one store
(passes/sparse_epilogue.py): (nest, where, tile, its first row, its column
tile) -> the tile to store."""


RunBody = Callable[[InsertPoint, Valid, SSAValue, list[SSAValue]], list[SSAValue]]
"""A group of `SparseNest.runs`: (where, its first position, the index read
there, carried) -> carried."""


def _last_loop(at: InsertPoint) -> scf.ForOp:
    """The loop just inserted at `at`."""
    op = at.insert_before.prev_op if at.insert_before else at.block.last_op
    assert isinstance(op, scf.ForOp)
    return op


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


class SparseNest(LoopBuilder):
    """Builds one sparse op's nest at the builder's insertion point."""

    epilogue: RowEpilogue | None = None
    """Applied to each row tile of an spmm's result before its store."""

    def __init__(self, builder: LocatedBuilder, cols: int, unit: int) -> None:
        super().__init__(builder)
        self.cols = cols
        """Columns of a dense row tile (UB; L0B/L0C on the cube): a multiple of
        `unit`."""
        self.unit = unit
        """The physical columns of a tile are a multiple of this (alignment)."""

    # Scalars -----------------------------------------------------------------------

    def read_index(
        self, at: InsertPoint, buffer: SSAValue, *position: Valid
    ) -> SSAValue:
        """`buffer[position]` read by the scalar unit, as an index."""
        indices = [self.index_value(p) for p in position]
        value = self.value(at, memref.LoadOp.get(buffer, indices))
        if isinstance(value.type, IndexType):
            return value
        return self.value(at, arith.IndexCastOp(value, IndexType()))

    def consecutive(self, at: InsertPoint, rows: Sequence[SSAValue]) -> SSAValue:
        """Whether `rows[t] == rows[0] + t` for every t (scalar compares): a
        run of consecutive indices, moved as one multi-row DMA."""
        assert len(rows) > 1
        found: SSAValue | None = None
        for t in range(1, len(rows)):
            step = self.value(
                at,
                arith.CmpiOp(rows[t], self.index_value(self.add(at, rows[0], t)), "eq"),
            )
            found = step if found is None else self.value(at, arith.AndIOp(found, step))
        assert found is not None
        return found

    def runs(
        self,
        at: InsertPoint,
        lo: Valid,
        hi: Valid,
        run: int,
        read: Callable[[InsertPoint, Valid], SSAValue],
        inits: list[SSAValue],
        whole: RunBody,
        single: RunBody,
    ) -> list[SSAValue]:
        """The run detector of every nest that gathers rows by index: the
        positions `[lo, hi)` in order, carrying `inits`, in groups of `run`
        from `lo`. A group whose indices (`read(at, p)`, on the scalar unit)
        are consecutive (`consecutive`) goes to `whole(at, p, first row,
        carried)`, which moves its rows as one `run`-row DMA; the positions of
        any other group and the last `(hi - lo) mod run` go one by one to
        `single(at, p, row, carried)`. With carried values the choice is two
        loops of one trip or none (tile-to-hw lowers loops carrying tiles, not
        branches yielding them), else an `scf.if`."""

        def one(at: InsertPoint, p: Valid, acc: list[SSAValue]) -> list[SSAValue]:
            return single(at, p, read(at, p), acc)

        if isinstance(lo, int) and isinstance(hi, int):
            if run <= 1 or hi - lo < run:
                return self.loop(at, lo, hi, 1, inits, one)
            end: Valid = hi - (hi - lo) % run
        elif run <= 1:
            return self.loop(at, lo, hi, 1, inits, one)
        else:
            count = self.value(
                at, arith.SubiOp(self.index_value(hi), self.index_value(lo))
            )
            whole_count = self.value(
                at,
                arith.MuliOp(
                    self.value(at, arith.DivUIOp(count, self.constant(run))),
                    self.constant(run),
                ),
            )
            end = self.value(at, arith.AddiOp(self.index_value(lo), whole_count))

        def group(at: InsertPoint, p: Valid, acc: list[SSAValue]) -> list[SSAValue]:
            positions = [self.add(at, p, t) for t in range(run)]
            rows = [read(at, q) for q in positions]
            consecutive = self.consecutive(at, rows)
            if not acc:
                runs, singles = Block(), Block()
                whole(InsertPoint.at_end(runs), p, rows[0], [])
                self.insert(InsertPoint.at_end(runs), scf.YieldOp())
                for row, q in zip(rows, positions, strict=True):
                    single(InsertPoint.at_end(singles), q, row, [])
                self.insert(InsertPoint.at_end(singles), scf.YieldOp())
                self.insert(at, scf.IfOp(consecutive, [], [runs], [singles]))
                return []
            trips = self.value(
                at, arith.SelectOp(consecutive, self.constant(1), self.constant(0))
            )
            carried = self.loop(
                at, 0, trips, 1, acc, lambda at, _, c: whole(at, p, rows[0], c)
            )
            rest = self.value(
                at, arith.SelectOp(consecutive, self.constant(0), self.constant(run))
            )

            def each(at: InsertPoint, t: Valid, c: list[SSAValue]) -> list[SSAValue]:
                q = self.value(
                    at, arith.AddiOp(self.index_value(p), self.index_value(t))
                )
                return one(at, q, c)

            return self.loop(at, 0, rest, 1, carried, each)

        carried = self.loop(at, lo, end, run, inits, group)
        return self.loop(at, end, hi, 1, carried, one)

    def row_range(
        self, at: InsertPoint, offsets: SSAValue, row: Valid
    ) -> tuple[SSAValue, SSAValue]:
        """The first and one-past-last stored entry of (block) row `row`."""
        start = self.read_index(at, offsets, row)
        end = self.read_index(at, offsets, self.add(at, row, 1))
        return start, end

    def scaled(
        self, at: InsertPoint, value: Valid, factor: int, plus: Valid = 0
    ) -> Valid:
        """`value * factor + plus` (index arithmetic)."""
        if isinstance(value, int) and isinstance(plus, int):
            return value * factor + plus
        product: Valid = value
        if factor != 1:
            product = self.value(
                at, arith.MuliOp(self.index_value(value), self.constant(factor))
            )
        if isinstance(plus, int) and plus == 0:
            return product
        return self.value(
            at, arith.AddiOp(self.index_value(product), self.index_value(plus))
        )

    # Views -------------------------------------------------------------------------

    def expand(
        self, buffer: SSAValue, groups: list[list[int]], shape: Sequence[Valid]
    ) -> SSAValue:
        """`memref.expand_shape` of a contiguous GM buffer (at the nest's top).
        A leading unit dim before a dynamic one gets the static stride of the
        rest (`strided<[n, 1]>` would be `?`; a DMA needs static strides, and
        the stride of a unit dim is never multiplied by anything but 0)."""
        source = cast(MemRefType[Attribute], buffer.type)
        static = [s if isinstance(s, int) else DYNAMIC_INDEX for s in shape]
        layout: Attribute = NoneAttr()
        if len(static) == 2 and static[0] == 1 and static[1] == DYNAMIC_INDEX:
            layout = StridedLayoutAttr([1, 1])
        op = memref.ExpandShapeOp.create(
            operands=[buffer, *[s for s in shape if isinstance(s, SSAValue)]],
            result_types=[MemRefType(source.get_element_type(), static, layout)],
            properties={
                "reassociation": reassociation_attr(groups),
                "static_output_shape": i64_array_attr(static),
            },
        )
        return self.value(self.top, op)

    def block_values(self, a: SparseBuffers) -> SSAValue:
        """The values as `nnz x bm x bn` (CSR's `memref<?xT>` gets two unit dims)."""
        if a.block != (1, 1):
            return a.values
        nnz = self.value(self.top, memref.DimOp(a.values, self.constant(0)))
        return self.expand(a.values, [[0, 1, 2]], [nnz, 1, 1])

    def as_matrix(self, buffer: SSAValue) -> SSAValue:
        """A vector `memref<K x T>` as `K x 1` (spmv is spmm with one column)."""
        shape = _memref_shape(buffer)
        if len(shape) == 2:
            return buffer
        return self.expand(buffer, [[0, 1]], [shape[0], 1])

    # Column tiles ------------------------------------------------------------------

    def column_tiles(
        self, at: InsertPoint, n: int, body: Callable[[InsertPoint, Column], None]
    ) -> None:
        """Call `body` for each column tile of `n` columns."""
        step = min(self.cols, n)
        physical = 1 if n == 1 else _round_up(step, self.unit)

        def level(
            inner: InsertPoint, n0: Valid, iters: list[SSAValue]
        ) -> list[SSAValue]:
            body(inner, Column(n0, self.tail(inner, n, n0, step, True), physical))
            return []

        self.loop(at, 0, n, step, [], level)

    def load(
        self,
        at: InsertPoint,
        source: SSAValue,
        indices: Sequence[Valid],
        tile_type: TileType,
        valid: Sequence[Valid] = (),
    ) -> SSAValue:
        dynamic = [v for v in valid if isinstance(v, SSAValue)]
        return self.value(
            at,
            tile.LoadOp(
                source, [self.index_value(i) for i in indices], tile_type, dynamic
            ),
        )

    def store(
        self, at: InsertPoint, value: SSAValue, dest: SSAValue, indices: Sequence[Valid]
    ) -> None:
        self.insert(
            at, tile.StoreOp(value, dest, [self.index_value(i) for i in indices])
        )

    def core_share(
        self, at: InsertPoint, count: SSAValue, c: Valid, cores: int, plus: int
    ) -> SSAValue:
        """`(c + plus) * count / cores`: where core `c`'s share of `count` items
        begins (`plus` 0) or ends (1); the shares differ by one at most."""
        times = self.value(
            at, arith.MuliOp(self.index_value(self.add(at, c, plus)), count)
        )
        return self.value(at, arith.DivUIOp(times, self.constant(cores)))

    def store_result(
        self,
        at: InsertPoint,
        total: SSAValue,
        element_type: Attribute,
        out: SSAValue,
        row: Valid,
        column: Column,
    ) -> None:
        """The end of a product's rows: `total` (f32) cast to the result's
        `element_type`, the fused element-wise epilogue applied
        (passes/sparse_epilogue.py), stored at `out[row, column.start]`."""
        result = self.cast_to(at, total, element_type)
        if self.epilogue is not None:
            result = self.epilogue(self, at, result, row, column)
        self.store(at, result, out, [row, column.start])

    def to_f32(self, at: InsertPoint, value: SSAValue) -> SSAValue:
        if cast(TileType, value.type).element_type == f32:
            return value
        return self.value(at, tile.CastOp(value, f32))

    def cast_to(
        self, at: InsertPoint, value: SSAValue, element_type: Attribute
    ) -> SSAValue:
        if cast(TileType, value.type).element_type == element_type:
            return value
        return self.value(at, tile.CastOp(value, element_type))

    def zeros(
        self, at: InsertPoint, tile_type: TileType, valid: Sequence[Valid]
    ) -> SSAValue:
        zero = self.constant(0.0, tile_type.element_type)
        dynamic = [v for v in valid if isinstance(v, SSAValue)]
        return self.value(at, tile.FillOp(zero, tile_type, dynamic))

    def blocked_rows(
        self,
        at: InsertPoint,
        start: Valid,
        end: Valid,
        rows: int,
        column: Column,
        row: Callable[[InsertPoint, Valid], SSAValue],
        store: Callable[[InsertPoint, SSAValue, Valid], None],
    ) -> None:
        """Rows `start .. end`, each one's f32 tile of `column` made by `row`,
        stored by `store(at, tile, first row)` `rows` at a time: per full block
        of `rows` consecutive rows, the rows (`rows` copies of `row`'s ops) are
        written into a ub block tile at their rows in it (`tile.insert_rows`)
        and the block is stored once; the rows after the last full block, and every row when `rows` is
        1, one at a time. One DMA per block, not per row: a row's store costs
        about its DMA's start-up (docs/sparse.md, *Row ranges of b*)."""
        if rows <= 1:

            def single(at: InsertPoint, r: Valid, _: list[SSAValue]) -> list[SSAValue]:
                store(at, row(at, r), r)
                return []

            self.loop(at, start, end, 1, [], single)
            return
        count = self.value(
            at, arith.SubiOp(self.index_value(end), self.index_value(start))
        )
        whole = self.value(
            at,
            arith.MuliOp(
                self.value(at, arith.DivUIOp(count, self.constant(rows))),
                self.constant(rows),
            ),
        )
        full = self.value(at, arith.AddiOp(self.index_value(start), whole))

        def block(at: InsertPoint, b: Valid, _: list[SSAValue]) -> list[SSAValue]:
            # the rows written out one after another, not a loop carrying the
            # block: the block loop then carries nothing, so tile-pipeline
            # runs two blocks in flight (each its own block buffer) as it did
            # two rows
            filled = self.zeros(at, column.tile_type(f32, rows), [rows, column.valid])
            for j in range(rows):
                one = row(at, self.scaled(at, b, 1, j))
                filled = self.value(
                    at, tile.InsertRowsOp(one, filled, self.constant(j))
                )
            store(at, filled, b)
            return []

        self.loop(at, start, full, rows, [], block)
        self.blocked_rows(at, full, end, 1, column, row, store)

    # The nests ---------------------------------------------------------------------

    def spmm_rows(self, a: SparseBuffers, b: SSAValue, out: SSAValue) -> None:
        """`out = a @ b` by the vector unit: per row and column tile, an f32
        accumulator; per stored entry, value x gathered row of `b`."""
        b, out = self.as_matrix(b), self.as_matrix(out)
        values = self.block_values(a)
        (bm, bn), element_type = a.block, a.element_type
        n = _memref_shape(b)[1]

        def row(
            at: InsertPoint, br: Valid, i: Valid, start: SSAValue, end: SSAValue
        ) -> None:
            def columns(at: InsertPoint, column: Column) -> None:
                acc = self.zeros(at, column.tile_type(f32), [1, column.valid])

                def entry(
                    at: InsertPoint, j: Valid, accs: list[SSAValue]
                ) -> list[SSAValue]:
                    col = self.read_index(at, a.indices, j)

                    def inner(
                        at: InsertPoint, c: Valid, accs: list[SSAValue]
                    ) -> list[SSAValue]:
                        value = self.load(
                            at,
                            values,
                            [j, i, c],
                            TileType([1, 1], element_type, MemorySpace.UB),
                        )
                        k = self.scaled(at, col, bn, c)
                        gathered = self.load(
                            at,
                            b,
                            [k, column.start],
                            column.tile_type(element_type),
                            [1, column.valid],
                        )
                        product = self.value(
                            at,
                            tile.MulOp(
                                self.to_f32(at, gathered), self.to_f32(at, value)
                            ),
                        )
                        return [self.value(at, tile.AddOp(accs[0], product))]

                    return self.loop(at, 0, bn, 1, accs, inner)

                (total,) = self.loop(at, start, end, 1, [acc], entry)
                row = self.scaled(at, br, bm, i)
                self.store_result(at, total, element_type, out, row, column)

            self.column_tiles(at, n, columns)

        def block_row(at: InsertPoint, br: Valid, _: list[SSAValue]) -> list[SSAValue]:
            start, end = self.row_range(at, a.offsets, br)

            def each(at: InsertPoint, i: Valid, _: list[SSAValue]) -> list[SSAValue]:
                row(at, br, i, start, end)
                return []

            self.loop(at, 0, bm, 1, [], each)
            return []

        self.loop(self.top, 0, a.shape[0] // bm, 1, [], block_row)

    def spmm_cube(self, a: SparseBuffers, b: SSAValue, out: SSAValue) -> None:
        """`out = a @ b` for block-CSR on the cube: per block row and column
        tile, the stored blocks times the matching rows of `b`, accumulated in
        L0C; an empty block row stores a zero tile and issues no cube work."""
        (bm, bn), element_type = a.block, a.element_type
        n = _memref_shape(b)[1]
        block_type = TileType([bm, bn], element_type, MemorySpace.L1, layout="nz")

        def columns(
            at: InsertPoint, column: Column, row0: Valid, start: SSAValue, end: SSAValue
        ) -> None:
            def product(at: InsertPoint, j: Valid, acc: SSAValue | None) -> SSAValue:
                col = self.read_index(at, a.indices, j)
                a1 = self.load(at, a.values, [j, 0, 0], block_type)
                b1 = self.load(
                    at,
                    b,
                    [self.scaled(at, col, bn), column.start],
                    column.tile_type(element_type, bn, MemorySpace.L1, "nz"),
                    [bn, column.valid],
                )
                a0 = self.value(
                    at,
                    tile.MoveOp(
                        a1, block_type.with_(space=MemorySpace.L0A, layout=None)
                    ),
                )
                l0b = column.tile_type(element_type, bn, MemorySpace.L0B)
                b0 = self.value(at, tile.MoveOp(b1, l0b))
                return self.value(at, tile.MatmulOp(a0, b0, acc))

            stored, empty = Block(), Block()
            here = InsertPoint.at_end(stored)
            first = product(here, start, None)

            def rest(at: InsertPoint, j: Valid, accs: list[SSAValue]) -> list[SSAValue]:
                return [product(at, j, accs[0])]

            (total,) = self.loop(here, self.add(here, start, 1), end, 1, [first], rest)
            if self.epilogue is not None:  # in UB (the fixpipe casts), then the ops
                acc = cast(TileType, total.type)
                moved = TileType(
                    acc.get_shape(), element_type, MemorySpace.UB, acc.get_valid()
                )
                total = self.value(here, tile.MoveOp(total, moved))
                total = self.epilogue(self, here, total, row0, column)
            self.store(here, total, out, [row0, column.start])
            self.insert(here, scf.YieldOp())
            here = InsertPoint.at_end(empty)
            zeros = self.zeros(
                here, column.tile_type(element_type, bm), [bm, column.valid]
            )
            if self.epilogue is not None:  # relu(0 + bias) is not 0
                zeros = self.epilogue(self, here, zeros, row0, column)
            self.store(here, zeros, out, [row0, column.start])
            self.insert(here, scf.YieldOp())
            nonempty = self.value(at, arith.CmpiOp(start, end, "slt"))
            self.insert(at, scf.IfOp(nonempty, [], [stored], [empty]))

        def block_row(at: InsertPoint, br: Valid, _: list[SSAValue]) -> list[SSAValue]:
            start, end = self.row_range(at, a.offsets, br)
            row0 = self.scaled(at, br, bm)
            self.column_tiles(
                at, n, lambda at, column: columns(at, column, row0, start, end)
            )
            return []

        self.loop(self.top, 0, a.shape[0] // bm, 1, [], block_row)

    def to_dense(self, a: SparseBuffers, out: SSAValue) -> None:
        """Per (block) row: zero tiles over the whole row, then each stored
        block copied to its place through UB."""
        values = self.block_values(a)
        (bm, bn), element_type = a.block, a.element_type
        physical = 1 if bn == 1 else _round_up(bn, self.unit)
        block_type = TileType(
            [bm, physical], element_type, MemorySpace.UB, valid=[bm, bn]
        )

        def block_row(at: InsertPoint, br: Valid, _: list[SSAValue]) -> list[SSAValue]:
            row0 = self.scaled(at, br, bm)

            def columns(at: InsertPoint, column: Column) -> None:
                zeros = self.zeros(
                    at, column.tile_type(element_type, bm), [bm, column.valid]
                )
                self.store(at, zeros, out, [row0, column.start])

            self.column_tiles(at, a.shape[1], columns)
            start, end = self.row_range(at, a.offsets, br)

            def entry(at: InsertPoint, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
                col = self.read_index(at, a.indices, j)
                block = self.load(at, values, [j, 0, 0], block_type)
                self.store(at, block, out, [row0, self.scaled(at, col, bn)])
                return []

            self.loop(at, start, end, 1, [], entry)
            return []

        self.loop(self.top, 0, a.shape[0] // bm, 1, [], block_row)

    def gather(
        self, source: SSAValue, indices: SSAValue, out: SSAValue, run: int = 1
    ) -> None:
        """`out[p...] = source[indices[p...]]`: per index, the scalar unit reads
        the row and the row is copied by column tiles through UB. With `run` >
        1, the last index dim goes in groups of `run`: the scalar unit compares
        `idx[p + t] == idx[p] + t`, and a run of consecutive rows moves as one
        `run`-row tile (one DMA each way, a static size); a group that is not a
        run, and the last `n mod run` indices, move row by row."""
        index_shape = _memref_shape(indices)
        element_type = cast(MemRefType[Attribute], source.type).get_element_type()
        n = _memref_shape(source)[1]

        def copy(at: InsertPoint, row: Valid, position: list[Valid], rows: int) -> None:
            def columns(at: InsertPoint, column: Column) -> None:
                tile_type = column.tile_type(element_type, rows)
                copied = self.load(
                    at, source, [row, column.start], tile_type, [rows, column.valid]
                )
                self.store(at, copied, out, [*position, column.start])

            self.column_tiles(at, n, columns)

        def emit(at: InsertPoint, position: list[Valid]) -> None:
            depth = len(position)
            if depth == len(index_shape):
                copy(at, self.read_index(at, indices, *position), position, 1)
                return
            extent = index_shape[depth]
            if depth == len(index_shape) - 1:
                # the last dim: runs of consecutive indices as one DMA
                def read(at: InsertPoint, p: Valid) -> SSAValue:
                    return self.read_index(at, indices, *position, p)

                def rows_of(count: int) -> RunBody:
                    def body(
                        at: InsertPoint, p: Valid, row: SSAValue, _: list[SSAValue]
                    ) -> list[SSAValue]:
                        copy(at, row, [*position, p], count)
                        return []

                    return body

                self.runs(at, 0, extent, run, read, [], rows_of(run), rows_of(1))
                return

            def body(at: InsertPoint, iv: Valid, _: list[SSAValue]) -> list[SSAValue]:
                emit(at, [*position, iv])
                return []

            self.loop(at, 0, extent, 1, [], body)

        emit(self.top, [])

    def sparse_softmax(self, a: SparseBuffers, out: SSAValue) -> None:
        """Per block row, three passes over its stored blocks, each a whole
        `bm x bn` UB tile (one DMA in, one out): the row maxima (the
        elementwise max of the blocks, then one row reduction), the sums of `exp(v - max)`
        block by block in entry order (the reference's order, so exact), then
        `exp(v - max) / sum` stored to the block's values. Entries not stored
        are never read or written; the entry loops are marked as the entries
        of one row (`ROW_ENTRIES_ATTR`), so tile-to-hw splits the block rows
        over the cores."""
        values, results = self.block_values(a), self.block_values_of(out, a)
        (bm, bn), element_type = a.block, a.element_type
        physical = 1 if bn == 1 else _round_up(bn, self.unit)
        block_type = TileType(
            [bm, physical], element_type, MemorySpace.UB, valid=[bm, bn]
        )
        stat_type = TileType([bm, 1], f32, MemorySpace.UB)

        def block_row(at: InsertPoint, br: Valid, _: list[SSAValue]) -> list[SSAValue]:
            start, end = self.row_range(at, a.offsets, br)

            def block(at: InsertPoint, j: Valid) -> SSAValue:
                return self.to_f32(at, self.load(at, values, [j, 0, 0], block_type))

            def running_max(
                at: InsertPoint, j: Valid, acc: list[SSAValue]
            ) -> list[SSAValue]:
                loaded = self.load(at, values, [j, 0, 0], block_type)
                loaded = self.cast_to(at, loaded, compute)
                return [self.value(at, tile.MaxOp(acc[0], loaded))]

            # The elementwise max of the row's blocks in their own type (bf16
            # in f32: the vector unit has no bf16), then one row reduction:
            # exact (a max rounds nothing, in any order), one `bm x bn`
            # reduction per block row instead of one per block.
            compute = compute_type(element_type)
            lowest = self.constant(float("-inf"), compute)
            init = self.value(
                at, tile.FillOp(lowest, block_type.with_(element_type=compute))
            )
            (most,) = self.entries(at, start, end, [init], running_max)
            peak = self.value(at, tile.ReduceMaxOp(self.to_f32(at, most), 1))

            def shifted(at: InsertPoint, j: Valid) -> SSAValue:
                return self.value(
                    at, tile.ExpOp(self.value(at, tile.SubOp(block(at, j), peak)))
                )

            def running_sum(
                at: InsertPoint, j: Valid, acc: list[SSAValue]
            ) -> list[SSAValue]:
                part = self.value(at, tile.ReduceSumOp(shifted(at, j), 1))
                return [self.value(at, tile.AddOp(acc[0], part))]

            zeros = self.zeros(at, stat_type, [])
            (total,) = self.entries(at, start, end, [zeros], running_sum)

            def write(at: InsertPoint, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
                share = self.value(at, tile.DivOp(shifted(at, j), total))
                self.store(
                    at, self.cast_to(at, share, element_type), results, [j, 0, 0]
                )
                return []

            self.entries(at, start, end, [], write)
            return []

        self.loop(self.top, 0, a.shape[0] // bm, 1, [], block_row)

    def csr_softmax(self, a: SparseBuffers, out: SSAValue, window: int) -> None:
        """CSR softmax per row (one core: tile-to-hw keeps a row loop whose
        entries are not whole GM blocks on one core): `csr_softmax_row` of
        every row, writing all its entries."""
        views = self.csr_views(a, out)

        def row(at: InsertPoint, i: Valid, _: list[SSAValue]) -> list[SSAValue]:
            start, end = self.row_range(at, a.offsets, i)
            self.csr_softmax_row(at, a, views, start, end, start, end, window)
            return []

        self.loop(self.top, 0, a.shape[0], 1, [], row)

    def csr_views(self, a: SparseBuffers, out: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The values and the result's values as `1 x nnz` (windows of entries
        are `1 x window` tiles)."""
        nnz = self.value(self.top, memref.DimOp(a.values, self.constant(0)))
        values = self.expand(a.values, [[0, 1]], [1, nnz])
        return values, self.expand(out, [[0, 1]], [1, nnz])

    def csr_softmax_row(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        views: tuple[SSAValue, SSAValue],
        start: SSAValue,
        end: SSAValue,
        lo: SSAValue,
        hi: SSAValue,
        window: int,
    ) -> None:
        """The softmax of the row of entries `[start, end)`, written at the
        entries `[lo, hi)` (a core's share of a row split over cores): the max
        and the quotients over windows of `window` entries (a `1 x window`
        tile, one DMA each way), the last `len mod window` entries one by one;
        the sum of `exp(v - max)` entry by entry in entry order (the
        reference's order: a window's row reduction would round differently)."""
        values = views[0]
        entry_type, window_type = self._entry_types(a, window)
        stat_type = TileType([1, 1], f32, MemorySpace.UB)

        def load(at: InsertPoint, j: Valid, tile_type: TileType) -> SSAValue:
            return self.to_f32(at, self.load(at, values, [0, j], tile_type))

        def running_max(tile_type: TileType) -> Callable[..., list[SSAValue]]:
            def body(at: InsertPoint, j: Valid, acc: list[SSAValue]) -> list[SSAValue]:
                peak = self.value(at, tile.ReduceMaxOp(load(at, j, tile_type), 1))
                return [self.value(at, tile.MaxOp(acc[0], peak))]

            return body

        full = self.whole_windows(at, start, end, window)
        lowest = self.constant(float("-inf"), f32)
        init = self.value(at, tile.FillOp(lowest, stat_type))
        (most,) = self.entries(
            at, start, full, [init], running_max(window_type), window
        )
        (peak,) = self.entries(at, full, end, [most], running_max(entry_type))

        def running_sum(
            at: InsertPoint, j: Valid, acc: list[SSAValue]
        ) -> list[SSAValue]:
            exp = self.exp_shifted(at, load(at, j, entry_type), peak)
            part = self.value(at, tile.ReduceSumOp(exp, 1))
            return [self.value(at, tile.AddOp(acc[0], part))]

        zeros = self.zeros(at, stat_type, [])
        (total,) = self.entries(at, start, end, [zeros], running_sum)
        written = full if (lo, hi) == (start, end) else None
        self.softmax_quotients(at, a, views, (peak, total), lo, hi, window, written)

    def _entry_types(self, a: SparseBuffers, window: int) -> tuple[TileType, TileType]:
        """A `1 x 1` tile of one entry and a `1 x window` tile of a window."""
        element_type = a.element_type
        window_type = TileType(
            [1, _round_up(window, self.unit)],
            element_type,
            MemorySpace.UB,
            valid=[1, window],
        )
        return TileType([1, 1], element_type, MemorySpace.UB), window_type

    def whole_windows(
        self, at: InsertPoint, first: SSAValue, last: SSAValue, window: int
    ) -> SSAValue:
        """The end of the whole windows of `window` entries from `first`
        before `last`."""
        length = self.value(at, arith.SubiOp(last, first))
        width = self.constant(window)
        count = self.value(at, arith.DivUIOp(length, width))
        return self.value(
            at, arith.AddiOp(first, self.value(at, arith.MuliOp(count, width)))
        )

    def exp_shifted(self, at: InsertPoint, value: SSAValue, peak: SSAValue) -> SSAValue:
        """`exp(value - peak)`, `peak` a `1 x 1` tile."""
        difference = self.value(at, tile.SubOp(value, peak))
        return self.value(at, tile.ExpOp(difference))

    def if_else(
        self,
        at: InsertPoint,
        condition: SSAValue,
        then: Callable[[InsertPoint], None],
        otherwise: Callable[[InsertPoint], None] | None = None,
    ) -> None:
        """An `scf.if` without results: `then` or `otherwise` (default: none)
        emits its body."""
        blocks = Block(), Block()
        for block, emit in zip(blocks, (then, otherwise), strict=True):
            inner = InsertPoint.at_end(block)
            if emit is not None:
                emit(inner)
            self.insert(inner, scf.YieldOp())
        self.insert(at, scf.IfOp(condition, [], [blocks[0]], [blocks[1]]))

    def softmax_quotients(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        views: tuple[SSAValue, SSAValue],
        stats: tuple[SSAValue, SSAValue],
        lo: SSAValue,
        hi: SSAValue,
        window: int,
        written: SSAValue | None = None,
    ) -> None:
        """Writes `exp(v - max) / sum` at exactly the entries `[lo, hi)`: by
        windows of `window` entries, the rest one by one (`stats`: the row's
        max and sum, `1 x 1` f32 tiles; `written`: the end of the whole
        windows, when already known)."""
        values, results = views
        peak, total = stats
        entry_type, window_type = self._entry_types(a, window)

        def write(tile_type: TileType) -> Callable[..., list[SSAValue]]:
            def body(at: InsertPoint, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
                value = self.to_f32(at, self.load(at, values, [0, j], tile_type))
                exp = self.exp_shifted(at, value, peak)
                share = self.value(at, tile.DivOp(exp, total))
                self.store(at, self.cast_to(at, share, a.element_type), results, [0, j])
                return []

            return body

        if written is None:
            written = self.whole_windows(at, lo, hi, window)
        self.entries(at, lo, written, [], write(window_type), window)
        self.entries(at, written, hi, [], write(entry_type))

    def entries(
        self,
        at: InsertPoint,
        start: SSAValue,
        end: SSAValue,
        iters: list[SSAValue],
        body: Callable[[InsertPoint, Valid, list[SSAValue]], list[SSAValue]],
        step: int = 1,
    ) -> list[SSAValue]:
        """A loop over the stored entries `[start, end)` of one (block) row,
        marked `ROW_ENTRIES_ATTR`: what its body stores at its entries lies in
        that row's range, disjoint from every other row's."""
        results = self.loop(at, start, end, step, iters, body)
        loop = _last_loop(at)
        loop.attributes[ROW_ENTRIES_ATTR] = UnitAttr()
        return results

    def block_values_of(self, values: SSAValue, pattern: SparseBuffers) -> SSAValue:
        """A result's values buffer as `nnz x bm x bn` (the pattern's blocks)."""
        return self.block_values(
            SparseBuffers(
                pattern.offsets, pattern.indices, values, pattern.shape, pattern.block
            )
        )

    def sddmm_rows(
        self, mask: SparseBuffers, q: SSAValue, k: SSAValue, out: SSAValue
    ) -> None:
        """CSR `(q @ k.T)` at the mask's entries (k given as N x K rows): per
        stored entry, the dot product of row i of q and row j of k, by column
        tiles of K (product, row sum, f32 accumulator)."""
        results = self.block_values_of(out, mask)
        element_type = cast(MemRefType[Attribute], q.type).get_element_type()
        depth = _memref_shape(q)[1]
        stat_type = TileType([1, 1], f32, MemorySpace.UB)

        def row(at: InsertPoint, i: Valid, _: list[SSAValue]) -> list[SSAValue]:
            start, end = self.row_range(at, mask.offsets, i)

            def entry(at: InsertPoint, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
                col = self.read_index(at, mask.indices, j)
                step = min(self.cols, depth)
                physical = 1 if depth == 1 else _round_up(step, self.unit)

                def chunk(
                    at: InsertPoint, k0: Valid, acc: list[SSAValue]
                ) -> list[SSAValue]:
                    column = Column(k0, self.tail(at, depth, k0, step, True), physical)
                    tile_type = column.tile_type(element_type)
                    left = self.load(at, q, [i, k0], tile_type, [1, column.valid])
                    right = self.load(at, k, [col, k0], tile_type, [1, column.valid])
                    product = self.value(
                        at, tile.MulOp(self.to_f32(at, left), self.to_f32(at, right))
                    )
                    part = self.value(at, tile.ReduceSumOp(product, 1))
                    return [self.value(at, tile.AddOp(acc[0], part))]

                zero = self.zeros(at, stat_type, [])
                (total,) = self.loop(at, 0, depth, step, [zero], chunk)
                self.store(
                    at, self.cast_to(at, total, element_type), results, [j, 0, 0]
                )
                return []

            self.entries(at, start, end, [], entry)
            return []

        self.loop(self.top, 0, mask.shape[0], 1, [], row)

    def sddmm_cube(
        self,
        mask: SparseBuffers,
        q: SSAValue,
        k: SSAValue,
        transpose_b: bool,
        out: SSAValue,
    ) -> None:
        """Block-CSR `(q @ k)` (or `q @ k.T`) at the mask's stored blocks: per
        block row, its bm rows of q (L0A) once; per stored block, times the bn
        columns of k (L0B) on the cube, K whole in one step, stored to the
        block's values."""
        (bm, bn) = mask.block
        element_type = cast(MemRefType[Attribute], q.type).get_element_type()
        depth = _memref_shape(q)[1]
        left_type = TileType([bm, depth], element_type, MemorySpace.L1, layout="nz")
        right_shape = [bn, depth] if transpose_b else [depth, bn]
        right_type = TileType(right_shape, element_type, MemorySpace.L1, layout="nz")

        def block_row(at: InsertPoint, br: Valid, _: list[SSAValue]) -> list[SSAValue]:
            start, end = self.row_range(at, mask.offsets, br)
            row0 = self.scaled(at, br, bm)

            # the q rows of the block row: loaded once for all its stored blocks
            left = self.load(at, q, [row0, 0], left_type)
            a0 = self.value(
                at,
                tile.MoveOp(left, left_type.with_(space=MemorySpace.L0A, layout=None)),
            )

            def block(at: InsertPoint, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
                col0 = self.scaled(at, self.read_index(at, mask.indices, j), bn)
                right = self.load(
                    at, k, [col0, 0] if transpose_b else [0, col0], right_type
                )
                b0 = self.value(
                    at,
                    tile.MoveOp(
                        right,
                        TileType([depth, bn], element_type, MemorySpace.L0B),
                        transpose=transpose_b,
                    ),
                )
                scores = self.value(at, tile.MatmulOp(a0, b0))
                self.store(at, scores, out, [j, 0, 0])
                return []

            self.entries(at, start, end, [], block)
            return []

        self.loop(self.top, 0, mask.shape[0] // mask.block[0], 1, [], block_row)
