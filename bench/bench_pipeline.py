"""Double buffering (`tile-pipeline`): cycles of a kernel lowered with
`pypto-lower{double-buffer=false}` and `{double-buffer=true}` on the simulator.

Default: swish 4096x1024 f16 on ascend910b (issue 7: >= 1.8x and >= 90% of the
roofline). Prints the cycles, the ratio, each pipe's utilisation and, when
`pypto_mlir.roofline` is available, the roofline bound and the fraction reached.
Checks every output against the tv reference; asserts nothing.

    .venv/bin/python bench/bench_pipeline.py [--rows 4096] [--cols 1024] [--target ascend910b]
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np
from xdsl.parser import Parser

from pypto_mlir.check import check_lowering
from pypto_mlir.cli.source import default_context
from pypto_mlir.pipelines import LowerPipeline

SWISH = """
func.func @swish(%x: !tv.tensor<{r}x{c}xf16>) -> !tv.tensor<{r}x{c}xf16> {{
  %s = tv.sigmoid %x : !tv.tensor<{r}x{c}xf16>
  %y = tv.mul %x, %s : !tv.tensor<{r}x{c}xf16>
  func.return %y : !tv.tensor<{r}x{c}xf16>
}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--target", default="ascend910b")
    args = parser.parse_args()
    text = SWISH.format(r=args.rows, c=args.cols)
    module = Parser(default_context(), text).parse_module()
    x = np.random.default_rng(0).standard_normal((args.rows, args.cols))
    inputs = [x.astype(np.float16)]
    print(f"swish {args.rows}x{args.cols} f16 on {args.target}")
    cycles: dict[bool, int] = {}
    for double in (False, True):
        pipeline = LowerPipeline(target=args.target, double_buffer=double)
        start = time.perf_counter()
        check = check_lowering(module, "swish", inputs, pipeline=pipeline)
        report = check.sim_report
        cycles[double] = report.cycles
        verdict = "ok" if check.ok else "MISMATCH"
        print(
            f"\ndouble-buffer={str(double).lower()}: {report.cycles} cycles "
            f"({report.microseconds:.1f} us), numerics {verdict}, "
            f"{time.perf_counter() - start:.0f} s wall"
        )
        slowest = max(report.cores, key=lambda core: core.cycles)
        print(
            f"  {report.block_dim} cores; slowest core {slowest.index}: "
            f"{slowest.cycles} cycles; GM bandwidth "
            f"{report.gm_bandwidth_utilization:.1%} of peak"
        )
        for pipe in ("MTE2", "V", "MTE3"):
            print(
                f"  {pipe:<5} utilization {report.pipes[pipe].utilization:6.1%}"
                f" (slowest core: {slowest.pipes[pipe].busy_cycles} busy cycles)"
            )
    print(f"\nspeed-up: {cycles[False] / cycles[True]:.2f}x (issue target >= 1.8x)")
    try:
        roofline = importlib.import_module("pypto_mlir.roofline")
    except ImportError:
        print("roofline: pypto_mlir.roofline not available")
        return
    from pypto_mlir.targets import load_target

    bound = roofline.roofline(module, "swish", load_target(args.target))
    print(
        f"roofline: {bound.cycles:.0f} cycles ({bound.limit.resource}-bound); "
        f"double-buffer=false {bound.cycles / cycles[False]:.1%}, "
        f"true {bound.cycles / cycles[True]:.1%} of it (issue target >= 90%)"
    )
    for b in bound.bounds:
        print(f"  {b.resource:<8}{b.cycles:>12.0f} cycles")


if __name__ == "__main__":
    main()
