"""Element types of kernel tensors: `pto.f16`, `pto.f32`, ...

A `DType` names a `!tv.tensor` element type and the numpy dtype that holds its
values at run time (bf16 values live in float32 arrays, as in the reference
interpreter). Used as a kernel annotation on its own, a dtype declares a scalar
parameter: `def scale(x: pto.Tensor[(8,), pto.f32], alpha: pto.f32)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import builtin
from xdsl.ir import Attribute


@dataclass(frozen=True, eq=False)
class DType:
    """An element type of kernel tensors and scalars."""

    name: str
    element_type: Attribute
    """The xDSL type of an element (`f16`)."""
    numpy_dtype: np.dtype
    """The numpy dtype of arrays holding values of this type."""

    @property
    def is_float(self) -> bool:
        return self.numpy_dtype.kind == "f"

    def __repr__(self) -> str:
        return f"pto.{self.name}"

    def __str__(self) -> str:
        return self.name


f16 = DType("f16", builtin.f16, np.dtype(np.float16))
bf16 = DType("bf16", builtin.bf16, np.dtype(np.float32))
f32 = DType("f32", builtin.f32, np.dtype(np.float32))
i8 = DType("i8", builtin.i8, np.dtype(np.int8))
i16 = DType("i16", builtin.i16, np.dtype(np.int16))
i32 = DType("i32", builtin.i32, np.dtype(np.int32))

DTYPES: tuple[DType, ...] = (f16, bf16, f32, i8, i16, i32)


def dtype_of(element_type: Attribute) -> DType:
    """The `DType` of an xDSL element type; ValueError for other types."""
    for dtype in DTYPES:
        if dtype.element_type == element_type:
            return dtype
    raise ValueError(f"{element_type} is not a kernel element type")
