"""Matmul loop nests of `tv-to-tile` (docs/tiling.md): the two-level nest of a
MATMUL group of passes/tv_fusion.py, its elementwise epilogue included.

- Batch dims are loops of one step; M and N are tiled by L1 blocks of `fa` x `fb`
  base blocks (`Segment`: the whole L1 blocks, then the rest in base blocks).
- Per L1 block, A @ B accumulates over K in l0c: L1 chunks `k1` deep, each
  feeding `k1 / k0` cube steps, in a skewed order so that MTE1 runs ahead of the
  cube.
- Each finished base block is stored, or moved to UB for the group's epilogue
  ops (computed as in a vector nest, passes/nest_builder.py; reductions and
  softmax along the rows as in a resident one, passes/vector_nests.py, when
  row fusion made the blocks span whole rows) and stored from there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType, element_bytes

from .matmul_model import MatmulTiling
from .nest_builder import Scope, Valid
from .tv_fusion import Extent, tensor_type
from .vector_nests import VectorNest


@dataclass(frozen=True)
class Segment:
    """A range of a matmul dim tiled by L1 blocks of `factor` base blocks."""

    start: Valid
    end: Valid
    factor: int
    full: bool
    """Every base block of the range is whole (its valid extent is the step)."""


_Blocks = tuple[list[tuple[SSAValue, Valid]], list[tuple[SSAValue, Valid]]]
"""The (offset, valid extent) of the base row blocks and base column blocks
of an L1 block."""

_Panels = tuple[SSAValue | None, list[list[SSAValue]]]
"""An L1 block row's A panels: the K offset a staggered panel starts at (None
when it is in order) and per panel tile (one for all of K, else one per K
chunk) the tiles of the base row blocks."""

_LoadedChunk = tuple[SSAValue, int, tuple[list[SSAValue], int, list[SSAValue]]]
"""A K chunk's offset, valid depth and L1 tiles (A tiles or panels, the
chunk's offset in them, B tiles), as `MatmulNest._k_chunk` takes them."""


class MatmulNest(VectorNest):
    """Builds the nest of a MATMUL group (see the module doc); its epilogue's
    reductions and softmax (row fusion: base blocks span whole rows) are a
    resident vector nest's."""

    workspace: SSAValue | None = None
    """The f32 GM buffer [split * M', N] of a K split's partial sums (M'
    = M rounded up to whole L1 blocks)."""
    _k_range: tuple[SSAValue, int] | None = None
    """While a K split's nest is built: its range's start and depth."""
    _split_row: SSAValue | None = None
    """While a K split's nest is built: the unit's first workspace row."""
    combine_ub: int = 192 * 1024
    """UB bytes of the target: the combine nest's tiles take a quarter."""
    combine_cores: int = 1
    """The cores the combine nest's row tiles are spread over."""
    _prologue_nests: dict[SSAValue, VectorNest]
    """Per operand with a prologue, the vector nest computing its blocks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._prologue_nests = {}

    def emit(self, tiling: MatmulTiling) -> None:
        """The two-level matmul nest of a MATMUL group, epilogue included."""
        group = self.group
        op = group.matmul
        assert op is not None
        rank = group.rank
        rows, cols = rank - 2, rank - 1
        for dim in range(rank):
            self.steps[dim] = 1
        self.physical = {rows: tiling.m0, cols: tiling.n0}
        if tiling.split > 1:
            self._emit_split(op, tiling)
            return

        def batch_body(at: InsertPoint, _: list[SSAValue]) -> list[SSAValue]:
            for m_segment in self._segments(
                at, group.frame[rows], tiling.m0, tiling.fa
            ):
                for n_segment in self._segments(
                    at, group.frame[cols], tiling.n0, tiling.fb
                ):
                    self._matmul_blocks(at, op, tiling, m_segment, n_segment)
            return []

        self.frame_loops(self.top, range(rank - 2), [], batch_body)

    def _emit_split(self, op: tv.MatmulOp, tiling: MatmulTiling) -> None:
        """A K split (rank 2, static extents, M a multiple of the L1 block, no
        epilogue): one loop over (K range, block row) units u = range * rows +
        row, parallel like the block loop inside it, storing the f32 sums of
        unit u to rows u * m1 .. of the workspace [split * M, N] (affine in u,
        so that the multi-core split can cut it); then the combine nest."""
        workspace = self.workspace
        assert workspace is not None and self.group.rank == 2
        k_extent = self.extents.of(op.lhs)[-2 if op.transpose_a is not None else -1]
        m, n = self.group.frame
        assert isinstance(k_extent, int) and k_extent % tiling.split == 0
        assert isinstance(m, int) and (m % tiling.m1 == 0 or m < tiling.m1)
        depth = k_extent // tiling.split
        rows = -(-m // tiling.m1)
        m_segment = Segment(0, m, tiling.fa, m % tiling.m1 == 0)

        def unit_body(at: InsertPoint, u: Valid, _: list[SSAValue]) -> list[SSAValue]:
            unit = self.index_value(u)
            part = self.value(at, arith.DivUIOp(unit, self.constant(rows)))
            row = self.value(at, arith.RemUIOp(unit, self.constant(rows)))
            start = self.value(at, arith.MuliOp(part, self.constant(depth)))
            i = self.value(at, arith.MuliOp(row, self.constant(tiling.m1)))
            self._k_range = (start, depth)
            self._split_row = self.value(
                at, arith.MuliOp(unit, self.constant(tiling.m1))
            )
            for n_segment in self._segments(at, n, tiling.n0, tiling.fb):
                self._block_row(at, op, tiling, i, m_segment, n_segment)
            return []

        self.loop(self.top, 0, tiling.split * rows, 1, [], unit_body)
        self._k_range = self._split_row = None
        self._combine(op, tiling.split)

    def _combine(self, op: tv.MatmulOp, split: int) -> None:
        """Add the `split` partial sums of each UB tile of the result and store
        it (cast to the result type): rows of whole width where UB allows."""
        workspace = self.workspace
        assert workspace is not None
        m, n = self.group.frame
        assert isinstance(m, int) and isinstance(n, int)
        result_type = tensor_type(op.result).element_type
        workspace_type = cast(MemRefType[Attribute], workspace.type)
        padded = workspace_type.get_shape()[0] // split
        unit = 32
        columns = -(-n // unit) * unit
        out_bytes = element_bytes(result_type)
        # Two f32 tiles and the result, twice (double buffering), in a quarter
        # of UB: rows of `columns`.
        budget = self.combine_ub // 4
        columns = min(columns, max(unit, budget // (8 + out_bytes) // unit * unit))
        # Enough row tiles for every core, if UB allows.
        rows = max(1, min(m, budget // (columns * (8 + out_bytes))))
        rows = min(rows, max(1, -(-m // self.combine_cores)))
        self.physical = {0: rows, 1: columns}

        def row_body(c1: InsertPoint, i: Valid, _: list[SSAValue]) -> list[SSAValue]:
            row_valid = self.tail(c1, m, i, rows, True)

            def col_body(
                c2: InsertPoint, j: Valid, _: list[SSAValue]
            ) -> list[SSAValue]:
                col_valid = self.tail(c2, n, j, columns, True)
                total: SSAValue | None = None
                for part in range(split):
                    tile_type = TileType(
                        [rows, columns],
                        f32,
                        MemorySpace.UB,
                        [
                            v if isinstance(v, int) else DYNAMIC_INDEX
                            for v in (row_valid, col_valid)
                        ],
                    )
                    dynamic = [
                        v for v in (row_valid, col_valid) if isinstance(v, SSAValue)
                    ]
                    indices = [
                        self.index_value(self.add(c2, i, part * padded)),
                        self.index_value(j),
                    ]
                    loaded = self.value(
                        c2, tile.LoadOp(workspace, indices, tile_type, dynamic)
                    )
                    total = (
                        loaded
                        if total is None
                        else self.value(c2, tile.AddOp(total, loaded))
                    )
                assert total is not None
                if result_type != f32:
                    total = self.value(c2, tile.CastOp(total, result_type))
                self.index[0], self.valid[0] = self.index_value(i), row_valid
                self.index[1], self.valid[1] = self.index_value(j), col_valid
                self.store(c2, op.result, total)
                return []

            self.loop(c1, 0, n, columns, [], col_body)
            return []

        self.loop(self.top, 0, m, rows, [], row_body)

    def _segments(
        self, at: InsertPoint, extent: Extent, base: int, factor: int
    ) -> list[Segment]:
        """The whole L1 blocks of a dim, then the rest in base blocks."""
        if factor == 1:
            return [Segment(0, extent, 1, False)]
        block = base * factor
        if isinstance(extent, int):
            whole = extent - extent % block
        else:
            remainder = self.value(at, arith.RemSIOp(extent, self.constant(block)))
            whole = self.value(at, arith.SubiOp(extent, remainder))
        segments = [Segment(0, whole, factor, True), Segment(whole, extent, 1, False)]
        return [
            s
            for s in segments
            if not (
                isinstance(s.start, int) and isinstance(s.end, int) and s.start >= s.end
            )
        ]

    def _matmul_blocks(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        m_segment: Segment,
        n_segment: Segment,
    ) -> None:
        def row_body(c1: InsertPoint, i: Valid, _: list[SSAValue]) -> list[SSAValue]:
            self._block_row(c1, op, tiling, i, m_segment, n_segment)
            return []

        self.loop(
            at,
            m_segment.start,
            m_segment.end,
            tiling.m0 * m_segment.factor,
            [],
            row_body,
        )

    def _block_row(
        self,
        c1: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        i: Valid,
        m_segment: Segment,
        n_segment: Segment,
    ) -> None:
        """The loop over the L1 blocks of the block row at `i` (its A panels
        first, when the tiling keeps them)."""
        m, n = self.group.frame[-2], self.group.frame[-1]
        row_blocks = self._base_blocks(c1, i, m, tiling.m0, m_segment)
        panels = self._panels(c1, op, tiling, row_blocks) if tiling.panel else None

        def col_body(c2: InsertPoint, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
            col_blocks = self._base_blocks(c2, j, n, tiling.n0, n_segment)
            if panels is not None:
                blocks = (row_blocks, col_blocks)
                accumulators = self._k_panel(c2, op, tiling, panels, blocks)
            else:
                accumulators = self._k_loop(c2, op, tiling, row_blocks, col_blocks)
            for a, row in enumerate(row_blocks):
                for b, col in enumerate(col_blocks):
                    if self._split_row is not None:  # a K split's partial sum
                        assert self.workspace is not None
                        place = self.index_value(
                            self.add(c2, self._split_row, a * tiling.m0)
                        )
                        store = tile.StoreOp(
                            accumulators[a][b], self.workspace, [place, col[0]]
                        )
                        self.insert(c2, store)
                    else:
                        self.epilogue(c2, op, row, col, accumulators[a][b])
            return []

        self.loop(
            c1,
            n_segment.start,
            n_segment.end,
            tiling.n0 * n_segment.factor,
            [],
            col_body,
        )

    def _base_blocks(
        self,
        at: InsertPoint,
        offset: Valid,
        extent: Extent,
        base: int,
        segment: Segment,
    ) -> list[tuple[SSAValue, Valid]]:
        """(offset, valid extent) of each base block of the L1 block at `offset`."""
        blocks: list[tuple[SSAValue, Valid]] = []
        for part in range(segment.factor):
            start = self.add(at, offset, part * base)
            valid = base if segment.full else self.tail(at, extent, start, base, True)
            blocks.append((self.index_value(start), valid))
        return blocks

    def _k_loop(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        row_blocks: list[tuple[SSAValue, Valid]],
        col_blocks: list[tuple[SSAValue, Valid]],
    ) -> list[list[SSAValue]]:
        """Accumulate A @ B over K for every base block of the L1 block in l0c:
        L1 chunks `k1` deep, each feeding `k1 / k0` cube steps. The first chunk
        starts the accumulators; with `k1 > k0` (static K) the full chunks are a
        loop and a partial last chunk follows it, else every chunk is a loop
        iteration with a run-time tail (tile-peel-tails makes it static)."""
        k_extent = self.extents.of(op.lhs)[-2 if op.transpose_a is not None else -1]
        base: SSAValue | None = None
        if self._k_range is not None:  # one range of a K split
            base, k_extent = self._k_range
        k0, k1 = tiling.k0, tiling.k1
        pad = not (isinstance(k_extent, int) and k_extent % k0 == 0)
        if k1 > k0:
            assert isinstance(k_extent, int), "deep L1 chunks need a static K"
        width = len(col_blocks)
        shift = None
        if tiling.l2_order:
            shift = self._l2_shift(at, tiling, k_extent, row_blocks, col_blocks)

        def offset(inner: InsertPoint, p: Valid) -> SSAValue:
            if shift is not None:  # chunk p of the block's rotated order
                total = self.value(inner, arith.AddiOp(shift, self.index_value(p)))
                return self.value(
                    inner, arith.RemUIOp(total, self.constant(cast(int, k_extent)))
                )
            if base is None:
                return self.index_value(p)
            return self.value(inner, arith.AddiOp(base, self.index_value(p)))

        def chunk(
            inner: InsertPoint,
            p: Valid,
            valid: Valid,
            accumulators: list[list[SSAValue]] | None,
        ) -> list[list[SSAValue]]:
            return self._k_chunk(
                inner,
                op,
                tiling,
                row_blocks,
                col_blocks,
                offset(inner, p),
                valid,
                pad,
                accumulators,
            )

        def grid(flat: Sequence[SSAValue]) -> list[list[SSAValue]]:
            return [
                list(flat[a * width : (a + 1) * width]) for a in range(len(row_blocks))
            ]

        if tiling.unroll_k:
            assert isinstance(k_extent, int), "an unrolled K loop needs a static K"
            blocks = (row_blocks, col_blocks)
            return self._k_unrolled(at, op, tiling, blocks, k_extent, pad, offset)
        result = chunk(at, 0, self.tail(at, k_extent, 0, k1, True), None)
        if isinstance(k_extent, int) and k_extent <= k1:
            return result
        full_end: Valid = k_extent
        if isinstance(k_extent, int) and k1 > k0:
            full_end = k_extent - k_extent % k1

        def body(
            inner: InsertPoint, p: Valid, accumulators: list[SSAValue]
        ) -> list[SSAValue]:
            # The loop covers whole chunks only when there is a static tail.
            valid = (
                k1 if full_end != k_extent else self.tail(inner, k_extent, p, k1, True)
            )
            return [
                acc for row in chunk(inner, p, valid, grid(accumulators)) for acc in row
            ]

        flat = self.loop(at, k1, full_end, k1, [a for r in result for a in r], body)
        result = grid(flat)
        if (
            isinstance(k_extent, int)
            and isinstance(full_end, int)
            and full_end < k_extent
        ):
            result = chunk(at, full_end, k_extent - full_end, result)
        return result

    def _k_unrolled(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        blocks: _Blocks,
        k_extent: int,
        pad: bool,
        offset: Callable[[InsertPoint, Valid], SSAValue],
    ) -> list[list[SSAValue]]:
        """The K chunks unrolled (`MatmulTiling.unroll_k`), each chunk's A and B
        tiles loaded one chunk ahead of the previous chunk's cube steps, as the
        panel nest loads B: with no loop between the chunks, hw-insert-sync
        orders each load after the moves of the chunk two back only (at a loop's
        entry and exit it waits for all of the loop's moves, which stalls MTE2
        at every block)."""
        ta = op.transpose_a is not None
        k1 = tiling.k1

        def load(chunk: int) -> _LoadedChunk:
            start = offset(at, chunk * k1)
            valid = min(k1, k_extent - chunk * k1)
            lhs = [
                self._operand_l1(
                    at, op.lhs, ta, row, (start, valid), tiling.m0, k1, pad, True
                )
                for row in blocks[0]
            ]
            rhs = self._rhs_chunk(at, op, tiling, blocks[1], start, valid, pad)
            return start, valid, (lhs, 0, rhs)

        return self._chunks_ahead(at, op, tiling, blocks, -(-k_extent // k1), pad, load)

    def _chunks_ahead(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        blocks: _Blocks,
        chunks: int,
        pad: bool,
        load: Callable[[int], _LoadedChunk],
    ) -> list[list[SSAValue]]:
        """`chunks` K chunks unrolled, chunk c + 1 loaded (`load`) before the
        cube steps of chunk c, so that its load overlaps them."""
        accumulators: list[list[SSAValue]] | None = None
        ahead = load(0)
        for chunk in range(chunks):
            start, valid, loaded = ahead
            if chunk + 1 < chunks:
                ahead = load(chunk + 1)
            accumulators = self._k_chunk(
                at, op, tiling, *blocks, start, valid, pad, accumulators, loaded
            )
        assert accumulators is not None
        return accumulators

    def _l2_shift(
        self,
        at: InsertPoint,
        tiling: MatmulTiling,
        k_extent: Extent,
        row_blocks: list[tuple[SSAValue, Valid]],
        col_blocks: list[tuple[SSAValue, Valid]] | None,
    ) -> SSAValue:
        """The K offset the L1 block at (i, j) starts at with staggered chunks
        (`MatmulTiling.l2_order`): ((i / m1 + j / n1) mod chunks) * k1, or
        without `col_blocks` (an A panel's row) (i / m1 mod chunks) * k1."""
        assert isinstance(k_extent, int) and k_extent % tiling.k1 == 0
        row = self.value(at, arith.DivUIOp(row_blocks[0][0], self.constant(tiling.m1)))
        if col_blocks is not None:
            column = self.value(
                at, arith.DivUIOp(col_blocks[0][0], self.constant(tiling.n1))
            )
            row = self.value(at, arith.AddiOp(row, column))
        chunk = self.value(at, arith.RemUIOp(row, self.constant(k_extent // tiling.k1)))
        return self.value(at, arith.MuliOp(chunk, self.constant(tiling.k1)))

    def _k_chunk(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        row_blocks: list[tuple[SSAValue, Valid]],
        col_blocks: list[tuple[SSAValue, Valid]],
        k_offset: SSAValue,
        k_valid: Valid,
        pad: bool,
        accumulators: list[list[SSAValue]] | None,
        loaded: tuple[list[SSAValue], int, list[SSAValue]] | None = None,
    ) -> list[list[SSAValue]]:
        """One L1 chunk: load its blocks, then its cube steps in a skewed order
        (the L0 moves of step s + 1 before the matmuls of step s), so that two
        steps' L0 tiles are live at once and MTE1 runs ahead of the cube.
        `loaded` = (A panels, the chunk's offset in them, B tiles) gives the
        chunk's L1 tiles instead (a panel nest, `_k_panel`)."""
        ta, tb = op.transpose_a is not None, op.transpose_b is not None
        if loaded is None:
            lhs_l1 = [
                self._operand_l1(
                    at,
                    op.lhs,
                    ta,
                    row,
                    (k_offset, k_valid),
                    tiling.m0,
                    tiling.k1,
                    pad,
                    True,
                )
                for row in row_blocks
            ]
            rhs_l1 = self._rhs_chunk(at, op, tiling, col_blocks, k_offset, k_valid, pad)
            lhs_base = 0
        else:
            lhs_l1, lhs_base, rhs_l1 = loaded
        windowed = tiling.k1 > tiling.k0
        # A panel deeper than one cube step is moved in windows of it.
        lhs_depth_total = cast(TileType, lhs_l1[0].type).get_shape()[-1]
        lhs_windowed = windowed or (loaded is not None and lhs_depth_total > tiling.k0)
        steps = -(-k_valid // tiling.k0) if windowed else 1
        assert isinstance(steps, int)

        def moves(step: int) -> tuple[list[SSAValue], list[SSAValue]]:
            depth = (step * tiling.k0, tiling.k0) if windowed else None
            lhs_depth = (
                (lhs_base + step * tiling.k0, tiling.k0) if lhs_windowed else None
            )
            return (
                [
                    self._to_l0(at, t, MemorySpace.L0A, ta, lhs_depth, not ta)
                    for t in lhs_l1
                ],
                [self._to_l0(at, t, MemorySpace.L0B, tb, depth, tb) for t in rhs_l1],
            )

        acc = accumulators
        ahead = moves(0)
        for step in range(steps):
            lhs_l0, rhs_l0 = ahead
            if step + 1 < steps:
                ahead = moves(step + 1)
            acc = [
                [
                    self.value(
                        at, tile.MatmulOp(lhs, rhs, None if acc is None else acc[a][b])
                    )
                    for b, rhs in enumerate(rhs_l0)
                ]
                for a, lhs in enumerate(lhs_l0)
            ]
        assert acc is not None
        return acc

    def _rhs_chunk(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        col_blocks: list[tuple[SSAValue, Valid]],
        k_offset: SSAValue,
        k_valid: Valid,
        pad: bool,
    ) -> list[SSAValue]:
        """The B tiles of one L1 chunk, one per base column block."""
        tb = op.transpose_b is not None
        return [
            self._operand_l1(
                at,
                op.rhs,
                tb,
                col,
                (k_offset, k_valid),
                tiling.n0,
                tiling.k1,
                pad,
                False,
            )
            for col in col_blocks
        ]

    def _panels(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        row_blocks: list[tuple[SSAValue, Valid]],
    ) -> _Panels:
        """The A panels of an L1 block row: per base row block, all of K (whole
        chunks, zero-padded past K) in one L1 tile, loaded once for the row's
        blocks (the tiling model's `panel`). Staggered (`l2_order`), one tile
        per K chunk instead, in the row's rotated order (`_l2_shift`), so that
        the cores running other rows read other chunks of B at the same time."""
        k_extent = self.extents.of(op.lhs)[-1]
        assert isinstance(k_extent, int), "an A panel needs a static K"
        if tiling.l2_order:
            shift = self._l2_shift(at, tiling, k_extent, row_blocks, None)
            chunks = []
            for chunk in range(k_extent // tiling.k1):
                start = self._rotated(at, shift, chunk * tiling.k1, k_extent)
                k_block = (start, tiling.k1)
                chunks.append(
                    [
                        self._operand_l1(
                            at,
                            op.lhs,
                            False,
                            row,
                            k_block,
                            tiling.m0,
                            tiling.k1,
                            False,
                            True,
                        )
                        for row in row_blocks
                    ]
                )
            return shift, chunks
        depth = -(-k_extent // tiling.k1) * tiling.k1
        pad = k_extent % tiling.k0 != 0 or depth != k_extent
        zero = self.constant(0)
        return None, [
            [
                self._operand_l1(
                    at,
                    op.lhs,
                    False,
                    row,
                    (zero, k_extent),
                    tiling.m0,
                    depth,
                    pad,
                    True,
                )
                for row in row_blocks
            ]
        ]

    def _rotated(
        self, at: InsertPoint, shift: SSAValue, offset: int, k_extent: int
    ) -> SSAValue:
        """(shift + offset) mod K: a chunk's K offset in a rotated order."""
        total = self.value(at, arith.AddiOp(shift, self.constant(offset)))
        return self.value(at, arith.RemUIOp(total, self.constant(k_extent)))

    def _k_panel(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        tiling: MatmulTiling,
        panels: _Panels,
        blocks: _Blocks,
    ) -> list[list[SSAValue]]:
        """Accumulate over K from the row's A panels: the K chunks unrolled (the
        moves take static windows of the panels), each chunk's B tiles loaded
        one chunk ahead, so that two chunks of B are live and the next one's load
        overlaps this one's cube steps. A staggered panel's chunk c is K chunk
        (shift + c) mod chunks, and so is the B chunk loaded with it."""
        k_extent = self.extents.of(op.lhs)[-1]
        assert isinstance(k_extent, int)
        k1 = tiling.k1
        pad = k_extent % tiling.k0 != 0
        chunks = -(-k_extent // k1)
        shift, tiles = panels

        def load(chunk: int) -> _LoadedChunk:
            offset = chunk * k1
            valid = min(k1, k_extent - offset)
            if shift is None:
                start, lhs, base = self.constant(offset), tiles[0], offset
            else:
                start = self._rotated(at, shift, offset, k_extent)
                lhs, base = tiles[chunk], 0
            rhs = self._rhs_chunk(at, op, tiling, blocks[1], start, valid, pad)
            return start, valid, (lhs, base, rhs)

        return self._chunks_ahead(at, op, tiling, blocks, chunks, pad, load)

    def _operand_l1(
        self,
        at: InsertPoint,
        operand: SSAValue,
        transposed: bool,
        block: tuple[SSAValue, Valid],
        k_block: tuple[SSAValue, Valid],
        size: int,
        k0: int,
        pad: bool,
        is_lhs: bool,
    ) -> SSAValue:
        """Load the base block of a matmul operand into L1 (nz, zero-padded when
        K may be partial): lhs [m, k] or rhs [k, n], as stored (transposed or not)."""
        element_type = tensor_type(operand).element_type
        (offset, valid), (k_offset, k_valid) = block, k_block
        if is_lhs != transposed:
            dims = [(offset, valid, size), (k_offset, k_valid, k0)]
        else:
            dims = [(k_offset, k_valid, k0), (offset, valid, size)]
        if operand in self.group.prologues:
            return self._prologue_l1(at, operand, dims)
        buffer = self.gm.source[operand]
        rank = tensor_type(operand).get_num_dims()
        indices = [self.index[d] for d in range(rank - 2)] + [d[0] for d in dims]
        shape = [d[2] for d in dims]
        valid_shape = [v if isinstance(v, int) else DYNAMIC_INDEX for _, v, _ in dims]
        dynamic = [v for _, v, _ in dims if isinstance(v, SSAValue)]
        tile_type = TileType(
            shape,
            element_type,
            MemorySpace.L1,
            valid_shape,
            tile.Layout.NZ,
            "zero" if pad else None,
        )
        return self.value(at, tile.LoadOp(buffer, indices, tile_type, dynamic))

    def _prologue_l1(
        self,
        at: InsertPoint,
        operand: SSAValue,
        dims: list[tuple[SSAValue, Valid, int]],
    ) -> SSAValue:
        """The block of an operand computed by a prologue (passes/matmul_fusion.py):
        its MAP group's ops on the [rows, cols] tile at (offset, valid, size)
        `dims` in UB, as a vector nest computes them (its inputs loaded from
        GM), zero-padded past the valid extents (the cube reads whole fractals)
        and moved to L1 in nz."""
        prologue = self.group.prologues[operand]
        nest = self._prologue_nests.get(operand)
        if nest is None:
            nest = VectorNest(
                prologue, self.extents, self.gm, self.builder, self.sum_lanes
            )
            self._prologue_nests[operand] = nest
        rank = prologue.rank
        nest.scopes = [Scope(at)]
        for dim in range(rank - 2):
            nest.steps[dim] = 1
            nest.index[dim], nest.valid[dim] = self.index[dim], 1
        for dim, (offset, valid, size) in zip((rank - 2, rank - 1), dims, strict=True):
            nest.steps[dim] = nest.physical[dim] = size
            nest.index[dim], nest.valid[dim] = offset, valid
        computed = nest.tile_of(operand, prologue.identity())
        computed_type = cast(TileType, computed.type)
        if any(
            v != s
            for v, s in zip(
                computed_type.get_valid(), computed_type.get_shape(), strict=True
            )
        ):
            computed = self.value(at, tile.PadOp(computed, tile.PadValue.ZERO))
            computed_type = cast(TileType, computed.type)
        l1_type = TileType(
            computed_type.get_shape(),
            computed_type.element_type,
            MemorySpace.L1,
            computed_type.get_valid(),
            tile.Layout.NZ,
            computed_type.pad_value,
        )
        return self.value(at, tile.MoveOp(computed, l1_type))

    def _to_l0(
        self,
        at: InsertPoint,
        source: SSAValue,
        space: MemorySpace,
        transpose: bool,
        depth: tuple[int, int] | None = None,
        k_is_column: bool = True,
    ) -> SSAValue:
        """Move an L1 block to L0, or with `depth` = (offset, size) the window of
        it along K (its columns when `k_is_column`, else its rows)."""
        source_type = cast(TileType, source.type)
        shape, valid = list(source_type.get_shape()), list(source_type.get_valid())
        window = None
        if depth is not None:
            k_dim = 1 if k_is_column else 0
            offset, size = depth
            window = [0, 0]
            window[k_dim] = offset
            shape[k_dim] = size
            valid[k_dim] = min(size, valid[k_dim] - offset)
        if transpose:
            shape, valid = shape[::-1], valid[::-1]
        result_type = TileType(
            shape, source_type.element_type, space, valid, pad=source_type.pad_value
        )
        return self.value(at, tile.MoveOp(source, result_type, transpose, window))

    def epilogue(
        self,
        at: InsertPoint,
        op: tv.MatmulOp,
        row: tuple[SSAValue, Valid],
        col: tuple[SSAValue, Valid],
        accumulator: SSAValue,
    ) -> None:
        """Store a finished base block, after the group's epilogue ops if any."""
        rank = self.group.rank
        self.index[rank - 2], self.valid[rank - 2] = row
        self.index[rank - 1], self.valid[rank - 1] = col
        result = op.result
        element_type = tensor_type(result).element_type
        if self.group.members == [op]:
            self.store(at, result, accumulator)
            return
        acc_type = cast(TileType, accumulator.type)
        moved_type = TileType(
            acc_type.get_shape(), element_type, MemorySpace.UB, acc_type.get_valid()
        )
        moved = self.value(at, tile.MoveOp(accumulator, moved_type))
        self.scopes = [Scope(at)]
        self.scopes[0].cache[(result, self.group.identity(), element_type)] = moved
        for value in self.group.outputs:
            self.store(at, value, self.tile_of(value, self.group.mapping[value]))
