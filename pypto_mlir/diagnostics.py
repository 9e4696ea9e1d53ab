"""Diagnostics attached to operations: errors, warnings, remarks and notes.

MLIR reports every problem as a diagnostic (a severity, a message, a source location
and attached notes) handed to a handler: `mlir-opt` prints it, `--verify-diagnostics`
checks it against `expected-*` comments. xDSL has no such engine, so this module
provides one for pypto-mlir:

- passes report non-fatal findings with `emit_remark(op, ...)` / `emit_warning(op, ...)`;
- passes fail with `raise op_error(op, "...")` (a `PassFailedException` that remembers
  its op, so the driver prints the op's `FILE:LINE:COL`);
- `verify(module)` runs xDSL's verifiers and names the op that failed;
- a driver installs a handler with `diagnostic_handler(...)`; without one,
  diagnostics are printed to stderr.

Locations come from `Operation.location`: `pypto-opt` gives every parsed op a
`FileLineColLoc` of its position in the input (explicit `loc(...)` wins).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from typing import NoReturn, TypeVar

from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    ModuleOp,
    NameLoc,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

from pypto_mlir.xdsl_verifier_gaps import precheck


class Severity(Enum):
    """How serious a diagnostic is; the value is the word MLIR prints."""

    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"
    NOTE = "note"


@dataclass(frozen=True)
class SourceLocation:
    """A place in a source file. Line and column are 1-based; 0 means unknown."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line == 0:
            return self.file
        if self.column == 0:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"


@dataclass
class Diagnostic:
    """One message about one place, with notes that elaborate on it."""

    severity: Severity
    message: str
    location: SourceLocation | None = None
    notes: list[Diagnostic] = field(default_factory=list["Diagnostic"])
    length: int = 1
    """How many characters from the location the caret line underlines."""

    def __str__(self) -> str:
        """The first line MLIR prints: `LOC: SEVERITY: MESSAGE`."""
        prefix = f"{self.location}: " if self.location is not None else ""
        return f"{prefix}{self.severity.value}: {self.message}"


class DiagnosticError(Exception):
    """A failure already described by a diagnostic; raised to stop processing."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic


def location_of(location: Attribute) -> SourceLocation | None:
    """The file position a builtin location attribute points at, if any."""
    match location:
        case FileLineColLoc():
            return SourceLocation(
                location.filename.data, location.line.data, location.column.data
            )
        case NameLoc():
            return location_of(location.location)
        case CallSiteLoc():
            return location_of(location.callee)
        case FusedLoc():
            for inner in location.locations.data:
                if (found := location_of(inner)) is not None:
                    return found
            return None
        case _:
            return None


def op_location(op: Operation) -> SourceLocation | None:
    """Where `op` is in the source.

    Ops created by passes often carry no location; they are reported at the nearest
    enclosing op that has one, which is where the user can look.
    """
    current: Operation | None = op
    while current is not None:
        if (found := location_of(current.location)) is not None:
            return found
        current = current.parent_op()
    return None


def op_diagnostic(
    severity: Severity, op: Operation, message: str, notes: Iterable[Diagnostic] = ()
) -> Diagnostic:
    """A diagnostic located at `op`."""
    return Diagnostic(severity, message, op_location(op), list(notes))


def note(op: Operation, message: str) -> Diagnostic:
    """A note at `op`, to attach to another diagnostic."""
    return op_diagnostic(Severity.NOTE, op, message)


DiagnosticHandler = Callable[[Diagnostic], None]

_current_handler: ContextVar[DiagnosticHandler | None] = ContextVar(
    "pypto_diagnostic_handler", default=None
)


@contextmanager
def diagnostic_handler(handler: DiagnosticHandler) -> Iterator[None]:
    """Send every diagnostic emitted inside the block to `handler`."""
    token = _current_handler.set(handler)
    try:
        yield
    finally:
        _current_handler.reset(token)


def emit(diagnostic: Diagnostic) -> None:
    """Hand `diagnostic` to the current handler (stderr when there is none)."""
    handler = _current_handler.get()
    if handler is not None:
        handler(diagnostic)
        return
    print(diagnostic, file=sys.stderr)
    for attached in diagnostic.notes:
        print(attached, file=sys.stderr)


def emit_warning(op: Operation, message: str, notes: Iterable[Diagnostic] = ()) -> None:
    """Report something suspicious about `op` that does not stop compilation."""
    emit(op_diagnostic(Severity.WARNING, op, message, notes))


def emit_remark(op: Operation, message: str, notes: Iterable[Diagnostic] = ()) -> None:
    """Report a decision a pass took about `op` (e.g. the tile sizes it chose)."""
    emit(op_diagnostic(Severity.REMARK, op, message, notes))


_ErrorT = TypeVar("_ErrorT", bound=BaseException)


def attach_op(
    error: _ErrorT, op: Operation, notes: Iterable[Diagnostic] = ()
) -> _ErrorT:
    """Record that `error` is about `op`, unless an inner op was recorded already."""
    if getattr(error, "diagnostic_op", None) is None:
        error.diagnostic_op = op  # pyright: ignore[reportAttributeAccessIssue]
    if notes:
        existing: list[Diagnostic] = getattr(error, "diagnostic_notes", [])
        error.diagnostic_notes = [*existing, *notes]  # pyright: ignore[reportAttributeAccessIssue]
    return error


def op_error(
    op: Operation,
    message: str,
    notes: Iterable[Diagnostic] = (),
    error_type: type[DiagnosticException] = PassFailedException,
) -> DiagnosticException:
    """An exception for a pass to raise: `raise op_error(op, "does not fit in ub")`."""
    return attach_op(error_type(message), op, notes)


def error_op(error: BaseException) -> Operation | None:
    """The op recorded on `error` by `attach_op`, if any."""
    op = getattr(error, "diagnostic_op", None)
    return op if isinstance(op, Operation) else None


def error_diagnostic(error: BaseException, fallback: Operation | None) -> Diagnostic:
    """Describe a `DiagnosticException` as an error at its op (or at `fallback`)."""
    op = error_op(error) or fallback
    location = op_location(op) if op is not None else None
    notes: list[Diagnostic] = list(getattr(error, "diagnostic_notes", []))
    return Diagnostic(Severity.ERROR, str(error), location, notes)


@contextmanager
def capture_op_errors() -> Iterator[None]:
    """Inside the block, errors that xDSL routes through `Operation.emit_error`
    remember their op (see `attach_op`).

    xDSL's pattern driver and interpreter catch any exception raised for an op and
    re-raise it through `op.emit_error`, which keeps the op only in a printed note.
    Wrapping that method is the one place where the op is still known.
    """
    original = Operation.emit_error

    def emit_error(
        self: Operation, message: str, underlying_error: Exception
    ) -> NoReturn:
        with suppress(AttributeError):  # an exception type with __slots__
            attach_op(underlying_error, self)
        original(self, message, underlying_error)

    Operation.emit_error = emit_error
    try:
        yield
    finally:
        Operation.emit_error = original


def verify(op: Operation) -> None:
    """Verify `op` and everything nested in it: dominance first, then the ops'
    verifiers, innermost first.

    Raises `DiagnosticError` naming the op that failed, with MLIR's
    `'dialect.op' op MESSAGE` wording (xDSL's `Operation.verify` raises an
    exception that does not say which op failed). Iterative, so that deeply
    nested regions do not exhaust Python's stack.
    """
    verify_dominance(op)
    # A post-order walk: (op, its blocks, the ops of the block being walked).
    stack: list[tuple[Operation, Iterator[Block], Iterator[Operation] | None]] = [
        (op, _blocks(op), None)
    ]
    while stack:
        current, blocks, ops = stack[-1]
        if ops is not None:
            child = next(ops, None)
            if child is not None:
                stack.append((child, _blocks(child), None))
                continue
        block = next(blocks, None)
        if block is not None:
            _verify_block(current, block)
            stack[-1] = (current, blocks, iter(block.ops))
            continue
        stack.pop()
        _verify_op(current)


def _blocks(op: Operation) -> Iterator[Block]:
    return (block for region in op.regions for block in region.blocks)


def _verify_block(op: Operation, block: Block) -> None:
    region = block.parent
    if (
        block.first_op is None
        and region is not None
        and len(region.blocks) == 1
        and not op.has_trait(NoTerminator)
    ):
        raise _verify_error(
            op,
            "contains empty block in single-block region that expects at least a "
            "terminator",
        )


def _verify_op(op: Operation) -> None:
    problem = precheck(op)
    if problem is not None:
        raise _verify_error(op, problem)
    try:
        op.verify(verify_nested_ops=False)
    except DiagnosticException as error:
        failed = error_op(error) or op
        notes: list[Diagnostic] = list(getattr(error, "diagnostic_notes", []))
        raise _verify_error(failed, str(error), notes) from error


def _verify_error(
    op: Operation, message: str, notes: Iterable[Diagnostic] = ()
) -> DiagnosticError:
    """A verify error at `op` in MLIR's `'dialect.op' op MESSAGE` wording."""
    return DiagnosticError(
        op_diagnostic(Severity.ERROR, op, f"'{op.name}' op {message}", notes)
    )


def verify_dominance(root: Operation) -> None:
    """Check that every operand is defined before its use, as MLIR's verifier does
    ("operand #N does not dominate this use"); xDSL does not, and passes and
    interpreters assume it.

    A value dominates a use when it is defined earlier in the use's block or in
    a block enclosing it, or is an argument of one of those blocks. Uses in
    another block of the defining region (a CFG), in `builtin.module`'s body
    (a graph region) and in the regions of unregistered ops (which may be graph
    regions: MLIR's `mayBeGraphRegion`) are not checked.
    """
    positions: dict[Block, dict[Operation, int]] = {}
    stack = [root]
    while stack:
        op = stack.pop()
        for index, operand in enumerate(op.operands):
            problem = _dominance_problem(operand, op, positions)
            if problem is not None:
                raise DiagnosticError(
                    op_diagnostic(
                        Severity.ERROR,
                        op,
                        f"operand #{index} {problem}",
                        _definition_notes(operand),
                    )
                )
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend(reversed(list(block.ops)))


GRAPH_REGION_OPS = frozenset(
    {"equivalence.graph", "hw.module", "test.graph_region", "test.op"}
)
"""Ops besides `builtin.module` whose regions are graph regions (MLIR's
RegionKind::Graph; xDSL has no trait for it), where a value may be used before
the op that defines it. `test.graph_region` is one in MLIR's test dialect;
xDSL's catch-all `test.op` stands for any op, as an unregistered op does, whose
regions MLIR treats as possible graph regions (`mayBeGraphRegion`)."""


def _dominance_problem(
    value: SSAValue, user: Operation, positions: dict[Block, dict[Operation, int]]
) -> str | None:
    """Why `value` does not dominate its use by `user`, or None if it does."""
    if isinstance(value, BlockArgument):
        definition: Operation | None = None
        defining_block: Block | None = value.block
    elif isinstance(value, OpResult):
        definition = value.op
        defining_block = definition.parent_block()
    else:
        # xDSL's parser leaves a forward reference unresolved when the name is
        # defined only in a region nested in its user (`scf.for %i = %c0 ...`
        # with `%c0` defined in the loop body).
        return "is used but never defined where it is visible"
    if defining_block is None:
        return None
    ancestor: Operation | None = user
    while ancestor is not None:
        block = ancestor.parent_block()
        if block is defining_block:
            break
        if block is not None and block.parent is defining_block.parent:
            return None  # another block of the same region: a CFG, not checked
        ancestor = ancestor.parent_op()
    if ancestor is None:
        return "does not dominate this use"
    parent = defining_block.parent_op()
    if definition is None or isinstance(parent, ModuleOp):
        return None
    if parent is not None and (
        parent.name in GRAPH_REGION_OPS or isinstance(parent, UnregisteredOp)
    ):
        return None  # an unregistered op's regions may be graph regions (MLIR)
    if definition is ancestor:
        return "does not dominate this use"
    order = positions.get(defining_block)
    if order is None:
        order = positions[defining_block] = {
            op: i for i, op in enumerate(defining_block.ops)
        }
    return None if order[definition] < order[ancestor] else "does not dominate this use"


def _definition_notes(value: SSAValue) -> list[Diagnostic]:
    if isinstance(value, OpResult) and op_location(value.op) is not None:
        return [note(value.op, "operand defined here")]
    return []
