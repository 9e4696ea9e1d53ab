"""arith's integer extensions and truncation on scalars, which xDSL 0.75's arith
interpreter lacks: `arith.extsi`, `arith.extui`, `arith.trunci`.

Lowerings widen a narrow scalar operand with them (an i8 scalar of an i8 tensor
computed in i16, the byte pattern of an i8 `vdup`); the tile and ascend_hw
interpreters register these functions.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Attribute, Operation


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _width(value_type: Attribute) -> int:
    assert isinstance(value_type, IntegerType)
    return value_type.width.data


def _result(interpreter: Interpreter, op: Operation, value: int) -> PythonValues:
    return (scalar_attr(value, op.results[0].type, interpreter.index_bitwidth),)


@register_impls
class ScalarCastFunctions(InterpreterFunctions):
    """Integer extension (sign or zero) and truncation of scalars."""

    @impl(arith.ExtSIOp)
    def run_extsi(
        self, interpreter: Interpreter, op: arith.ExtSIOp, args: PythonValues
    ) -> PythonValues:
        bits = _width(op.input.type)
        return _result(interpreter, op, _signed(args[0].value.data, bits))

    @impl(arith.ExtUIOp)
    def run_extui(
        self, interpreter: Interpreter, op: arith.ExtUIOp, args: PythonValues
    ) -> PythonValues:
        bits = _width(op.input.type)
        return _result(interpreter, op, args[0].value.data & ((1 << bits) - 1))

    @impl(arith.TruncIOp)
    def run_trunci(
        self, interpreter: Interpreter, op: arith.TruncIOp, args: PythonValues
    ) -> PythonValues:
        bits = _width(op.result.type)
        return _result(interpreter, op, _signed(args[0].value.data, bits))
