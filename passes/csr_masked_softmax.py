"""CSR softmax over the cores by masked windows: computed masks instead of a
row's entries one by one (docs/sparse.md, *Masked windows*).

A core writes the entries `[e0, e1)` (whole 64-entry blocks, `CsrEntryNest.
over_entries`). Its entries are cut into a grid of windows of `width`
entries from `e0`; the windows that end within `e1` are whole and each is
stored with one DMA, once, when the last row with entries in it is done. The
rows in between are computed from whole `width`-entry tiles whose lanes
outside the row are masked: `tile.select` of the lane positions
(`tile.iota`) against the row's bounds relative to the tile, so a row of
any length takes whole vector instructions and a window holds the quotients
of every row it spans. The core's last `(e1 - e0) mod width` entries (only
the last core's with the default `width` 64, which divides the blocks) are
written exactly by the entry windows (`SparseNest.softmax_quotients`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType

from .balanced_split import Reader, larger, smaller
from .nest_builder import Valid
from .sparse_nests import SparseBuffers, SparseNest


@dataclass(frozen=True)
class MaskedLanes:
    """What every masked window of a core shares, made once before its rows."""

    width: int
    """Entries a window: whole 32-byte GM blocks of values and results."""
    positions: SSAValue
    """`tile.iota` of `1 x width` i32: the lane positions the masks compare."""
    pad: SSAValue
    """A `1 x 1` f32 tile of `-inf`: what a lane outside the row becomes."""
    last: SSAValue
    """`nnz - width`: the last window start inside the values."""

    @staticmethod
    def make(
        nest: SparseNest, at: InsertPoint, nnz: SSAValue, width: int
    ) -> MaskedLanes:
        positions = nest.value(
            at, tile.IotaOp(TileType([1, width], i32, MemorySpace.UB))
        )
        lowest = nest.constant(float("-inf"), f32)
        pad = nest.value(at, tile.FillOp(lowest, TileType([1, 1], f32, MemorySpace.UB)))
        last = nest.value(at, arith.SubiOp(nnz, nest.constant(width)))
        return MaskedLanes(width, positions, pad, last)


@dataclass(frozen=True)
class CoreEntries:
    """A core's entries and the end of its whole windows."""

    e0: SSAValue
    e1: SSAValue
    whole: SSAValue
    """`e0 + ((e1 - e0) / width) * width`: the grid's whole windows end here."""


class MaskedSoftmax:
    """Emits one core's rows of a CSR softmax by masked windows."""

    def __init__(
        self,
        nest: SparseNest,
        a: SparseBuffers,
        views: tuple[SSAValue, SSAValue],
        window: int,
        lanes: MaskedLanes,
    ):
        self.nest = nest
        self.a = a
        self.values, self.results = views
        self.views = views
        self.window = window
        """Entries of the exact windows of the core's last entries."""
        self.lanes = lanes
        width = lanes.width
        self.value_type = TileType([1, width], a.element_type, MemorySpace.UB)
        self.stat_type = TileType([1, 1], f32, MemorySpace.UB)

    # Scalars --------------------------------------------------------------------------

    def _index(self, at: InsertPoint, op: arith.BinaryOperation) -> SSAValue:
        return self.nest.value(at, op)

    def _plus(self, at: InsertPoint, a: SSAValue, b: int) -> SSAValue:
        return self._index(at, arith.AddiOp(a, self.nest.constant(b)))

    def _cell(self, at: InsertPoint, entry: SSAValue, e0: SSAValue) -> SSAValue:
        """The grid window holding `entry` (>= e0): `e0 + ((entry - e0) / w) * w`."""
        width = self.nest.constant(self.lanes.width)
        steps = self._index(
            at, arith.DivUIOp(self._index(at, arith.SubiOp(entry, e0)), width)
        )
        return self._index(
            at, arith.AddiOp(e0, self._index(at, arith.MuliOp(steps, width)))
        )

    def _lanes_from(
        self, at: InsertPoint, position: SSAValue, base: SSAValue
    ) -> SSAValue:
        """A `1 x 1` i32 tile of `position - base`: a mask's bound in lanes."""
        offset = self._index(at, arith.SubiOp(position, base))
        number = self.nest.value(at, arith.IndexCastOp(offset, i32))
        return self.nest.value(
            at, tile.FillOp(number, self.stat_type.with_(element_type=i32))
        )

    # Tiles ----------------------------------------------------------------------------

    def _select(
        self,
        at: InsertPoint,
        cmp: str,
        bound: SSAValue,
        on_true: SSAValue,
        on_false: SSAValue,
    ) -> SSAValue:
        """Lanes `l` with `l <cmp> bound` from `on_true`, the others `on_false`."""
        return self.nest.value(
            at, tile.SelectOp(cmp, self.lanes.positions, bound, on_true, on_false)
        )

    def _load(self, at: InsertPoint, base: SSAValue) -> SSAValue:
        nest = self.nest
        return nest.to_f32(at, nest.load(at, self.values, [0, base], self.value_type))

    # The row --------------------------------------------------------------------------

    def stats(
        self, at: InsertPoint, start: SSAValue, end: SSAValue
    ) -> tuple[SSAValue, SSAValue]:
        """The max and the sum of `exp(v - max)` of the row `[start, end)` in
        one pass over windows of `width` from `start`, each loaded from
        `min(pos, nnz - width)` with its lanes outside `[pos, min(end, pos +
        width))` set to `-inf`; the sum rescaled by `exp(old max - new max)`
        when a window raises the max."""
        nest, lanes, width = self.nest, self.lanes, self.lanes.width

        def body(at: InsertPoint, pos: Valid, acc: list[SSAValue]) -> list[SSAValue]:
            pos = nest.index_value(pos)
            base = smaller(nest, at, pos, lanes.last)
            stop = smaller(nest, at, end, self._plus(at, pos, width))
            value = self._load(at, base)
            kept = self._select(
                at, "ge", self._lanes_from(at, pos, base), value, lanes.pad
            )
            kept = self._select(
                at, "lt", self._lanes_from(at, stop, base), kept, lanes.pad
            )
            peak, total = acc
            most = nest.value(at, tile.ReduceMaxOp(kept, 1))
            raised = nest.value(at, tile.MaxOp(peak, most))
            scale = nest.exp_shifted(at, peak, raised)
            part = nest.value(
                at, tile.ReduceSumOp(nest.exp_shifted(at, kept, raised), 1)
            )
            rescaled = nest.value(at, tile.MulOp(total, scale))
            return [raised, nest.value(at, tile.AddOp(rescaled, part))]

        zeros = nest.zeros(at, self.stat_type, [])
        peak, total = nest.loop(at, start, end, width, [lanes.pad, zeros], body)
        return peak, total

    def row(
        self,
        at: InsertPoint,
        row: tuple[SSAValue, SSAValue],
        core: CoreEntries,
        window: SSAValue,
    ) -> SSAValue:
        """The row `[start, end)`: its stats, then its quotients at its entries
        of `[e0, e1)`. `window` holds the quotients of the grid window the row
        starts in that earlier rows have filled up to the row's first entry
        (f32): the row's grid windows are merged into it, each stored when the
        row ends at or past its end, the last one (the row ends inside it)
        returned for the next rows. Entries are contiguous and the core's last
        row ends at `e1` (or past it), so every whole window is stored by the
        row that ends in or past it: none is left over."""
        nest, width = self.nest, self.lanes.width
        start, end = row
        lo, hi = larger(nest, at, start, core.e0), smaller(nest, at, end, core.e1)
        peak, total = self.stats(at, start, end)
        grid_end = smaller(nest, at, hi, core.whole)
        first = self._cell(at, smaller(nest, at, lo, core.whole), core.e0)

        def cell(at: InsertPoint, base: Valid, acc: list[SSAValue]) -> list[SSAValue]:
            base = nest.index_value(base)
            quotient = nest.value(
                at,
                tile.DivOp(nest.exp_shifted(at, self._load(at, base), peak), total),
            )
            # the lanes before the row's first are earlier rows' (lo - base
            # <= 0 past the row's first window: every lane is this row's)
            merged = self._select(
                at, "ge", self._lanes_from(at, lo, base), quotient, acc[0]
            )
            done = self._index(at, arith.CmpiOp(self._plus(at, base, width), hi, "sle"))
            nest.if_else(at, done, lambda at: self._store(at, merged, base), _nothing)
            return [merged]

        # no trip when the row has no entry in the whole windows (lo >= grid_end)
        (window,) = nest.loop(at, first, grid_end, width, [window], cell)
        # the core's last entries past its whole windows: exactly
        rest = larger(nest, at, lo, core.whole)
        nest.softmax_quotients(
            at,
            self.a,
            self.views,
            (peak, total),
            rest,
            larger(nest, at, hi, rest),
            self.window,
        )
        return window

    def _store(self, at: InsertPoint, window: SSAValue, base: SSAValue) -> None:
        nest = self.nest
        nest.store(
            at, nest.cast_to(at, window, self.a.element_type), self.results, [0, base]
        )

    def rows(
        self,
        at: InsertPoint,
        rows: tuple[SSAValue, Valid],
        core: tuple[SSAValue, SSAValue],
        offset: Reader,
    ) -> None:
        """The core's rows `[first, after)` writing its entries `[e0, e1)`."""
        nest, width = self.nest, self.lanes.width
        e0, e1 = core
        whole = self._cell(at, e1, e0)
        entries = CoreEntries(e0, e1, whole)

        def body(at: InsertPoint, r: Valid, carried: list[SSAValue]) -> list[SSAValue]:
            start, end = offset(at, r), offset(at, nest.add(at, r, 1))
            return [self.row(at, (start, end), entries, carried[0])]

        empty = nest.zeros(at, TileType([1, width], f32, MemorySpace.UB), [])
        nest.loop(at, rows[0], rows[1], 1, [empty], body)


def _nothing(at: InsertPoint) -> None:
    """An empty branch."""
