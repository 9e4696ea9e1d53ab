"""The `scale` dialect: one op, `scale.by`, that multiplies an integer by a constant."""

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, IntegerType
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class ScaleByOp(IRDLOperation):
    """`%y = scale.by %x, 3 : i32` computes x * 3."""

    name = "scale.by"

    T: ClassVar = VarConstraint("T", BaseAttr(IntegerType))

    input = operand_def(T)
    factor = prop_def(IntegerAttr[I64])
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `,` $factor attr-dict `:` type($input)"

    def __init__(self, input_value: SSAValue, factor: int):
        super().__init__(
            operands=[input_value],
            properties={"factor": IntegerAttr(factor, 64)},
            result_types=[input_value.type],
        )

    def verify_(self) -> None:
        if self.factor.value.data == 0:
            raise VerifyException("factor must be non-zero")


Scale = Dialect("scale", [ScaleByOp])
