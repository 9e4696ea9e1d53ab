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
from typing import cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tensor_view import TensorViewType
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

    def _plus(self, at: InsertPoint, a: SSAValue, b: int) -> SSAValue:
        return self.nest.index_value(self.nest.add(at, a, b))

    def _cell(self, at: InsertPoint, entry: SSAValue, e0: SSAValue) -> SSAValue:
        """The grid window holding `entry` (>= e0): `e0 + ((entry - e0) / w) * w`."""
        return self.nest.whole_windows(at, e0, entry, self.lanes.width)

    def _lanes_from(
        self, at: InsertPoint, position: SSAValue, base: SSAValue
    ) -> SSAValue:
        """A `1 x 1` i32 tile of `position - base`: a mask's bound in lanes."""
        offset = self.nest.value(at, arith.SubiOp(position, base))
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

    def _update(
        self,
        at: InsertPoint,
        value: SSAValue,
        bounds: tuple[SSAValue, SSAValue, SSAValue],
        acc: list[SSAValue],
    ) -> list[SSAValue]:
        """The max and sum `acc` raised by the lanes `[first, stop)` of the
        window `value` loaded from `base` (`bounds`: first, stop, base): the
        other lanes `-inf`; the sum rescaled by `exp(old max - new max)`."""
        nest, lanes = self.nest, self.lanes
        first, stop, base = bounds
        kept = self._select(
            at, "ge", self._lanes_from(at, first, base), value, lanes.pad
        )
        kept = self._select(at, "lt", self._lanes_from(at, stop, base), kept, lanes.pad)
        peak, total = acc
        most = nest.value(at, tile.ReduceMaxOp(kept, 1))
        raised = nest.value(at, tile.MaxOp(peak, most))
        scale = nest.exp_shifted(at, peak, raised)
        part = nest.value(at, tile.ReduceSumOp(nest.exp_shifted(at, kept, raised), 1))
        rescaled = nest.value(at, tile.MulOp(total, scale))
        return [raised, nest.value(at, tile.AddOp(rescaled, part))]

    def _load_unless(
        self, at: InsertPoint, held: SSAValue, reuse: SSAValue, base: SSAValue
    ) -> SSAValue:
        """`held` when `reuse`, else the window at `base` loaded: a loop of
        one trip or none carrying the tile (a branch that yields a tile)."""
        nest = self.nest
        trips = nest.value(
            at, arith.SelectOp(reuse, nest.constant(0), nest.constant(1))
        )
        (value,) = nest.loop(
            at, 0, trips, 1, [held], lambda at, _, __: [self._load(at, base)]
        )
        return value

    def row(
        self,
        at: InsertPoint,
        row: tuple[SSAValue, SSAValue],
        core: CoreEntries,
        carried: list[SSAValue],
    ) -> list[SSAValue]:
        """The row `[start, end)`: its stats, then its quotients at its entries
        of `[e0, e1)`. `carried` is `[window, values, at]`: the quotients of
        the grid window at `at` that earlier rows have filled up to the row's
        first entry (f32), and that window's values (f32; `at` < 0: none).

        The max and sum go over windows from the grid window holding the
        row's first entry (from the entry itself for a row starting before
        `e0`); the first is the carried one when the row starts in it (most
        rows of a few entries: no load). The quotients go over the row's grid
        windows: each merged into the carried window from the row's first
        lane on, stored when the row ends at or past its end, the last one
        (the row ends inside it) returned with its values. Entries are
        contiguous and the core's last row ends at `e1` (or past it), so every
        whole window is stored by the row that ends in or past it: none is
        left over."""
        nest, width = self.nest, self.lanes.width
        start, end = row
        window, values, held = carried
        lo, hi = larger(nest, at, start, core.e0), smaller(nest, at, end, core.e1)
        gridded_start = self.nest.value(at, arith.CmpiOp(start, core.e0, "sge"))
        begin = nest.value(
            at,
            arith.SelectOp(
                gridded_start,
                self._cell(at, larger(nest, at, start, core.e0), core.e0),
                start,
            ),
        )
        # the max and sum: the first window the carried one or loaded
        loaded_at = smaller(nest, at, begin, self.lanes.last)
        reuse = self.nest.value(at, arith.CmpiOp(begin, held, "eq"))
        first = self._load_unless(at, values, reuse, loaded_at)
        base = nest.value(at, arith.SelectOp(reuse, held, loaded_at))
        after = self._plus(at, begin, width)
        zeros = nest.zeros(at, self.stat_type, [])
        acc = self._update(
            at,
            first,
            (start, smaller(nest, at, end, after), base),
            [self.lanes.pad, zeros],
        )

        def later(at: InsertPoint, pos: Valid, acc: list[SSAValue]) -> list[SSAValue]:
            pos = nest.index_value(pos)
            base = smaller(nest, at, pos, self.lanes.last)
            stop = smaller(nest, at, end, self._plus(at, pos, width))
            return self._update(at, self._load(at, base), (pos, stop, base), acc)

        peak, total = nest.loop(at, after, end, width, acc, later)
        grid_end = smaller(nest, at, hi, core.whole)
        gridded = self.nest.value(at, arith.CmpiOp(lo, grid_end, "slt"))
        cell0 = self._cell(at, smaller(nest, at, lo, core.whole), core.e0)

        def cell(at: InsertPoint, base: Valid, acc: list[SSAValue]) -> list[SSAValue]:
            base = nest.index_value(base)
            # the row's first grid window is its stats' first when that is on
            # the grid (loaded from begin <= nnz - width: a whole window)
            same = self.nest.value(at, arith.CmpiOp(base, begin, "eq"))
            value = self._load_unless(at, first, same, base)
            quotient = nest.value(
                at, tile.DivOp(nest.exp_shifted(at, value, peak), total)
            )
            # the lanes before the row's first are earlier rows' (lo - base
            # <= 0 past the row's first window: every lane is this row's)
            merged = self._select(
                at, "ge", self._lanes_from(at, lo, base), quotient, acc[0]
            )
            done = self.nest.value(
                at, arith.CmpiOp(self._plus(at, base, width), hi, "sle")
            )
            nest.if_else(at, done, lambda at: self._store(at, merged, base))
            return [merged, value]

        # no trip when the row has no entry in the whole windows (lo >= grid_end)
        # the values carried on: the last grid window's, else the stats' first
        window, values = nest.loop(at, cell0, grid_end, width, [window, first], cell)
        last = self._cell(
            at, larger(nest, at, self._plus(at, grid_end, -1), cell0), core.e0
        )
        held = nest.value(at, arith.SelectOp(gridded, last, base))
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
        return [window, values, held]

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
            return self.row(at, (start, end), entries, carried)

        empty = nest.zeros(at, TileType([1, width], f32, MemorySpace.UB), [])
        nest.loop(at, rows[0], rows[1], 1, [empty, empty, nest.constant(-1)], body)


def check_masked_window(op: Operation, masked: int, unit: int, alignment: int) -> None:
    """A window is 0 (off) or whole `alignment`-byte blocks of the values and
    of the f32 work tiles (`unit` entries)."""
    if masked < 0 or masked % unit:
        raise op_error(
            op,
            "tv-sparse-to-tile: masked-window must be 0 or a positive multiple of "
            f"{unit} (whole {alignment}-byte blocks of "
            f"{cast(TensorViewType, op.operands[0].type).element_type} and f32), "
            f"got {masked}",
        )


def masked_words(masked: int, window: int, exact: str) -> str:
    """The remark of the masked nest; `exact`: the exact nest's (nnz < masked)."""
    return (
        f"sparse_softmax by rows in whole windows of {masked} entries with computed "
        "masks (the lanes outside the row -inf: tile.select against tile.iota), the "
        "max and sum in one pass (rescaled), each whole window of a core's entries "
        f"stored once with the rows it spans, the rest (< {masked} entries) by "
        f"windows of {window} and entry by entry; nnz < {masked}: {exact}"
    )
