"""Integer `arith` functions for the index arithmetic of kernels, shared by the
tile and ascend_hw interpreters (tile-pipeline's run-time bounds use the unsigned
ops at the tile level too).

xDSL's `ArithFunctions` plus the unsigned and min/max ops, and `addi`/`subi`/
`muli` built without xDSL's attribute checks (`int_attr`): a loop computes an
address per iteration, and building its `IntegerAttr` costs more than the
instruction it indexes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    FloatData,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
)
from xdsl.interpreter import Interpreter, PythonValues, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.ir import Attribute, Operation
from xdsl.utils.comparisons import to_signed, to_unsigned

from pypto_mlir.diagnostics import op_location
from pypto_mlir.interp.direct_calls import direct_impl
from pypto_mlir.sim import SimError


def _bitwidth(interpreter: Interpreter, value_type: Attribute) -> int:
    """The bits an integer or index value of `value_type` is interpreted in."""
    if type(value_type) is IndexType:  # the usual case; isinstance on ABCs is slow
        return interpreter.index_bitwidth
    if isinstance(value_type, IntegerType):
        return value_type.width.data
    return interpreter.index_bitwidth


def _integer_op(
    interpreter: Interpreter,
    op: Operation,
    args: PythonValues,
    fn: Callable[[int, int], int],
    signed: bool,
) -> PythonValues:
    """An integer/index binary op on the operands read as signed or unsigned."""
    result_type = op.results[0].type
    bitwidth = _bitwidth(interpreter, result_type)
    first, second = args
    lhs, rhs = first.value.data, second.value.data
    # to_signed / to_unsigned, skipped for values already in their range
    if signed:
        half = 1 << (bitwidth - 1)
        if not -half <= lhs < half:
            lhs = to_signed(lhs, bitwidth)
        if not -half <= rhs < half:
            rhs = to_signed(rhs, bitwidth)
    else:
        full = 1 << bitwidth
        if not 0 <= lhs < full:
            lhs = to_unsigned(lhs, bitwidth)
        if not 0 <= rhs < full:
            rhs = to_unsigned(rhs, bitwidth)
    try:
        value = fn(lhs, rhs)
    except ZeroDivisionError:
        location = op_location(op)
        loc = "" if location is None else str(location)
        raise SimError(
            f"{loc}: division by zero" if loc else "division by zero", (loc,)
        ) from None
    return (int_attr(value, result_type, interpreter.index_bitwidth),)


_new_object = object.__new__


def int_attr(value: int, value_type: Attribute, bitwidth: int) -> IntegerAttr:
    """`scalar_attr` of an integer: the same attribute, made without xDSL's checks.

    An index value is made for every loop iteration and address computation, and
    `IntegerAttr(...)` (parameter verification, normalisation) costs more than
    the instruction it indexes. A value its storage type holds as it is needs no
    normalisation and passes verification, so its two attributes are assembled
    directly (as `ParametrizedAttribute.new` does, without `__post_init__`);
    other values go through `IntegerAttr`.
    """
    storage, lo, hi = _int_storage(value_type, bitwidth)
    if not lo <= value < hi:
        return IntegerAttr(value, storage, truncate_bits=True)
    data = _new_object(IntAttr)
    data.__dict__["data"] = value
    attr = _new_object(IntegerAttr)
    fields = attr.__dict__
    fields["value"] = data
    fields["type"] = storage
    return attr


def float_attr(value: np.generic, value_type: Attribute) -> FloatAttr:
    """`FloatAttr(float(value), value_type)` of an element read from memory, made
    without xDSL's checks when it needs no rounding.

    A `load_scalar` of a float makes one per execution, and `FloatAttr(...)`
    (rounding through `struct`, parameter verification) costs about 14 us, the
    rest of the load a few. An element of the numpy dtype of `value_type`
    (f16, f32, f64) is a value of that type, which rounding keeps unchanged; its
    two attributes are then assembled directly, as `int_attr` does. Others go
    through `FloatAttr`.
    """
    if _FLOAT_DTYPES.get(type(value_type)) is not value.dtype:
        return FloatAttr(float(value), cast(Any, value_type))
    data = _new_object(FloatData)
    data.__dict__["data"] = float(value)
    attr = _new_object(FloatAttr)
    fields = attr.__dict__
    fields["value"] = data
    fields["type"] = value_type
    return attr


_FLOAT_DTYPES: dict[type[Attribute], np.dtype] = {
    Float16Type: np.dtype(np.float16),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}
"""The numpy dtype whose values are exactly those of a float type."""


@cache
def _int_storage(value_type: Attribute, bitwidth: int) -> tuple[IntegerType, int, int]:
    """The integer type `scalar_attr` stores an index or integer value as, and the
    values [lo, hi) it keeps unchanged (`IntegerType.normalized_value`)."""
    if isinstance(value_type, IndexType):
        value_type = IntegerType(bitwidth)
    assert isinstance(value_type, IntegerType)
    width = value_type.width.data
    if value_type.signedness.data == Signedness.UNSIGNED:
        return value_type, 0, 1 << width
    return value_type, -(1 << (width - 1)), 1 << (width - 1)


_BOOLS = (IntegerAttr.from_bool(False), IntegerAttr.from_bool(True))
"""`cmpi`'s two results, made once (attributes are immutable)."""

_PREDICATES: tuple[Callable[[int, int], bool], ...] = (
    int.__eq__,
    int.__ne__,
    int.__lt__,
    int.__le__,
    int.__gt__,
    int.__ge__,
    int.__lt__,
    int.__le__,
    int.__gt__,
    int.__ge__,
)
"""`arith.cmpi`'s predicates by number: eq, ne, slt, sle, sgt, sge, ult, ule,
ugt, uge (the last four on the operands read as unsigned)."""


def _ceil_div(lhs: int, rhs: int) -> int:
    return -(-lhs // rhs)


@register_impls
class IndexArithFunctions(ArithFunctions):
    """xDSL's arith functions plus the unsigned and min/max integer ops kernels use
    for index arithmetic (divui, remui, ceildiv, min, max); addi, subi and muli
    with cached result attributes. Each calls `_integer_op` with the function of
    its two operand values and whether they are read as signed."""

    @direct_impl(arith.AddiOp)
    def run_addi(
        self, interpreter: Interpreter, op: arith.AddiOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, int.__add__, True)

    @direct_impl(arith.SubiOp)
    def run_subi(
        self, interpreter: Interpreter, op: arith.SubiOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, int.__sub__, True)

    @direct_impl(arith.MuliOp)
    def run_muli(
        self, interpreter: Interpreter, op: arith.MuliOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, int.__mul__, True)

    @direct_impl(arith.CmpiOp)
    def run_cmpi(
        self, interpreter: Interpreter, op: arith.CmpiOp, args: PythonValues
    ) -> PythonValues:
        """xDSL's cmpi with its two results made once: every loop bound check
        and guard of a kernel compares indices."""
        predicate = op.predicate.value.data  # 0-9: the verifier checks it
        bitwidth = _bitwidth(interpreter, op.lhs.type)
        convert = to_unsigned if predicate >= 6 else to_signed
        lhs = convert(args[0].value.data, bitwidth)
        rhs = convert(args[1].value.data, bitwidth)
        return (_BOOLS[_PREDICATES[predicate](lhs, rhs)],)

    @direct_impl(arith.DivUIOp)
    def run_divui(
        self, interpreter: Interpreter, op: arith.DivUIOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, int.__floordiv__, False)

    @direct_impl(arith.RemUIOp)
    def run_remui(
        self, interpreter: Interpreter, op: arith.RemUIOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, int.__mod__, False)

    @direct_impl(arith.CeilDivUIOp)
    def run_ceildivui(
        self, interpreter: Interpreter, op: arith.CeilDivUIOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, _ceil_div, False)

    @direct_impl(arith.CeilDivSIOp)
    def run_ceildivsi(
        self, interpreter: Interpreter, op: arith.CeilDivSIOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, _ceil_div, True)

    @direct_impl(arith.MinUIOp)
    def run_minui(
        self, interpreter: Interpreter, op: arith.MinUIOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, min, False)

    @direct_impl(arith.MaxUIOp)
    def run_maxui(
        self, interpreter: Interpreter, op: arith.MaxUIOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, max, False)

    @direct_impl(arith.MinSIOp)
    def run_minsi(
        self, interpreter: Interpreter, op: arith.MinSIOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, min, True)

    @direct_impl(arith.MaxSIOp)
    def run_maxsi(
        self, interpreter: Interpreter, op: arith.MaxSIOp, args: PythonValues
    ) -> PythonValues:
        return _integer_op(interpreter, op, args, max, True)
