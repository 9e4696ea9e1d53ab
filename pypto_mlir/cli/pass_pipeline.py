"""The `-p` pass pipeline: `pass{opt=val opt2=v1,v2},other-pass`.

Same syntax and value rules as xDSL's `parse_pipeline` (it reuses xDSL's lexer),
but every mistake is a diagnostic pointing into the pipeline text: an unknown pass,
an unknown option, a missing required option, or a value of the wrong type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Any, Union, cast, get_args, get_origin, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import (
    ArgSpec,
    ParameterListType,
    ParameterType,
    PipelineLexer,
    SpecToken,
    SpecTokenKind,
)
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.utils.hints import isa, type_repr
from xdsl.utils.mlir_lexer import StringLiteral

from pypto_mlir.diagnostics import Diagnostic, DiagnosticError, Severity, SourceLocation

PIPELINE_SOURCE_NAME = "<pass-pipeline>"
"""The file name under which diagnostics show the `-p` text."""


@dataclass(frozen=True)
class Located:
    """A piece of the pipeline text and its start and end offsets."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class PassEntry:
    """One pass of the pipeline as written, with where each part is."""

    name: Located
    options: dict[str, tuple[Located, ParameterListType]]
    """Option name as written -> (its place, its values)."""


def _error(message: str, start: int, end: int) -> DiagnosticError:
    return DiagnosticError(
        Diagnostic(
            Severity.ERROR,
            message,
            SourceLocation(PIPELINE_SOURCE_NAME, 1, start + 1),
            length=max(1, end - start),
        )
    )


class _Tokens:
    """xDSL's pipeline lexer, with lexing errors turned into diagnostics."""

    def __init__(self, text: str):
        self._lexer = PipelineLexer(text)
        self._text = text
        self._end = 0

    def _guard(self, action: Callable[[], SpecToken]) -> SpecToken:
        try:
            token = action()
        except ArgSpecParseError as error:
            before = self._text[: self._end]
            in_options = before.count("{") > before.count("}")
            hint = (
                ' (quote a value with other characters: target="/path/to/chip.toml")'
                if in_options
                else ""
            )
            raise _error(
                f"unexpected character in pass pipeline{hint}",
                self._end,
                self._end + 1,
            ) from error
        self._end = token.span.end
        return token

    def peek(self) -> SpecToken:
        return self._guard(self._lexer.peek)

    def lex(self) -> SpecToken:
        return self._guard(self._lexer.lex)


def _located(token: SpecToken) -> Located:
    return Located(token.span.text, token.span.start, token.span.end)


def _describe(token: SpecToken) -> str:
    return (
        "end of pipeline" if token.kind is SpecTokenKind.EOF else f"'{token.span.text}'"
    )


def _value(token: SpecToken) -> ParameterType:
    match token.kind:
        case SpecTokenKind.STRING_LIT:
            return StringLiteral.from_span(token.span).string_contents
        case SpecTokenKind.NUMBER:
            text = token.span.text
            return float(text) if "." in text else int(text)
        case SpecTokenKind.IDENT:
            return {"true": True, "false": False}.get(token.span.text, token.span.text)
        case _:
            raise _error(
                f"expected an option value, got {_describe(token)} (quote arbitrary "
                "strings)",
                token.span.start,
                token.span.end,
            )


def _parse_options(tokens: _Tokens) -> dict[str, tuple[Located, ParameterListType]]:
    """`{` has been read; read `key[=v1,v2] key2 ... }`."""
    options: dict[str, tuple[Located, ParameterListType]] = {}
    while True:
        token = tokens.lex()
        if token.kind is SpecTokenKind.SPACE:
            continue
        if token.kind is SpecTokenKind.R_BRACE:
            return options
        if token.kind is not SpecTokenKind.IDENT:
            raise _error(
                f"expected an option name, got {_describe(token)}",
                token.span.start,
                token.span.end,
            )
        key = _located(token)
        if key.text in options:
            raise _error(f"option '{key.text}' given twice", key.start, key.end)
        values: list[ParameterType] = []
        if tokens.peek().kind is SpecTokenKind.EQUALS:
            tokens.lex()
            values.append(_value(tokens.lex()))
            while tokens.peek().kind is SpecTokenKind.COMMA:
                tokens.lex()
                values.append(_value(tokens.lex()))
        options[key.text] = (key, tuple(values))
        after = tokens.peek()
        if after.kind not in (SpecTokenKind.SPACE, SpecTokenKind.R_BRACE):
            raise _error(
                f"expected a space or '}}' after option '{key.text}', got "
                f"{_describe(after)}",
                after.span.start,
                after.span.end,
            )


def parse_pass_pipeline(text: str) -> list[PassEntry]:
    """The passes of a `-p` pipeline, in order."""
    tokens = _Tokens(text)
    entries: list[PassEntry] = []
    if tokens.peek().kind is SpecTokenKind.EOF:
        return entries
    while True:
        token = tokens.lex()
        if token.kind is not SpecTokenKind.IDENT:
            raise _error(
                f"expected a pass name, got {_describe(token)}",
                token.span.start,
                token.span.end,
            )
        name = _located(token)
        options: dict[str, tuple[Located, ParameterListType]] = {}
        following = tokens.peek()
        if following.kind is SpecTokenKind.L_BRACE:
            tokens.lex()
            options = _parse_options(tokens)
        elif following.kind is SpecTokenKind.MLIR_PIPELINE and name.text == "mlir-opt":
            # xDSL's `mlir-opt[pass,...]`: run these passes with upstream mlir-opt.
            tokens.lex()
            pipeline = Located(
                following.span.text, following.span.start, following.span.end
            )
            arguments = (
                "--mlir-print-op-generic",
                "--allow-unregistered-dialect",
                "-p",
                f"builtin.module({following.span.text[1:-1]})",
            )
            options = {"arguments": (pipeline, arguments)}
        entries.append(PassEntry(name, options))
        separator = tokens.lex()
        if separator.kind is SpecTokenKind.EOF:
            return entries
        if separator.kind is not SpecTokenKind.COMMA:
            raise _error(
                f"expected ',' between passes, got {_describe(separator)}",
                separator.span.start,
                separator.span.end,
            )


def _value_fits(values: ParameterListType, hint: Any) -> bool:
    """Whether `values` can fill a pass field of type `hint` (xDSL's rules)."""
    if get_origin(hint) in (Union, UnionType) and not values:
        return NoneType in get_args(hint)
    return (len(values) == 1 and isa(values[0], hint)) or isa(values, hint)


def _widened(values: ParameterListType, hint: Any) -> ParameterListType:
    """Integers as floats for a float option (`density=1`, as mlir-opt reads a
    double), where the integers themselves do not fit."""
    if _value_fits(values, hint) or not values:
        return values
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return values
    floats: ParameterListType = [float(cast(int, v)) for v in values]
    return floats if _value_fits(floats, hint) else values


def _field_type(pass_type: type[ModulePass], field: dataclasses.Field[Any]) -> Any:
    """The resolved type of a pass option (fields may be string annotations)."""
    if not isinstance(field.type, str):
        return field.type
    return get_type_hints(pass_type)[field.name]


def _type_name(hint: Any) -> str:
    """How an option type reads in messages: `int`, `float | None`, `tuple[int, ...]`."""
    if hint is NoneType:
        return "None"
    if get_origin(hint) in (Union, UnionType):
        return " | ".join(_type_name(arg) for arg in get_args(hint))
    if isinstance(hint, type):
        return hint.__name__
    return type_repr(hint)


def pass_options(pass_type: type[ModulePass]) -> list[tuple[str, str, str | None]]:
    """(option name as written in `-p`, its type, its default or None) per option."""
    options: list[tuple[str, str, str | None]] = []
    for option in dataclasses.fields(pass_type):
        if not option.init:
            continue
        default: str | None = None
        if option.default is not dataclasses.MISSING:
            value = option.default
            default = str(value).lower() if isinstance(value, bool) else repr(value)
        elif option.default_factory is not dataclasses.MISSING:
            default = repr(option.default_factory())
        type_name = _type_name(_field_type(pass_type, option))
        options.append((option.name.replace("_", "-"), type_name, default))
    return options


def _show_values(values: ParameterListType) -> str:
    return ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)


def build_pass(
    entry: PassEntry, available: dict[str, Callable[[], type[ModulePass]]]
) -> ModulePass:
    """Instantiate the pass `entry` names, checking its options."""
    name = entry.name
    if name.text not in available:
        raise _error(
            f"'{name.text}' does not refer to a registered pass or pass pipeline",
            name.start,
            name.end,
        )
    pass_type = available[name.text]()
    fields = {f.name: f for f in dataclasses.fields(pass_type) if f.init}
    parameters: dict[str, ParameterListType] = {}
    for written, (key, values) in entry.options.items():
        field_name = written.replace("-", "_")
        if field_name not in fields:
            known = ", ".join(f.replace("_", "-") for f in fields) or "none"
            raise _error(
                f"pass '{name.text}' has no option '{written}' (its options: {known})",
                key.start,
                key.end,
            )
        hint = _field_type(pass_type, fields[field_name])
        values = _widened(values, hint)
        if not values and not _value_fits(values, hint):
            raise _error(
                f"option '{written}' of pass '{name.text}' needs a value: expected "
                f"{_type_name(hint)}",
                key.start,
                key.end,
            )
        if not _value_fits(values, hint):
            raise _error(
                f"invalid value '{_show_values(values)}' for option '{written}' of "
                f"pass '{name.text}': expected {_type_name(hint)}",
                key.start,
                key.end,
            )
        parameters[field_name] = values
    missing = pass_type.required_fields() - parameters.keys()
    if missing:
        options = ", ".join(sorted(f"'{m.replace('_', '-')}'" for m in missing))
        raise _error(
            f"pass '{name.text}' requires option {options}", name.start, name.end
        )
    try:
        return pass_type.from_spec(ArgSpec(name.text, parameters))
    except (ValueError, TypeError, DiagnosticException) as error:
        # Raised by the pass itself when it checks its options (__post_init__).
        raise _error(f"pass '{name.text}': {error}", name.start, name.end) from error


def build_pass_pipeline(
    text: str, available: dict[str, Callable[[], type[ModulePass]]]
) -> list[ModulePass]:
    """The passes of pipeline `text`; raises `DiagnosticError` located in the text."""
    return [build_pass(entry, available) for entry in parse_pass_pipeline(text)]
