"""What the dialects of pypto-mlir have in common: no ops, no attributes.

The element types every level holds, the vector unit's and the cube's element
types (`tile` accepts what `ascend_hw` executes), the `nd`/`nz` layout and the
target a module names. Each dialect defines its own attributes over the enums
(`tile.layout` and `ascend_hw.layout` print and parse as before; xDSL's
`EnumAttribute` allows no shared subclass) and imports the rest from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import auto
from functools import cache
from typing import TypeVar

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    ModuleOp,
    StringAttr,
    bf16,
    f16,
    f32,
    i8,
    i16,
    i32,
)
from xdsl.ir import Attribute, Operation
from xdsl.irdl import IRDLOperation, PyRDLOpDefinitionError
from xdsl.irdl import irdl_op_definition as _xdsl_irdl_op_definition
from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.str_enum import StrEnum

from pypto_mlir.targets import DEFAULT_TARGET, Target
from pypto_mlir.targets import load_target as _load_target
from pypto_mlir.targets.resolve import TARGET_ATTR as TARGET_ATTR

# --------------------------------------------------------------------------------------
# Op definitions
# --------------------------------------------------------------------------------------

_OpT = TypeVar("_OpT", bound=IRDLOperation)


def irdl_op_definition(cls: type[_OpT]) -> type[_OpT]:
    """xDSL's `irdl_op_definition`, with the declarative `assembly_format` read
    the first time an op of the class is parsed or printed instead of when the
    class is defined.

    Reading the formats of the three dialects' ops took about a third of their
    import, which every `pypto-opt -p pypto-lower` paid before reading its input
    even for ops it never meets. A malformed format is reported on first use, as
    the same `PyRDLOpDefinitionError`; test/test_dialect_formats.py reads every
    format of the dialects so that one is still found by the tests."""
    text = getattr(cls, "assembly_format", None)
    if text is None:
        return _xdsl_irdl_op_definition(cls)
    cls.assembly_format = None  # xDSL would read it now
    cls = _xdsl_irdl_op_definition(cls)
    cls.assembly_format = text
    op_def = cls.get_irdl_definition()
    op_def.assembly_format = text
    programs: list[FormatProgram] = []

    def program() -> FormatProgram:
        if not programs:
            try:
                programs.append(FormatProgram.from_str(text, op_def))
            except ParseError as error:
                raise PyRDLOpDefinitionError(
                    "Error during the parsing of the assembly format: ", error.args
                ) from error
        return programs[0]

    def parse_with_format(op_type: type[_OpT], parser: Parser) -> _OpT:
        return program().parse(parser, op_type)

    def print_with_format(op: IRDLOperation, printer: Printer) -> None:
        program().print(printer, op)

    cls.parse = classmethod(parse_with_format)  # pyright: ignore
    cls.print = print_with_format  # pyright: ignore
    cls.format_program = staticmethod(program)  # pyright: ignore
    return cls


# --------------------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------------------

FLOAT_ELEMENT_TYPES: tuple[Attribute, ...] = (f16, bf16, f32)
"""Floating-point element types of `!tv.tensor`; they compute in f32."""

INTEGER_ELEMENT_TYPES: tuple[Attribute, ...] = (i8, i16, i32)
"""Integer element types of `!tv.tensor`; they compute in their own width and wrap."""

ELEMENT_TYPES: tuple[Attribute, ...] = FLOAT_ELEMENT_TYPES + INTEGER_ELEMENT_TYPES
"""Element types of a tensor, a tile, a buffer and a GM memref operand."""

VECTOR_FLOAT_TYPES: tuple[Attribute, ...] = (f16, f32)
"""Element types of the vector unit's float arithmetic (bf16 only converts)."""

VECTOR_ARITH_TYPES: tuple[Attribute, ...] = (f16, f32, i16, i32)
"""Element types of the vector unit's add/sub/mul/max/min/neg/abs/relu."""

MATMUL_TYPES: dict[Attribute, Attribute] = {f16: f32, bf16: f32, f32: f32, i8: i32}
"""Cube input element type -> accumulator element type."""


def is_float(element_type: Attribute) -> bool:
    """Whether an element type is a float type (f16, bf16, f32)."""
    return isinstance(element_type, Float16Type | BFloat16Type | Float32Type)


def element_bytes(element_type: Attribute, what: str) -> int:
    """Size in bytes of one element; the error says the type is not `what`."""
    if isinstance(element_type, Float16Type | BFloat16Type):
        return 2
    if isinstance(element_type, Float32Type):
        return 4
    if isinstance(element_type, IntegerType):
        return element_type.width.data // 8
    raise VerifyException(f"{element_type} is not {what}")


def names(items: Iterable[object]) -> str:
    """`a, b, c`: types, memories or pipes in a message."""
    return ", ".join(str(t) for t in items)


# --------------------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------------------


class Layout(StrEnum):
    """`nd` is row-major; `nz` is the cube's fractal format (docs/tile.md,
    the `ascend_hw` module docstring)."""

    ND = auto()
    NZ = auto()


# --------------------------------------------------------------------------------------
# Compare-and-select
# --------------------------------------------------------------------------------------


class CmpMode(StrEnum):
    """The predicate of a compare (`tv.select`, `tile.select`, `vcmp`/`vcmps`);
    false for unordered (NaN) operands except ne, as numpy."""

    LT = auto()
    LE = auto()
    GT = auto()
    GE = auto()
    EQ = auto()
    NE = auto()


SELECT_TYPES: tuple[Attribute, ...] = (f16, bf16, f32, i32)
"""Element types a select compares and selects: what `vcmp` compares (f16, f32,
i32) and bf16, which computes in f32 as other vector math does."""


def select_lane_bits(element_type: Attribute) -> int:
    """The width a select computes `element_type` in (bf16 in f32): a 16-bit
    compare writes 128 lane bits a repeat and a 32-bit one 64, so `vselect`
    reads the compare's bits only when both sides have one width."""
    return 32 if element_type == bf16 else 8 * element_bytes(element_type, "")


def verify_select_types(compared: Attribute, selected: Attribute) -> None:
    """The element types of a select's compared and selected operands."""
    for what, element_type in (("compared", compared), ("selected", selected)):
        if element_type not in SELECT_TYPES:
            raise VerifyException(
                f"the {what} operands must have element type {names(SELECT_TYPES)}, "
                f"got {element_type}"
            )
    if select_lane_bits(compared) != select_lane_bits(selected):
        raise VerifyException(
            f"the compared type {compared} and the selected type {selected} differ "
            "in width (a 16-bit compare gives 128 lane bits a repeat, a 32-bit one "
            "64); cast one side (tv.cast) so both are 16- or both 32-bit"
        )


# --------------------------------------------------------------------------------------
# Target lookup
# --------------------------------------------------------------------------------------


@cache
def load_target(name: str) -> Target:
    """`pypto_mlir.targets.load_target`, once per name (a verifier asks per op)."""
    return _load_target(name)


def target_name_of(op: Operation) -> str | None:
    """The target named by the closest enclosing module that names one."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ModuleOp) and TARGET_ATTR in parent.attributes:
            attr = parent.attributes[TARGET_ATTR]
            if not isinstance(attr, StringAttr):
                raise VerifyException(f"{TARGET_ATTR} must be a string, got {attr}")
            return attr.data
        parent = parent.parent_op()
    return None


def target_of(op: Operation) -> tuple[Target, bool]:
    """The module's target and whether the module names it (else the default)."""
    name = target_name_of(op)
    try:
        return load_target(name or DEFAULT_TARGET), name is not None
    except Exception as e:  # the loader names the file and the bad key
        raise VerifyException(
            f"cannot load target '{name or DEFAULT_TARGET}': {e}"
        ) from e
