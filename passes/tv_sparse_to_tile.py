"""`tv-sparse-to-tile{target=... tile-cols=... bsr-cube=... gather-run=... entry-window=...}`: lower sparse kernels.

Runs before `tv-to-tile` (in `pypto-lower`). A function that has sparse tensors
(arguments or ops) is bufferized and its sparse ops become tile loop nests
(passes/sparse_nests.py); `tv-to-tile` then finds no tensor left in it. The
calling convention extends the dense one (docs/tiling.md, docs/sparse.md):

    func.func @f(%a: !tv.tensor<MxKxf16, #tv.csr<...>>, %b: !tv.tensor<KxNxf16>)
        -> !tv.tensor<MxNxf16>
    becomes
    func.func @f(%a_offsets: memref<(M+1)xi32>, %a_indices: memref<?xi32>,
                 %a_values: memref<?xf16>, %b: memref<KxNxf16>, %out: memref<MxNxf16>)

A sparse argument is its row offsets, column indices (of the encoding's index
type, i64 as `index`) and values
(`memref<? x bm x bn x T>` for block-CSR); a dense tensor is a memref of its
shape; each tensor result is a trailing memref argument, a sparse result its
values only. A result read by a later sparse op and not returned goes through a
GM temporary (a sparse one: values on its operand's pattern). Dense ops in the
same function, `tv.assemble` and `tv.disassemble` are located errors (no
lowering yet). Every nest gets a remark with its tile and why.

This module is the pass (its fields are the options) and the tuner's
`model_densities`; the lowering of one function is
passes/sparse_function_lowering.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects.tile import TARGET_ATTR
from pypto_mlir.targets import Target

from .csr_spmm_ranges import ASSUMED_DENSITY
from .set_target import required_target
from .sparse_function_lowering import CUBE_TYPES, SparseFunctionLowering, is_sparse
from .topk_dense import TOPK_DENSE_MODES


@dataclass(frozen=True)
class TvSparseToTilePass(ModulePass):
    """Lower functions on sparse tensors (CSR, block-CSR) to tile loop nests.

    spmm/spmv by a row loop with f32 accumulators in UB (block-CSR spmm on the
    cube unless bsr-cube=false), to_dense and gather (docs/sparse.md).
    """

    name = "tv-sparse-to-tile"

    target: str | None = None
    """A builtin target name or a TOML file; default: the module's pypto.target."""

    tile_cols: int = 0
    """Columns of the dense row tiles (a multiple of the UB alignment unit, or
    covering the columns); 0: the most the target's UB (and L0B/L0C for the
    cube) holds."""

    bsr_cube: bool = True
    """Multiply block-CSR blocks on the cube (L0C accumulators); false: the
    vector row loop, as CSR."""

    entry_window: int = 8
    """CSR softmax reads and writes a row's entries in windows of this many
    (one DMA each), the rest one by one; 1: entry by entry."""

    masked_window: int = 64
    """CSR softmax over the cores (nnz-balance) reads a row by whole windows
    of this many entries, the lanes outside the row masked by compare/select
    against their positions (`tile.iota`), and writes whole windows where the
    lanes past the row are this core's later entries; 0: off (entry-window's
    exact windows and the sum entry by entry). A multiple of the values'
    32-byte blocks."""

    gather_run: int = 4
    """A gather moves a run of this many consecutive indices (checked at run
    time on the scalar unit) as one DMA of that many rows; 1: row by row."""

    gather_runs: bool = True
    """CSR spmm with the rows of `b` from GM and CSR sddmm (rows of k): a
    group of consecutive column indices within a row (checked at run time,
    `SparseNest.runs`) moves its rows as one DMA, the entries then consume
    the rows of that tile; false: one row DMA per stored entry."""

    fuse_attention: bool = True
    """Lower `spmm(sparse_softmax(sddmm(bsr mask, q, k^T) [* s]), v)` as one
    flash-attention nest per block row (passes/sparse_attention.py); false:
    one nest per op, through GM temporaries."""

    attention_cube_sum: bool = True
    """In the fused attention nest, take the row sums of the probabilities on
    the cube (`p @ ones`) instead of by row reductions on the vector unit."""

    attention_scale_fold: bool = True
    """In the fused attention nest, keep the scores in f32 and apply a
    constant scale in f32 (no f16 rounding, no cast: within the reference's
    error bound); false: the scores in their type, scaled as the reference."""

    attention_defer_update: bool = True
    """In the fused attention nest, add each block's sums and product to the
    running ones after the next block's softmax, so that the vector unit does
    not wait for the cube in between."""

    attention_sum_column: bool = True
    """In the fused attention nest with the row sums on the cube, reduce each
    block's sums (ONES equal columns) to one column before adding them to the
    running sums (a one-column rescale); it loses with tile-to-hw's
    block-reduce=false (a reduction repeat per row)."""

    attention_balance: bool = True
    """In the fused attention nest, split the block rows over the cores by
    stored blocks (each core searches the offsets for its block rows at run
    time); false: by count (tile-to-hw's split)."""

    attention_block_split: bool = True
    """In the fused attention nest, split the stored blocks evenly over the
    cores, dividing a block row where a core's share ends (its partial
    statistics merged after a sync_all); false: whole block rows
    (`attention-balance`)."""

    dense_fallback: bool = True
    """CSR spmm: branch at run time on nnz to `to_dense` and the dense matmul
    when the cost model estimates it faster (passes/sparse_fallback.py); false:
    the row nest only."""

    dense_density: float = 0.0
    """The density (nnz / entries) from which the dense fallback runs; 0: the
    cost model's threshold."""

    index_prefetch: bool = True
    """CSR spmm/spmv and to_dense read the column indices (i32) and values of
    a row in windows into ub (double-buffered by tile-pipeline), CSR sddmm
    the indices of each window of results; false: each from GM."""

    nnz_balance: bool = True
    """CSR spmm/spmv and to_dense split the rows over the cores by stored
    entries (each core searches the offsets for its rows at run time); CSR
    sddmm and softmax split the entries in whole GM blocks; false: the rows
    by count (spmm, to_dense), one core (sddmm, softmax)."""

    entry_insert: bool = True
    """CSR to_dense builds each row, CSR sddmm each window of 64 results, in
    UB with `tile.insert` and stores it with one DMA
    (passes/csr_entry_nests.py); false: one DMA per stored entry."""

    values_window: int = 0
    """Dense ops on the stored values of a sparse tensor run on windows of this
    many stored entries (passes/sparse_values.py); 0: 2 KiB of the widest
    values type; 1: one entry a tile."""

    fuse_epilogue: bool = True
    """Apply element-wise ops that read only an spmm's result (and a bias row
    or scalars) to its rows in UB before the one store
    (passes/sparse_epilogue.py); false: outlined to a dense nest through GM."""

    resident_b: bool = True
    """CSR spmm: where it fits and the cost model estimates it faster, keep a
    column slice of `b` in ub per core (the cores split over row groups and
    slices) and gather its rows on chip with `tile.gather`; false: every row
    of `b` gathered from GM per entry."""

    divide_rows: bool = True
    """CSR spmm: with the nnz-balanced split, split the stored entries evenly
    over the cores and divide a long row where a core's share ends (its
    partial sums added after a sync_all), where the cost model estimates it
    can pay; false: whole rows a core."""

    b_ranges: bool = True
    """CSR spmm: where it fits and the pipe estimates say it is faster, split
    `b` into row ranges kept in ub, one a core, the partial rows added after a
    `sync_all` (passes/csr_spmm_ranges.py); false: the row nest."""

    row_block: int = 4
    """CSR spmm with a resident slice of `b` (its result rows) or over row
    ranges of `b` (its partial rows): store up to this many consecutive rows
    with one DMA from a ub block tile (fewer where ub holds fewer); 0 or 1:
    one DMA a row. The block's rows are emitted one after another (its loop
    then carries nothing and is software-pipelined), so the nest grows with
    it: 8 measured no faster than 4 with the row ranges at 1024 and took four
    times as long to compile."""

    b_ranges_density: float = ASSUMED_DENSITY
    """The density (nnz / entries) the b-ranges choice is estimated at: nnz is
    a run-time size."""

    fuse_topk_attention: bool = True
    """Lower top-k attention (`softmax(q[:, None] @ k[idx].mT * s) @ v[idx]`)
    as one nest per query row (passes/topk_attention.py); false: the gathers
    to GM temporaries and the batched matmuls outlined for tv-to-tile."""

    topk_gather_run: int = 1
    """In the fused top-k attention nest, gather a run of this many
    consecutive indices as one DMA (checked at run time, as `gather-run`);
    1: each row its own DMA. Default 1: the run loads sit in loops of 0/1
    trips that tile-pipeline does not prefetch, and the pipelined single
    rows measured faster (docs/sparse.md, *Top-k attention*)."""

    topk_dense_fallback: str = "auto"
    """Lower top-k attention by an additive mask built from the indices and
    the dense flash-attention nest (passes/topk_dense.py): `auto` where the
    cost model estimates it cheaper than the fused gather nest, `always`
    where it applies, `never`."""

    topk_mask_pipeline: bool = True
    """Software-pipeline the dense fallback's mask nest (passes/topk_dense.py):
    the next query row's count row is filled (its own fill, two in turn)
    before this row's vector work, so that its marks on the scalar unit run
    while this row's sum, ln and store do; false: each row's marks wait for
    the previous row's vector work (measured slower, docs/sparse.md)."""

    interleave: bool = True
    """Mark a function with a gather `pypto.interleave_groups`, so that
    tile-to-hw splits each nest of a phase over all the cores (the gathers
    of top-k attention beside the copy of q); false: only the first nest of
    a phase is split, the later ones run on the last core."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [
            f for f in op.walk() if isinstance(f, func.FuncOp) and is_sparse(f)
        ]
        if not functions:
            return
        target_name, target = required_target(op, self.target, "tv-sparse-to-tile")
        if self.tile_cols < 0:
            raise op_error(
                op, f"tv-sparse-to-tile: tile-cols must be >= 0, got {self.tile_cols}"
            )
        if self.topk_gather_run < 1:
            raise op_error(
                op,
                "tv-sparse-to-tile: topk-gather-run must be >= 1, got "
                f"{self.topk_gather_run}",
            )
        if self.topk_dense_fallback not in TOPK_DENSE_MODES:
            raise op_error(
                op,
                "tv-sparse-to-tile: topk-dense-fallback must be one of "
                f"{', '.join(TOPK_DENSE_MODES)}, got '{self.topk_dense_fallback}'",
            )
        if self.values_window < 0:
            raise op_error(
                op,
                "tv-sparse-to-tile: values-window must be >= 0, got "
                f"{self.values_window}",
            )
        if self.row_block < 0:
            raise op_error(
                op, f"tv-sparse-to-tile: row-block must be >= 0, got {self.row_block}"
            )
        if not 0 < self.b_ranges_density <= 1:
            raise op_error(
                op,
                "tv-sparse-to-tile: b-ranges-density must be in (0, 1], got "
                f"{self.b_ranges_density}",
            )
        if not 0 <= self.dense_density <= 1:
            raise op_error(
                op,
                "tv-sparse-to-tile: dense-density must be in [0, 1], got "
                f"{self.dense_density}",
            )
        for function in functions:
            SparseFunctionLowering(function, target, self).run()
        op.attributes[TARGET_ATTR] = StringAttr(target_name)


def model_densities(module: ModuleOp, target: Target) -> list[float | None]:
    """Per CSR spmm of a cube type in `module`, the density from which the cost
    model takes the dense fallback (None: never); the tuner's candidates of
    `sparse_dense_density` lie around it."""
    found: list[float | None] = []
    for function in module.walk():
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        lowering = SparseFunctionLowering(function, target, TvSparseToTilePass())
        for op in function.walk():
            if not isinstance(op, tv.SpmmOp):
                continue
            a = cast(tv.TensorViewType, op.lhs.type)
            encoding = a.sparse_encoding
            if encoding is None or tuple(encoding.block_shape) != (1, 1):
                continue
            if a.element_type not in CUBE_TYPES:
                continue
            try:
                costs = lowering.fallback_costs(op)
            except DiagnosticException:  # no tile fits: the lowering reports it
                continue
            threshold = costs.threshold() if costs is not None else None
            rows, cols = a.get_shape()
            found.append(None if threshold is None else threshold / (rows * cols))
    return found
