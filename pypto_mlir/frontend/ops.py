"""The `pto.*` functions available inside a kernel: elementwise math, softmax,
matmul, casts and constant tensors. Each records one `tv` op (or a few)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.frontend.dtypes import DType, f32
from pypto_mlir.frontend.errors import kernel_error
from pypto_mlir.frontend.tensor import (
    Scalar,
    Tensor,
    active_trace,
    binary,
    matmul,
    softmax,
    unary,
)

__all__ = [
    "abs",
    "cast",
    "exp",
    "full",
    "gelu",
    "log",
    "matmul",
    "maximum",
    "minimum",
    "neg",
    "ones",
    "reciprocal",
    "relu",
    "rsqrt",
    "sigmoid",
    "silu",
    "softmax",
    "sqrt",
    "tanh",
    "zeros",
]


def exp(x: Tensor) -> Tensor:
    """e**x."""
    return unary(x, tv.ExpOp, "pto.exp")


def log(x: Tensor) -> Tensor:
    """Natural logarithm (NaN for negative values)."""
    return unary(x, tv.LogOp, "pto.log")


def sqrt(x: Tensor) -> Tensor:
    """Square root (NaN for negative values)."""
    return unary(x, tv.SqrtOp, "pto.sqrt")


def rsqrt(x: Tensor) -> Tensor:
    """1 / sqrt(x)."""
    return unary(x, tv.RsqrtOp, "pto.rsqrt")


def reciprocal(x: Tensor) -> Tensor:
    """1 / x."""
    return unary(x, tv.ReciprocalOp, "pto.reciprocal")


def relu(x: Tensor) -> Tensor:
    """max(x, 0); also for integer tensors."""
    return unary(x, tv.ReluOp, "pto.relu")


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return unary(x, tv.SigmoidOp, "pto.sigmoid")


def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return unary(x, tv.TanhOp, "pto.tanh")


def gelu(x: Tensor) -> Tensor:
    """GELU, tanh approximation (see docs/tensor_view.md)."""
    return unary(x, tv.GeluOp, "pto.gelu")


def silu(x: Tensor) -> Tensor:
    """x * sigmoid(x) (swish) as one op, rounded once."""
    return unary(x, tv.SiluOp, "pto.silu")


def abs(x: Tensor) -> Tensor:  # noqa: A001 (numpy's name)
    """|x|; also for integer tensors."""
    return unary(x, tv.AbsOp, "pto.abs")


def neg(x: Tensor) -> Tensor:
    """-x; also for integer tensors."""
    return unary(x, tv.NegOp, "pto.neg")


def _elementwise(op_type: type[tv.BinaryOp], what: str, a: object, b: object) -> Tensor:
    """A binary op where either side may be a tensor (at least one must be)."""
    if isinstance(a, Tensor):
        return binary(a, op_type, what, a.value, a._operand(what, b))
    if isinstance(b, Tensor):
        return binary(b, op_type, what, b._operand(what, a), b.value)
    raise kernel_error(f"{what} needs at least one kernel tensor operand")


def maximum(a: Tensor | Scalar | float, b: Tensor | Scalar | float) -> Tensor:
    """Elementwise maximum with broadcasting; NaN propagates."""
    return _elementwise(tv.MaxOp, "pto.maximum", a, b)


def minimum(a: Tensor | Scalar | float, b: Tensor | Scalar | float) -> Tensor:
    """Elementwise minimum with broadcasting; NaN propagates."""
    return _elementwise(tv.MinOp, "pto.minimum", a, b)


def cast(x: Tensor, dtype: DType) -> Tensor:
    """`x.astype(dtype)`."""
    if not isinstance(x, Tensor):
        raise kernel_error(f"pto.cast expects a kernel tensor, got {type(x).__name__}")
    return x.astype(dtype)


def full(shape: int | Sequence[int], value: float, dtype: DType = f32) -> Tensor:
    """A tensor of `shape` with every element `value` (rounded to `dtype`)."""
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
