"""The dense fallback of top-k attention: an additive mask built from the
indices, then dense masked attention (docs/sparse.md, *Top-k attention*).

The fused nest (passes/topk_attention.py) gathers each query's `k` key and
value rows with one GM -> UB DMA a row: 61 cycles of MTE2 a row on ascend910b
by the model, whatever the density. When `k / N` is large enough, reading all
of K and V block by block is cheaper: `tv-sparse-to-tile` then builds an
`S x N` mask in a GM temporary,

    M[i, j] = ln(count of j in idx[i])      (0 for a key named once, -inf absent)

and outlines `softmax(q @ k.T [* s] + M) @ v` for `tv-to-tile`, whose
flash-attention nest (passes/attention_nests.py) computes it without the
scores leaving the chip. `ln(count)` keeps the semantics of `x[idx]`: a key
named `c` times in a row adds `c exp(x)` to the softmax's sum and `c p v` to
the product, as `exp(x + ln c)` does; `x + 0` is exact, so rows without
duplicates round as the reference's scaled scores.

The mask nest, per block of `rows` query rows (the blocks split over the
cores by tile-to-hw): the block's index rows loaded into UB with one DMA;
per query row, an i32 row filled with 0 on V and each index marked 1 on S
(`tile.extract` of the index, `tile.insert`: two UB accesses); the row's sum
(V, read back on S) is k unless a key is named twice, and only then a second
pass counts (`tile.extract`, `arith.addi`, `tile.insert`: a loop of 0 or 1
trips, as the fused nest's runs); the counts cast to f32, `ln` (0 -> -inf,
1 -> 0) and cast to the scores' type on V, and stored. An index outside the
keys is a scalar access outside the count row, which the simulator reports
at the gather's line: the row's physical width is exactly `N` (a multiple
of the alignment unit, else no fallback).

With `topk-mask-pipeline` (default) the rows of a block are software-
pipelined: row r + 1 is marked before row r's sum is read back, and row r's
ln and store are issued after row r + 1's marks, so S (the marks, the
bound) no longer waits for V and MTE3 each row; each row's zeros are a fill
of its own, two rows ahead (three count rows in flight).

The choice is made at compile time (S, k, N, d are static) from the
estimates of both paths (`dense_estimate` here, the fused nest's
`TopkAttentionPlan._estimate`), with a remark giving both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    UnitAttr,
    bf16,
    f16,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType
from pypto_mlir.targets import Target, cost

from .attention_model import choose_tiling
from .located_builder import LocatedBuilder
from .nest_builder import Valid
from .sparse_nests import SparseNest
from .sparse_outline import outline
from .tiling_model import column_unit
from .topk_overlap import MASK_NEST_ATTR, MASK_ROW_ATTR

MASK_BLOCK_ROWS = 16
"""The most query rows whose index rows one DMA loads (the mask nest's row
loop holds a loop, so tile-pipeline does not prefetch it: the load's GM
latency is paid once a block)."""

TOPK_DENSE_MODES = ("auto", "always", "never")
"""The values of `topk-dense-fallback`: by the cost model, wherever the
fallback applies, nowhere."""

MASK_TYPES: tuple[Attribute, ...] = (f16, bf16)
"""Element types of q, k and v the fallback takes (the cube's)."""

FLASH_TYPES: tuple[Attribute, ...] = (f16,)
"""Element types tv-to-tile's flash-attention nest fuses (bf16 attention is
three nests through GM, which the estimate does not cover: `auto` then keeps
the gather nest)."""

INDEX_SCALAR_OPS = 1
"""Scalar ALU instructions per index besides its two UB accesses (its
read and the mark's write): its address (the estimate's figure)."""

ROW_SCALAR_OPS = 3
"""Scalar ALU instructions per row besides the read of its count of keys
named: the compare, the select and the loop of 0/1 trips."""


@dataclass(frozen=True)
class DenseEstimate:
    """Estimated cycles of the busiest core for the dense fallback."""

    mask: float
    """The mask nest (its S, V, MTE2 and MTE3 work as one chain a row)."""
    flash: float | None
    """The flash-attention nest (passes/attention_model.py) plus the mask's
    blocks loaded in each key step; None: no blocks fit or the type is not
    f16 (tv-to-tile then lowers the attention as three nests through GM, not
    estimated)."""
    rows: int
    """Query rows of an index block."""
    per_index: float
    """The mask nest's scalar cycles per index."""
    pipelined: bool = False
    """The mask nest's rows overlap (`topk-mask-pipeline`)."""
    in_flash: bool = False
    """The mask rows are built in the flash nest's query blocks
    (`topk-mask-overlap`): no `sync_all`, each core's mask rows are those of
    its query blocks, and `mask` is that work of the busiest core."""

    @property
    def total(self) -> float | None:
        return None if self.flash is None else self.mask + self.flash

    def text(self) -> str:
        flash = (
            "not estimated: no flash-attention nest (no blocks fit, or not f16)"
            if self.flash is None
            else f"{self.flash:.0f}"
        )
        total = "" if self.total is None else f"{self.total:.0f} cycles: "
        return (
            f"{total}mask nest {self.mask:.0f} ({self.rows} index rows a load, "
            f"{self.per_index:.0f} scalar cycles an index"
            f"{', rows pipelined' if self.pipelined else ''}"
            f"{', in the flash nest query blocks' if self.in_flash else ''}), "
            f"flash nest {flash}"
        )


def mask_unit(element_type: Attribute, target: Target) -> int:
    """The physical columns of the mask nest's rows are a multiple of this."""
    return column_unit([element_type, f32, i32], target.memories["ub"].alignment)


def dense_refusal(
    element_type: Attribute,
    index_type: Attribute,
    keys: int,
    out_rank: int,
    unit: int,
) -> str | None:
    """Why the dense fallback does not take a top-k chain (None: it may)."""
    if element_type not in MASK_TYPES:
        return f"the flash nest's cube takes f16/bf16, not {element_type}"
    if index_type != i32:
        return "the indices must be i32 (read from UB on the scalar unit)"
    if keys % unit:
        return (
            f"N = {keys} keys is not a multiple of {unit}: an index past N would "
            "land in the count row's padding, unchecked"
        )
    if out_rank != 2:
        return "the result is the S x 1 x d product, not its S x d window"
    return None


def dense_estimate(
    target: Target,
    shape: tuple[int, int, int, int],
    element_type: Attribute,
    cube_sum: bool,
    pipeline: bool,
    overlap: bool = False,
) -> DenseEstimate | None:
    """The estimate of the dense fallback of top-k attention of `shape`
    (queries S, indices k, keys N, head dim d); None when the mask nest's
    tiles do not fit in UB. The index blocks: a divisor of S (no tail
    block) of at most MASK_BLOCK_ROWS rows, the one estimated cheapest.

    A mask row's work is its marks and the read of their sum on S, its fill,
    sum, casts and ln on V, its store on MTE3. Not pipelined, a row is one
    chain of the three; pipelined (`pipeline`), the pipes overlap across the
    rows of a block, so a row takes the busiest pipe's share but for one row
    a block, whose chain is the pipeline's fill and drain.

    With `overlap` (`topk-mask-overlap`) and the flash nest's query blocks
    of `br` rows a whole number of mask blocks (S a multiple of `br`, no
    key split: passes/topk_overlap.py), the busiest core builds the mask
    rows of its query blocks, `ceil(S / br / cores)` of them, with no
    `sync_all`; the mask work and the flash work of a core add up: its S
    waits for V's fills and sums behind the key steps already issued
    (docs/sparse.md, *The mask rows in the flash nest*), which the measured runs
    show."""
    s, top, keys, depth = shape
    unit = mask_unit(element_type, target)
    scalar = target.scalar
    per_index = (
        scalar.ub_load + scalar.ub_store + cost.scalar_cycles(target, INDEX_SCALAR_OPS)
    )
    name = str(element_type)
    steps = (
        ("dup", "i32"),
        ("cast", "f32"),
        ("reduce_sum", "f32"),
        ("cast", "f32"),
        ("ln", "f32"),
        ("cast", name),
    )
    check = scalar.ub_load + cost.scalar_cycles(target, ROW_SCALAR_OPS)
    vector = sum(
        cost.vector_cycles_for(target, op, keys, dtype)
        + cost.vector_head_cycles(target, op, dtype)
        for op, dtype in steps
    )
    store = cost.dma_cycles(target, ("ub", "gm"), 1, keys * 2)
    chain = top * per_index + check + vector + store
    overlapped = max(top * per_index + check, vector, store) if pipeline else chain
    ub = cast(int, target.memories["ub"].size)
    # a row's i32 counts and zeros, their f32 cast and ln, the mask row:
    # 14 B a key; pipelined, two more count rows (three rows in flight)
    row_bytes = 22 if pipeline else 14
    index_row = -(-top // unit) * unit * 4

    def block_cycles(rows: int) -> float:
        load = cost.dma_cycles(target, ("gm", "ub"), rows, top * 4)
        return load + (rows - 1) * overlapped + chain

    def fits(rows: int) -> bool:
        return rows * index_row + row_bytes * keys <= ub

    best: tuple[float, int] | None = None
    for rows in range(1, min(MASK_BLOCK_ROWS, s) + 1):
        if s % rows or not fits(rows):
            continue
        cycles = -(-(s // rows) // target.cores) * block_cycles(rows)
        if best is None or (cycles, -rows) < (best[0], -best[1]):
            best = (cycles, rows)
    if best is None:
        return None
    mask, rows = best[0] + target.sync.all_latency, best[1]
    tiling = None
    if element_type in FLASH_TYPES:
        tiling = choose_tiling(target, target.cores, (s, keys), depth, depth, cube_sum)
    if tiling is None:
        return DenseEstimate(mask, None, rows, per_index, pipeline)
    # more than one query block (else no loop), each whole, not key-split
    in_flash = overlap and tiling.split == 1 and s % tiling.br == 0 and s > tiling.br
    if in_flash:
        # the mask blocks of a query block: the most rows dividing br
        rows = max(
            r
            for r in range(1, min(MASK_BLOCK_ROWS, tiling.br) + 1)
            if tiling.br % r == 0 and fits(r)
        )
        blocks = -(-(s // tiling.br) // target.cores)
        mask = blocks * (tiling.br // rows) * block_cycles(rows)
    # the flash estimate has no mask: its br x bc block's transfer each key step
    units = -(-s // tiling.br) * tiling.split
    rounds = -(-units // target.cores)
    key_steps = -(-keys // (tiling.bc * tiling.split))
    path = ("gm", "ub")
    transfer = (
        cost.dma_cycles(target, path, tiling.br, tiling.bc * 2)
        - target.dma_path(*path).latency
    )
    flash = tiling.estimate + rounds * key_steps * transfer
    return DenseEstimate(mask, flash, rows, per_index, pipeline, in_flash)


@dataclass(frozen=True)
class DenseAttention:
    """What the fallback reads and where the ops it stands for are."""

    q: SSAValue
    k: SSAValue
    v: SSAValue
    idx: SSAValue
    out: SSAValue
    scale: SSAValue | None
    """The constant the scores are multiplied by (None: no scale)."""
    locations: Sequence[Attribute]
    """Of the gather (the mask nest and its errors), the scores product, the
    scale, the softmax and the output product."""


def emit_dense(
    builder: LocatedBuilder,
    function: func.FuncOp,
    target: Target,
    attention: DenseAttention,
    shape: tuple[int, int, int, int],
    element_type: Attribute,
    rows: int,
    pipeline: bool,
    overlap: bool = False,
) -> None:
    """The mask nest into a GM temporary, then the dense attention outlined
    for tv-to-tile, then the temporary released. With `overlap` the mask
    nest is marked for tv-to-tile to move into the flash nest's query
    blocks (passes/topk_overlap.py)."""
    s, top, keys, depth = shape
    mask = builder.value(memref.AllocOp([], [], MemRefType(element_type, [s, keys])))
    gather, scores_at, scale_at, softmax_at, product_at = attention.locations
    with builder.located(gather):
        nest = TopkMaskNest(builder, keys, mask_unit(element_type, target))
        nest.mask(attention.idx, mask, (s, top, keys), element_type, rows, pipeline)
    if overlap:
        loop = next(u.operation for u in mask.uses if u.operation is not None)
        while (parent := loop.parent_op()) is not None and not isinstance(
            parent, func.FuncOp
        ):
            loop = parent
        if isinstance(loop, scf.ForOp):
            loop.attributes[MASK_NEST_ATTR] = UnitAttr()
    tensors = Block(
        arg_types=[
            tv.TensorViewType(element_type, [s, depth]),
            tv.TensorViewType(element_type, [keys, depth]),
            tv.TensorViewType(element_type, [keys, depth]),
            tv.TensorViewType(element_type, [s, keys]),
        ]
    )
    q, k, v, m = tensors.args
    ops: list[Operation] = [tv.MatmulOp(q, k, transpose_b=True)]
    ops[0].location = scores_at
    if attention.scale is not None:
        ops.append(tv.MulOp(ops[-1].results[0], attention.scale))
        ops[-1].location = scale_at
    ops.append(tv.AddOp(ops[-1].results[0], m))
    ops[-1].location = gather
    ops.append(tv.SoftmaxOp(ops[-1].results[0], -1))
    ops[-1].location = softmax_at
    ops.append(tv.MatmulOp(ops[-1].results[0], v))
    ops[-1].location = product_at
    for op in ops:
        tensors.add_op(op)
    sources = {q: attention.q, k: attention.k, v: attention.v, m: mask}
    outline(
        ops,
        lambda _, value: sources[value],
        {ops[-1].results[0]: attention.out},
        function,
        builder,
    )
    builder.insert(memref.DeallocOp.get(mask))


class TopkMaskNest(SparseNest):
    """Builds the mask nest (the module's doc)."""

    def mask(
        self,
        idx: SSAValue,
        out: SSAValue,
        shape: tuple[int, int, int],
        element_type: Attribute,
        rows: int,
        pipeline: bool,
    ) -> None:
        s, top, keys = shape
        index_cols = -(-top // self.unit) * self.unit
        ids_type = TileType([rows, index_cols], i32, MemorySpace.UB, valid=[rows, top])
        count_type = TileType([1, keys], i32, MemorySpace.UB)

        def block(at: InsertPoint, b: Valid, _: list[SSAValue]) -> list[SSAValue]:
            ids = self.load(at, idx, [b, 0], ids_type)

            def finish(r: int, marked: tuple[SSAValue, SSAValue]) -> None:
                counts = self.recount(at, ids, r, top, count_type, marked)
                logs = self.value(at, tile.LogOp(self.to_f32(at, counts)))
                row_mask = self.cast_to(at, logs, element_type)
                self.store(at, row_mask, out, [self.scaled(at, b, 1, r), 0])

            # unrolled: tile-to-hw splits the block loop over the cores when
            # every store moves with it (`b + r` with r constant)
            if not pipeline:
                for r in range(rows):
                    zeros = self.zeros(at, count_type, [])
                    finish(r, self.marks(at, ids, r, top, zeros))
                return []
            # row r + 1 marked (S) before row r is finished: row r's sum is
            # then read back with no wait, and its ln and store (V, MTE3)
            # run under row r + 1's marks; each row's zeros filled two rows
            # ahead, before the vector work its marks would otherwise wait on
            zeros = [self.row_zeros(at, count_type, r) for r in range(min(2, rows))]
            marked = self.marks(at, ids, 0, top, zeros[0])
            for r in range(rows):
                if r + 2 < rows:
                    zeros.append(self.row_zeros(at, count_type, r + 2))
                ahead = marked
                if r + 1 < rows:
                    ahead = self.marks(at, ids, r + 1, top, zeros[r + 1])
                finish(r, marked)
                marked = ahead
            return []

        self.loop(self.top, 0, s, rows, [], block)

    def row_zeros(self, at: InsertPoint, count_type: TileType, r: int) -> SSAValue:
        """Row `r`'s zero count row, a fill of its own: CSE would merge equal
        fills into one, which each row's mark loop then copies on V right
        before its marks, behind the previous rows' vector work."""
        zeros = self.zeros(at, count_type, [])
        fill = zeros.owner
        assert isinstance(fill, tile.FillOp)
        fill.attributes[MASK_ROW_ATTR] = IntegerAttr(r, 64)
        return zeros

    def position(
        self, at: InsertPoint, ids: SSAValue, r: int, j: Valid
    ) -> list[SSAValue]:
        """Where index `j` of row `r` of `ids` lands in the count row."""
        key = tile.ExtractOp(ids, [self.constant(r), self.index_value(j)])
        return [self.constant(0), self.value(at, key)]

    def marks(
        self, at: InsertPoint, ids: SSAValue, r: int, top: int, zeros: SSAValue
    ) -> tuple[SSAValue, SSAValue]:
        """Row `r` of the index tile `ids` marked 1 in the count row `zeros`
        (S), and the marks' sum as a 1 x 1 i32 tile (V)."""

        def mark(at: InsertPoint, j: Valid, carried: list[SSAValue]) -> list[SSAValue]:
            where = self.position(at, ids, r, j)
            return [self.value(at, tile.InsertOp(self.constant(1), carried[0], where))]

        (marked,) = self.loop(at, 0, top, 1, [zeros], mark)
        named = self.value(at, tile.ReduceSumOp(self.to_f32(at, marked), 1))
        return marked, self.value(at, tile.CastOp(named, i32))

    def recount(
        self,
        at: InsertPoint,
        ids: SSAValue,
        r: int,
        top: int,
        count_type: TileType,
        marked: tuple[SSAValue, SSAValue],
    ) -> SSAValue:
        """The `1 x keys` i32 row of how often row `r` of `ids` names each key:
        its marks, counted again only when they sum below `top` (a key named
        twice)."""

        def count(at: InsertPoint, j: Valid, carried: list[SSAValue]) -> list[SSAValue]:
            where = self.position(at, ids, r, j)
            old = self.value(at, tile.ExtractOp(carried[0], where))
            new = self.value(at, arith.AddiOp(old, self.constant(1)))
            return [self.value(at, tile.InsertOp(new, carried[0], where))]

        def again(at: InsertPoint, _: Valid, __: list[SSAValue]) -> list[SSAValue]:
            return self.loop(at, 0, top, 1, [self.zeros(at, count_type, [])], count)

        marks, named = marked
        zero = self.constant(0)
        distinct = self.value(at, tile.ExtractOp(named, [zero, zero]))
        repeats = self.value(at, arith.CmpiOp(distinct, self.constant(top), "ult"))
        # a loop of 0 or 1 trips, not an scf.if: tile-to-hw lowers loops
        # carrying tiles, not branches yielding them
        trips = self.value(at, arith.SelectOp(repeats, self.constant(1), zero))
        return self.loop(at, 0, trips, 1, [marks], again)[0]
