"""A core split of (block) rows by stored entries, found at run time.

The CSR spmm nest (passes/csr_spmm_nest.py) and the fused block-sparse
attention nest (passes/sparse_attention.py) split their rows over the cores
by work rather than by count: a static loop over the cores marked
`CORE_LOOP_ATTR` (tile-to-hw gives each core one trip), in which core `c`
finds its rows `[first(c), first(c + 1))` from the offsets by a binary search
of unrolled steps on the scalar unit. A row's work is its stored entries plus
a fixed `row_cost` (in entries), so each core gets about `(nnz + row_cost *
rows) / cores` of it; a row is never divided.
"""

from __future__ import annotations

from collections.abc import Callable

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
        lo, hi = nest.constant(0), nest.constant(rows)
        for _ in range(max(1, rows.bit_length() + 1)):
            total = nest.value(at, arith.AddiOp(lo, hi))
            mid = nest.value(at, arith.DivUIOp(total, nest.constant(2)))
            after = smaller(
                nest,
                at,
                nest.value(at, arith.AddiOp(mid, nest.constant(1))),
                nest.constant(rows),
            )
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
            reaches = nest.value(at, arith.CmpiOp(middle, wanted, "sge"))
            hi = nest.value(at, arith.SelectOp(reaches, mid, hi))
            after = nest.value(at, arith.AddiOp(mid, nest.constant(1)))
            lo = nest.value(at, arith.SelectOp(reaches, lo, after))
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
