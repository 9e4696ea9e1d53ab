"""The CSR spmm nest over row ranges of `b`: `b` read from GM once per core.

The row nest of passes/csr_spmm_nest.py gathers the row of `b` of every
stored entry, from GM or from a resident column slice; at 4096 deep a column
slice is 16 columns, so every entry's chain runs on 8 cores. This nest splits
`b` by rows instead (docs/sparse.md, *Row ranges of b*): the cores are
`ranges` column ranges of `a` (= row ranges of `b`, `span` rows each) times
row groups (split by stored entries, passes/balanced_split.py). Core `c`
loads `b[k0 : k0 + span, :]` into ub once (a tile from `min(k0, K - span)`);
per block of rows of its group it loads the block's indices and values in one
chunk (per-row windows when they do not fit) and, without the offsets' table
in ub, the block's offsets, and shifts the indices by the tile's first row
(one vector op); per row it finds the run of entries whose column falls in
its range by two binary searches (a row's entries are sorted), gathers their
rows of the resident range on chip (`tile.gather`) and stores its f32 partial
row to a GM workspace, several consecutive rows a DMA from a ub block where
one fits (`row-block`, SparseNest.blocked_rows). After a `sync_all`, each core adds the `ranges`
partials of its rows, a block of rows at a time, in range order, and stores
them (with the epilogue). The sum of a row is thus split by column range:
each range's entries in their order, then the ranges' partials in range
order (one f32 rounding more per range; within tv.spmm's error bound).
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
from pypto_mlir.targets import Target, cost

from .balanced_split import (
    Reader,
    core_loop,
    core_rows,
    lower_bound,
    offsets_in_ub,
    smaller,
)
from .csr_spmm_nest import (
    ROW_COST,
    ROW_TILES,
    WINDOW_BYTES,
    CsrSpmmNest,
    Loaded,
    SpmmOptions,
    SpmmPlan,
)
from .nest_builder import Valid
from .sparse_nests import Column, SparseBuffers
from .tiling_model import BUFFERING


class RangeOptions(SpmmOptions, Protocol):
    """The tv-sparse-to-tile options the choice reads."""

    b_ranges: bool


ASSUMED_DENSITY = 0.01
"""The density the choice is estimated at: nnz is a run-time size (the
issue's SpMM is 1 %)."""

COMBINE_ROWS = 32
"""The most rows of a combine tile (16 KiB of f32 at 128 columns)."""

CHUNK = 1024
"""Entries of the window a block of rows loads its indices and values in
(14 KiB with the shifted indices and the values' f32 copy)."""

BLOCK_ROWS = 64
"""The most rows of a block sharing one chunk."""


@dataclass(frozen=True)
class RangePlan:
    """How the row-range nest splits `b` and the cores."""

    ranges: int
    """Row ranges of `b` (column ranges of `a`)."""
    span: int
    """Rows of `b` a range holds (the last one may hold fewer)."""
    groups: int
    """Row groups of `a`: the cores are `ranges x groups`."""
    block: int
    """Rows of a combine tile (divides the rows)."""
    block_rows: int
    """Rows of a block whose entries are loaded in one chunk when they fit
    (at the assumed density with half as many again to spare)."""
    table: bool
    """The offsets' table is in ub (else each block loads its rows' offsets,
    and the group search reads them from GM)."""
    chunk: int
    """Entries of a block's chunk (a power of two up to `CHUNK` that fits in
    ub double-buffered); 0: per-row windows only."""
    store_rows: int = 1
    """Consecutive partial rows stored with one DMA from a ub block tile (at
    most `row-block`, what fits in ub double-buffered beside the rest, and a
    chunk's block of rows); 1: one DMA a row."""


def range_split(
    a: SparseBuffers,
    columns: int,
    target: Target,
    plan: SpmmPlan,
    density: float,
    row_block: int = 1,
) -> RangePlan | None:
    """The fewest row ranges of `b` (a divisor of the cores) whose range, all
    `columns` wide, fits in ub beside the offsets' table (or without it: fewer
    ranges are fewer partial rows, each a store), the double-buffered windows
    (and their shifted indices) and the row tiles; None if none does or the
    rows of `b` are not whole 32-byte blocks. In what ub has left: the chunk
    of a block of rows (the largest that fits), then, with `row_block` > 1,
    the block tile of partial rows stored at once (up to `row_block` rows and
    a chunk's block of rows). The chunk comes first: at 4096 x 4096 x 128 a
    chunk of 256 leaves room for blocks of 4 rows where one of 512 leaves
    none, and measured 1.14x slower (docs/sparse.md, *Row ranges of b*)."""
    size = element_bytes(a.element_type)
    ub = cast(int, target.memories["ub"].size)
    alignment = target.memories["ub"].alignment
    if columns * size % alignment or not plan.window or plan.cores < 2:
        return None
    rows, k = a.shape
    tables = [(-(-(rows + 1) // 8) * 32, True)] if plan.offsets_in_ub else []
    tables.append((2 * (BLOCK_ROWS + 8) * 4, False))  # a block's offsets
    rest = 2 * plan.window * (WINDOW_BYTES + 4) + ROW_TILES * columns * 4
    block = gcd(rows, COMBINE_ROWS)
    fitting = (
        (ranges, table, in_ub)
        for ranges in range(2, target.cores + 1)
        if target.cores % ranges == 0
        for table, in_ub in tables
    )
    for ranges, table, in_ub in fitting:
        span = -(-k // ranges)
        free = ub - span * columns * size - rest - table
        if free < 0:
            continue
        chunk = CHUNK
        while chunk > plan.window and 2 * chunk * (WINDOW_BYTES + 4) > free:
            chunk //= 2
        chunk = chunk if chunk > plan.window else 0
        block_rows = BLOCK_ROWS
        while block_rows > 1 and block_rows * density * k * 1.5 > chunk:
            block_rows //= 2
        left = free - (2 * chunk * (WINDOW_BYTES + 4) if chunk else 0)
        stored = min(row_block, rows, block_rows if chunk else rows)
        while stored > 1 and BUFFERING * stored * columns * 4 > left:
            stored //= 2
        groups = target.cores // ranges
        return RangePlan(
            ranges, span, groups, block, block_rows, in_ub, chunk, max(stored, 1)
        )
    return None


@dataclass(frozen=True)
class PipeCosts:
    """Busy cycles of the busiest core's pipes, at a given nnz (the nest's
    loops are software-pipelined, so the busiest pipe bounds the run)."""

    pipes: dict[str, float]

    @property
    def bound(self) -> tuple[str, float]:
        return max(self.pipes.items(), key=lambda item: (item[1], item[0]))

    def text(self) -> str:
        pipe, cycles = self.bound
        return f"{cycles:.0f} ({pipe})"


def gm_pipes(
    a: SparseBuffers, columns: int, target: Target, window: int, nnz: int
) -> PipeCosts:
    """The GM-gather row nest's busiest core: per entry a row DMA (MTE2), two
    ub reads (S) and cast, mul, add (V); per row two window DMAs, its store."""
    size = element_bytes(a.element_type)
    rows = a.shape[0] / target.cores
    entries = nnz / target.cores
    ub_load = target.scalar.ub_load
    arithmetic = sum(
        cost.vector_cycles_for(target, op, columns, "f32")
        for op in ("cast", "mul", "add")
    )
    return PipeCosts(
        {
            "MTE2": entries
            * cost.l2_hit_dma_cycles(target, ("gm", "ub"), 1, columns * size)
            + rows * 2 * cost.l2_hit_dma_cycles(target, ("gm", "ub"), 1, window * 4),
            "MTE3": rows
            * cost.l2_hit_dma_cycles(target, ("ub", "gm"), 1, columns * size),
            "S": (entries * 2 + rows * 2) * ub_load,
            "V": entries * arithmetic,
        }
    )


def range_pipes(
    a: SparseBuffers,
    columns: int,
    target: Target,
    window: int,
    ranges: RangePlan,
    nnz: int,
) -> PipeCosts:
    """The row-range nest's busiest core: its range of b loaded once; per row
    of its group (each row visited by `ranges` cores) two window DMAs, the
    index shift and value cast, two searches of `bit_length(window)` ub
    reads and the f32 partial row's store; per entry (each on one core) two ub
    reads, the on-chip gather and cast, mul, add; the combine's loads, adds
    and stores of its rows a block at a time."""
    size = element_bytes(a.element_type)
    rows, k = a.shape
    cores = ranges.ranges * ranges.groups
    chunk = ranges.chunk or window  # no chunks: per-row windows
    visits = rows / ranges.groups
    entries = nnz / cores
    ub_load = target.scalar.ub_load
    steps = 2 * window.bit_length()
    dtype = str(a.element_type)
    per_entry_v = cost.vector_cycles_for(target, "copy", columns, dtype) + sum(
        cost.vector_cycles_for(target, op, columns, "f32")
        for op in ("cast", "mul", "add")
    )
    per_row_v = (
        cost.vector_cycles_for(target, "dup", columns, "f32")
        + (
            cost.vector_cycles_for(target, "add", chunk, "i32")
            + cost.vector_cycles_for(target, "cast", chunk, "f32")
        )
        / ranges.block_rows
    )
    blocks = rows / cores / ranges.block
    combine_v = ranges.ranges * cost.vector_cycles_for(
        target, "add", ranges.block * columns, "f32"
    )
    return PipeCosts(
        {
            "MTE2": cost.l2_hit_dma_cycles(
                target, ("gm", "ub"), ranges.span, columns * size
            )
            + visits
            / ranges.block_rows
            * 2
            * cost.l2_hit_dma_cycles(target, ("gm", "ub"), 1, chunk * 4)
            + blocks
            * ranges.ranges
            * cost.l2_hit_dma_cycles(target, ("gm", "ub"), ranges.block, columns * 4),
            "MTE3": visits
            / ranges.store_rows
            * cost.l2_hit_dma_cycles(
                target, ("ub", "gm"), ranges.store_rows, columns * 4
            )
            + blocks
            * cost.l2_hit_dma_cycles(
                target, ("ub", "gm"), ranges.block, columns * size
            ),
            "S": (visits * (2 + steps) + entries * 2) * ub_load,
            "V": entries * per_entry_v + visits * per_row_v + blocks * combine_v,
        }
    )


def range_plan(
    a: SparseBuffers,
    columns: int,
    target: Target,
    options: RangeOptions,
    plan: SpmmPlan,
    density: float,
) -> tuple[RangePlan | None, str]:
    """Whether the CSR spmm takes the row-range nest instead of `plan`'s row
    nest, and why (for the remark): where it fits and the pipe estimates of
    both at `density` (the nnz is a run-time size) say it is faster."""
    if not options.b_ranges:
        return None, "row ranges of b off (b-ranges=false)"
    ranges = range_split(a, columns, target, plan, density, options.row_block)
    if ranges is None:
        return None, (
            "no row ranges of b (they need prefetched i32 indices, the balanced "
            "split, rows of b of whole 32-byte blocks and a range that fits in ub)"
        )
    nnz = max(1, round(density * a.shape[0] * a.shape[1]))
    mine = range_pipes(a, columns, target, plan.window, ranges, nnz)
    rows_nest = gm_pipes(a, columns, target, plan.window, nnz)
    estimate = (
        f"the pipe estimates at {density * 100:g}% density ({nnz} entries): row ranges "
        f"{mine.text()}, rows of b from GM {rows_nest.text()}"
    )
    if plan.width or mine.bound[1] >= rows_nest.bound[1]:
        kept = "a resident column slice kept" if plan.width else "not taken"
        return None, f"row ranges of b {kept}; {estimate}"
    return ranges, (
        f"b split into {ranges.ranges} row ranges of {ranges.span} kept in ub, "
        f"{ranges.ranges} ranges x {ranges.groups} row groups, each core's partial "
        f"rows added after a sync_all {ranges.block} rows at a time; "
        + _stored_text(ranges, options.row_block)
        + "; "
        + (
            "the offsets in ub"
            if ranges.table
            else f"the offsets loaded per block of {ranges.block_rows} rows"
        )
        + (
            f", indices and values per block in a chunk of {ranges.chunk}"
            if ranges.chunk
            else ", indices and values in per-row windows"
        )
        + f"; {estimate}"
    )


def _stored_text(ranges: RangePlan, row_block: int) -> str:
    """How the partial rows are stored, and why (for the remark)."""
    if ranges.store_rows > 1:
        return (
            f"partial rows stored {ranges.store_rows} at a time from a ub block "
            f"(the most of row-block={row_block} that fits in ub double-buffered "
            "beside the range" + (" and a block's chunk)" if ranges.chunk else ")")
        )
    if row_block <= 1:
        why = ""
    elif ranges.chunk and ranges.block_rows == 1:
        why = ": a block of rows sharing a chunk is one row"
    else:
        why = ": no block of 2 rows fits in ub beside the range"
    return f"partial rows stored one at a time (row-block={row_block}{why})"


class CsrRangeNest(CsrSpmmNest):
    """Builds the CSR `out = a @ b` nest over row ranges of `b`."""

    def spmm_ranges(
        self,
        a: SparseBuffers,
        b: SSAValue,
        out: SSAValue,
        plan: SpmmPlan,
        ranges: RangePlan,
    ) -> None:
        b, out = self.as_matrix(b), self.as_matrix(out)
        rows, k = a.shape
        n = cast(MemRefType[Attribute], b.type).get_shape()[1]
        column = Column(0, n, n)
        workspace = self.value(
            self.top,
            memref.AllocOp([], [], MemRefType(f32, [ranges.ranges * rows, n])),
        )
        nnz = self.value(self.top, memref.DimOp(a.indices, self.constant(0)))
        cores = ranges.ranges * ranges.groups

        def reader(at: InsertPoint) -> Reader:
            if ranges.table:
                return offsets_in_ub(self, at, a.offsets, rows)
            return lambda at, row: self.read_index(at, a.offsets, row)

        def partials(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            c = self.index_value(c)
            count = self.constant(ranges.ranges)
            group = self.value(at, arith.DivUIOp(c, count))
            which = self.value(at, arith.RemUIOp(c, count))
            k0 = self.value(at, arith.MuliOp(which, self.constant(ranges.span)))
            held = smaller(
                self,
                at,
                self.value(at, arith.SubiOp(self.constant(k), k0)),
                self.constant(ranges.span),
            )
            # the tile starts at min(k0, k - span), so that it lies inside b
            # (static rows); the range's rows are `low .. low + held` of it
            row0 = smaller(self, at, k0, self.constant(k - ranges.span))
            resident = self.load(
                at,
                b,
                [row0, 0],
                TileType([ranges.span, n], a.element_type, MemorySpace.UB),
            )
            shift = self.value(at, arith.IndexCastOp(row0, i32))
            low = self.value(at, arith.SubiOp(k0, row0))
            high = self.value(at, arith.AddiOp(low, held))
            first = self.value(
                at, arith.MuliOp(which, self.constant(rows))
            )  # the range's first workspace row
            offset = reader(at)
            lo, hi = core_rows(
                self, at, offset, group, ranges.groups, nnz, rows, ROW_COST, 1
            )

            def rows_of(
                at: InsertPoint,
                start: Valid,
                end: Valid,
                window: int,
                chunk: Loaded | None = None,
                rows_offset: Reader | None = None,
            ) -> None:
                def row(at: InsertPoint, r: Valid) -> SSAValue:
                    return self._range_row(
                        at,
                        a,
                        b,
                        (resident, shift, low, high, k0),
                        column,
                        rows_offset or offset,
                        nnz,
                        window,
                        r,
                        chunk,
                    )

                def store(at: InsertPoint, total: SSAValue, r: Valid) -> None:
                    self.store(at, total, workspace, [self.scaled(at, r, 1, first), 0])

                self.blocked_rows(at, start, end, ranges.store_rows, column, row, store)

            def emit(at: InsertPoint, window: int) -> None:
                if not window or not ranges.chunk:
                    rows_of(at, lo, hi, window)
                    return
                self._blocks(
                    at, a, ranges, which, lo, hi, offset, nnz, shift, rows_of, window
                )

            self.guarded(at, nnz, plan.window, emit)
            return []

        def combine(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            blocks = self.constant(rows // ranges.block)
            start, end = (self.core_share(at, blocks, c, cores, k) for k in (0, 1))

            def block(at: InsertPoint, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
                r0 = self.scaled(at, j, ranges.block)
                tile_type = column.tile_type(f32, ranges.block)
                total = self.load(at, workspace, [r0, 0], tile_type)
                for g in range(1, ranges.ranges):
                    part = self.load(
                        at, workspace, [self.scaled(at, r0, 1, g * rows), 0], tile_type
                    )
                    total = self.value(at, tile.AddOp(total, part))
                self.store_result(at, total, a.element_type, out, r0, column)
                return []

            self.loop(at, start, end, 1, [], block)
            return []

        core_loop(self, cores, partials)
        core_loop(self, cores, combine)
        self.insert(self.top, memref.DeallocOp.get(workspace))

    def _blocks(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        ranges: RangePlan,
        which: SSAValue,
        lo: SSAValue,
        hi: SSAValue,
        offset: Reader,
        nnz: SSAValue,
        shift: SSAValue,
        rows_of: Callable[
            [InsertPoint, Valid, Valid, int, Loaded | None, Reader | None], None
        ],
        window: int,
    ) -> None:
        """The rows `lo .. hi` in blocks of `block_rows`: a block whose entries
        fit one chunk (and nnz at least a chunk) loads them once, else per-row
        windows. The cores of a row group start at different blocks (range
        `which` at `which / ranges` of them, wrapping), so that one core's
        first read of a chunk misses the L2 while the others' hit."""
        size = ranges.block_rows
        count = self.value(at, arith.SubiOp(hi, lo))
        blocks = self.value(
            at,
            arith.DivUIOp(
                self.value(at, arith.AddiOp(count, self.constant(size - 1))),
                self.constant(size),
            ),
        )
        stagger = self.value(
            at,
            arith.DivUIOp(
                self.value(at, arith.MuliOp(which, blocks)),
                self.constant(ranges.ranges),
            ),
        )

        def block(at: InsertPoint, i: Valid, _: list[SSAValue]) -> list[SSAValue]:
            j = self.value(at, arith.AddiOp(self.index_value(i), stagger))
            wraps = self.value(at, arith.CmpiOp(j, blocks, "sge"))
            j = self.value(
                at, arith.SelectOp(wraps, self.value(at, arith.SubiOp(j, blocks)), j)
            )
            start = self.value(
                at,
                arith.AddiOp(lo, self.value(at, arith.MuliOp(j, self.constant(size)))),
            )
            end = smaller(
                self, at, self.value(at, arith.AddiOp(start, self.constant(size))), hi
            )
            reads = offset
            if not ranges.table:  # the block's offsets, loaded into ub
                reads = self._block_offsets(at, a, start, size)
            first, last = reads(at, start), reads(at, end)
            entries = self.value(at, arith.SubiOp(last, first))
            fits = self.value(
                at,
                arith.AndIOp(
                    self.value(
                        at, arith.CmpiOp(entries, self.constant(ranges.chunk), "sle")
                    ),
                    self.value(
                        at, arith.CmpiOp(nnz, self.constant(ranges.chunk), "sge")
                    ),
                ),
            )
            chunked, per_row = Block(), Block()
            here = InsertPoint.at_end(chunked)
            indices, values, base = self._window(here, a, first, nnz, ranges.chunk)
            shifted = self.value(here, tile.SubOp(indices, shift))
            rows_of(here, start, end, window, (shifted, values, base), reads)
            self.insert(here, scf.YieldOp())
            here = InsertPoint.at_end(per_row)
            rows_of(here, start, end, window, None, reads)
            self.insert(here, scf.YieldOp())
            self.insert(at, scf.IfOp(fits, [], [chunked], [per_row]))
            return []

        self.loop(at, 0, blocks, 1, [], block)

    def _block_offsets(
        self, at: InsertPoint, a: SparseBuffers, start: SSAValue, size: int
    ) -> Reader:
        """The offsets of rows `start ..` (at most `size` rows and the end)
        loaded into ub with one DMA from `min(start, rows + 1 - loaded)` (so
        that the tile lies inside the offsets), read by `tile.extract`."""
        padded = -(-(size + 1) // 8) * 8
        loaded = min(padded, a.shape[0] + 1)
        base = smaller(self, at, start, self.constant(a.shape[0] + 1 - loaded))
        table = self.load(
            at,
            a.offsets,
            [base],
            TileType([padded], i32, MemorySpace.UB, valid=[loaded]),
        )

        def offset(at: InsertPoint, row: Valid) -> SSAValue:
            position = self.value(at, arith.SubiOp(self.index_value(row), base))
            return self.value(at, tile.ExtractOp(table, [position]))

        return offset

    def _range_row(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        b: SSAValue,
        resident: tuple[SSAValue, SSAValue, SSAValue, SSAValue, SSAValue],
        column: Column,
        offset: Reader,
        nnz: SSAValue,
        window: int,
        r: Valid,
        chunk: Loaded | None = None,
    ) -> SSAValue:
        """Row `r`'s f32 partial over the entries whose column lies in the
        resident range: per window
        of the row, the run found by two binary searches of its shifted
        indices, gathered from the range on chip; without windows (nnz <
        window) the first range's core reads the row's entries and rows of b
        from GM, the others store zeros.
        `resident`: the tile of b, its first row as an i32, the range's first
        and end row in it and the range's first row of b;
        `chunk`: a loaded chunk (shifted indices) holding the row's entries."""
        slice_, shift, low, high, k0 = resident
        start, end = offset(at, r), offset(at, self.add(at, r, 1))
        acc = self.zeros(at, column.tile_type(f32), [1, column.valid])
        if not window:  # the first range takes the whole row, the others none
            first = self.value(at, arith.CmpiOp(k0, self.constant(0), "eq"))
            end = self.value(at, arith.SelectOp(first, end, start))
            values = self.block_values(a)
            (total,) = self._gm_entries(at, a, values, b, column, start, end, acc)
            return total

        def windows(at: InsertPoint, q: Valid, accs: list[SSAValue]) -> list[SSAValue]:
            q = self.index_value(q)
            if chunk is None:
                indices, values, base = self._window(at, a, q, nnz, window)
                shifted = self.value(at, tile.SubOp(indices, shift))
            else:
                shifted, values, base = chunk
            stop = smaller(
                self, at, end, self.value(at, arith.AddiOp(q, self.constant(window)))
            )
            lo = self._lower_bound(at, shifted, base, q, stop, low, window)
            hi = self._lower_bound(at, shifted, base, lo, stop, high, window)
            return self._entries(
                at, b, column, (shifted, values, base), lo, hi, accs[0], slice_
            )

        (total,) = self.loop(at, start, end, window, [acc], windows)
        return total

    def _lower_bound(
        self,
        at: InsertPoint,
        shifted: SSAValue,
        base: SSAValue,
        lo: SSAValue,
        hi: SSAValue,
        key: SSAValue,
        window: int,
    ) -> SSAValue:
        """The first entry `p` in `[lo, hi]` with `p == hi` or shifted column
        `>= key` (the entries `lo .. hi` lie in the window at `base`, sorted):
        `bit_length(window)` unrolled steps of ub reads (at most `window + 1`
        candidates)."""
        last = self.constant(cast(TileType, shifted.type).get_shape()[0] - 1)

        def reaches(at: InsertPoint, mid: SSAValue) -> SSAValue:
            at_end = self.value(at, arith.CmpiOp(mid, end, "sge"))
            position = smaller(self, at, self.value(at, arith.SubiOp(mid, base)), last)
            col = self.value(at, tile.ExtractOp(shifted, [position]))
            reached = self.value(at, arith.CmpiOp(col, key, "sge"))
            return self.value(at, arith.OrIOp(at_end, reached))

        end = hi
        return lower_bound(self, at, lo, hi, window.bit_length(), reaches)
