"""The `pto.*` functions available inside a kernel: elementwise math, softmax,
matmul, casts and constant tensors. Each records one `tv` op (or a few).

The elementwise functions (`pto.exp`, `pto.maximum`, ...) are made from the
op facts (`pypto_mlir.op_facts`: each op's `frontend` name and docstring), so
an op added there is a `pto` function without an edit here."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Operation

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.frontend import tile_views
from pypto_mlir.frontend.dtypes import DType, f32
from pypto_mlir.frontend.errors import kernel_error
from pypto_mlir.frontend.sparse import sddmm, softmax
from pypto_mlir.frontend.tensor import (
    Scalar,
    Tensor,
    active_trace,
    binary,
    gather,
    unary,
    where,
)
from pypto_mlir.frontend.tensor import matmul as tensor_matmul
from pypto_mlir.frontend.tile_views import Tile, TileView


def _elementwise(
    op_type: type[tv.BinaryOp], what: str, a: object, b: object
) -> Tensor | Tile:
    """A binary op where either side may be a tensor (at least one must be), or
    a tile of a tile kernel."""
    if isinstance(a, Tile) or isinstance(b, Tile):
        return tile_views.binary(op_type.name.removeprefix("tv."), what, a, b)
    if isinstance(a, Tensor):
        return binary(a, op_type, what, a.value, a._operand(what, b))
    if isinstance(b, Tensor):
        return binary(b, op_type, what, b._operand(what, a), b.value)
    raise kernel_error(f"{what} needs at least one kernel tensor operand")


_TV_OPS: dict[str, type[Operation]] = {op.name: op for op in tv.TensorView.operations}


def _unary_function(facts: op_facts.UnaryFacts) -> Callable[[Tensor], Tensor]:
    """`pto.<facts.frontend>(x)`: records the op's `tv` op."""
    op_type: Any = _TV_OPS[f"tv.{facts.name}"]
    what = f"pto.{facts.frontend}"

    def function(x: Tensor) -> Tensor:
        if isinstance(x, Tile):
            return tile_views.unary(facts.name, what, x)  # pyright: ignore[reportReturnType]
        return unary(x, op_type, what)

    return _named(function, facts.frontend, facts.doc)


def _binary_function(
    facts: op_facts.BinaryFacts,
) -> Callable[[Tensor | Scalar | float, Tensor | Scalar | float], Tensor]:
    """`pto.<facts.frontend>(a, b)`: either side may be a tensor."""
    op_type: Any = _TV_OPS[f"tv.{facts.name}"]
    what = f"pto.{facts.frontend}"

    def function(a: Tensor | Scalar | float, b: Tensor | Scalar | float) -> Tensor:
        return _elementwise(op_type, what, a, b)

    return _named(function, facts.frontend, facts.doc)


_FunctionT = TypeVar("_FunctionT", bound=Callable[..., Tensor])


def _named(function: _FunctionT, name: str | None, doc: str) -> _FunctionT:
    assert name is not None
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


ELEMENTWISE_FUNCTIONS: dict[str, Callable[..., Tensor]] = {
    **{
        facts.frontend: _unary_function(facts)
        for facts in op_facts.UNARY.values()
        if facts.frontend is not None and f"tv.{facts.name}" in _TV_OPS
    },
    **{
        facts.frontend: _binary_function(facts)
        for facts in op_facts.BINARY.values()
        if facts.frontend is not None and f"tv.{facts.name}" in _TV_OPS
    },
}
"""The `pto.*` function of every elementwise op whose facts name one
(`pypto_mlir.op_facts`), by name: defined here, none written by hand (a fact
without its tv op has none; test_op_facts names it)."""

globals().update(ELEMENTWISE_FUNCTIONS)

__all__ = [
    "cast",
    "full",
    "gather",
    "matmul",
    "ones",
    "sddmm",
    "softmax",
    "where",
    "zeros",
]
__all__ += ELEMENTWISE_FUNCTIONS
__all__.sort()


def matmul(
    a: object,
    b: object,
    transpose_a: bool = False,
    transpose_b: bool = False,
    out_dtype: DType | None = None,
    *,
    acc: object = None,
) -> Any:
    """Record `a @ b` (f32 accumulation; the result has `out_dtype`, default the
    inputs' dtype, i32 for i8). On tiles of a tile kernel: the cube's
    `tile.matmul` of an l0a and an l0b tile into l0c, accumulating into `acc`."""
    if isinstance(a, Tile) or isinstance(b, Tile):
        return tile_views.matmul(a, b, acc)
    return tensor_matmul(a, b, transpose_a, transpose_b, out_dtype)


def cast(x: Tensor, dtype: DType) -> Tensor:
    """`x.astype(dtype)`."""
    if isinstance(x, Tile):
        return tile_views.cast(x, dtype)  # pyright: ignore[reportReturnType]
    if not isinstance(x, Tensor):
        raise kernel_error(f"pto.cast expects a kernel tensor, got {type(x).__name__}")
    return x.astype(dtype)


def full(shape: int | Sequence[int], value: float, dtype: DType = f32) -> Tensor:
    """A tensor of `shape` with every element `value` (rounded to `dtype`); with
    a `TileView` for `shape`, a UB tile of it (`tile.fill`)."""
    if isinstance(shape, TileView):
        return tile_views.full(shape, value)  # pyright: ignore[reportReturnType]
    trace = active_trace("pto.full")
    if not isinstance(dtype, DType):
        raise kernel_error(f"pto.full: expected a pto dtype, got {dtype!r}")
    dims = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    for dim in dims:
        if (
            not isinstance(dim, numbers.Integral)
            or isinstance(dim, bool)
            or dim < 0
            or dim == DYNAMIC_INDEX
        ):
            raise kernel_error(f"pto.full: a dimension is an integer >= 0, got {dim!r}")
    if not isinstance(value, numbers.Real):
        raise kernel_error(f"pto.full: the value must be a number, got {value!r}")
    result_type = tv.TensorViewType(dtype.element_type, [int(d) for d in dims])
    constant = trace.constant(value, dtype)
    return Tensor(trace.insert(tv.FillOp(constant, result_type)).result, trace)


def zeros(shape: int | Sequence[int], dtype: DType = f32) -> Tensor:
    """A tensor of zeros."""
    return full(shape, 0, dtype)


def ones(shape: int | Sequence[int], dtype: DType = f32) -> Tensor:
    """A tensor of ones."""
    return full(shape, 1, dtype)
