"""The reference pages of the documentation site, generated from the code.

`reference_pages()` returns {path under docs/: markdown}: one page per dialect of
the universe, built from each op's IRDL definition (`get_irdl_definition()`), its
docstring, the interpreter function classes that implement it and the lowering
that handles it, and one page of every registered pass and pipeline with its
options (the pass's dataclass fields). The mkdocs hook `docs/hooks.py` adds these
pages to the site at build time, so a generated page cannot go stale; nothing
here needs mkdocs.

Everything is found by introspection, never listed here: the interpreter of an op
from the impl tables `@register_impls` leaves on every `InterpreterFunctions`
class under `pypto_mlir.interp`; its lowering from the pass named
`<dialect>-to-...` and from any module-level mapping under `pypto_mlir.passes`
whose keys are op classes (an instruction-selection table, a strategy registry).
A missing table only makes a page shorter.

`python -m pypto_mlir.docgen DIR` writes the pages into DIR, to read them without
building the site.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import pkgutil
import posixpath
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from xdsl.dialects import builtin
from xdsl.interpreter import InterpreterFunctions
from xdsl.ir import Attribute, Dialect, Operation, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    AnyOf,
    BaseAttr,
    EqAttrConstraint,
    EqIntConstraint,
    IRDLOperation,
    OpDef,
    OptionalDef,
    ParamAttrConstraint,
    RangeLengthConstraint,
    RangeOf,
    VarConstraint,
    VariadicDef,
)
from xdsl.passes import ModulePass
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.universe import Universe

from pypto_mlir import interp, passes
from pypto_mlir.pipelines import PipelinePass
from pypto_mlir.universe import PYPTO_UNIVERSE

OPS_DIR = "reference/ops"
PASSES_PAGE = "reference/passes.md"
INDEX_PAGE = "reference/index.md"

GENERATED_NOTE = (
    "*Generated from the code at build time by `pypto_mlir/docgen.py`: "
    "edit the docstrings and definitions, not this page.*"
)


# --------------------------------------------------------------------------
# Introspection: interpreters and lowerings


def _modules(package: ModuleType) -> Iterator[ModuleType]:
    """`package` and every module below it, imported."""
    yield package
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        yield importlib.import_module(info.name)


def _is_op_class(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, Operation)


def interpreter_classes(
    package: ModuleType = interp,
) -> dict[type[Operation], list[type[InterpreterFunctions]]]:
    """The interpreter function classes under `package` that implement each op.

    Read from the impl table `@register_impls` stores on each class (xDSL's
    `InterpreterFunctions._impls()`); a class without one is skipped.
    """
    implementers: dict[type[Operation], list[type[InterpreterFunctions]]] = {}
    for module in _modules(package):
        for value in vars(module).values():
            if not (
                isinstance(value, type)
                and issubclass(value, InterpreterFunctions)
                and value.__module__ == module.__name__
            ):
                continue
            try:
                impls = value._impls()  # pyright: ignore[reportPrivateUsage]
            except ValueError:  # not decorated with @register_impls
                continue
            for op_type, _ in impls:
                implementers.setdefault(op_type, []).append(value)
    return implementers


@dataclass(frozen=True)
class LoweringTable:
    """A module-level mapping from op classes to what lowers or replaces them."""

    module: str
    name: str
    entries: Mapping[type[Operation], object]


def _lowering_owner(value: object) -> Any:
    """What names a lowering object: a function or class itself, else its class."""
    return (
        value if inspect.isfunction(value) or isinstance(value, type) else type(value)
    )


def _is_lowering_object(value: object, package_name: str) -> bool:
    """An op class (the instruction emitted) or an object of the passes package
    (a strategy, a pattern, a function); strings, numbers and tuples are facts of
    another kind (cost keys, flags) and are not lowerings."""
    if _is_op_class(value):
        return True
    return getattr(_lowering_owner(value), "__module__", "").startswith(package_name)


def lowering_tables(package: ModuleType = passes) -> list[LoweringTable]:
    """Every module-level mapping under `package` from op classes to lowering
    objects (see `_is_lowering_object`); a mapping re-exported by a package is
    reported once, under its most specific module."""
    found: dict[int, LoweringTable] = {}
    for module in _modules(package):
        for name, value in vars(module).items():
            if not isinstance(value, Mapping) or not value:
                continue
            if not all(_is_op_class(key) for key in value):
                continue
            if not all(
                _is_lowering_object(v, package.__name__) for v in value.values()
            ):
                continue
            known = found.get(id(value))
            if known is None or len(module.__name__) > len(known.module):
                found[id(value)] = LoweringTable(module.__name__, name, value)
    return sorted(found.values(), key=lambda table: (table.module, table.name))


def lowering_pass(dialect_name: str, pass_names: Iterable[str]) -> str | None:
    """The pass that lowers a dialect, by the `<dialect>-to-<dialect>` convention."""
    candidates = sorted(
        name for name in pass_names if name.startswith(f"{dialect_name}-to-")
    )
    return candidates[0] if candidates else None


# --------------------------------------------------------------------------
# Text of constraints, docstrings and signatures


def _attribute_name(attr_type: type[Attribute]) -> str:
    """`!tv.tensor`, `#tile.space`; builtin ones as MLIR spells them (`index`)."""
    name = getattr(attr_type, "name", attr_type.__name__)
    if attr_type.__module__ == builtin.__name__ or "." not in name:
        return name.removeprefix("builtin.").removesuffix("_type")
    return ("!" if issubclass(attr_type, TypeAttribute) else "#") + name


_FLOAT_TYPES = frozenset(
    c.attr for c in builtin.AnyFloatConstr.attr_constrs if isinstance(c, BaseAttr)
)


def constraint_text(constraint: object) -> str:
    """A short human spelling of an IRDL constraint in markdown (`` `!tv.tensor` ``,
    `any float or `integer``); an unknown kind of constraint by its class name."""
    if isinstance(
        constraint, RangeLengthConstraint
    ) and constraint.length == EqIntConstraint(1):
        return constraint_text(constraint.constraint)
    if isinstance(constraint, RangeOf):
        return constraint_text(constraint.constr)
    if isinstance(constraint, AnyAttr):
        return "any"
    if isinstance(constraint, BaseAttr):
        return code(_attribute_name(constraint.attr))
    if isinstance(constraint, EqAttrConstraint):
        return code(str(constraint.attr))
    if isinstance(constraint, VarConstraint):
        return f"{constraint_text(constraint.constraint)} (same as every {code(constraint.name)})"
    if isinstance(constraint, builtin.ArrayOfConstraint):
        return f"array of {constraint_text(constraint.elem_range_constraint)}"
    if isinstance(constraint, ParamAttrConstraint):
        params = [constraint_text(p).replace("`", "") for p in constraint.param_constrs]
        if constraint.base_attr is builtin.IntegerAttr and len(params) == 2:
            return f"{code(params[1])} integer"
        while params and params[-1] == "any":
            params.pop()
        base = _attribute_name(constraint.base_attr)
        return code(f"{base}<{', '.join(params)}>" if params else base)
    if isinstance(constraint, AnyOf):
        members = list(constraint.attr_constrs)
        bases = {c.attr for c in members if isinstance(c, BaseAttr)}
        texts: list[str] = []
        if bases >= _FLOAT_TYPES:
            texts.append("any float")
            members = [
                c
                for c in members
                if not (isinstance(c, BaseAttr) and c.attr in _FLOAT_TYPES)
            ]
        texts.extend(constraint_text(c) for c in members)
        return " or ".join(texts)
    return code(type(constraint).__name__)


def own_docstring(cls: type) -> str:
    """The docstring of `cls` or of its nearest project base; "" when the
    nearest docstring is xDSL's (an op or attribute left undocumented)."""
    for klass in cls.__mro__:
        doc = klass.__dict__.get("__doc__")
        if doc:
            return "" if klass.__module__.startswith("xdsl") else inspect.cleandoc(doc)
    return ""


def split_docstring(doc: str) -> tuple[str, str]:
    """(summary: the first paragraph on one line, description: the rest)."""
    summary, _, description = doc.strip().partition("\n\n")
    return " ".join(summary.split()), description.strip()


def code(text: str) -> str:
    """`text` as a markdown code span, whatever backticks it holds."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


_CODE_SPAN = re.compile(r"(`+).+?\1")


def table_cell(text: str) -> str:
    """`text` on one line, its `|` escaped except inside code spans (where the
    table extension already ignores them and a backslash would show)."""
    pieces: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        pieces += [text[last : span.start()].replace("|", "\\|"), span.group()]
        last = span.end()
    pieces.append(text[last:].replace("|", "\\|"))
    return "".join(pieces).replace("\n", " ")


def builder_signature(op: type[Operation]) -> str | None:
    """`ExpOp(input)`: the op's Python constructor when the project writes one."""
    init = op.__init__
    if getattr(init, "__module__", "").startswith("xdsl"):
        return None
    parameters = list(inspect.signature(init).parameters.values())[1:]
    spelled = []
    for parameter in parameters:
        text = parameter.name
        if parameter.kind is parameter.VAR_POSITIONAL:
            text = f"*{text}"
        elif parameter.kind is parameter.VAR_KEYWORD:
            text = f"**{text}"
        elif parameter.default is not parameter.empty:
            text = f"{text}={parameter.default!r}"
        spelled.append(text)
    return f"{op.__name__}({', '.join(spelled)})"


def assembly_text(op: type[IRDLOperation], op_def: OpDef) -> str:
    """The declarative format, or where the hand-written syntax lives."""
    if op_def.assembly_format:
        return code(op_def.assembly_format)
    parse = inspect.unwrap(op.parse)
    if not parse.__module__.startswith("xdsl"):
        return f"custom (`{parse.__qualname__}` and `print`, written by hand)"
    return "generic only"


def trait_names(op_def: OpDef) -> list[str]:
    names = set()
    for trait in op_def.traits:
        if isinstance(trait, HasCanonicalizationPatternsTrait):
            names.add("HasCanonicalizationPatterns")
        else:
            names.add(type(trait).__name__)
    return sorted(names)


def _kind(definition: object) -> str:
    if isinstance(definition, OptionalDef):
        return "optional"
    if isinstance(definition, VariadicDef):
        return "variadic"
    return "single"


# --------------------------------------------------------------------------
# Dialect pages


@dataclass
class ReferenceContext:
    """What every page needs: the dialects, the passes and the facts found."""

    dialects: dict[str, Dialect]
    passes: dict[str, type[ModulePass]]
    interpreters: dict[type[Operation], list[type[InterpreterFunctions]]]
    tables: list[LoweringTable]
    op_pages: dict[str, str] = field(default_factory=dict[str, str])
    """Op name -> the dialect page that documents it (for links)."""

    def op_link(self, name: str, from_page: str) -> str:
        page = self.op_pages.get(name)
        if page is None:
            return f"`{name}`"
        return f"[`{name}`]({_relative(page, from_page)}#{name})"

    def pass_link(self, name: str, from_page: str) -> str:
        if name not in self.passes:
            return f"`{name}`"
        return f"[`{name}`]({_relative(PASSES_PAGE, from_page)}#{name})"


def _relative(target: str, from_page: str) -> str:
    """The link from `from_page` to `target`, both paths under docs/ ("" for
    the same page, so that `#anchor` stays on it)."""
    if target == from_page:
        return ""
    return posixpath.relpath(target, posixpath.dirname(from_page))


def dialect_page_path(dialect: Dialect) -> str:
    return f"{OPS_DIR}/{dialect.name}.md"


def _families(dialect: Dialect) -> dict[type[Operation], list[type[Operation]]]:
    """Documented abstract bases of the dialect's ops (defined beside them) ->
    their ops, in definition order."""
    families: dict[type[Operation], list[type[Operation]]] = {}
    for op in dialect.operations:
        for base in op.__mro__[1:]:
            if (
                issubclass(base, IRDLOperation)
                and base.__module__ == op.__module__
                and base not in dialect.operations
                and base.__dict__.get("__doc__")
            ):
                families.setdefault(base, []).append(op)
    return families


@dataclass(frozen=True)
class Lowering:
    """How an op is lowered: the pass, and what each lowering table maps it to."""

    pass_name: str | None
    targets: tuple[tuple[LoweringTable, object], ...]


def lowering_of(
    op: type[Operation], dialect: Dialect, context: ReferenceContext
) -> Lowering:
    return Lowering(
        lowering_pass(dialect.name, context.passes),
        tuple((t, t.entries[op]) for t in context.tables if op in t.entries),
    )


def _target_text(target: object, context: ReferenceContext, page: str) -> str:
    if _is_op_class(target):
        return context.op_link(target.name, page)  # type: ignore[attr-defined]
    return code(_lowering_owner(target).__name__)


def lowering_brief(lowering: Lowering, context: ReferenceContext, page: str) -> str:
    """One line: the pass, then what the tables map the op to."""
    if lowering.pass_name is None and not lowering.targets:
        return "none"
    parts = [context.pass_link(lowering.pass_name, page)] if lowering.pass_name else []
    targets = ", ".join(
        _target_text(target, context, page) for _, target in lowering.targets
    )
    return ": ".join([*parts, targets] if targets else parts)


def lowering_lines(
    lowering: Lowering, dialect: Dialect, context: ReferenceContext, page: str
) -> list[str]:
    """The op section's lowering bullet, one sub-bullet per table entry with the
    table's name and the lowering object's own docstring (a strategy's
    description says how it builds the instruction sequence)."""
    if lowering.pass_name is None and not lowering.targets:
        return [
            f"- **Lowering:** none (no {code(dialect.name + '-to-...')} pass: the lowest level)"
        ]
    lead = context.pass_link(lowering.pass_name, page) if lowering.pass_name else ""
    lines = [f"- **Lowering:** {lead}" + (":" if lead and lowering.targets else "")]
    for table, target in lowering.targets:
        text = f"{_target_text(target, context, page)} in {code(table.module + '.' + table.name)}"
        description = ""
        if not _is_op_class(target):
            summary, description = split_docstring(
                own_docstring(_lowering_owner(target))
            )
            text += f": {summary}" if summary else ""
        lines.append(f"    - {text}")
        for paragraph in description.split("\n\n") if description else ():
            lines += ["", "        " + " ".join(paragraph.split())]
    return lines


def _op_section(
    op: type[IRDLOperation],
    dialect: Dialect,
    families: dict[type[Operation], list[type[Operation]]],
    context: ReferenceContext,
    page: str,
) -> list[str]:
    op_def = op.get_irdl_definition()
    summary, description = split_docstring(own_docstring(op))
    lines = [f"### `{op.name}` {{#{op.name}}}", ""]
    lines += [summary or "*(no docstring)*", ""]
    if description:
        lines += [description, ""]
    python = f"`{op.__module__}.{op.__name__}`"
    builder = builder_signature(op)
    facts = [
        f"- **Python:** {python}" + (f", built as {code(builder)}" if builder else "")
    ]
    op_families = [base for base in op.__mro__ if op in families.get(base, ())]
    if op_families:
        facts.append(
            "- **Family:** "
            + ", ".join(f"[`{b.__name__}`](#{b.__name__})" for b in op_families)
        )
    facts.append(f"- **Assembly format:** {assembly_text(op, op_def)}")
    traits = trait_names(op_def)
    facts.append("- **Traits:** " + (", ".join(f"`{t}`" for t in traits) or "none"))
    interpreters = context.interpreters.get(op, [])
    facts.append(
        "- **Interpreter:** "
        + (
            ", ".join(f"`{cls.__name__}` (`{cls.__module__}`)" for cls in interpreters)
            or "none"
        )
    )
    facts += lowering_lines(lowering_of(op, dialect, context), dialect, context, page)
    lines += [*facts, ""]

    def value_table(title: str, definitions: list[tuple[str, Any]]) -> list[str]:
        if not definitions:
            return []
        rows = [f"| {title} | kind | constraint |", "|---|---|---|"]
        rows += [
            f"| `{name}` | {_kind(d)} | {table_cell(constraint_text(d.constr))} |"
            for name, d in definitions
        ]
        return [*rows, ""]

    lines += value_table("operand", op_def.operands)
    lines += value_table("result", op_def.results)
    for title, definitions in (
        ("property", op_def.properties),
        ("attribute", op_def.attributes),
    ):
        shown = {n: d for n, d in definitions.items() if n != "operandSegmentSizes"}
        if not shown:
            continue
        lines += [f"| {title} | constraint | default |", "|---|---|---|"]
        for name, definition in shown.items():
            default = definition.default_value
            if default is None:
                default_text = (
                    "optional" if isinstance(definition, OptionalDef) else "required"
                )
            else:
                default_text = code(str(default))
            lines.append(
                f"| `{name}` | {table_cell(constraint_text(definition.constr))} | {default_text} |"
            )
        lines.append("")
    if op_def.regions:
        lines += ["| region | kind |", "|---|---|"]
        lines += [f"| `{name}` | {_kind(d)} |" for name, d in op_def.regions]
        lines.append("")
    return lines


def _attribute_section(attr: type[Attribute]) -> list[str]:
    summary, description = split_docstring(own_docstring(attr))
    lines = [f"### `{_attribute_name(attr)}` {{#{attr.name}}}", ""]
    if summary:
        lines += [summary, ""]
    if description:
        lines += [description, ""]
    lines.append(f"- **Python:** `{attr.__module__}.{attr.__name__}`")
    enum_type = getattr(attr, "enum_type", None)
    if enum_type is not None:
        lines.append(
            "- **Values:** " + ", ".join(f"`{member.value}`" for member in enum_type)
        )
    get_definition: Callable[[], Any] | None = getattr(
        attr, "get_irdl_definition", None
    )
    if get_definition is not None:
        parameters = get_definition().parameters
        if parameters:
            lines.append(
                "- **Parameters:** "
                + ", ".join(
                    f"`{name}` ({constraint_text(p.constr)})" for name, p in parameters
                )
            )
    return [*lines, ""]


def dialect_page(dialect: Dialect, context: ReferenceContext) -> str:
    """The op reference of one dialect."""
    page = dialect_page_path(dialect)
    families = _families(dialect)
    ops = list(dialect.operations)
    module = ops[0].__module__ if ops else ""
    lines = [f"# `{dialect.name}` ops", "", GENERATED_NOTE, ""]
    if module:
        lines += [f"Defined in `{module}`.", ""]
    lines += ["| op | summary | interpreter | lowering |", "|---|---|---|---|"]
    for op in ops:
        summary, _ = split_docstring(own_docstring(op))
        interpreters = ", ".join(
            f"`{c.__name__}`" for c in context.interpreters.get(op, [])
        )
        lowering = lowering_brief(lowering_of(op, dialect, context), context, page)
        lines.append(
            f"| [`{op.name}`](#{op.name}) | {table_cell(summary)} | "
            f"{interpreters or 'none'} | {table_cell(lowering)} |"
        )
    lines.append("")
    if families:
        lines += ["## Op families", ""]
        lines += [
            "Abstract bases that several ops share: what they define holds for each op.",
            "",
        ]
        for base, members in families.items():
            summary, description = split_docstring(own_docstring(base))
            lines += [f"### `{base.__name__}` {{#{base.__name__}}}", "", summary, ""]
            if description:
                lines += [description, ""]
            lines += [
                "Ops: " + ", ".join(f"[`{m.name}`](#{m.name})" for m in members),
                "",
            ]
    lines += ["## Ops", ""]
    for op in ops:
        lines += _op_section(op, dialect, families, context, page)  # type: ignore[arg-type]
    attributes = list(dialect.attributes)
    if attributes:
        lines += ["## Types and attributes", ""]
        for attr in attributes:
            lines += _attribute_section(attr)
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------
# The pass page


def field_docstrings(cls: type) -> dict[str, str]:
    """The string literal under each annotated field of `cls`'s body (the
    attribute docstrings Python itself does not keep); {} without source."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    class_def = ast.parse(source).body[0]
    if not isinstance(class_def, ast.ClassDef):
        return {}
    docs: dict[str, str] = {}
    body = class_def.body
    for statement, following in zip(body, body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def option_default(option: dataclasses.Field[Any]) -> str:
    """A field's default in pass-option syntax (`true`, `8,64`, `""`)."""
    if option.default is not dataclasses.MISSING:
        value = option.default
    elif option.default_factory is not dataclasses.MISSING:
        value = option.default_factory()
    else:
        return "required"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, tuple | list):
        return f"`{','.join(str(v) for v in value)}`" if value else "empty"
    if value is None:
        return "none"
    return f"`{value}`"


def _option_type(option: dataclasses.Field[Any]) -> str:
    hint = option.type
    return hint if isinstance(hint, str) else getattr(hint, "__name__", str(hint))


def pass_options(pass_class: type[ModulePass]) -> list[dataclasses.Field[Any]]:
    return [
        f
        for f in dataclasses.fields(pass_class)
        if f.init and not f.name.startswith("_")
    ]


def _member_names(pass_class: type[ModulePass]) -> list[str] | None:
    """The passes a pipeline runs with its default options; None if it has no
    defaults to run it with."""
    if not issubclass(pass_class, PipelinePass):
        return None
    if any(option_default(f) == "required" for f in pass_options(pass_class)):
        return None
    return [member.name for member in pass_class().member_passes()]


def _pass_section(
    name: str, pass_class: type[ModulePass], context: ReferenceContext
) -> list[str]:
    summary, description = split_docstring(own_docstring(pass_class))
    lines = [f"## `{name}` {{#{name}}}", "", summary or "*(no docstring)*", ""]
    if description:
        lines += [description, ""]
    lines.append(f"- **Python:** `{pass_class.__module__}.{pass_class.__qualname__}`")
    members = _member_names(pass_class)
    if members is not None:
        lines.append(
            "- **Runs (default options):** "
            + ", ".join(context.pass_link(m, PASSES_PAGE) for m in members)
        )
    for dialect_name, dialect in context.dialects.items():
        if lowering_pass(dialect_name, context.passes) == name:
            link = _relative(dialect_page_path(dialect), PASSES_PAGE)
            lines.append(f"- **Lowers:** the [`{dialect_name}` ops]({link})")
    lines.append("")
    options = pass_options(pass_class)
    if options:
        docs = field_docstrings(pass_class)
        lines += ["| option | type | default | meaning |", "|---|---|---|---|"]
        for option in options:
            spelled = option.name.replace("_", "-")
            lines.append(
                f"| `{spelled}` | {table_cell(code(_option_type(option)))} | "
                f"{option_default(option)} | {table_cell(docs.get(option.name, ''))} |"
            )
        lines.append("")
    else:
        lines += ["No options.", ""]
    return lines


def passes_page(context: ReferenceContext) -> str:
    """The pass reference: pipelines first, then passes, each by name."""
    pipelines = {n: c for n, c in context.passes.items() if issubclass(c, PipelinePass)}
    single = {n: c for n, c in context.passes.items() if n not in pipelines}
    lines = ["# Passes and pipelines", "", GENERATED_NOTE, ""]
    lines += [
        "Every pass and pipeline of the `xdsl.universe` entry point "
        "(`pypto_mlir.universe`), as `pypto-opt -p NAME{option=value ...}` takes "
        "them.",
        "",
        "| name | kind | summary |",
        "|---|---|---|",
    ]
    for group, kind in ((pipelines, "pipeline"), (single, "pass")):
        for name in sorted(group):
            summary, _ = split_docstring(own_docstring(group[name]))
            lines.append(f"| [`{name}`](#{name}) | {kind} | {table_cell(summary)} |")
    lines.append("")
    for group in (pipelines, single):
        for name in sorted(group):
            lines += _pass_section(name, group[name], context)
    return "\n".join(lines).rstrip() + "\n"


def index_page(context: ReferenceContext) -> str:
    lines = ["# Reference", "", GENERATED_NOTE, ""]
    lines += ["Op references, one page per dialect:", ""]
    for name, dialect in context.dialects.items():
        link = _relative(dialect_page_path(dialect), INDEX_PAGE)
        lines.append(f"- [`{name}`]({link}): {len(list(dialect.operations))} ops")
    passes_link = _relative(PASSES_PAGE, INDEX_PAGE)
    lines += [
        "",
        f"[Passes and pipelines]({passes_link}): {len(context.passes)} entries.",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Entry points


def reference_context(universe: Universe = PYPTO_UNIVERSE) -> ReferenceContext:
    dialects = {name: factory() for name, factory in universe.all_dialects.items()}
    pass_classes = {name: factory() for name, factory in universe.all_passes.items()}
    context = ReferenceContext(
        dialects=dialects,
        passes=pass_classes,
        interpreters=interpreter_classes(),
        tables=lowering_tables(),
    )
    for dialect in dialects.values():
        for op in dialect.operations:
            context.op_pages[op.name] = dialect_page_path(dialect)
    return context


def reference_pages(universe: Universe = PYPTO_UNIVERSE) -> dict[str, str]:
    """{path under docs/: markdown} of every generated reference page."""
    context = reference_context(universe)
    pages = {INDEX_PAGE: index_page(context), PASSES_PAGE: passes_page(context)}
    for dialect in context.dialects.values():
        pages[dialect_page_path(dialect)] = dialect_page(dialect, context)
    return pages


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder to write the pages into")
    args = parser.parse_args(argv)
    for path, text in reference_pages().items():
        target = args.out_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(target)


if __name__ == "__main__":
    main()
