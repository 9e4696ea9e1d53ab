"""UB bank-conflict avoidance: the demo kernels with bank offsets off vs on (prints, no asserts).

For swish, softmax, layernorm and ffn at their demo sizes (pypto_mlir/demo.py), lowered
by `pypto-lower{bank-offset=false}` and by `pypto-lower` (bank offsets on), on the
simulated ascend910b: cycles, the ratio off/on, the cycles the vector
instructions lose to UB bank conflicts (the report's `bank_conflict_cycles`, over
all cores) as a share of the V pipe's busy cycles, V utilization, the UB high
water of core 0, and whether both lowerings give bit-identical outputs.

    .venv/bin/python bench/bench_banks.py [--only swish,softmax] [--target T]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from pypto_mlir.check import lower, result_buffers
from pypto_mlir.demo import KERNELS, DemoKernel, load_example
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

NAMES = ("swish", "softmax", "layernorm", "ffn")


def run(demo: DemoKernel, target_name: str, bank_offset: bool) -> tuple[Any, list]:
    """Lower and simulate one demo kernel; returns the report and its outputs."""
    example = load_example(demo.example)
    kernel = getattr(example, demo.kernel)
    inputs = example.make_inputs(np.random.default_rng(0), *demo.sizes.values())
    module = kernel.module(**demo.sizes)
    function = next(iter(module.ops))
    with diagnostic_handler(lambda _: None):  # the tile-size remarks
        lowered = lower(
            module,
            "ascend_hw",
            LowerPipeline(target=target_name, bank_offset=bank_offset),
        )
    outputs = result_buffers(function)
    result = run_hw_function(
        lowered,
        function.sym_name.data,
        [*inputs, *outputs],
        load_target(target_name),
    )
    return result.report, outputs


def ub_high_water(report: Any) -> int:
    return report.cores[0].memories["ub"].high_water


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(NAMES))
    parser.add_argument("--target", default="ascend910b")
    args = parser.parse_args()
    wanted = args.only.split(",")
    demos = [k for k in KERNELS if k.kernel in wanted]
    print(
        f"{'kernel':<17}{'shape':<20}{'offsets':<8}{'cycles':>9}{'bank cyc':>10}"
        f"{'of V busy':>10}{'V util':>8}{'ub high':>9}"
    )
    for demo in demos:
        start = time.perf_counter()
        reports = {}
        outputs = {}
        for on in (False, True):
            reports[on], outputs[on] = run(demo, args.target, on)
        for on in (False, True):
            r = reports[on]
            v = r.pipes["V"]
            share = r.bank_conflict_cycles / v.busy_cycles if v.busy_cycles else 0.0
            print(
                f"{demo.kernel:<17}{demo.shape:<20}{'on' if on else 'off':<8}"
                f"{r.cycles:>9}{r.bank_conflict_cycles:>10}{share:>10.1%}"
                f"{v.utilization:>8.1%}{ub_high_water(r):>9}"
            )
        same = all(
            a.tobytes() == b.tobytes()
            for a, b in zip(outputs[False], outputs[True], strict=True)
        )
        ratio = reports[False].cycles / reports[True].cycles
        print(
            f"{'':<17}off/on {ratio:.3f}x, outputs identical: {same} "
            f"({time.perf_counter() - start:.1f} s)"
        )


if __name__ == "__main__":
    main()
