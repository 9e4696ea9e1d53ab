"""`make demo`: the example kernels from Python to the simulated chip.

Each kernel of `examples/` (swish, gemm, ffn, softmax, layernorm, sum_diff,
attention, spmm) is traced from Python at its real size, lowered by `pypto-lower`
stage by stage, run on the simulated AI Core (ascend910b by default), checked against the example's
float64 numpy reference with the example's tolerance, and compared with the
roofline bound of its problem on the target (`pypto_mlir.roofline`; for a
sparse kernel `pypto_mlir.sparse_roofline`, from its pattern). A table
summarizes them; each kernel's timeline is written as a Chrome trace (JSON,
open it in Perfetto) and a PNG. docs/pipeline.md explains the columns.

    python -m pypto_mlir.demo [--target T] [--only swish,gemm] [--out DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO, TypeVar

import numpy as np

from pypto_mlir.targets import DEFAULT_TARGET, TARGET_DIR, Target

REPOSITORY = Path(__file__).resolve().parents[1]
EXAMPLES = REPOSITORY / "examples"
DEFAULT_OUT = REPOSITORY / "out" / "demo"

_T = TypeVar("_T")


@dataclass(frozen=True)
class DemoKernel:
    """One kernel of the demo: its example file, kernel name, sizes and shape."""

    example: str
    kernel: str
    sizes: dict[str, int] = field(default_factory=dict[str, int])
    """Symbolic sizes; also passed to the example's `make_inputs`."""
    shape: str = ""
    """The problem size as the table shows it."""


KERNELS: tuple[DemoKernel, ...] = (
    DemoKernel("swish", "swish", {}, "4096x1024 f16"),
    DemoKernel("gemm", "gemm", {"M": 1024}, "1024x1024x1024 f16"),
    DemoKernel("ffn", "ffn", {}, "128x768x3072 f16"),
    DemoKernel("softmax", "softmax", {}, "4096x1024 f16"),
    DemoKernel("softmax", "softmax_by_hand", {}, "4096x1024 f16"),
    DemoKernel("layernorm", "layernorm", {"N": 128}, "128x768 f16"),
    DemoKernel("sum_diff", "sum_diff", {}, "512x512 f16 ->2"),
    DemoKernel("attention", "attention", {"S": 512}, "512x128 f16"),
    DemoKernel("spmm", "spmm", {}, "CSR 1024x1024 1% x128 f16"),
)
"""The real sizes of the examples (their `make_inputs` defaults)."""


@dataclass
class KernelResult:
    """What the demo measured for one kernel."""

    kernel: DemoKernel
    cycles: int = 0
    microseconds: float = 0.0
    roofline_cycles: float = 0.0
    roofline_us: float = 0.0
    bound_by: str = ""
    busiest_pipe: str = ""
    busiest_utilization: float = 0.0
    gm_utilization: float = 0.0
    cores: int = 0
    check: str = ""
    top_line: str = ""
    """The kernel's source line with most pipe-cycles (`sim.profile`)."""
    ok: bool = False
    error: str | None = None
    seconds: dict[str, float] = field(default_factory=dict[str, float])
    files: list[str] = field(default_factory=list[str])

    @property
    def fraction(self) -> float:
        """The share of the roofline reached: bound / simulated cycles."""
        return self.roofline_cycles / self.cycles if self.cycles else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel.kernel,
            "shape": self.kernel.shape,
            "cycles": self.cycles,
            "microseconds": self.microseconds,
            "roofline_cycles": self.roofline_cycles,
            "roofline_microseconds": self.roofline_us,
            "roofline_fraction": self.fraction,
            "bound_by": self.bound_by,
            "busiest_pipe": self.busiest_pipe,
            "busiest_pipe_utilization": self.busiest_utilization,
            "gm_bandwidth_utilization": self.gm_utilization,
            "cores": self.cores,
            "check": self.check,
            "top_line": self.top_line,
            "ok": self.ok,
            "error": self.error,
            "seconds": self.seconds,
            "files": self.files,
        }


class Progress:
    """One line per stage per kernel. On a terminal the running stage is shown
    in place and replaced by its result; otherwise only results are printed."""

    def __init__(self, stream: TextIO, live: bool):
        self.stream = stream
        self.live = live

    def show(self, text: str) -> None:
        if self.live:
            self.stream.write(f"\r\033[K{text}")
            self.stream.flush()

    def done(self, text: str) -> None:
        self.stream.write(f"\r\033[K{text}\n" if self.live else f"{text}\n")
        self.stream.flush()


def load_example(name: str) -> ModuleType:
    """Import `examples/<name>.py` (they are scripts, not a package)."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"pypto_demo_{name}", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pipeline_target(target: Target) -> str:
    """How `pypto-lower` names `target`: a builtin by its name, any other
    file by its path (a copy of a builtin still named like it is not it)."""
    if Path(target.path).resolve() == (TARGET_DIR / f"{target.name}.toml").resolve():
        return target.name
    return target.path


def run_kernel(
    demo: DemoKernel, target: Target, out: Path | None, progress: Progress
) -> KernelResult:
    """Trace, lower, simulate, check and draw one kernel on `target` (loaded
    once, from a builtin name or a file)."""
    from pypto_mlir.check import lower, lowered_arguments, result_buffers
    from pypto_mlir.diagnostics import diagnostic_handler
    from pypto_mlir.frontend.testing import compare
    from pypto_mlir.interp.ascend_hw import run_hw_function
    from pypto_mlir.pipelines import LowerPipeline
    from pypto_mlir.roofline import roofline
    from pypto_mlir.sim.profile import profile
    from pypto_mlir.sim.profile_text import top_line_text
    from pypto_mlir.sparse_roofline import has_sparse_ops, sparse_roofline

    result = KernelResult(demo)
    label = f"{demo.kernel:<16}"

    def stage(name: str, action: Callable[[], _T]) -> _T:
        progress.show(f"{label}{name} ...")
        start = time.perf_counter()
        value = action()
        seconds = time.perf_counter() - start
        result.seconds[name] = seconds
        progress.done(f"{label}{name:<10}{seconds:7.2f} s")
        return value

    example = load_example(demo.example)
    kernel = getattr(example, demo.kernel)
    rng = np.random.default_rng(0)
    inputs = example.make_inputs(rng, *demo.sizes.values())
    arguments = kernel.arguments(*inputs)  # a scipy sparse one as a SparseArray
    module = stage("trace", lambda: kernel.module(**demo.sizes))
    function = next(iter(module.ops))
    name = function.sym_name.data

    def lower_with_progress() -> Any:
        def on_stage(member: Any) -> None:
            progress.show(f"{label}lower ... {member.name}")

        with diagnostic_handler(lambda _: None):  # the tile-size remarks
            return lower(
                module,
                "ascend_hw",
                LowerPipeline(target=pipeline_target(target)),
                on_stage,
            )

    lowered = stage("lower", lower_with_progress)
    outputs = result_buffers(function, arguments)
    run = stage(
        "simulate",
        lambda: run_hw_function(
            lowered, name, [*lowered_arguments(function, arguments), *outputs], target
        ),
    )
    report = run.report

    def check() -> Any:
        expected = example.reference(*inputs)
        rtol, atol = example.tolerance(*inputs)
        if not isinstance(expected, tuple):
            return compare(outputs[0], expected, rtol=rtol, atol=atol)
        # Several outputs: the worst of their comparisons.
        comparisons = [
            compare(actual, wanted, rtol=rtol, atol=atol)
            for actual, wanted in zip(outputs, expected, strict=True)
        ]
        return max(comparisons, key=lambda c: (not c.ok, c.worst_ratio))

    comparison = stage("check", check)
    bound = (
        sparse_roofline(module, name, target, arguments)
        if has_sparse_ops(module, name)
        else roofline(module, name, target)
    )
    report.roofline = bound.summary
    result.cycles = report.cycles
    result.microseconds = report.microseconds
    result.roofline_cycles = bound.cycles
    result.roofline_us = bound.microseconds
    result.bound_by = bound.limit.resource
    result.top_line = top_line_text(profile(report))
    busiest = max(report.pipes.items(), key=lambda item: item[1].utilization)
    result.busiest_pipe, result.busiest_utilization = busiest[0], busiest[1].utilization
    result.gm_utilization = report.gm_bandwidth_utilization
    result.cores = report.block_dim
    result.ok = comparison.ok
    result.check = (
        f"{'ok' if comparison.ok else 'FAILED'} ({comparison.worst_ratio:.2f} of tol)"
    )
    if out is not None:
        stage("timeline", lambda: _write_timeline(report, out, demo.kernel, result))
    return result


def _write_timeline(report: Any, out: Path, kernel: str, result: KernelResult) -> None:
    from pypto_mlir.sim import write_chrome_trace, write_timeline_png

    out.mkdir(parents=True, exist_ok=True)
    trace, png = out / f"{kernel}.trace.json", out / f"{kernel}.png"
    write_chrome_trace(report, str(trace))
    write_timeline_png(report, str(png))
    result.files += [str(trace), str(png)]


COLUMNS = (
    ("kernel", "<"),
    ("shape", "<"),
    ("cores", ">"),
    ("cycles", ">"),
    ("us", ">"),
    ("roofline us", ">"),
    ("bound by", "<"),
    ("of roofline", ">"),
    ("busiest pipe", "<"),
    ("GM BW", ">"),
    ("vs numpy", "<"),
)


def table(results: Sequence[KernelResult]) -> str:
    """The summary table, one row per kernel."""
    rows: list[tuple[str, ...]] = []
    for r in results:
        if r.error is not None:
            rows.append((r.kernel.kernel, r.kernel.shape, *["-"] * 8, "ERROR"))
            continue
        rows.append(
            (
                r.kernel.kernel,
                r.kernel.shape,
                str(r.cores),
                str(r.cycles),
                f"{r.microseconds:.1f}",
                f"{r.roofline_us:.1f}",
                r.bound_by,
                f"{r.fraction:.0%}",
                f"{r.busiest_pipe} {r.busiest_utilization:.0%}",
                f"{r.gm_utilization:.0%}",
                r.check,
            )
        )
    widths = [
        max(len(title), *(len(row[i]) for row in rows))
        for i, (title, _) in enumerate(COLUMNS)
    ]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            f"{cell:{align}{width}}"
            for cell, (_, align), width in zip(cells, COLUMNS, widths, strict=True)
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line([t for t, _ in COLUMNS]), rule, *map(line, rows)]) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pypto_mlir.demo",
        description="Compile the example kernels from Python through pypto-lower, "
        "run them on the simulated AI Core, check them against numpy and compare "
        "them with the roofline of the target.",
    )
    parser.add_argument(
        "--target", default=DEFAULT_TARGET, help=f"the chip (default {DEFAULT_TARGET})"
    )
    parser.add_argument(
        "--only",
        metavar="K1,K2",
        help="run only these kernels (names: "
        + ", ".join(k.kernel for k in KERNELS)
        + ")",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        default=str(DEFAULT_OUT),
        help="folder for the timelines and demo.json (default out/demo)",
    )
    parser.add_argument(
        "--no-timeline", action="store_true", help="do not draw the timelines"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    kernels = list(KERNELS)
    if args.only:
        wanted = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = sorted(set(wanted) - {k.kernel for k in KERNELS})
        if unknown:
            print(
                f"demo: error: unknown kernel(s) {', '.join(unknown)}", file=sys.stderr
            )
            return 2
        kernels = [k for k in KERNELS if k.kernel in wanted]
    from pypto_mlir.targets import TargetError, load_target

    try:
        target = load_target(args.target)
    except TargetError as error:
        print(f"demo: error: {error}", file=sys.stderr)
        return 2
    out = Path(args.out)
    print(
        f"pypto-mlir demo: {len(kernels)} example kernels from Python through "
        f"pypto-lower{{target={target.name}}} to the simulated {target.name} "
        f"({target.cores} cores at {target.clock_ghz:g} GHz), at their real sizes\n",
        flush=True,
    )
    progress = Progress(sys.stdout, sys.stdout.isatty())
    results: list[KernelResult] = []
    for demo in kernels:
        try:
            results.append(
                run_kernel(demo, target, None if args.no_timeline else out, progress)
            )
        except Exception as error:  # a kernel that fails is reported, the rest run
            from pypto_mlir.diagnostics import DiagnosticError

            failed = KernelResult(demo)
            message = (
                str(error.diagnostic)
                if isinstance(error, DiagnosticError)
                else f"{type(error).__name__}: {error}"
            )
            failed.error = message.split("\n")[0]
            progress.done(f"{demo.kernel:<16}error: {failed.error}")
            results.append(failed)
    print()
    print(table(results), end="")
    print(
        "\nroofline: the slowest of cube MACs, vector work and the bytes of each data "
        "path at the target's peak rates for the problem (inputs read once, outputs "
        "written once); 'of roofline' = roofline / simulated cycles "
        "(docs/pipeline.md)."
    )
    profiled = [r for r in results if r.error is None and r.top_line]
    if profiled:
        width = max(len(r.kernel.kernel) for r in profiled)
        print("\nwhere the time goes (the top line of each kernel's profile):")
        for r in profiled:
            print(f"  {r.kernel.kernel:<{width}}  {r.top_line}")
    if not args.no_timeline:
        out.mkdir(parents=True, exist_ok=True)
        summary = out / "demo.json"
        summary.write_text(
            json.dumps(
                {"target": target.name, "kernels": [r.to_dict() for r in results]},
                indent=2,
            )
            + "\n"
        )
        shown = out.relative_to(REPOSITORY) if out.is_relative_to(REPOSITORY) else out
        print(f"timelines (Chrome trace JSON + PNG) and demo.json: {shown}/")
    failures = [r for r in results if not r.ok]
    if failures:
        print(
            "FAILED: " + ", ".join(r.kernel.kernel for r in failures), file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
