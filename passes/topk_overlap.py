"""The top-k dense fallback's mask rows built inside the flash nest's query
blocks (`topk-mask-overlap`, docs/sparse.md, *Top-k attention*).

tv-sparse-to-tile emits the mask nest (passes/topk_dense.py) as a loop over
blocks of `rows` query rows storing an `S x N` GM temporary, marked
`MASK_NEST_ATTR`; tv-to-tile tiles the outlined attention into its flash
nest, a loop over query blocks of `br` rows that loads that temporary; once
the outlined function is inlined, `overlap_mask_rows` moves the mask blocks
of query block `q` to the start of its iteration (`br / rows` blocks,
unrolled). Each core then builds the mask rows of its own query blocks just
before their key loops, so tile-to-hw needs no `sync_all` between the
phases: an iteration reads only the rows it stores (multicore_split's
`_own_rows`), and hw-insert-sync orders a core's MTE3 store before its MTE2
load of the same GM bytes. It does not yet overlap the phases in the
simulator's model: the next block's marks wait for V's fills and sums,
queued behind the key steps S has already issued, so a core's mask work and
flash work add up (measured, docs/sparse.md); the marks interleaved with the
key groups are the next step.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from pypto_mlir.diagnostics import emit_remark
from pypto_mlir.dialects import tile

from .index_range import Range
from .multicore_split import index_ranges_of

MASK_NEST_ATTR = "pypto.topk_mask_nest"
"""On the dense fallback's mask nest (its block loop) when `topk-mask-overlap`
asks for it to be moved into the flash nest."""

MASK_ROW_ATTR = "pypto.mask_row"
"""On the pipelined mask nest's zero fills: the row of its block the fill is
for, which keeps CSE from merging the fills into one (passes/topk_dense.py)."""


def overlap_mask_rows(module: ModuleOp) -> None:
    """Move each marked mask nest into the flash nest that reads its
    temporary, or say with a remark why it stays a phase of its own."""
    for nest in [
        o
        for o in module.walk()
        if isinstance(o, scf.ForOp) and MASK_NEST_ATTR in o.attributes
    ]:
        del nest.attributes[MASK_NEST_ATTR]
        why = _fuse(nest)
        if why is not None:
            emit_remark(
                nest,
                "tv-to-tile: top-k mask rows not overlapped with the flash nest "
                f"(a sync_all between them): {why}",
            )


def _constant(ranges: dict[SSAValue, Range], value: SSAValue) -> int | None:
    return ranges.get(value, Range()).constant


def _touches(op: Operation, memref: SSAValue) -> bool:
    return any(
        isinstance(o, tile.StoreOp | tile.LoadOp) and memref in o.operands
        for o in op.walk()
    )


def _fuse(nest: scf.ForOp) -> str | None:
    """Move `nest` into the flash loop after it (None), or why not."""
    stores = [o for o in nest.walk() if isinstance(o, tile.StoreOp)]
    masks = {s.dest for s in stores}
    if len(masks) != 1:
        return "the mask nest does not store one temporary"
    (mask,) = masks
    ranges = index_ranges_of(nest)
    flash: scf.ForOp | None = None
    op = nest.next_op
    while op is not None and flash is None:
        if isinstance(op, scf.ForOp) and _touches(op, mask):
            flash = op
        elif any(isinstance(o, tile.LoadOp | tile.StoreOp) for o in op.walk()):
            return "other tile work between the mask nest and the flash nest"
        op = op.next_op
    if flash is None:
        return "no flash-attention loop reads the mask (no blocks fit)"
    bounds = [_constant(ranges, v) for v in (nest.lb, nest.ub, nest.step)]
    flash_bounds = [_constant(ranges, v) for v in (flash.lb, flash.ub, flash.step)]
    if None in bounds or None in flash_bounds or flash.results:
        return "the loops' bounds are not static"
    lb, s, rows = bounds
    flash_lb, flash_ub, br = flash_bounds
    assert rows is not None and s is not None and br is not None
    query = flash.body.block.args[0]
    reads = [o for o in flash.walk() if isinstance(o, tile.LoadOp) and o.source is mask]
    same_rows = (flash_lb, flash_ub) == (lb, s)
    if not same_rows or any(r.indices[0] is not query for r in reads):
        return "the flash nest splits its query blocks' keys over cores (key split)"
    if br % rows:
        return f"query blocks of {br} rows are not whole mask blocks of {rows} rows"
    if s % br:
        return f"S = {s} is not a multiple of the query block ({br} rows)"
    _move(nest, flash, rows, br)
    return None


def _move(nest: scf.ForOp, flash: scf.ForOp, rows: int, br: int) -> None:
    """The `br / rows` mask blocks of query block `q` at the start of the
    flash loop's body, block `j` at row `q + j * rows`; then `nest` erased."""
    body: Block = flash.body.block
    first = body.first_op
    assert first is not None
    query = body.args[0]
    block_iv = nest.body.block.args[0]
    for j in range(br // rows):
        start: SSAValue = query
        if j:
            offset = arith.ConstantOp.from_int_and_width(j * rows, query.type)
            moved = arith.AddiOp(query, offset.result)
            for op in (offset, moved):
                op.location = nest.location
                body.insert_op_before(op, first)
            start = moved.result
        mapping: dict[SSAValue, SSAValue] = {block_iv: start}
        for op in nest.body.block.ops:
            if isinstance(op, scf.YieldOp):
                continue
            copy = op.clone(value_mapper=mapping)
            for fill in copy.walk():
                row = fill.attributes.get(MASK_ROW_ATTR)
                if isinstance(row, IntegerAttr):
                    fill.attributes[MASK_ROW_ATTR] = IntegerAttr(
                        j * rows + row.value.data, 64
                    )
            body.insert_op_before(copy, first)
    nest.detach()
    nest.erase()
