"""Sparse kernels against their roofline and dense masked attention on the
simulated ascend910b (prints, no asserts).

Issue 14's benchmark, each kernel lowered by `pypto-lower` and run once:

- the sparse ops alone (sparse_softmax BSR/CSR, CSR sddmm, to_dense BSR/CSR,
  gathers of random rows, of runs of consecutive rows and top-k attention's
  gather): a table of cycles, % of the sparse roofline, the busiest pipe and
  the numerics against the tv reference; then the gather of runs with
  `sparse-gather-run=1` against the default;
- `exp` of the stored values of a 1 % CSR and a BSR 64x64 tensor: by windows
  of the values array (the default) against one entry a tile
  (`sparse-values-window=1`);
- `relu(a @ b + bias)` with a 1 % CSR and a BSR 64x64 `a`: the bias and relu
  fused into the spmm's rows in UB (the default) against outlined through GM
  (`sparse-fuse-epilogue=false`);
- SpMM CSR M x M at 1 % density times M x 128 f16, a uniform and a power-law
  pattern: cycles, % of the sparse roofline (pypto_mlir/sparse_roofline.py,
  from the run's pattern), the vector and cube utilisation and the GM
  bandwidth utilisation, next to the article's 30-40 % compute and < 50 %
  bandwidth of the naive row loop; index prefetch off vs on
  (`sparse-index-prefetch`) and the core balance (the busiest core's cycles
  to the split's `sync_all`, else to its end, against the mean) with the
  stored entries split evenly and long rows divided (the default), whole rows
  by stored entries (`sparse-divide-rows=false`) and rows by count
  (`sparse-nnz-balance=false`); numerics exact against scipy, or the largest
  error against the tv reference's error bound (a divided row);
- block-sparse attention, a BSR mask of 64x64 blocks with 90 % of them empty
  (the diagonal kept): `softmax(sddmm(mask, q, k.T) * 0.088) @ v` as users
  write it, fused into one flash-attention nest per block row
  (passes/sparse_attention.py) and unfused (`sparse-fuse-attention=false`:
  one nest per op through GM temporaries), against dense masked attention of
  the same shape, `softmax(q @ k.T * 0.088 + mask) @ v` with an additive mask
  of 0 / -30000, fused by pypto-lower's flash-attention nest: cycles of each,
  the ratios and the % of each one's roofline; the outputs compared.

- top-k attention, `softmax(q[:, None] @ k[idx].mT * 0.088) @ v[idx]`, S=1024
  k=64 (--large adds the issue's S=8192 k=256, the default build only): the
  default build (the dense fallback, passes/topk_dense.py, or the fused nest,
  passes/topk_attention.py, by the cost model's estimates), the other path
  forced (`sparse-topk-dense-fallback=never` / `always`) and unfused
  (`sparse-fuse-topk-attention=false`), cycles, % of its roofline (gathered
  rows once per query), cycles per gathered row and the bound.

Then each target of issue 14 as met / MISS, with the bound of the run: the
busiest pipe of any core without its waits (barriers, flags), its share of the
run and the instruction that takes most of it.

Then the dense fallback of CSR spmm (1024x1024 x 1024x128 f16) at 0.1, 1, 10
% density (and 50 % with --large): the row nest, the fallback forced and the kernel's run-time
choice, with the cost model's estimates (docs/sparse.md, *The dense fallback*).

Then the gather runs (`sparse-gather-runs`, `--runs` alone): CSR spmm with the
rows of b from GM and CSR sddmm on banded (16, 32 a row) and uniform 1 %
patterns, one DMA a run of 8 consecutive column indices against one a row,
side by side (docs/sparse.md, *Gathers coalesced*).

    .venv/bin/python bench/bench_sparse.py          # M=1024, S=1024 (a few minutes)
    .venv/bin/python bench/bench_sparse.py --large  # issue shapes M=4096, S=4096
"""

import argparse
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f16
from xdsl.parser import Parser

import pypto_mlir as pto
from pypto_mlir.check import (
    LEVEL_ULPS,
    compare_arrays,
    lower,
    lowered_arguments,
    result_buffers,
)
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.error_bound import run_with_error_bounds
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.interp.tensor_view import run_tv_function
from pypto_mlir.passes.csr_spmm_nest import ROW_COST
from pypto_mlir.passes.sparse_function_lowering import SparseFunctionLowering
from pypto_mlir.passes.tv_sparse_to_tile import TvSparseToTilePass
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.roofline import Roofline, roofline
from pypto_mlir.sim.access import Pipe
from pypto_mlir.sparse_roofline import sparse_roofline
from pypto_mlir.targets import load_target
from pypto_mlir.universe import default_context

TARGET = "ascend910b"
CHIP = load_target(TARGET)
DENSITY = 0.01
COLUMNS = 128
HEAD_DIM = 128
BLOCK = 64
EMPTY = 0.9
SCALE = 0.088
"""The attention scale as users write it (about 1 / sqrt(128))."""
ARTICLE = "article, naive row loop: compute 30-40 %, GM bandwidth < 50 %"


@dataclass
class Run:
    cycles: int
    report: Any
    remarks: list[str]
    outputs: list[Any]
    bound: Roofline
    expected: list[Any]
    """The tv reference's outputs (a sparse result's values); empty: not run."""

    @property
    def numerics(self) -> str:
        """`exact`, or the largest difference from the tv reference."""
        pairs = list(zip(self.outputs, self.expected, strict=True))
        if all(np.array_equal(o, e) for o, e in pairs):
            return "exact"
        worst = max(
            float(np.abs(o.astype(np.float64) - e.astype(np.float64)).max())
            for o, e in pairs
        )
        return f"differs by {worst:.1e}"

    @property
    def fraction(self) -> float:
        return self.bound.cycles / self.cycles


def simulate(
    module: ModuleOp, inputs: Sequence[Any], sparse: bool, **options: Any
) -> Run:
    """Lower the tv kernel with pypto-lower's defaults (but `options`) and
    run it once; its roofline (the sparse one from these inputs)."""
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    name = function.sym_name.data
    bound = (
        sparse_roofline(module, name, CHIP, inputs)
        if sparse
        else roofline(module, name, CHIP)
    )
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        lowered = lower(module, "ascend_hw", LowerPipeline(target=TARGET, **options))
    outputs = result_buffers(function, inputs)
    expected = run_tv_function(module, name, inputs) if sparse else []
    arguments = [*lowered_arguments(function, inputs), *outputs]
    run = run_hw_function(lowered, name, arguments, CHIP)
    return Run(
        run.report.cycles,
        run.report,
        remarks,
        run.outputs[-len(outputs) :],
        bound,
        [e.values if isinstance(e, SparseArray) else e for e in expected],
    )


WAITS = ("sync_all", "wait_flag")
"""Instructions whose time is waiting for another pipe or core."""


def busiest(run: Run, short: bool = False) -> str:
    """What bounds the run: the busiest pipe of any core, not counting waits
    (a core at a barrier waits for the others), and the instruction taking
    most of its time."""
    columns = run.report.columns
    busy: dict[tuple[int, str], int] = {}
    by_name: dict[tuple[int, str, str], list[int]] = {}
    for index in range(len(columns.core)):
        name = str(columns.names[columns.name[index]])
        if name in WAITS:
            continue
        key = (int(columns.core[index]), Pipe(int(columns.queue[index])).name)
        cycles = int(columns.end[index] - columns.start[index])
        busy[key] = busy.get(key, 0) + cycles
        count = by_name.setdefault((*key, name), [0, 0])
        count[0], count[1] = count[0] + cycles, count[1] + 1
    (core, pipe), cycles = max(sorted(busy.items()), key=lambda item: item[1])
    (_, _, name), (top, count) = max(
        sorted((k, v) for k, v in by_name.items() if k[:2] == (core, pipe)),
        key=lambda item: item[1][0],
    )
    cores = int(columns.core.max()) + 1
    if short:
        return (
            f"{cores} cores; {pipe} of core {core} {cycles / run.cycles:.0%}: "
            f"{count} {name} ({top / count:.0f} each)"
        )
    return (
        f"{cores} cores; the busiest pipe is {pipe} of core {core}: {cycles} of "
        f"{run.cycles} cycles ({cycles / run.cycles:.0%}) without waits, {top} of "
        f"them in {count} {name} ({top / count:.0f} each); the roofline "
        f"({run.bound.cycles:.0f} cycles, {run.bound.limit.resource}) assumes every "
        f"pipe of all {CHIP.cores} cores busy at once"
    )


def utilisation(run: Run) -> str:
    pipes = run.report.pipes
    return (
        f"vector {pipes['V'].utilization:.0%}, cube {pipes['M'].utilization:.0%}, "
        f"scalar {pipes['S'].utilization:.0%}, GM bandwidth "
        f"{run.report.gm_bandwidth_utilization:.1%}"
    )


def power_law(m: int, rng: np.random.Generator) -> sp.csr_array:
    """An m x m matrix at DENSITY with Zipf-like row lengths (a few rows hold
    most entries, many are short or empty)."""
    weights = 1.0 / np.arange(1, m + 1) ** 1.1
    lengths = np.minimum(np.floor(weights / weights.sum() * DENSITY * m * m), m)
    lengths = rng.permutation(lengths.astype(np.int64))
    rows = np.repeat(np.arange(m), lengths)
    cols = np.concatenate([np.sort(rng.choice(m, n, replace=False)) for n in lengths])
    values = rng.uniform(-1, 1, rows.size).astype(np.float16).astype(np.float32)
    return sp.csr_array((values, (rows, cols)), shape=(m, m))


def balance(run: Run) -> str:
    """The busiest core's time against the mean over the cores that ran: each
    core's time to its first `sync_all` (the split's phase: after it every core
    waits for the last), else to its end."""
    columns = run.report.columns
    times = np.array([core.cycles for core in run.report.cores], dtype=np.float64)
    names = np.array([str(name) for name in columns.names])[columns.name]
    for core in range(times.size):
        arrivals = columns.start[(columns.core == core) & (names == "sync_all")]
        if arrivals.size:
            times[core] = float(arrivals.min())
    phase = "to the sync_all" if np.any(names == "sync_all") else "to the end"
    return (
        f"busiest core {times.max():.0f} cycles {phase} = "
        f"{times.max() / times.mean():.2f}x the mean {times.mean():.0f} of "
        f"{times.size} cores"
    )


def spmm_numerics(run: Run, expected: np.ndarray, bound: Any) -> str:
    """`exact` (scipy's f16 result, the entry order of every row's sum), else
    the largest error against the tolerance of the tv reference's error bound
    (a divided row summed in parts)."""
    if np.array_equal(run.outputs[0], expected):
        return "exact"
    comparison = compare_arrays(
        0, run.expected[0], run.outputs[0], f16, LEVEL_ULPS["ascend_hw"], bound
    )
    verdict = "within the bound" if comparison.ok else "OUTSIDE the bound"
    return f"{verdict}: {comparison.error_text()}"


def csr_spmm_kernel(m: int) -> pto.Kernel:
    """`a @ b`: a CSR m x m f16 by a dense m x COLUMNS f16."""

    @pto.kernel
    def csr_spmm(a: pto.CSR[(m, m), pto.f16], b: pto.Tensor[(m, COLUMNS), pto.f16]):
        return a @ b

    return csr_spmm


def csr_sddmm_kernel(s: int) -> pto.Kernel:
    """`sddmm(mask, q, k.T)`: a CSR s x s f16 mask sampling s x HEAD_DIM f16 rows."""

    @pto.kernel
    def csr_sddmm(
        mask: pto.CSR[(s, s), pto.f16],
        q: pto.Tensor[(s, HEAD_DIM), pto.f16],
        k: pto.Tensor[(s, HEAD_DIM), pto.f16],
    ):
        return pto.sddmm(mask, q, k, transpose_b=True)

    return csr_sddmm


def spmm(
    m: int, rng: np.random.Generator, pattern: str = "uniform"
) -> tuple[Run, float]:
    """SpMM with pypto-lower's defaults, then index prefetch off and the
    nnz-balanced split off (the same pattern): cycles, ratios, core balance.
    Returns the default run and prefetch off / on."""

    csr_spmm = csr_spmm_kernel(m)

    if pattern == "uniform":
        a = sp.random_array(
            (m, m), density=DENSITY, format="csr", dtype=np.float32, rng=rng
        )
        a.data = a.data.astype(np.float16).astype(np.float32)
    else:
        a = power_law(m, rng)
    b = rng.standard_normal((m, COLUMNS)).astype(np.float16)
    index = (a.indptr.astype(np.int32), a.indices.astype(np.int32))
    inputs = [(*index, a.data.astype(np.float16)), b]
    expected = (a @ b.astype(np.float32)).astype(np.float16)
    runs = {
        name: simulate(csr_spmm.module(), inputs, True, **options)
        for name, options in (
            ("default", {}),
            ("prefetch off", {"sparse_index_prefetch": False}),
            ("balance off", {"sparse_nnz_balance": False}),
            (
                "rows of b from GM",
                {"sparse_resident_b": False, "sparse_b_ranges": False},
            ),
            ("ranges off", {"sparse_b_ranges": False}),
            ("whole rows", {"sparse_divide_rows": False}),
        )
    }
    run = runs["default"]
    module = csr_spmm.module()
    name = next(op for op in module.ops if isinstance(op, func.FuncOp)).sym_name.data
    _, (bound,) = run_with_error_bounds(module, name, inputs)
    numerics = {name: spmm_numerics(r, expected, bound) for name, r in runs.items()}
    longest = int(np.diff(a.indptr).max())
    print(
        f"SpMM CSR {m}x{m} {pattern} at {DENSITY:.0%} ({a.nnz} entries, longest row "
        f"{longest}) x {m}x{COLUMNS} f16: {run.cycles} cycles, roofline "
        f"{run.bound.cycles:.0f} ({run.bound.limit.resource}), {run.fraction:.1%} of "
        f"roofline; numerics against scipy: "
        + "; ".join(f"{name} {text}" for name, text in numerics.items())
    )
    print(f"  utilisation: {utilisation(run)}  [{ARTICLE}]")
    off, gm = runs["prefetch off"], runs["rows of b from GM"]
    print(
        f"  index prefetch off / on: {off.cycles} / {run.cycles} cycles = "
        f"{off.cycles / run.cycles:.2f}x (the resident slices and the row ranges "
        f"gather by the prefetched index tiles, so prefetch off also gathers from "
        f"GM; with the rows of b from GM both ways: {off.cycles} / {gm.cycles} = "
        f"{off.cycles / gm.cycles:.2f}x)"
    )
    print(
        f"  rows of b from GM / on chip (sparse-resident-b=false "
        f"sparse-b-ranges=false): {gm.cycles} / {run.cycles} cycles = "
        f"{gm.cycles / run.cycles:.2f}x"
    )
    even = runs["balance off"]
    sliced = [re.search(r"as (\d+) column slice", r) for r in run.remarks]
    slices = next((int(s.group(1)) for s in sliced if s), 1)
    share = (a.nnz + ROW_COST * m) / (CHIP.cores // slices)
    whole = runs["whole rows"]
    print(
        f"  core balance, stored entries split evenly, long rows divided: "
        f"{balance(run)}; whole rows a core (sparse-divide-rows=false, "
        f"{whole.cycles} cycles, {whole.cycles / run.cycles:.2f}x): {balance(whole)}; "
        f"the longest row alone is {(longest + ROW_COST) / share:.2f}x the mean "
        f"share of work of the {CHIP.cores // slices} row groups ({slices} column "
        f"slice(s) of b)"
    )
    print(
        f"  core balance, split by row count (nnz-balance=false, {even.cycles} "
        f"cycles): {balance(even)}; rows of b from GM (resident-b=false b-ranges=false): "
        f"{balance(gm)}"
    )
    ranges = runs["ranges off"]
    print(
        f"  row ranges of b off / on (sparse-b-ranges=false): {ranges.cycles} / "
        f"{run.cycles} cycles = {ranges.cycles / run.cycles:.2f}x"
    )
    print(f"  bound: {busiest(run)}")
    for remark in run.remarks:
        if "tv-sparse-to-tile" in remark:
            print(f"    {remark.split('remark: ')[-1]}")
    return run, off.cycles / run.cycles


def attention(s: int, rng: np.random.Generator) -> tuple[Run, Run]:
    @pto.kernel
    def block_sparse(
        mask: pto.BSR[(s, s), pto.f16, (BLOCK, BLOCK)],
        q: pto.Tensor[(s, HEAD_DIM), pto.f16],
        k: pto.Tensor[(s, HEAD_DIM), pto.f16],
        v: pto.Tensor[(s, HEAD_DIM), pto.f16],
    ):
        return pto.softmax(pto.sddmm(mask, q, k, transpose_b=True) * SCALE) @ v

    @pto.kernel
    def dense_masked(
        q: pto.Tensor[(s, HEAD_DIM), pto.f16],
        k: pto.Tensor[(s, HEAD_DIM), pto.f16],
        v: pto.Tensor[(s, HEAD_DIM), pto.f16],
        mask: pto.Tensor[(s, s), pto.f16],
    ):
        return pto.softmax(q @ k.T * SCALE + mask, axis=-1) @ v

    grid = s // BLOCK
    # The diagonal (no empty query row) and random others: 90 % empty.
    keep = np.eye(grid, dtype=bool)
    others = np.flatnonzero(~keep)
    chosen = rng.choice(others, round((1 - EMPTY) * grid * grid) - grid, replace=False)
    keep.flat[chosen] = True
    pattern = np.kron(keep, np.ones((BLOCK, BLOCK), np.float32))
    mask = sp.bsr_array(pattern, blocksize=(BLOCK, BLOCK))
    q, k, v = (
        (rng.standard_normal((s, HEAD_DIM)) * 0.1).astype(np.float16) for _ in range(3)
    )
    additive = np.where(pattern > 0, 0, -30000).astype(np.float16)
    start = time.perf_counter()
    arguments = [(mask.indptr, mask.indices, mask.data.astype(np.float16)), q, k, v]
    sparse = simulate(block_sparse.module(), arguments, True)
    unfused = simulate(
        block_sparse.module(), arguments, True, sparse_fuse_attention=False
    )
    whole_rows = simulate(
        block_sparse.module(), arguments, True, sparse_attention_block_split=False
    )
    by_count = simulate(
        block_sparse.module(),
        arguments,
        True,
        sparse_attention_block_split=False,
        sparse_attention_balance=False,
    )
    row_maxima = simulate(block_sparse.module(), arguments, True, block_reduce=False)
    sum_columns = simulate(
        block_sparse.module(), arguments, True, sparse_attention_sum_column=False
    )
    dense = simulate(dense_masked.module(), [q, k, v, additive], False)
    fused = any("fused attention" in r for r in dense.remarks)
    sparse_fused = any("fused block-sparse attention" in r for r in sparse.remarks)

    def differs(run: Run) -> float:
        return float(
            np.abs(
                run.outputs[0].astype(np.float32) - dense.outputs[0].astype(np.float32)
            ).max()
        )

    stored = int(keep.sum())
    print(
        f"\nblock-sparse attention S={s} d={HEAD_DIM}, {BLOCK}x{BLOCK} blocks, "
        f"{stored} of {grid * grid} stored ({1 - stored / grid**2:.0%} empty), "
        f"scaled by {SCALE}:"
    )
    for label, run in (
        ("sparse, fused" if sparse_fused else "sparse, NOT fused", sparse),
        (
            "sparse, fused, whole block rows by stored blocks "
            "(sparse-attention-block-split=false)",
            whole_rows,
        ),
        (
            "sparse, fused, block rows by count (both false)",
            by_count,
        ),
        ("sparse, unfused (sparse-fuse-attention=false)", unfused),
        (
            "sparse, fused, a vreduce_max repeat per row of the scores "
            "(block-reduce=false)",
            row_maxima,
        ),
        (
            "sparse, fused, the running sums 16 columns wide "
            "(sparse-attention-sum-column=false)",
            sum_columns,
        ),
    ):
        print(
            f"  {label}: {run.cycles} cycles, roofline {run.bound.cycles:.0f} "
            f"({run.bound.limit.resource}), {run.fraction:.1%} of roofline; "
            f"{utilisation(run)}"
        )
        shown = [r.split("remark: ")[-1] for r in run.remarks]
        for remark in dict.fromkeys(shown):  # once each, in order
            blocks = run is sparse and "by 32-byte blocks" in remark
            if "tv-sparse-to-tile" in remark or blocks:
                print(f"    {remark}")
    print(
        f"  dense masked ({'flash-fused' if fused else 'NOT fused'}): "
        f"{dense.cycles} cycles, roofline {dense.bound.cycles:.0f} "
        f"({dense.bound.limit.resource}), {dense.fraction:.1%} of roofline"
    )
    print(
        f"  dense / sparse fused: {dense.cycles / sparse.cycles:.2f}x; whole rows "
        f"/ blocks split: {whole_rows.cycles / sparse.cycles:.2f}x; by count / "
        f"default: {by_count.cycles / sparse.cycles:.2f}x; block-reduce off / "
        f"on: {row_maxima.cycles / sparse.cycles:.2f}x; sum-column off / on: "
        f"{sum_columns.cycles / sparse.cycles:.2f}x; unfused / "
        f"fused: {unfused.cycles / sparse.cycles:.2f}x; outputs differ from the "
        f"dense one by at most {differs(sparse):.2e} (fused), "
        f"{differs(unfused):.2e} (unfused); {time.perf_counter() - start:.0f}s"
    )
    return sparse, dense


TOPK_RUN = 8
"""Top-k indices: half of a query's keys in runs of this many consecutive
keys near the query (locality), the other half anywhere."""


def topk_indices(s: int, top: int, rng: np.random.Generator) -> np.ndarray:
    """Each of `s` queries' `top` distinct keys of `s`, sorted, as DeepSeek's
    top-k selection picks them: half in runs of TOPK_RUN consecutive keys within
    4 * top of the query, the rest uniformly among the others."""
    rows = []
    window = min(s, 4 * top)
    for query in range(s):
        low = min(max(0, query - window // 2), s - window)
        starts = rng.choice(window // TOPK_RUN, top // 2 // TOPK_RUN, replace=False)
        local = low + (starts[:, None] * TOPK_RUN + np.arange(TOPK_RUN)).ravel()
        others = np.setdiff1d(np.arange(s), local)
        far = rng.choice(others, top - local.size, replace=False)
        rows.append(np.sort(np.concatenate([local, far])))
    return np.stack(rows).astype(np.int32)


def topk_attention(
    s: int,
    top: int,
    rng: np.random.Generator,
    unfused: bool = True,
    gather: bool = True,
) -> Run:
    """Top-k attention as users write it, `softmax(q[:, None] @ k[idx].mT *
    0.088) @ v[idx]`, each query over its `top` keys, fused into one nest per
    query row (passes/topk_attention.py) and, with `unfused`, through the
    gathers' GM temporaries (`sparse-fuse-topk-attention=false`): cycles, %
    of its roofline (gathered rows once per query, docs/sparse.md), the
    cycles per gathered row and per DMA, and what bounds it. The default
    build takes the dense fallback (an additive mask and the flash nest,
    passes/topk_dense.py) where the cost model estimates it cheaper; the
    other path is run forced (`sparse-topk-dense-fallback=never` / `always`;
    the gather path only with `gather`)."""

    @pto.kernel
    def topk(
        q: pto.Tensor[(s, HEAD_DIM), pto.f16],
        k: pto.Tensor[(s, HEAD_DIM), pto.f16],
        v: pto.Tensor[(s, HEAD_DIM), pto.f16],
        idx: pto.Tensor[(s, top), pto.i32],
    ):
        p = pto.softmax(q[:, None, :] @ k[idx].mT * SCALE)
        return (p @ v[idx])[:, 0]

    idx = topk_indices(s, top, rng)
    q, k, v = (
        (rng.standard_normal((s, HEAD_DIM)) * 0.1).astype(np.float16) for _ in range(3)
    )
    inputs = [q, k, v, idx]
    bound = sparse_roofline(topk.module(), "topk", CHIP, inputs)
    distinct = int(np.unique(idx).size)
    once = 2 * distinct * HEAD_DIM * 2 + 2 * s * HEAD_DIM * 2 + idx.size * 4
    runs = int((np.diff(idx, axis=1) == 1).sum())
    print(
        f"\ntop-k attention S={s} k={top} d={HEAD_DIM} ({runs} of {idx.size} keys "
        f"follow their predecessor): roofline {bound.cycles:.0f} cycles "
        f"({bound.limit.resource}: {2 * idx.size * HEAD_DIM * 2 / 2**20:.0f} MiB of "
        f"gathered K and V rows, once per query: "
        f"{bound.cycles / (2 * idx.size / CHIP.cores):.1f} cycles a row a core); "
        f"counting each of the {distinct} distinct key rows once it would be "
        f"{once / CHIP.gm_bytes_per_cycle:.0f} cycles of GM"
    )
    start = time.perf_counter()
    fused = simulate(topk.module(), inputs, True)
    dense = any("by its dense fallback" in r for r in fused.remarks)
    rows = -(-s // CHIP.cores) * top * 2  # gathered K and V rows of a core
    chosen = "the dense fallback" if dense else "the fused gather nest"
    flash = any("fused attention (" in r for r in fused.remarks)
    for remark in dict.fromkeys(r.split("remark: ")[-1] for r in fused.remarks):
        if "top-k attention" in remark:
            print(f"    {remark}")
    print(
        f"  default ({chosen}{', flash-fused' if dense and flash else ''}): "
        f"{fused.cycles} cycles, {fused.fraction:.1%} of roofline; "
        f"{fused.cycles / rows:.0f} cycles per gathered row of the busiest "
        f"core; {utilisation(fused)}; numerics vs the tv reference: "
        f"{fused.numerics}; {time.perf_counter() - start:.0f}s"
    )
    print(f"  {busiest(fused)}")
    forced = "always" if not dense else ("never" if gather else None)
    if forced is not None:
        start = time.perf_counter()
        other = simulate(topk.module(), inputs, True, sparse_topk_dense_fallback=forced)
        print(
            f"  forced (sparse-topk-dense-fallback={forced}): {other.cycles} "
            f"cycles, {other.fraction:.1%} of roofline; default "
            f"{other.cycles / fused.cycles:.2f}x faster; numerics: "
            f"{other.numerics}; {time.perf_counter() - start:.0f}s"
        )
        print(f"  {busiest(other)}")
    if unfused:
        start = time.perf_counter()
        off = simulate(
            topk.module(),
            inputs,
            True,
            sparse_fuse_topk_attention=False,
        )
        print(
            f"  unfused (sparse-fuse-topk-attention=false): {off.cycles} cycles, "
            f"{off.fraction:.1%} of roofline; default "
            f"{off.cycles / fused.cycles:.2f}x faster; "
            f"{time.perf_counter() - start:.0f}s"
        )
        print(f"  {busiest(off)}")
    return fused


def _csr_triple(matrix: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return matrix.indptr, matrix.indices, matrix.data.astype(np.float16)


def bsr_mask(s: int, rng: np.random.Generator) -> sp.bsr_array:
    """An s x s BSR matrix of BLOCK x BLOCK blocks, the diagonal and random
    others stored, EMPTY of them empty."""
    grid = s // BLOCK
    keep = np.eye(grid, dtype=bool)
    others = np.flatnonzero(~keep)
    chosen = rng.choice(others, round((1 - EMPTY) * grid * grid) - grid, replace=False)
    keep.flat[chosen] = True
    return sp.bsr_array(
        np.kron(keep, rng.standard_normal((BLOCK, BLOCK)).astype(np.float32)),
        blocksize=(BLOCK, BLOCK),
    )


def single_ops(s: int, rng: np.random.Generator) -> None:
    """Each of sparse_softmax, sddmm, to_dense and gather alone: cycles, % of
    its sparse roofline and the busiest pipe (the nests of docs/sparse.md)."""
    bsr = bsr_mask(s, rng)
    csr = sp.random_array(
        (s, s), density=DENSITY, format="csr", dtype=np.float32, rng=rng
    )
    q, k = (
        (rng.standard_normal((s, HEAD_DIM)) * 0.1).astype(np.float16) for _ in range(2)
    )
    rows = 256
    idx = np.sort(rng.choice(s, rows, replace=False)).astype(np.int32)

    @pto.kernel
    def bsr_softmax(a: pto.BSR[(s, s), pto.f16, (BLOCK, BLOCK)]):
        return pto.softmax(a)

    @pto.kernel
    def csr_softmax(a: pto.CSR[(s, s), pto.f16]):
        return pto.softmax(a)

    csr_sddmm = csr_sddmm_kernel(s)

    @pto.kernel
    def bsr_to_dense(a: pto.BSR[(s, s), pto.f16, (BLOCK, BLOCK)]):
        return a.to_dense()

    @pto.kernel
    def csr_to_dense(a: pto.CSR[(s, s), pto.f16]):
        return a.to_dense()

    @pto.kernel
    def gather(
        kv: pto.Tensor[(s, HEAD_DIM), pto.f16], idx: pto.Tensor[(rows,), pto.i32]
    ):
        return kv[idx]

    # runs of 8 consecutive rows at random places (a banded pattern's columns)
    starts = np.sort(rng.choice(s // 8, rows // 8, replace=False)) * 8
    runs = (starts[:, None] + np.arange(8)).ravel().astype(np.int32)
    # top-k attention's gather (the part that lowers today, docs/sparse.md):
    # each of 32 queries picks k=64 of the S key rows, sorted
    queries, top = 32, 64
    chosen = np.sort(
        np.stack([rng.choice(s, top, replace=False) for _ in range(queries)]), axis=1
    ).astype(np.int32)

    @pto.kernel
    def topk_gather(
        kv: pto.Tensor[(s, HEAD_DIM), pto.f16],
        idx: pto.Tensor[(queries, top), pto.i32],
    ):
        return kv[idx]

    bsr_in, csr_in = _csr_triple(bsr), _csr_triple(csr)
    cases = [
        (
            f"sparse_softmax BSR {BLOCK}x{BLOCK}, {bsr.nnz // BLOCK**2} blocks",
            bsr_softmax,
            [bsr_in],
        ),
        (f"sparse_softmax CSR {DENSITY:.0%} ({csr.nnz})", csr_softmax, [csr_in]),
        (f"sddmm CSR {DENSITY:.0%} d={HEAD_DIM}", csr_sddmm, [csr_in, q, k]),
        (f"to_dense BSR {BLOCK}x{BLOCK}", bsr_to_dense, [bsr_in]),
        (f"to_dense CSR {DENSITY:.0%}", csr_to_dense, [csr_in]),
        (f"gather {rows} random rows of {s}x{HEAD_DIM}", gather, [q, idx]),
        (f"gather {rows} rows in runs of 8", gather, [q, runs]),
        (
            f"top-k gather: {queries} queries x k={top} of {s}x{HEAD_DIM}",
            topk_gather,
            [q, chosen],
        ),
    ]
    print(f"\nsparse ops alone (S={s}, ascend910b, pypto-lower defaults):")
    print(
        "| op | cycles | roofline (bound) | % of roofline | busiest pipe | numerics |"
    )
    print("|---|---|---|---|---|---|")
    results: dict[object, Run] = {}
    for name, kernel, inputs in cases:
        run = results[kernel] = simulate(kernel.module(), inputs, True)
        print(
            f"| {name} | {run.cycles} | {run.bound.cycles:.0f} "
            f"({run.bound.limit.resource}) | {run.fraction:.1%} | "
            f"{busiest(run, short=True)} | "
            f"{run.numerics} |"
        )
    exact = simulate(csr_softmax.module(), [csr_in], True, sparse_masked_window=0)
    masked = results[csr_softmax]
    print(
        f"CSR softmax: sparse-masked-window=0 (the exact entry windows) "
        f"{exact.cycles} cycles, =64 (default, computed masks) {masked.cycles} "
        f"cycles: {exact.cycles / masked.cycles:.2f}x"
    )
    off = simulate(gather.module(), [q, runs], True, sparse_gather_run=1)
    on = simulate(gather.module(), [q, runs], True)
    print(
        f"gather of {rows} rows in runs of 8: sparse-gather-run=1 {off.cycles} "
        f"cycles, =4 (default) {on.cycles} cycles: {off.cycles / on.cycles:.2f}x"
    )


def values_map_module(s: int, block: int) -> ModuleOp:
    """`exp` of the stored values of an s x s CSR (block 1) or BSR tensor
    (disassemble, tv.exp, assemble: the frontend has no spelling for it)."""
    blocked = "" if block == 1 else f", block = [{block}, {block}]"
    t = f"!tv.tensor<{s}x{s}xf16, #tv.csr<rows = {s}, cols = {s}, nnz = ?, index = i32{blocked}>>"
    v = "!tv.tensor<?xf16>" if block == 1 else f"!tv.tensor<?x{block}x{block}xf16>"
    o = f"!tv.tensor<{s // block + 1}xi32>"
    text = f"""
func.func @values_exp(%a: {t}) -> {t} {{
  %0, %1, %2 = tv.disassemble %a : {t} -> {o}, !tv.tensor<?xi32>, {v}
  %3 = tv.exp %2 : {v}
  %4 = tv.assemble %0, %1, %3 : {o}, !tv.tensor<?xi32>, {v} -> {t}
  func.return %4 : {t}
}}"""
    return Parser(default_context(), text).parse_module()


def values_maps(s: int, rng: np.random.Generator) -> None:
    """`exp` of the values of a 1 % CSR and of a BSR 64x64 mask: by windows
    (the default) against one entry a tile (`sparse-values-window=1`)."""
    csr = sp.random_array(
        (s, s), density=DENSITY, format="csr", dtype=np.float32, rng=rng
    )
    bsr = bsr_mask(s, rng)
    print(f"\nexp of the stored values (S={s}, ascend910b):")
    print(
        "| values of | one entry a tile | by windows (default) | ratio | % of roofline | busiest pipe | numerics |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, block, matrix in (
        (f"CSR {DENSITY:.0%} ({csr.nnz} entries)", 1, csr),
        (f"BSR {BLOCK}x{BLOCK}, {bsr.nnz // BLOCK**2} blocks", BLOCK, bsr),
    ):
        module = values_map_module(s, block)
        inputs = [_csr_triple(matrix)]
        off = simulate(module, inputs, True, sparse_values_window=1)
        on = simulate(module, inputs, True)
        print(
            f"| {name} | {off.cycles} | {on.cycles} | {off.cycles / on.cycles:.1f}x | "
            f"{on.fraction:.1%} | {busiest(on, short=True)} | {on.numerics} |"
        )


def epilogues(s: int, rng: np.random.Generator) -> None:
    """`relu(a @ b + bias)` with a 1 % CSR and a BSR 64x64 `a` (s x s, times
    s x COLUMNS f16): the bias and relu fused into the spmm's rows in UB (the
    default) against outlined to a dense nest through GM
    (`sparse-fuse-epilogue=false`)."""
    csr = sp.random_array(
        (s, s), density=DENSITY, format="csr", dtype=np.float32, rng=rng
    )
    bsr = bsr_mask(s, rng)
    b = (rng.standard_normal((s, COLUMNS)) * 0.1).astype(np.float16)
    bias = rng.standard_normal(COLUMNS).astype(np.float16)

    @pto.kernel
    def csr_bias_relu(
        a: pto.CSR[(s, s), pto.f16],
        b: pto.Tensor[(s, COLUMNS), pto.f16],
        bias: pto.Tensor[(COLUMNS,), pto.f16],
    ):
        return pto.relu(a @ b + bias)

    @pto.kernel
    def bsr_bias_relu(
        a: pto.BSR[(s, s), pto.f16, (BLOCK, BLOCK)],
        b: pto.Tensor[(s, COLUMNS), pto.f16],
        bias: pto.Tensor[(COLUMNS,), pto.f16],
    ):
        return pto.relu(a @ b + bias)

    print(
        f"\nspmm epilogue relu(a @ b + bias), {s}x{s} x {s}x{COLUMNS} f16 (ascend910b):"
    )
    print(
        "| a | unfused (GM) | fused in UB (default) | ratio | % of roofline | busiest pipe | numerics |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, kernel, matrix in (
        (f"CSR {DENSITY:.0%}", csr_bias_relu, csr),
        (f"BSR {BLOCK}x{BLOCK}, {bsr.nnz // BLOCK**2} blocks", bsr_bias_relu, bsr),
    ):
        inputs = [_csr_triple(matrix), b, bias]
        off = simulate(kernel.module(), inputs, True, sparse_fuse_epilogue=False)
        on = simulate(kernel.module(), inputs, True)
        print(
            f"| {name} | {off.cycles} | {on.cycles} | {off.cycles / on.cycles:.2f}x | "
            f"{on.fraction:.1%} | {busiest(on, short=True)} | {on.numerics} |"
        )


def target(name: str, got: float, wanted: float, text: str, run: Run) -> None:
    mark = "met " if got >= wanted else "MISS"
    shown = f"{got:.2f}x" if text.endswith("x") else f"{got:.1%}"
    line = f"  [{mark}] {name} >= {text} (got {shown})"
    if got < wanted:
        line += f": {busiest(run)}"
    print(line)


def f16_ulps(got: np.ndarray, expected: np.ndarray) -> str:
    """How far f16 `got` is from `expected`: the elements that differ and the
    most f16 ulps between them (scipy sums each row in f32, the cube in its
    own K order)."""
    order = [
        np.where(x.view(np.int16) < 0, -(x.view(np.int16) & 0x7FFF), x.view(np.int16))
        for x in (got.astype(np.float16), expected.astype(np.float16))
    ]
    ulps = np.abs(order[0].astype(np.int64) - order[1].astype(np.int64))
    return (
        f"differs from scipy in {int((ulps > 0).sum())} of {ulps.size} elements, "
        f"by at most {int(ulps.max())} f16 ulp(s)"
    )


SWEEP = (0.001, 0.01, 0.1)
"""Densities of the dense-fallback sweep; --large adds 50 % (about 15
minutes of simulation on its own)."""


def fallback_sweep(
    m: int, rng: np.random.Generator, densities: Sequence[float] = SWEEP
) -> None:
    """SpMM CSR m x m x 128 f16 at each of `densities`: the row nest
    (`sparse-dense-fallback=false`), the dense fallback forced
    (`sparse-dense-density` tiny: to_dense then the cube matmul) and the
    kernel's own run-time choice (pypto-lower's defaults), each with the cost
    model's estimate; the outputs compared with scipy."""

    csr_spmm = csr_spmm_kernel(m)

    module = csr_spmm.module()
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    lowering = SparseFunctionLowering(function.clone(), CHIP, TvSparseToTilePass())
    spmm_op = next(op for op in function.walk() if isinstance(op, tv.SpmmOp))
    costs = lowering.fallback_costs(spmm_op)
    assert costs is not None
    threshold = costs.threshold()
    print(
        f"\ndense fallback of SpMM CSR {m}x{m} x {m}x{COLUMNS} f16 ({TARGET}): the "
        f"model's threshold: {'none' if threshold is None else f'nnz >= {threshold}'}"
        f"; {costs.text(threshold or 0)}"
    )
    paths = {
        "row nest": {"sparse_dense_fallback": False},
        "fallback": {"sparse_dense_density": 1e-9},
        "choice": {},
    }
    for density in densities:
        a = sp.random_array((m, m), density=density, format="csr", rng=rng)
        a.data = a.data.astype(np.float16).astype(np.float32)
        b = rng.standard_normal((m, COLUMNS)).astype(np.float16)
        inputs = [(a.indptr, a.indices, a.data.astype(np.float16)), b]
        expected = (a @ b.astype(np.float32)).astype(np.float16)
        cycles: dict[str, int] = {}
        texts: dict[str, str] = {}
        for name, options in paths.items():
            with diagnostic_handler(lambda d: None):
                lowered = lower(
                    module, "ascend_hw", LowerPipeline(target=TARGET, **options)
                )
            text = str(lowered)
            same = next((k for k, t in texts.items() if t == text), None)
            if same is not None:  # the same kernel: the same (deterministic) run
                cycles[name] = cycles[same]
                continue
            texts[name] = text
            outputs = result_buffers(function)
            run = run_hw_function(
                lowered,
                function.sym_name.data,
                [*lowered_arguments(function, inputs), *outputs],
                CHIP,
            )
            cycles[name] = run.report.cycles
            if not np.array_equal(run.outputs[-1], expected):
                print(f"  {name}: {f16_ulps(run.outputs[-1], expected)}")
        sparse_model = costs.sparse + costs.sparse_per_entry * a.nnz
        dense_model = costs.dense + costs.dense_per_entry * a.nnz
        faster = min(("row nest", "fallback"), key=lambda k: cycles[k])
        chose = (
            "fallback" if threshold is not None and a.nnz >= threshold else "row nest"
        )
        print(
            f"  {density:6.1%} ({a.nnz:6d} entries): row nest {cycles['row nest']:8d} "
            f"(model {sparse_model:8.0f}), fallback {cycles['fallback']:8d} "
            f"(model {dense_model:8.0f}), choice {cycles['choice']:8d} = {chose} "
            f"({'right' if chose == faster else 'WRONG'}: {faster} is faster, "
            f"{max(cycles['row nest'], cycles['fallback']) / min(cycles['row nest'], cycles['fallback']):.2f}x)"
        )


def banded(m: int, width: int, rng: np.random.Generator) -> sp.csr_array:
    """`width` consecutive columns a row around the diagonal (clipped to the
    matrix): the runs `sparse-gather-runs` merges."""
    first = np.clip(np.arange(m) - width // 2, 0, m - width)
    rows = np.repeat(np.arange(m), width)
    cols = (first[:, None] + np.arange(width)).ravel()
    values = rng.standard_normal(rows.size).astype(np.float16).astype(np.float32)
    return sp.csr_array((values, (rows, cols)), shape=(m, m))


def gather_runs(m: int, rng: np.random.Generator) -> None:
    """CSR spmm with the rows of b from GM (`sparse-resident-b=false
    sparse-b-ranges=false`) and CSR sddmm, banded (16 and 32 wide) and uniform
    1 % patterns: groups of consecutive column indices as one DMA of their
    rows (`sparse-gather-runs`, the default) against a DMA an entry, side by
    side, and whether the outputs are the same bits."""

    csr_spmm = csr_spmm_kernel(m)

    csr_sddmm = csr_sddmm_kernel(m)

    dense = {"sparse_resident_b": False, "sparse_b_ranges": False}
    b = rng.standard_normal((m, COLUMNS)).astype(np.float16)
    q, k = (
        (rng.standard_normal((m, HEAD_DIM)) * 0.1).astype(np.float16) for _ in range(2)
    )
    uniform = sp.random_array(
        (m, m), density=DENSITY, format="csr", dtype=np.float32, rng=rng
    )
    uniform.data = uniform.data.astype(np.float16).astype(np.float32)
    patterns = {
        "banded16": banded(m, 16, rng),
        "banded32": banded(m, 32, rng),
        f"uniform {DENSITY:.0%}": uniform,
    }
    print(f"\ngather runs (sparse-gather-runs), {m}x{m}, ascend910b:")
    print(
        "| kernel | pattern (entries) | off: cycles | on: cycles | off / on | same bits |"
    )
    print("|---|---|---|---|---|---|")
    for pattern, a in patterns.items():
        index = (a.indptr.astype(np.int32), a.indices.astype(np.int32))
        triple = (*index, a.data.astype(np.float16))
        for name, kernel, inputs, options in (
            ("spmm, rows of b from GM", csr_spmm, [triple, b], dense),
            ("sddmm", csr_sddmm, [triple, q, k], {}),
        ):
            off = simulate(
                kernel.module(), inputs, True, sparse_gather_runs=False, **options
            )
            on = simulate(kernel.module(), inputs, True, **options)
            same = all(
                np.array_equal(x, y)
                for x, y in zip(on.outputs, off.outputs, strict=True)
            )
            print(
                f"| {name} | {pattern} ({a.nnz}) | {off.cycles} | {on.cycles} | "
                f"{off.cycles / on.cycles:.2f}x | {same} ({on.numerics}) |",
                flush=True,
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--large", action="store_true", help="the issue's shapes, M=4096 and S=4096"
    )
    parser.add_argument(
        "--ops", action="store_true", help="only the table of the sparse ops alone"
    )
    parser.add_argument(
        "--runs",
        action="store_true",
        help="only the gather runs of spmm and sddmm (banded, uniform), on / off",
    )
    args = parser.parse_args(argv)
    size = 4096 if args.large else 1024
    if args.runs:
        gather_runs(size, np.random.default_rng(3))
        return 0
    rng = np.random.default_rng(0)
    single_ops(size, np.random.default_rng(1))
    if args.ops:
        return 0
    values_maps(size, np.random.default_rng(1))
    epilogues(size, np.random.default_rng(1))
    csr, ratio = spmm(size, rng)
    skewed, _ = spmm(size, rng, "power-law")
    sparse, dense = attention(size, rng)
    topk = topk_attention(1024, 64, np.random.default_rng(2))
    large = None
    if args.large:  # the default build only: gather and unfused runs take hours
        large = topk_attention(
            8192, 256, np.random.default_rng(2), unfused=False, gather=False
        )
    fallback_sweep(1024, rng, (*SWEEP, 0.5) if args.large else SWEEP)
    gather_runs(size, np.random.default_rng(3))
    shapes = "" if args.large else " (scaled down: --large for the issue's 4096)"
    print(f"\ntargets (issue 14, ascend910b){shapes}:")
    target("SpMM CSR % of roofline", csr.fraction, 0.70, "70%", csr)
    target("SpMM index prefetch on / off", ratio, 1.5, "1.5x", csr)
    times = np.array([core.cycles for core in skewed.report.cores], np.float64)
    spread = times.max() / times.mean()
    line = f"power-law SpMM busiest core within 10 % of the mean (got {spread:.2f}x)"
    print(f"  [{'met ' if spread <= 1.10 else 'MISS'}] {line}")
    speedup = dense.cycles / sparse.cycles
    target("block-sparse / dense masked attention", speedup, 5.0, "5x", sparse)
    target("block-sparse attention % of roofline", sparse.fraction, 0.50, "50%", sparse)
    target(
        "top-k attention S=1024 k=64 % of roofline", topk.fraction, 0.50, "50%", topk
    )
    if large is None:
        print(
            "  [----] top-k attention S=8192 k=256 % of roofline >= 50%: --large "
            "(about 9 minutes of simulation: the dense fallback)"
        )
    else:
        target(
            "top-k attention S=8192 k=256 % of roofline",
            large.fraction,
            0.50,
            "50%",
            large,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
