"""The CSR spmm/spmv row nest: index prefetch, an nnz-balanced core split and
resident column slices of `b`.

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

- **Resident slices of b** (`width` > 0): the cores are row groups (split as
  above) times column slices of `b`; each core loads its `K x width` slice
  into ub once and gathers each entry's row of it on chip (`tile.gather`)
  instead of a GM DMA, its group's entries in one window when they fit. The
  cost model (`resident_costs`) takes it where its per-entry slope is lower.

- **Gather runs** (`run` > 1, `gather-runs`; rows of `b` from GM): the
  entries of a loaded window go in groups of `run` (`SparseNest.runs`, the
  run detector of every nest that gathers by index); a group whose column
  indices are consecutive loads its `run` rows of `b` with one DMA and each
  entry takes its row of that tile on chip (`tile.gather` at the window's
  indices less the run's first), in entry order.

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
from pypto_mlir.targets import Target, cost

from .balanced_split import (
    EntryShare,
    EntryWork,
    Reader,
    core_loop,
    core_rows,
    entry_share,
    offsets_in_ub,
    smaller,
)
from .nest_builder import Valid
from .sparse_nests import Column, SparseBuffers, SparseNest
from .tiling_model import BUFFERING


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
    width: int = 0
    """Columns of the slice of `b` each core keeps in ub and gathers rows of
    on chip (`tile.gather`); 0: rows of `b` gathered from GM."""
    slices: int = 1
    """Column slices of `b`: the cores are `cores / slices` row groups (split
    by stored entries) times the slices."""
    group_window: int = 0
    """With a resident slice: the entries of a window loaded once for a whole
    row group when they fit (and nnz is at least as many); 0: per row."""
    divide: bool = False
    """The stored entries split evenly over the row groups, a row longer than
    a `SNAP`-th of a share divided where a share ends: its partial sums go to
    a GM workspace and the core where it begins adds them after a sync_all;
    False: whole rows (`core_rows`)."""
    store_rows: int = 1
    """With a resident slice: consecutive result rows stored with one DMA
    from a ub block (`row-block`, what fits beside the slice); 1: a DMA a
    row."""


Loaded = tuple[SSAValue, SSAValue, SSAValue]
"""A loaded window: its column indices (i32), values (f32) and first entry."""

SNAP = 16
"""With divided rows, a row of at most a `SNAP`-th of a core's share of work
is not divided (it goes to the core its middle falls in): a core's work is
then off its share by at most a `SNAP`-th, and short rows pay no combine."""

RESIDENT_ROW_COST = 16
"""A row's fixed work in entries for the split with divided rows from a
resident slice: its store (~290 cycles on MTE3) against an entry's chain (~24
cycles). Measured at 1024x1024 power-law (bench_sparse.spmm): 3, 8, 12, 16,
20, 24, 32 give 67131, 61033, 58023, 57320, 57897, 58848, 59732 cycles.
With the rows stored by blocks (`row-block`) a row costs little more than an
entry and the split takes `ROW_COST`: at 1024 power-law (rng 0 alone) 1, 3,
6, 16 give 41379, 43564, 47175, 49882 cycles; uniform 3: 42578 (16: 43030)."""

ROW_COST = 3
"""A row's fixed work in entries, for the core split: its two window DMAs
and its store against an entry's one gather DMA."""

WINDOW = 64
"""Entries of a prefetched window: 256 bytes of i32 indices (a row of 1 %
of 4096 columns has about 41 entries), so most rows take one window."""


GROUP_WINDOW = 2048
"""The most entries of a row group's one window (20 KiB of f16 values: i32
indices, values and their f32 copy), beside a resident slice of b."""

WINDOW_BYTES = 10
"""Bytes of ub an entry of a loaded window takes at most: its i32 index, its
value and the value's f32 copy (4 + 2 + 4 for f16; f32 values need no copy)."""

ROW_TILES = 8
"""f32 row tiles of a column slice live at once (accumulators, gathered rows,
casts and products, double-buffered by tile-pipeline)."""


RUN = 8
"""Entries of a group checked for consecutive column indices (`gather-runs`,
`SparseNest.runs`): a run moves its rows of b (of k in sddmm) as one DMA of
at most this many rows (fewer where ub holds fewer)."""


def gather_run(
    target: Target,
    enabled: bool,
    shape: tuple[int, int],
    cols: int,
    unit: int,
    element_type: Attribute,
    f32_tiles: int,
    f32_copies: int = 0,
) -> tuple[int, str]:
    """The rows of a run tile (`RUN`, halved until `BUFFERING` copies of it
    fit in ub beside `f32_tiles` double-buffered f32 row tiles and a window's
    indices) for rows of `n` columns gathered in column tiles of `cols`, and
    why (for the remark); 1: no runs. `shape`: the rows and columns of the
    gathered matrix (a run tile lies inside it); `cols` and `unit`: the nest's
    (`SparseNest.column_tiles`); `f32_copies`: f32 tiles of the run's rows
    beside it (sddmm's cast and product)."""
    if not enabled:
        return 1, "one row DMA an entry (gather-runs=false)"
    ub = target.memories["ub"]
    size = element_bytes(element_type)
    rows, n = shape
    step = min(cols, n)
    physical = 1 if n == 1 else _round_up(step, unit)
    if n % step:
        return 1, (
            f"one row DMA an entry: runs refused, the column tiles of {step} do "
            f"not divide the {n} columns (a run tile's tail is not supported)"
        )
    if physical * size % ub.alignment:
        return 1, (
            f"one row DMA an entry: runs refused, a row of {physical * size} bytes "
            f"is not whole {ub.alignment}-byte ub blocks (tile.gather takes rows of them)"
        )
    free = cast(int, ub.size) - BUFFERING * f32_tiles * physical * 4 - WINDOW * 4
    run = min(RUN, 1 << (rows.bit_length() - 1))  # a power of two, at most K
    while run > 1 and BUFFERING * run * physical * (size + 4 * f32_copies) > free:
        run //= 2
    if run < 2:
        why = "no tile of 2 rows fits in ub" if rows > 1 else "one row to gather"
        return 1, f"one row DMA an entry: runs refused, {why}"
    return run, (
        f"groups of {run} entries whose column indices are consecutive (compared "
        f"on the scalar unit) gather their rows as one {run}-row DMA (gather-runs)"
    )


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def group_window(target: Target, slice_bytes: int, window: int, width: int) -> int:
    """The entries of a row group's one window that fit in ub beside the
    resident slice (and the offsets' table: `slice_bytes`), the double-buffered per-row windows and the row tiles (a
    power of two up to `GROUP_WINDOW`, more than `window`); 0: none fits."""
    ub = cast(int, target.memories["ub"].size)
    free = ub - slice_bytes - 2 * window * WINDOW_BYTES - ROW_TILES * width * 4
    entries = GROUP_WINDOW
    while entries > window and entries * WINDOW_BYTES > free:
        entries //= 2
    return entries if entries > window else 0


class SpmmOptions(Protocol):
    """The tv-sparse-to-tile options the plan reads."""

    index_prefetch: bool
    nnz_balance: bool
    resident_b: bool
    divide_rows: bool
    row_block: int


def resident_slices(
    a: SparseBuffers, columns: int, target: Target, window: int
) -> tuple[int, int] | None:
    """The widest column slice of `b` (K x width, `a`'s element type) of whole
    32-byte rows that fits in ub beside the double-buffered windows and the row
    tiles, with at most one slice a core: (width, slices), or None."""
    size = element_bytes(a.element_type)
    ub = cast(int, target.memories["ub"].size)
    alignment = target.memories["ub"].alignment
    for slices in range(1, target.cores + 1):
        width = columns // slices
        if columns % slices or width * size % alignment:
            continue
        rest = 2 * window * WINDOW_BYTES + ROW_TILES * width * 4
        if a.shape[1] * width * size + rest <= ub:
            return width, slices
    return None


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
    width, slices = 0, 1
    resident = resident_slices(a, columns, target, window)
    if not options.resident_b:
        notes.append("rows of b gathered from GM (resident-b=false)")
    elif not (window and cores > 1 and resident):
        notes.append(
            "rows of b gathered from GM (a resident slice of b needs prefetched "
            "i32 indices, the balanced split and a slice of whole 32-byte rows "
            "that fits in ub)"
        )
    else:
        width, slices = resident
        groups = cores // slices
        costs = resident_costs(a, columns, target, window, groups, slices)
        if costs.resident_slope >= costs.gm_slope:
            notes.append(f"rows of b gathered from GM, the cost model's {costs.text()}")
            width, slices = 0, 1
        else:
            notes.append(
                f"b kept in ub as {slices} column slice(s) of {width}, its rows "
                f"gathered on chip (tile.gather): {groups} row groups x {slices} "
                f"slices, a group's entries in one window when they fit; the "
                f"cost model's {costs.text()}"
            )
            cores = groups * slices
            granule = gm // gcd(gm, width * element_bytes(a.element_type))
    shared, store_rows = 0, 1
    if width:
        slice_bytes = a.shape[1] * width * element_bytes(a.element_type)
        if in_ub:  # the offsets' table
            slice_bytes += -(-(a.shape[0] + 1) // 8) * 32
        store_rows, block_bytes = row_block(
            a, target, slice_bytes, window, width, options.row_block
        )
        notes.append(_row_block_text(store_rows, options.row_block))
        shared = group_window(target, slice_bytes + block_bytes, window, width)
    divide = False
    if cores > 1:
        divide, why = divide_rows(
            a, columns, target, options, (window, in_ub), granule, width, slices
        )
        notes.append(why)
    plan = SpmmPlan(
        window, cores, in_ub, granule, width, slices, shared, divide, store_rows
    )
    return plan, "; ".join(notes)


def row_block(
    a: SparseBuffers,
    target: Target,
    slice_bytes: int,
    window: int,
    width: int,
    most: int,
) -> tuple[int, int]:
    """The rows of a result block (at most `most`) whose f32 sums and cast
    copy fit in ub double-buffered beside the resident slice, the per-row
    windows and the row tiles, and their bytes; (1, 0): a DMA a row."""
    ub = cast(int, target.memories["ub"].size)
    free = ub - slice_bytes - 2 * window * WINDOW_BYTES - ROW_TILES * width * 4
    row_bytes = BUFFERING * width * (4 + element_bytes(a.element_type))
    rows = min(most, a.shape[0])  # a block lies inside the result
    while (
        rows > 1 and 2 * rows * row_bytes > free
    ):  # a margin: the row tiles are an estimate
        rows //= 2
    return (rows, rows * row_bytes) if rows > 1 else (1, 0)


def _row_block_text(rows: int, most: int) -> str:
    """How the row nest stores its rows (for the remark)."""
    if rows > 1:
        return (
            f"result rows stored {rows} at a time from a ub block (the most of "
            f"row-block={most} that fits in ub double-buffered beside the slice)"
        )
    why = "" if most <= 1 else ": no block of 2 rows fits in ub beside the slice"
    return f"result rows stored one at a time (row-block={most}{why})"


def divide_rows(
    a: SparseBuffers,
    columns: int,
    target: Target,
    options: SpmmOptions,
    reads: tuple[int, bool],
    granule: int,
    width: int,
    slices: int,
) -> tuple[bool, str]:
    """Whether the balanced split divides long rows (`SpmmPlan.divide`), and
    why: where it can pay, a row of all `K` entries on one core costing more
    than the combine (the estimates of `resident_costs` per entry, the
    `sync_all`, each core's second search of the offsets and a divided row's
    partials). `reads`: the plan's window and whether the offsets are in
    ub (else the searches would read GM on the scalar unit, a DataCache miss
    a step)."""
    window, in_ub = reads
    if not options.divide_rows:
        return False, "a row is never divided (spmm-divide-rows=false)"
    if not in_ub:
        return False, (
            "a row is never divided (the offsets are not in ub: each core's "
            "second search would read them from GM)"
        )
    if granule != 1:
        return False, (
            "a row is never divided (a row of the result is less than a "
            f"{target.memories['gm'].alignment}-byte GM block, which cores would share)"
        )
    groups = target.cores // slices
    rows, k = a.shape
    costs = resident_costs(a, columns, target, window, groups, slices)
    entry = costs.resident_slope * groups if width else costs.gm_slope * target.cores
    longest = k * entry
    steps = 4 * (rows.bit_length() + 1) * 4 * target.scalar.ub_load
    size = (width or columns) * 4
    # the partials of the groups a row of K entries spans when a share is the
    # rows' fixed work alone, loaded one after another, and the row's store
    spans = min(groups, k * groups // (ROW_COST * rows) + 1)
    partials = spans * cost.dma_cycles(target, ("gm", "ub"), 1, size)
    partials += cost.dma_cycles(target, ("ub", "gm"), 1, size)
    combine = target.sync.all_latency + steps + partials
    estimate = (
        f"a row of up to {k} entries estimated at {longest:.0f} cycles on one core, "
        f"the combine at {combine:.0f}"
    )
    if longest <= combine:
        return False, f"a row is never divided ({estimate})"
    return True, (
        f"the stored entries split evenly over the {groups} row groups, a row longer "
        f"than 1/{SNAP} of a share divided where a share ends, its partial sums "
        "added by the core where it begins after a sync_all (the sum of such a "
        f"row in another order: within the error bound; {estimate})"
    )


@dataclass(frozen=True)
class ResidentCosts:
    """Estimated cycles of the busiest core, `fixed + slope x nnz`, of the row
    nest gathering b's rows from GM and of the one gathering them on chip from
    a resident slice (the entries spread evenly over the cores)."""

    gm: float
    gm_slope: float
    resident: float
    resident_slope: float

    def text(self) -> str:
        crossing = ""
        if self.resident_slope < self.gm_slope and self.resident > self.gm:
            at = (self.resident - self.gm) / (self.gm_slope - self.resident_slope)
            crossing = f", faster from nnz = {at:.0f}"
        return (
            f"estimates: rows of b from GM {self.gm:.0f} + {self.gm_slope:.2f} x nnz "
            f"cycles, from a resident slice {self.resident:.0f} + "
            f"{self.resident_slope:.2f} x nnz{crossing}"
        )


def resident_costs(
    a: SparseBuffers,
    columns: int,
    target: Target,
    window: int,
    groups: int,
    slices: int,
) -> ResidentCosts:
    """The chains of both nests from the target's costs: per stored entry
    (the accumulator is carried, so nothing of an entry overlaps) its ub reads
    on S, the row gather (a GM DMA at the L2's hit latency, or a `vcopy`), the
    f32 cast, mul and add; per row its window DMAs (GM nest) and the store of
    its row tile; for the resident nest each core's slice load once."""
    size = element_bytes(a.element_type)
    rows, k = a.shape
    scalar = target.scalar

    def dma(path: tuple[str, str], bursts: int, length: int) -> float:
        return cost.l2_hit_dma_cycles(target, path, bursts, length)

    def vector(op: str, elements: int, dtype: str) -> int:
        return cost.vector_cycles_for(target, op, elements, dtype)

    def arithmetic(width: int) -> float:
        return (
            vector("cast", width, "f32")
            + vector("mul", width, "f32")
            + vector("add", width, "f32")
        )

    def row(width: int) -> float:
        return (
            2 * scalar.ub_load
            + vector("dup", width, "f32")
            + vector("cast", width, "f32")
            + dma(("ub", "gm"), 1, width * size)
        )

    width = columns // slices
    tiles = 1  # the GM nest's column tile: all columns (a tile of 128 fits)
    gm_entry = 2 * scalar.ub_load + tiles * (
        dma(("gm", "ub"), 1, columns * size) + arithmetic(columns)
    )
    gm_row = 2 * dma(("gm", "ub"), 1, window * 4) + row(columns)
    resident_entry = 2 * scalar.ub_load + vector("copy", width, str(a.element_type))
    resident_entry += arithmetic(width)
    slice_load = dma(("gm", "ub"), k, width * size)
    return ResidentCosts(
        gm=rows / target.cores * gm_row,
        gm_slope=gm_entry / target.cores,
        resident=slice_load + rows / groups * row(width),
        resident_slope=resident_entry / groups,
    )


@dataclass(frozen=True)
class _Part:
    """A row group's `EntryShare` of the stored entries, the workspace of the
    divided rows' partial sums (`2 x groups` rows of f32) and the group."""

    entries: EntryShare
    workspace: SSAValue
    group: SSAValue

    def slot(self, nest: SparseNest, at: InsertPoint, which: int) -> SSAValue:
        """This group's workspace row `which` (0: a row begun by an earlier
        group, 1: a row ended by a later one)."""
        return self.slot_of(nest, at, self.group, which)

    @staticmethod
    def slot_of(
        nest: SparseNest, at: InsertPoint, group: Valid, which: int
    ) -> SSAValue:
        """Group `group`'s workspace row `which`."""
        return nest.index_value(nest.scaled(at, group, 2, which))


class CsrSpmmNest(SparseNest):
    """Builds the CSR `out = a @ b` row nest of a `SpmmPlan`."""

    run: int = 1
    """Entries of a group whose consecutive column indices gather their rows
    of b from GM as one DMA (`gather_run`); 1: a DMA an entry."""

    def take_runs(
        self,
        target: Target,
        enabled: bool,
        shape: tuple[int, int],
        element_type: Attribute,
        f32_tiles: int,
        f32_copies: int = 0,
    ) -> str:
        """Sets `run` to `gather_run`'s for this nest's column tiles; why."""
        self.run, why = gather_run(
            target,
            enabled,
            shape,
            self.cols,
            self.unit,
            element_type,
            f32_tiles,
            f32_copies,
        )
        return why

    def spmm_csr(
        self, a: SparseBuffers, b: SSAValue, out: SSAValue, plan: SpmmPlan
    ) -> None:
        b, out = self.as_matrix(b), self.as_matrix(out)
        if not plan.width and not plan.divide:

            def row(
                at: InsertPoint, r: Valid, offset: Reader, nnz: SSAValue, window: int
            ) -> None:
                self._row(at, a, b, out, r, offset, nnz, window)

            self.over_rows(a, plan, ROW_COST, row)
            return

        rows = a.shape[0]
        zero = self.constant(0)
        nnz = self.value(self.top, memref.DimOp(a.indices, zero))
        n = cast(MemRefType[Attribute], b.type).get_shape()[1]
        groups = plan.cores // plan.slices
        workspace: SSAValue | None = None
        if plan.divide:
            # per row group, two slots: a row begun by an earlier group (0),
            # a row ended by a later one (1)
            workspace = self.value(
                self.top, memref.AllocOp([], [], MemRefType(f32, [2 * groups, n]))
            )

        def reader(at: InsertPoint) -> Reader:
            if plan.offsets_in_ub:
                return offsets_in_ub(self, at, a.offsets, rows)
            return lambda at, row: self.read_index(at, a.offsets, row)

        def place(at: InsertPoint, c: Valid) -> tuple[SSAValue, Column | None]:
            """Core `c`'s row group `c / slices` and, with resident slices, its
            column slice `c mod slices` of b."""
            c = self.index_value(c)
            if not plan.width:
                return c, None
            slices = self.constant(plan.slices)
            group = self.value(at, arith.DivUIOp(c, slices))
            first = self.value(
                at,
                arith.MuliOp(
                    self.value(at, arith.RemUIOp(c, slices)),
                    self.constant(plan.width),
                ),
            )
            return group, Column(first, plan.width, plan.width)

        def work(at: InsertPoint) -> EntryWork:
            # a row stored alone costs its DMA's start-up; by blocks, little
            row_cost = (
                RESIDENT_ROW_COST if plan.width and plan.store_rows <= 1 else ROW_COST
            )
            return EntryWork.of(self, at, nnz, rows, groups, row_cost, SNAP)

        def share(at: InsertPoint, offset: Reader, group: SSAValue) -> _Part:
            assert workspace is not None
            entries = entry_share(self, at, offset, group, groups, rows, work(at))
            return _Part(entries, workspace, group)

        def core(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            """Core `c`: its row group's rows (with the slice of b)."""
            group, column = place(at, c)
            resident: SSAValue | None = None
            if column is not None:
                k = cast(MemRefType[Attribute], b.type).get_shape()[0]
                resident = self.load(
                    at,
                    b,
                    [0, column.start],
                    TileType([k, plan.width], a.element_type, MemorySpace.UB),
                )
            offset = reader(at)
            part: _Part | None = None
            if plan.divide:
                part = share(at, offset, group)
                # the rows ending in the share, then the one straddling its end
                lo, first_entry = part.entries.lo, part.entries.first
                past = self.value(at, arith.AddiOp(part.entries.hi, self.constant(1)))
                hi = self.value(
                    at, arith.SelectOp(part.entries.straddles, past, part.entries.hi)
                )
                last_entry = part.entries.end
            else:
                lo, hi = core_rows(
                    self, at, offset, group, groups, nnz, rows, ROW_COST, plan.granule
                )
                first_entry, last_entry = offset(at, lo), offset(at, hi)
            count = self.value(at, arith.SubiOp(last_entry, first_entry))

            def rows_of(
                at: InsertPoint,
                window: int,
                slice_: SSAValue | None,
                shared: Loaded | None = None,
            ) -> None:
                where = None if column is None else (column, slice_)

                def each(
                    at: InsertPoint, r: Valid, _: list[SSAValue]
                ) -> list[SSAValue]:
                    self._row(
                        at, a, b, out, r, offset, nnz, window, where, shared, part
                    )
                    return []

                blocks = plan.store_rows
                if column is None or blocks <= 1:
                    self.loop(at, lo, hi, 1, [], each)
                    return

                def tile_of(at: InsertPoint, r: Valid) -> SSAValue:
                    got: list[SSAValue] = []
                    self._row(
                        at,
                        a,
                        b,
                        out,
                        r,
                        offset,
                        nnz,
                        window,
                        where,
                        shared,
                        keep=lambda at, t: got.append(t),
                    )
                    return got[0]

                def store(at: InsertPoint, t: SSAValue, r: Valid) -> None:
                    assert column is not None
                    self.store_result(at, t, a.element_type, out, r, column)

                if part is None:
                    self.blocked_rows(at, lo, hi, blocks, column, tile_of, store)
                    return
                # the first and last rows may be divided (their sums go to the
                # workspace): alone; the rows between are whole, by blocks
                first_end = smaller(self, at, self.add(at, lo, 1), hi)
                last = self.value(at, arith.SubiOp(hi, self.constant(1)))
                less = self.value(at, arith.CmpiOp(last, first_end, "slt"))
                last = self.value(at, arith.SelectOp(less, first_end, last))
                self.loop(at, lo, first_end, 1, [], each)
                self.blocked_rows(at, first_end, last, blocks, column, tile_of, store)
                self.loop(at, last, hi, 1, [], each)

            def emit(at: InsertPoint, window: int) -> None:
                """The rows from the resident slice with prefetched windows (the
                group's entries in one window when they fit), else GM reads."""
                if not window:
                    rows_of(at, 0, None)
                    return
                if not plan.group_window:
                    rows_of(at, window, resident)
                    return
                group_window, per_row = Block(), Block()
                here = InsertPoint.at_end(group_window)
                shared = self._window(here, a, first_entry, nnz, plan.group_window)
                rows_of(here, 0, resident, shared)
                self.insert(here, scf.YieldOp())
                here = InsertPoint.at_end(per_row)
                rows_of(here, window, resident)
                self.insert(here, scf.YieldOp())
                fits = self.value(
                    at,
                    arith.AndIOp(
                        self.value(
                            at,
                            arith.CmpiOp(nnz, self.constant(plan.group_window), "sge"),
                        ),
                        self.value(
                            at,
                            arith.CmpiOp(
                                count, self.constant(plan.group_window), "sle"
                            ),
                        ),
                    ),
                )
                self.insert(at, scf.IfOp(fits, [], [group_window], [per_row]))

            self.guarded(at, nnz, plan.window, emit)
            return []

        core_loop(self, plan.cores, core)
        if workspace is None:
            return

        def combine(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            """Core `c`: the divided row its group begins, if any (its slice)."""
            group, column = place(at, c)
            offset = reader(at)
            part = share(at, offset, group)
            entries = part.entries
            # the group where a divided row begins completes it
            begins = self.value(
                at, arith.CmpiOp(entries.first, offset(at, entries.hi), "sle")
            )
            owns = self.value(at, arith.AndIOp(entries.straddles, begins))
            body = Block()
            here = InsertPoint.at_end(body)
            self._combine(here, a, out, n, part, offset, work(here), column)
            self.insert(here, scf.YieldOp())
            self.insert(at, scf.IfOp(owns, [], [body]))
            return []

        core_loop(self, plan.cores, combine)
        self.insert(self.top, memref.DeallocOp.get(workspace))

    def _combine(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        out: SSAValue,
        n: int,
        part: _Part,
        offset: Reader,
        work: EntryWork,
        column: Column | None,
    ) -> None:
        """Row `hi` of the share, begun by this group and ended by later ones:
        its partial sums (this group's slot 1, then slot 0 of each later group
        whose share begins before the row's end) added in that order, cast and
        stored once (with the epilogue)."""
        hi = part.entries.hi
        row_end = offset(at, self.add(at, hi, 1))
        later = work.cores_before(self, at, work.position(self, at, row_end, hi))
        following = self.value(at, arith.AddiOp(part.group, self.constant(1)))

        def columns(at: InsertPoint, column: Column) -> None:
            def partial(at: InsertPoint, slot: SSAValue) -> SSAValue:
                return self.load(
                    at,
                    part.workspace,
                    [slot, column.start],
                    column.tile_type(f32),
                    [1, column.valid],
                )

            def add(at: InsertPoint, g: Valid, sums: list[SSAValue]) -> list[SSAValue]:
                other = partial(at, _Part.slot_of(self, at, g, 0))
                return [self.value(at, tile.AddOp(sums[0], other))]

            mine = partial(at, part.slot(self, at, 1))
            (total,) = self.loop(at, following, later, 1, [mine], add)
            self.store_result(at, total, a.element_type, out, hi, column)

        if column is None:
            self.column_tiles(at, n, columns)
        else:
            columns(at, column)

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
        resident: tuple[Column, SSAValue | None] | None = None,
        shared: Loaded | None = None,
        part: _Part | None = None,
        keep: Callable[[InsertPoint, SSAValue], None] | None = None,
    ) -> None:
        """Row `r`: per column tile an f32 accumulator over the row's entries
        (windows of `window` entries prefetched into ub, or GM reads); with
        `resident`, only that column tile, its rows gathered from the ub slice
        of b when one is given; with `shared`, every entry of the row lies in
        that loaded window; with `part`, only the row's entries in that share,
        the sum of a row divided with other shares stored to its slot of the
        workspace instead (f32, not cast)."""
        start, end = offset(at, r), offset(at, self.add(at, r, 1))
        divided: tuple[SSAValue, SSAValue] | None = None
        if part is not None:
            entries = part.entries
            begun = self.value(at, arith.CmpiOp(start, entries.first, "slt"))
            ended = self.value(at, arith.CmpiOp(entries.end, end, "slt"))
            start = self.value(at, arith.SelectOp(begun, entries.first, start))
            end = smaller(self, at, end, entries.end)
            divided = (begun, self.value(at, arith.OrIOp(begun, ended)))
        element_type, values = a.element_type, self.block_values(a)
        n = cast(MemRefType[Attribute], b.type).get_shape()[1]
        first: Loaded | None = shared
        ub = resident[1] if resident is not None else None
        if window and shared is None:  # the row's first window: loads of its body
            first = self._window(at, a, start, nnz, window)

        def columns(at: InsertPoint, column: Column) -> None:
            acc = self.zeros(at, column.tile_type(f32), [1, column.valid])
            if first is None:
                (total,) = self._gm_entries(at, a, values, b, column, start, end, acc)
            elif shared is not None:
                (total,) = self._entries(at, b, column, shared, start, end, acc, ub)
            else:
                stop = self.value(at, arith.AddiOp(start, self.constant(window)))
                (total,) = self._entries(
                    at, b, column, first, start, smaller(self, at, end, stop), acc, ub
                )

                def later(
                    at: InsertPoint, q: Valid, accs: list[SSAValue]
                ) -> list[SSAValue]:
                    q = self.index_value(q)
                    loaded = self._window(at, a, q, nnz, window)
                    limit = self.value(at, arith.AddiOp(q, self.constant(window)))
                    return self._entries(
                        at,
                        b,
                        column,
                        loaded,
                        q,
                        smaller(self, at, end, limit),
                        accs[0],
                        ub,
                    )

                (total,) = self.loop(at, stop, end, window, [total], later)

            def whole(at: InsertPoint) -> None:
                if keep is not None:
                    keep(at, total)
                    return
                self.store_result(at, total, element_type, out, r, column)

            if part is None or divided is None:
                whole(at)
                return
            begun, partial = divided
            halves = Block(), Block()
            here = InsertPoint.at_end(halves[0])
            slot = self.value(
                here,
                arith.SelectOp(
                    begun, part.slot(self, here, 0), part.slot(self, here, 1)
                ),
            )
            self.store(here, total, part.workspace, [slot, column.start])
            self.insert(here, scf.YieldOp())
            here = InsertPoint.at_end(halves[1])
            whole(here)
            self.insert(here, scf.YieldOp())
            self.insert(at, scf.IfOp(partial, [], [halves[0]], [halves[1]]))

        if resident is None:
            self.column_tiles(at, n, columns)
        else:
            columns(at, resident[0])

    def _window(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        q: SSAValue,
        nnz: SSAValue,
        window: int,
        as_f32: bool = True,
    ) -> Loaded:
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
        loaded: Loaded,
        lo: SSAValue,
        hi: SSAValue,
        acc: SSAValue,
        resident: SSAValue | None = None,
    ) -> list[SSAValue]:
        """The entries `lo .. hi` of a loaded window, accumulated into `acc`;
        their rows of b gathered from GM, or on chip from the `resident` slice."""
        indices, values, base = loaded
        if resident is None and self.run > 1:
            return self._run_entries(at, b, column, loaded, lo, hi, acc)

        def entry(at: InsertPoint, p: Valid, accs: list[SSAValue]) -> list[SSAValue]:
            k = self.value(at, arith.SubiOp(self.index_value(p), base))
            if resident is None:
                col = self.value(at, tile.ExtractOp(indices, [k]))
                scale = self.value(at, tile.ExtractOp(values, [k]))
                gathered = self._gm_row(at, b, column, col)
            else:
                scale = self.value(at, tile.ExtractOp(values, [k]))
                gathered = self.value(at, tile.GatherOp(resident, indices, k, 1))
            return [self._accumulate(at, gathered, scale, accs[0])]

        return self.loop(at, lo, hi, 1, [acc], entry)

    def _run_entries(
        self,
        at: InsertPoint,
        b: SSAValue,
        column: Column,
        loaded: Loaded,
        lo: SSAValue,
        hi: SSAValue,
        acc: SSAValue,
    ) -> list[SSAValue]:
        """`_entries` from GM by runs (`SparseNest.runs`): a group of `run`
        consecutive column indices loads its rows of b as one `run`-row tile
        and its entries take their rows of it on chip (`tile.gather` at the
        window's indices less the run's first), accumulated in entry order as
        one by one (so exact); other entries gather their row alone."""
        indices, values, base = loaded
        run = self.run
        element_type = cast(MemRefType[Attribute], b.type).get_element_type()

        def place(at: InsertPoint, p: Valid) -> SSAValue:
            return self.value(at, arith.SubiOp(self.index_value(p), base))

        def read(at: InsertPoint, p: Valid) -> SSAValue:
            return self.value(at, tile.ExtractOp(indices, [place(at, p)]))

        def single(
            at: InsertPoint, p: Valid, col: SSAValue, accs: list[SSAValue]
        ) -> list[SSAValue]:
            scale = self.value(at, tile.ExtractOp(values, [place(at, p)]))
            gathered = self._gm_row(at, b, column, col)
            return [self._accumulate(at, gathered, scale, accs[0])]

        def whole(
            at: InsertPoint, p: Valid, col: SSAValue, accs: list[SSAValue]
        ) -> list[SSAValue]:
            rows = self.load(
                at,
                b,
                [col, column.start],
                column.tile_type(element_type, run),
                [run, column.valid],
            )
            shift = self.value(at, arith.IndexCastOp(col, i32))
            relative = self.value(at, tile.SubOp(indices, shift))
            k, total = place(at, p), accs[0]
            for t in range(run):
                kt = self.index_value(self.add(at, k, t))
                scale = self.value(at, tile.ExtractOp(values, [kt]))
                gathered = self.value(at, tile.GatherOp(rows, relative, kt, 1))
                total = self._accumulate(at, gathered, scale, total)
            return [total]

        return self.runs(at, lo, hi, run, read, [acc], whole, single)

    def _gm_entries(
        self,
        at: InsertPoint,
        a: SparseBuffers,
        values: SSAValue,
        b: SSAValue,
        column: Column,
        start: SSAValue,
        end: SSAValue,
        acc: SSAValue,
    ) -> list[SSAValue]:
        """The entries `start .. end` read from GM (`values` as `nnz x 1 x 1`),
        each multiplied by its row of b (from GM) and added to `acc`."""

        def entry(at: InsertPoint, p: Valid, accs: list[SSAValue]) -> list[SSAValue]:
            col = self.read_index(at, a.indices, p)
            value = self.load(
                at, values, [p, 0, 0], TileType([1, 1], a.element_type, MemorySpace.UB)
            )
            scale = self.to_f32(at, value)
            gathered = self._gm_row(at, b, column, col)
            return [self._accumulate(at, gathered, scale, accs[0])]

        return self.loop(at, start, end, 1, [acc], entry)

    def _gm_row(
        self, at: InsertPoint, b: SSAValue, column: Column, col: SSAValue
    ) -> SSAValue:
        """The column tile of b's row `col`, gathered from GM."""
        element_type = cast(MemRefType[Attribute], b.type).get_element_type()
        return self.load(
            at,
            b,
            [col, column.start],
            column.tile_type(element_type),
            [1, column.valid],
        )

    def _accumulate(
        self, at: InsertPoint, gathered: SSAValue, scale: SSAValue, acc: SSAValue
    ) -> SSAValue:
        """`acc + f32(gathered) * scale` (scale: an f32 scalar or a 1x1 /
        1-element tile)."""
        product = self.value(at, tile.MulOp(self.to_f32(at, gathered), scale))
        return self.value(at, tile.AddOp(acc, product))
