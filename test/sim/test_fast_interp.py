"""The interpreter's shortcuts give what the general code gives: index attributes
assembled without xDSL's checks, accesses moved along a tensor, elementwise vector
ops as one ufunc call."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
)
from xdsl.dialects.test import TestOp as OperandsOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import scalar_attr

from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import verify
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.interp.index_arith import IndexArithFunctions, int_attr
from pypto_mlir.sim import Access, AccessError, GmTensor
from pypto_mlir.targets import load_target

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
    made = int_attr(value, value_type, 64)
    assert type(made) is IntegerAttr
    assert made == expected and hash(made) == hash(expected)
    assert made.value.data == expected.value.data and made.type == expected.type
    assert str(made) == str(expected)


@given(
    st.sampled_from(TYPES),
    st.sampled_from(list(arith.CMPI_COMPARISON_OPERATIONS)),
    st.integers(-300, 300) | st.integers(-(2**63), 2**64 - 1),
    st.integers(-300, 300) | st.integers(-(2**63), 2**64 - 1),
)
def test_cmpi_equals_xdsls(value_type, predicate: str, lhs: int, rhs: int) -> None:
    """IndexArithFunctions' cmpi (its results made once) gives xDSL's answer for
    every predicate, on operands in and out of their type's signed range."""
    operands = [int_attr(v, value_type, 64) for v in (lhs, rhs)]
    holder = OperandsOp(result_types=[value_type, value_type])
    op = arith.CmpiOp(holder.results[0], holder.results[1], predicate)
    interpreter = Interpreter(ModuleOp([]), index_bitwidth=64)
    args = tuple(operands)
    (ours,) = IndexArithFunctions().run_cmpi(interpreter, op, args).values
    (theirs,) = ArithFunctions().run_cmpi(interpreter, op, args).values
    assert ours == theirs and str(ours) == str(theirs), predicate


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


BINARY = ("vadd", "vsub", "vmul", "vdiv", "vmax", "vmin")
UNARY = ("vabs", "vsqrt", "vexp", "vrelu")
SCALAR = ("vadds", "vmuls", "vmaxs", "vmins")


def _vector_kernel(op: str, elem: str, size: int, dst: str, attrs: str = "") -> str:
    """Load a, b (and d) into UB, run `op` into `dst`, store everything back."""
    mem = f"memref<{size}x{elem}>"
    buf = f"!ascend_hw.buf<{size}x{elem}, ub>"
    nbytes = size * (2 if elem == "f16" else 4)
    lines = ["%c0 = arith.constant 0 : index"]
    for k, name in enumerate("abd"):
        lines.append(
            f"%{name} = ascend_hw.alloc [{k * nbytes}, {(k + 1) * nbytes}) : {buf}"
        )
    for name in "abd":
        lines.append(
            f"ascend_hw.dma_load %g{name}[%c0] -> %{name} {{bursts = 1, burst_bytes = "
            f"{nbytes}}} : {mem} -> {buf}"
        )
    lines += ["ascend_hw.set_flag mte2 -> v, 0", "ascend_hw.wait_flag mte2 -> v, 0"]
    if op in BINARY:
        lines.append(f"ascend_hw.{op} %a, %b -> %{dst} {attrs} : {buf}, {buf} -> {buf}")
    elif op in UNARY:
        lines.append(f"ascend_hw.{op} %a -> %{dst} {attrs} : {buf} -> {buf}")
    else:
        lines.append(
            f"ascend_hw.{op} %a, %s -> %{dst} {attrs} : {buf}, {elem} -> {buf}"
        )
    lines += ["ascend_hw.set_flag v -> mte3, 0", "ascend_hw.wait_flag v -> mte3, 0"]
    for name in "abd":
        lines.append(
            f"ascend_hw.dma_store %{name} -> %g{name}[%c0] {{bursts = 1, burst_bytes = "
            f"{nbytes}}} : {buf} -> {mem}"
        )
    params = ", ".join([f"%g{name}: {mem}" for name in "abd"] + [f"%s: {elem}"])
    return (
        'builtin.module attributes {pypto.target = "ascend910b"} {\n'
        f"func.func @k({params}) {{\n  "
        + "\n  ".join(lines)
        + "\n  func.return\n}\n}\n"
    )


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 6e-8, -1.0, 1e-3]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(BINARY + UNARY + SCALAR),
    st.sampled_from(("f16", "f32")),
    st.sampled_from(("d", "a")),
    st.integers(1, 3),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_elementwise_fast_path_matches_the_general_one(
    op: str, elem: str, dst: str, repeats: int, strided: bool, seed: int
) -> None:
    """One ufunc call into dst (the fast path) and the f32 evaluation rounded once
    (the general one) give the same bits, specials and in-place included, on
    contiguous and on strided (repeat, block, element) views."""
    import pypto_mlir.interp.ascend_hw.vector_kernels as hw_interp

    dtype = np.dtype(np.float16 if elem == "f16" else np.float32)
    size = repeats * 256 // dtype.itemsize
    attrs = f"{{repeat = {repeats}}}"
    if strided:
        size = 4096 // dtype.itemsize
        n = 3 if op in BINARY else 2
        attrs = (
            f"{{repeat = {repeats}, blk_stride = array<i64: {', '.join(['2'] * n)}>, "
            f"rep_stride = array<i64: {', '.join(['30'] * n)}>}}"
        )
    rng = np.random.default_rng(seed)
    data = [(rng.standard_normal(size) * 8).astype(dtype) for _ in "abd"]
    for values in data[:2]:
        spots = rng.integers(0, size, 6)
        values[spots] = rng.choice(SPECIAL, 6).astype(dtype)
        if elem == "f16":  # any bit pattern: subnormals, NaN payloads
            spots = rng.integers(0, size, 16)
            values.view(np.uint16)[spots] = rng.integers(0, 1 << 16, 16)
    scalar = float(rng.choice([*SPECIAL[:4], 0.5, -3.25]))
    results = []
    for exact in (hw_interp._EXACT_UFUNCS, frozenset()):
        module = parse_chunk(
            default_context(),
            SourceChunk(_vector_kernel(op, elem, size, dst, attrs), 1),
            "k",
        )
        verify(module)
        arrays = [d.copy() for d in data]
        saved = hw_interp._EXACT_UFUNCS
        hw_interp._EXACT_UFUNCS = exact
        try:
            run_hw_function(module, "k", [*arrays, scalar], load_target("ascend910b"))
        finally:
            hw_interp._EXACT_UFUNCS = saved
        results.append([a.view(np.uint8).copy() for a in arrays])
    for fast, general in zip(*results, strict=True):
        assert np.array_equal(fast, general)
