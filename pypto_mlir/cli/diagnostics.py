"""Printing diagnostics in MLIR's format, and `--verify-diagnostics`.

A diagnostic prints as MLIR's source manager prints it::

    FILE:LINE:COL: error: MESSAGE
    <the source line>
    <spaces>^

`DiagnosticVerifier` implements MLIR's `--verify-diagnostics`: comments
`// expected-{error,warning,remark,note}[-re] [@+N|@-N|@above|@below] {{TEXT}}`
name the diagnostics a line must produce; TEXT is a substring of the message
(with `-re`, `{{...}}` groups inside it are regular expressions).
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.utils.exceptions import DiagnosticException, MultipleSpansParseError

from pypto_mlir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    SourceLocation,
)


class SourceManager:
    """The text of every input seen, to show the source line under a diagnostic."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def add(self, name: str, text: str) -> None:
        self._lines[name] = [line.removesuffix("\r") for line in text.split("\n")]

    def line(self, location: SourceLocation) -> str | None:
        lines = self._lines.get(location.file)
        if lines is None or not 1 <= location.line <= len(lines):
            return None
        return lines[location.line - 1]


def _caret_line(source_line: str, column: int, length: int) -> str:
    """`^~~~` under `length` characters of `source_line` from 1-based `column`."""
    start = min(max(column, 1), len(source_line) + 1) - 1
    # Keep tabs so that the caret lines up with the source line on any terminal.
    indent = "".join(c if c == "\t" else " " for c in source_line[:start])
    underline = max(1, min(length, len(source_line) - start))
    return indent + "^" + "~" * (underline - 1)


def render(diagnostic: Diagnostic, sources: SourceManager, tool: str) -> str:
    """The text MLIR prints for `diagnostic` and its notes (newline-terminated)."""
    location = diagnostic.location
    prefix = f"{location}: " if location is not None else f"{tool}: "
    text = f"{prefix}{diagnostic.severity.value}: {diagnostic.message}\n"
    if location is not None and location.column > 0:
        source_line = sources.line(location)
        if source_line is not None:
            text += source_line + "\n"
            text += _caret_line(source_line, location.column, diagnostic.length) + "\n"
    for attached in diagnostic.notes:
        text += render(attached, sources, tool)
    return text


@dataclass
class DiagnosticPrinter:
    """A diagnostic handler that prints to a stream and remembers whether an
    error was printed."""

    stream: TextIO
    sources: SourceManager
    tool: str
    error_count: int = 0

    def __call__(self, diagnostic: Diagnostic) -> None:
        if diagnostic.severity is Severity.ERROR:
            self.error_count += 1
        self.stream.write(render(diagnostic, self.sources, self.tool))
        self.stream.flush()


def xdsl_parse_error_text(
    diagnostic: Diagnostic, sources: SourceManager, error: BaseException | None = None
) -> str:
    """`diagnostic` as xdsl-opt's `--parsing-diagnostics` prints a `ParseError`:
    the location, the source line, `^` under the span and the message under them,
    then a blank line. For a `MultipleSpansParseError` (`error`, the one
    `diagnostic` was made from) its `ref_text` line, then each reference span with
    its message if it has one; other notes like the diagnostic."""
    text = _xdsl_span_text(diagnostic, sources, diagnostic.message)
    if isinstance(error, MultipleSpansParseError):
        if error.ref_text is not None:
            text += error.ref_text + "\n"
        for (_, message), attached in zip(error.refs, diagnostic.notes, strict=False):
            text += _xdsl_span_text(attached, sources, message) + "\n"
    else:
        for attached in diagnostic.notes:
            text += _xdsl_span_text(attached, sources, attached.message)
    return text + "\n"


def _xdsl_span_text(
    diagnostic: Diagnostic, sources: SourceManager, message: str | None
) -> str:
    location = diagnostic.location
    text = "" if location is None else f"{location}\n"
    source_line = None
    if location is not None and location.column > 0:
        source_line = sources.line(location)
    if source_line is None:
        return text + (f"{message}\n" if message else "")
    start = min(location.column - 1, len(source_line))  # pyright: ignore[reportOptionalMemberAccess]
    end = min(start + diagnostic.length, len(source_line))
    indent = " " * start
    text += f"{source_line}\n{indent}{'^' * max(end - start, 1)}\n"
    return text + (f"{indent}{message}\n" if message else "")


def xdsl_exception_text(error: Exception) -> str:
    """What xdsl-opt's `--verify-diagnostics` prints for `error`: the message of
    xDSL's exception and its notes (the module with the failing op marked), one
    per line; for a problem only pypto-mlir checks (dominance), its message."""
    cause = error.__cause__ if isinstance(error, DiagnosticError) else error
    if isinstance(cause, DiagnosticException):
        lines = [str(cause), *getattr(cause, "__notes__", [])]
    elif isinstance(error, DiagnosticError):
        lines = [error.diagnostic.message]
    else:
        lines = [str(error)]
    return "".join(f"{line}\n" for line in lines)


_EXPECTATION = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below))? *"
    r"\{\{(.*)\}\}"
)


@dataclass
class Expectation:
    """One `expected-*` comment: a diagnostic that line `line` must produce."""

    severity: Severity
    line: int
    text: str
    location: SourceLocation
    """Where the comment is, to point at it when it is not met."""
    pattern: re.Pattern[str] | None = None
    """For `expected-*-re`: the compiled pattern."""
    matched: bool = False

    def matches(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _regex_expectation(text: str) -> re.Pattern[str]:
    """`-re` text: literal except for `{{...}}` groups, which are regexes."""
    pieces = re.split(r"\{\{(.*?)\}\}", text)
    regex = "".join(
        piece if index % 2 else re.escape(piece) for index, piece in enumerate(pieces)
    )
    return re.compile(regex)


def parse_expectations(
    file: str, text: str, first_line: int = 1
) -> tuple[list[Expectation], list[Diagnostic]]:
    """The `expected-*` comments of `text`, which starts on line `first_line` of
    `file`, and errors for malformed ones (a `-re` pattern that does not compile).

    Follows MLIR: `@above` is the last line without a designator before the
    comment; `@below` the next one after it.
    """
    expectations: list[Expectation] = []
    errors: list[Diagnostic] = []
    waiting_for_next_line: list[Expectation] = []
    last_plain_line = first_line - 1
    lines = text.split("\n")
    for index, line in enumerate(lines):
        number = first_line + index
        match = _EXPECTATION.search(line)
        if match is None:
            for expectation in waiting_for_next_line:
                expectation.line = number
            waiting_for_next_line = []
            last_plain_line = number
            continue
        kind, is_regex, _, designator, message = match.groups()
        location = SourceLocation(file, number, match.start() + 1)
        expectation = Expectation(Severity(kind), number, message, location)
        if is_regex:
            try:
                expectation.pattern = _regex_expectation(message)
            except re.error as error:
                errors.append(
                    Diagnostic(
                        Severity.ERROR,
                        f"invalid regex in expected-{kind}-re: {error}",
                        location,
                        length=len(match.group(0)),
                    )
                )
                continue
        if designator == "above":
            expectation.line = last_plain_line
        elif designator == "below":
            # A dangling @below (no line after it) points past the chunk.
            expectation.line = first_line + len(lines)
            waiting_for_next_line.append(expectation)
        elif designator is not None:
            expectation.line = number + int(designator)
        expectations.append(expectation)
    return expectations, errors


@dataclass
class DiagnosticVerifier:
    """A diagnostic handler that checks diagnostics against expectations instead of
    printing them; `finish` returns the mismatches as errors to print."""

    file: str
    expectations: list[Expectation]
    problems: list[Diagnostic] = field(default_factory=list[Diagnostic])

    def __call__(self, diagnostic: Diagnostic) -> None:
        self._process(diagnostic)
        for attached in diagnostic.notes:
            self._process(attached)

    def _process(self, diagnostic: Diagnostic) -> None:
        location = diagnostic.location
        kind = diagnostic.severity.value
        if location is None or location.file != self.file or location.line == 0:
            self._unexpected(diagnostic)
            return
        near_miss: Expectation | None = None
        for expectation in self.expectations:
            if expectation.line != location.line or not expectation.matches(
                diagnostic.message
            ):
                continue
            if expectation.severity is diagnostic.severity:
                expectation.matched = True
                return
            near_miss = expectation
        if near_miss is not None:
            self.problems.append(
                Diagnostic(
                    Severity.ERROR,
                    f"'{kind}' diagnostic emitted when expecting a "
                    f"'{near_miss.severity.value}'",
                    near_miss.location,
                )
            )
            return
        self._unexpected(diagnostic)

    def _unexpected(self, diagnostic: Diagnostic) -> None:
        self.problems.append(
            Diagnostic(
                Severity.ERROR,
                f"unexpected {diagnostic.severity.value}: {diagnostic.message}",
                diagnostic.location,
                length=diagnostic.length,
            )
        )

    def finish(self) -> list[Diagnostic]:
        """All mismatches: unexpected diagnostics, then unmet expectations."""
        for expectation in self.expectations:
            if not expectation.matched:
                self.problems.append(
                    Diagnostic(
                        Severity.ERROR,
                        f'expected {expectation.severity.value} "{expectation.text}" '
                        "was not produced",
                        expectation.location,
                        length=len(expectation.text),
                    )
                )
        return self.problems


def report_internal_error(tool: str, error: BaseException, debug: bool) -> int:
    """Report a bug in the tool itself in one line (the traceback with `--debug`); exit status 1."""
    if debug:
        traceback.print_exception(error)
    message = str(error).strip().split("\n")[0]
    hint = "" if debug else "; rerun with --debug for the traceback"
    print(
        f"{tool}: internal error: {type(error).__name__}: {message} "
        f"(please report this{hint})",
        file=sys.stderr,
    )
    return 1


def closed_stdout() -> int:
    """The reader went away (`tool ... | head`): stop quietly, as cat does;
    exit status 1."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


def run_tool(
    tool: str, body: Callable[[], None], printer: DiagnosticPrinter, debug: bool
) -> int:
    """Run a tool's `body`; the exit status: 1 after a diagnostic (printed by
    `printer`) or an internal error (one line), 130 on Ctrl-C, else 0."""
    try:
        body()
        sys.stdout.flush()
    except DiagnosticError as error:
        printer(error.diagnostic)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return closed_stdout()
    except Exception as error:
        return report_internal_error(tool, error, debug)
    return 0
