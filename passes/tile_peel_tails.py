"""`tile-peel-tails`: make the valid extents of tiles static by peeling tails.

`tv-to-tile` computes a tile's valid extent as `min(step, size - iv)`, which is
dynamic (`?`) in the tile type. `ascend_hw` counts (bursts, repeats, masks,
m/n/k) are static, so `tile-to-hw` needs every extent to be a constant. This
pass splits each `scf.for` with constant bounds whose range is not a multiple of
its step, and whose body computes tiles with dynamic extents, into a loop over
the full steps and a peeled copy of its last iteration; then it folds index
arithmetic from the loop bounds (`passes/index_range.py`): in the main loop
`size - iv >= step`, in the peeled copy `iv` is a constant, so every extent
becomes a constant and `tile.valid_dim` folds away. Loops whose range divides
by the step need no peeling: folding alone makes their extents static.

Peeling is one loop at a time, a `RewritePattern` (`PeelTailIteration`); the
folding that follows is over whole functions (ranges flow from outer loops), so
it runs after the walk.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsolatedFromAbove
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import cse

from pypto_mlir.dialects.tile import TileType
from pypto_mlir.passes.index_range import (
    Range,
    fold_index_constants,
    index_ranges,
    loop_trip_count,
)


def has_dynamic_tiles(op: Operation) -> bool:
    """Whether `op` or an op nested in it makes a tile with a `?` valid extent."""
    return any(
        isinstance(result.type, TileType) and DYNAMIC_INDEX in result.type.get_valid()
        for nested in op.walk()
        for result in nested.results
    )


def _needs_peeling(loop: scf.ForOp, ranges: dict[SSAValue, Range]) -> bool:
    trips = loop_trip_count(loop, ranges)
    if trips is None or trips < 2:
        return False
    lb, ub, step = (ranges[v].constant for v in (loop.lb, loop.ub, loop.step))
    assert lb is not None and ub is not None and step is not None
    return (ub - lb) % step != 0 and has_dynamic_tiles(loop)


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def peel_last_iteration(loop: scf.ForOp, trips: int, rewriter: PatternRewriter) -> None:
    """Run the last of `trips` iterations after the loop, as straight-line code.

    The loop keeps its first `trips - 1` iterations (its upper bound becomes the
    start of the last one); the copy of the body gets that start as a constant
    induction variable and the loop's results as its carried values, and its
    yielded values replace the loop's results.
    """
    lb, step = _constant(loop.lb), _constant(loop.step)
    assert lb is not None and step is not None
    last = lb + (trips - 1) * step
    last_value = arith.ConstantOp(IntegerAttr(last, loop.lb.type))
    rewriter.insert(last_value, InsertPoint.before(loop))
    users = [
        (use.operation, use.index, i)
        for i, result in enumerate(loop.results)
        for use in list(result.uses)
    ]
    loop.operands[1] = last_value.result  # the upper bound
    rewriter.notify_op_modified(loop)

    body = loop.body.block
    mapping: dict[SSAValue, SSAValue] = {body.args[0]: last_value.result}
    mapping.update(zip(body.args[1:], loop.results, strict=True))
    point = InsertPoint.after(loop)
    yielded: tuple[SSAValue, ...] = ()
    for op in body.ops:
        if isinstance(op, scf.YieldOp):
            yielded = tuple(mapping.get(v, v) for v in op.arguments)
            break
        clone = op.clone(mapping)
        rewriter.insert(clone, point)
        point = InsertPoint.after(clone)
    for user, index, result in users:
        user.operands[index] = yielded[result]
        rewriter.notify_op_modified(user)


def _materialize_bounds(
    loop: scf.ForOp, ranges: dict[SSAValue, Range], rewriter: PatternRewriter
) -> None:
    """Make the lower bound and step `arith.constant`s where ranges know them."""
    for index in (0, 2):
        value = loop.operands[index]
        if _constant(value) is None:
            constant = ranges[value].constant
            new = arith.ConstantOp(IntegerAttr(constant, value.type))
            rewriter.insert(new, InsertPoint.before(loop))
            loop.operands[index] = new.result
            rewriter.notify_op_modified(loop)


def _root(op: Operation) -> Operation:
    """The nearest op isolated from above holding `op` (its function), else the
    outermost: ranges are computed over it. Every value a loop can read is
    defined inside it, and the whole module per loop made lowering quadratic in
    the number of functions."""
    while (parent := op.parent_op()) is not None:
        op = parent
        if op.has_trait(IsolatedFromAbove):
            break
    return op


class PeelTailIteration(RewritePattern):
    """Peel the partial last iteration of an `scf.for` with constant bounds whose
    body makes tiles with dynamic valid extents (see the module doc).

    The walk reaches a loop before the loops in its body and their copies, so
    outer loops are peeled first; ranges come from the IR as it is when the loop
    is reached, as a peel changes only those of the ops at and after its loop.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        if not has_dynamic_tiles(op):
            return
        ranges = index_ranges(_root(op))
        if not _needs_peeling(op, ranges):
            return
        trips = loop_trip_count(op, ranges)
        assert trips is not None
        _materialize_bounds(op, ranges, rewriter)
        peel_last_iteration(op, trips, rewriter)


@dataclass(frozen=True)
class TilePeelTailsPass(ModulePass):
    """Peel partial last iterations so that every tile extent becomes static.

    Splits each `scf.for` with constant bounds whose range is not a multiple of
    its step and whose body makes tiles with dynamic valid extents into the full
    iterations and a peeled last one, then folds index arithmetic from the loop
    bounds, canonicalizes (constants propagate, `tile.valid_dim` folds) and
    merges equal constants.
    """

    name = "tile-peel-tails"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PeelTailIteration()).rewrite_module(op)
        canonicalize = CanonicalizePass()
        while True:
            changed = fold_index_constants(op)
            canonicalize.apply(ctx, op)
            if not changed:
                break
        cse(op)
