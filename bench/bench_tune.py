"""The auto-tuner: tuned vs default cycles per kernel, and search throughput
(prints, no asserts).

Part 1: each demo kernel (pypto_mlir/demo.py) at its demo size, and the same
examples at other sizes, tuned with pypto-tune's search (`--budget`
candidates, `--jobs` local workers) on the simulated target: default cycles,
tuned cycles, speed-up, % of roofline before and after, the winning options,
the numerical check of the winner. Tuned is never worse than the default: the
default is a candidate and a winner must pass the check.

Part 2: search throughput (candidates measured per second) for one kernel and
the same budget with 1 and 2 local workers and with Ray on 2 CPUs (skipped
with a message when Ray is not installed).

Results go to a temporary tuning cache (the user's is left alone).

    .venv/bin/python bench/bench_tune.py                 # --quick: a few minutes on 2 cores
    .venv/bin/python bench/bench_tune.py --full --budget 24 --target tiny
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pypto_mlir.demo import KERNELS, DemoKernel, load_example
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

QUICK = ("swish", "gemm", "layernorm", "sum_diff")
"""The demo kernels --quick tunes (besides OTHER_SIZES)."""


def _tune(
    demo: DemoKernel, target: str, budget: int, executor: Executor, cache: TuneCache
) -> TuneResult:
    example = load_example(demo.example)
    kernel = getattr(example, demo.kernel)
    inputs = example.make_inputs(np.random.default_rng(0), *demo.sizes.values())
    module = kernel.module(**demo.sizes)
    return tune(
        module,
        demo.kernel,
        target,
        budget=budget,
        executor=executor,
        cache=cache,
        inputs=list(inputs),
    )


def _share(result: TuneResult, cycles: int | None) -> str:
    if not result.roofline_cycles or not cycles:
        return "-"
    return f"{100 * result.roofline_cycles / cycles:.1f}%"


def tuned_vs_default(
    kernels: Sequence[DemoKernel], target: str, budget: int, jobs: int, cache: TuneCache
) -> None:
    print(f"tuned vs default on {target}: budget {budget} candidates, {jobs} workers")
    header = (
        f"{'kernel':<24} {'shape':<20} {'default':>9} {'tuned':>9} {'speed-up':>8} "
        f"{'roofline':>15} {'s':>5}  best options / check"
    )
    print(header)
    print("-" * len(header))
    speedups: list[float] = []
    for demo in kernels:
        executor = LocalExecutor(jobs, CANDIDATE_SECONDS)
        try:
            result = _tune(demo, target, budget, executor, cache)
        except Exception as error:  # a kernel the tuner refuses is a line too
            print(f"{demo.kernel:<24} {demo.shape:<20} not tuned: {error}")
            continue
        finally:
            executor.close()
        speedups.append(result.speedup)
        label = demo.kernel + "".join(f" {k}={v}" for k, v in demo.sizes.items())
        roofline = (
            f"{_share(result, result.default.cycles)}->"
            f"{_share(result, result.best.cycles)}"
        )
        check = "ok" if result.check.startswith("ok") else result.check
        print(
            f"{label:<24} {demo.shape:<20} {result.default.cycles:>9} "
            f"{result.best.cycles:>9} {result.speedup:>7.2f}x {roofline:>15} "
            f"{result.seconds:>5.0f}  {options_text(result.best.options)} [{check}]",
            flush=True,
        )
    if speedups:
        at_least = sum(s >= 1.2 for s in speedups)
        print(
            f"{len(speedups)} kernels: geometric mean speed-up "
            f"{float(np.exp(np.mean(np.log(speedups)))):.2f}x, {at_least} at >= 1.2x, "
            f"worst {min(speedups):.2f}x (never below 1: the default is a candidate)"
        )


def throughput(demo: DemoKernel, target: str, budget: int, cache: TuneCache) -> None:
    print(
        f"\nsearch throughput: {demo.kernel} {demo.shape} on {target}, "
        f"{budget} candidates"
    )
    print(
        f"{'executor':<22} {'candidates/s':>12} {'measuring s':>11} {'total s':>8} "
        f"{'re-run':>6}"
    )
    executors: list[tuple[str, object]] = [
        ("local, 1 worker", lambda: LocalExecutor(1, CANDIDATE_SECONDS)),
        ("local, 2 workers", lambda: LocalExecutor(2, CANDIDATE_SECONDS)),
    ]
    try:
        import ray

        def ray_executor() -> Executor:
            from pypto_mlir.tune.executors import RayExecutor

            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            return RayExecutor()

        executors.append(("ray, 2 CPUs", ray_executor))
    except ImportError:
        print(
            "(ray, 2 CPUs: skipped, Ray is not installed: pip install 'pypto-mlir[distributed]')"
        )
    for name, make in executors:
        executor = make()  # type: ignore[operator]
        start = time.perf_counter()
        try:
            result = _tune(demo, target, budget, executor, cache)
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
    parser.add_argument("--budget", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="comma-separated kernel names")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the default: a subset")
    mode.add_argument("--full", action="store_true", help="every demo kernel")
    args = parser.parse_args()
    kernels = list(KERNELS) + list(OTHER_SIZES)
    if args.only:
        wanted = set(args.only.split(","))
        kernels = [k for k in kernels if k.kernel in wanted]
    elif not args.full:
        kernels = [k for k in KERNELS if k.kernel in QUICK] + list(OTHER_SIZES)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as folder:
        cache = TuneCache(Path(folder) / "tune.sqlite")
        tuned_vs_default(kernels, args.target, args.budget, args.jobs, cache)
        layernorm = next(k for k in KERNELS if k.kernel == "layernorm")
        throughput(layernorm, args.target, max(args.budget, 12), cache)


if __name__ == "__main__":
    main()
