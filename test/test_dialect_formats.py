"""Every `tile` and `tv` op prints and parses through a declarative `assembly_format`,
and every format of the dialects is well formed (they are read on first use).

Custom syntax the declarative format cannot spell is a custom directive
(`tile.VectorOperandTypes`, `tensor_view.BinaryTypes`), not a hand-written
`parse`/`print` on the op.
"""

import pytest
from xdsl.irdl import IRDLOperation, PyRDLOpDefinitionError, operand_def

from pypto_mlir.dialects.ascend_hw import AscendHW
from pypto_mlir.dialects.common import irdl_op_definition
from pypto_mlir.dialects.tensor_view import TensorView
from pypto_mlir.dialects.tile import Tile


@pytest.mark.parametrize(
    "op_type",
    [*Tile.operations, *TensorView.operations],
    ids=lambda op_type: op_type.name,
)
def test_op_has_declarative_format(op_type: type[IRDLOperation]) -> None:
    assert op_type.get_irdl_definition().assembly_format is not None


@pytest.mark.parametrize(
    "op_type",
    [
        op_type
        for dialect in (Tile, TensorView, AscendHW)
        for op_type in dialect.operations
        if op_type.get_irdl_definition().assembly_format is not None
    ],
    ids=lambda op_type: op_type.name,
)
def test_format_is_well_formed(op_type: type[IRDLOperation]) -> None:
    """`dialects.common.irdl_op_definition` reads a format on first use only:
    read each one here, so that a malformed format fails a test, not a user."""
    program = op_type.format_program()  # pyright: ignore[reportAttributeAccessIssue]
    assert program is op_type.format_program()  # pyright: ignore[reportAttributeAccessIssue]
    assert program.stmts


def test_malformed_format_is_reported_on_first_use() -> None:
    @irdl_op_definition
    class BrokenOp(IRDLOperation):
        name = "test.broken"
        operand = operand_def()
        assembly_format = "$nothing attr-dict"

    with pytest.raises(PyRDLOpDefinitionError, match="assembly format"):
        BrokenOp.format_program()  # pyright: ignore[reportAttributeAccessIssue]
