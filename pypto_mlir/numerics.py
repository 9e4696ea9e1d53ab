"""Numerics shared by the interpreters, the passes, the checker and the frontend.

One place for the facts several layers must agree on, so that a pass folding a
constant rounds it as the interpreter does and the checker's tolerance follows
the same epsilon:

- how values of an element type are stored in numpy (`numpy_dtype`: bf16 as
  float32 arrays holding bf16 values, numpy having no bfloat16);
- rounding computed values to an element type (`round_to_element_type`, round to
  nearest even; `round_to_bf16` for bf16);
- the machine epsilon of each float type (`epsilon`);
- the constants of GELU's tanh form (`GELU_SCALE`, `GELU_CUBIC`).

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
