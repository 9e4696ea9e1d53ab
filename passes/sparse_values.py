"""Dense ops on the stored values of a sparse tensor, by windows (docs/sparse.md,
*Values of a sparse tensor*).

`tv.disassemble`, an element-wise op (or chain) on the `? x ...` values and
`tv.assemble` of the same offsets and indices map each stored entry on its
own: the pattern does not matter, only the values array does. Its length
`nnz` is known at run time only and `ascend_hw` counts are static, so the
array goes in windows of a fixed `window` entries, the rest in a ladder of
static pieces:

    for c in cores (static, one trip a core: pypto.core_loop):
        for p in [c * W / cores, (c + 1) * W / cores) * window   (W = nnz / window)
            ops on entries [p, p + window)                          (one tile)
        if c is the last core and nnz mod window > 0:
            if nnz >= window: ops on entries [nnz - window, nnz)    (one tile,
                              overlapping c's last window: the same values again)
            else: for each power of two b < window, high to low, if nnz & b:
                ops on the b entries after the ones done           (one tile)

Windows are whole GM blocks (`memories.gm.alignment`) of every buffer, so no
two cores write one block; else the windows stay on one core. The ops of a
window are outlined (passes/sparse_outline.py) on `window x ...` tensors and
tiled by tv-to-tile, so each window is one load, the fused ops and one store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import MemRefType, StridedLayoutAttr
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from .balanced_split import core_loop
from .located_builder import LocatedBuilder
from .nest_builder import Valid, memref_strides
from .sparse_nests import SparseNest

WINDOW_BYTES = 2048
"""A window's bytes of the widest values type, when not given: 8 vector
repeats of 256 bytes and one 2 KiB DMA each way. A 1 % CSR matrix of 1024 x
1024 has 10 windows of f16 (3398 cycles for `exp`; 512 entries: 3331, 256:
4277, 2048: 3565, docs/sparse.md)."""

Emit = Callable[[LocatedBuilder, SSAValue, int], None]
"""Emits the ops on `count` entries from a position (an index)."""


def auto_window(entry_elements: int, widest: int) -> int:
    """Entries of a window: `WINDOW_BYTES` of the widest type, a power of two,
    at least one entry (a BSR block of 64 x 64 is one)."""
    entries = max(1, WINDOW_BYTES // (widest * entry_elements))
    return 1 << (entries.bit_length() - 1)


class ValuesWindows(SparseNest):
    """Builds the windows nest of a map over a values array of `nnz` entries."""

    def windows(self, nnz: SSAValue, window: int, cores: int, emit: Emit) -> None:
        """Windows of `window` entries split over `cores` (1: one loop), the
        rest in static pieces on the last core."""
        width = self.constant(window)
        count = self.value(self.top, arith.DivUIOp(nnz, width))
        whole = self.value(self.top, arith.MuliOp(count, width))

        def windows_of(at: InsertPoint, lo: Valid, hi: Valid) -> None:
            def body(at: InsertPoint, p: Valid, _: list[SSAValue]) -> list[SSAValue]:
                emit(self._builder(at), self.index_value(p), window)
                return []

            self.loop(at, lo, hi, window, [], body)

        if cores <= 1:
            windows_of(self.top, 0, whole)
            self._rest(self.top, nnz, whole, window, emit)
            return

        def core(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            lo, hi = (self.core_share(at, count, c, cores, k) for k in (0, 1))
            windows_of(
                at,
                self.value(at, arith.MuliOp(lo, width)),
                self.value(at, arith.MuliOp(hi, width)),
            )
            if window == 1:
                return []  # no rest
            last = self.value(
                at,
                arith.CmpiOp(self.index_value(c), self.constant(cores - 1), "eq"),
            )
            then = Block()
            self._rest(InsertPoint.at_end(then), nnz, whole, window, emit)
            then.add_op(scf.YieldOp())
            self.insert(at, scf.IfOp(last, [], Region(then)))
            return []

        core_loop(self, cores, core)

    def _rest(
        self, at: InsertPoint, nnz: SSAValue, whole: SSAValue, window: int, emit: Emit
    ) -> None:
        """The `nnz - whole < window` entries after the windows: one more
        window ending at `nnz` when there is a window before it (it overlaps
        the last one, of the same core, and writes the same values again);
        else (`nnz < window`) a piece of each power of two the count has, the
        largest first."""
        if window == 1:
            return
        rest = self.value(at, arith.SubiOp(nnz, whole))
        some = self.value(at, arith.CmpiOp(rest, self.constant(0), "ne"))
        enough = self.value(at, arith.CmpiOp(nnz, self.constant(window), "sge"))
        shift = self.value(at, arith.AndIOp(some, enough))
        shifted, pieces = Block(), Block()
        start = self.value(
            InsertPoint.at_end(shifted), arith.SubiOp(nnz, self.constant(window))
        )
        emit(self._builder(InsertPoint.at_end(shifted)), start, window)
        shifted.add_op(scf.YieldOp())
        self._pieces(InsertPoint.at_end(pieces), rest, whole, window, emit)
        pieces.add_op(scf.YieldOp())
        self.insert(at, scf.IfOp(shift, [], Region(shifted), Region(pieces)))

    def _pieces(
        self, at: InsertPoint, rest: SSAValue, whole: SSAValue, window: int, emit: Emit
    ) -> None:
        """`rest < window` entries from `whole`, a static piece for each power
        of two `rest` has."""
        size = 1 << max(0, (window - 1).bit_length() - 1)
        while size >= 1:
            bit = self.value(at, arith.AndIOp(rest, self.constant(size)))
            present = self.value(at, arith.CmpiOp(bit, self.constant(0), "ne"))
            done = self.value(at, arith.SubiOp(rest, self._low(at, rest, 2 * size)))
            start = self.value(at, arith.AddiOp(whole, done))
            then = Block()
            emit(self._builder(InsertPoint.at_end(then)), start, size)
            then.add_op(scf.YieldOp())
            self.insert(at, scf.IfOp(present, [], Region(then)))
            size //= 2

    def _low(self, at: InsertPoint, value: SSAValue, modulus: int) -> SSAValue:
        """`value mod modulus` (a power of two)."""
        return self.value(at, arith.AndIOp(value, self.constant(modulus - 1)))

    def _builder(self, at: InsertPoint) -> LocatedBuilder:
        return LocatedBuilder(at, location=self.builder.location)


def window_view(
    builder: LocatedBuilder, buffer: SSAValue, entry: SSAValue, count: int
) -> SSAValue:
    """`buffer[entry : entry + count]` of a `? x ...` values buffer, seen
    `count x ...`."""
    buffer_type = cast(MemRefType[Attribute], buffer.type)
    shape = buffer_type.get_shape()
    strides = memref_strides(MemRefType(buffer_type.element_type, [1, *shape[1:]]))
    result_type = MemRefType(
        buffer_type.element_type,
        [count, *shape[1:]],
        StridedLayoutAttr(strides, None),
    )
    return builder.value(
        memref.SubviewOp.get(
            buffer,
            [entry, *[0] * (len(shape) - 1)],
            [count, *shape[1:]],
            [1] * len(shape),
            result_type,
        )
    )
