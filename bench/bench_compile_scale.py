"""Compile time at scale (issue 16): `pypto-lower` on generated inputs of growing
size, and the start-up of `pypto-opt`.

Inputs (generated, both targets): a fused chain of N elementwise `tv` ops on one
tensor (add, mul, sub, max in turn, each reading the previous result and a
second argument), and modules of N small functions (an add and a mul each).
For each it prints the input's ops, the lowering time in this process (parsed
input to lowered module, diagnostics discarded), the time per input op, the time
to parse and print the lowered output again, and the ratio of the two: lowering
should be linear in ops (a flat ms/op column) and within a small factor of
reading and writing its own output. Then the start-up: the wall time of
`pypto-opt` on an empty module, of `--help` and of `-p pypto-lower` on the empty
module (best of five, after a run that leaves the bytecode cache warm), next to
the floor under them: Python itself, the import of xDSL's builtin dialect and
stock `xdsl-opt` on the empty module.
A lowering of a 2-op chain per target runs first, so that the table excludes
imports. Asserts nothing.

    .venv/bin/python bench/bench_compile_scale.py [--chains 50,100,200,400,1000]
        [--functions 10,100,1000] [--targets tiny,ascend910b] [--shape 64x128xf32]
    .venv/bin/python bench/bench_compile_scale.py --chains= --functions=   # start-up only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from pypto_mlir.cli.source import default_context
from pypto_mlir.diagnostics import Diagnostic, diagnostic_handler
from pypto_mlir.pipelines import LowerPipeline

CHAIN_OPS = ("add", "mul", "sub", "max")


def chain_module(length: int, shape: str) -> str:
    """One function: a chain of `length` binary elementwise ops on `shape`."""
    tensor = f"!tv.tensor<{shape}>"
    lines = [
        "builtin.module {",
        f"  func.func @chain(%x: {tensor}, %y: {tensor}) -> {tensor} {{",
    ]
    previous = "%x"
    for index in range(length):
        op = CHAIN_OPS[index % len(CHAIN_OPS)]
        lines.append(f"    %{index} = tv.{op} {previous}, %y : {tensor}")
        previous = f"%{index}"
    lines += [f"    func.return {previous} : {tensor}", "  }", "}"]
    return "\n".join(lines) + "\n"


def functions_module(count: int, shape: str) -> str:
    """`count` functions of two fused elementwise ops each."""
    tensor = f"!tv.tensor<{shape}>"
    lines = ["builtin.module {"]
    for index in range(count):
        lines += [
            f"  func.func @f{index}(%x: {tensor}, %y: {tensor}) -> {tensor} {{",
            f"    %0 = tv.add %x, %y : {tensor}",
            f"    %1 = tv.mul %0, %y : {tensor}",
            f"    func.return %1 : {tensor}",
            "  }",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"


@dataclass
class Row:
    ops: int
    lower: float
    reparse: float
    status: str

    @property
    def ms_per_op(self) -> float:
        return 1000 * self.lower / self.ops

    @property
    def ratio(self) -> float:
        return self.lower / self.reparse if self.reparse else float("nan")


def parse(ctx: Context, text: str) -> ModuleOp:
    return Parser(ctx, text).parse_module()


def printed(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def measure(text: str, target: str) -> Row:
    """Lower `text` for `target`; time that, then parse + print of the output."""
    ctx = default_context()
    module = parse(ctx, text)
    ops = sum(1 for _ in module.walk()) - 1
    diagnostics: list[Diagnostic] = []
    start = time.perf_counter()
    try:
        with diagnostic_handler(diagnostics.append):
            LowerPipeline(target=target).apply(ctx, module)
    except Exception as error:  # a bench reports a failure and goes on
        return Row(ops, time.perf_counter() - start, 0.0, type(error).__name__)
    lower = time.perf_counter() - start
    output = printed(module)
    start = time.perf_counter()
    printed(parse(default_context(), output))
    reparse = time.perf_counter() - start
    return Row(ops, lower, reparse, "ok")


def best_wall(command: list[str], runs: int = 5) -> float:
    """Best wall time of `command` (after one warm-up run that leaves the
    bytecode cache warm)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    best = float("inf")
    for run in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(command, env=env, check=False, capture_output=True)
        if run:
            best = min(best, time.perf_counter() - start)
    return best


def startup(arguments: list[str], runs: int = 5) -> float:
    """Best wall time of `pypto-opt ARGUMENTS`."""
    tool = Path(sys.executable).with_name("pypto-opt")
    return best_wall([str(tool), *arguments], runs)


def sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=sizes, default=sizes("50,100,200,400,1000"))
    parser.add_argument("--functions", type=sizes, default=sizes("10,100,1000"))
    parser.add_argument("--targets", default="tiny,ascend910b")
    parser.add_argument("--shape", default="64x128xf32")
    args = parser.parse_args()
    print(
        f"{'input':<16} {'target':<11} {'ops':>6} {'lower s':>8} {'ms/op':>7} "
        f"{'parse+print s':>13} {'ratio':>6}"
    )
    cases = [(f"chain {n}", chain_module, n) for n in args.chains] + [
        (f"{n} functions", functions_module, n) for n in args.functions
    ]
    for target in args.targets.split(","):
        measure(chain_module(2, args.shape), target)  # imports and target files
    for name, generate, n in cases:
        text = generate(n, args.shape)
        for target in args.targets.split(","):
            row = measure(text, target)
            tail = "" if row.status == "ok" else f"  {row.status}"
            print(
                f"{name:<16} {target:<11} {row.ops:>6} {row.lower:>8.2f} "
                f"{row.ms_per_op:>7.2f} {row.reparse:>13.2f} {row.ratio:>6.1f}{tail}",
                flush=True,
            )
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.mlir"
        empty.write_text("builtin.module {}\n")
        print("\nstart-up (best wall time of 5 runs):")
        floors = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import xdsl.dialects.builtin'": [
                sys.executable,
                "-c",
                "import xdsl.dialects.builtin",
            ],
        }
        xdsl_opt = Path(sys.executable).with_name("xdsl-opt")
        floors["xdsl-opt empty.mlir (stock)"] = [str(xdsl_opt), str(empty)]
        for name, command in floors.items():
            print(f"  {best_wall(command):5.2f} s  {name}")
        commands = {
            "pypto-opt empty.mlir": [str(empty)],
            "pypto-opt --help": ["--help"],
            "pypto-opt empty.mlir -p pypto-lower": [str(empty), "-p", "pypto-lower"],
        }
        for name, arguments in commands.items():
            print(f"  {startup(arguments):5.2f} s  {name}")


if __name__ == "__main__":
    main()
