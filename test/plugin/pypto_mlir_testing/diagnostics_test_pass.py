"""`pypto-test-diagnostics`: a pass that exists to test how drivers report
diagnostics (like mlir-opt's `test-*` passes).

Every op with a `test.diagnostic = "KIND: MESSAGE"` attribute makes the pass report
MESSAGE at that op, where KIND is one of:

- `remark`, `warning`: emitted through `pypto_mlir.diagnostics`;
- `error`: raised as `op_error(op, MESSAGE)`;
- `pattern-error`: raised without an op from inside a rewrite pattern, so the driver
  must find the op itself (as for real passes built on xDSL's pattern driver);
- `crash`: a `RuntimeError`, i.e. a bug in a pass.

A `test.note = "MESSAGE"` attribute on the same op attaches a note to it.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.exceptions import PassFailedException

from pypto_mlir.diagnostics import Diagnostic, emit_remark, emit_warning, note, op_error

DIAGNOSTIC_ATTR = "test.diagnostic"
NOTE_ATTR = "test.note"


def _request(op: Operation) -> tuple[str, str] | None:
    attr = op.attributes.get(DIAGNOSTIC_ATTR)
    if not isinstance(attr, StringAttr):
        return None
    kind, _, message = attr.data.partition(": ")
    return kind, message


def _notes(op: Operation) -> list[Diagnostic]:
    attr = op.attributes.get(NOTE_ATTR)
    return [note(op, attr.data)] if isinstance(attr, StringAttr) else []


class _FailInPattern(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        request = _request(op)
        if request is not None and request[0] == "pattern-error":
            raise PassFailedException(request[1])


@dataclass(frozen=True)
class TestDiagnosticsPass(ModulePass):
    """Testing aid: report the diagnostics ops ask for in `test.diagnostic`."""

    name = "pypto-test-diagnostics"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            request = _request(inner)
            if request is None:
                continue
            kind, message = request
            match kind:
                case "remark":
                    emit_remark(inner, message, _notes(inner))
                case "warning":
                    emit_warning(inner, message, _notes(inner))
                case "error":
                    raise op_error(inner, message, _notes(inner))
                case "crash":
                    raise RuntimeError(message)
                case "pattern-error":
                    pass
                case _:
                    raise op_error(inner, f"unknown test.diagnostic kind '{kind}'")
        PatternRewriteWalker(_FailInPattern()).rewrite_module(op)
