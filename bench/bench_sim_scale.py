"""How the simulator scales: an N x N x N f16 GEMM, lowered by pypto-lower and
simulated on ascend910b, for a few N.

Prints, per N side by side: records issued (instructions, flags, barriers) and
instructions, simulated cycles, wall and CPU seconds of compiling (trace and
pypto-lower), of recording (interpreting the ascend_hw IR, which issues the
records) and of each phase of `Machine.finish()` (`sim.timing.last_phases`:
the replay, the race pass, the report), and the peak RSS of the run
(`resource.getrusage(RUSAGE_SELF).ru_maxrss`) next to the RSS of its three
arrays alone. Each N runs in its own Python process, so each peak is its own.
Then the peak memory per record of bench_sparse's fused top-k attention
(S=512 k=64, 872248 records) with the cores' records kept as tuples and
packed (`RecordStore`), each in its own process: 811 and 648 bytes a record
when measured (docs/simulator.md, "Performance"). Prints figures; asserts
nothing.

    .venv/bin/python bench/bench_sim_scale.py                # N = 1024, 2048
    .venv/bin/python bench/bench_sim_scale.py --sizes 6144   # the issue's GEMM

`make bench` runs the default sizes (about 20 s); 6144^3 (4.56 M records, 2.12 M
instructions, three 75 MB arrays) is on demand: it takes minutes on a 2-core
machine. Measured there (compare CPU seconds: the machine was shared): before
the bounded race pass, interned accesses and int columns, 318 CPU s and 9.37
GiB peak RSS; after, 227 CPU s (recording 179, replay 22, race pass 18, report
2; 387 s wall) and 3.35 GiB; docs/simulator.md ("Performance") says where the
memory goes.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import pypto_mlir as pto
from pypto_mlir.check import lower, result_buffers
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sim import records, timing
from pypto_mlir.targets import load_target

M, K, N = pto.sym("M"), pto.sym("K"), pto.sym("N")


@pto.kernel
def gemm(
    a: pto.Tensor[(M, K), pto.f16], b: pto.Tensor[(K, N), pto.f16]
) -> pto.Tensor[(M, N), pto.f16]:
    return a @ b


DEFAULT_SIZES = (1024, 2048)


def _rss_mib() -> float:
    """Resident set size now, MiB (Linux /proc; ru_maxrss is the peak)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(n: int, unpacked: bool = False) -> dict[str, Any]:
    """Compile and simulate the n^3 GEMM in this process; its figures.
    `unpacked`: the cores' records stay tuples (`RecordStore` never packs a
    chunk), as every record was before the stores packed them."""
    if unpacked:
        records._CHUNK_BITS = 62
        records._CHUNK = 1 << 62
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32).astype(np.float16)
    b = (rng.standard_normal((n, n), dtype=np.float32) / np.sqrt(n)).astype(np.float16)
    target = load_target("ascend910b")
    c0, t0 = time.process_time(), time.perf_counter()
    module = gemm.module(M=n, K=n, N=n)
    lowered = lower(module, "ascend_hw", LowerPipeline(target=target.name))
    source = next(op for op in module.ops if op.sym_name.data == "gemm")
    outputs = result_buffers(source)
    data_rss = _rss_mib()
    c1, t1 = time.process_time(), time.perf_counter()
    result = run_hw_function(lowered, "gemm", [a, b, *outputs], target)
    c2, t2 = time.process_time(), time.perf_counter()
    phases = dict(timing.last_phases)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "n": n,
        "records": result.records,
        "instructions": result.report.instructions,
        "cycles": result.report.cycles,
        "replay": timing.last_replay,
        "compile wall": t1 - t0,
        "compile CPU": c1 - c0,
        "record wall": result.interpret_seconds,
        "record CPU": c2 - c1 - sum(phases.values()),
        "finish wall": result.finish_seconds,
        **{f"finish CPU: {name}": seconds for name, seconds in phases.items()},
        "run wall": t2 - t1,
        "data RSS MiB": data_rss,
        "peak RSS MiB": peak,
        "peak B per record": (peak - data_rss) * 2**20 / result.records,
    }


TOPK = (512, 64)
"""The top-k attention shape of the memory-per-record figure (S, k)."""


def topk_memory(s: int, unpacked: bool = False) -> dict[str, Any]:
    """Peak RSS per record of bench_sparse's fused top-k attention at S=s,
    k=TOPK[1], in this process (`unpacked` as in `measure`)."""
    import bench_sparse

    if unpacked:
        records._CHUNK_BITS = 62
        records._CHUNK = 1 << 62
    before = _rss_mib()
    with contextlib.redirect_stdout(io.StringIO()):
        run = bench_sparse.topk_attention(
            s, TOPK[1], np.random.default_rng(2), unfused=False
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = len(run.report.columns)
    return {
        "records": n,
        "cycles": run.cycles,
        "peak RSS MiB": peak,
        "peak B per record": (peak - before) * 2**20 / n,
    }


def _formatted(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.0f}" if value >= 100 else f"{value:.2f}"
    return str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--unpacked", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--topk", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        figures = topk_memory if args.topk else measure
        print(json.dumps(figures(args.one, args.unpacked)))
        return
    env = {"OPENBLAS_NUM_THREADS": "1", **os.environ}

    def child(n: int, *flags: str) -> dict[str, Any]:
        run = subprocess.run(
            [sys.executable, str(Path(__file__)), "--one", str(n), *flags],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(run.stdout.splitlines()[-1])

    rows = [child(n) for n in args.sizes]
    # Memory per record before/after the packed stores: on a GEMM the fixed
    # memory hides it, so on bench_sparse's fused top-k attention (a record
    # per gathered row and its flags).
    tuples = child(TOPK[0], "--unpacked", "--topk")
    packed = child(TOPK[0], "--topk")
    keys = list(dict.fromkeys(key for row in rows for key in row))
    width = max(map(len, keys))
    print("GEMM N^3 f16 on ascend910b (seconds; MiB of RSS):")
    for key in keys:
        cells = "".join(f"{_formatted(row.get(key, '-')):>12}" for row in rows)
        print(f"  {key:<{width}}{cells}")
    before, after = tuples["peak B per record"], packed["peak B per record"]
    print(
        f"peak memory per record, fused top-k attention S={TOPK[0]} k={TOPK[1]} "
        f"({packed['records']} records; peak RSS less the RSS before "
        f"simulating): records as tuples {before:.0f} B "
        f"({tuples['peak RSS MiB']:.0f} MiB peak), packed RecordStore "
        f"{after:.0f} B ({packed['peak RSS MiB']:.0f} MiB peak), "
        f"{before / after:.2f}x less; cycles {tuples['cycles']} and "
        f"{packed['cycles']} (must be equal)"
    )


if __name__ == "__main__":
    main()
