"""The interpreter's shortcuts give what the general code gives: index attributes
assembled without xDSL's checks, accesses moved along a tensor."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, Signedness
from xdsl.interpreters.builtin import scalar_attr

from pypto_mlir.interp.ascend_hw import _int_attr
from pypto_mlir.sim import Access, AccessError, GmTensor

TYPES = [
    IndexType(),
    IntegerType(64),
    IntegerType(32),
    IntegerType(8),
    IntegerType(1),
    IntegerType(16, Signedness.SIGNED),
    IntegerType(16, Signedness.UNSIGNED),
]


@given(st.sampled_from(TYPES), st.integers(-(2**70), 2**70) | st.integers(-300, 300))
def test_index_attributes_equal_scalar_attr(value_type, value: int) -> None:
    expected = scalar_attr(value, value_type, 64)
    if isinstance(value_type, IntegerType):
        expected = IntegerAttr(value, value_type, truncate_bits=True)
    made = _int_attr(value, value_type, 64)
    assert type(made) is IntegerAttr
    assert made == expected and hash(made) == hash(expected)
    assert made.value.data == expected.value.data and made.type == expected.type
    assert str(made) == str(expected)


@given(
    st.integers(0, 4096),
    st.integers(0, 64),
    st.integers(1, 5),
    st.integers(0, 200),
    st.integers(-4, 4096),
)
def test_moved_access_equals_a_new_one(
    start: int, length: int, count: int, stride: int, moved: int
) -> None:
    tensor = GmTensor(0, "x", np.zeros(16, np.uint8))
    stride = max(stride, length)
    access = Access(tensor, start, length, count, stride)
    if moved < 0:
        with pytest.raises(AccessError, match="bad access"):
            access.at(moved)
        return
    expected = Access(tensor, moved, length, count, stride)
    assert access.at(moved) == expected
    assert repr(access.at(moved)) == repr(expected)
