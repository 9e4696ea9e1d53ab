"""Element types and float formats of the `ascend_hw` machine.

How each element type is stored in the simulated memories (bf16 as its raw bits:
numpy has no bfloat16), and the conversions of `vcast` and `fixpipe` with their
explicit rounding modes. These are hardware behaviour, so they live here and not
in `pypto_mlir.numerics` (the reference numerics shared by the levels).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    bf16,
    f16,
    f32,
    i8,
    i16,
    i32,
)
from xdsl.ir import Attribute

from pypto_mlir.dialects.ascend_hw import RoundMode
from pypto_mlir.interp.ascend_hw.errors import HwRunError

_STORAGE: dict[Attribute, np.dtype[Any]] = {
    f16: np.dtype(np.float16),
    bf16: np.dtype(np.uint16),  # the bits; numpy has no bfloat16
    f32: np.dtype(np.float32),
    i8: np.dtype(np.int8),
    i16: np.dtype(np.int16),
    i32: np.dtype(np.int32),
    IndexType(): np.dtype(np.int64),  # GM index arrays (CSR offsets, indices)
}
"""How an element type is stored in the simulated memories."""

_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32)}
"""Unsigned dtype of each element size: for ops that move bits, not values."""

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)

_I32 = np.dtype(np.int32)
_U8 = np.dtype(np.uint8)


def storage_dtype(element_type: Attribute) -> np.dtype[Any]:
    try:
        return _STORAGE[element_type]
    except KeyError:
        raise HwRunError(f"{element_type} is not an ascend_hw element type") from None


def _to_compute(values: np.ndarray) -> np.ndarray:
    """f16 values as f32 (float arithmetic is evaluated in f32); others as they are."""
    return values.astype(_F32) if values.dtype == _F16 else values


@dataclass(frozen=True)
class _FloatFormat:
    """A binary float format, for rounding with an explicit mode."""

    mantissa_bits: int
    min_exponent: int
    max_finite: float


_FORMATS = {
    "f16": _FloatFormat(10, -14, 65504.0),
    "bf16": _FloatFormat(7, -126, float.fromhex("0x1.fe00000000000p+127")),
    "f32": _FloatFormat(23, -126, float(np.finfo(np.float32).max)),
}


def _round_integral(q: np.ndarray, mode: RoundMode) -> np.ndarray:
    """Round f64 values to integers with `mode` (`odd`: truncate, then make odd if
    inexact)."""
    if mode in (RoundMode.RINT, RoundMode.NONE):
        return np.rint(q)
    if mode == RoundMode.ROUND:
        return np.copysign(np.floor(np.abs(q) + 0.5), q)
    if mode == RoundMode.FLOOR:
        return np.floor(q)
    if mode == RoundMode.CEIL:
        return np.ceil(q)
    truncated = np.trunc(q)
    if mode == RoundMode.TRUNC:
        return truncated
    inexact_even = (truncated != q) & (np.fmod(truncated, 2) == 0)
    return np.where(inexact_even, truncated + np.sign(q), truncated)


def round_float(values: np.ndarray, fmt: str, mode: RoundMode) -> np.ndarray:
    """`values` rounded to the float format `fmt` with `mode`, as f64.

    The rounding is done as if the exponent range were unbounded; a result beyond
    the format's largest finite value becomes +-inf (vcast's overflow rule).
    Subnormals round on their fixed quantum.
    """
    spec = _FORMATS[fmt]
    x = np.asarray(values, dtype=np.float64)
    _, exponent = np.frexp(x)
    quantum = np.ldexp(
        1.0, np.maximum(exponent - 1, spec.min_exponent) - spec.mantissa_bits
    )
    rounded = _round_integral(x / quantum, mode) * quantum
    return np.where(np.abs(rounded) > spec.max_finite, np.copysign(np.inf, x), rounded)


def bf16_bits(values: np.ndarray, mode: RoundMode = RoundMode.RINT) -> np.ndarray:
    """The bf16 bit patterns (uint16) of float values, rounded with `mode`
    (an array, also for a rank-0 one: GM writes land in it)."""
    exact = np.asarray(round_float(values, "bf16", mode), dtype=np.float32)
    return np.asarray((exact.view(np.uint32) >> 16).astype(np.uint16))


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """The f32 values of bf16 bit patterns."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _round_to_int(values: np.ndarray, dtype: np.dtype[Any], mode: RoundMode):
    """Float -> integer: round with `mode`, saturate to the range, NaN -> 0."""
    info = np.iinfo(dtype)
    rounded = _round_integral(np.asarray(values, dtype=np.float64), mode)
    rounded = np.clip(np.nan_to_num(rounded, nan=0.0), info.min, info.max)
    return rounded.astype(dtype)


def convert(
    values: np.ndarray, src: Attribute, dst: Attribute, mode: RoundMode
) -> np.ndarray:
    """`vcast`/`fixpipe` conversion of stored `src` values to stored `dst` values."""
    if src == bf16:
        values = bf16_values(values)
    if dst == f32:
        if isinstance(src, IntegerType) and src.width.data > 16:
            return round_float(values, "f32", mode).astype(np.float32)
        return values.astype(np.float32)
    if dst == f16:
        if src == i8:
            return values.astype(np.float16)
        return round_float(values, "f16", mode).astype(np.float16)
    if dst == bf16:
        return bf16_bits(values, mode)
    return _round_to_int(values, storage_dtype(dst), mode)


def scalar_value(value: Any, element_type: Attribute) -> Any:
    """A scalar operand as a numpy scalar of `element_type`'s storage."""
    if isinstance(value, IntegerAttr | FloatAttr):
        value = value.value.data
    dtype = storage_dtype(element_type)
    if element_type == bf16:
        return bf16_bits(np.array([value]))[0]
    if dtype.kind == "f":
        return dtype.type(value)
    return np.array(int(value), dtype=np.int64).astype(dtype)[()]
