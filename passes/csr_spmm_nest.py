"""The CSR spmm/spmv row nest: index prefetch and an nnz-balanced core split.

The plain row nest (`SparseNest.spmm_rows`) reads every column index from GM
on the scalar unit and DMAs every value as a 1x1 tile. This nest
(docs/sparse.md, *spmm and spmv*) reads them in windows instead:

- **Index prefetch** (`window` > 0): per row, the column indices (i32) and
  values of the window of `window` entries that starts at the row's first entry
  are loaded into ub tiles (two DMAs; the values cast to f32 once) and taken
  out with `tile.extract` (a ub read on S); a row longer than the window loads
  the next windows in a loop. The window starts at `min(q, nnz - window)` so
  that it stays inside the buffers (docs/sparse.md, *The tile level*); a
  matrix of fewer entries than a window takes the GM reads (an `scf.if` on
  `nnz`). The window loads are loads of the row loop's body like any other, so
  `tile-pipeline` double-buffers them: the next row's windows load while this
  row computes.
- **nnz-balanced core split** (`cores` > 1): a static loop over the cores
  (tile-to-hw gives each core one trip) in which each core finds its rows
  from the offsets: the first row whose middle reaches `c / cores` of the
  work (entries plus `ROW_COST` a row), by a binary search of
  `bit_length(rows) + 1` unrolled steps on the scalar unit
  (passes/balanced_split.py, shared with the fused attention nest). Each core then
  runs a loop of run-time bounds over its rows, so each gets about `nnz /
  cores` entries (a row is never divided: its sum keeps the entry order). The offsets are loaded into ub once per core
  when they fit (`offsets_in_ub`), so the search and the row ranges are ub
  reads, not GM round trips.

Per stored entry the row of `b` at its column is gathered, cast to f32,
multiplied by the value and added to the row's f32 accumulator in entry order:
the reference's order, so the result is exact. An element-wise epilogue
(`SparseNest.epilogue`, passes/sparse_epilogue.py) is applied to each row tile
in UB before its store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import gcd
from typing import Protocol, cast

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import MemRefType, f32, i32
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType, element_bytes
from pypto_mlir.targets import Target

from .balanced_split import Reader, core_loop, core_rows, offsets_in_ub, smaller
from .nest_builder import Valid
from .sparse_nests import Column, SparseBuffers, SparseNest


@dataclass(frozen=True)
class SpmmPlan:
    """What the CSR row nest does (tv-sparse-to-tile decides, with a remark)."""

    window: int
    """Entries of a prefetched window of indices and values; 0: GM reads."""
    cores: int
    """Cores the rows are split over by nnz; 1: a static loop over the rows
    (tile-to-hw splits it by row count)."""
    offsets_in_ub: bool
    """The offsets are loaded into ub once per core (balanced split only)."""
    granule: int = 1
    """A core's first row is a multiple of this: cores never write one GM
    block (`memories.gm.alignment`) of the result together."""


ROW_COST = 3
"""A row's fixed work in entries, for the core split: its two window DMAs
and its store against an entry's one gather DMA."""

WINDOW = 64
"""Entries of a prefetched window: 256 bytes of i32 indices (a row of 1 %
of 4096 columns has about 41 entries), so most rows take one window."""


class SpmmOptions(Protocol):
    """The tv-sparse-to-tile options the plan reads."""

    index_prefetch: bool
    nnz_balance: bool


def spmm_plan(
    a: SparseBuffers, columns: int, target: Target, options: SpmmOptions
) -> tuple[SpmmPlan, str]:
    """What the CSR row nest of `a` (times `columns` dense columns) does on
    `target`, and why (for the remark)."""
    notes: list[str] = []
    index_type = cast(MemRefType[Attribute], a.indices.type).get_element_type()
    window = 0
    if not options.index_prefetch:
        notes.append(
            "column indices and values read from GM per entry (index-prefetch=false)"
        )
    elif index_type != i32:
        notes.append(
            f"column indices read from GM per entry (the indices are {index_type}, prefetch takes i32)"
        )
    else:
        window = WINDOW
        notes.append(
            f"column indices and values prefetched into ub in windows of {window} "
            "entries (a matrix of fewer entries reads them from GM)"
        )
    cores, in_ub = 1, False
    ub = cast(int, target.memories["ub"].size)
    offsets_bytes = (a.shape[0] + 1) * 4
    if not options.nnz_balance:
        notes.append("rows split over the cores by count (nnz-balance=false)")
    elif target.cores < 2:
        notes.append(f"one core on target '{target.name}': no split")
    else:
        cores = target.cores
        in_ub = index_type == i32 and offsets_bytes * 8 <= ub
        notes.append(
            f"rows split over {cores} cores by stored entries (each core searches "
            + ("the offsets, loaded into ub, " if in_ub else "the offsets in GM ")
            + "for its first row)"
        )
    gm = target.memories["gm"].alignment
    row_bytes = columns * element_bytes(a.element_type)
    granule = gm // gcd(gm, row_bytes)
    return SpmmPlan(window, cores, in_ub, granule), "; ".join(notes)


class CsrSpmmNest(SparseNest):
    """Builds the CSR `out = a @ b` row nest of a `SpmmPlan`."""

    def spmm_csr(
        self, a: SparseBuffers, b: SSAValue, out: SSAValue, plan: SpmmPlan
    ) -> None:
        b, out = self.as_matrix(b), self.as_matrix(out)

        def row(
            at: InsertPoint, r: Valid, offset: Reader, nnz: SSAValue, window: int
        ) -> None:
            self._row(at, a, b, out, r, offset, nnz, window)

        self.over_rows(a, plan, ROW_COST, row)

    def guarded(
        self,
        at: InsertPoint,
        nnz: SSAValue,
        window: int,
        emit: Callable[[InsertPoint, int], None],
    ) -> None:
        """`emit(at, window)` when nnz >= window, else `emit(at, 0)` (GM
        reads): a window never reaches past the buffers."""
        if not window:
            emit(at, 0)
            return
        windowed, plain = Block(), Block()
        for block, size in ((windowed, window), (plain, 0)):
            here = InsertPoint.at_end(block)
            emit(here, size)
            self.insert(here, scf.YieldOp())
        enough = self.value(at, arith.CmpiOp(nnz, self.constant(window), "sge"))
        self.insert(at, scf.IfOp(enough, [], [windowed], [plain]))

    def over_rows(
        self,
        a: SparseBuffers,
        plan: SpmmPlan,
        row_cost: int,
        body: Callable[[InsertPoint, Valid, Reader, SSAValue, int], None],
    ) -> None:
        """`body(at, r, offset, nnz, window)` for every row: split over
        `plan.cores` cores by work (entries plus `row_cost` a row, rows starting
        at multiples of `plan.granule`), each core's rows in a loop guarded on
        nnz >= window; or (one core) a static row loop that tile-to-hw splits
        by count, guarded per row."""
        rows = a.shape[0]
        nnz = self.value(self.top, memref.DimOp(a.indices, self.constant(0)))

        def gm_offset(at: InsertPoint, row: Valid) -> SSAValue:
            return self.read_index(at, a.offsets, row)

        if plan.cores <= 1:

            def row(at: InsertPoint, r: Valid, _: list[SSAValue]) -> list[SSAValue]:
                self.guarded(
                    at, nnz, plan.window, lambda at, w: body(at, r, gm_offset, nnz, w)
                )
                return []

            self.loop(self.top, 0, rows, 1, [], row)
            return

        def core(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            offset: Reader = gm_offset
            if plan.offsets_in_ub:
                offset = offsets_in_ub(self, at, a.offsets, rows)
            lo, hi = core_rows(
                self, at, offset, c, plan.cores, nnz, rows, row_cost, plan.granule
            )

            def emit(at: InsertPoint, window: int) -> None:
                def each(
                    at: InsertPoint, r: Valid, _: list[SSAValue]
                ) -> list[SSAValue]:
                    body(at, r, offset, nnz, window)
                    return []

                self.loop(at, lo, hi, 1, [], each)

            self.guarded(at, nnz, plan.window, emit)
            return []

        core_loop(self, plan.cores, core)

    def _row(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        b: SSAValue,
        out: SSAValue,
        r: Valid,
        offset: Reader,
        nnz: SSAValue,
        window: int,
    ) -> None:
        """Row `r`: per column tile an f32 accumulator over the row's entries
        (windows of `window` entries prefetched into ub, or GM reads)."""
        start, end = offset(at, r), offset(at, self.add(at, r, 1))
        element_type, values = a.element_type, self.block_values(a)
        n = cast(MemRefType[Attribute], b.type).get_shape()[1]
        first: tuple[SSAValue, SSAValue, SSAValue] | None = None
        if window:  # the row's first window: loads of the row loop's body
            first = self._window(at, a, start, nnz, window)

        def columns(at: InsertPoint, column: Column) -> None:
            acc = self.zeros(at, column.tile_type(f32), [1, column.valid])
            if first is None:

                def entry(
                    at: InsertPoint, p: Valid, accs: list[SSAValue]
                ) -> list[SSAValue]:
                    col = self.read_index(at, a.indices, p)
                    value = self.load(
                        at,
                        values,
                        [p, 0, 0],
                        TileType([1, 1], element_type, MemorySpace.UB),
                    )
                    scale = self.to_f32(at, value)
                    return [self._accumulate(at, b, column, col, scale, accs[0])]

                (total,) = self.loop(at, start, end, 1, [acc], entry)
            else:
                stop = self.value(at, arith.AddiOp(start, self.constant(window)))
                (total,) = self._entries(
                    at, b, column, first, start, smaller(self, at, end, stop), acc
                )

                def later(
                    at: InsertPoint, q: Valid, accs: list[SSAValue]
                ) -> list[SSAValue]:
                    q = self.index_value(q)
                    loaded = self._window(at, a, q, nnz, window)
                    limit = self.value(at, arith.AddiOp(q, self.constant(window)))
                    return self._entries(
                        at, b, column, loaded, q, smaller(self, at, end, limit), accs[0]
                    )

                (total,) = self.loop(at, stop, end, window, [total], later)
            result = self.cast_to(at, total, element_type)
            if self.epilogue is not None:
                result = self.epilogue(self, at, result, r, column)
            self.store(at, result, out, [r, column.start])

        self.column_tiles(at, n, columns)

    def _window(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        q: SSAValue,
        nnz: SSAValue,
        window: int,
        as_f32: bool = True,
    ) -> tuple[SSAValue, SSAValue, SSAValue]:
        """The column indices (i32) and values (f32, or their own type unless
        `as_f32`) of the `window` entries from `min(q, nnz - window)` (inside
        the buffers: nnz >= window), and that first entry."""
        last = self.value(at, arith.SubiOp(nnz, self.constant(window)))
        base = smaller(self, at, q, last)
        indices = self.load(
            at, a.indices, [base], TileType([window], i32, MemorySpace.UB)
        )
        values = self.load(
            at, a.values, [base], TileType([window], a.element_type, MemorySpace.UB)
        )
        return indices, self.to_f32(at, values) if as_f32 else values, base

    def _entries(
        self,
        at: InsertPoint,
        b: SSAValue,
        column: Column,
        loaded: tuple[SSAValue, SSAValue, SSAValue],
        lo: SSAValue,
        hi: SSAValue,
        acc: SSAValue,
    ) -> list[SSAValue]:
        """The entries `lo .. hi` of a loaded window, accumulated into `acc`."""
        indices, values, base = loaded

        def entry(at: InsertPoint, p: Valid, accs: list[SSAValue]) -> list[SSAValue]:
            k = self.value(at, arith.SubiOp(self.index_value(p), base))
            col = self.value(at, tile.ExtractOp(indices, [k]))
            scale = self.value(at, tile.ExtractOp(values, [k]))
            return [self._accumulate(at, b, column, col, scale, accs[0])]

        return self.loop(at, lo, hi, 1, [acc], entry)

    def _accumulate(
        self,
        at: InsertPoint,
        b: SSAValue,
        column: Column,
        col: SSAValue,
        scale: SSAValue,
        acc: SSAValue,
    ) -> SSAValue:
        """`acc + f32(b[col, column]) * scale` (scale: an f32 scalar or a 1x1
        / 1-element tile)."""
        element_type = cast(MemRefType[Attribute], b.type).get_element_type()
        gathered = self.load(
            at,
            b,
            [col, column.start],
            column.tile_type(element_type),
            [1, column.valid],
        )
        product = self.value(at, tile.MulOp(self.to_f32(at, gathered), scale))
        return self.value(at, tile.AddOp(acc, product))
