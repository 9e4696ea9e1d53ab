"""Numerics shared by the interpreters, the passes, the checker and the frontend.

One place for the facts several layers must agree on, so that a pass folding a
constant rounds it as the interpreter does and the checker's tolerance follows
the same epsilon:

- how values of an element type are stored in numpy (`numpy_dtype`: bf16 as
  float32 arrays holding bf16 values, numpy having no bfloat16);
- rounding computed values to an element type (`round_to_element_type`, round to
  nearest even; `round_to_bf16` for bf16);
- the machine epsilon of each float type (`epsilon`);
- the constants of GELU's tanh form (`GELU_SCALE`, `GELU_CUBIC`);
- the order of a float matmul's sums (`ordered_matmul`: one product after
  another in k order, so that every level and every K split gives the same bits
  on every machine).

A leaf module: numpy and xDSL's builtin element types only, no dialect, pass or
interpreter import. The `ascend_hw` machine's own float formats (rounding modes,
bf16 as raw bits in the simulated memories) are hardware behaviour and live with
its interpreter (`interp/ascend_hw/float_formats.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import bf16, f16, f32, i8, i16, i32
from xdsl.ir import Attribute

__all__ = [
    "GELU_CUBIC",
    "GELU_SCALE",
    "epsilon",
    "numpy_dtype",
    "ordered_matmul",
    "round_to_bf16",
    "round_to_element_type",
]

_STORAGE_DTYPES: dict[Attribute, type[np.generic]] = {
    f16: np.float16,
    bf16: np.float32,
    f32: np.float32,
    i8: np.int8,
    i16: np.int16,
    i32: np.int32,
}
"""numpy storage of each element type (bf16: float32 arrays of bf16 values)."""


def numpy_dtype(element_type: Attribute) -> np.dtype[Any]:
    """The numpy dtype that stores tensors of `element_type` (float32 for bf16)."""
    if element_type not in _STORAGE_DTYPES:
        raise ValueError(f"no numpy storage for element type {element_type}")
    return np.dtype(_STORAGE_DTYPES[element_type])


def round_to_bf16(values: np.ndarray) -> np.ndarray:
    """Round to the nearest bf16 (ties to even); a float32 array of bf16 values.

    float64 input (exact integers from a cast) is rounded from float64 directly,
    so that it is rounded once, not twice through float32.
    """
    values = np.asarray(values)
    if values.dtype == np.float64:
        mantissa, exponent = np.frexp(values)
        rounded = np.ldexp(np.rint(mantissa * 256.0), exponent - 8)
        return rounded.astype(np.float32)
    bits = values.astype(np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(
        0xFFFF0000
    )
    quiet_nan = (bits | np.uint32(0x00400000)) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(values), quiet_nan, rounded).view(np.float32)


def round_to_element_type(values: np.ndarray, element_type: Attribute) -> np.ndarray:
    """Round computed values (f32 for floats) to the storage of `element_type`."""
    if element_type == bf16:
        return np.asarray(round_to_bf16(values))
    with np.errstate(over="ignore"):  # overflow to infinity is the rounding
        return np.asarray(values).astype(numpy_dtype(element_type))


_EPSILON = {f16: 2.0**-10, bf16: 2.0**-7}
"""Machine epsilon of the narrow float types (f32 uses numpy's)."""


def epsilon(element_type: Attribute) -> float:
    """The machine epsilon (one ulp at 1.0) of a float element type."""
    return _EPSILON.get(element_type, float(np.finfo(np.float32).eps))


def largest_computed(element_type: Attribute) -> float:
    """The largest finite value the vector unit computes a float of
    `element_type` in: f16 in f16, bf16 and f32 in f32."""
    return float(np.finfo(np.float16 if element_type == f16 else np.float32).max)


GELU_SCALE = float(np.float32(2.0 * np.sqrt(2.0 / np.pi)))
"""`2 sqrt(2/pi)` rounded to f32: gelu(x) = x / (1 + exp(-GELU_SCALE (x + GELU_CUBIC
x^3))), the tanh form `0.5 x (1 + tanh(sqrt(2/pi) (x + GELU_CUBIC x^3)))`."""

GELU_CUBIC = 0.044715
"""The cubic coefficient of GELU's tanh form."""


def ordered_matmul(
    lhs: np.ndarray, rhs: np.ndarray, init: np.ndarray | None = None
) -> np.ndarray:
    """`init + lhs @ rhs` with each product rounded and added in k order, in
    the operands' float dtype (f32 here): `acc = acc + lhs[..., k] * rhs[k]`;
    integers (i32 here), exact in any order, through `np.matmul`.

    BLAS (`np.matmul`) sums in an order that depends on the CPU's kernel, so
    its f32 results differ between machines; this order is defined, and a K
    split into steps that accumulate (`init` = the previous steps' sum) gives
    exactly the whole sum. The products of a chunk of steps are formed at once
    and summed by a reduction over their leading axis, which numpy performs as
    one whole-array add after another (pairwise summation only runs along the
    innermost axis, hence the plain loop when the result is a few elements)."""
    if lhs.ndim == 1 or rhs.ndim == 1:  # numpy's vector forms, through matrices
        result = ordered_matmul(np.atleast_2d(lhs), rhs.reshape(rhs.shape[0], -1))
        if rhs.ndim == 1:
            result = result[..., 0]
        return result[0] if lhs.ndim == 1 else result
    k = lhs.shape[-1]
    if rhs.shape[-2] != k:
        raise ValueError(f"matmul: K extents differ: {k} vs {rhs.shape[-2]}")
    shape = np.broadcast_shapes(lhs.shape[:-1] + (1,), rhs.shape[:-2] + (1, 1))
    shape = shape[:-1] + (rhs.shape[-1],)
    acc = np.zeros(shape, dtype=np.result_type(lhs, rhs))
    if init is not None:
        acc[...] = init
    if acc.dtype.kind != "f":  # integer sums are exact (wrapping) in any order
        return acc + np.matmul(lhs, rhs)
    # k x (batch) x m x 1 and k x (batch) x 1 x n, batch axes aligned
    columns = np.moveaxis(lhs[(None,) * (len(shape) - lhs.ndim)], -1, 0)[..., None]
    rows = np.moveaxis(rhs[(None,) * (len(shape) - rhs.ndim)], -2, 0)[..., None, :]
    if acc.size < _ORDERED_REDUCE_MIN:
        for step in range(k):
            acc += columns[step] * rows[step]
        return acc
    chunk = max(1, _ORDERED_CHUNK_ELEMENTS // acc.size)
    terms = np.empty((min(chunk, k) + 1, *shape), dtype=acc.dtype)
    for start in range(0, k, chunk):
        stop = min(start + chunk, k)
        part = terms[: stop - start + 1]
        part[0] = acc
        np.multiply(columns[start:stop], rows[start:stop], out=part[1:])
        np.add.reduce(part, axis=0, out=acc)
    return acc


# ordered_matmul: results of fewer elements are summed by a plain loop (a
# reduction whose inner loop would be the k axis is pairwise); a chunk of
# products is bounded to 4 MiB of f32.
_ORDERED_REDUCE_MIN = 16
_ORDERED_CHUNK_ELEMENTS = 1 << 20
