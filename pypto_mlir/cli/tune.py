"""`pypto-tune`: search pypto-lower's options for a tv kernel on the simulator.

    pypto-tune FILE.mlir [--target T] [--budget N | --seconds S] [--jobs J]
               [--ray] [--ray-address ADDR] [--options a,b] [--report out.json]
               [--plot out.png]

The winner is stored in the tuning cache, so `pypto-opt -p
'pypto-lower{tuned=true}'` and the `sim` backend use it. Problems are
diagnostics in MLIR's format with exit status 1 (bad arguments: usage and exit
status 2, as pypto-opt), never a traceback. docs/tuning.md is the guide.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from importlib.metadata import version
from typing import TextIO

from xdsl.dialects import func

from pypto_mlir.cli.diagnostics import (
    DiagnosticPrinter,
    SourceManager,
    run_tool,
)
from pypto_mlir.cli.source import SourceChunk, parse_chunk, read_source
from pypto_mlir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    op_diagnostic,
    verify,
)
from pypto_mlir.universe import default_context

TOOL_NAME = "pypto-tune"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL_NAME,
        description="Tune pypto-lower's options for a tv kernel: candidates "
        "lowered and simulated in parallel, the winner checked against the tv "
        "reference and stored in the tuning cache (pypto-lower{tuned=true}).",
        epilog="The cache is in the user's cache directory; PYPTO_TUNE_CACHE names "
        "another file. See docs/tuning.md.",
    )
    parser.add_argument("input_file", metavar="FILE", help="the MLIR file ('-': stdin)")
    parser.add_argument("--entry", metavar="NAME", help="the function to tune")
    parser.add_argument(
        "--target",
        metavar="T",
        help="a target name (ascend910b, tiny) or TOML file (default: the module's "
        "pypto.target, else ascend910b)",
    )
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument(
        "--budget", type=_positive_int, metavar="N", help="candidates to measure (32)"
    )
    limit.add_argument(
        "--seconds", type=_positive_float, metavar="S", help="time to search for"
    )
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        metavar="J",
        help="local worker processes (default: the machine's cores)",
    )
    parser.add_argument(
        "--candidate-seconds",
        type=_positive_float,
        metavar="S",
        help="give up on a candidate after S seconds (local pool; default 300)",
    )
    parser.add_argument(
        "--ray", action="store_true", help="run candidates on a local Ray instance"
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="run candidates on the Ray cluster at ADDR (implies --ray)",
    )
    parser.add_argument(
        "--options",
        metavar="A,B",
        help="tune only these pypto-lower options (default: every decision)",
    )
    parser.add_argument("--report", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--plot", metavar="FILE", help="draw the search as a PNG")
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar on stderr"
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks of internal errors"
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{TOOL_NAME} {version('pypto-mlir')}",
    )
    return parser


def _error(message: str) -> DiagnosticError:
    return DiagnosticError(Diagnostic(Severity.ERROR, message))


def run(args: argparse.Namespace, sources: SourceManager, stdout: TextIO) -> None:
    """Everything after argument parsing; raises `DiagnosticError`."""
    from pypto_mlir.tune.executors import (
        DEFAULT_CANDIDATE_SECONDS,
        Executor,
        ExecutorError,
        LocalExecutor,
        RayExecutor,
    )
    from pypto_mlir.tune.report import plot, summary, write_json
    from pypto_mlir.tune.space import SpaceError
    from pypto_mlir.tune.tuner import TuneError, tune

    if args.jobs is not None and (args.ray or args.ray_address):
        raise _error("--jobs sizes the local pool; Ray uses its cluster's CPUs")
    path = None if args.input_file == "-" else args.input_file
    source = read_source(path)
    sources.add(source.name, source.text)
    module = parse_chunk(default_context(), SourceChunk(source.text, 1), source.name)
    verify(module)
    anchor = next((op for op in module.ops if isinstance(op, func.FuncOp)), None)
    if args.entry is not None:
        anchor = next(
            (
                op
                for op in module.ops
                if isinstance(op, func.FuncOp) and op.sym_name.data == args.entry
            ),
            anchor,
        )
    only = (
        [o.strip() for o in args.options.split(",") if o.strip()]
        if args.options
        else []
    )
    try:
        executor: Executor = (
            RayExecutor(args.ray_address)
            if args.ray or args.ray_address
            else LocalExecutor(
                args.jobs, args.candidate_seconds or DEFAULT_CANDIDATE_SECONDS
            )
        )
    except ExecutorError as error:
        raise _error(str(error)) from None
    try:
        result = tune(
            module,
            args.entry,
            args.target,
            budget=args.budget,
            seconds=args.seconds,
            executor=executor,
            only=only,
            progress=not args.no_progress,
        )
    except (SpaceError, TuneError) as error:
        if anchor is None:
            raise _error(str(error)) from None
        raise DiagnosticError(
            op_diagnostic(Severity.ERROR, anchor, str(error))
        ) from None
    finally:
        executor.close()
    stdout.write(summary(result))
    if args.report:
        write_json(result, args.report)
    if args.plot:
        plot(result, args.plot)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `pypto-tune` with `argv` (default: the command line); the exit status."""
    args = build_parser().parse_args(argv)
    sources = SourceManager()
    printer = DiagnosticPrinter(sys.stderr, sources, TOOL_NAME)

    def body() -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                run(args, sources, sys.stdout)
            finally:
                for warning in caught:
                    printer(Diagnostic(Severity.WARNING, str(warning.message)))

    return run_tool(TOOL_NAME, body, printer, args.debug)


if __name__ == "__main__":
    sys.exit(main())
