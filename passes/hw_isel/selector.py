"""The registry of tile op strategies, the `Selector` that asks them, and the
rewrite patterns that lower a function's tile ops.

`STRATEGIES` lists one strategy class per tile op family; `STRATEGY_OF` maps
every tile op class to its strategy. A tile op without one is an error naming
the op, at planning or at lowering: there is no default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace
from pypto_mlir.passes.hw_isel.casts import CastStrategy
from pypto_mlir.passes.hw_isel.elementwise import (
    BinaryStrategy,
    BroadcastStrategy,
    ExpandedMathStrategy,
    SelectStrategy,
    UnaryStrategy,
)
from pypto_mlir.passes.hw_isel.emitter import (
    BufferOf,
    Emitter,
    Valid,
    as_tile,
    copy_flat,
    unary,
)
from pypto_mlir.passes.hw_isel.emitter import (
    Region as TileRegion,
)
from pypto_mlir.passes.hw_isel.gather import TransposeStrategy
from pypto_mlir.passes.hw_isel.matmul import MatmulStrategy
from pypto_mlir.passes.hw_isel.movement import (
    FillStrategy,
    IotaStrategy,
    LoadStrategy,
    MoveStrategy,
    PadStrategy,
    StoreStrategy,
    StridedLoad,
    strided_load,
)
from pypto_mlir.passes.hw_isel.reductions import ReduceStrategy
from pypto_mlir.passes.hw_isel.strategy import (
    IselContext,
    NoScratch,
    SpansOf,
    Term,
    Terms,
    TileOpStrategy,
)
from pypto_mlir.targets import Target


class ValidDimStrategy(NoScratch):
    """`tile.valid_dim`: the static extent, a constant.

    `valid_dim`: the constant extent
    """

    ops = (tile.ValidDimOp,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> Sequence[SSAValue]:
        assert isinstance(op, tile.ValidDimOp)
        return [em.index(self.valid[op.source][op.dim_index])]


class ExtractStrategy(NoScratch):
    """`tile.extract`: a scalar read of the tile's buffer on S.

    `load_scalar` of the ub buffer at the same indices (hw-insert-sync orders it
    after the DMA that wrote the tile with an `mte2 -> s` flag)
    """

    ops = (tile.ExtractOp,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> Sequence[SSAValue]:
        assert isinstance(op, tile.ExtractOp)
        read = em.emit(hw.LoadScalarOp(buffer(op.source), op.indices, op.result.type))
        return [read.results[0]]


class InsertStrategy(NoScratch):
    """`tile.insert`: a scalar write of the tile's buffer on S, in place.

    `vcopy` of the destination (unless in place), then `store_scalar` at the
    same indices (hw-insert-sync orders it after the instructions that wrote or
    read the buffer, and the readers of the result after it)
    """

    ops = (tile.InsertOp,)

    def inplace(self, op: Operation) -> tuple[int, ...]:
        return (1,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.InsertOp)
        dst = copied_destination(self, op, em, buffer)
        em.emit(hw.StoreScalarOp(op.value, dst, op.indices))


def copied_destination(
    strategy: NoScratch,
    op: tile.InsertOp | tile.InsertRowsOp,
    em: Emitter,
    buffer: BufferOf,
) -> SSAValue:
    """The result's buffer of an insert, holding the destination: a `vcopy`
    of it unless the insert is in place."""
    src, dst = buffer(op.dest), buffer(op.result)
    if src is not dst:
        strategy.check_vector_shape(op, op.result)
        region = strategy.region(op.result)
        em.vector(
            unary(hw.VCopyOp),
            [region.lanes(src), region.lanes(dst)],
            region.rows,
            0,
            region.cols,
        )
    return dst


class InsertRowsStrategy(NoScratch):
    """`tile.insert_rows`: the value's rows copied on V into the destination's
    buffer at a run-time row, in place.

    `vcopy` of the destination (unless in place), `subview` of it at the row
    (its bounds checked by the simulator, its footprint the run-time rows for
    hw-insert-sync and the race detector), `vcopy` of the rows into it
    """

    ops = (tile.InsertRowsOp,)

    def inplace(self, op: Operation) -> tuple[int, ...]:
        return (1,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.InsertRowsOp)
        dst = copied_destination(self, op, em, buffer)
        value = as_tile(op.value)
        rows, columns = value.get_shape()
        rows_type = hw.BufferType([rows, columns], value.element_type, MemorySpace.UB)
        view = em.emit(hw.SubviewOp(dst, [op.row, em.index(0)], rows_type))
        copy_flat(em, buffer(op.value), view.results[0], rows * columns)


class GatherStrategy(NoScratch):
    """`tile.gather`: per result row, its index read on S and the source row at
    it copied on V.

    `load_scalar` of the index, `subview` of the source at that run-time row
    (its bounds checked by the simulator), `vcopy` of the row's valid columns
    into the result (its valid columns are the source's: a row padded past
    them, e.g. a run of 24 f16 columns DMAed into rows of 32, has padding no
    instruction wrote)
    """

    ops = (tile.GatherOp,)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> Sequence[SSAValue] | None:
        assert isinstance(op, tile.GatherOp)
        source, indices, result = (
            buffer(op.source),
            buffer(op.indices),
            buffer(op.result),
        )
        src = as_tile(op.source)
        columns = src.get_shape()[1]
        used = self.valid[op.source][1]
        row_type = hw.BufferType([columns], src.element_type, MemorySpace.UB)
        for w in range(as_tile(op.result).get_shape()[0]):
            position = op.start
            if w:
                position = em.emit(arith.AddiOp(op.start, em.index(w))).results[0]
            row = em.emit(hw.LoadScalarOp(indices, [position])).results[0]
            view = em.emit(hw.SubviewOp(source, [row, em.index(0)], row_type))
            copy_flat(em, view.results[0], em.subview(result, w * columns), used)
        return None


STRATEGIES: tuple[type[TileOpStrategy], ...] = (
    LoadStrategy,
    StoreStrategy,
    MoveStrategy,
    MatmulStrategy,
    UnaryStrategy,
    BinaryStrategy,
    SelectStrategy,
    BroadcastStrategy,
    CastStrategy,
    ReduceStrategy,
    FillStrategy,
    IotaStrategy,
    PadStrategy,
    TransposeStrategy,
    ValidDimStrategy,
    ExtractStrategy,
    InsertStrategy,
    InsertRowsStrategy,
    GatherStrategy,
    ExpandedMathStrategy,
)
"""One strategy per tile op family; adding a family is adding its class here."""


def _strategy_of() -> dict[type[Operation], type[TileOpStrategy]]:
    found: dict[type[Operation], type[TileOpStrategy]] = {}
    for strategy in STRATEGIES:
        for op_type in strategy.ops:
            assert op_type not in found, f"{op_type.name} has two strategies"
            found[op_type] = strategy
    return found


STRATEGY_OF: Mapping[type[Operation], type[TileOpStrategy]] = _strategy_of()
"""The strategy of every tile op class."""


class PhysicalExtents(dict[SSAValue, Valid]):
    """Valid extents for a `Selector` that sizes scratch before they are known
    (the tiling model's probe nests): every tile's physical shape, a bound."""

    def __missing__(self, value: SSAValue) -> Valid:
        return tuple(as_tile(value).get_shape())


class Selector:
    """Per tile op: in-place operands, scratch buffers, and its instructions,
    each answered by the op's strategy (ops of other dialects have none)."""

    def __init__(
        self, target: Target, valid: dict[SSAValue, Valid], block_reduce: bool = True
    ):
        self.target = target
        self.valid = valid
        self._context = IselContext(target, valid)
        self._strategies = {s: s(target, valid, block_reduce) for s in STRATEGIES}

    def strategy(self, op: Operation) -> TileOpStrategy | None:
        """The strategy of tile op `op`; None for an op of another dialect."""
        if op.dialect_name() != tile.Tile.name:
            return None
        strategy = STRATEGY_OF.get(type(op))
        if strategy is None:
            raise op_error(
                op,
                f"tile-to-hw cannot lower {op.name}: no strategy in hw_isel's "
                "STRATEGIES lists it",
            )
        return self._strategies[strategy]

    def region(self, value: SSAValue) -> TileRegion:
        return self._context.region(value)

    def inplace(self, op: Operation) -> tuple[int, ...]:
        """Operands whose buffer the result may take over when they die at `op`."""
        strategy = self.strategy(op)
        return () if strategy is None else strategy.inplace(op)

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        """The scratch buffers `op` needs while it executes, in `lower`'s order."""
        strategy = self.strategy(op)
        return [] if strategy is None else strategy.scratch(op)

    def unread(self, op: Operation) -> bool:
        """Whether tile op `op` has users and every one reads through its tile
        result (`TileOpStrategy.reads_through`): no instruction would read what
        its instructions write, so it gets none."""
        uses = [use for result in op.results for use in result.uses]
        if not uses or not all(isinstance(r.type, tile.TileType) for r in op.results):
            return False
        for use in uses:
            strategy = self.strategy(use.operation)
            if strategy is None or use.index not in strategy.reads_through(
                use.operation
            ):
                return False
        return True

    def scratch_terms(self, op: Operation, spans_of: SpansOf) -> list[Term]:
        """An upper bound of the bytes of `scratch(op)` for the tiling model
        (`TileOpStrategy.scratch_terms`)."""
        strategy = self.strategy(op)
        return [] if strategy is None else strategy.scratch_terms(op, Terms(spans_of))

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> Sequence[SSAValue] | None:
        """Emit the instructions of tile op `op` (before it); the values that
        replace its results, if they are not tiles."""
        strategy = self.strategy(op)
        if strategy is None:
            raise op_error(op, f"tile-to-hw cannot lower {op.name}")
        if self.unread(op):
            return None
        em.at(op)
        return strategy.lower(op, em, buffer, scratch)

    def _strided_load(self, op: tile.LoadOp) -> StridedLoad | None:
        """The staging of a load strided in GM (`movement.strided_load`), which
        the scratch fuzz test leaves to the tiling model's own term."""
        return strided_load(self._context, op)


# --------------------------------------------------------------------------------------
# Rewriting
# --------------------------------------------------------------------------------------


@dataclass
class _FunctionLowering:
    """What the patterns lowering one function share."""

    selector: Selector
    emitter: Emitter
    buffer: BufferOf
    scratch: Mapping[Operation, Sequence[SSAValue]]
    lowered: set[Operation]


class LowerTileOpFamily(RewritePattern):
    """Lower the ops of one strategy's family: its instructions before the op,
    then the op is erased (or replaced, for scalar results) once no op uses its
    tiles; an earlier tile op whose last user this was goes with it. Tiles
    that loops carry stay until the loops are rebuilt (`tile_to_hw`)."""

    def __init__(self, family: type[TileOpStrategy], lowering: _FunctionLowering):
        self.family = family
        self.lowering = lowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if STRATEGY_OF.get(type(op)) is not self.family:
            return
        state = self.lowering
        replacements = state.selector.lower(
            op, state.emitter, state.buffer, list(state.scratch.get(op, []))
        )
        state.lowered.add(op)
        if replacements is not None:
            for result, value in zip(op.results, replacements, strict=True):
                rewriter.replace_all_uses_with(result, value)
        _erase_if_unused(op, rewriter, state.lowered)


def _erase_if_unused(
    op: Operation, rewriter: PatternRewriter, lowered: set[Operation]
) -> None:
    """Erase lowered tile op `op` when nothing uses its results, then its
    lowered tile definers that this leaves unused (depth first, operands in
    order, with an explicit stack: a chain of any length)."""
    stack = [op]
    while stack:
        top = stack.pop()
        if top not in lowered or any(r.first_use is not None for r in top.results):
            continue
        definers = [
            operand.owner
            for operand in top.operands
            if isinstance(operand.owner, Operation)
        ]
        rewriter.erase(top)
        lowered.discard(top)
        stack.extend(reversed(definers))


def lower_tile_ops(
    body: Region,
    selector: Selector,
    emitter: Emitter,
    buffer: BufferOf,
    scratch: Mapping[Operation, Sequence[SSAValue]],
) -> None:
    """Lower every tile op of `body` in program order, one pattern per family.

    The walk goes forward once, without revisiting new ops: the constants and
    aliased buffers the instructions create are hoisted in the order of their
    first use, so the order of the ops' lowering is that of the program. No
    trivially dead op is erased unlowered (`dce_enabled=False`): a tile op's
    instructions run even when no op reads its tile."""
    lowering = _FunctionLowering(selector, emitter, buffer, scratch, set())
    PatternRewriteWalker(
        GreedyRewritePatternApplier(
            [LowerTileOpFamily(family, lowering) for family in STRATEGIES],
            dce_enabled=False,
        ),
        apply_recursively=False,
    ).rewrite_region(body)
