"""The auto-tuner: tuned vs default cycles per kernel, and search throughput
(prints, no asserts).

Part 1: every demo kernel (pypto_mlir/demo.py) and the kernels of the other
benchmarks (bench_fusion, bench_optimizations, bench_coalesce, bench_gemm,
bench_attention, bench_sparse) at sizes that simulate in seconds, tuned with
pypto-tune's search (`--budget` candidates, `--jobs` local workers) on the
simulated target: default cycles, tuned cycles, speed-up, % of roofline before
and after, the winning options, the numerical check of the winner (on the
kernel's own inputs). Tuned is never worse than the default: the default is a
candidate and a winner must pass the check. (bench_tile_views' kernels are
hand-tiled `@pto.tile_kernel`s: their tile sizes are the author's, not a
decision of pypto-lower's to tune.)

Part 2: search throughput (candidates measured per second) for one kernel and
the same budget with 1 and 2 local workers and with Ray on 2 CPUs (skipped
with a message when Ray is not installed).

Results go to a temporary tuning cache (the user's is left alone).

    .venv/bin/python bench/bench_tune.py                 # budget 6: about 15 min on 2 cores
    .venv/bin/python bench/bench_tune.py --budget 16 --only swish,layernorm
    .venv/bin/python bench/bench_tune.py --target tiny
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from bench_optimizations import Kernel, _example, _view  # bench/ is on the path
from xdsl.dialects import func

import pypto_mlir as pto
from pypto_mlir.demo import KERNELS, DemoKernel
from pypto_mlir.tune.applied import options_text
from pypto_mlir.tune.cache import TuneCache
from pypto_mlir.tune.executors import Executor, LocalExecutor
from pypto_mlir.tune.tuner import TuneResult, tune

OTHER_SIZES: tuple[DemoKernel, ...] = (
    DemoKernel("gemm", "gemm", {"M": 200}, "200x1024x1024 f16"),
    DemoKernel("layernorm", "layernorm", {"N": 1000}, "1000x768 f16"),
    DemoKernel("attention", "attention", {"S": 256}, "256x128 f16"),
)
"""The bench's own shapes: the examples at sizes the demo does not use."""

CANDIDATE_SECONDS = 120.0
"""A candidate slower than this to lower and simulate is recorded as such."""


@dataclass(frozen=True)
class Case:
    """A kernel to tune and the benchmark it comes from."""

    source: str
    kernel: Kernel


def _demo(demo: DemoKernel) -> Kernel:
    sizes = "".join(f" {k}={v}" for k, v in demo.sizes.items())
    kernel = _example(demo.example, demo.kernel, demo.shape, **demo.sizes)
    return replace(kernel, name=demo.kernel + sizes)


def _traced(
    name: str, body: Callable[..., Any], annotations: dict[str, Any]
) -> Callable[[], Any]:
    """The module of `body` traced as a kernel with these annotations (set by
    hand: sizes of a local variable cannot be in a string annotation)."""
    body.__name__ = name
    body.__annotations__ = annotations
    return pto.kernel(body).module


def _csr_spmm(m: int) -> Kernel:
    """bench_sparse's SpMM: CSR m x m at 1 % density times m x 128 f16."""
    module = _traced(
        "csr_spmm",
        lambda a, b: a @ b,
        {"a": pto.CSR[(m, m), pto.f16], "b": pto.Tensor[(m, 128), pto.f16]},
    )

    def inputs(rng: np.random.Generator) -> list[Any]:
        a = sp.random_array((m, m), density=0.01, format="csr", rng=rng)
        b = rng.standard_normal((m, 128)).astype(np.float16)
        return [(a.indptr, a.indices, a.data.astype(np.float16)), b]

    return Kernel(f"csr_spmm M={m}", f"CSR {m}x{m} 1% x128 f16", module, inputs)


def _bsr_attention(s: int) -> Kernel:
    """bench_sparse's block-sparse attention: softmax(sddmm(mask, q, k.T)) @ v,
    a BSR mask of 64x64 blocks, the diagonal and about 10 % of the others."""
    qkv = pto.Tensor[(s, 128), pto.f16]
    module = _traced(
        "bsr_attention",
        lambda mask, q, k, v: pto.softmax(pto.sddmm(mask, q, k, transpose_b=True)) @ v,
        {"mask": pto.BSR[(s, s), pto.f16, (64, 64)], "q": qkv, "k": qkv, "v": qkv},
    )

    def inputs(rng: np.random.Generator) -> list[Any]:
        grid = s // 64
        keep = np.eye(grid, dtype=bool) | (rng.random((grid, grid)) < 0.1)
        mask = sp.bsr_array(
            np.kron(keep, np.ones((64, 64), np.float32)), blocksize=(64, 64)
        )
        q, k, v = (
            (rng.standard_normal((s, 128)) * 0.1).astype(np.float16) for _ in "qkv"
        )
        return [(mask.indptr, mask.indices, mask.data.astype(np.float16)), q, k, v]

    return Kernel(f"bsr_attention S={s}", f"BSR {s}x{s} 64x64 d=128", module, inputs)


def _strided(name: str, columns: int, step: int, text: str) -> Kernel:
    """bench_optimizations' kernels on a view of x (4096x1024 f16)."""
    view = f"[0, 0][4096, {columns}][1, {step}]"
    return replace(_view(name, (4096, columns), view), shape=f"{text}, x 4096x1024")


def _random_f16(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[Any]]:
    return lambda rng: [rng.standard_normal(s).astype(np.float16) for s in shapes]


def cases() -> list[Case]:
    """The demo kernels (spmm at M=128: the tuner simulates its candidates on
    random CSR inputs at 30 % density, `pypto-run --random`'s), then the
    kernels of the other benchmarks at sizes that simulate in seconds."""
    from bench_attention import Shape, attention_kernel
    from bench_fusion import kernels as fusion_kernels
    from bench_fusion import matmul_softmax, relu_matmul
    from bench_sim_scale import gemm

    found = [Case("demo", _demo(d)) for d in KERNELS if d.kernel != "spmm"]
    found.append(Case("demo spmm", _csr_spmm(128)))
    found += [
        Case("bench_fusion", k)
        for k in fusion_kernels()
        if k.name in ("max_min", "column_sum", "full_sum")
    ]
    found += [
        Case("bench_fusion", matmul_softmax(128, 64, 512)),
        Case("bench_fusion", relu_matmul(512, 512, 512)),
        Case("bench_optimizations", _strided("rows_view", 512, 1, "x[:, :512] * 2")),
        Case("bench_optimizations", _strided("column_view", 64, 1, "x[:, :64] * 2")),
        Case("bench_coalesce", _strided("every2_view", 512, 2, "x[:, ::2] * 2")),
        Case(
            "bench_gemm",
            Kernel(
                "gemm N=512",
                "512x512x512 f16",
                lambda: gemm.module(M=512, K=512, N=512),
                _random_f16((512, 512), (512, 512)),
            ),
        ),
    ]
    for shape in (Shape(0, 128, 64, 0.3), Shape(2, 256, 64, 0.6)):
        dims = (shape.heads, shape.seq, shape.dim)[0 if shape.heads else 1 :]
        kernel = Kernel(
            "attention"
            + (f" h={shape.heads}" if shape.heads else "")
            + f" S={shape.seq} d={shape.dim}",
            f"{shape.name} f16",
            attention_kernel(shape).module,
            _random_f16(dims, dims, dims),
        )
        found.append(Case("bench_attention", kernel))
    found.append(Case("bench_sparse", _bsr_attention(256)))
    found += [Case("bench_tune", _demo(d)) for d in OTHER_SIZES]
    return found


def _tune(
    kernel: Kernel, target: str, budget: int, executor: Executor, cache: TuneCache
) -> TuneResult:
    module = kernel.module()
    entry = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return tune(
        module,
        entry.sym_name.data,
        target,
        budget=budget,
        executor=executor,
        cache=cache,
        inputs=kernel.inputs(np.random.default_rng(0)),
    )


def _share(result: TuneResult, cycles: int | None) -> str:
    if not result.roofline_cycles or not cycles:
        return "-"
    return f"{100 * result.roofline_cycles / cycles:.1f}%"


def tuned_vs_default(
    chosen: Sequence[Case], target: str, budget: int, jobs: int, cache: TuneCache
) -> None:
    print(f"tuned vs default on {target}: budget {budget} candidates, {jobs} workers")
    header = (
        f"{'from':<19} {'kernel':<24} {'shape':<24} {'default':>9} {'tuned':>9} "
        f"{'speed-up':>8} {'roofline':>13} {'s':>4}  best options [check]"
    )
    print(header)
    print("-" * len(header))
    speedups: list[float] = []
    for case in chosen:
        kernel = case.kernel
        executor = LocalExecutor(jobs, CANDIDATE_SECONDS)
        try:
            result = _tune(kernel, target, budget, executor, cache)
        except Exception as error:  # a kernel the tuner refuses is a line too
            first = str(error).strip().split("\n")[0]
            print(
                f"{case.source:<19} {kernel.name:<24} {kernel.shape:<24} not tuned: {first}"
            )
            continue
        finally:
            executor.close()
        speedups.append(result.speedup)
        roofline = (
            f"{_share(result, result.default.cycles)}->"
            f"{_share(result, result.best.cycles)}"
        )
        check = "ok" if result.check.startswith("ok") else result.check
        failed = sum(c.cycles is None for c in result.candidates)
        note = f", {failed} failed" if failed else ""
        print(
            f"{case.source:<19} {kernel.name:<24} {kernel.shape:<24} "
            f"{result.default.cycles:>9} {result.best.cycles:>9} "
            f"{result.speedup:>7.2f}x {roofline:>13} {result.seconds:>4.0f}  "
            f"{options_text(result.best.options)} [{check}{note}]",
            flush=True,
        )
    if speedups:
        at_least = sum(s >= 1.2 for s in speedups)
        print(
            f"{len(speedups)} kernels: geometric mean speed-up "
            f"{float(np.exp(np.mean(np.log(speedups)))):.2f}x, {at_least} at >= 1.2x, "
            f"{sum(s > 1.005 for s in speedups)} faster than the default, worst "
            f"{min(speedups):.2f}x (never below 1: the default is a candidate)"
        )


def throughput(kernel: Kernel, target: str, budget: int, cache: TuneCache) -> None:
    print(
        f"\nsearch throughput: {kernel.name} {kernel.shape} on {target}, "
        f"{budget} candidates"
    )
    print(
        f"{'executor':<22} {'candidates/s':>12} {'measuring s':>11} {'total s':>8} "
        f"{'re-run':>6}"
    )
    executors: list[tuple[str, Callable[[], Executor]]] = [
        ("local, 1 worker", lambda: LocalExecutor(1, CANDIDATE_SECONDS)),
        ("local, 2 workers", lambda: LocalExecutor(2, CANDIDATE_SECONDS)),
    ]
    try:
        import ray

        def ray_executor() -> Executor:
            from pypto_mlir.tune.executors import RayExecutor

            ray.init(
                address="local",
                num_cpus=2,
                include_dashboard=False,
                log_to_driver=False,
            )
            return RayExecutor()

        executors.append(("ray, 2 CPUs", ray_executor))
    except ImportError:
        print(
            "(ray, 2 CPUs: skipped, Ray is not installed: "
            "pip install 'pypto-mlir[distributed]')"
        )
    for name, make in executors:
        executor = make()
        start = time.perf_counter()
        try:
            result = _tune(kernel, target, budget, executor, cache)
        finally:
            executor.close()
        seconds = time.perf_counter() - start
        print(
            f"{name:<22} {result.throughput:>12.2f} {result.search_seconds:>11.1f} "
            f"{seconds:>8.1f} {result.rerun:>6}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="ascend910b")
    parser.add_argument("--budget", type=int, default=6)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--only", help="comma-separated kernel names (their first word)"
    )
    parser.add_argument(
        "--no-throughput", action="store_true", help="skip part 2 (the executors)"
    )
    args = parser.parse_args()
    chosen = cases()
    if args.only:
        wanted = set(args.only.split(","))
        chosen = [c for c in chosen if c.kernel.name.split()[0] in wanted]
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as folder:
        cache = TuneCache(Path(folder) / "tune.sqlite")
        tuned_vs_default(chosen, args.target, args.budget, args.jobs, cache)
        if not args.no_throughput:
            layernorm = next(k for k in KERNELS if k.kernel == "layernorm")
            throughput(_demo(layernorm), args.target, max(args.budget, 12), cache)


if __name__ == "__main__":
    main()
