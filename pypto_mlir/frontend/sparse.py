"""Sparse kernel arguments and results: `pto.CSR[...]`, `pto.BSR[...]`.

    @pto.kernel
    def spmm(a: pto.CSR[("M", "K"), pto.f16], b: pto.Tensor[("K", 64), pto.f16]):
        return a @ b

An argument annotated `pto.CSR[(M, K), dtype]` or `pto.BSR[(M, K), dtype,
(bm, bn)]` takes a `scipy.sparse` `csr_array` / `bsr_array` (or matrix) or a
plain `(indptr, indices, data)` triple; it is traced as a `!tv.tensor` with a
`#tv.csr` encoding whose nnz is `?`, so calls with other patterns and nnz reuse
the compiled kernel. While traced it is a `SparseTensor`: `a @ b`, `a * s`,
`pto.softmax(a)`, `pto.sddmm(mask, q, k)`, `a.to_dense()`. A sparse result is
returned as a scipy array (scipy has no float16: f16 and bf16 values come back
as float32, exactly).

Argument checks happen at the call, naming the argument (docs/sparse.md):
decreasing offsets, a last offset that is not nnz, column indices outside the
columns, non-integer index arrays, values and indices of different lengths.
Unsorted or repeated column indices are sorted and summed, as scipy's
`sum_duplicates` does; the IR below requires the canonical form.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, i32
from xdsl.ir import Operation, SSAValue

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.frontend.dtypes import DType, dtype_of
from pypto_mlir.frontend.errors import kernel_error
from pypto_mlir.frontend.tensor import (
    Dim,
    Scalar,
    Tensor,
    TensorSpec,
    Trace,
    _parse_dim,
    format_shape,
)
from pypto_mlir.frontend.tensor import softmax as dense_softmax
from pypto_mlir.interp.sparse import (
    SparseArray,
    SparseFormatError,
    canonicalize,
    check_sparse,
)

INDEX_DTYPE = np.dtype(np.int32)
"""The index type of sparse kernel arguments (`index = i32` in the IR)."""


@dataclass(frozen=True)
class SparseSpec:
    """The annotation `pto.CSR[shape, dtype]` / `pto.BSR[shape, dtype, block]`."""

    shape: tuple[Dim, Dim]
    dtype: DType
    block: tuple[int, int] = (1, 1)

    @property
    def format(self) -> str:
        """`csr` or `bsr`, as scipy's `format` attribute names them."""
        return "csr" if self.block == (1, 1) else "bsr"

    @property
    def symbols(self) -> tuple[str, ...]:
        return self.dense.symbols

    @property
    def dense(self) -> TensorSpec:
        """The dense tensor of the same shape (how its sizes bind)."""
        return TensorSpec(self.shape, self.dtype)

    def resolve(self, sizes: dict[str, int]) -> tuple[int, ...]:
        return self.dense.resolve(sizes)

    def tv_type(self, sizes: dict[str, int]) -> tv.TensorViewType:
        """The traced type: nnz is `?` (a runtime size: no recompile)."""
        rows, cols = self.resolve(sizes)
        encoding = tv.CsrEncodingAttr(rows, cols, DYNAMIC_INDEX, i32, self.block)
        return tv.TensorViewType(self.dtype.element_type, (rows, cols), encoding)

    def __repr__(self) -> str:
        if self.format == "csr":
            return f"pto.CSR[{format_shape(self.shape)}, {self.dtype!r}]"
        return f"pto.BSR[{format_shape(self.shape)}, {self.dtype!r}, {self.block}]"


def _sparse_spec(name: str, params: object, with_block: bool) -> SparseSpec:
    count = 3 if with_block else 2
    example = (
        "pto.BSR[(M, K), pto.f16, (16, 16)]"
        if with_block
        else "pto.CSR[(M, K), pto.f16]"
    )
    if not (isinstance(params, tuple) and len(params) == count):
        raise kernel_error(f"write a {name} annotation as {example}")
    shape, dtype = params[0], params[1]
    if not isinstance(dtype, DType) or not dtype.is_float:
        raise kernel_error(
            f"the element type of pto.{name}[...] must be a float pto dtype "
            f"(pto.f16, pto.bf16, pto.f32), got {dtype!r}"
        )
    dims = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    if len(dims) != 2:
        raise kernel_error(f"a pto.{name} tensor is a matrix: {example}, got {shape!r}")
    block = (1, 1)
    if with_block:
        raw = params[2]
        if not (
            isinstance(raw, tuple | list)
            and len(raw) == 2
            and all(
                isinstance(b, numbers.Integral) and not isinstance(b, bool) and b >= 1
                for b in raw
            )
        ):
            raise kernel_error(
                f"the block of pto.BSR[...] is two sizes >= 1, e.g. (16, 16), got {raw!r}"
            )
        block = (int(raw[0]), int(raw[1]))
    parsed = (_parse_dim(dims[0]), _parse_dim(dims[1]))
    for dim, size in zip(parsed, block, strict=True):
        if isinstance(dim, int) and dim % size:
            raise kernel_error(
                f"pto.BSR shape {format_shape(parsed)} is not a multiple of the "
                f"block {block}"
            )
    return SparseSpec(parsed, dtype, block)


class CSR:
    """Annotation of a compressed-sparse-row argument: `pto.CSR[(M, K), pto.f16]`."""

    def __class_getitem__(cls, params: object) -> SparseSpec:
        return _sparse_spec("CSR", params, with_block=False)


class BSR:
    """Annotation of a block-CSR argument: `pto.BSR[(M, K), pto.f16, (16, 16)]`."""

    def __class_getitem__(cls, params: object) -> SparseSpec:
        return _sparse_spec("BSR", params, with_block=True)


# --------------------------------------------------------------------------------------
# Arguments and results
# --------------------------------------------------------------------------------------


def _parts(what: str, spec: SparseSpec, value: object) -> tuple[Any, Any, Any, Any]:
    """(indptr, indices, data, shape or None) of a scipy array or a triple."""
    if hasattr(value, "indptr") and hasattr(value, "format"):
        format_name = value.format
        if format_name != spec.format:
            convert = ".tocsr()" if spec.format == "csr" else f".tobsr({spec.block})"
            raise kernel_error(
                f"{what}: expected a {spec.format}_array, got a {format_name} "
                f"one; convert it with {convert}"
            )
        if spec.format == "bsr":
            blocksize = tuple(value.blocksize)
            if blocksize != spec.block:
                raise kernel_error(
                    f"{what}: expected {spec.block} blocks, got {blocksize}; "
                    f"convert with .tobsr(blocksize={spec.block})"
                )
        shape = tuple(int(d) for d in value.shape)
        return (
            value.indptr,
            value.indices,
            value.data,
            shape,
        )
    if isinstance(value, tuple | list) and len(value) == 3:
        return (*value, None)
    raise kernel_error(
        f"{what}: expected a scipy.sparse {spec.format}_array or an (indptr, "
        f"indices, data) triple, got {type(value).__name__}"
    )


def argument_shape(
    what: str, spec: SparseSpec, value: object, sizes: dict[str, int]
) -> tuple[int, int]:
    """The dense shape of a sparse argument (bound by the caller like a dense
    one's): a scipy array's own; a triple's rows from its offsets and columns
    from the annotation (or a size a dense argument bound)."""
    indptr, _, _, shape = _parts(what, spec, value)
    if shape is not None:
        return (shape[0], shape[1])
    offsets = np.asarray(indptr)
    rows = (max(offsets.shape[0] - 1, 0) if offsets.ndim == 1 else 0) * spec.block[0]
    cols = spec.shape[1]
    if not isinstance(cols, int):
        if cols.name not in sizes:
            raise kernel_error(
                f"{what}: an (indptr, indices, data) triple does not say its column "
                f"count {cols.name}; pass a scipy {spec.format}_array or bind "
                f"{cols.name} by a dense argument"
            )
        cols = sizes[cols.name]
    return (rows, cols)


def _index_array(what: str, name: str, raw: object) -> np.ndarray:
    array = np.asarray(raw)
    if array.dtype.kind not in "iu":
        raise kernel_error(
            f"{what}: the {name} must be an integer array, got dtype {array.dtype}"
        )
    if array.ndim != 1:
        raise kernel_error(
            f"{what}: the {name} must be one-dimensional, got shape {array.shape}"
        )
    info = np.iinfo(INDEX_DTYPE)
    if array.size and (array.min() < info.min or array.max() > info.max):
        raise kernel_error(f"{what}: the {name} do not fit in int32")
    return array.astype(INDEX_DTYPE)


def _values_array(what: str, spec: SparseSpec, raw: object) -> np.ndarray:
    array = np.asarray(raw)
    target = spec.dtype.numpy_dtype
    if array.dtype.kind not in "biuf":
        raise kernel_error(f"{what}: the values must be numbers, got {array.dtype}")
    if not np.can_cast(array.dtype, target, "same_kind"):
        raise kernel_error(
            f"{what}: cannot convert {array.dtype} values to {spec.dtype}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        converted = array.astype(target)
    if np.any(np.isfinite(array) & ~np.isfinite(converted)):
        raise kernel_error(f"{what}: values overflow {spec.dtype}")
    return converted


def sparse_argument(
    what: str, spec: SparseSpec, value: object, shape: tuple[int, int]
) -> SparseArray:
    """The checked, canonical `SparseArray` of an argument; a malformed one is
    a `KernelError` at the call naming the argument and the problem."""
    indptr, indices, data, _ = _parts(what, spec, value)
    offsets = _index_array(what, "row offsets (indptr)", indptr)
    columns = _index_array(what, "column indices", indices)
    values = _values_array(what, spec, data)
    try:
        check_sparse(shape, spec.block, offsets, columns, values, canonical=False)
        offsets, columns, values = canonicalize(
            shape, spec.block, offsets, columns, values, spec.dtype.element_type
        )
        check_sparse(shape, spec.block, offsets, columns, values)
    except SparseFormatError as error:
        raise kernel_error(f"{what}: {error}") from None
    return SparseArray(shape, spec.block, offsets, columns, values)


def to_scipy(value: SparseArray) -> Any:
    """A sparse result as a scipy `csr_array` / `bsr_array` (float32 values for
    f16 and bf16, which scipy cannot hold: the same numbers)."""
    try:
        import scipy.sparse  # noqa: PLC0415 (an optional dependency)
    except ImportError:
        raise kernel_error(
            "a sparse kernel result is returned as a scipy array: install scipy "
            "(pip install 'pypto-mlir[sparse]')"
        ) from None
    data = value.values
    if data.dtype == np.float16:
        data = data.astype(np.float32)
    arrays = (data.copy(), value.indices.copy(), value.offsets.copy())
    if value.block == (1, 1):
        return scipy.sparse.csr_array(arrays, shape=value.shape)
    return scipy.sparse.bsr_array(arrays, shape=value.shape, blocksize=value.block)


# --------------------------------------------------------------------------------------
# Tracing
# --------------------------------------------------------------------------------------


class SparseTensor:
    """A CSR/BSR tensor while a kernel is traced: a `#tv.csr`-encoded value."""

    __slots__ = ("_value", "_trace")

    def __init__(self, value: SSAValue, trace: Trace) -> None:
        self._value = value
        self._trace = trace

    @property
    def value(self) -> SSAValue:
        return self._value

    @property
    def type(self) -> tv.TensorViewType:
        value_type = self._value.type
        assert isinstance(value_type, tv.TensorViewType)
        return value_type

    @property
    def encoding(self) -> tv.CsrEncodingAttr:
        encoding = self.type.sparse_encoding
        assert encoding is not None
        return encoding

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.get_shape()

    @property
    def dtype(self) -> DType:
        return dtype_of(self.type.element_type)

    @property
    def ndim(self) -> int:
        return 2

    @property
    def blocksize(self) -> tuple[int, ...]:
        return self.encoding.block_shape

    def __repr__(self) -> str:
        return (
            f"<traced {self.encoding.format_name} tensor {format_shape(self.shape)} "
            f"{self.dtype}>"
        )

    def __bool__(self) -> bool:
        raise kernel_error("a traced sparse tensor has no truth value")

    def _wrap(self, op: Operation) -> SparseTensor:
        return SparseTensor(self._trace.insert(op).results[0], self._trace)

    def _dense(self, what: str, other: object) -> Tensor:
        if not isinstance(other, Tensor) or other._trace is not self._trace:
            raise kernel_error(
                f"{what} expects a tensor of this kernel, got {type(other).__name__}"
            )
        if other.dtype is not self.dtype:
            raise kernel_error(
                f"dtype mismatch in {what}: {self.dtype} and {other.dtype}; convert "
                "one with .astype(...)"
            )
        return other

    def __matmul__(self, other: object) -> Tensor:
        """`a @ b` (tv.spmm) for a dense matrix `b`, `a @ x` (tv.spmv) for a vector."""
        dense = self._dense("'@'", other)
        if dense.ndim not in (1, 2) or dense.shape[0] != self.shape[1]:
            raise kernel_error(
                f"shape mismatch in '@': {format_shape(self.shape)} and "
                f"{format_shape(dense.shape)}"
            )
        op_type = tv.SpmvOp if dense.ndim == 1 else tv.SpmmOp
        op = self._trace.insert(op_type(self._value, dense.value))
        return Tensor(op.results[0], self._trace)

    def _map_values(self, what: str, function: Any) -> SparseTensor:
        """An elementwise function of the stored values, the pattern kept:
        `tv.disassemble`, the dense op on the values, `tv.assemble`."""
        parts = self._trace.insert(tv.DisassembleOp(self._value))
        values = Tensor(parts.values, self._trace)
        mapped = function(values)
        if not isinstance(mapped, Tensor) or mapped.dtype is not self.dtype:
            raise kernel_error(f"{what} on a sparse tensor must keep its dtype")
        return self._wrap(
            tv.AssembleOp(parts.offsets, parts.indices, mapped.value, self.type)
        )

    def _scalar(self, what: str, other: object) -> object:
        if isinstance(other, Tensor | SparseTensor):
            raise kernel_error(
                f"{what} of a sparse tensor is defined with a scalar only (the "
                "pattern is kept), got a tensor"
            )
        if not isinstance(other, Scalar | numbers.Real):
            raise kernel_error(f"{what}: unsupported operand {other!r}")
        return other

    def __mul__(self, other: object) -> SparseTensor:
        scalar = self._scalar("'*'", other)
        return self._map_values("'*'", lambda v: v * scalar)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> SparseTensor:
        scalar = self._scalar("'/'", other)
        return self._map_values("'/'", lambda v: v / scalar)

    def __neg__(self) -> SparseTensor:
        return self._map_values("'-'", lambda v: -v)

    def to_dense(self) -> Tensor:
        """The dense tensor (tv.to_dense); scipy's `toarray()`."""
        op = self._trace.insert(tv.ToDenseOp(self._value))
        return Tensor(op.results[0], self._trace)

    toarray = todense = to_dense


def sddmm(
    mask: object, a: object, b: object, transpose_b: bool = False
) -> SparseTensor:
    """`(a @ b)` at the stored entries of the sparse `mask` (its values are not
    read); with `transpose_b`, `(a @ b.T)` reading `b` as stored (`q`, `k` of
    attention: `pto.sddmm(mask, q, k, transpose_b=True)`)."""
    if not isinstance(mask, SparseTensor):
        raise kernel_error(
            f"pto.sddmm expects a sparse mask (pto.CSR/pto.BSR), got "
            f"{type(mask).__name__}"
        )
    left = mask._dense("pto.sddmm", a)
    right = mask._dense("pto.sddmm", b)
    if left.ndim != 2 or right.ndim != 2:
        raise kernel_error("pto.sddmm multiplies two matrices")
    k_right, n = right.shape[::-1] if transpose_b else right.shape
    if left.shape[1] != k_right or (left.shape[0], n) != mask.shape:
        product = "a @ b.T" if transpose_b else "a @ b"
        raise kernel_error(
            f"shape mismatch in pto.sddmm: {product} of {format_shape(left.shape)} "
            f"and {format_shape(right.shape)} is not sampled by a "
            f"{format_shape(mask.shape)} mask"
        )
    return mask._wrap(tv.SddmmOp(mask.value, left.value, right.value, transpose_b))


def softmax(x: object, axis: int = -1) -> Tensor | SparseTensor:
    """`exp(x - max) / sum(exp(x - max))` along `axis` (f32 inside, rounded
    once); of a sparse tensor, along each row over its stored entries only."""
    if isinstance(x, SparseTensor):
        if axis not in (-1, 1):
            raise kernel_error(
                f"pto.softmax of a sparse tensor is along its rows (axis -1), got "
                f"axis {axis}"
            )
        return x._wrap(tv.SparseSoftmaxOp(x.value))
    return dense_softmax(x, axis)


def result_matches(
    spec: SparseSpec, value: SparseTensor, sizes: dict[str, int]
) -> bool:
    """Whether a returned sparse tensor is what its annotation declares."""
    return (
        spec.resolve(sizes) == value.shape
        and spec.dtype is value.dtype
        and spec.block == value.blocksize
    )


def describe_sparse(value: SparseArray | Sequence[Any], dtype: str) -> str:
    """`csr f16[8x16] nnz=12`: how run reports show a sparse array."""
    if not isinstance(value, SparseArray):
        return f"sparse {dtype}"
    rows, cols = value.shape
    kind = "csr" if value.block == (1, 1) else f"bsr{value.block[0]}x{value.block[1]}"
    return f"{kind} {dtype}[{rows}x{cols}] nnz={value.nnz}"
