"""Reference interpreter of the `tv` dialect: every op on whole numpy arrays.

This is the ground truth the lower levels are checked against, so its
numerics are fixed here (and in docs/tensor_view.md):

- Storage: f16 -> numpy float16, f32 -> float32, i8/i16/i32 -> int8/16/32.
  numpy has no bfloat16, so a bf16 tensor is a float32 array whose values are
  all bf16 values (rounded to nearest even on the way in).
- Float ops compute in f32 and round once per op to the result element type
  (round to nearest even). For add, sub, mul, div and sqrt this is bit-exact
  with native fp16/bf16 arithmetic (f32 has more than 2p + 2 significand bits),
  so the choice only shows in composite ops (sigmoid, gelu, softmax, ...),
  which round once at the end instead of after every step.
- Matmul multiplies and accumulates in `acc_type` (f32, or i32 for i8) and
  rounds once; reductions and softmax accumulate in f32.
- Integer ops compute in their own width and wrap.

The numeric kernels are plain functions on arrays so that other levels'
interpreters can reuse them; `TensorViewFunctions` binds them to the ops and
`run_tv_function` runs a `func.func` of a module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    bf16,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import scalar_attr
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.math import MathFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.interp import sparse
from pypto_mlir.interp.sparse import SparseArray, SparseFormatError
from pypto_mlir.numerics import (
    numpy_dtype,
    ordered_matmul,
    round_to_bf16,
    round_to_element_type,
)


def to_compute(array: np.ndarray, element_type: Attribute) -> np.ndarray:
    """The values of a stored tensor in its compute type: f32 for floats."""
    if tv.is_float_element_type(element_type):
        return np.asarray(array, dtype=np.float32)
    return np.asarray(array)


def scalar_to_compute(value: Any, scalar_type: Attribute) -> np.ndarray:
    """A runtime scalar (FloatAttr, IntegerAttr or number) in its compute type.

    The value is first rounded to its own type (an `arith.constant 0.1 : f16`
    holds the f16 nearest 0.1).
    """
    if isinstance(value, FloatAttr | IntegerAttr):
        value = value.value.data
    if tv.is_float_element_type(scalar_type):
        stored = round_to_element_type(np.asarray(value, np.float64), scalar_type)
        return np.asarray(stored, dtype=np.float32)
    return np.asarray(int(value), dtype=np.int64).astype(numpy_dtype(scalar_type))


def cast_array(
    array: np.ndarray, source_type: Attribute, target_type: Attribute
) -> np.ndarray:
    """tv.cast: floats round to nearest even, float -> int truncates toward zero
    and saturates (NaN -> 0), int -> int wraps."""
    source_float = tv.is_float_element_type(source_type)
    target_float = tv.is_float_element_type(target_type)
    if target_float:
        values = to_compute(array, source_type) if source_float else array
        if not source_float:
            values = np.asarray(values, dtype=np.float64)
        return round_to_element_type(values, target_type)
    dtype = numpy_dtype(target_type)
    if source_float:
        info = np.iinfo(dtype)
        values = np.trunc(np.asarray(array, dtype=np.float64))
        values = np.nan_to_num(values, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(values, info.min, info.max).astype(dtype)
    return np.asarray(array).astype(dtype)


def _family_ops(family: type[Operation]) -> list[Any]:
    """The tv ops of a family (`tv.UnaryOp`, ...), in the dialect's order."""
    return [op for op in tv.TensorView.operations if issubclass(op, family)]


def op_suffix(op_type: type[Operation]) -> str:
    """`exp` for `tv.exp` and `tile.exp`: the key of an op in `op_facts`."""
    return op_type.name.split(".", 1)[1]


UNARY_KERNELS: dict[type[tv.UnaryOp], Callable[[np.ndarray], np.ndarray]] = {
    op: op_facts.UNARY[op_suffix(op)].kernel
    for op in _family_ops(tv.UnaryOp)
    if op_suffix(op) in op_facts.UNARY
}
"""Each unary op on values in the compute type (f32 or the integer type), from
`pypto_mlir.op_facts`; test_op_facts fails naming an op missing there."""

BINARY_KERNELS: dict[
    type[tv.BinaryOp], Callable[[np.ndarray, np.ndarray], np.ndarray]
] = {
    op: op_facts.BINARY[op_suffix(op)].kernel
    for op in _family_ops(tv.BinaryOp)
    if op_suffix(op) in op_facts.BINARY
}
"""Each binary op on values in the compute type (numpy broadcasting)."""

REDUCE_FACTS: dict[type[tv.ReduceOp], op_facts.ReduceFacts] = {
    op: op_facts.REDUCE[op_suffix(op)]
    for op in _family_ops(tv.ReduceOp)
    if op_suffix(op) in op_facts.REDUCE
}
"""Each reduction's kernel and whether it accumulates (in f32)."""


def family_functions(
    name: str, runners: dict[type[Operation], Callable[..., PythonValues]]
) -> type[InterpreterFunctions]:
    """A base class of `InterpreterFunctions` with one `@impl(op)` per entry of
    `runners` (an op and the implementation of its family, a function of `self,
    interpreter, op, args`): the ops of a family come from the facts tables, so
    an op added there needs no method of its own in an interpreter."""
    namespace = {
        f"run_{op.name.replace('.', '_')}": impl(op)(run) for op, run in runners.items()
    }
    return type(name, (InterpreterFunctions,), namespace)


def unary(
    kernel: Callable[[np.ndarray], np.ndarray],
    array: np.ndarray,
    element_type: Attribute,
) -> np.ndarray:
    with np.errstate(all="ignore"):
        values = kernel(to_compute(array, element_type))
    return round_to_element_type(values, element_type)


def binary(
    kernel: Callable[[np.ndarray, np.ndarray], np.ndarray],
    lhs: np.ndarray,
    rhs: np.ndarray,
    element_type: Attribute,
) -> np.ndarray:
    """Operands already in the compute type; rounds the result once."""
    with np.errstate(all="ignore"):
        values = kernel(lhs, rhs)
    return round_to_element_type(values, element_type)


def matmul(
    lhs: np.ndarray,
    rhs: np.ndarray,
    element_type: Attribute,
    result_element_type: Attribute,
    transpose_a: bool = False,
    transpose_b: bool = False,
    init: np.ndarray | None = None,
) -> np.ndarray:
    """`init + lhs @ rhs` multiply-accumulated in f32 in k order (i32 for
    integers, whose order does not matter), rounded once at the end."""
    acc_dtype = np.float32 if tv.is_float_element_type(element_type) else np.int32
    a = np.asarray(lhs).astype(acc_dtype)
    b = np.asarray(rhs).astype(acc_dtype)
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    with np.errstate(all="ignore"):
        values = ordered_matmul(a, b, init)
    return round_to_element_type(values, result_element_type)


def reduce(
    kind: type[tv.ReduceOp],
    array: np.ndarray,
    axes: Sequence[int],
    keepdims: bool,
    element_type: Attribute,
) -> np.ndarray:
    """Sums accumulate in f32 (integers wrap in their width); max/min are exact."""
    if kind not in REDUCE_FACTS:
        raise ValueError(f"unknown reduction {kind.__name__}")
    facts = REDUCE_FACTS[kind]
    values = to_compute(array, element_type) if facts.accumulates else array
    with np.errstate(all="ignore"):
        values = facts.kernel(values, tuple(axes), keepdims)
    return round_to_element_type(values, element_type)


def softmax(array: np.ndarray, axis: int, element_type: Attribute) -> np.ndarray:
    """In f32: subtract the max, exponentiate, normalise; round once."""
    values = to_compute(array, element_type)
    with np.errstate(all="ignore"):
        shifted = np.exp(values - np.max(values, axis=axis, keepdims=True))
        values = shifted / np.sum(shifted, axis=axis, keepdims=True)
    return round_to_element_type(values, element_type)


def view(
    array: np.ndarray,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
    dropped: Sequence[bool],
) -> np.ndarray:
    """A copy of the strided window, with the dropped unit dimensions removed."""
    index: list[slice] = []
    for dim, (offset, size, stride, extent) in enumerate(
        zip(offsets, sizes, strides, array.shape, strict=True)
    ):
        if offset < 0 or size < 0 or stride < 1:
            raise ValueError(
                f"dimension {dim}: offset {offset}, size {size} and stride "
                f"{stride} must be >= 0, >= 0 and >= 1"
            )
        if offset > extent or (size > 0 and offset + (size - 1) * stride >= extent):
            raise ValueError(
                f"dimension {dim} is out of bounds: offset {offset}, size {size}, "
                f"stride {stride} in a dimension of size {extent}"
            )
        index.append(slice(offset, offset + size * stride, stride))
    window = array[tuple(index)]
    shape = [size for size, drop in zip(sizes, dropped, strict=True) if not drop]
    return np.array(window.reshape(shape))


def _index_value(value: Any) -> int:
    if isinstance(value, IntegerAttr):
        return value.value.data
    return int(value)


def _resolve_dynamic(static: Sequence[int], dynamic: Sequence[Any]) -> list[int]:
    values = iter(dynamic)
    return [_index_value(next(values)) if s == DYNAMIC_INDEX else s for s in static]


def _check_result(
    interpreter: Interpreter, op_name: str, array: np.ndarray, result: SSAValue
) -> np.ndarray:
    """Catch mismatches between a computed array and its static type early."""
    result_type = result.type
    assert isinstance(result_type, tv.TensorViewType)
    shape = result_type.get_shape()
    interpreter.interpreter_assert(
        array.dtype == numpy_dtype(result_type.element_type)
        and len(array.shape) == len(shape)
        and all(
            s in (DYNAMIC_INDEX, a) for s, a in zip(shape, array.shape, strict=True)
        ),
        f"{op_name}: computed a {array.dtype} array of shape {array.shape}, "
        f"which is not a {result_type}",
    )
    return array


def _check_dynamic_broadcast(
    interpreter: Interpreter, op: tv.BinaryOp, lhs: np.ndarray, rhs: np.ndarray
) -> None:
    """A `?` dimension never broadcasts: both sides must agree at run time."""
    lhs_type, rhs_type = op.lhs.type, op.rhs.type
    assert isinstance(lhs_type, tv.TensorViewType)
    assert isinstance(rhs_type, tv.TensorViewType)
    lhs_shape, rhs_shape = lhs_type.get_shape(), rhs_type.get_shape()
    for k in range(1, min(len(lhs_shape), len(rhs_shape)) + 1):
        if lhs_shape[-k] == 1 or rhs_shape[-k] == 1:
            continue
        interpreter.interpreter_assert(
            lhs.shape[-k] == rhs.shape[-k],
            f"{op.name}: dimension sizes {lhs.shape[-k]} and {rhs.shape[-k]} "
            f"differ at run time ('?' dimensions do not broadcast)",
        )


def _element_type(value: SSAValue) -> Attribute:
    assert isinstance(value.type, tv.TensorViewType)
    return value.type.element_type


def _run_unary(
    self: InterpreterFunctions,
    interpreter: Interpreter,
    op: tv.UnaryOp,
    args: PythonValues,
) -> PythonValues:
    result = unary(UNARY_KERNELS[type(op)], args[0], _element_type(op.input))
    return (_check_result(interpreter, op.name, result, op.result),)


def _run_binary(
    self: InterpreterFunctions,
    interpreter: Interpreter,
    op: tv.BinaryOp,
    args: PythonValues,
) -> PythonValues:
    result_type = op.result.type
    assert isinstance(result_type, tv.TensorViewType)
    element_type = result_type.element_type
    operands: list[np.ndarray] = []
    for value, arg in zip(op.operands, args, strict=True):
        if isinstance(value.type, tv.TensorViewType):
            operands.append(to_compute(arg, element_type))
        else:
            operands.append(scalar_to_compute(arg, value.type))
    if all(isinstance(v.type, tv.TensorViewType) for v in op.operands):
        _check_dynamic_broadcast(interpreter, op, args[0], args[1])
    result = binary(BINARY_KERNELS[type(op)], *operands, element_type)
    return (_check_result(interpreter, op.name, result, op.result),)


def _run_sparse_product(
    self: InterpreterFunctions,
    interpreter: Interpreter,
    op: tv.SparseProductOp,
    args: PythonValues,
) -> PythonValues:
    """tv.spmm and tv.spmv: one kernel (a vector is a one-column matrix)."""
    lhs, rhs = args
    _check_rows(interpreter, op.name, lhs.shape[1], rhs.shape[0])
    result = sparse.spmm(lhs, rhs, _element_type(op.result))
    return (_check_result(interpreter, op.name, result, op.result),)


def _run_reduce(
    self: InterpreterFunctions,
    interpreter: Interpreter,
    op: tv.ReduceOp,
    args: PythonValues,
) -> PythonValues:
    try:
        result = reduce(
            type(op),
            args[0],
            op.axes.get_values(),
            op.keepdims is not None,
            _element_type(op.input),
        )
    except ValueError as e:
        raise InterpretationError(f"{op.name}: {e}") from e
    return (_check_result(interpreter, op.name, result, op.result),)


@register_impls
class TensorViewFunctions(
    family_functions(
        "TensorViewFamilyFunctions",
        {
            **dict.fromkeys(UNARY_KERNELS, _run_unary),
            **dict.fromkeys(BINARY_KERNELS, _run_binary),
            **dict.fromkeys(REDUCE_FACTS, _run_reduce),
            **dict.fromkeys((tv.SpmmOp, tv.SpmvOp), _run_sparse_product),
        },
    )
):
    """Numpy implementations of the `tv` ops; tensors are numpy arrays. The
    elementwise and reduction ops' `@impl`s come from the facts tables (the base
    class); the others are below."""

    @impl(tv.ViewOp)
    def run_view(
        self, interpreter: Interpreter, op: tv.ViewOp, args: PythonValues
    ) -> PythonValues:
        source, *dynamic = args
        num_offsets, num_sizes = len(op.offsets), len(op.sizes)
        offsets = _resolve_dynamic(
            op.static_offsets.get_values(), dynamic[:num_offsets]
        )
        sizes = _resolve_dynamic(
            op.static_sizes.get_values(),
            dynamic[num_offsets : num_offsets + num_sizes],
        )
        strides = _resolve_dynamic(
            op.static_strides.get_values(), dynamic[num_offsets + num_sizes :]
        )
        try:
            result = view(source, offsets, sizes, strides, op.dropped_dims())
        except ValueError as e:
            raise InterpretationError(f"tv.view: {e}") from e
        return (_check_result(interpreter, op.name, result, op.result),)

    @impl(tv.DimOp)
    def run_dim(
        self, interpreter: Interpreter, op: tv.DimOp, args: PythonValues
    ) -> PythonValues:
        size = np.shape(args[0])[op.index.value.data]
        return (scalar_attr(size, IndexType(), interpreter.index_bitwidth),)

    @impl(tv.FillOp)
    def run_fill(
        self, interpreter: Interpreter, op: tv.FillOp, args: PythonValues
    ) -> PythonValues:
        value, *dynamic_sizes = args
        result_type = op.result.type
        assert isinstance(result_type, tv.TensorViewType)
        shape = _resolve_dynamic(result_type.get_shape(), dynamic_sizes)
        scalar = round_to_element_type(
            scalar_to_compute(value, op.value.type), result_type.element_type
        )
        result = np.full(shape, scalar, dtype=numpy_dtype(result_type.element_type))
        return (_check_result(interpreter, op.name, result, op.result),)

    @impl(tv.CastOp)
    def run_cast(
        self, interpreter: Interpreter, op: tv.CastOp, args: PythonValues
    ) -> PythonValues:
        result = cast_array(args[0], _element_type(op.input), _element_type(op.result))
        return (_check_result(interpreter, op.name, result, op.result),)

    @impl(tv.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: tv.MatmulOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs = args
        k_lhs = lhs.shape[-2] if op.transpose_a else lhs.shape[-1]
        k_rhs = rhs.shape[-1] if op.transpose_b else rhs.shape[-2]
        interpreter.interpreter_assert(
            k_lhs == k_rhs and lhs.shape[:-2] == rhs.shape[:-2],
            f"tv.matmul: operand shapes {lhs.shape} and {rhs.shape} do not "
            "multiply at run time",
        )
        result = matmul(
            lhs,
            rhs,
            _element_type(op.lhs),
            _element_type(op.result),
            op.transpose_a is not None,
            op.transpose_b is not None,
        )
        return (_check_result(interpreter, op.name, result, op.result),)

    @impl(tv.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: tv.SelectOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs, on_true, on_false = args
        try:
            result = op_facts.select(op.cmp.data, lhs, rhs, on_true, on_false)
        except ValueError as e:
            raise InterpretationError(
                f"tv.select: operand shapes {[np.shape(a) for a in args]} do not "
                "broadcast at run time ('?' dimensions do not broadcast)"
            ) from e
        result = result.astype(numpy_dtype(_element_type(op.result)))
        return (_check_result(interpreter, op.name, result, op.result),)

    @impl(tv.SoftmaxOp)
    def run_softmax(
        self, interpreter: Interpreter, op: tv.SoftmaxOp, args: PythonValues
    ) -> PythonValues:
        result = softmax(args[0], op.axis.value.data, _element_type(op.input))
        return (_check_result(interpreter, op.name, result, op.result),)

    @impl(tv.ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: tv.ReshapeOp, args: PythonValues
    ) -> PythonValues:
        result_type = op.result.type
        assert isinstance(result_type, tv.TensorViewType)
        result = np.array(np.reshape(args[0], result_type.get_shape()))
        return (_check_result(interpreter, op.name, result, op.result),)

    @impl(tv.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: tv.TransposeOp, args: PythonValues
    ) -> PythonValues:
        result = np.ascontiguousarray(
            np.transpose(args[0], op.permutation.get_values())
        )
        return (_check_result(interpreter, op.name, result, op.result),)

    # Sparse tensors (pypto_mlir.interp.sparse has the kernels).

    @impl(tv.AssembleOp)
    def run_assemble(
        self, interpreter: Interpreter, op: tv.AssembleOp, args: PythonValues
    ) -> PythonValues:
        result_type = op.result.type
        assert isinstance(result_type, tv.TensorViewType)
        try:
            value = sparse_argument(result_type, tuple(args))
        except SparseFormatError as e:
            raise InterpretationError(f"tv.assemble: {e}") from e
        return (value,)

    @impl(tv.DisassembleOp)
    def run_disassemble(
        self, interpreter: Interpreter, op: tv.DisassembleOp, args: PythonValues
    ) -> PythonValues:
        (value,) = args
        assert isinstance(value, SparseArray)
        return (value.offsets.copy(), value.indices.copy(), value.values.copy())

    @impl(tv.SddmmOp)
    def run_sddmm(
        self, interpreter: Interpreter, op: tv.SddmmOp, args: PythonValues
    ) -> PythonValues:
        mask, lhs, rhs = args
        transpose_b = op.transpose_b is not None
        n_rhs = rhs.shape[0] if transpose_b else rhs.shape[1]
        k_rhs = rhs.shape[1] if transpose_b else rhs.shape[0]
        _check_rows(interpreter, op.name, lhs.shape[1], k_rhs)
        _check_rows(interpreter, op.name, mask.shape[0], lhs.shape[0])
        _check_rows(interpreter, op.name, mask.shape[1], n_rhs)
        return (sparse.sddmm(mask, lhs, rhs, transpose_b, _element_type(op.result)),)

    @impl(tv.SparseSoftmaxOp)
    def run_sparse_softmax(
        self, interpreter: Interpreter, op: tv.SparseSoftmaxOp, args: PythonValues
    ) -> PythonValues:
        return (sparse.sparse_softmax(args[0], _element_type(op.result)),)

    @impl(tv.ToDenseOp)
    def run_to_dense(
        self, interpreter: Interpreter, op: tv.ToDenseOp, args: PythonValues
    ) -> PythonValues:
        result = sparse.to_dense(args[0])
        return (_check_result(interpreter, op.name, result, op.result),)

    @impl(tv.GatherOp)
    def run_gather(
        self, interpreter: Interpreter, op: tv.GatherOp, args: PythonValues
    ) -> PythonValues:
        try:
            result = sparse.gather(args[0], args[1])
        except ValueError as e:
            raise InterpretationError(f"tv.gather: {e}") from e
        return (_check_result(interpreter, op.name, result, op.result),)


def _check_rows(interpreter: Interpreter, op_name: str, a: int, b: int) -> None:
    interpreter.interpreter_assert(
        a == b, f"{op_name}: dimension sizes {a} and {b} differ at run time"
    )


def sparse_argument(
    sparse_type: tv.TensorViewType, value: SparseArray | tuple[Any, ...]
) -> SparseArray:
    """A checked `SparseArray` of `sparse_type` from one or the (offsets,
    indices, values) arrays; SparseFormatError says what does not match."""
    encoding = sparse_type.sparse_encoding
    assert encoding is not None
    block = encoding.block_shape
    if isinstance(value, SparseArray):
        shape = value.shape
        arrays = (value.offsets, value.indices, value.values)
        if value.block != block:
            raise SparseFormatError(
                f"a {value.block[0]}x{value.block[1]}-block tensor cannot be a "
                f"{sparse_type}"
            )
    else:
        if len(value) != 3:
            raise SparseFormatError(
                "a sparse tensor is given as (offsets, indices, values)"
            )
        arrays = tuple(np.asarray(a) for a in value)
        if DYNAMIC_INDEX in sparse_type.get_shape():
            raise SparseFormatError(
                f"a {sparse_type} with a '?' dimension needs its shape: pass a "
                "SparseArray"
            )
        shape = sparse_type.get_shape()
    offsets, indices, values = arrays
    for what, declared, actual in zip(
        ("rows", "cols"), sparse_type.get_shape(), shape, strict=True
    ):
        if declared not in (DYNAMIC_INDEX, actual):
            raise SparseFormatError(
                f"expected {declared} {what} for a {sparse_type}, got {actual}"
            )
    index_dtype = numpy_dtype(encoding.index_type)
    for what, array in (("row offsets", offsets), ("column indices", indices)):
        if array.dtype != index_dtype:
            raise SparseFormatError(
                f"the {what} of a {sparse_type} must be {index_dtype} (its index "
                f"type {encoding.index_type}), got {array.dtype}"
            )
    dtype = numpy_dtype(sparse_type.element_type)
    if values.dtype != dtype:
        raise SparseFormatError(
            f"the values of a {sparse_type} must be {dtype}, got {values.dtype}"
        )
    sparse.check_sparse(shape, block, offsets, indices, values)
    nnz = encoding.nnz.data
    if nnz not in (DYNAMIC_INDEX, indices.shape[0]):
        raise SparseFormatError(
            f"expected nnz = {nnz} for a {sparse_type}, got {indices.shape[0]}"
        )
    if sparse_type.element_type == bf16:
        values = round_to_bf16(values)
    return SparseArray(
        (int(shape[0]), int(shape[1])),
        (int(block[0]), int(block[1])),
        offsets.copy(),
        indices.copy(),
        values.copy(),
    )


def tv_interpreter(module: ModuleOp) -> Interpreter:
    """An interpreter for `module` that knows func, arith, math, scf and tv."""
    interpreter = Interpreter(module)
    for functions in (
        FuncFunctions(),
        ArithFunctions(),
        MathFunctions(),
        ScfFunctions(),
        TensorViewFunctions(),
    ):
        interpreter.register_implementations(functions)
    return interpreter


def _argument(index: int, value: Any, arg_type: Attribute, bitwidth: int) -> Any:
    """Check one function argument against its type; return the runtime value."""
    if isinstance(arg_type, tv.TensorViewType) and arg_type.is_sparse:
        try:
            return sparse_argument(arg_type, value)
        except SparseFormatError as e:
            raise ValueError(f"argument {index}: {e}") from e
    if isinstance(arg_type, tv.TensorViewType):
        array = np.asarray(value)
        dtype = numpy_dtype(arg_type.element_type)
        shape = arg_type.get_shape()
        if len(array.shape) != len(shape) or any(
            s not in (DYNAMIC_INDEX, a) for s, a in zip(shape, array.shape, strict=True)
        ):
            raise ValueError(
                f"argument {index}: expected shape {arg_type.get_shape()} of "
                f"{arg_type} ('?' matches any size), got {array.shape}"
            )
        if array.dtype != dtype:
            raise ValueError(
                f"argument {index}: a {arg_type} is a numpy {dtype} array, "
                f"got {array.dtype}"
            )
        if arg_type.element_type == bf16:
            return round_to_bf16(array)
        return array.copy()
    if isinstance(arg_type, IndexType):
        return IntegerAttr(int(value), IntegerType(bitwidth))
    if isinstance(arg_type, IntegerType):
        return IntegerAttr(int(value), arg_type, truncate_bits=True)
    if tv.is_float_element_type(arg_type):
        return FloatAttr(float(value), arg_type)
    raise ValueError(f"argument {index}: unsupported argument type {arg_type}")


def _result(value: Any) -> Any:
    """A numpy array, or a `SparseArray` for a sparse result."""
    if isinstance(value, SparseArray):
        return value
    if isinstance(value, FloatAttr | IntegerAttr):
        return np.asarray(value.value.data)
    return np.asarray(value)


def run_tv_function(
    module: ModuleOp,
    name: str,
    args: Sequence[Any],
    listeners: tuple[Interpreter.Listener, ...] = (),
) -> list[Any]:
    """Run `func.func @name` of `module` on numpy arrays (scalars for scalar
    arguments; a `SparseArray` or an (offsets, indices, values) tuple for a
    sparse one) and return its results as numpy arrays (`SparseArray`s for
    sparse ones); `listeners` observe every op it interprets.

    Raises ValueError for a missing function or arguments that do not match its
    signature, InterpretationError for errors while running.
    """
    func_op = SymbolTable.lookup_symbol(module, name)
    if not isinstance(func_op, func.FuncOp):
        raise ValueError(f"no func.func @{name} in the module")
    input_types = func_op.function_type.inputs.data
    if len(args) != len(input_types):
        raise ValueError(f"@{name} takes {len(input_types)} arguments, got {len(args)}")
    interpreter = tv_interpreter(module)
    interpreter.listeners = listeners
    values = tuple(
        _argument(i, value, arg_type, interpreter.index_bitwidth)
        for i, (value, arg_type) in enumerate(zip(args, input_types, strict=True))
    )
    return [_result(value) for value in interpreter.call_op(func_op, values)]
