"""Named pass pipelines.

A pipeline is registered and invoked like a pass (`-p pypto-cleanup{cse=false}`),
so `pypto-opt`, `xdsl-opt` and `--help` all know it. It is a `PipelinePass`: a
frozen dataclass whose fields are the pipeline's options and whose
`member_passes()` builds the passes it runs, forwarding those options. `pypto-opt`
expands a pipeline into its members, so `--mlir-print-ir-*` and `--mlir-timing`
report each member pass.

To add a pipeline: subclass `PipelinePass`, give it a `name` and a docstring
(its first line is the `--help` summary), and list it in `get_all_pipelines`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.arg_spec import ParameterType


@dataclass(frozen=True)
class PipelinePass(ModulePass, ABC):
    """A named sequence of passes, used like one pass."""

    @abstractmethod
    def member_passes(self) -> tuple[ModulePass, ...]:
        """The passes this pipeline runs, in order, with its options forwarded."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for member in self.member_passes():
            member.apply(ctx, op)


def expand_pipelines(passes: Iterable[ModulePass]) -> list[ModulePass]:
    """`passes` with every pipeline replaced by its member passes, recursively."""
    expanded: list[ModulePass] = []
    for pass_ in passes:
        if isinstance(pass_, PipelinePass):
            expanded.extend(expand_pipelines(pass_.member_passes()))
        else:
            expanded.append(pass_)
    return expanded


@cache
def _registered_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return Universe.get_multiverse().all_passes


def pass_by_name(
    name: str, **options: ParameterType | tuple[ParameterType, ...]
) -> ModulePass:
    """An instance of the registered pass `name` (from any `xdsl.universe`).

    Lets a pipeline name member passes it does not import; option names are the
    pass's field names (`tile_sizes=(64, 64)`).
    """
    passes = _registered_passes()
    if name not in passes:
        raise ValueError(f"pipeline member '{name}' is not a registered pass")
    return passes[name]()(**options)


@dataclass(frozen=True)
class CleanupPipeline(PipelinePass):
    """Simplify IR: canonicalize, then remove common subexpressions and dead code.

    Runs canonicalize, cse (unless cse=false) and dce.
    """

    name = "pypto-cleanup"

    cse: bool = True
    """Run common-subexpression elimination."""

    def member_passes(self) -> tuple[ModulePass, ...]:
        members = [pass_by_name("canonicalize")]
        if self.cse:
            members.append(pass_by_name("cse"))
        members.append(pass_by_name("dce"))
        return tuple(members)


LEVELS = ("tv", "tile", "ascend_hw")
"""The IR levels, from the highest to the lowest."""


@dataclass(frozen=True)
class Stage:
    """One member of `pypto-lower`: a registered pass, the level of its output,
    and the pipeline options it takes (pipeline field, pass field)."""

    pass_name: str
    level: str
    options: tuple[tuple[str, str], ...] = ()
    optional: bool = False
    """Skipped when no pass of that name is registered."""
    enabled_by: str = ""
    """A bool field of `LowerPipeline` that switches the stage off when false."""
    inputs: tuple[str, ...] = ()
    """The levels it takes as input; empty: the level of its output."""


LOWER_STAGES: tuple[Stage, ...] = (
    Stage("canonicalize", "tv"),
    Stage("pypto-set-target", "tv", (("target", "target"),), inputs=("tv", "tile")),
    Stage("tv-expand-math", "tv"),
    Stage(
        "tv-schedule",
        "tv",
        (
            ("fuse_siblings", "fuse_siblings"),
            ("interleave", "interleave"),
            ("balance_cores", "balance_cores"),
            ("split_reductions", "split_reductions"),
        ),
        enabled_by="schedule",
    ),
    Stage(
        "tv-sparse-to-tile",
        "tv",  # tile IR for the functions on sparse tensors only
        (
            ("sparse_tile_cols", "tile_cols"),
            ("bsr_cube", "bsr_cube"),
            ("sparse_gather_run", "gather_run"),
            ("sparse_gather_runs", "gather_runs"),
            ("sparse_entry_window", "entry_window"),
            ("sparse_masked_window", "masked_window"),
            ("sparse_fuse_attention", "fuse_attention"),
            ("sparse_fuse_topk_attention", "fuse_topk_attention"),
            ("sparse_topk_gather_run", "topk_gather_run"),
            ("sparse_topk_dense_fallback", "topk_dense_fallback"),
            ("sparse_topk_mask_pipeline", "topk_mask_pipeline"),
            ("attention_cube_sum", "attention_cube_sum"),
            ("attention_scale_fold", "attention_scale_fold"),
            ("sparse_attention_defer_update", "attention_defer_update"),
            ("sparse_attention_sum_column", "attention_sum_column"),
            ("sparse_attention_balance", "attention_balance"),
            ("sparse_attention_block_split", "attention_block_split"),
            ("sparse_dense_fallback", "dense_fallback"),
            ("sparse_dense_density", "dense_density"),
            ("sparse_index_prefetch", "index_prefetch"),
            ("sparse_nnz_balance", "nnz_balance"),
            ("sparse_values_window", "values_window"),
            ("sparse_fuse_epilogue", "fuse_epilogue"),
            ("sparse_entry_insert", "entry_insert"),
            ("sparse_resident_b", "resident_b"),
            ("sparse_divide_rows", "divide_rows"),
            ("sparse_b_ranges", "b_ranges"),
            ("sparse_b_ranges_density", "b_ranges_density"),
            ("sparse_row_block", "row_block"),
            ("interleave", "interleave"),
        ),
    ),
    Stage(
        "tv-to-tile",
        "tile",
        (
            ("tile_sizes", "tile_sizes"),
            ("matmul_tile_sizes", "matmul_tile_sizes"),
            ("nest_tile_sizes", "nest_tile_sizes"),
            ("max_cores", "max_cores"),
            ("matmul_panels", "matmul_panels"),
            ("matmul_split_k", "matmul_split_k"),
            ("matmul_l2_order", "matmul_l2_order"),
            ("matmul_unroll_k", "matmul_unroll_k"),
            ("attention_fusion", "attention_fusion"),
            ("late_invariants", "late_invariants"),
            ("attention_cube_sum", "attention_cube_sum"),
            ("attention_scale_multiply", "attention_scale_multiply"),
            ("attention_scale_fold", "attention_scale_fold"),
            ("attention_key_split", "attention_key_split"),
            ("attention_f32_max", "attention_f32_max"),
            ("attention_prefetch", "attention_prefetch"),
            ("epilogue_fusion", "epilogue_fusion"),
            ("row_fusion", "row_fusion"),
            ("prologue_fusion", "prologue_fusion"),
        ),
        inputs=("tv",),
    ),
    Stage("tile-peel-tails", "tile", optional=True),
    Stage(
        "tile-pipeline",
        "tile",
        (("max_cores", "max_cores"), ("pipeline_runtime_bounds", "runtime_bounds")),
        optional=True,
        enabled_by="double_buffer",
    ),
    Stage(
        "tile-to-hw",
        "ascend_hw",
        (
            ("max_cores", "max_cores"),
            ("bank_offset", "bank_offset"),
            ("matmul_grid", "matmul_grid"),
            ("block_reduce", "block_reduce"),
        ),
        inputs=("tile",),
    ),
    Stage("hw-coalesce-dma", "ascend_hw", enabled_by="coalesce_dma"),
    Stage(
        "hw-insert-sync",
        "ascend_hw",
        (
            ("sync_runtime_loops", "runtime_loops"),
            ("sync_scalar_issue", "scalar_issue"),
        ),
    ),
)
"""The stages of `pypto-lower` in order. A new stage (tile-pipeline,
hw-coalesce-dma) is one entry here, and a field of `LowerPipeline` for each
option it takes."""


@dataclass(frozen=True)
class LowerPipeline(PipelinePass):
    """Lower tv to ascend_hw: tile, peel tails, select instructions, synchronise.

    Runs canonicalize, pypto-set-target, tv-expand-math, tv-schedule (unless
    schedule=false; fuse-siblings, interleave, balance-cores,
    split-reductions), tv-sparse-to-tile (sparse-tile-cols, bsr-cube,
    sparse-gather-run, sparse-gather-runs, sparse-entry-window,
    sparse-masked-window, sparse-fuse-attention,
    sparse-fuse-topk-attention, sparse-topk-gather-run,
    sparse-topk-dense-fallback, sparse-topk-mask-pipeline,
    sparse-attention-defer-update, sparse-attention-sum-column,
    sparse-attention-balance,
    sparse-attention-block-split, sparse-dense-fallback, sparse-dense-density, sparse-index-prefetch,
    sparse-nnz-balance, sparse-values-window, sparse-fuse-epilogue,
    sparse-entry-insert, sparse-resident-b, sparse-divide-rows,
    sparse-b-ranges, sparse-b-ranges-density, sparse-row-block, interleave), tv-to-tile,
    tile-peel-tails, tile-pipeline (unless double-buffer=false), tile-to-hw
    (bank-offset, matmul-grid, block-reduce),
    hw-coalesce-dma (unless coalesce-dma=false) and hw-insert-sync
    (sync-runtime-loops, sync-scalar-issue); every stage
    is also a pass of its own. tuned=true takes the options pypto-tune stored.
    start-level=tile lowers tile IR: pypto-set-target and the stages from
    tile-peel-tails on.
    """

    name = "pypto-lower"

    target: str = ""
    """Target name or TOML file; empty: the module's pypto.target, else ascend910b."""

    tile_sizes: tuple[int, ...] = ()
    """ROWS,COLS of vector-nest tiles (tv-to-tile); empty: chosen from the target."""

    matmul_tile_sizes: tuple[int, ...] = ()
    """M0,N0,K0 or M1,N1,M0,N0,K0 of matmul nests (tv-to-tile); empty: chosen."""

    nest_tile_sizes: tuple[int, ...] = ()
    """NEST,ROWS,COLS triples: one vector nest's tile sizes (tv-to-tile), as
    pypto-tune sets them; they take precedence over tile-sizes."""

    max_cores: int = 0
    """Use at most this many cores (tile-to-hw); 0: all cores of the target."""

    matmul_panels: bool = True
    """Keep A panels in L1 across a core's matmul blocks (tv-to-tile)."""

    matmul_split_k: bool = True
    """Split K over the cores for matmuls with too few blocks (tv-to-tile)."""

    matmul_l2_order: bool = True
    """Stagger matmul blocks' K chunks so that cores sharing a panel hit the
    L2 (tv-to-tile)."""

    matmul_unroll_k: bool = True
    """Unroll the K chunks of a matmul block, each loaded one chunk ahead
    (tv-to-tile)."""

    schedule: bool = True
    """Schedule the tv ops into fused groups and phases (tv-schedule); false: one
    nest per producer/consumer group, independent ones not interleaved."""

    fuse_siblings: bool = True
    """Fuse groups over the same space that share inputs (tv-schedule)."""

    interleave: bool = True
    """Split independent groups each over all the cores (tv-schedule), and
    the gathers of a sparse function and the nests beside them
    (tv-sparse-to-tile's interleave)."""

    balance_cores: bool = True
    """Size vector tiles for the cores by cost (tv-schedule, tv-to-tile)."""

    split_reductions: bool = True
    """Split reductions over their long axis across the cores, with a combine
    nest, where estimated faster (tv-schedule)."""

    double_buffer: bool = True
    """Multi-buffer tile loops (tile-pipeline); false: one buffer per tile."""

    pipeline_runtime_bounds: bool = True
    """Multi-buffer loops of run-time bounds too (tile-pipeline runtime-bounds;
    a gather at indices read from GM)."""

    coalesce_dma: bool = True
    """Merge DMAs and bursts into fewer, longer ones (hw-coalesce-dma)."""

    sync_runtime_loops: bool = True
    """Synchronise around loops of run-time bounds without flags outside them
    that the loops' own flags make needless (hw-insert-sync runtime-loops)."""

    sync_scalar_issue: bool = True
    """Take a set as firing no earlier than S issues it, so that a wait
    ordered before S there needs no flag back (hw-insert-sync scalar-issue)."""

    attention_fusion: bool = True
    """Fuse softmax(q @ k.T ...) @ v into one flash-attention nest (tv-to-tile)."""

    late_invariants: bool = True
    """Load loop-invariant tiles in a loop each core runs once, after the
    varying ones (tv-to-tile)."""

    attention_cube_sum: bool = True
    """Row sums of the attention probabilities on the cube when cheaper
    (tv-to-tile), and in the block-sparse attention nest (tv-sparse-to-tile)."""

    attention_scale_multiply: bool = True
    """A power-of-two attention scale as an exact multiply (tv-to-tile)."""

    attention_scale_fold: bool = True
    """Another constant attention scale folded into the exponent (tv-to-tile);
    the block-sparse attention's scores kept and scaled in f32
    (tv-sparse-to-tile)."""

    attention_key_split: bool = True
    """Split an attention query block's keys over several cores when the query
    blocks are fewer than the cores and that is estimated faster (tv-to-tile)."""

    attention_f32_max: bool = True
    """The attention nest's row maxima from its f32 scores, by blocks, where
    that pays (tv-to-tile)."""

    attention_prefetch: bool = True
    """Load the attention nest's masks with its K and V blocks (tv-to-tile)."""

    epilogue_fusion: bool = True
    """Compute a matmul's elementwise epilogue in its nest (tv-to-tile); false:
    through GM, a nest of its own."""

    row_fusion: bool = True
    """Reduce a matmul result along its rows (softmax, sums) in the matmul's
    nest (tv-to-tile); false: through GM, a row nest of its own."""

    prologue_fusion: bool = True
    """Compute a matmul operand's elementwise ops on its blocks in UB and move
    them to L1 (tv-to-tile); false: through GM, a nest of its own."""

    matmul_grid: bool = True
    """Split matmul block rows the cores do not divide evenly over a grid of
    cores when that gives the busiest core fewer blocks (tile-to-hw)."""

    bank_offset: bool = True
    """Place UB buffers a vector instruction uses together in different banks
    (tile-to-hw's memory planning)."""

    block_reduce: bool = True
    """Reduce rows of whole 32-byte blocks to their maxima (minima) 8 rows a
    vector repeat (`vblock_reduce_*`) instead of a repeat per row (tile-to-hw)."""

    tuned: bool = False
    """Use the options pypto-tune stored for this kernel, target file and
    compiler version (docs/tuning.md), when there are any; a remark says which."""

    sparse_tile_cols: int = 0
    """Columns of the dense row tiles of sparse nests (tv-sparse-to-tile); 0:
    chosen from the target."""

    bsr_cube: bool = True
    """Multiply block-CSR blocks on the cube, accumulating in L0C
    (tv-sparse-to-tile); false: the vector row loop."""

    sparse_entry_window: int = 8
    """CSR softmax moves windows of this many entries per DMA
    (tv-sparse-to-tile entry-window); 1: entry by entry."""

    sparse_masked_window: int = 64
    """CSR softmax over the cores reads and writes rows by whole windows of
    this many entries with computed masks (tv-sparse-to-tile masked-window);
    0: off."""

    sparse_gather_run: int = 4
    """Gathers move runs of this many consecutive indices as one DMA, checked
    at run time (tv-sparse-to-tile gather-run); 1: row by row."""

    sparse_gather_runs: bool = True
    """CSR spmm with the rows of b from GM and CSR sddmm move a group of
    consecutive column indices of a row as one DMA of its rows, checked at
    run time (tv-sparse-to-tile gather-runs); false: a DMA per entry."""

    sparse_attention_defer_update: bool = True
    """In the block-sparse attention nest, each block's update of the sums
    and the accumulator after the next block's softmax (tv-sparse-to-tile's
    attention-defer-update)."""

    sparse_attention_sum_column: bool = True
    """In the block-sparse attention nest, each block's row sums from the cube
    reduced to one column before the rescale (tv-sparse-to-tile's
    attention-sum-column)."""

    sparse_attention_balance: bool = True
    """In the block-sparse attention nest, the block rows split over the
    cores by stored blocks (tv-sparse-to-tile's attention-balance); false:
    by count."""

    sparse_attention_block_split: bool = True
    """In the block-sparse attention nest, the stored blocks split evenly over
    the cores, a block row divided where a core's share ends and its partial
    statistics merged after a sync_all (tv-sparse-to-tile's
    attention-block-split); false: whole block rows."""

    sparse_fuse_attention: bool = True
    """Lower block-sparse attention (`spmm(sparse_softmax(sddmm(...) [* s]),
    v)`) as one flash-attention nest per block row (tv-sparse-to-tile's
    fuse-attention); false: one nest per op through GM temporaries."""

    sparse_fuse_topk_attention: bool = True
    """Lower top-k attention (`softmax(q[:, None] @ k[idx].mT * s) @ v[idx]`)
    as one nest per query row (tv-sparse-to-tile's fuse-topk-attention);
    false: the gathers to GM temporaries, then the batched matmuls."""

    sparse_topk_gather_run: int = 1
    """In the fused top-k attention nest, runs of this many consecutive
    indices as one DMA (tv-sparse-to-tile's topk-gather-run); 1: each row its
    own DMA, pipelined by tile-pipeline (measured faster)."""

    sparse_topk_dense_fallback: str = "auto"
    """Lower top-k attention by an additive mask and the dense flash nest
    (tv-sparse-to-tile's topk-dense-fallback): `auto` where the cost model
    estimates that cheaper than the fused gather nest, `always` where it
    applies, `never`."""

    sparse_topk_mask_pipeline: bool = True
    """In the dense fallback's mask nest, overlap consecutive query rows
    (tv-sparse-to-tile's topk-mask-pipeline): each row's count row filled
    before the previous row's vector work, two count rows in turn; false: a
    row's marks wait for the previous row's vector work."""

    sparse_dense_fallback: bool = True
    """CSR spmm branches at run time on nnz to to_dense and the dense matmul
    when the cost model estimates it faster (tv-sparse-to-tile); false: the
    row nest only."""

    sparse_dense_density: float = 0.0
    """The density from which CSR spmm takes the dense fallback
    (tv-sparse-to-tile's dense-density); 0: the cost model's threshold."""

    sparse_index_prefetch: bool = True
    """CSR spmm/spmv, to_dense and sddmm read column indices (and values) in
    windows into ub (tv-sparse-to-tile's index-prefetch); false: each from GM."""

    sparse_nnz_balance: bool = True
    """CSR spmm/spmv and to_dense split rows over the cores by stored entries,
    sddmm and softmax the entries by whole GM blocks (tv-sparse-to-tile's
    nnz-balance); false: rows by count, sddmm and softmax on one core."""

    sparse_entry_insert: bool = True
    """CSR to_dense rows and sddmm windows built in UB with tile.insert, stored
    whole (tv-sparse-to-tile's entry-insert); false: one DMA per entry."""

    sparse_values_window: int = 0
    """Element-wise ops on the stored values of a sparse tensor run on windows
    of this many entries split over the cores (tv-sparse-to-tile's
    values-window); 0: 2 KiB of the values; 1: one entry a tile."""

    sparse_fuse_epilogue: bool = True
    """Element-wise ops that read only an spmm's result are applied to its
    rows in UB before the one store (tv-sparse-to-tile's fuse-epilogue);
    false: a dense nest through GM."""

    sparse_resident_b: bool = True
    """CSR spmm keeps column slices of b in ub and gathers their rows on chip
    where the cost model estimates it faster (tv-sparse-to-tile's
    resident-b); false: rows of b gathered from GM."""

    sparse_divide_rows: bool = True
    """CSR spmm splits the stored entries evenly over the cores, dividing a
    long row where a share ends (partial sums added after a sync_all), where
    the cost model estimates it can pay (tv-sparse-to-tile's divide-rows);
    false: whole rows a core."""
    sparse_b_ranges: bool = True
    """CSR spmm splits b into row ranges kept in ub, one a core, the partial
    rows added after a sync_all, where the pipe estimates say it is faster
    (tv-sparse-to-tile's b-ranges); false: the row nest."""

    sparse_b_ranges_density: float = 0.01
    """The density the b-ranges choice is estimated at (tv-sparse-to-tile's
    b-ranges-density; nnz is a run-time size)."""

    sparse_row_block: int = 4
    """CSR spmm with a resident slice of b or over row ranges of b stores up
    to this many consecutive result / partial rows with one DMA from a ub
    block (tv-sparse-to-tile's row-block); 0 or 1: one DMA a row."""

    start_level: str = "tv"
    """The level of the input: tv, or tile for a module already tiled (a
    @pto.tile_kernel): then only pypto-set-target and the stages after
    tv-to-tile run."""

    def stages(self, level: str = "ascend_hw") -> tuple[ModulePass, ...]:
        """The member passes whose output is at `level` or above: the part of
        the pipeline that lowers `start_level` to `level`."""
        for name in (level, self.start_level):
            if name not in LEVELS:
                raise ValueError(f"unknown level '{name}' (one of {', '.join(LEVELS)})")
        if self.tuned:
            return (TunedLowering(self, level),)
        last = LEVELS.index(level)
        current = self.start_level
        members: list[ModulePass] = []
        for stage in LOWER_STAGES:
            if LEVELS.index(stage.level) > last:
                break
            if current not in (stage.inputs or (stage.level,)):
                continue
            current = max(current, stage.level, key=LEVELS.index)
            if stage.optional and stage.pass_name not in _registered_passes():
                continue
            if stage.enabled_by and not getattr(self, stage.enabled_by):
                continue
            options = {name: getattr(self, field) for field, name in stage.options}
            members.append(pass_by_name(stage.pass_name, **options))
        return tuple(members)

    def member_passes(self) -> tuple[ModulePass, ...]:
        return self.stages()


@dataclass(frozen=True)
class TunedLowering(ModulePass):
    """The stages of `pipeline` with the options the auto-tuner stored for the
    module (`pypto-lower{tuned=true}`): chosen when the module is seen."""

    name = "pypto-lower-tuned"

    pipeline: LowerPipeline
    level: str = "ascend_hw"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from dataclasses import replace

        from pypto_mlir.tune.applied import tuned_pipeline

        chosen = replace(tuned_pipeline(op, self.pipeline), tuned=False)
        for member in chosen.stages(self.level):
            member.apply(ctx, op)


def get_all_pipelines() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pipelines by name, in the form `xdsl.universe` expects for passes."""

    def cleanup() -> type[ModulePass]:
        return CleanupPipeline

    def lower() -> type[ModulePass]:
        return LowerPipeline

    return {CleanupPipeline.name: cleanup, LowerPipeline.name: lower}
