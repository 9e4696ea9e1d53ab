"""The calling convention below `tv`, shared by `tv-to-tile` and
`tv-sparse-to-tile` (docs/tiling.md, docs/sparse.md): a tensor is a GM memref
of its shape, and a bufferized function returns its scalar results only (its
tensor results are trailing memref arguments it writes)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, MemRefType
from xdsl.ir import Attribute, Operation, SSAValue

from pypto_mlir.dialects import tensor_view as tv

from .located_builder import LocatedBuilder


def memref_type(tensor: tv.TensorViewType) -> MemRefType[Attribute]:
    """The GM memref of a dense tensor."""
    return MemRefType(tensor.element_type, tensor.get_shape())


def finish_function(
    function: func.FuncOp,
    return_op: func.ReturnOp,
    scalars: Sequence[SSAValue],
    ops: Sequence[Operation],
) -> None:
    """Return `scalars` only, erase the lowered tv `ops` and the tensor
    arguments, and set the function type from what is left."""
    block = function.body.block
    LocatedBuilder.before(return_op).insert(func.ReturnOp(*scalars))
    return_op.detach()
    return_op.erase()
    for op in reversed(ops):
        op.detach()
        op.erase()
    for arg in list(block.args):
        if isinstance(arg.type, tv.TensorViewType):
            block.erase_arg(arg)
    function.properties["function_type"] = FunctionType.from_lists(
        [a.type for a in block.args], [v.type for v in scalars]
    )
    for attrs in ("arg_attrs", "res_attrs"):
        function.properties.pop(attrs, None)
