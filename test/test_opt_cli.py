"""Unit tests of pypto-opt's pieces: locations, diagnostics, --verify-diagnostics,
the -p parser, pipelines, and the driver's exit statuses (run in-process).

The lit tests in test/filecheck/cli show the same behaviour end to end.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import arith, func, test
from xdsl.dialects.builtin import (
    Builtin,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.exceptions import PassFailedException

from pypto_mlir.cli import opt
from pypto_mlir.cli.diagnostics import (
    DiagnosticVerifier,
    SourceManager,
    parse_expectations,
    render,
)
from pypto_mlir.cli.opt import TimingReport, main
from pypto_mlir.cli.pass_pipeline import build_pass_pipeline, parse_pass_pipeline
from pypto_mlir.cli.source import SourceChunk, SourceFile, parse_chunk, split_source
from pypto_mlir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    SourceLocation,
    capture_op_errors,
    diagnostic_handler,
    emit_remark,
    error_diagnostic,
    error_op,
    op_error,
    op_location,
    verify,
)
from pypto_mlir.pipelines import (
    CleanupPipeline,
    LowerPipeline,
    PipelinePass,
    expand_pipelines,
    pass_by_name,
)


def _context() -> Context:
    ctx = Context()
    for dialect in (Builtin, func.Func, arith.Arith, test.Test):
        ctx.load_dialect(dialect)
    return ctx


def _loc(file: str, line: int, column: int) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(column))


# Source splitting and locations.


@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b c", "", "// x"]), max_size=4),
        min_size=1,
        max_size=5,
    )
)
def test_split_source_keeps_file_line_numbers(pieces: list[list[str]]) -> None:
    text = "\n// -----\n".join("\n".join(piece) for piece in pieces)
    file_lines = text.split("\n")
    chunks = split_source(SourceFile("f.mlir", text), split=True)
    assert len(chunks) == len(pieces)
    for chunk in chunks:
        for offset, line in enumerate(chunk.text.split("\n")):
            assert file_lines[chunk.first_line - 1 + offset] == line


def test_split_marker_must_be_a_whole_line() -> None:
    text = "a\n// -----// IR Dump After X //----- //\nb\n// -----\nc"
    chunks = split_source(SourceFile("f.mlir", text), split=True)
    assert [c.first_line for c in chunks] == [1, 5]


def test_parsed_ops_carry_their_file_position() -> None:
    text = "func.func @f(%a: i32) {\n  %0 = arith.addi %a, %a : i32\n  func.return\n}\n"
    module = parse_chunk(_context(), SourceChunk(text, 10), "k.mlir")
    function = module.body.block.first_op
    assert isinstance(function, func.FuncOp)
    add = function.body.block.first_op
    assert isinstance(add, arith.AddiOp)
    assert op_location(function) == SourceLocation("k.mlir", 10, 1)
    assert op_location(add) == SourceLocation("k.mlir", 11, 3)
    assert op_location(module) == SourceLocation("k.mlir", 10, 1)


def test_explicit_location_is_kept() -> None:
    text = '"test.op"() : () -> () loc("model.py":7:9)\n'
    module = parse_chunk(_context(), SourceChunk(text, 1), "k.mlir")
    op = module.body.block.first_op
    assert op is not None
    assert op_location(op) == SourceLocation("model.py", 7, 9)


def test_parse_error_is_a_located_diagnostic() -> None:
    text = "\n\n  %0 = arith.constant : i32\n"
    with pytest.raises(DiagnosticError) as caught:
        parse_chunk(_context(), SourceChunk(text, 5), "k.mlir")
    location = caught.value.diagnostic.location
    assert location == SourceLocation("k.mlir", 7, 23)


def test_op_without_location_is_reported_at_its_parent() -> None:
    text = "func.func @f() {\n  func.return\n}\n"
    module = parse_chunk(_context(), SourceChunk(text, 1), "k.mlir")
    function = module.body.block.first_op
    assert isinstance(function, func.FuncOp)
    created = test.TestOp()
    function.body.block.insert_op_before(created, function.body.block.first_op)
    assert op_location(created) == SourceLocation("k.mlir", 1, 1)


# Verification and errors raised by passes.


def test_verify_names_the_innermost_failing_op() -> None:
    text = "func.func @f(%a: i32) -> i64 {\n  func.return %a : i32\n}\n"
    module = parse_chunk(_context(), SourceChunk(text, 1), "k.mlir")
    with pytest.raises(DiagnosticError) as caught:
        verify(module)
    diagnostic = caught.value.diagnostic
    assert diagnostic.location == SourceLocation("k.mlir", 2, 3)
    assert diagnostic.message.startswith("'func.return' op Expected arguments")


def test_capture_op_errors_finds_the_op_of_a_pattern_error() -> None:
    op = test.TestOp()
    error = PassFailedException("no")
    with capture_op_errors(), pytest.raises(PassFailedException):
        op.emit_error("wrapped", error)
    assert error_op(error) is op
    # Outside the block, xDSL's method is back.
    assert Operation.emit_error.__qualname__ == "Operation.emit_error"


def test_an_op_attached_first_is_not_overwritten() -> None:
    inner, outer = test.TestOp(), test.TestOp()
    error = op_error(inner, "inner problem")
    with capture_op_errors(), pytest.raises(PassFailedException):
        outer.emit_error("wrapped", error)
    assert error_op(error) is inner


def test_remarks_go_to_the_installed_handler() -> None:
    received: list[Diagnostic] = []
    op = test.TestOp()
    op.location = _loc("k.mlir", 3, 4)
    with diagnostic_handler(received.append):
        emit_remark(op, "tile sizes 64x64")
    assert received == [
        Diagnostic(Severity.REMARK, "tile sizes 64x64", SourceLocation("k.mlir", 3, 4))
    ]


def test_remark_without_handler_goes_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    op = test.TestOp()
    op.location = _loc("k.mlir", 2, 1)
    emit_remark(op, "chosen")
    assert capsys.readouterr().err == "k.mlir:2:1: remark: chosen\n"


# Rendering.


def test_render_puts_the_caret_under_the_column_keeping_tabs() -> None:
    sources = SourceManager()
    sources.add("k.mlir", "first\n\t  %x = op\n")
    diagnostic = Diagnostic(
        Severity.ERROR, "bad", SourceLocation("k.mlir", 2, 4), length=2
    )
    assert (
        render(diagnostic, sources, "tool")
        == "k.mlir:2:4: error: bad\n\t  %x = op\n\t  ^~\n"
    )


def test_render_without_location_names_the_tool() -> None:
    assert (
        render(Diagnostic(Severity.ERROR, "oops"), SourceManager(), "tool")
        == "tool: error: oops\n"
    )


def test_render_of_a_file_without_source_shows_no_caret() -> None:
    diagnostic = Diagnostic(Severity.WARNING, "w", SourceLocation("other.py", 3, 1))
    assert render(diagnostic, SourceManager(), "tool") == "other.py:3:1: warning: w\n"


# --verify-diagnostics.


def test_expectation_designators_follow_mlir() -> None:
    # A line holding a designator never is the target of @above/@below.
    text = "\n".join(
        [
            "op1",  # 11
            "// expected-error @above {{a}}",  # 12 -> 11
            "// expected-note @below {{b}}",  # 13 -> 15
            "// expected-remark @below {{c}}",  # 14 -> 15
            "op2",  # 15
            "op3 // expected-warning {{d}}",  # 16
            "// expected-error @+2 {{e}}",  # 17 -> 19
            "// expected-error @-3 {{f}}",  # 18 -> 15
            "// expected-error @above {{h}}",  # 19 -> 15
            "// expected-error-re @below {{g {{[0-9]+}}}}",  # 20 -> dangling
        ]
    )
    expectations, errors = parse_expectations("k.mlir", text, first_line=11)
    assert errors == []
    assert [(e.severity.value, e.text, e.line) for e in expectations] == [
        ("error", "a", 11),
        ("note", "b", 15),
        ("remark", "c", 15),
        ("warning", "d", 16),
        ("error", "e", 19),
        ("error", "f", 15),
        ("error", "h", 15),
        ("error", "g {{[0-9]+}}", 21),
    ]
    regex = expectations[-1]
    assert regex.matches("g 42 h")
    assert not regex.matches("g x")
    assert expectations[0].location == SourceLocation("k.mlir", 12, 4)


def test_an_invalid_regex_is_an_error() -> None:
    _, errors = parse_expectations("k.mlir", "// expected-error-re {{{{[}}}}", 1)
    assert len(errors) == 1
    assert errors[0].message.startswith("invalid regex")


def test_verifier_reports_both_sides() -> None:
    expectations, _ = parse_expectations(
        "k.mlir", "x // expected-error {{right text}}\ny // expected-warning {{w}}", 1
    )
    verifier = DiagnosticVerifier("k.mlir", expectations)
    verifier(
        Diagnostic(
            Severity.ERROR, "the right text here", SourceLocation("k.mlir", 1, 1)
        )
    )
    verifier(Diagnostic(Severity.REMARK, "w", SourceLocation("k.mlir", 2, 1)))
    verifier(Diagnostic(Severity.ERROR, "elsewhere", SourceLocation("other.py", 1, 1)))
    messages = [p.message for p in verifier.finish()]
    assert messages == [
        "'remark' diagnostic emitted when expecting a 'warning'",
        "unexpected error: elsewhere",
        'expected warning "w" was not produced',
    ]


def test_verifier_checks_notes_too() -> None:
    expectations, _ = parse_expectations("k.mlir", "x // expected-error {{e}}", 1)
    verifier = DiagnosticVerifier("k.mlir", expectations)
    note = Diagnostic(Severity.NOTE, "n", SourceLocation("k.mlir", 1, 1))
    verifier(Diagnostic(Severity.ERROR, "e", SourceLocation("k.mlir", 1, 1), [note]))
    assert [p.message for p in verifier.finish()] == ["unexpected note: n"]


# The -p parser.


def test_pipeline_values_are_typed() -> None:
    (entry,) = parse_pass_pipeline('p{a=1 b=2.5 c=true d=x e="quoted text" f=1,2,3 g}')
    values = {key: value for key, (_, value) in entry.options.items()}
    assert values == {
        "a": (1,),
        "b": (2.5,),
        "c": (True,),
        "d": ("x",),
        "e": ("quoted text",),
        "f": (1, 2, 3),
        "g": (),
    }
    assert entry.options["e"][0].start == 23


@dataclass(frozen=True)
class _OptionsPass(ModulePass):
    name = "options-pass"
    sizes: tuple[int, ...] = (1,)
    scale: float | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


def test_pipeline_builds_passes_with_options() -> None:
    available = {
        "options-pass": lambda: _OptionsPass,
        "pypto-cleanup": lambda: CleanupPipeline,
    }
    passes = build_pass_pipeline(
        "options-pass{sizes=4,8 scale=0.5},pypto-cleanup{cse=false}", available
    )
    assert passes == [_OptionsPass((4, 8), 0.5), CleanupPipeline(cse=False)]


def test_an_integer_fills_a_float_option() -> None:
    """`sparse-b-ranges-density=1` (the largest density) was refused as
    'expected float'; mlir-opt reads a double option from `1` too."""
    available = {"options-pass": lambda: _OptionsPass}
    passes = build_pass_pipeline("options-pass{scale=1}", available)
    assert passes == [_OptionsPass((1,), 1.0)]
    assert isinstance(passes[0].scale, float)
    density = build_pass_pipeline(
        "pypto-lower{target=tiny sparse-b-ranges-density=1}",
        {"pypto-lower": lambda: LowerPipeline},
    )
    assert density == [LowerPipeline(target="tiny", sparse_b_ranges_density=1.0)]
    with pytest.raises(DiagnosticError, match=r"expected tuple\[int, \.\.\.\]"):
        build_pass_pipeline("options-pass{sizes=1.0}", available)


@pytest.mark.parametrize(
    ("pipeline", "column", "message"),
    [
        ("options-pass,nope", 14, "'nope' does not refer to a registered pass"),
        (
            "options-pass{size=1}",
            14,
            "pass 'options-pass' has no option 'size' (its options: sizes, scale)",
        ),
        ("options-pass{sizes=a}", 14, "invalid value 'a' for option 'sizes'"),
        ("options-pass{scale=x}", 14, "expected float | None"),
        ("options-pass,", 14, "expected a pass name, got end of pipeline"),
    ],
)
def test_pipeline_errors_point_into_the_text(
    pipeline: str, column: int, message: str
) -> None:
    with pytest.raises(DiagnosticError) as caught:
        build_pass_pipeline(pipeline, {"options-pass": lambda: _OptionsPass})
    diagnostic = caught.value.diagnostic
    assert diagnostic.location == SourceLocation("<pass-pipeline>", 1, column)
    assert message in diagnostic.message


# Pipelines.


@dataclass(frozen=True)
class _Outer(PipelinePass):
    name = "outer"
    cse: bool = True

    def member_passes(self) -> tuple[ModulePass, ...]:
        return (CleanupPipeline(cse=self.cse), pass_by_name("dce"))


def test_pipelines_expand_recursively_and_forward_options() -> None:
    names = [p.name for p in expand_pipelines([_Outer(cse=False), pass_by_name("cse")])]
    assert names == ["canonicalize", "dce", "dce", "cse"]


def test_pass_by_name_rejects_unknown_passes() -> None:
    with pytest.raises(ValueError, match="not a registered pass"):
        pass_by_name("no-such-pass")


def test_cleanup_pipeline_runs_its_members() -> None:
    text = (
        "func.func @f(%a: i32) -> i32 {\n  %0 = arith.addi %a, %a : i32\n"
        "  %1 = arith.addi %a, %a : i32\n  %2 = arith.muli %0, %1 : i32\n"
        "  func.return %2 : i32\n}\n"
    )
    ctx = _context()
    module = parse_chunk(ctx, SourceChunk(text, 1), "k.mlir")
    CleanupPipeline().apply(ctx, module)
    adds = [op for op in module.walk() if isinstance(op, arith.AddiOp)]
    assert len(adds) == 1


# The driver, in-process.


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "input.mlir"
    path.write_text(text)
    return str(path)


def test_main_succeeds_and_prints_the_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "func.func @f() {\n  func.return\n}\n")
    assert main([path, "-p", "pypto-cleanup"]) == 0
    captured = capsys.readouterr()
    assert "func.func @f()" in captured.out
    assert captured.err == ""


def test_main_reports_a_pass_error_at_the_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path,
        'func.func @f() {\n  "test.op"() {test.diagnostic = "error: no"} : () -> ()\n  func.return\n}\n',
    )
    assert main([path, "-p", "pypto-test-diagnostics"]) == 1
    assert capsys.readouterr().err.startswith(f"{path}:2:3: error: no\n")


def test_main_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "func.func @f() {\n  func.return\n}\n")
    output = tmp_path / "out.mlir"
    assert main([path, "-o", str(output)]) == 0
    assert "func.func @f()" in output.read_text()
    assert capsys.readouterr().out == ""


def test_main_internal_error_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, '"test.op"() {test.diagnostic = "crash: bug"} : () -> ()\n')
    assert main([path, "-p", "pypto-test-diagnostics"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "pypto-opt: internal error: RuntimeError: bug (please report this; rerun with "
        "--debug for the traceback)\n"
    )


def test_main_reports_a_broken_plugin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken() -> Universe:
        raise ValueError("Duplicate definition of tv in ['a', 'b'].")

    monkeypatch.setattr(opt.Universe, "get_multiverse", staticmethod(broken))
    assert main(["--help"]) == 1
    assert capsys.readouterr().err == (
        "pypto-opt: error: cannot load the xdsl.universe plugins: ValueError: "
        "Duplicate definition of tv in ['a', 'b'].\n"
    )


def test_main_argument_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--no-such-flag"])
    assert caught.value.code == 2
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err


def test_timing_report_shape() -> None:
    report = TimingReport()
    report.add("parser", "Parser", 0.25)
    report.add("pass0", "CSE", 0.125)
    report.add("pass0", "CSE", 0.125)
    lines = report.render().split("\n")
    assert lines[0] == "===" + "-" * 73 + "==="
    assert lines[1].strip() == "... Execution time report ..."
    assert lines[5] == "  ----Wall Time----  ----Name----"
    assert lines[6].endswith("  Parser") and lines[6].startswith("    0.2500 (")
    assert lines[7].startswith("    0.2500 (") and lines[7].endswith("  CSE")
    assert lines[9].endswith("(100.0%)  Total")


def test_diagnostic_str_is_mlirs_first_line() -> None:
    assert (
        str(Diagnostic(Severity.ERROR, "m", SourceLocation("f", 1, 2)))
        == "f:1:2: error: m"
    )
    assert str(SourceLocation("f")) == "f"
    assert str(Diagnostic(Severity.NOTE, "m")) == "note: m"


def test_module_op_fallback_for_errors_without_an_op() -> None:
    module = ModuleOp([])
    module.location = _loc("k.mlir", 1, 1)
    diagnostic = error_diagnostic(PassFailedException("failed"), module)
    assert diagnostic.location == SourceLocation("k.mlir", 1, 1)
    assert diagnostic.message == "failed"
