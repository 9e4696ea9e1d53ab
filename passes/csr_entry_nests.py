"""CSR nests that write a tile element by element (`tile.insert`), and the
split of CSR entries over the cores by whole GM blocks.

The plain nests of `SparseNest` move one stored entry per DMA where an entry
lands at a run-time place: `to_dense` stores each value to its column,
`sddmm` each dot product to its entry. These nests build the tile in UB with
`tile.insert` (a ub write on S) and store it with one DMA (docs/sparse.md,
*to_dense*, *sddmm*):

- **to_dense by rows**: per row, a zero row tile in UB, each stored value
  inserted at its column, the row stored once; the rows split over the cores
  as CSR spmm's (`CsrSpmmNest.over_rows`).
- **sddmm by windows**: per window of `SDDMM_WINDOW` entries of the result's
  values, each dot product inserted into one f32 tile, stored once; the
  cores take whole windows (whole 32-byte GM blocks), whichever rows the
  entries belong to; a group of consecutive column indices of a row loads
  its rows of k with one DMA (`gather-runs`, `SparseNest.runs`).
- **softmax over the cores**: the same split of the entries; a core computes
  the max and sum of each row its entries lie in over the whole row and
  writes only its entries' quotients (`SparseNest.csr_softmax_row`).

The column indices (and to_dense's values) are read per entry on the scalar
unit: from GM (`memref.load`, through the DataCache), or with index prefetch
from ub windows: to_dense's of 64 entries at the row's first entry
(`CsrSpmmNest._window`; a row longer than a window loads the next ones; a
matrix of fewer entries than a window reads GM, an `scf.if` on `nnz`),
sddmm's the indices of its output window.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, f32, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType, element_bytes

from .balanced_split import (
    Reader,
    core_loop,
    larger,
    offsets_in_ub,
    row_of_entry,
    smaller,
)
from .csr_masked_softmax import MaskedLanes, MaskedSoftmax
from .csr_spmm_nest import CsrSpmmNest, SpmmPlan
from .nest_builder import Valid
from .sparse_nests import Column, RunBody, SparseBuffers

SDDMM_WINDOW = 64
"""Entries of an sddmm result window: 128 (f16) or 256 (f32) bytes, whole
32-byte GM blocks, and 256 bytes of i32 column indices in one DMA."""


EntryBody = Callable[[InsertPoint, SSAValue, SSAValue, list[SSAValue]], list[SSAValue]]
"""One stored entry: its column (an index) and value (a scalar of the values'
type) and the carried values, to the next carried values."""


class CsrEntryNest(CsrSpmmNest):
    """Builds the CSR nests that insert entries into UB tiles."""

    def row_entries(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        start: SSAValue,
        end: SSAValue,
        nnz: SSAValue,
        window: int,
        iters: list[SSAValue],
        body: EntryBody,
    ) -> list[SSAValue]:
        """`body` over the entries `[start, end)` in entry order, their column
        and value read from GM (`window` 0) or from prefetched windows."""
        if not window:

            def plain(
                at: InsertPoint, p: Valid, carried: list[SSAValue]
            ) -> list[SSAValue]:
                col = self.read_index(at, a.indices, p)
                value = self.value(
                    at, memref.LoadOp.get(a.values, [self.index_value(p)])
                )
                return body(at, col, value, carried)

            return self.loop(at, start, end, 1, iters, plain)

        def taken(
            at: InsertPoint,
            q: SSAValue,
            loaded: tuple[SSAValue, SSAValue, SSAValue],
            carried: list[SSAValue],
        ) -> list[SSAValue]:
            """The entries `[q, min(end, q + window))` of a loaded window."""
            indices, values, base = loaded
            limit = self.value(at, arith.AddiOp(q, self.constant(window)))

            def entry(
                at: InsertPoint, p: Valid, carried: list[SSAValue]
            ) -> list[SSAValue]:
                k = self.value(at, arith.SubiOp(self.index_value(p), base))
                col = self.value(at, tile.ExtractOp(indices, [k]))
                value = self.value(at, tile.ExtractOp(values, [k]))
                return body(at, col, value, carried)

            return self.loop(at, q, smaller(self, at, end, limit), 1, carried, entry)

        def later(at: InsertPoint, q: Valid, carried: list[SSAValue]) -> list[SSAValue]:
            q = self.index_value(q)
            return taken(at, q, self._window(at, a, q, nnz, window, False), carried)

        # the first window: loads of the enclosing row loop's body, so that
        # tile-pipeline loads the next row's while this one computes
        first = self._window(at, a, start, nnz, window, False)
        carried = taken(at, start, first, iters)
        stop = self.value(at, arith.AddiOp(start, self.constant(window)))
        return self.loop(at, stop, end, window, carried, later)

    def to_dense_rows(self, a: SparseBuffers, out: SSAValue, plan: SpmmPlan) -> None:
        """Per row (one column tile: `self.cols` >= the columns), a zero row
        tile with the row's values inserted at their columns, stored once."""
        element_type = a.element_type
        n = a.shape[1]
        assert n <= self.cols
        column = Column(0, n, 1 if n == 1 else -(-n // self.unit) * self.unit)
        row_type = column.tile_type(element_type)
        zero_index = self.constant(0)

        def row(
            at: InsertPoint, r: Valid, offset: Reader, nnz: SSAValue, window: int
        ) -> None:
            start, end = offset(at, r), offset(at, self.add(at, r, 1))
            zeros = self.zeros(at, row_type, [])

            def put(
                at: InsertPoint, col: SSAValue, value: SSAValue, carried: list[SSAValue]
            ) -> list[SSAValue]:
                placed = tile.InsertOp(value, carried[0], [zero_index, col])
                return [self.value(at, placed)]

            (dense,) = self.row_entries(at, a, start, end, nnz, window, [zeros], put)
            self.store(at, dense, out, [r, 0])

        # a row's store, in 32-byte blocks, against an entry's reads and write
        row_cost = max(1, n * element_bytes(element_type) // 32)
        self.over_rows(a, plan, row_cost, row)

    def sddmm_windows(
        self,
        mask: SparseBuffers,
        q: SSAValue,
        k: SSAValue,
        out: SSAValue,
        plan: SpmmPlan,
    ) -> None:
        """CSR `(q @ k.T)` at the mask's entries, by windows of `window`
        entries of the result's values (`SDDMM_WINDOW`): each dot product
        inserted into a `1 x window` f32 tile, cast and stored with one DMA.
        Each of `plan.cores` cores takes whole windows (so whole 32-byte GM
        blocks: sddmm has no row state, a row may straddle two cores); per
        window, the rows its entries lie in are found by binary searches of
        the offsets, and the row of q is loaded once per row and window. The
        column indices of a window are loaded into ub with one DMA
        (`plan.window` > 0) or read from GM per entry."""
        element_type = cast(MemRefType[Attribute], q.type).get_element_type()
        depth = cast(MemRefType[Attribute], q.type).get_shape()[1]
        rows = mask.shape[0]
        width = SDDMM_WINDOW
        nnz = self.value(self.top, memref.DimOp(mask.indices, self.constant(0)))
        results = self.expand(out, [[0, 1]], [1, nnz])
        step = min(self.cols, depth)
        physical = 1 if depth == 1 else -(-step // self.unit) * self.unit
        window_type = TileType([1, width], f32, MemorySpace.UB)
        zero_index = self.constant(0)

        def gm_offset(at: InsertPoint, row: Valid) -> SSAValue:
            return self.read_index(at, mask.offsets, row)

        def span(
            at: InsertPoint, w: SSAValue, hi: SSAValue, offset: Reader, whole: bool
        ) -> None:
            """The entries `[w, hi)`: a whole window (`hi = w + width`) inserted
            into one tile and stored once, or (the last `nnz mod width` entries)
            each stored alone."""
            ids: SSAValue | None = None
            if plan.window and whole:
                ids = self.load(
                    at, mask.indices, [w], TileType([width], i32, MemorySpace.UB)
                )
            first = row_of_entry(self, at, offset, w, rows)
            last = self.value(at, arith.SubiOp(hi, self.constant(1)))
            after = self.add(at, row_of_entry(self, at, offset, last, rows), 1)
            inits = [self.zeros(at, window_type, [])] if whole else []

            def row(at: InsertPoint, r: Valid, acc: list[SSAValue]) -> list[SSAValue]:
                start, end = offset(at, r), offset(at, self.add(at, r, 1))
                left = None
                if depth <= step:
                    left = self._q_chunk(at, q, r, 0, depth, physical, element_type)

                def column_of(
                    at: InsertPoint, p: Valid, place: SSAValue | None = None
                ) -> SSAValue:
                    if ids is None:
                        return self.read_index(at, mask.indices, p)
                    if place is None:
                        place = self.value(at, arith.SubiOp(self.index_value(p), w))
                    return self.value(at, tile.ExtractOp(ids, [place]))

                def dots(
                    at: InsertPoint,
                    p: Valid,
                    place: SSAValue,
                    col: SSAValue,
                    acc: list[SSAValue],
                    count: int,
                ) -> list[SSAValue]:
                    """`count` consecutive rows of k from `col` (one DMA): their
                    dot products inserted at `place` on one by one, or (the
                    last entries, one) stored alone."""
                    total = self._dot(
                        at,
                        q,
                        k,
                        r,
                        col,
                        (depth, step, physical),
                        element_type,
                        left,
                        count,
                    )
                    if not whole:
                        result = self.cast_to(at, total, element_type)
                        self.store(at, result, results, [0, p])
                        return []
                    placed = acc[0]
                    for t in range(count):
                        scalar = self.value(
                            at, tile.ExtractOp(total, [self.constant(t), zero_index])
                        )
                        position = self.index_value(self.add(at, place, t))
                        placed = self.value(
                            at, tile.InsertOp(scalar, placed, [zero_index, position])
                        )
                    return [placed]

                def entry(
                    at: InsertPoint, p: Valid, acc: list[SSAValue]
                ) -> list[SSAValue]:
                    place = self.value(at, arith.SubiOp(self.index_value(p), w))
                    return dots(at, p, place, column_of(at, p, place), acc, 1)

                def of(count: int) -> RunBody:
                    def body(
                        at: InsertPoint, p: Valid, col: SSAValue, acc: list[SSAValue]
                    ) -> list[SSAValue]:
                        place = self.value(at, arith.SubiOp(self.index_value(p), w))
                        return dots(at, p, place, col, acc, count)

                    return body

                lo, stop = larger(self, at, start, w), smaller(self, at, end, hi)
                if whole and self.run > 1:
                    return self.runs(
                        at, lo, stop, self.run, column_of, acc, of(self.run), of(1)
                    )
                return self.loop(at, lo, stop, 1, acc, entry)

            done = self.loop(at, first, after, 1, inits, row)
            if whole:
                result = self.cast_to(at, done[0], element_type)
                self.store(at, result, results, [0, w])

        def windows(
            at: InsertPoint, e0: SSAValue, e1: SSAValue, offset: Reader
        ) -> None:
            size = self.constant(width)
            full = self.whole_windows(at, e0, e1, width)

            def each(at: InsertPoint, w: Valid, _: list[SSAValue]) -> list[SSAValue]:
                w = self.index_value(w)
                hi = self.value(at, arith.AddiOp(w, size))
                span(at, w, hi, offset, True)
                return []

            self.loop(at, e0, full, width, [], each)
            some = self.value(at, arith.CmpiOp(full, e1, "slt"))
            self.if_else(at, some, lambda here: span(here, full, e1, offset, False))

        if plan.cores <= 1:
            windows(self.top, zero_index, nnz, gm_offset)
            return

        self.over_entries(mask, plan, width, windows)

    def over_entries(
        self,
        a: SparseBuffers,
        plan: SpmmPlan,
        width: int,
        body: Callable[[InsertPoint, SSAValue, SSAValue, Reader], None],
    ) -> None:
        """`body(at, e0, e1, offset)` for each of `plan.cores` cores: the
        entries `[e0, e1)` it writes, whole multiples of `width` entries (whole
        32-byte GM blocks of the values) except at nnz, in a `pypto.core_loop`;
        `offset` reads the row offsets (from ub when they fit)."""
        nnz = self.value(self.top, memref.DimOp(a.indices, self.constant(0)))

        def core(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            offset: Reader = lambda at, row: self.read_index(at, a.offsets, row)  # noqa: E731
            if plan.offsets_in_ub:
                offset = offsets_in_ub(self, at, a.offsets, a.shape[0])
            # ceil(ceil(nnz / width) / cores) whole windows a core
            per = self.constant(width * plan.cores)
            spare = self.value(
                at, arith.AddiOp(nnz, self.constant(width * plan.cores - 1))
            )
            chunk = self.value(
                at,
                arith.MuliOp(
                    self.value(at, arith.DivUIOp(spare, per)), self.constant(width)
                ),
            )
            begin = self.value(at, arith.MuliOp(self.index_value(c), chunk))
            e0 = smaller(self, at, begin, nnz)
            e1 = smaller(self, at, self.value(at, arith.AddiOp(e0, chunk)), nnz)
            body(at, e0, e1, offset)
            return []

        core_loop(self, plan.cores, core)

    def softmax_split(
        self,
        a: SparseBuffers,
        out: SSAValue,
        window: int,
        plan: SpmmPlan,
        masked: int = 0,
    ) -> None:
        """CSR softmax over `plan.cores` cores: each core writes whole blocks
        of entries (`over_entries`, `SDDMM_WINDOW` entries a unit); a row
        whose entries straddle two cores has its max and sum computed by both
        (each over the whole row), each writing its share of the quotients
        (`csr_softmax_row`; with `masked` entries a window and at least that
        many entries, passes/csr_masked_softmax.py)."""
        views = self.csr_views(a, out)
        rows = a.shape[0]
        nnz = self.value(self.top, memref.DimOp(a.values, self.constant(0)))

        def share(at: InsertPoint, e0: SSAValue, e1: SSAValue, offset: Reader) -> None:
            def rows_of(here: InsertPoint) -> None:
                first = row_of_entry(self, here, offset, e0, rows)
                last = self.value(here, arith.SubiOp(e1, self.constant(1)))
                after = self.add(here, row_of_entry(self, here, offset, last, rows), 1)

                def exact(at: InsertPoint) -> None:
                    def row(
                        at: InsertPoint, r: Valid, _: list[SSAValue]
                    ) -> list[SSAValue]:
                        start, end = offset(at, r), offset(at, self.add(at, r, 1))
                        lo = larger(self, at, start, e0)
                        hi = smaller(self, at, end, e1)
                        self.csr_softmax_row(at, a, views, start, end, lo, hi, window)
                        return []

                    self.loop(at, first, after, 1, [], row)

                def windows(at: InsertPoint) -> None:
                    lanes = MaskedLanes.make(self, at, nnz, masked)
                    MaskedSoftmax(self, a, views, window, lanes).rows(
                        at, (first, after), (e0, e1), offset
                    )

                if masked:
                    enough = self.value(
                        here, arith.CmpiOp(nnz, self.constant(masked), "sge")
                    )
                    self.if_else(here, enough, windows, exact)
                else:
                    exact(here)

            nonempty = self.value(at, arith.CmpiOp(e0, e1, "slt"))
            self.if_else(at, nonempty, rows_of)

        self.over_entries(a, plan, SDDMM_WINDOW, share)

    def _q_chunk(
        self,
        at: InsertPoint,
        q: SSAValue,
        r: Valid,
        k0: Valid,
        valid: Valid,
        physical: int,
        element_type: Attribute,
    ) -> SSAValue:
        """Columns `k0 ..` (`valid` of them) of row `r` of q, as f32."""
        column = Column(k0, valid, physical)
        tile_type = column.tile_type(element_type)
        return self.to_f32(at, self.load(at, q, [r, k0], tile_type, [1, valid]))

    def _dot(
        self,
        at: InsertPoint,
        q: SSAValue,
        k: SSAValue,
        r: Valid,
        col: SSAValue,
        shape: tuple[int, int, int],
        element_type: Attribute,
        left: SSAValue | None,
        rows: int = 1,
    ) -> SSAValue:
        """`q[r] . k[col + t]` for the `rows` rows t as a `rows x 1` f32 tile
        (the rows of k in one DMA): per column tile of K the product
        row-summed in f32, added in K order (the plain nest's arithmetic, row
        by row); `left`: q's row when K is one tile."""
        depth, step, physical = shape  # K, its column tiles, their width
        zero = self.zeros(at, TileType([rows, 1], f32, MemorySpace.UB), [])

        def chunk(at: InsertPoint, k0: Valid, acc: list[SSAValue]) -> list[SSAValue]:
            valid = self.tail(at, depth, k0, step, True)
            row = left
            if row is None:
                row = self._q_chunk(at, q, r, k0, valid, physical, element_type)
            column = Column(k0, valid, physical)
            right = self.load(
                at, k, [col, k0], column.tile_type(element_type, rows), [rows, valid]
            )
            product = self.value(at, tile.MulOp(row, self.to_f32(at, right)))
            part = self.value(at, tile.ReduceSumOp(product, 1))
            return [self.value(at, tile.AddOp(acc[0], part))]

        (total,) = self.loop(at, 0, depth, step, [zero], chunk)
        return total
