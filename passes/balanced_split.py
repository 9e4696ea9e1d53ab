"""A core split of (block) rows by stored entries, found at run time.

The CSR spmm nest (passes/csr_spmm_nest.py) and the fused block-sparse
attention nest (passes/sparse_attention.py) split their rows over the cores
by work rather than by count: a static loop over the cores marked
`CORE_LOOP_ATTR` (tile-to-hw gives each core one trip), in which core `c`
finds its rows `[first(c), first(c + 1))` from the offsets by a binary search
of unrolled steps on the scalar unit. A row's work is its stored entries plus
a fixed `row_cost` (in entries), so each core gets about `(nnz + row_cost *
rows) / cores` of it; `core_rows` never divides a row, `entry_share` does
(merge-path style: a core's first and last rows may be partial), but with
`EntryWork.snap` only a row longer than a fraction of a share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import UnitAttr, i32
from xdsl.ir import SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType

from .multicore_split import CORE_LOOP_ATTR
from .nest_builder import Valid
from .sparse_nests import SparseNest

Reader = Callable[[InsertPoint, Valid], SSAValue]
"""Reads one row offset (an `index`) at a row position."""

LoopBody = Callable[[InsertPoint, Valid, list[SSAValue]], list[SSAValue]]
"""A `NestBuilder.loop` body: the iteration's values from the carried ones."""


def smaller(nest: SparseNest, at: InsertPoint, a: SSAValue, b: SSAValue) -> SSAValue:
    """`min(a, b)` of two indices."""
    less = nest.value(at, arith.CmpiOp(a, b, "slt"))
    return nest.value(at, arith.SelectOp(less, a, b))


def next_row(nest: SparseNest, at: InsertPoint, row: SSAValue, rows: int) -> SSAValue:
    """`min(row + 1, rows)`: the row whose offset ends `row` (`rows + 1`
    offsets)."""
    return smaller(
        nest,
        at,
        nest.value(at, arith.AddiOp(row, nest.constant(1))),
        nest.constant(rows),
    )


def larger(nest: SparseNest, at: InsertPoint, a: SSAValue, b: SSAValue) -> SSAValue:
    """`max(a, b)` of two indices."""
    less = nest.value(at, arith.CmpiOp(a, b, "slt"))
    return nest.value(at, arith.SelectOp(less, b, a))


def offsets_in_ub(
    nest: SparseNest, at: InsertPoint, offsets: SSAValue, rows: int
) -> Reader:
    """The `rows + 1` i32 offsets loaded into ub once (whole 32-byte blocks),
    read by `tile.extract`."""
    padded = -(-(rows + 1) // 8) * 8
    table = nest.load(
        at, offsets, [0], TileType([padded], i32, MemorySpace.UB, valid=[rows + 1])
    )

    def offset(at: InsertPoint, row: Valid) -> SSAValue:
        return nest.value(at, tile.ExtractOp(table, [nest.index_value(row)]))

    return offset


def first_row(
    nest: SparseNest,
    at: InsertPoint,
    rows: int,
    reaches: Callable[[InsertPoint, SSAValue], SSAValue],
) -> SSAValue:
    """The first row in `[0, rows]` for which `reaches` (monotone in the row)
    holds, `rows` if none: a binary search of `bit_length(rows) + 1` unrolled
    steps on the scalar unit (`reaches` may see `rows` once converged, and
    must hold there)."""
    steps = max(1, rows.bit_length() + 1)
    return lower_bound(nest, at, nest.constant(0), nest.constant(rows), steps, reaches)


def lower_bound(
    nest: SparseNest,
    at: InsertPoint,
    lo: SSAValue,
    hi: SSAValue,
    steps: int,
    reaches: Callable[[InsertPoint, SSAValue], SSAValue],
) -> SSAValue:
    """The first position in `[lo, hi]` for which `reaches` (monotone) holds,
    `hi` if none: `steps` unrolled halvings on the scalar unit (enough when
    `2 ** steps > hi - lo`; `reaches` must hold at `hi`)."""
    for _ in range(steps):
        total = nest.value(at, arith.AddiOp(lo, hi))
        mid = nest.value(at, arith.DivUIOp(total, nest.constant(2)))
        found = reaches(at, mid)
        hi = nest.value(at, arith.SelectOp(found, mid, hi))
        after = nest.value(at, arith.AddiOp(mid, nest.constant(1)))
        lo = nest.value(at, arith.SelectOp(found, lo, after))
    return lo


def core_rows(
    nest: SparseNest,
    at: InsertPoint,
    offset: Reader,
    c: Valid,
    cores: int,
    nnz: SSAValue,
    rows: int,
    row_cost: int,
    granule: int = 1,
) -> tuple[SSAValue, SSAValue]:
    """The rows `[first(c), first(c + 1))` of core `c` (the last core's end
    is `rows`), where `first(c)` is the first row whose middle (in work:
    entries plus `row_cost` per row) reaches `c / cores` of the work (`rows +
    1` offsets, nondecreasing, the last one `nnz`): a binary search of
    unrolled steps on the scalar unit; rounded up to `granule` (at most
    `rows`)."""
    work = nest.value(at, arith.AddiOp(nnz, nest.constant(row_cost * rows)))

    def first(core: Valid) -> SSAValue:
        if isinstance(core, int) and core == 0:
            return nest.constant(0)
        # The targets are twice the core's share, so that a row goes to the
        # core its middle falls in.
        share = nest.value(at, arith.MuliOp(nest.index_value(core), work))
        twice = nest.value(at, arith.MuliOp(share, nest.constant(2)))
        wanted = nest.value(at, arith.DivUIOp(twice, nest.constant(cores)))

        def reaches(at: InsertPoint, mid: SSAValue) -> SSAValue:
            after = next_row(nest, at, mid, rows)
            ends = nest.value(at, arith.AddiOp(offset(at, mid), offset(at, after)))
            rows_work = nest.value(
                at,
                arith.MuliOp(
                    nest.value(at, arith.AddiOp(mid, mid)), nest.constant(row_cost)
                ),
            )
            middle = nest.value(
                at,
                arith.AddiOp(
                    ends,
                    nest.value(at, arith.AddiOp(rows_work, nest.constant(row_cost))),
                ),
            )
            return nest.value(at, arith.CmpiOp(middle, wanted, "sge"))

        lo = first_row(nest, at, rows, reaches)
        if granule == 1:
            return lo
        unit = nest.constant(granule)
        up = nest.value(at, arith.AddiOp(lo, nest.constant(granule - 1)))
        whole = nest.value(at, arith.DivUIOp(up, unit))
        rounded = nest.value(at, arith.MuliOp(whole, unit))
        return smaller(nest, at, rounded, nest.constant(rows))

    lo = first(c)
    following = nest.add(at, c, 1)
    last = nest.value(
        at,
        arith.CmpiOp(nest.index_value(following), nest.constant(cores), "eq"),
    )
    hi = nest.value(at, arith.SelectOp(last, nest.constant(rows), first(following)))
    return lo, hi


@dataclass(frozen=True)
class EntryShare:
    """Core `c`'s share of a split by stored entries: the entries `[first,
    end)` and the rows `[lo, hi)` whose entries end in it (or, the first core,
    before it), then row `hi` too when `straddles` (it starts in the share and
    ends after it). A row's entries outside `[first, end)` are other cores'."""

    first: SSAValue
    end: SSAValue
    lo: SSAValue
    hi: SSAValue
    straddles: SSAValue
    """An i1: row `hi` begins in the share and ends after it."""


@dataclass(frozen=True)
class EntryWork:
    """The work of a split by stored entries: `nnz` entries plus `row_cost`
    per row, `work` in all, shared by `sharing = min(cores, work)` cores (so
    that no share of work is empty but the last cores')."""

    row_cost: int
    work: SSAValue
    sharing: SSAValue
    limit: SSAValue | None = None
    """Rows of at most this many entries are not divided: a share's bound in
    such a row moves to the row's end nearer the row's middle (the row goes
    to the core its middle falls in, as `core_rows`); None: any row divided."""

    @staticmethod
    def of(
        nest: SparseNest,
        at: InsertPoint,
        nnz: SSAValue,
        rows: int,
        cores: int,
        row_cost: int,
        snap: int = 0,
    ) -> EntryWork:
        """With `snap`, rows of at most `work / (sharing * snap)` entries (a
        `snap`-th of a share) are not divided (`limit`)."""
        work = nest.value(at, arith.AddiOp(nnz, nest.constant(row_cost * rows)))
        sharing = smaller(nest, at, work, nest.constant(cores))
        limit = None
        if snap:
            parts = nest.value(at, arith.MuliOp(sharing, nest.constant(snap)))
            limit = nest.value(at, arith.DivUIOp(work, parts))
        return EntryWork(row_cost, work, sharing, limit)

    def position(
        self, nest: SparseNest, at: InsertPoint, entry: SSAValue, row: Valid
    ) -> SSAValue:
        """The work before `entry` of row `row` ends: `entry + row_cost * (row
        + 1)` (a row's fixed work comes before its entries)."""
        return nest.value(
            at,
            arith.AddiOp(
                entry,
                nest.index_value(nest.scaled(at, row, self.row_cost, self.row_cost)),
            ),
        )

    def cores_before(
        self, nest: SparseNest, at: InsertPoint, position: SSAValue
    ) -> SSAValue:
        """The cores whose share of work begins before `position`:
        `ceil(position * sharing / work)`."""
        scaled = nest.value(at, arith.MuliOp(position, self.sharing))
        up = nest.value(
            at,
            arith.AddiOp(
                scaled, nest.value(at, arith.SubiOp(self.work, nest.constant(1)))
            ),
        )
        return nest.value(at, arith.DivUIOp(up, self.work))


def entry_bound(
    nest: SparseNest,
    at: InsertPoint,
    offset: Reader,
    c: Valid,
    rows: int,
    work: EntryWork,
) -> SSAValue:
    """The first entry of core `c`'s share: the first whose work position
    (`EntryWork.position`) reaches `w = min(c * work / sharing, work)`, found
    in row `r`, the first row whose last entry reaches it (a binary search):
    `max(offsets[r], w - row_cost * (r + 1))`; `nnz` when no entry does. A
    row of at most `work.limit` entries is not divided: the bound is its first
    entry when `w` lies before its middle (in work), else its end."""
    if isinstance(c, int) and c == 0:
        return nest.constant(0)
    share = nest.value(at, arith.MuliOp(nest.index_value(c), work.work))
    wanted = smaller(
        nest, at, nest.value(at, arith.DivUIOp(share, work.sharing)), work.work
    )

    def reaches(at: InsertPoint, mid: SSAValue) -> SSAValue:
        after = next_row(nest, at, mid, rows)
        end = work.position(nest, at, offset(at, after), mid)
        return nest.value(at, arith.CmpiOp(end, wanted, "sgt"))

    row = first_row(nest, at, rows, reaches)
    begins = work.position(nest, at, offset(at, row), row)
    later = nest.value(at, arith.CmpiOp(wanted, begins, "sgt"))
    position = nest.value(at, arith.SelectOp(later, wanted, begins))
    base = nest.index_value(nest.scaled(at, row, work.row_cost, work.row_cost))
    inside = nest.value(at, arith.SubiOp(position, base))
    if work.limit is None:
        return inside
    start, end = offset(at, row), offset(at, next_row(nest, at, row, rows))
    length = nest.value(at, arith.SubiOp(end, start))
    short = nest.value(at, arith.CmpiOp(length, work.limit, "sle"))
    # twice the row's middle: its work runs from `begins - row_cost` to the
    # position of its end
    ends = work.position(nest, at, end, row)
    span = nest.value(at, arith.AddiOp(begins, ends))
    middle = nest.value(at, arith.SubiOp(span, nest.constant(work.row_cost)))
    twice = nest.value(at, arith.AddiOp(wanted, wanted))
    past = nest.value(at, arith.CmpiOp(twice, middle, "sgt"))
    whole = nest.value(at, arith.SelectOp(past, end, start))
    return nest.value(at, arith.SelectOp(short, whole, inside))


def entry_share(
    nest: SparseNest,
    at: InsertPoint,
    offset: Reader,
    c: Valid,
    cores: int,
    rows: int,
    work: EntryWork,
) -> EntryShare:
    """Core `c`'s share of the entries split evenly by `work` at any entry
    (rows divided), the rows found by binary searches of the offsets."""
    first = entry_bound(nest, at, offset, c, rows, work)
    following = nest.add(at, c, 1)
    end = entry_bound(nest, at, offset, following, rows, work)

    def rows_ending_by(bound: SSAValue) -> SSAValue:
        """The first row that ends after `bound`."""

        def reaches(at: InsertPoint, mid: SSAValue) -> SSAValue:
            after = next_row(nest, at, mid, rows)
            ends = nest.value(at, arith.CmpiOp(offset(at, after), bound, "sgt"))
            # `rows` reaches: converged there, the search stays
            past = nest.value(at, arith.CmpiOp(mid, nest.constant(rows), "sge"))
            return nest.value(at, arith.OrIOp(ends, past))

        return first_row(nest, at, rows, reaches)

    zero = nest.constant(0)
    lo = zero
    if not (isinstance(c, int) and c == 0):
        is_first = nest.value(at, arith.CmpiOp(nest.index_value(c), zero, "eq"))
        lo = nest.value(at, arith.SelectOp(is_first, zero, rows_ending_by(first)))
    last = nest.value(
        at, arith.CmpiOp(nest.index_value(following), nest.constant(cores), "eq")
    )
    hi = nest.value(at, arith.SelectOp(last, nest.constant(rows), rows_ending_by(end)))
    # offsets[hi] < end <= nnz: hi < rows, and the row begins before the end
    begins = nest.value(at, arith.CmpiOp(offset(at, hi), end, "slt"))
    some = nest.value(at, arith.CmpiOp(first, end, "slt"))
    straddles = nest.value(at, arith.AndIOp(begins, some))
    return EntryShare(first, end, lo, hi, straddles)


def row_of_entry(
    nest: SparseNest, at: InsertPoint, offset: Reader, entry: SSAValue, rows: int
) -> SSAValue:
    """The row whose entries hold `entry` (< nnz): the last row `r` with
    `offset(r) <= entry`, by a binary search of unrolled steps on the scalar
    unit (an empty row before it is skipped: its successor starts at the
    same entry)."""
    lo, hi = nest.constant(0), nest.constant(rows - 1)
    one = nest.constant(1)
    for _ in range(max(1, (rows - 1).bit_length())):
        total = nest.value(at, arith.AddiOp(nest.value(at, arith.AddiOp(lo, hi)), one))
        mid = nest.value(at, arith.DivUIOp(total, nest.constant(2)))
        inside = nest.value(at, arith.CmpiOp(offset(at, mid), entry, "sle"))
        below = nest.value(at, arith.SubiOp(mid, one))
        lo = nest.value(at, arith.SelectOp(inside, mid, lo))
        hi = nest.value(at, arith.SelectOp(inside, hi, below))
    return lo


def core_loop(
    nest: SparseNest,
    cores: int,
    body: LoopBody,
) -> None:
    """The static loop over the cores at the nest's top, marked
    `CORE_LOOP_ATTR` (one trip a core)."""
    nest.loop(nest.top, 0, cores, 1, [], body)
    loop = (
        nest.top.block.last_op
        if nest.top.insert_before is None
        else nest.top.insert_before.prev_op
    )
    assert isinstance(loop, scf.ForOp)
    loop.attributes[CORE_LOOP_ATTR] = UnitAttr()
