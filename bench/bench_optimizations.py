"""The performance passes, each switched off and all together (prints, no asserts).

For swish, gemm, ffn and softmax at their demo sizes and two kernels reading a
strided view, on the simulated ascend910b: cycles with every optimisation of
`pypto-lower` off (double-buffer, coalesce-dma, bank-offset) and all on, the
ratio, the cycles with each one alone off, the busiest pipes' utilization, GM
bandwidth utilization and the fraction of the roofline reached; then the
targets of issue 7 with what dominates where one is missed.

    .venv/bin/python bench/bench_optimizations.py [--only swish,gemm]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import lower, result_buffers
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.demo import load_example
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.roofline import roofline
from pypto_mlir.targets import load_target

TARGET = "ascend910b"
SWITCHES = ("double_buffer", "coalesce_dma", "bank_offset")


@dataclass(frozen=True)
class Kernel:
    name: str
    shape: str
    module: Callable[[], ModuleOp]
    inputs: Callable[[np.random.Generator], list[np.ndarray]]


def _example(file: str, kernel: str, shape: str, **sizes: int) -> Kernel:
    example = load_example(file)
    traced = getattr(example, kernel)
    return Kernel(
        kernel,
        shape,
        lambda: traced.module(**sizes),
        lambda rng: list(example.make_inputs(rng, *sizes.values())),
    )


def _view(name: str, shape: tuple[int, int], view: str) -> Kernel:
    out = f"!tv.tensor<{shape[0]}x{shape[1]}xf16>"
    text = f"""
func.func @{name}(%x: !tv.tensor<4096x1024xf16>) -> {out} {{
  %v = tv.view %x{view} : !tv.tensor<4096x1024xf16> to {out}
  %c = arith.constant 2.0 : f16
  %y = tv.mul %v, %c : {out}, f16 -> {out}
  func.return %y : {out}
}}
"""

    def module() -> ModuleOp:
        return parse_chunk(default_context(), SourceChunk(text, 1), "bench.mlir")

    def inputs(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.standard_normal((4096, 1024)).astype(np.float16)]

    return Kernel(name, f"{view} of 4096x1024 f16", module, inputs)


def kernels() -> list[Kernel]:
    return [
        _example("swish", "swish", "4096x1024 f16"),
        _example("gemm", "gemm", "1024x1024x1024 f16", M=1024),
        _example("ffn", "ffn", "128x768x3072 f16"),
        _example("softmax", "softmax", "4096x1024 f16"),
        _view("rows_view", (4096, 512), "[0, 0][4096, 512][1, 1]"),
        _view("column_view", (4096, 64), "[0, 0][4096, 64][1, 1]"),
    ]


@dataclass
class Run:
    cycles: int
    report: Any
    roofline_cycles: float
    roofline_limit: str


def simulate(kernel: Kernel, **switches: bool) -> Run:
    target = load_target(TARGET)
    module = kernel.module()
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    name = function.sym_name.data
    with diagnostic_handler(lambda _: None):
        lowered = lower(module, "ascend_hw", LowerPipeline(target=TARGET, **switches))
    inputs = kernel.inputs(np.random.default_rng(0))
    run = run_hw_function(lowered, name, [*inputs, *result_buffers(function)], target)
    bound = roofline(module, name, target)
    return Run(run.report.cycles, run.report, bound.cycles, bound.limit.resource)


def _pipes(report: Any) -> str:
    busy = sorted(report.pipes.items(), key=lambda p: -p[1].utilization)[:3]
    return " ".join(f"{p} {s.utilization:.0%}" for p, s in busy)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    args = parser.parse_args(argv)
    chosen = [k for k in kernels() if not args.only or k.name in args.only.split(",")]
    off = dict.fromkeys(SWITCHES, False)
    results: dict[str, tuple[Run, Run]] = {}
    print(f"{TARGET}: all = double-buffer, coalesce-dma and bank-offset")
    header = (
        f"{'kernel':<12} {'off':>8} {'on':>8} {'on/off':>7}  "
        + "  ".join(f"{'no ' + s.split('_')[0]:>9}" for s in SWITCHES)
        + f"  {'pipes (on)':<26} {'GM BW off/on':>13} {'roofline off/on':>16}"
    )
    print(header)
    print("-" * len(header))
    for kernel in chosen:
        start = time.perf_counter()
        none = simulate(kernel, **off)
        every = simulate(kernel)
        alone = [simulate(kernel, **{s: False}).cycles for s in SWITCHES]
        results[kernel.name] = (none, every)
        print(
            f"{kernel.name:<12} {none.cycles:>8} {every.cycles:>8} "
            f"{none.cycles / every.cycles:>6.2f}x  "
            + "  ".join(f"{c:>9}" for c in alone)
            + f"  {_pipes(every.report):<26} "
            f"{none.report.gm_bandwidth_utilization:>5.0%} / "
            f"{every.report.gm_bandwidth_utilization:<5.0%} "
            f"{none.roofline_cycles / none.cycles:>6.0%} / "
            f"{every.roofline_cycles / every.cycles:<5.0%}"
            f"  ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    print()
    print("roofline: the bound of pypto_mlir/roofline.py (docs/pipeline.md); columns")
    print("'no X' are the cycles with only X switched off.")
    _targets(results)
    return 0


def _targets(results: dict[str, tuple[Run, Run]]) -> None:
    """Issue 7's targets, met or not, with the dominant cost where not."""
    print("\nissue 7 targets:")

    def line(ok: bool, text: str, why: str) -> None:
        print(f"  [{'met' if ok else 'missed'}] {text}" + ("" if ok else f": {why}"))

    if "swish" in results:
        none, every = results["swish"]
        ratio = none.cycles / every.cycles
        fraction = every.roofline_cycles / every.cycles
        why = (
            f"busiest pipes {_pipes(every.report)}; V computes silu's four steps "
            "(vexp 3.99, vdiv 8 cycles per repeat), as much work as the GM bound, "
            "plus 32 cycles of start-up per instruction and the first load and "
            "last store of each core, which nothing overlaps (docs/tile_pipeline.md)"
        )
        line(
            ratio >= 1.8,
            f"swish >= 1.8x (got {ratio:.2f}x)",
            why + "; the single-buffered kernel already overlaps each store with "
            "the next load",
        )
        line(fraction >= 0.9, f"swish >= 90% of roofline (got {fraction:.0%})", why)
    if "gemm" in results:
        _, every = results["gemm"]
        fraction = every.roofline_cycles / every.cycles
        report = every.report
        line(
            fraction >= 0.9,
            f"gemm >= 90% of the cube roofline (got {fraction:.0%})",
            f"busiest pipes {_pipes(report)}, GM "
            f"{report.gm_bandwidth_utilization:.0%} of the chip's bandwidth with "
            f"{report.gm_wire_bytes / 2**20:.1f} MiB on the wire: every core reads "
            "its own A and B panels (the roofline reads each input once), at "
            "least 4 K sqrt(M N cores) bytes, so no schedule of the machine model "
            "gets above about 60% of the cube bound at 1024^3 (docs/pipeline.md); "
            "each 256-deep chunk's two DMAs pay 400 cycles of start-up and 2 per "
            "512-byte burst on MTE2",
        )
    if "rows_view" in results:
        none, every = results["rows_view"]
        low, high = (
            none.report.gm_bandwidth_utilization,
            every.report.gm_bandwidth_utilization,
        )
        line(low <= 0.6, f"strided view <= 60% GM without coalescing ({low:.0%})", "")
        line(
            high >= 0.9,
            f"strided view >= 90% GM with it ({high:.0%})",
            f"busiest pipes {_pipes(every.report)}; each core's first load and "
            "last store are not overlapped, and the tiles do not divide evenly "
            "over the cores",
        )


if __name__ == "__main__":
    raise SystemExit(main())
