"""Reductions over a long axis split across the cores (`tv-schedule`'s
`split-reductions`, docs/pipeline.md *Scheduling*).

A reduction whose kept dims give the cores too little to do (a column sum of
1024x768: 768 kept elements; a full sum: none) reads its whole input on few
cores. Split instead: view the input with its first reduced dim `E` cut into
`S` ranges of `E / S` (`tv.reshape`, no copy), reduce each range (a nest whose
`S` ranges are parallel units, so the multi-core split spreads them), write the
partial results to GM (a temporary, the workspace: f32 for sums of 16-bit
floats, which `tv` accumulates in f32), then reduce the `S` partials in a
second nest. The GM dependence between the two nests puts a `sync_all` between
them (tile-to-hw). In `tv`:

    %s = tv.reduce_sum %x [0] : !tv.tensor<1024x768xf16> -> !tv.tensor<768xf16>
    becomes
    %v = tv.reshape %x : !tv.tensor<1024x768xf16> to !tv.tensor<16x64x768xf16>
    %w = tv.cast %v : ... to !tv.tensor<16x64x768xf32>
    %p = tv.reduce_sum %w [1] : !tv.tensor<16x64x768xf32> -> !tv.tensor<16x768xf32>
    %q = tv.reduce_sum %p [0] : !tv.tensor<16x768xf32> -> !tv.tensor<768xf32>
    %s = tv.cast %q : !tv.tensor<768xf32> to !tv.tensor<768xf16>

`S` is a divisor of `E` (the reshape needs whole ranges), chosen with the
plain nest by the tiling model's cost (`tiling_model.tiling_cost` of each
nest's tiles, balanced for the cores as tv-to-tile balances them, plus the
target's `sync_all` latency between the phases); the split is taken only when
it is estimated faster. Only a reduction of a function argument (contiguous in
GM) of static shape, of floats (integer sums wrap, max and min are exact, but
the split is not needed by any kernel yet), whose reduced dims lie in the tile
dims of both nests, is considered; a remark says what was decided and why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, f32
from xdsl.ir import Attribute, BlockArgument, Operation

from pypto_mlir.diagnostics import emit_remark
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects.tile import element_bytes, is_float
from pypto_mlir.targets import Target

from .located_builder import LocatedBuilder
from .tiling_model import (
    BUFFERING,
    CoreBalance,
    LiveProfile,
    LiveTerm,
    VectorRequest,
    auto_vector_tiling,
    balanced_tiling,
    tiling_cost,
)

MAX_RANGES_PER_CORE = 4
"""At most this many ranges per core are tried: more only add partials for the
second nest to read."""


@dataclass(frozen=True)
class ReduceNest:
    """What the cost estimate needs of one reduction nest."""

    frame: tuple[int, ...]
    reduced: frozenset[int]
    in_bytes: int
    """Of the elements loaded from GM."""
    work_bytes: int
    """Of the elements the reduction computes in (a cast copy when wider)."""
    out_bytes: int


def nest_cycles(target: Target, nest: ReduceNest, cores: int) -> int | None:
    """The busiest core's estimated cycles for a reduction nest, tiled as
    tv-to-tile tiles it (the largest tile that fits UB twice, the reduced dims
    whole if they fit, then balanced for the cores by cost); None when its
    reduced dims are not all tile dims (the estimate does not model that)."""
    rank = len(nest.frame)
    lead = rank - min(rank, 2)
    if any(d < lead for d in nest.reduced):
        return None
    tile_dims = range(lead, rank)
    everywhere = tuple(True for _ in tile_dims)
    kept = tuple(d not in nest.reduced for d in tile_dims)
    terms = [LiveTerm(nest.in_bytes, everywhere), LiveTerm(nest.work_bytes, kept)]
    if nest.work_bytes != nest.in_bytes:
        terms.append(LiveTerm(nest.work_bytes, everywhere))
    profile = LiveProfile((tuple(terms),), ())
    alignment = target.memories["ub"].alignment
    unit = max(
        alignment // math.gcd(alignment, b) for b in (nest.in_bytes, nest.work_bytes)
    )
    ub = target.memories["ub"].size
    assert ub is not None
    extents = tuple(nest.frame[d] for d in tile_dims)
    for resident in (True, False):
        request = VectorRequest(
            extents=extents,
            cover=tuple(resident and d in nest.reduced for d in tile_dims),
            aligned=tuple(d == rank - 1 for d in tile_dims),
            unit=unit,
            profile=profile,
        )
        tiling = auto_vector_tiling(request, ub // BUFFERING)
        if tiling is not None:
            break
    else:
        return None
    balance = CoreBalance(
        cores=cores,
        outer_units=math.prod(nest.frame[:lead]),
        reduced=frozenset(d - lead for d in nest.reduced),
        element_bytes=nest.in_bytes,
        outer_pitch=_pitches(nest)[lead - 1] if lead else 0,
        pitches=tuple(_pitches(nest)[lead:]),
    )
    better = balanced_tiling(target, request, tiling, ub // BUFFERING, balance)
    return tiling_cost(target, better or tiling, extents, balance)


def _pitches(nest: ReduceNest) -> list[int]:
    """Per frame dim, the bytes the (row-major) result moves per element."""
    pitches = [0] * len(nest.frame)
    stride = nest.out_bytes
    for dim in reversed(range(len(nest.frame))):
        if dim not in nest.reduced and nest.frame[dim] > 1:
            pitches[dim] = stride
            stride *= nest.frame[dim]
    return pitches


@dataclass(frozen=True)
class SplitChoice:
    ranges: int
    split_cycles: int
    plain_cycles: int
    keep_rest: bool = False
    """The first nest reduces only the split dim's ranges and keeps the other
    reduced dims for the second (partials a whole GM block wide, where a
    full reduction's scalar partials would go to the cores in shares of
    8)."""


def _work_type(op: tv.ReduceOp) -> Attribute:
    element = op.input.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    if isinstance(op, tv.ReduceSumOp) and element_bytes(element) < 4:
        return f32
    return element


def choose_split(target: Target, op: tv.ReduceOp, cores: int) -> SplitChoice | None:
    """The number of ranges the estimate finishes soonest with (1: no split),
    with both estimates; None when the estimate cannot model the nests."""
    shape = tuple(op.input.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]
    axes = tuple(op.axes.get_values())
    element = op.input.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    in_bytes = element_bytes(element)
    work = element_bytes(_work_type(op))
    plain = nest_cycles(
        target, ReduceNest(shape, frozenset(axes), in_bytes, work, in_bytes), cores
    )
    if plain is None:
        return None
    d = axes[0]
    extent = shape[d]
    best = SplitChoice(1, plain, plain)
    for ranges in range(2, min(extent // 2, MAX_RANGES_PER_CORE * cores) + 1):
        if extent % ranges:
            continue
        for keep_rest in (False, True) if len(axes) > 1 else (False,):
            first, second = _phases(shape, axes, ranges, keep_rest)
            one = nest_cycles(target, ReduceNest(*first, in_bytes, work, work), cores)
            two = nest_cycles(target, ReduceNest(*second, work, work, in_bytes), cores)
            if one is None or two is None:
                continue
            cycles = one + target.sync.all_latency + two
            if cycles < best.split_cycles:
                best = SplitChoice(ranges, cycles, plain, keep_rest)
    return best


def _phases(
    shape: Sequence[int], axes: Sequence[int], ranges: int, keep_rest: bool
) -> tuple[tuple[tuple[int, ...], frozenset[int]], ...]:
    """The frames and reduced dims of the two nests of a split."""
    d = axes[0]
    split_shape = (*shape[:d], ranges, shape[d] // ranges, *shape[d + 1 :])
    if keep_rest:
        partial = (*shape[:d], ranges, *shape[d + 1 :])
        return (split_shape, frozenset({d + 1})), (partial, frozenset(axes))
    partial = (
        *shape[:d],
        ranges,
        *(e for a, e in enumerate(shape) if a > d and a not in axes),
    )
    return (split_shape, frozenset(_split_axes(axes, d))), (partial, frozenset({d}))


def _split_axes(axes: Sequence[int], d: int) -> list[int]:
    """The reduced dims of the split view (dim d becomes ranges x range)."""
    return [a + 1 if a >= d else a for a in axes]


def _eligible(op: Operation, function: func.FuncOp) -> str | None:
    """None when `op` may be split, else why not (for the remark); ops that
    are no candidate at all (not a reduction) give ""."""
    if not isinstance(op, tv.ReduceOp):
        return ""
    source = op.input
    if not isinstance(source, BlockArgument) or source.block is not function.body.block:
        return "its input is computed, not a function argument (contiguous in GM)"
    shape = source.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
    if DYNAMIC_INDEX in shape:
        return "its input has a dynamic dim"
    if 0 in shape:
        return "its input is empty"
    if not is_float(source.type.element_type):  # pyright: ignore[reportAttributeAccessIssue]
        return "its elements are not floats"
    return None


def split_reductions(function: func.FuncOp, target: Target, cores: int) -> None:
    """Split the reductions of `function` that the estimate says finish sooner
    split (see the module doc); a remark per reduction of an argument."""
    for op in list(function.body.block.ops):
        why = _eligible(op, function)
        if why == "":
            continue
        assert isinstance(op, tv.ReduceOp)
        shape = "x".join(
            "?" if e == DYNAMIC_INDEX else str(e)
            for e in op.input.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
        )
        if why is not None:
            emit_remark(op, f"{op.name} over {shape} not split: {why}")
            continue
        choice = choose_split(target, op, cores)
        if choice is None:
            emit_remark(
                op,
                f"{op.name} over {shape} not split: the estimate does not model its nests",
            )
            continue
        d = op.axes.get_values()[0]
        if choice.ranges == 1:
            emit_remark(
                op,
                f"{op.name} over {shape} not split along dim {d}: estimated "
                f"{choice.plain_cycles} cycles in one nest, no split of it is estimated faster",
            )
            continue
        _rewrite(op, choice.ranges, choice.keep_rest)
        extent = op.input.type.get_shape()[d]  # pyright: ignore[reportAttributeAccessIssue]
        emit_remark(
            op,
            f"split {op.name} over {shape} along dim {d} into {choice.ranges} ranges of "
            f"{extent // choice.ranges}"
            f"{', other reduced dims kept in the partials' if choice.keep_rest else ''}"
            f": partial results ({_work_type(op)}) to a GM "
            f"workspace, combined by a second nest after a sync_all (estimated "
            f"{choice.split_cycles} cycles, {choice.plain_cycles} in one nest)",
        )
        op.detach()
        op.erase()


def _rewrite(op: tv.ReduceOp, ranges: int, keep_rest: bool) -> None:
    """Insert the split form of `op` before it and use it in its place."""
    builder = LocatedBuilder.before(op)
    shape = list(op.input.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]
    axes = list(op.axes.get_values())
    d = axes[0]
    split_shape = [*shape[:d], ranges, shape[d] // ranges, *shape[d + 1 :]]
    value = builder.value(tv.ReshapeOp(op.input, split_shape))
    element = op.input.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    work = _work_type(op)
    if work != element:
        value = builder.value(tv.CastOp(value, work))
    kind = type(op)
    keep = op.keepdims is not None
    if keep_rest:
        partial = builder.value(kind(value, [d + 1]))
        value = builder.value(kind(partial, axes, keep))
    else:
        partial = builder.value(kind(value, _split_axes(axes, d), keep))
        value = builder.value(kind(partial, [d]))
    if work != element:
        value = builder.value(tv.CastOp(value, element))
    assert value.type == op.result.type, (value.type, op.result.type)
    op.result.replace_all_uses_with(value)
