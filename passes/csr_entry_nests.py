"""CSR nests that write a tile element by element (`tile.insert`).

The plain nests of `SparseNest` move one stored entry per DMA where an entry
lands at a run-time place: `to_dense` stores each value to its column,
`sddmm` each dot product to its entry. These nests build the tile in UB with
`tile.insert` (a ub write on S) and store it with one DMA (docs/sparse.md,
*to_dense*, *sddmm*):

- **to_dense by rows**: per row, a zero row tile in UB, each stored value
  inserted at its column, the row stored once; the static row loop is split
  over the cores by tile-to-hw (a row is whole 32-byte GM blocks or the split
  is refused there).

The column indices and values are read per entry on the scalar unit: from GM
(`memref.load`, through the DataCache), or with index prefetch (`window` > 0)
from windows of `window` entries loaded into ub at the row's first entry
(`CsrSpmmNest._window`; a row longer than a window loads the next ones), a
matrix of fewer entries than a window reading GM (an `scf.if` on `nnz`).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, memref
from xdsl.ir import SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import element_bytes

from .balanced_split import Reader, smaller
from .csr_spmm_nest import CsrSpmmNest, SpmmPlan
from .nest_builder import Valid
from .sparse_nests import Column, SparseBuffers

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
