"""`pypto-opt`: xDSL's opt driver with MLIR's diagnostics and instrumentation.

On top of `xdsl-opt` (every dialect and pass of every `xdsl.universe` entry
point, including pypto-mlir's and third-party plugins'), `pypto-opt`:

- reports malformed input, verifier failures, pass failures, bad `-p` pipelines and
  unreadable files as `FILE:LINE:COL: error: MESSAGE` with the source line and a
  caret, exit status 1, never a Python traceback (`--debug` shows one for
  internal errors);
- implements MLIR's `--verify-diagnostics` (`// expected-error {{...}}`);
- supports `--mlir-print-ir-{before,after}[-all]` and `--mlir-timing`;
- expands named pipelines (`pypto_mlir.pipelines`) into their member passes.

docs/cli.md describes every flag.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import textwrap
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points, version
from io import BytesIO, StringIO
from typing import IO, TypeVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    ShrinkException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from pypto_mlir.cli.diagnostics import (
    DiagnosticPrinter,
    DiagnosticVerifier,
    SourceManager,
    closed_stdout,
    parse_expectations,
    report_internal_error,
    xdsl_exception_text,
    xdsl_parse_error_text,
)
from pypto_mlir.cli.pass_pipeline import (
    PIPELINE_SOURCE_NAME,
    build_pass_pipeline,
    pass_options,
)
from pypto_mlir.cli.source import (
    RECURSION_LIMIT,
    SourceChunk,
    SourceFile,
    parse_chunk,
    read_source,
    split_source,
)
from pypto_mlir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    DiagnosticHandler,
    Severity,
    SourceLocation,
    capture_op_errors,
    diagnostic_handler,
    emit,
    error_diagnostic,
    verify,
)
from pypto_mlir.pipelines import PipelinePass, expand_pipelines

TOOL_NAME = "pypto-opt"

_T = TypeVar("_T")


class PluginLoadError(Exception):
    """An `xdsl.universe` entry point could not be loaded."""


def load_multiverse() -> Universe:
    """Every dialect, pass, target and frontend of the installed universes."""
    try:
        return Universe.get_multiverse()
    except Exception as error:
        raise PluginLoadError(
            f"cannot load the xdsl.universe plugins: {type(error).__name__}: {error}"
        ) from error


@dataclass
class TimingReport:
    """Wall time per step, printed like MLIR's `--mlir-timing`."""

    start: float = field(default_factory=time.perf_counter)
    rows: dict[str, tuple[str, float]] = field(
        default_factory=dict[str, tuple[str, float]]
    )

    def add(self, key: str, label: str, seconds: float) -> None:
        """Add `seconds` to row `key` (shown as `label`); rows keep first-seen order."""
        previous = self.rows.get(key, (label, 0.0))[1]
        self.rows[key] = (label, previous + seconds)

    def render(self) -> str:
        total = time.perf_counter() - self.start
        rule = "===" + "-" * 73 + "===\n"
        lines = [
            rule,
            " " * 25 + "... Execution time report ...\n",
            rule,
            f"  Total Execution Time: {total:.4f} seconds\n",
            "\n",
            "  ----Wall Time----  ----Name----\n",
        ]
        timed = list(self.rows.values())
        rest = max(0.0, total - sum(seconds for _, seconds in timed))

        def row(label: str, seconds: float) -> str:
            share = 100.0 * seconds / total if total > 0 else 0.0
            return f"  {seconds:8.4f} ({share:5.1f}%)  {label}\n"

        lines += [row(label, seconds) for label, seconds in timed]
        lines += [row("Rest", rest), row("Total", total)]
        return "".join(lines)


def _pass_label(pass_: ModulePass) -> str:
    return f"{type(pass_).__name__} ({pass_.name})"


def _summary(pass_type: type[ModulePass]) -> str:
    """The first line of a pass's docstring (not dataclass's generated one)."""
    doc = inspect.getdoc(pass_type) or ""
    if doc.startswith(pass_type.__name__ + "("):
        return ""
    return doc.strip().split("\n")[0]


def _describe_passes(
    passes: dict[str, Callable[[], type[ModulePass]]], heading: str
) -> list[str]:
    if not passes:
        return []
    lines = [heading]
    for name in sorted(passes):
        pass_type = passes[name]()
        lines.append(f"  {name:<26} {_summary(pass_type)}".rstrip())
        for option, type_name, default in pass_options(pass_type):
            shown = f"{option}: {type_name}" + (
                "" if default is None else f" = {default}"
            )
            lines.append(f"  {'':<26}   {shown}")
    return lines


def pass_catalogue() -> str:
    """The `--help` text listing passes and pipelines by the universe they come from:
    pypto-mlir's and plugins' with their options, xDSL's by name only."""
    universes: dict[str, Universe] = {}
    for entry_point in entry_points(group="xdsl.universe"):
        universe = entry_point.load()
        if isinstance(universe, Universe):
            universes[entry_point.name] = universe
    order = sorted(
        universes, key=lambda name: (name != "pypto_mlir", name == "xdsl", name)
    )
    sections: list[list[str]] = []
    for universe_name in order:
        all_passes = universes[universe_name].all_passes
        if universe_name == "xdsl":
            wrapped = textwrap.wrap(
                ", ".join(sorted(all_passes)), width=78, break_on_hyphens=False
            )
            sections.append(
                ["passes of xDSL (their options: see xDSL's documentation):"]
                + ["  " + line for line in wrapped]
            )
            continue
        owner = (
            "pypto-mlir"
            if universe_name == "pypto_mlir"
            else f"plugin '{universe_name}'"
        )
        pipelines = {
            name: factory
            for name, factory in all_passes.items()
            if issubclass(factory(), PipelinePass)
        }
        passes = {n: f for n, f in all_passes.items() if n not in pipelines}
        sections.append(_describe_passes(passes, f"passes of {owner}:"))
        sections.append(_describe_passes(pipelines, f"pipelines of {owner}:"))
    body = "\n\n".join("\n".join(section) for section in sections if section)
    return (
        "\nA pass pipeline (-p) is a comma-separated list of passes, each with "
        "optional options:\n  -p 'pass-a,pass-b{option=value list-option=1,2,3}'\n\n"
        + body
        + "\n"
    )


def _set_help(parser: argparse.ArgumentParser, option: str, text: str) -> None:
    """Change the help of an option xDSLOptMain defined (argparse has no public
    way to look an action up)."""
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        if option in action.option_strings:
            action.help = text
            return
    raise KeyError(option)


def _xdsl_error(error: DiagnosticError, module: ModuleOp | None) -> Exception:
    """The exception xdsl-opt would have raised for `error`: the xDSL exception it
    was made from, else (a check of pypto-mlir's own, such as an empty block)
    what xDSL's verifier says about the module, else `error` itself (dominance,
    which xDSL does not check)."""
    if error.__cause__ is not None or module is None:
        return error
    try:
        module.verify()
    except DiagnosticException as xdsl_error:
        return xdsl_error
    return error


class PyptoOptMain(xDSLOptMain):
    """The `pypto-opt` driver."""

    mlir_print_ir_before: set[str]
    """Passes named by --mlir-print-ir-before (checked by `_build_pipeline`)."""
    mlir_print_ir_after: set[str]
    """Passes named by --mlir-print-ir-after."""
    arg_parser: argparse.ArgumentParser
    """The parser of the command line, for usage errors found after parsing."""

    version_format = (
        f"pypto-opt {version('pypto-mlir')} built on xdsl version {{xdsl_version}}"
    )

    def __init__(self, args: Sequence[str] | None = None):
        self.multiverse = load_multiverse()
        super().__init__(description="pypto-mlir modular optimizer driver", args=args)
        if self.args.verify_diagnostics and self.args.xdsl_verify_diagnostics:
            self.arg_parser.error(
                "--verify-diagnostics and --xdsl-verify-diagnostics exclude each other"
            )

    # Registration: from the multiverse loaded once, instead of once per kind.

    def register_all_dialects(self) -> None:
        for name, factory in self.multiverse.all_dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_frontends(self) -> None:
        for name, factory in self.multiverse.all_frontends.items():
            self.available_frontends.setdefault(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in self.multiverse.all_passes.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        for name, factory in self.multiverse.all_targets.items():
            self.available_targets.setdefault(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.prog = TOOL_NAME
        # Same flags as xdsl-opt, different meaning or a shorter help text.
        _set_help(
            arg_parser,
            "--passes",
            "passes to run, e.g. 'canonicalize,cse' or 'pypto-cleanup{cse=false}'; "
            "the list is at the end of --help",
        )
        _set_help(
            arg_parser,
            "--verify-diagnostics",
            "check the emitted diagnostics against the '// expected-error {{...}}' "
            "(-warning, -remark, -note) comments of the input, as MLIR does; exit 1 "
            "on any mismatch",
        )
        _set_help(
            arg_parser,
            "--parsing-diagnostics",
            "print a parse error to stdout in xDSL's layout, in place of the "
            "chunk's output, and count the chunk as a success (xDSL's flag)",
        )
        arg_parser.add_argument(
            "--xdsl-verify-diagnostics",
            action="store_true",
            help="xdsl-opt's --verify-diagnostics, for test suites written for it: "
            "print a failing verifier's or pass's exception to stdout, in place of "
            "the chunk's output, and count the chunk as a success",
        )
        arg_parser.add_argument(
            "--mlir-print-ir-before-all",
            action="store_true",
            help="print the IR to stderr before every pass",
        )
        arg_parser.add_argument(
            "--mlir-print-ir-after-all",
            action="store_true",
            help="print the IR to stderr after every pass",
        )
        arg_parser.add_argument(
            "--mlir-print-ir-before",
            action="append",
            default=[],
            metavar="PASS",
            help="print the IR to stderr before the named passes (comma-separated; "
            "repeatable)",
        )
        arg_parser.add_argument(
            "--mlir-print-ir-after",
            action="append",
            default=[],
            metavar="PASS",
            help="print the IR to stderr after the named passes (comma-separated; "
            "repeatable)",
        )
        arg_parser.add_argument(
            "--mlir-timing",
            action="store_true",
            help="print the wall time of parsing, each pass, verification and "
            "printing to stderr",
        )
        arg_parser.add_argument(
            "--debug",
            action="store_true",
            help="show the Python traceback of internal errors",
        )
        self.arg_parser = arg_parser
        base_format_help = arg_parser.format_help
        arg_parser.format_help = lambda: base_format_help() + pass_catalogue()

    def setup_pipeline(self) -> None:
        """The pipeline is built in `run`, where its errors become diagnostics."""

    # Running.

    def run(self) -> int:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Process the input; return the exit status."""
        self.sources = SourceManager()
        self.printer = DiagnosticPrinter(sys.stderr, self.sources, TOOL_NAME)
        self.timing = TimingReport() if self.args.mlir_timing else None
        try:
            passes = self._build_pipeline()
            source = read_source(self.args.input_file)
        except DiagnosticError as error:
            self.printer(error.diagnostic)
            return 1
        self.sources.add(source.name, source.text)

        failed = False
        # Standard output gets each chunk's result as soon as it is done, so that
        # with `2>&1` a chunk's diagnostics come after the `// -----` before it,
        # as with mlir-opt and xdsl-opt; a file is written at the end.
        to_file = self.args.output_file is not None
        output: IO[str] = StringIO() if to_file else sys.stdout
        try:
            for index, chunk in enumerate(
                split_source(source, self.args.split_input_file)
            ):
                if index > 0:
                    output.write("// -----\n")
                    output.flush()
                failed |= not self._process_chunk(chunk, source, passes, output)
                output.flush()
        except ShrinkException:
            print("Success, can shrink")
            return 0
        if self.timing is not None:
            sys.stderr.write(self.timing.render())
        if to_file and not self._write_output(output.getvalue()):
            return 1
        if self.args.shrink:
            print("Failure, can't shrink")
            return 1
        return 1 if failed else 0

    def _build_pipeline(self) -> list[ModulePass]:
        self.sources.add(PIPELINE_SOURCE_NAME, self.args.passes)
        passes = expand_pipelines(
            build_pass_pipeline(self.args.passes, self.available_passes)
        )
        for option in ("mlir_print_ir_before", "mlir_print_ir_after"):
            names = {
                n for value in getattr(self.args, option) for n in value.split(",")
            }
            flag = "--" + option.replace("_", "-")
            for name in sorted(names):
                if name not in self.available_passes:
                    problem = "does not refer to a registered pass"
                elif issubclass(self.available_passes[name](), PipelinePass):
                    # Pipelines run as their member passes; name one of those.
                    problem = "is a pipeline; name one of its passes"
                else:
                    continue
                raise DiagnosticError(
                    Diagnostic(Severity.ERROR, f"{flag}: '{name}' {problem}")
                )
            setattr(self, option, names)
        return passes

    def _write_output(self, text: str) -> bool:
        """Write `text` to the `-o` file; whether that worked (else a diagnostic)."""
        try:
            with open(self.args.output_file, "w") as file:
                file.write(text)
        except OSError as error:
            self.printer(
                Diagnostic(
                    Severity.ERROR,
                    f"cannot open output file: {error.strerror or error}",
                    SourceLocation(self.args.output_file),
                )
            )
            return False
        return True

    def _process_chunk(
        self,
        chunk: SourceChunk,
        source: SourceFile,
        passes: list[ModulePass],
        output: IO[str],
    ) -> bool:
        """Parse, verify, transform and print one chunk; whether it went as expected."""
        verifier: DiagnosticVerifier | None = None
        handler: DiagnosticHandler = self.printer
        problems: list[Diagnostic] = []
        if self.args.verify_diagnostics:
            expectations, problems = parse_expectations(
                source.name, chunk.text, chunk.first_line
            )
            verifier = DiagnosticVerifier(source.name, expectations)
            handler = verifier

        succeeded = False
        with diagnostic_handler(handler), capture_op_errors():
            module: ModuleOp | None = None
            try:
                module = self._timed(
                    "parser", "Parser", lambda: self._parse(chunk, source)
                )
                self._verify(module)
                self._apply_passes(passes, module)
                text = self._timed(
                    "output", "Output", lambda: self.output_resulting_program(module)
                )
                output.write(text)
                succeeded = True
            except DiagnosticError as error:
                # A parse error proper, not an attribute verifier run by the parser.
                parse_error = module is None and not isinstance(
                    error.__cause__, DiagnosticException
                )
                if self.args.parsing_diagnostics and parse_error:
                    # xDSL's flag: the parse error, in xDSL's layout, where the
                    # chunk's output would be; the chunk counts as a success.
                    output.write(
                        xdsl_parse_error_text(
                            error.diagnostic, self.sources, error.__cause__
                        )
                    )
                    return True
                if self.args.xdsl_verify_diagnostics and not parse_error:
                    output.write(xdsl_exception_text(_xdsl_error(error, module)))
                    return True
                emit(error.diagnostic)
            except DiagnosticException as error:
                if self.args.xdsl_verify_diagnostics:
                    output.write(xdsl_exception_text(error))
                    return True
                emit(error_diagnostic(error, module))

        if verifier is None:
            return succeeded
        problems += verifier.finish()
        for problem in problems:
            self.printer(problem)
        return not problems

    def _timed(self, key: str, label: str, action: Callable[[], _T]) -> _T:
        start = time.perf_counter()
        try:
            return action()
        finally:
            if self.timing is not None:
                self.timing.add(key, label, time.perf_counter() - start)

    def _parse(self, chunk: SourceChunk, source: SourceFile) -> ModuleOp:
        spec = parse_spec(self._frontend(source))
        if spec.name == "mlir":
            allow_implicit = not (
                self.args.no_implicit_module
                or spec.parameters.get("no_implicit_module")
            )
            return parse_chunk(self.ctx, chunk, source.name, allow_implicit)
        try:
            module = self.parse_chunk(
                BytesIO(chunk.text.encode()), spec.name, chunk.first_line - 1
            )
        except ParseError as error:
            where = error.span.get_location()
            raise DiagnosticError(
                Diagnostic(
                    Severity.ERROR,
                    error.msg,
                    SourceLocation(
                        source.name, where.line + chunk.first_line - 1, where.col
                    ),
                )
            ) from error
        if module is None:
            raise DiagnosticError(
                Diagnostic(
                    Severity.ERROR,
                    f"frontend '{spec.name}' produced no module",
                    SourceLocation(source.name),
                )
            )
        return module

    def _frontend(self, source: SourceFile) -> str:
        """`-f`, else the frontend registered for the file extension, else mlir."""
        if self.args.frontend:
            return self.args.frontend
        extension = source.name.rpartition(".")[2] if "." in source.name else ""
        return extension if extension in self.available_frontends else "mlir"

    def _verify(self, module: ModuleOp) -> None:
        if not self.args.disable_verify:
            self._timed("verifier", "Verifier", lambda: verify(module))

    def _apply_passes(self, passes: list[ModulePass], module: ModuleOp) -> None:
        for index, pass_ in enumerate(passes):
            if (
                self.args.mlir_print_ir_before_all
                or pass_.name in self.mlir_print_ir_before
            ):
                self._dump_ir("Before", pass_, module)
            start = time.perf_counter()
            self._timed(
                f"pass{index}",
                type(pass_).__name__,
                lambda pass_=pass_: pass_.apply(self.ctx, module),
            )
            if self.args.time_passes:
                # xDSL's flag, with xDSL's wording, on stdout.
                print(f"Pass {pass_.name} took {time.perf_counter() - start} seconds")
            self._verify(module)
            if (
                self.args.mlir_print_ir_after_all
                or pass_.name in self.mlir_print_ir_after
            ):
                self._dump_ir("After", pass_, module)
            if self.args.print_between_passes and index + 1 < len(passes):
                # xDSL's flag, with xDSL's wording, on stdout.
                print(f"IR after {pass_.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")

    def _dump_ir(self, when: str, pass_: ModulePass, module: ModuleOp) -> None:
        """Print the IR to stderr under MLIR's `IR Dump` header."""
        stream: IO[str] = sys.stderr
        stream.write(f"// -----// IR Dump {when} {_pass_label(pass_)} //----- //\n")
        printer = Printer(
            stream=stream,
            print_generic_format=self.args.print_op_generic,
            print_debuginfo=self.args.print_debuginfo,
        )
        printer.print_op(module)
        stream.write("\n\n\n")
        stream.flush()


def main(args: Sequence[str] | None = None) -> int:
    """Run `pypto-opt` with `args` (default: the command line); return the exit status."""
    argv = list(sys.argv[1:] if args is None else args)
    # Python hides DeprecationWarnings outside __main__; xdsl-opt shows those of
    # xDSL and of plugin passes, and so does pypto-opt.
    warnings.filterwarnings("default", category=DeprecationWarning)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    debug = "--debug" in argv
    try:
        return PyptoOptMain(argv).run()
    except PluginLoadError as error:
        if debug:
            traceback.print_exception(error)
        print(f"{TOOL_NAME}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return closed_stdout()
    except ArgSpecParseError as error:
        # A malformed -t/-f spec, rejected by xDSL while reading the arguments.
        print(f"{TOOL_NAME}: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        return report_internal_error(TOOL_NAME, error, debug)


if __name__ == "__main__":
    sys.exit(main())
