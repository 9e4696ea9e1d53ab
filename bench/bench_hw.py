"""Simulated ascend_hw instructions per second: the interpreter on the AI Core simulator.

Runs the kernels of examples/hw and a generated double-buffered vector add of at
least 100k instructions (by default), each through `run_hw_function` (the xDSL
interpreter executing every op on numpy views of the simulated memories and issuing
one simulator record per instruction, then `Machine.finish()`). "Instructions" are
the records: every ascend_hw op the core executes, set_flag/wait_flag included.

Prints wall and CPU time (the machine may be shared: CPU time is the figure to
compare), records per CPU second, the CPU split between interpreting (execution
and record issue) and `Machine.finish()` by phase (timing replay, race pass,
report; the reference replay when the fast one saw a problem), and (unless
--no-profile) where the time goes under cProfile: the xDSL interpreter's dispatch,
numpy, the simulator's record keeping and finish, the ascend_hw interpreter
functions. Asserts nothing.
Run it with OPENBLAS_NUM_THREADS=1 (bench/run.py does): on a shared machine BLAS
threads can turn the matmul example's small mmads from microseconds into
milliseconds.

    .venv/bin/python bench/bench_hw.py [--records N] [--no-profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.cli.source import SourceChunk, default_context, load_module, parse_chunk
from pypto_mlir.diagnostics import verify
from pypto_mlir.interp.ascend_hw import HwRunResult, run_hw_function
from pypto_mlir.sim import timing
from pypto_mlir.targets import load_target

EXAMPLES = Path(__file__).parent.parent / "examples" / "hw"
TARGET = load_target("ascend910b")
RECORDS_PER_TILE = 10  # wait, 2 loads, set, wait, vadd, set, wait, store, set


def double_buffered_add(rows: int, tile_rows: int, cols: int = 128) -> str:
    """z = x + y on rows x cols f16, tile_rows rows per tile, ping-pong buffers."""
    tile_bytes = tile_rows * cols * 2
    buf = f"!ascend_hw.buf<{tile_rows}x{cols}xf16, ub>"
    mem = f"memref<{rows}x{cols}xf16>"

    def load(tensor: str, row: str, tile: str) -> str:
        return (
            f"ascend_hw.dma_load %{tensor}[%{row}, %c0] -> %{tile} {{bursts = 1, "
            f"burst_bytes = {tile_bytes}}} : {mem} -> {buf}"
        )

    def stage(event: int, row: str, xb: str, yb: str) -> list[str]:
        return [
            f"ascend_hw.wait_flag mte3 -> mte2, {event}",
            load("x", row, xb),
            load("y", row, yb),
            f"ascend_hw.set_flag mte2 -> v, {event}",
            f"ascend_hw.wait_flag mte2 -> v, {event}",
            f"ascend_hw.vadd %{xb}, %{yb} -> %{xb} {{repeat = {tile_rows * cols // 128}}}"
            f" : {buf}, {buf} -> {buf}",
            f"ascend_hw.set_flag v -> mte3, {event}",
            f"ascend_hw.wait_flag v -> mte3, {event}",
            f"ascend_hw.dma_store %{xb} -> %z[%{row}, %c0] {{bursts = 1, burst_bytes = "
            f"{tile_bytes}}} : {buf} -> {mem}",
            f"ascend_hw.set_flag mte3 -> mte2, {event}",
        ]

    body = [
        *stage(0, "row", "xa", "ya"),
        "%next = arith.addi %row, %ctile : index",
        *stage(1, "next", "xb", "yb"),
    ]
    allocs = [
        f"%{name} = ascend_hw.alloc [{k * tile_bytes}, {(k + 1) * tile_bytes}) : {buf}"
        for k, name in enumerate(("xa", "ya", "xb", "yb"))
    ]
    lines = [
        "%c0 = arith.constant 0 : index",
        f"%ctile = arith.constant {tile_rows} : index",
        f"%cstep = arith.constant {2 * tile_rows} : index",
        f"%crows = arith.constant {rows} : index",
        *allocs,
        "ascend_hw.set_flag mte3 -> mte2, 0",
        "ascend_hw.set_flag mte3 -> mte2, 1",
        "scf.for %row = %c0 to %crows step %cstep {",
        *("  " + line for line in body),
        "}",
        "ascend_hw.wait_flag mte3 -> mte2, 0",
        "ascend_hw.wait_flag mte3 -> mte2, 1",
        "func.return",
    ]
    return (
        'builtin.module attributes {pypto.target = "ascend910b"} {\n'
        f"func.func @vadd(%x: {mem}, %y: {mem}, %z: {mem}) {{\n"
        + "\n".join("  " + line for line in lines)
        + "\n}\n}\n"
    )


def generated(records: int, tile_rows: int) -> tuple[ModuleOp, str, list[np.ndarray]]:
    tiles = max(2, -(-records // RECORDS_PER_TILE))
    tiles += tiles % 2
    rows = tiles * tile_rows
    module = parse_chunk(
        default_context(),
        SourceChunk(double_buffered_add(rows, tile_rows), 1),
        "generated.mlir",
    )
    verify(module)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, 128)).astype(np.float16)
    y = rng.standard_normal((rows, 128)).astype(np.float16)
    return module, "vadd", [x, y, np.zeros_like(x)]


def example(file: str) -> tuple[ModuleOp, str, list[np.ndarray]]:
    rng = np.random.default_rng(0)
    module = load_module(str(EXAMPLES / file))
    if file == "matmul.mlir":
        a = rng.standard_normal((128, 128)).astype(np.float16)
        b = rng.standard_normal((128, 128)).astype(np.float16)
        return module, "matmul", [a, b, np.zeros((128, 128), np.float32)]
    x = rng.standard_normal((256, 1024)).astype(np.float16)
    y = rng.standard_normal((256, 1024)).astype(np.float16)
    return module, "vadd", [x, y, np.zeros_like(x)]


@dataclass
class Run:
    """One timed run: CPU and wall seconds, and the CPU seconds of the phases of
    `Machine.finish()` (sim.timing.last_phases) and which replay ran."""

    result: HwRunResult
    cpu: float
    wall: float
    phases: dict[str, float]
    replay: str

    @property
    def finish_cpu(self) -> float:
        return sum(self.phases.values())


def timed(
    module: ModuleOp, name: str, args: list[np.ndarray], block_dim: int | None
) -> Run:
    cpu, wall = time.process_time(), time.perf_counter()
    result = run_hw_function(module, name, args, TARGET, block_dim)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return Run(result, cpu, wall, dict(timing.last_phases), timing.last_replay)


def measure(
    label: str,
    case: tuple[ModuleOp, str, list[np.ndarray]],
    block_dim: int | None,
    repeats: int = 1,
) -> None:
    """Run `repeats` times (on fresh copies of the inputs); print the median run:
    records per CPU second, then where its CPU time went: interpreting (executing
    the ops and issuing their records) and `Machine.finish()` by phase."""
    module, name, args = case
    runs = sorted(
        (
            timed(module, name, [a.copy() for a in args], block_dim)
            for _ in range(repeats)
        ),
        key=lambda run: run.cpu,
    )
    run = runs[len(runs) // 2]
    n = run.result.records
    interpret = run.cpu - run.finish_cpu
    phases = ", ".join(f"{k} {v:.3f}" for k, v in run.phases.items())
    print(
        f"{label:<36} {n:>7} records  CPU {run.cpu:6.3f} s  wall {run.wall:6.3f} s  "
        f"{n / run.cpu / 1e3:5.1f}k records/CPU-s  ({run.result.report.cycles} cycles "
        f"on {run.result.report.block_dim} core(s))\n"
        f"{'':<38}CPU s: interpret {interpret:.3f}, finish {run.finish_cpu:.3f} "
        f"({run.replay} replay: {phases})"
    )


CATEGORIES: list[tuple[str, Callable[[str, str], bool]]] = [
    (
        "sim.finish (replay, races, report)",
        lambda f, n: (
            "/pypto_mlir/sim/" in f
            and any(m in f for m in ("timing.py", "race.py", "report.py"))
        ),
    ),
    ("sim records (issue, checks)", lambda f, n: "/pypto_mlir/sim/" in f),
    ("ascend_hw interpreter functions", lambda f, n: "/pypto_mlir/interp/" in f),
    ("xDSL interpreter dispatch + attrs", lambda f, n: "/xdsl/" in f),
    ("numpy", lambda f, n: "/numpy/" in f or "numpy" in n),
]


def breakdown(case: tuple[ModuleOp, str, list[np.ndarray]]) -> None:
    """Self time by category under cProfile (which inflates Python-heavy parts)."""
    module, name, args = case
    profile = cProfile.Profile()
    profile.enable()
    run_hw_function(module, name, args, TARGET, 1)
    profile.disable()
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for (file, _, func), (_, _, tottime, _, _) in stats.items():
        category = next(
            (c for c, match in CATEGORIES if match(file, func)),
            "Python builtins and other",
        )
        totals[category] = totals.get(category, 0.0) + tottime
    total = sum(totals.values())
    print(f"where the time goes (cProfile self time, {total:.2f} s profiled):")
    for category, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {category:<36} {seconds / total:5.1%}")
    top = pstats.Stats(profile)
    top.sort_stats("tottime").print_stats(8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records", type=int, default=100_000, help="records of the generated kernel"
    )
    parser.add_argument(
        "--no-profile",
        action="store_true",
        help="skip the profile of where the time goes",
    )
    args = parser.parse_args()
    examples, generated_runs = 5, 3
    print(f"examples/hw (declared block_dim; median of {examples} runs):")
    for file in ("vadd_single.mlir", "vadd_double.mlir", "matmul.mlir"):
        measure(f"  {file}", example(file), None, examples)
    print(
        f"generated double-buffered vector add, 1 core (median of {generated_runs} runs):"
    )
    measure(
        "  256 B tiles (1 repeat per vadd)",
        generated(args.records, 1),
        1,
        generated_runs,
    )
    measure(
        "  16 KiB tiles (64 repeats per vadd)",
        generated(max(2_000, args.records // 10), 64),
        1,
        generated_runs,
    )
    if not args.no_profile:
        breakdown(generated(max(2_000, args.records // 5), 1))


if __name__ == "__main__":
    main()
