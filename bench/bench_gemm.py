"""GEMM to peak (issue 13): the matmul schedule's decisions off vs on (prints, no asserts).

For N x N x N f16 GEMMs and the FFN example (128x768x3072: x @ W1 -> swish ->
@ W2) on the simulated ascend910b, side by side: cycles with all the matmul
decisions off (`matmul-panels=false matmul-split-k=false matmul-l2-order=false
matmul-unroll-k=false matmul-grid=false`: A loaded per L1 block, K never split,
every block's K chunks in order and in a loop, block rows split over the cores
by rows alone), with
each one alone switched off, and with all on (the tiling model may keep A
panels in L1 across a core's blocks of a row, split K over the cores with a
combine phase, stagger the blocks' K chunks so that cores sharing an A row
or a B column hit the L2, also with a panel, and unroll the K chunks so that
no loop boundary stalls the loads); the ratio, the fraction of `pypto_mlir.roofline`
reached, the busiest pipe, the L2 hit rate and the cores used; then issue 13's
targets, and where one is missed what bounds it, computed from the run: the
busiest core's MTE2 time split into transfer at the GM -> L1 path's rate, the
DMAs' start-up (at the L2 hit or the miss latency, counted from the run's L2
transfers) and the per-burst overhead, against its cube time; and the ceiling
of any schedule whose accumulators fit L0C and which reloads A and B per
accumulator block.

    .venv/bin/python bench/bench_gemm.py            # 1024^3, 2048^3, ffn (~1 min)
    .venv/bin/python bench/bench_gemm.py --large    # also 4096^3 and 6144^3 (long)
    .venv/bin/python bench/bench_gemm.py --sizes 6144 --quick   # all off, all on
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from bench_sim_scale import gemm  # the N^3 GEMM kernel, M, K, N symbolic
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import lower, result_buffers
from pypto_mlir.demo import load_example
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.roofline import roofline
from pypto_mlir.targets import load_target
from pypto_mlir.targets.cost import mmad_cycles

TARGET = "ascend910b"
CHIP = load_target(TARGET)
SIZES = (1024, 2048)
LARGE = (4096, 6144)
TARGETS = {1024: 0.80, 2048: 0.88, 4096: 0.88, 6144: 0.88}
"""Issue 13's fractions of the roofline."""


@dataclass
class Run:
    cycles: int
    roofline: float
    report: Any
    remarks: str = ""
    """The matmul remarks of tv-to-tile, joined."""


DECISIONS = {
    "matmul_panels": "A panel",
    "matmul_split_k": "K split in",
    "matmul_l2_order": "K chunks staggered",
    "matmul_unroll_k": "K loop unrolled",
    "matmul_grid": "grid of cores",
}
"""The LowerPipeline options of the matmul schedule, each shown off alone, and
what the remark says when the model took it (a decision not taken in the all-on
run is not simulated again: switching it off changes nothing)."""


def _run(
    module: ModuleOp, inputs: list[np.ndarray], on: bool, without: str = ""
) -> Run:
    """`on`: every decision on except `without`; else all off."""
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    name = function.sym_name.data
    bound = roofline(module, name, CHIP)
    options = {d: on and d != without for d in DECISIONS}
    pipeline = LowerPipeline(target=TARGET, **options)
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        lowered = lower(module, "ascend_hw", pipeline)
    arguments = [*inputs, *result_buffers(function)]
    report = run_hw_function(lowered, name, arguments, CHIP).report
    text = "\n".join(r for r in remarks if "matmul" in r)
    return Run(report.cycles, bound.cycles, report, text)


def simulate(n: int, on: bool, without: str = "") -> Run:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32).astype(np.float16)
    b = (rng.standard_normal((n, n), dtype=np.float32) / np.sqrt(n)).astype(np.float16)
    return _run(gemm.module(M=n, K=n, N=n), [a, b], on, without)


def simulate_ffn(on: bool, without: str = "") -> Run:
    example = load_example("ffn")
    inputs = list(example.make_inputs(np.random.default_rng(0)))
    return _run(example.ffn.module(), inputs, on, without)


def _busiest(report: Any) -> str:
    pipe, stats = max(report.pipes.items(), key=lambda p: p[1].utilization)
    return f"{pipe} {stats.utilization:.0%}"


def _l2(report: Any) -> str:
    return "-" if report.l2 is None else f"{report.l2.hit_rate:.0%}"


def _why(n: int, run: Run) -> str:
    """What bounds the run: its slowest core's MTE2 and cube time, from the
    report (MTE2's transfer at the path's rate, the rest start-up and bursts)."""
    core = max(run.report.cores, key=lambda c: c.cycles)
    mte2 = core.pipes["MTE2"].busy_cycles
    cube = core.pipes["M"].busy_cycles
    loaded = core.bytes_per_path.get("gm->l1", 0)
    path = CHIP.dma_path("gm", "l1")
    rate = path.bytes_per_cycle
    transfer = loaded / rate
    bound = "MTE2" if mte2 > cube else "the cube"
    start_up = ""
    transfers = run.report.l2_transfers
    if transfers is not None and CHIP.l2 is not None:
        mine = transfers.core == core.index
        hits = int(np.count_nonzero(mine & (transfers.miss_bytes == 0)))
        misses = int(np.count_nonzero(mine)) - hits
        start_up = (
            f" ({hits} DMAs hit the L2 in every line, at {CHIP.l2.hit_latency} "
            f"cycles of start-up unless a line was still being filled, {misses} "
            f"missed, at {path.latency})"
        )
    return (
        f"{bound} bounds it: core {core.index} ({core.cycles} cycles) has MTE2 busy "
        f"{mte2} cycles, {transfer:.0f} of them moving {loaded / 2**20:.2f} MiB at "
        f"the GM -> L1 path's {rate:.1f} B/cycle and {mte2 - transfer:.0f} of DMA "
        f"start-up{start_up} and per-burst overhead; its cube is busy {cube} cycles "
        f"(the roofline's is {run.roofline:.0f}); {_ceiling(n)}"
    )


def _ceiling(n: int) -> str:
    """The best fraction of the cube any schedule reaches that reloads A and B
    for each accumulator block: the block m x n whose f32 accumulators fit L0C
    with the least GM -> L1 time per MAC, counting the transfer at the path's
    rate in whole GM granules and its per-burst overhead (one burst per row of
    an A chunk k1 deep, the deepest power of two of which two chunks of A and
    B fit L1, and one per K row of B); DMA start-ups ignored."""
    l0c, l1 = CHIP.memories["l0c"].size, CHIP.memories["l1"].size
    assert l0c is not None and l1 is not None
    edge = CHIP.cube.fractal_m
    path = CHIP.dma_path("gm", "l1")
    best = (0.0, 0, 0, 0)
    for rows in range(edge, n + 1, edge):
        columns = min(n, l0c // (4 * rows) // edge * edge)
        if columns < edge:
            break
        depth = edge
        while 2 * 2 * (rows + columns) * 2 * depth <= l1 and 2 * depth <= n:
            depth *= 2
        # per K element: A's bytes and B's row in whole granules at the path's
        # rate, A's bursts (a row per chunk) and B's (a burst per K row)
        b_row = -(-columns * 2 // path.granule) * path.granule
        load = (rows * 2 + b_row) / path.bytes_per_cycle + path.burst_overhead * (
            rows / depth + 1
        )
        cube = mmad_cycles(CHIP, rows, columns, 16, "f16") / 16
        best = max(best, (min(1.0, cube / load), rows, columns, depth))
    fraction, rows, columns, depth = best
    return (
        f"an accumulator block that fits L0C loads at best {rows}x{columns} "
        f"operands per K step ({depth}-deep A chunks, {path.burst_overhead} "
        f"cycles a burst), so a schedule reloading A and B per block reaches at "
        f"most {fraction:.0%} of the cube"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--large", action="store_true", help="also 4096^3 and 6144^3 (minutes)"
    )
    parser.add_argument(
        "--sizes",
        help="comma-separated N to run instead (no ffn), e.g. 6144",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="all off and all on only (no decision alone off)",
    )
    args = parser.parse_args(argv)
    sizes = SIZES + (LARGE if args.large else ())
    if args.sizes:
        sizes = tuple(int(size) for size in args.sizes.split(","))
    print(
        f"GEMM N^3 f16 on {TARGET}: matmul decisions all off (matmul-panels=false "
        "matmul-split-k=false matmul-l2-order=false matmul-unroll-k=false "
        "matmul-grid=false), each alone off, all on"
    )
    names = [d.removeprefix("matmul_").replace("_", "-") for d in DECISIONS]
    header = (
        f"{'N':>6} {'all off':>9} "
        + " ".join(f"{'no ' + name:>11}" for name in names)
        + f" {'all on':>9} {'ratio':>6} {'roofline off/on':>16} "
        f"{'busiest pipe off/on':>20} {'L2 hit off/on':>14} {'cores':>6}"
    )
    print(header)
    print("-" * len(header))
    results: dict[int, Run] = {}
    cases: list[tuple[str, Callable[..., Run]]] = [
        (str(n), partial(simulate, n)) for n in sizes
    ]
    if not args.sizes:
        cases.append(("ffn", simulate_ffn))
    for label, run in cases:
        off, on = run(False), run(True)
        alone = [
            run(True, decision) if taken in on.remarks and not args.quick else on
            for decision, taken in DECISIONS.items()
        ]
        if label != "ffn":
            results[int(label)] = on
        print(
            f"{label:>6} {off.cycles:>9} "
            + " ".join(f"{r.cycles:>11}" for r in alone)
            + f" {on.cycles:>9} {off.cycles / on.cycles:>5.2f}x "
            f"{off.roofline / off.cycles:>7.0%} / {on.roofline / on.cycles:<6.0%} "
            f"{_busiest(off.report):>9} / {_busiest(on.report):<8} "
            f"{_l2(off.report):>6} / {_l2(on.report):<5} {on.report.block_dim:>6}",
            flush=True,
        )
    print("\nissue 13 targets:")
    for n, run in results.items():
        fraction = run.roofline / run.cycles
        goal = TARGETS[n]
        met = fraction >= goal
        text = f"GEMM {n}^3 >= {goal:.0%} of roofline (got {fraction:.0%})"
        print(
            f"  [{'met' if met else 'missed'}] {text}"
            + ("" if met else f": {_why(n, run)}")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
