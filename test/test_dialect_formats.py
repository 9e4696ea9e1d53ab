"""Every `tile` and `tv` op prints and parses through a declarative `assembly_format`.

Custom syntax the declarative format cannot spell is a custom directive
(`tile.VectorOperandTypes`, `tensor_view.BinaryTypes`), not a hand-written
`parse`/`print` on the op.
"""

import pytest
from xdsl.irdl import IRDLOperation

from pypto_mlir.dialects.tensor_view import TensorView
from pypto_mlir.dialects.tile import Tile


@pytest.mark.parametrize(
    "op_type",
    [*Tile.operations, *TensorView.operations],
    ids=lambda op_type: op_type.name,
)
def test_op_has_declarative_format(op_type: type[IRDLOperation]) -> None:
    assert op_type.get_irdl_definition().assembly_format is not None
