"""Epilogues of sparse products: element-wise ops fused into the spmm nests.

`relu(a @ b + bias)` with a sparse `a`: the dense ops after the spmm would be
outlined into a dense nest that reads the product back from GM
(passes/sparse_outline.py). When a chain of element-wise ops reads only the
product, as tv-to-tile's matmul epilogue fusion takes one, `tv-sparse-to-tile`
applies them to each row tile of the product in UB, after its cast and before
its one store (`fuse-epilogue`):

    CSR row nest (passes/csr_spmm_nest.py): per row and column tile,
        acc (f32) -> cast -> [ops, a bias row loaded per tile] -> store
    BSR on the cube (passes/sparse_nests.py): per block row and column tile,
        L0C -> UB (fixpipe, cast) -> [ops] -> store; an empty block row's
        zeros go through the ops too (relu(0 + bias) is not 0)

A chain is taken when (`epilogue_of`): the product is read by one op only,
each op of the chain is a unary or binary element-wise op with a tile
counterpart (`TILE_OPS`), reads the previous value once and, besides it, only
scalars, a row of the product's width (`N` or `1 x N`, broadcast over the
rows) or a tensor of the product's shape, all computed before the product;
the values are f16 or f32 (computed in their type as tv-to-tile's nests do, so
the results are the reference's bit for bit). A chain that stops earlier is
cut there (the rest is outlined); each decision gets a remark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects.builtin import MemRefType, f16, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects.tile import TileType

from .nest_builder import TILE_OPS, Valid, op_suffix
from .sparse_nests import Column, SparseNest

EPILOGUE_TYPES = (f16, f32)
"""Element types an epilogue computes in their own type, as the reference."""


def _tensor(value: SSAValue) -> tv.TensorViewType:
    return cast(tv.TensorViewType, value.type)


@dataclass(frozen=True)
class Epilogue:
    """Element-wise ops (program order) applied to a product's rows."""

    source: SSAValue
    """The product (an spmm result) the first op reads."""
    ops: tuple[Operation, ...]

    @property
    def result(self) -> SSAValue:
        return self.ops[-1].results[0]

    @property
    def names(self) -> str:
        return ", ".join(o.name for o in self.ops)

    def operands(self) -> list[SSAValue]:
        """The tensors the ops read besides the chain's values."""
        chain = {self.source, *(o.results[0] for o in self.ops)}
        found: list[SSAValue] = []
        for op in self.ops:
            for value in op.operands:
                if (
                    isinstance(value.type, tv.TensorViewType)
                    and value not in chain
                    and value not in found
                ):
                    found.append(value)
        return found


def epilogue_of(
    product: Operation, order: Sequence[Operation]
) -> tuple[Epilogue | None, str | None]:
    """The element-wise chain that reads only `product`'s result (program
    `order` of the function's ops), or why none is fused (None when the
    product is not read by an element-wise op at all)."""
    source = product.results[0]
    shape = _tensor(source).get_shape()
    element_type = _tensor(source).element_type
    position = {op: i for i, op in enumerate(order)}
    chain: list[Operation] = []
    value = source
    why: str | None = None
    while True:
        users = [u.operation for u in value.uses]
        if len(users) != 1 or not _elementwise(users[0]):
            if not chain and any(_elementwise(u) for u in users):
                why = "the product is read more than once"
            break
        user = users[0]
        reason = _operand_refusal(user, value, shape, position[product], position)
        if reason is None and element_type not in EPILOGUE_TYPES:
            reason = f"{element_type} values compute in f32 (f16 and f32 are fused)"
        if reason is None and list(user.operands).count(value) != 1:
            reason = f"'{user.name}' reads the value twice"
        if reason is not None:
            why = why or reason
            break
        chain.append(user)
        value = user.results[0]
    if not chain:
        return None, why
    return Epilogue(source, tuple(chain)), why


def _elementwise(op: Operation) -> bool:
    return isinstance(op, tv.UnaryOp | tv.BinaryOp) and op_suffix(op) in TILE_OPS


def _operand_refusal(
    op: Operation,
    value: SSAValue,
    shape: Sequence[int],
    start: int,
    position: Mapping[Operation, int],
) -> str | None:
    """Why `op`'s operands other than `value` keep it out of the epilogue."""
    if _tensor(op.results[0]).get_shape() != tuple(shape):
        return f"'{op.name}' broadcasts the product to another shape"
    for other in op.operands:
        if other is value or not isinstance(other.type, tv.TensorViewType):
            continue
        other_shape = _tensor(other).get_shape()
        if other_shape not in ((shape[1],), (1, shape[1]), tuple(shape)):
            return (
                f"'{op.name}' also reads a dense value of shape "
                f"{'x'.join(map(str, other_shape))} (a row of {shape[1]}, or the "
                "product's shape, is fused)"
            )
        owner = other.owner
        if isinstance(owner, Operation) and position.get(owner, -1) > start:
            return f"'{op.name}' reads a value computed after the product"
    return None


class EpilogueRows:
    """Applies an epilogue to the row tiles of a product's nest."""

    def __init__(self, epilogue: Epilogue, buffers: Mapping[SSAValue, SSAValue]):
        self.epilogue = epilogue
        self.buffers = buffers
        """The GM memref of each tensor the ops read besides the chain."""

    def __call__(
        self,
        nest: SparseNest,
        at: InsertPoint,
        rows_tile: SSAValue,
        row0: Valid,
        column: Column,
    ) -> SSAValue:
        """The ops on `rows_tile` (UB, the product's type) of rows `row0 ..`
        and `column`."""
        rows = cast(TileType, rows_tile.type).get_shape()[0]
        current: dict[SSAValue, SSAValue] = {self.epilogue.source: rows_tile}
        for op in self.epilogue.ops:
            operands = [
                current[v]
                if v in current
                else self._load(nest, at, v, row0, rows, column)
                if isinstance(v.type, tv.TensorViewType)
                else v
                for v in op.operands
            ]
            op_type = TILE_OPS[op_suffix(op)]
            current[op.results[0]] = nest.value(at, op_type(*operands))
        return current[self.epilogue.result]

    def _load(
        self,
        nest: SparseNest,
        at: InsertPoint,
        value: SSAValue,
        row0: Valid,
        rows: int,
        column: Column,
    ) -> SSAValue:
        """The operand's tile at the rows and column: a row (`N`, `1 x N`)
        one row broadcast over the rows, a matrix its rows."""
        buffer = self.buffers[value]
        shape = cast(MemRefType[Attribute], buffer.type).get_shape()
        element_type = _tensor(value).element_type
        if len(shape) == 1:
            buffer = nest.expand(buffer, [[0, 1]], [1, shape[0]])
        if len(shape) == 1 or shape[0] == 1:
            return nest.load(
                at,
                buffer,
                [0, column.start],
                column.tile_type(element_type),
                [1, column.valid],
            )
        return nest.load(
            at,
            buffer,
            [row0, column.start],
            column.tile_type(element_type, rows),
            [rows, column.valid],
        )
