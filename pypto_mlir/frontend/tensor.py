"""Tracing: tensors that record `tv` ops instead of computing.

While a kernel is traced, its parameters are `Tensor` (or `Scalar`) proxies of
the SSA values of a `func.func` under construction. Operators and the functions
of `pypto_mlir.frontend.ops` append `tv` ops to it through the active `Trace`.
Shapes are concrete during a trace (symbolic sizes are bound first), so every
shape and dtype rule is checked as the op is recorded, and a mistake raises a
`KernelError` at the kernel author's line.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects.common import verify_select_types as common_select_types
from pypto_mlir.frontend.dtypes import DType, dtype_of, f32
from pypto_mlir.frontend.errors import KernelError, kernel_error, user_location

# --------------------------------------------------------------------------------------
# Annotations: pto.Tensor[(M, 1024), pto.f16], pto.sym("M")
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sym:
    """A symbolic size: a dimension bound from the argument's shape at each call.

    `pto.Tensor[("M", 1024), pto.f16]` is short for
    `pto.Tensor[(pto.sym("M"), 1024), pto.f16]`.
    """

    name: str

    def __repr__(self) -> str:
        return self.name


def sym(name: str) -> Sym:
    """A symbolic size named `name` (a Python identifier)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise kernel_error(f"a symbolic size needs an identifier name, got {name!r}")
    return Sym(name)


Dim = int | Sym


def format_shape(shape: Sequence[object]) -> str:
    """A shape as Python prints a tuple: `(4, 8)`, `(8,)`, `()`."""
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


@dataclass(frozen=True)
class TensorSpec:
    """The annotation `pto.Tensor[shape, dtype]`: a tensor parameter or result."""

    shape: tuple[Dim, ...]
    dtype: DType

    @property
    def symbols(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.shape if isinstance(d, Sym))

    def resolve(self, sizes: dict[str, int]) -> tuple[int, ...]:
        """The concrete shape once every symbol has a size."""
        return tuple(sizes[d.name] if isinstance(d, Sym) else d for d in self.shape)

    def __repr__(self) -> str:
        return f"pto.Tensor[{format_shape(self.shape)}, {self.dtype!r}]"


def _parse_dim(dim: object) -> Dim:
    if isinstance(dim, Sym):
        return dim
    if isinstance(dim, str):
        return sym(dim)
    if isinstance(dim, numbers.Integral) and not isinstance(dim, bool) and dim >= 0:
        return int(dim)
    raise kernel_error(
        f"a tensor dimension is a size >= 0 or a symbol name, got {dim!r}"
    )


def tensor_spec(params: object) -> TensorSpec:
    """Parse the subscript of `pto.Tensor[...]`."""
    if not (isinstance(params, tuple) and len(params) == 2):
        raise kernel_error(
            "write a tensor annotation as pto.Tensor[shape, dtype], e.g. "
            "pto.Tensor[(128, 768), pto.f16]"
        )
    shape, dtype = params
    if not isinstance(dtype, DType):
        raise kernel_error(
            f"the element type of pto.Tensor[...] must be a pto dtype "
            f"(pto.f16, pto.f32, ...), got {dtype!r}"
        )
    dims: Sequence[object] = shape if isinstance(shape, tuple | list) else (shape,)
    return TensorSpec(tuple(_parse_dim(d) for d in dims), dtype)


# --------------------------------------------------------------------------------------
# The trace: where recorded ops go
# --------------------------------------------------------------------------------------

_OpT = TypeVar("_OpT", bound=Operation)


class Trace:
    """The `func.func` body being recorded, with the kernel author's location
    attached to every op."""

    def __init__(self, block: Block) -> None:
        self._builder = Builder(InsertPoint.at_end(block))
        self._constants: dict[tuple[str, str], SSAValue] = {}

    def insert(self, op: _OpT) -> _OpT:
        """Append `op`, located at the kernel line recording it, and verify it."""
        location = user_location()
        if location is not None:
            op.location = FileLineColLoc(
                StringAttr(location.file),
                IntAttr(location.line),
                IntAttr(location.column),
            )
        try:
            op.verify()
        except VerifyException as error:
            raise KernelError(f"{op.name}: {error}", location) from None
        self._builder.insert(op)
        return op

    def constant(self, value: numbers.Number, dtype: DType) -> SSAValue:
        """An `arith.constant` of `value` rounded to `dtype` (one per value)."""
        if dtype.is_float:
            number = float(value)  # pyright: ignore[reportArgumentType]
            with np.errstate(over="ignore"):
                rounded = float(np.asarray(number, dtype.numpy_dtype))
            if dtype.name == "bf16":
                rounded = float(FloatAttr(number, dtype.element_type).value.data)
            if math.isfinite(number) and not math.isfinite(rounded):
                raise kernel_error(f"the constant {number} overflows {dtype}")
            key = (dtype.name, number.hex())
            attr: FloatAttr | IntegerAttr = FloatAttr(number, dtype.element_type)
        else:
            if not isinstance(value, numbers.Integral):
                raise kernel_error(
                    f"the float constant {value} cannot be used with an {dtype} "
                    f"tensor; cast the tensor first, e.g. x.astype(pto.f32)"
                )
            info = np.iinfo(dtype.numpy_dtype)
            if not info.min <= int(value) <= info.max:
                raise kernel_error(
                    f"the constant {int(value)} does not fit in {dtype} "
                    f"[{info.min}, {info.max}]"
                )
            key = (dtype.name, str(int(value)))
            assert isinstance(dtype.element_type, IntegerType)
            attr = IntegerAttr(int(value), dtype.element_type)
        if key not in self._constants:
            self._constants[key] = self.insert(arith.ConstantOp(attr)).result
        return self._constants[key]


_active_trace: ContextVar[Trace | None] = ContextVar("pypto_trace", default=None)


@contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    """Make `trace` the one that `pto.full` and friends record into."""
    token = _active_trace.set(trace)
    try:
        yield trace
    finally:
        _active_trace.reset(token)


def active_trace(what: str) -> Trace:
    """The trace being recorded; `what` (e.g. 'pto.zeros') needs one."""
    trace = _active_trace.get()
    if trace is None:
        raise kernel_error(f"{what} can only be used inside a @pto.kernel function")
    return trace


# --------------------------------------------------------------------------------------
# Operands
# --------------------------------------------------------------------------------------


def _is_python_scalar(value: object) -> bool:
    """Python and numpy numbers (not bools of the kernel's own making)."""
    return isinstance(value, numbers.Real) or (
        isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf"
    )


_REFLECTED = {
    "add": "__radd__",
    "subtract": "__rsub__",
    "multiply": "__rmul__",
    "divide": "__rtruediv__",
    "true_divide": "__rtruediv__",
    "matmul": "__rmatmul__",
    "less": "__gt__",
    "less_equal": "__ge__",
    "greater": "__lt__",
    "greater_equal": "__le__",
    "equal": "__eq__",
    "not_equal": "__ne__",
}
"""The numpy ufuncs of Python operators, and this side's reflected operator
(numpy calls them for `numpy_value <op> tensor`)."""

_ARRAY_FUNCTION_SPELLINGS = {
    "transpose": "x.transpose(...) or x.T",
    "mean": "x.mean(axis)",
    "dot": "x @ y",
    "reshape": "x.reshape(...)",
    "astype": "x.astype(dtype)",
    "softmax": "pto.softmax(x, axis)",
}
"""How a kernel writes what these numpy functions (not ufuncs) compute."""


def _numpy_on_tensor(name: str) -> NoReturn:
    """A numpy function applied to a traced tensor: it cannot compute on it
    (the tensor has no values while the kernel is traced)."""
    spelling = op_facts.numpy_spellings().get(name) or _ARRAY_FUNCTION_SPELLINGS.get(
        name
    )
    if spelling is None:
        raise kernel_error(
            f"np.{name} cannot be applied to a traced tensor, and pto has no "
            "function for it (docs/frontend.md lists them)"
        )
    raise kernel_error(
        f"np.{name} cannot be applied to a traced tensor (a kernel records pto "
        f"operations); write {spelling}"
    )


def _not_an_operand(what: str, value: object) -> NoReturn:
    if isinstance(value, TensorComparison):
        raise kernel_error(f"{what}: {COMPARISON_USE}")
    if isinstance(value, np.ndarray | list | tuple):
        raise kernel_error(
            f"{what}: a {type(value).__name__} cannot be captured by a kernel; pass "
            "it as a kernel argument"
        )
    raise kernel_error(f"{what}: unsupported operand of type {type(value).__name__}")


class Tensor:
    """A tensor while a kernel is traced: an SSA value of type `!tv.tensor`.

    Subscripted, it is the parameter annotation: `pto.Tensor[(4096, 1024), pto.f16]`.
    """

    __slots__ = ("_value", "_trace")

    def __init__(self, value: SSAValue, trace: Trace) -> None:
        self._value = value
        self._trace = trace

    def __class_getitem__(cls, params: object) -> TensorSpec:
        return tensor_spec(params)

    # Properties, as numpy names them.

    @property
    def value(self) -> SSAValue:
        """The SSA value this tensor stands for."""
        return self._value

    @property
    def type(self) -> tv.TensorViewType:
        value_type = self._value.type
        assert isinstance(value_type, tv.TensorViewType)
        return value_type

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.get_shape()

    @property
    def dtype(self) -> DType:
        return dtype_of(self.type.element_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise kernel_error("len() of a rank-0 tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<traced tensor {format_shape(self.shape)} {self.dtype}>"

    __hash__ = object.__hash__

    # What a traced value cannot do.

    def __bool__(self) -> bool:
        raise kernel_error(
            "a traced tensor has no truth value: the kernel body runs once, at "
            "trace time, so Python control flow cannot depend on tensor values"
        )

    def __iter__(self) -> Iterator[Tensor]:
        raise kernel_error(
            "iterating over a tensor is not supported; slice it (x[i:i + n]) instead"
        )

    def __float__(self) -> float:
        raise kernel_error("a traced tensor has no Python value")

    __int__ = __index__ = __float__  # type: ignore[assignment]

    def __setitem__(self, key: object, value: object) -> None:
        raise kernel_error(
            "kernel tensors are values and cannot be assigned to; build a new "
            "tensor instead"
        )

    # numpy: `np.float32(2) * x` calls `np.multiply(np.float32(2), x)`, which
    # numpy hands to this tensor; any other numpy function on it is a mistake.

    def __array_ufunc__(
        self, ufunc: np.ufunc, method: str, *inputs: object, **kwargs: object
    ) -> object:
        """A numpy operator with this tensor on its right runs the reflected
        operator (`np.float32(2) * x` is `x.__rmul__(...)`); any other ufunc
        (`np.exp(x)`, `np.maximum(x, y)`) is an error naming the `pto` function."""
        reflected = _REFLECTED.get(ufunc.__name__)
        if (
            reflected is not None
            and method == "__call__"
            and not kwargs
            and len(inputs) == 2
            and inputs[1] is self
            and not isinstance(inputs[0], Tensor)
        ):
            return getattr(self, reflected)(inputs[0])
        _numpy_on_tensor(
            ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        )

    def __array_function__(
        self,
        func: Any,
        types: object,
        args: Sequence[object],
        kwargs: dict[str, object],
    ) -> object:
        """`np.sum(x)`, `np.transpose(x)`, ...: an error naming what to write."""
        _numpy_on_tensor(getattr(func, "__name__", str(func)))

    # Comparisons: the condition of pto.where, nothing else (no boolean tensors).

    def _compare(self, cmp: str, symbol: str, other: object) -> TensorComparison:
        return TensorComparison(cmp, symbol, self, self._operand(f"'{symbol}'", other))

    def __lt__(self, other: object) -> TensorComparison:
        return self._compare("lt", "<", other)

    def __le__(self, other: object) -> TensorComparison:
        return self._compare("le", "<=", other)

    def __gt__(self, other: object) -> TensorComparison:
        return self._compare("gt", ">", other)

    def __ge__(self, other: object) -> TensorComparison:
        return self._compare("ge", ">=", other)

    def __eq__(self, other: object) -> TensorComparison:  # type: ignore[override]
        return self._compare("eq", "==", other)

    def __ne__(self, other: object) -> TensorComparison:  # type: ignore[override]
        return self._compare("ne", "!=", other)

    # Building ops.

    def _insert(self, op: _OpT) -> _OpT:
        return self._trace.insert(op)

    def _wrap(self, op: Operation) -> Tensor:
        return Tensor(self._insert(op).results[0], self._trace)

    def _operand(self, what: str, other: object) -> SSAValue:
        """`other` as an operand next to this tensor: a tensor, a scalar
        parameter, or a Python number (a constant of this tensor's dtype)."""
        if isinstance(other, Tensor):
            if other._trace is not self._trace:
                raise kernel_error(
                    f"{what}: a tensor from another kernel trace cannot be used here"
                )
            return other._value
        if isinstance(other, Scalar):
            if other.trace is not self._trace:
                raise kernel_error(
                    f"{what}: a scalar from another kernel trace cannot be used here"
                )
            _check_scalar_dtype(what, self.dtype, other.dtype)
            return other.value
        if _is_python_scalar(other):
            return self._trace.constant(
                other.item() if isinstance(other, np.ndarray) else other,  # pyright: ignore[reportArgumentType]
                self.dtype,
            )
        _not_an_operand(what, other)

    # Arithmetic.

    def _binary(
        self, op_type: type[tv.BinaryOp], symbol: str, other: object, reflected: bool
    ) -> Tensor:
        other_value = self._operand(f"'{symbol}'", other)
        lhs, rhs = (
            (other_value, self._value) if reflected else (self._value, other_value)
        )
        return binary(self, op_type, symbol, lhs, rhs)

    def __add__(self, other: object) -> Tensor:
        return self._binary(tv.AddOp, "+", other, False)

    def __radd__(self, other: object) -> Tensor:
        return self._binary(tv.AddOp, "+", other, True)

    def __sub__(self, other: object) -> Tensor:
        return self._binary(tv.SubOp, "-", other, False)

    def __rsub__(self, other: object) -> Tensor:
        return self._binary(tv.SubOp, "-", other, True)

    def __mul__(self, other: object) -> Tensor:
        return self._binary(tv.MulOp, "*", other, False)

    def __rmul__(self, other: object) -> Tensor:
        return self._binary(tv.MulOp, "*", other, True)

    def __truediv__(self, other: object) -> Tensor:
        return self._binary(tv.DivOp, "/", other, False)

    def __rtruediv__(self, other: object) -> Tensor:
        return self._binary(tv.DivOp, "/", other, True)

    def __matmul__(self, other: object) -> Tensor:
        if not isinstance(other, Tensor):
            _not_an_operand("'@'", other)
        return matmul(self, other)

    def __rmatmul__(self, other: object) -> Tensor:
        _not_an_operand("'@'", other)

    def __neg__(self) -> Tensor:
        return unary(self, tv.NegOp, "'-'")

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return unary(self, tv.AbsOp, "abs")

    def __pow__(self, exponent: object) -> Tensor:
        """Powers with a constant exponent that have a `tv` form: 1, 2, 3, 0.5,
        -0.5, -1, -2."""
        if not isinstance(exponent, numbers.Real) or exponent not in _POWERS:
            raise kernel_error(
                f"'**' supports the constant exponents {', '.join(map(str, _POWERS))}; "
                f"got {exponent!r}"
            )
        return _POWERS[exponent](self)

    # Shapes.

    @property
    def T(self) -> Tensor:  # noqa: N802 (numpy's name)
        """The dimensions reversed, as numpy's `.T`."""
        return self.transpose()

    @property
    def mT(self) -> Tensor:  # noqa: N802 (numpy's name)
        """The last two dimensions swapped, as numpy's `.mT` (a batch of
        matrices transposed: `kv[idx].mT` for top-k attention's scores)."""
        if self.ndim < 2:
            raise kernel_error(
                f"mT needs at least 2 dimensions, got a {format_shape(self.shape)} "
                "tensor"
            )
        axes = list(range(self.ndim))
        axes[-2:] = axes[-1], axes[-2]
        return self.transpose(axes)

    def transpose(self, *axes: int | Sequence[int]) -> Tensor:
        """Permute dimensions as numpy does: no argument reverses them."""
        if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
            axes = tuple(axes[0])  # pyright: ignore[reportArgumentType]
        permutation = (
            list(reversed(range(self.ndim)))
            if not axes
            else [_axis("transpose", a, self.ndim) for a in axes]  # pyright: ignore[reportArgumentType]
        )
        if sorted(permutation) != list(range(self.ndim)):
            raise kernel_error(
                f"transpose: {tuple(axes)} is not a permutation of the "
                f"{self.ndim} dimensions of a {format_shape(self.shape)} tensor"
            )
        if permutation == list(range(self.ndim)):
            return self
        return self._wrap(tv.TransposeOp(self._value, permutation))

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """The same elements in row-major order with another shape, as numpy's
        `reshape` (one size may be -1). Without a copy: the tensor must be
        contiguous (not a strided slice)."""
        dims = (
            tuple(shape[0])  # pyright: ignore[reportArgumentType]
            if len(shape) == 1 and isinstance(shape[0], tuple | list)
            else shape
        )
        for dim in dims:
            if (
                not isinstance(dim, numbers.Integral)
                or isinstance(dim, bool)
                or dim < -1
            ):
                raise kernel_error(
                    f"reshape: a size is an integer >= 0 (or one -1), got {dim!r}"
                )
        sizes = [int(d) for d in dims]  # pyright: ignore[reportArgumentType]
        known = math.prod(d for d in sizes if d != -1)
        if sizes.count(-1) > 1:
            raise kernel_error("reshape: only one size can be -1")
        if -1 in sizes:
            if known == 0 or self.size % known:
                raise kernel_error(
                    f"reshape: a {format_shape(self.shape)} tensor cannot become "
                    f"{format_shape(dims)}"
                )
            sizes[sizes.index(-1)] = self.size // known
        if math.prod(sizes) != self.size:
            raise kernel_error(
                f"reshape: a {format_shape(self.shape)} tensor ({self.size} elements) "
                f"cannot become {format_shape(sizes)} ({math.prod(sizes)} elements)"
            )
        if tuple(sizes) == self.shape:
            return self
        return self._wrap(tv.ReshapeOp(self._value, sizes))

    def __getitem__(self, key: object) -> Tensor:
        """A strided window: integers pick (and drop) a dimension, slices keep
        it; steps must be positive. An integer tensor picks rows (`gather`)."""
        if isinstance(key, Tensor):
            return gather(self, key)
        return _view(self, key)

    def astype(self, dtype: DType) -> Tensor:
        """The tensor converted to `dtype` (rounding as `tv.cast`)."""
        if not isinstance(dtype, DType):
            raise kernel_error(f"astype: expected a pto dtype, got {dtype!r}")
        if dtype is self.dtype:
            return self
        return self._wrap(tv.CastOp(self._value, dtype.element_type))

    # Reductions.

    def sum(
        self, axis: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> Tensor:
        """Sum over `axis` (all axes if None); floats accumulate in f32."""
        return _reduce(self, tv.ReduceSumOp, "sum", axis, keepdims)

    def max(
        self, axis: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> Tensor:
        """Maximum over `axis` (all axes if None)."""
        return _reduce(self, tv.ReduceMaxOp, "max", axis, keepdims)

    def min(
        self, axis: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> Tensor:
        """Minimum over `axis` (all axes if None)."""
        return _reduce(self, tv.ReduceMinOp, "min", axis, keepdims)

    def mean(
        self, axis: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> Tensor:
        """The sum over `axis` times 1/n, n the number of reduced elements (the
        factor is an f32 constant, so only the sum and the product round)."""
        if not self.dtype.is_float:
            raise kernel_error(
                f"mean of an {self.dtype} tensor: cast it to a float type first"
            )
        axes = _axes("mean", axis, self.ndim)
        count = math.prod(self.shape[a] for a in axes)
        if count == 0:
            raise kernel_error(
                f"mean over an empty dimension of a {format_shape(self.shape)} tensor"
            )
        total = _reduce(self, tv.ReduceSumOp, "mean", axis, keepdims)
        if count == 1:
            return total
        factor = self._trace.constant(1.0 / count, f32)
        return binary(self, tv.MulOp, "mean", total._value, factor)


COMPARISON_USE = (
    "a comparison of tensors is usable only as the condition of pto.where "
    "(pto.where(x > 0, x, y)): there are no boolean tensors"
)


class TensorComparison:
    """`lhs <cmp> rhs` of a tensor `lhs` and a tensor, scalar parameter or
    number `rhs`, while a kernel is traced: records nothing until `pto.where`
    takes it as its condition (the compare is fused into `tv.select`); any
    other use is an error saying so."""

    __slots__ = ("cmp", "symbol", "lhs", "rhs", "location")

    def __init__(self, cmp: str, symbol: str, lhs: Tensor, rhs: SSAValue) -> None:
        self.cmp = cmp
        self.symbol = symbol
        self.lhs = lhs
        self.rhs = rhs
        self.location = user_location()
        """Where the kernel compared: a comparison returned is reported there."""

    def misuse_error(self) -> KernelError:
        """The error of a comparison used as a value, at the line comparing."""
        return KernelError(COMPARISON_USE, self.location)

    def __repr__(self) -> str:
        return f"<comparison '{self.symbol}' of {self.lhs!r}: {COMPARISON_USE}>"

    def _misused(self, *args: object) -> NoReturn:
        raise kernel_error(COMPARISON_USE)

    __bool__ = __iter__ = __float__ = __int__ = __index__ = _misused
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _misused
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = _misused
    __neg__ = __invert__ = __and__ = __rand__ = __or__ = __ror__ = _misused
    __lt__ = __le__ = __gt__ = __ge__ = __getitem__ = _misused
    __array_ufunc__ = __array_function__ = _misused

    def __eq__(self, other: object) -> NoReturn:  # type: ignore[override]
        self._misused()

    def __ne__(self, other: object) -> NoReturn:  # type: ignore[override]
        self._misused()

    __hash__ = object.__hash__


def _select_operand(
    what: str, value: object, anchor: Tensor, dtype: DType, shape: Sequence[int]
) -> SSAValue:
    """A tensor as is; a scalar parameter or a number as a tensor of `dtype`
    over `shape` (`tv.fill`), as tv.select takes four tensors."""
    if isinstance(value, Tensor):
        return anchor._operand(what, value)
    if isinstance(value, SSAValue) and isinstance(value.type, tv.TensorViewType):
        return value
    if isinstance(value, Scalar | SSAValue):
        scalar = value if isinstance(value, SSAValue) else anchor._operand(what, value)
    elif _is_python_scalar(value):
        number = value.item() if isinstance(value, np.ndarray) else value
        scalar = anchor._trace.constant(number, dtype)  # pyright: ignore[reportArgumentType]
    else:
        if isinstance(value, TensorComparison):
            raise kernel_error(COMPARISON_USE)
        _not_an_operand(what, value)
    result_type = tv.TensorViewType(dtype.element_type, list(shape))
    return anchor._insert(tv.FillOp(scalar, result_type)).result


def where(condition: object, x: object, y: object) -> Tensor:
    """Record `where(lhs <cmp> rhs, x, y)` as one `tv.select` (numpy's
    `np.where(a < b, x, y)`, broadcasting): `condition` is a comparison of
    tensors (`a < b`, `a >= 0.5`, `a != b`), `x` and `y` tensors of one dtype or
    numbers; NaN compares false except for `!=`."""
    what = "pto.where"
    if not isinstance(condition, TensorComparison):
        raise kernel_error(
            f"{what}: the condition must be a comparison of tensors (a < b, "
            f"a >= 0.5), got {type(condition).__name__}"
        )
    anchor = condition.lhs
    tensors = [v for v in (x, y) if isinstance(v, Tensor)]
    if len(tensors) == 2 and tensors[0].dtype is not tensors[1].dtype:
        raise kernel_error(
            f"dtype mismatch in '{what}': {tensors[0].dtype} and {tensors[1].dtype}; "
            "convert one with .astype(...)"
        )
    dtype = tensors[0].dtype if tensors else anchor.dtype
    shapes = [
        anchor.shape,
        *(t.shape for t in tensors),
        *(
            ()
            if not isinstance(condition.rhs.type, tv.TensorViewType)
            else (tuple(condition.rhs.type.get_shape()),)
        ),
    ]
    shape: tuple[int, ...] = ()
    try:
        for operand_shape in shapes:
            shape = tv.broadcast_shapes(shape, operand_shape)
    except ValueError:
        raise kernel_error(
            f"shape mismatch in '{what}': " + ", ".join(format_shape(s) for s in shapes)
        ) from None
    rhs = _select_operand(what, condition.rhs, anchor, anchor.dtype, anchor.shape)
    on_true = _select_operand(what, x, anchor, dtype, shape)
    on_false = _select_operand(what, y, anchor, dtype, shape)
    try:
        common_select_types(anchor.dtype.element_type, dtype.element_type)
    except VerifyException as e:
        raise kernel_error(f"{what}: {e}") from None
    return anchor._wrap(
        tv.SelectOp(condition.cmp, anchor._value, rhs, on_true, on_false)
    )


class Scalar:
    """A scalar kernel parameter while tracing (annotated with a dtype, e.g.
    `alpha: pto.f32`): usable as an operand of tensor operations."""

    __slots__ = ("value", "trace", "dtype")

    def __init__(self, value: SSAValue, trace: Trace, dtype: DType) -> None:
        self.value = value
        self.trace = trace
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"<traced scalar {self.dtype}>"

    def _unsupported(self, other: object) -> Any:
        if isinstance(other, Tensor):
            return NotImplemented
        raise kernel_error(
            "arithmetic on scalar parameters alone is not supported; combine them "
            "with a tensor"
        )

    __add__ = __radd__ = __sub__ = __rsub__ = _unsupported
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _unsupported

    def __bool__(self) -> bool:
        raise kernel_error("a traced scalar has no truth value")


def _check_scalar_dtype(what: str, tensor: DType, scalar: DType) -> None:
    """A float tensor takes any float scalar; an integer tensor its own type."""
    if tensor.is_float and scalar.is_float:
        return
    if scalar is not tensor:
        raise kernel_error(
            f"{what}: a {scalar} scalar cannot be combined with an {tensor} tensor"
        )


# --------------------------------------------------------------------------------------
# Op builders shared by operators and pto.* functions
# --------------------------------------------------------------------------------------


def binary(
    anchor: Tensor,
    op_type: type[tv.BinaryOp],
    what: str,
    lhs: SSAValue,
    rhs: SSAValue,
) -> Tensor:
    """Record an elementwise binary op after checking dtypes and broadcasting."""
    lhs_type, rhs_type = lhs.type, rhs.type
    if isinstance(lhs_type, tv.TensorViewType) and isinstance(
        rhs_type, tv.TensorViewType
    ):
        if lhs_type.element_type != rhs_type.element_type:
            raise kernel_error(
                f"dtype mismatch in '{what}': {dtype_of(lhs_type.element_type)} and "
                f"{dtype_of(rhs_type.element_type)}; convert one with .astype(...)"
            )
        try:
            tv.broadcast_shapes(lhs_type.get_shape(), rhs_type.get_shape())
        except ValueError:
            raise kernel_error(
                f"shape mismatch in '{what}': {format_shape(lhs_type.get_shape())} "
                f"and {format_shape(rhs_type.get_shape())}"
            ) from None
    if not op_type.ALLOWS_INTEGERS and not anchor.dtype.is_float:
        raise kernel_error(
            f"'{what}' needs float operands, got {anchor.dtype}; convert with "
            ".astype(pto.f32)"
        )
    return anchor._wrap(op_type(lhs, rhs))


def unary(x: object, op_type: type[tv.UnaryOp], what: str) -> Tensor:
    """Record an elementwise unary op on a tensor."""
    if isinstance(x, TensorComparison):
        raise kernel_error(f"{what}: {COMPARISON_USE}")
    if not isinstance(x, Tensor):
        raise kernel_error(f"{what} expects a kernel tensor, got {type(x).__name__}")
    if not op_type.ALLOWS_INTEGERS and not x.dtype.is_float:
        raise kernel_error(
            f"{what} expects a float tensor (f16, bf16, f32), got {x.dtype}; "
            "convert with .astype(pto.f32)"
        )
    return x._wrap(op_type(x._value))


def matmul(
    a: object,
    b: object,
    transpose_a: bool = False,
    transpose_b: bool = False,
    out_dtype: DType | None = None,
) -> Tensor:
    """Record `a @ b` (f32 accumulation; the result has `out_dtype`, default the
    inputs' dtype, i32 for i8)."""
    for operand in (a, b):
        if not isinstance(operand, Tensor):
            raise kernel_error(
                f"matmul expects kernel tensors, got {type(operand).__name__}"
            )
    assert isinstance(a, Tensor) and isinstance(b, Tensor)
    b_value = a._operand("'@'", b)
    if a.dtype is not b.dtype:
        raise kernel_error(
            f"dtype mismatch in '@': {a.dtype} and {b.dtype}; convert one with "
            ".astype(...)"
        )
    if a.dtype.name not in ("f16", "bf16", "f32", "i8"):
        raise kernel_error(f"'@' supports f16, bf16, f32 and i8 tensors, got {a.dtype}")
    try:
        tv.MatmulOp.infer_result_shape(a.shape, b.shape, transpose_a, transpose_b)
    except ValueError as error:
        raise kernel_error(
            f"shape mismatch in '@': {format_shape(a.shape)} and "
            f"{format_shape(b.shape)}: {error}"
        ) from None
    op = tv.MatmulOp(
        a._value,
        b_value,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        result_element_type=None if out_dtype is None else out_dtype.element_type,
    )
    return a._wrap(op)


def gather(x: object, indices: object) -> Tensor:
    """`x[indices]`: the rows of `x` picked by an i32 (or i16) index tensor; the
    result's shape is the indices' shape then `x`'s trailing dimensions (top-k
    attention: `kv[topk]`). An index outside `[0, rows)` is an error when the
    kernel runs."""
    if not isinstance(x, Tensor) or not isinstance(indices, Tensor):
        raise kernel_error("pto.gather expects a kernel tensor and an index tensor")
    if indices._trace is not x._trace:
        raise kernel_error("gather: the index tensor is from another kernel trace")
    if indices.type.element_type not in tv.GATHER_INDEX_TYPES:
        raise kernel_error(
            f"gather: the index tensor must be i32 or i16, got {indices.dtype}; "
            "convert it with .astype(pto.i32)"
        )
    if x.ndim < 1:
        raise kernel_error("gather: a rank-0 tensor has no rows")
    return x._wrap(tv.GatherOp(x._value, indices._value))


def _unsupported_index(item: object, dim: int) -> str:
    """Why `item` cannot index dimension `dim`: numpy's mask and array indexing
    (x[mask] selects where True) have no kernel form but a gather by position."""
    if isinstance(item, bool | np.bool_) or (
        isinstance(item, np.ndarray | list | tuple) and np.asarray(item).dtype == bool
    ):
        return (
            f"a boolean index (a numpy mask) for dimension {dim} is not supported: "
            "x[idx] gathers rows by position; pass the positions as an i32 index "
            "tensor parameter"
        )
    if isinstance(item, np.ndarray | list | tuple):
        return (
            f"an index array for dimension {dim} must be a kernel tensor: x[idx] "
            "gathers rows with an i32 (or i16) index tensor parameter"
        )
    return f"unsupported index {item!r} for dimension {dim}"


def _axis(what: str, axis: object, rank: int) -> int:
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise kernel_error(f"{what}: an axis is an integer, got {axis!r}")
    if not -rank <= int(axis) < rank:
        raise kernel_error(
            f"{what}: axis {int(axis)} is out of range for a rank-{rank} tensor"
        )
    return int(axis) % rank


def _axes(what: str, axis: int | Sequence[int] | None, rank: int) -> list[int]:
    if axis is None:
        return list(range(rank))
    items = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    axes = [_axis(what, a, rank) for a in items]
    if len(set(axes)) != len(axes):
        raise kernel_error(f"{what}: repeated axis in {tuple(items)}")
    return sorted(axes)


def _reduce(
    x: Tensor,
    op_type: type[tv.ReduceOp],
    what: str,
    axis: int | Sequence[int] | None,
    keepdims: bool,
) -> Tensor:
    axes = _axes(what, axis, x.ndim)
    if not axes:
        return x
    if op_type.NEEDS_NONEMPTY and any(x.shape[a] == 0 for a in axes):
        raise kernel_error(
            f"{what} over an empty dimension of a {format_shape(x.shape)} tensor "
            "has no value"
        )
    return x._wrap(op_type(x._value, axes, keepdims=bool(keepdims)))


def softmax(x: object, axis: int = -1) -> Tensor:
    """`exp(x - max) / sum(exp(x - max))` along `axis` (f32 inside, rounded once)."""
    if not isinstance(x, Tensor):
        raise kernel_error(
            f"pto.softmax expects a kernel tensor, got {type(x).__name__}"
        )
    if not x.dtype.is_float:
        raise kernel_error(f"pto.softmax expects a float tensor, got {x.dtype}")
    return x._wrap(tv.SoftmaxOp(x._value, _axis("pto.softmax", axis, x.ndim)))


def _view(x: Tensor, key: object) -> Tensor:
    """`x[key]`: the strided window of the integers and slices, then (a
    reshape) a dimension of size 1 where the key has None, as numpy's
    `np.newaxis`."""
    items = list(key) if isinstance(key, tuple) else [key]
    if sum(item is Ellipsis for item in items) > 1:  # not `in`: tensors reject ==
        raise kernel_error("an index can only have a single ellipsis ('...')")
    new_axes = sum(item is None for item in items)
    ellipses = [i for i, item in enumerate(items) if item is Ellipsis]
    if ellipses:
        at = ellipses[0]
        fill = x.ndim - (len(items) - 1 - new_axes)
        items[at : at + 1] = [slice(None)] * max(fill, 0)
    if len(items) - new_axes > x.ndim:
        raise kernel_error(
            f"too many indices for a {format_shape(x.shape)} tensor: "
            f"{len(items) - new_axes}"
        )
    items += [slice(None)] * (x.ndim - len(items) + new_axes)
    if new_axes:
        window = _view(x, tuple(item for item in items if item is not None))
        sizes = iter(window.shape)
        shape = [
            1 if item is None else next(sizes)
            for item in items
            if not (isinstance(item, numbers.Integral) and not isinstance(item, bool))
        ]
        return window.reshape(shape)
    offsets: list[int] = []
    sizes: list[int] = []
    strides: list[int] = []
    result_shape: list[int] = []
    for dim, (item, extent) in enumerate(zip(items, x.shape, strict=True)):
        if isinstance(item, numbers.Integral) and not isinstance(item, bool):
            index = int(item)
            if not -extent <= index < extent:
                raise kernel_error(
                    f"index {index} is out of range for dimension {dim} of size {extent}"
                )
            offsets.append(index % extent)
            sizes.append(1)
            strides.append(1)
        elif isinstance(item, slice):
            for part in (item.start, item.stop, item.step):
                if part is not None and not isinstance(part, numbers.Integral):
                    raise kernel_error(
                        f"slice bounds must be Python integers, got {part!r}"
                    )
            start, stop, step = item.indices(extent)
            if step <= 0:
                raise kernel_error(f"slice steps must be positive, got {step}")
            size = len(range(start, stop, step))
            offsets.append(start)
            sizes.append(size)
            strides.append(step)
            result_shape.append(size)
        elif isinstance(item, Tensor):
            raise kernel_error(
                "a tensor index among other indices is not supported; x[idx] "
                "gathers whole rows"
            )
        else:
            raise kernel_error(_unsupported_index(item, dim))
    if result_shape == list(x.shape) and not any(offsets) and set(strides) <= {1}:
        return x
    result_type = x.type.with_shape(result_shape)
    return x._wrap(tv.ViewOp(x._value, offsets, sizes, strides, result_type))


_POWERS: dict[float, Any] = {
    1: lambda x: x,
    2: lambda x: x * x,
    3: lambda x: x * x * x,
    0.5: lambda x: unary(x, tv.SqrtOp, "'** 0.5'"),
    -0.5: lambda x: unary(x, tv.RsqrtOp, "'** -0.5'"),
    -1: lambda x: unary(x, tv.ReciprocalOp, "'** -1'"),
    -2: lambda x: unary(x * x, tv.ReciprocalOp, "'** -2'"),
}
