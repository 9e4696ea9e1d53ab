"""MLIR input for the command-line tools: reading, `// -----` splitting, parsing.

Parsing gives every op a `FileLineColLoc` of where it starts in the input, as MLIR
does, so that verifier and pass errors can name `FILE:LINE:COL`. Line numbers are
those of the original file, also for chunks of a split input.
"""

from __future__ import annotations

import contextlib
import re
import struct
import sys
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
)
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRLexer

from pypto_mlir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    SourceLocation,
    verify,
)
from pypto_mlir.universe import default_context

STDIN_NAME = "<stdin>"
"""The file name diagnostics use for standard input (as MLIR does)."""

SPLIT_MARKER = "// -----"
"""A line holding only this separates the chunks of `--split-input-file`."""

# xDSL 0.75's string literal pattern nests a `+` inside a `*` (`"(?:[^"...]+|...)*"`):
# on a string with no closing quote the regex engine tries every way of
# splitting its characters into runs, 2**length of them, so an unclosed
# 50-character string "hangs" the lexer (docs/upstream/xdsl-string-literal-hang.md).
# A possessive run (`++`, never given back) matches the same strings in linear time.
MLIRLexer._unescaped_characters_regex = re.compile(  # pyright: ignore[reportPrivateUsage]
    r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
)


@dataclass(frozen=True)
class SourceFile:
    """The decoded text of one input file."""

    name: str
    text: str

    def line(self, number: int) -> str | None:
        """Line `number` (1-based) without its newline, or None past the end."""
        lines = self.text.split("\n")
        if 1 <= number <= len(lines):
            return lines[number - 1].removesuffix("\r")
        return None


@dataclass(frozen=True)
class SourceChunk:
    """A piece of a source file processed on its own (the whole file if not split)."""

    text: str
    first_line: int
    """The line of the file on which the chunk starts (1-based)."""


def read_source(path: str | None) -> SourceFile:
    """Read and decode `path` (standard input if None).

    A UTF-8 byte-order mark at the start is skipped, as clang and most editors do
    (it is not part of the text; columns count from after it).
    Raises `DiagnosticError` for a file that cannot be opened or is not UTF-8.
    """
    name = STDIN_NAME if path is None else path
    try:
        if path is None:
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as file:
                data = file.read()
    except OSError as error:
        reason = error.strerror or str(error)
        raise DiagnosticError(
            Diagnostic(
                Severity.ERROR,
                f"cannot open input file: {reason}",
                SourceLocation(name),
            )
        ) from error
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        valid = data[: error.start].decode("utf-8")
        line = valid.count("\n") + 1
        column = len(valid) - (valid.rfind("\n") + 1) + 1
        raise DiagnosticError(
            Diagnostic(
                Severity.ERROR,
                f"input is not valid UTF-8 (byte 0x{data[error.start]:02x})",
                SourceLocation(name, line, column),
            )
        ) from error
    return SourceFile(name, text)


def split_source(source: SourceFile, split: bool) -> list[SourceChunk]:
    """The chunks of `source`: one, or one per `// -----`-separated piece."""
    if not split:
        return [SourceChunk(source.text, 1)]
    chunks: list[SourceChunk] = []
    current: list[str] = []
    first_line = 1
    for number, line in enumerate(source.text.split("\n"), start=1):
        if line.rstrip() == SPLIT_MARKER:
            chunks.append(SourceChunk("\n".join(current), first_line))
            current = []
            first_line = number + 1
        else:
            current.append(line)
    chunks.append(SourceChunk("\n".join(current), first_line))
    return chunks


@dataclass(frozen=True)
class LineMap:
    """Character positions of a parsed text as lines and columns of its file."""

    file_name: str
    line_starts: tuple[int, ...]
    first_line: int = 1

    @staticmethod
    def of(text: str, file_name: str, first_line: int = 1) -> LineMap:
        starts = (0, *(match.end() for match in re.finditer("\n", text)))
        return LineMap(file_name, starts, first_line)

    def location_at(self, position: int) -> SourceLocation:
        """The file location of character `position` of the text."""
        index = bisect_right(self.line_starts, position) - 1
        return SourceLocation(
            self.file_name,
            self.first_line + index,
            position - self.line_starts[index] + 1,
        )


class LocatingParser(Parser):
    """xDSL's MLIR parser, giving every op it parses the location where it starts.

    An explicit `loc(...)` in the input is kept, `loc(unknown)` included. Positions map to lines of the
    original file through `first_line`.
    """

    def __init__(self, ctx: Context, text: str, name: str, first_line: int = 1):
        super().__init__(ctx, text, name)
        self.lines = LineMap.of(text, name, first_line)
        self._text_length = len(text)

    def location_at(self, position: int) -> SourceLocation:
        """The file location of character `position` of the parsed text."""
        return self.lines.location_at(position)

    def _location_attr(self, position: int) -> FileLineColLoc:
        location = self.location_at(position)
        return FileLineColLoc(
            StringAttr(location.file), IntAttr(location.line), IntAttr(location.column)
        )

    @contextlib.contextmanager
    def _integers_checked(self, start: int) -> Iterator[None]:
        """xDSL builds attributes from parsed integers without checking them
        against their type: IntegerAttr raises ValueError, a dense array's
        struct.pack struct.error, Python's int() a ValueError past 4300 digits.
        Each becomes a parse error from `start` to here."""
        try:
            yield
        except (ValueError, OverflowError, struct.error) as error:
            raise ParseError(
                Span(start, self.pos, self.lexer.input), _integer_problem(error)
            ) from error

    def _parse_alias_def(self) -> None:
        # An alias (`!t = !tv.tensor<...>`) is parsed outside any op.
        with self._integers_checked(self.pos):
            super()._parse_alias_def()

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            with self._integers_checked(start):
                op = super().parse_operation()
        except DiagnosticException as error:
            # An attribute or type verifier failed inside this op: remember the
            # innermost op being parsed, the best place to point at.
            if not hasattr(error, "parse_position"):
                error.parse_position = start  # pyright: ignore[reportAttributeAccessIssue]
            raise
        if op.location is UNKNOWN_LOC:
            # No `loc(...)` in the text (an explicit `loc(unknown)` is a new
            # UnknownLoc, kept as mlir-opt keeps it).
            op.location = self._location_attr(start)
        return op

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if allow_implicit_module and self.pos >= self._text_length:
            # Only comments and whitespace: an empty module, as in MLIR.
            module = ModuleOp([])
        else:
            module = super().parse_module(allow_implicit_module)
        if module.location is UNKNOWN_LOC:
            module.location = self._location_attr(0)
        return module


def _integer_problem(error: Exception) -> str:
    """What an exception xDSL raised on a parsed integer says, as a message."""
    message = str(error)
    if isinstance(error, struct.error):
        return f"integer out of range for the element type of the array ({message})"
    if message.startswith("Exceeds the limit"):
        digits = re.search(r"value has (\d+) digits", message)
        count = f"{digits.group(1)} digits" if digits else "too many digits"
        return f"integer literal too long ({count}; at most {sys.get_int_max_str_digits()})"
    return message


def parse_error_diagnostic(
    error: ParseError, parser: LocatingParser | LineMap
) -> Diagnostic:
    """An xDSL parse error as a diagnostic at the file position of its span.

    Some xDSL errors carry only a context (" in block definition"): they say
    what was found there."""
    message = error.msg
    if not message or message[0].isspace():
        found = error.span.text.strip()
        what = f"'{found}'" if found else "end of input"
        message = f"unexpected {what}{message}"
    diagnostic = Diagnostic(
        Severity.ERROR,
        message.rstrip(),
        parser.location_at(error.span.start),
        length=max(1, error.span.end - error.span.start),
    )
    if isinstance(error, MultipleSpansParseError):
        for span, message in error.refs:
            diagnostic.notes.append(
                Diagnostic(
                    Severity.NOTE,
                    message or error.ref_text or "see here",
                    parser.location_at(span.start),
                    length=max(1, span.end - span.start),
                )
            )
    return diagnostic


MAX_NESTING = 256
"""The deepest nesting of brackets (attributes, types, regions) parsed. xDSL's
parser, printer and passes recurse once or more per level; `pypto-opt` and
`pypto-run` raise Python's recursion limit to `RECURSION_LIMIT`, which this depth
stays well within."""

RECURSION_LIMIT = 10_000

_NESTING_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*+"?|//[^\n]*+|->|>=|[(\[{<>}\])]')
"""What the nesting check looks at: strings and comments (skipped), the arrow and
`>=` (not brackets), brackets."""


def check_nesting(text: str, lines: LineMap) -> None:
    """Raise a located `DiagnosticError` where `text` nests deeper than
    `MAX_NESTING`: refused before parsing, instead of a `RecursionError` in
    whichever part of xDSL recurses first."""
    depth = 0
    for match in _NESTING_TOKEN.finditer(text):
        token = match.group()
        if token in "([{<":
            depth += 1
            if depth > MAX_NESTING:
                raise DiagnosticError(
                    Diagnostic(
                        Severity.ERROR,
                        f"nesting too deep: more than {MAX_NESTING} levels of "
                        "brackets, braces, parentheses and <>",
                        lines.location_at(match.start()),
                    )
                )
        elif token in ")]}>":
            depth = max(0, depth - 1)


def parse_chunk(
    ctx: Context,
    chunk: SourceChunk,
    file_name: str,
    allow_implicit_module: bool = True,
) -> ModuleOp:
    """Parse one chunk of MLIR text; raises `DiagnosticError` on malformed input."""
    check_nesting(chunk.text, LineMap.of(chunk.text, file_name, chunk.first_line))
    try:
        parser = LocatingParser(ctx, chunk.text, file_name, chunk.first_line)
    except ParseError as error:
        # xDSL's constructor lexes the first token: a file that is one
        # unexpected character fails here.
        lines = LineMap.of(chunk.text, file_name, chunk.first_line)
        raise DiagnosticError(parse_error_diagnostic(error, lines)) from error
    try:
        return parser.parse_module(allow_implicit_module)
    except ParseError as error:
        raise DiagnosticError(parse_error_diagnostic(error, parser)) from error
    except DiagnosticException as error:
        # Attribute and type verifiers run while parsing: report at the op that
        # holds the construct that failed.
        position = getattr(error, "parse_position", parser.pos)
        raise DiagnosticError(
            Diagnostic(Severity.ERROR, str(error), parser.location_at(position))
        ) from error


def load_module(path: str | None, ctx: Context | None = None) -> ModuleOp:
    """Read, parse and verify the MLIR file `path` (standard input if None).

    For tools other than `pypto-opt` (e.g. `pypto-run`): raises `DiagnosticError`
    for an unreadable file, malformed IR or a verifier failure; print it with
    `pypto_mlir.cli.diagnostics.render`.
    """
    source = read_source(path)
    module = parse_chunk(
        ctx or default_context(), SourceChunk(source.text, 1), source.name
    )
    verify(module)
    return module
