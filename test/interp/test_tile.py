"""Numerics of the tile reference interpreter against numpy references.

Kernels are tiled loop nests written in tile IR with tails at the edges (valid
extents computed as min(tile, size - offset) with arith.cmpi/select), run by
`run_tile_function` on numpy arrays. References compute in float64 and round
to the element type, so they check the stated semantics rather than repeat the
implementation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tile_kernels import elementwise_kernel, extent, matmul_kernel
from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    Builtin,
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    bf16,
    f16,
    f32,
    i8,
    i32,
)
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.utils.exceptions import InterpretationError, VerifyException

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import DYNAMIC_INDEX, TileType
from pypto_mlir.interp.tensor_view import round_to_bf16, run_tv_function
from pypto_mlir.interp.tile import TileValue, cast_values, run_tile_function

SETTINGS = settings(max_examples=25, deadline=None)
NUMPY = {"f16": np.float16, "f32": np.float32, "i32": np.int32, "i8": np.int8}


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def context() -> Context:
    ctx = Context()
    for dialect in (
        Builtin,
        func.Func,
        arith.Arith,
        scf.Scf,
        memref.MemRef,
        tv.TensorView,
        tile.Tile,
    ):
        ctx.load_dialect(dialect)
    return ctx


def parse(source: str) -> ModuleOp:
    module = Parser(context(), source).parse_module()
    module.verify()
    return module


def tiled_2d(
    rows: int,
    cols: int,
    tm: int,
    tn: int,
    element: str,
    body: str,
    out_element: str = "",
) -> ModuleOp:
    """`@f(%x, %out)`: for each tm x tn tile %t of %x (tails included), `body`
    computes %r (same tile type T), which is stored into %out."""
    return parse(elementwise_kernel(rows, cols, tm, tn, element, body, out_element))


def rounded(values: np.ndarray, dtype: type) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(dtype)


shapes = st.integers(1, 40)
tile_sizes = st.sampled_from([1, 3, 8, 16])


# --------------------------------------------------------------------------------------
# Load / store
# --------------------------------------------------------------------------------------


@SETTINGS
@given(rows=shapes, cols=shapes, tm=tile_sizes, tn=tile_sizes)
def test_copy_with_tails_is_exact(rows: int, cols: int, tm: int, tn: int) -> None:
    module = tiled_2d(rows, cols, tm, tn, "f16", "%r = tile.relu %t : T")
    x = (
        np.random.default_rng(rows * cols)
        .standard_normal((rows, cols))
        .astype(np.float16)
    )
    out = np.full_like(x, np.nan)
    run_tile_function(module, "f", [x, out])
    np.testing.assert_array_equal(out, np.maximum(x, 0))


def test_store_writes_only_the_valid_window() -> None:
    module = parse(
        """
func.func @f(%x: memref<10x20xf32>, %out: memref<10x20xf32>, %r: index, %c: index) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %t = tile.load %x[%c2, %c3] valid [%r, %c] : memref<10x20xf32> -> !tile.tile<8x16xf32, ub, valid = [?, ?]>
  tile.store %t, %out[%c3, %c2] : !tile.tile<8x16xf32, ub, valid = [?, ?]> -> memref<10x20xf32>
  func.return
}
"""
    )
    x = np.arange(200, dtype=np.float32).reshape(10, 20)
    out = np.full_like(x, -1.0)
    run_tile_function(module, "f", [x, out, 5, 7])
    expected = np.full_like(x, -1.0)
    expected[3:8, 2:9] = x[2:7, 3:10]
    np.testing.assert_array_equal(out, expected)


def test_load_from_strided_view_and_higher_rank_memref() -> None:
    module = parse(
        """
func.func @f(%v: memref<4x6xf32, strided<[40, 2], offset: ?>>, %x: memref<3x5x8xf32>,
             %out: memref<4x6xf32, strided<[40, 2], offset: ?>>) -> !tile.tile<5x8xf32, ub> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %t = tile.load %v[%c0, %c0] : memref<4x6xf32, strided<[40, 2], offset: ?>> -> !tile.tile<4x6xf32, ub>
  %n = tile.neg %t : !tile.tile<4x6xf32, ub>
  tile.store %n, %out[%c0, %c0] : !tile.tile<4x6xf32, ub> -> memref<4x6xf32, strided<[40, 2], offset: ?>>
  %u = tile.load %x[%c2, %c0, %c0] : memref<3x5x8xf32> -> !tile.tile<5x8xf32, ub>
  func.return %u : !tile.tile<5x8xf32, ub>
}
"""
    )
    base = np.arange(4 * 20, dtype=np.float32).reshape(4, 20)
    view = base[:, 1:13:2]
    target = np.zeros_like(base)
    x = np.arange(120, dtype=np.float32).reshape(3, 5, 8)
    (u,) = run_tile_function(module, "f", [view, x, target[:, 1:13:2]])
    np.testing.assert_array_equal(target[:, 1:13:2], -view)
    assert not target[:, ::2].any(), "the store wrote outside the view"
    np.testing.assert_array_equal(u.valid_data(), x[2])


def test_out_of_bounds_window_is_an_error() -> None:
    module = parse(
        """
func.func @f(%x: memref<10x16xf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%i, %c0] : memref<10x16xf16> -> !tile.tile<4x16xf16, ub>
  func.return
}
"""
    )
    x = np.zeros((10, 16), np.float16)
    run_tile_function(module, "f", [x, 6])
    with pytest.raises(
        InterpretationError, match=r"window \[7, 11\) of dim 0 is outside"
    ):
        run_tile_function(module, "f", [x, 7])


def test_valid_extent_beyond_the_tile_is_an_error() -> None:
    module = parse(
        """
func.func @f(%x: memref<100x16xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] valid [%n] : memref<100x16xf16> -> !tile.tile<8x16xf16, ub, valid = [?, 16]>
  func.return
}
"""
    )
    with pytest.raises(
        InterpretationError, match=r"valid extent 9 of dim 0 is outside \[1, 8\]"
    ):
        run_tile_function(module, "f", [np.zeros((100, 16), np.float16), 9])


def test_memref_alloc_shaped_array_is_a_gm_buffer() -> None:
    """xDSL's memref interpreter returns ShapedArrays; tile ops use them as views."""
    module = parse(
        """
func.func @f(%x: memref<4x8xf32>) -> !tile.tile<4x8xf32, ub> {
  %c0 = arith.constant 0 : index
  %buf = memref.alloc() : memref<4x8xf32>
  %t = tile.load %x[%c0, %c0] : memref<4x8xf32> -> !tile.tile<4x8xf32, ub>
  %e = tile.exp %t : !tile.tile<4x8xf32, ub>
  tile.store %e, %buf[%c0, %c0] : !tile.tile<4x8xf32, ub> -> memref<4x8xf32>
  %back = tile.load %buf[%c0, %c0] : memref<4x8xf32> -> !tile.tile<4x8xf32, ub>
  func.return %back : !tile.tile<4x8xf32, ub>
}
"""
    )
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    (back,) = run_tile_function(module, "f", [x])
    np.testing.assert_array_equal(back.data, np.exp(x))


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


UNARY_REFERENCES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x,
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "gelu": lambda x: (
        0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    ),
    "silu": lambda x: x * _sigmoid(x),
}
POSITIVE_ONLY = {"log", "sqrt", "rsqrt"}


@pytest.mark.parametrize("element", ["f16", "f32"])
@pytest.mark.parametrize("name", sorted(UNARY_REFERENCES))
def test_unary_with_tails(name: str, element: str) -> None:
    rows, cols = 37, 29
    module = tiled_2d(rows, cols, 16, 8, element, f"%r = tile.{name} %t : T")
    rng = np.random.default_rng(7)
    low = 0.05 if name in POSITIVE_ONLY else -4.0
    x = rng.uniform(low, 4.0, (rows, cols)).astype(NUMPY[element])
    out = np.full_like(x, np.nan)
    run_tile_function(module, "f", [x, out])
    expected = rounded(UNARY_REFERENCES[name](x.astype(np.float64)), NUMPY[element])
    # Computed in f32 and rounded once: f16 results are correctly rounded except
    # for rare double-rounding cases; f32 ones are within a few ulps.
    if element == "f16":
        np.testing.assert_array_max_ulp(out, expected, maxulp=1)
    else:
        np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["neg", "abs", "relu"])
def test_integer_unary_wraps(name: str) -> None:
    module = tiled_2d(3, 8, 2, 8, "i32", f"%r = tile.{name} %t : T")
    x = np.array([[-(2**31), -5, 0, 7, 2**31 - 1, -1, 3, 4]] * 3, dtype=np.int32)
    out = np.zeros_like(x)
    run_tile_function(module, "f", [x, out])
    with np.errstate(over="ignore"):
        expected = UNARY_REFERENCES[name](x.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(out, expected)


BINARY_REFERENCES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
}


@pytest.mark.parametrize("name", sorted(BINARY_REFERENCES))
@SETTINGS
@given(rows=shapes, cols=shapes, tm=tile_sizes, tn=tile_sizes)
def test_binary_tile_tile_with_tails(
    name: str, rows: int, cols: int, tm: int, tn: int
) -> None:
    """Two f16 tiles (the second computed from the first): add/sub/mul/div are
    correctly rounded (exact in f32, rounded once), max/min exact."""
    module = tiled_2d(
        rows, cols, tm, tn, "f16", f"%s = tile.sqrt %t : T\n%r = tile.{name} %t, %s : T"
    )
    rng = np.random.default_rng(rows * 100 + cols)
    x = rng.uniform(0.5, 4, (rows, cols)).astype(np.float16)
    out = np.full_like(x, np.nan)
    run_tile_function(module, "f", [x, out])
    s = rounded(np.sqrt(x.astype(np.float64)), np.float16).astype(np.float64)
    expected = rounded(BINARY_REFERENCES[name](x.astype(np.float64), s), np.float16)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    ("body", "reference"),
    [
        ("%r = tile.add %t, %c : T, f32", lambda x, c: x + c),
        ("%r = tile.sub %c, %t : f32, T", lambda x, c: c - x),
        ("%r = tile.div %c, %t : f32, T", lambda x, c: c / x),
        ("%r = tile.max %t, %c : T, f32", np.maximum),
    ],
)
def test_binary_with_a_scalar(body: str, reference: Callable[..., np.ndarray]) -> None:
    module = tiled_2d(19, 21, 8, 16, "f32", "%c = arith.constant 0.75 : f32\n" + body)
    x = np.random.default_rng(3).uniform(0.5, 2, (19, 21)).astype(np.float32)
    out = np.full_like(x, np.nan)
    run_tile_function(module, "f", [x, out])
    expected = rounded(reference(x.astype(np.float64), 0.75), np.float32)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("cmp", ["lt", "le", "gt", "ge", "eq", "ne"])
@SETTINGS
@given(rows=shapes, cols=shapes, tm=tile_sizes, tn=tile_sizes)
def test_select_with_tails(cmp: str, rows: int, cols: int, tm: int, tn: int) -> None:
    """tile.select on the valid regions of tail tiles: np.where bit for bit,
    with ties, NaN and -0.0 against the tile's square root."""
    module = tiled_2d(
        rows,
        cols,
        tm,
        tn,
        "f32",
        f"%s = tile.sqrt %t : T\n%r = tile.select {cmp} %t, %s, %s, %t : T",
    )
    rng = np.random.default_rng(rows * 100 + cols)
    pool = np.array([0.0, -0.0, 1.0, 4.0, 0.25, 2.0, np.nan, np.inf], np.float32)
    x = rng.choice(pool, (rows, cols))
    out = np.full_like(x, 7.0)
    run_tile_function(module, "f", [x, out])
    with np.errstate(invalid="ignore"):
        s = np.sqrt(x)
        expected = np.where(op_facts.COMPARE[cmp](x, s), s, x)
    np.testing.assert_array_equal(out.view(np.uint32), expected.view(np.uint32))


def test_scalar_operand_is_rounded_to_its_type() -> None:
    """`arith.constant 0.1 : f16` is the f16 nearest 0.1, not 0.1."""
    module = tiled_2d(
        2,
        8,
        2,
        8,
        "f16",
        "%c = arith.constant 0.1 : f16\n%r = tile.mul %t, %c : T, f16",
    )
    x = np.full((2, 8), 1000, np.float16)
    out = np.zeros_like(x)
    run_tile_function(module, "f", [x, out])
    np.testing.assert_array_equal(
        out, rounded(1000 * float(np.float16(0.1)), np.float16)
    )


def test_integer_binary_wraps() -> None:
    module = tiled_2d(2, 8, 2, 8, "i32", "%r = tile.add %t, %t : T")
    x = np.full((2, 8), 2**30 + 5, np.int32)
    out = np.zeros_like(x)
    run_tile_function(module, "f", [x, out])
    np.testing.assert_array_equal(out, np.full((2, 8), -(2**31) + 10, np.int32))


def test_dynamic_valid_extents_must_agree_at_run_time() -> None:
    module = parse(
        """
func.func @f(%x: memref<16x16xf32>, %a: index, %b: index) {
  %c0 = arith.constant 0 : index
  %s = tile.load %x[%c0, %c0] valid [%a] : memref<16x16xf32> -> !tile.tile<16x16xf32, ub, valid = [?, 16]>
  %t = tile.load %x[%c0, %c0] valid [%b] : memref<16x16xf32> -> !tile.tile<16x16xf32, ub, valid = [?, 16]>
  %r = tile.add %s, %t : !tile.tile<16x16xf32, ub, valid = [?, 16]>
  func.return
}
"""
    )
    x = np.zeros((16, 16), np.float32)
    run_tile_function(module, "f", [x, 5, 5])
    with pytest.raises(
        InterpretationError,
        match=r"valid extents of dim 0 differ at run time: \[5, 6\]",
    ):
        run_tile_function(module, "f", [x, 5, 6])


@SETTINGS
@given(rows=shapes, cols=shapes, tm=tile_sizes, tn=tile_sizes)
def test_tiled_swish_equals_the_tv_reference_bit_for_bit(
    rows: int, cols: int, tm: int, tn: int
) -> None:
    """Elementwise ops round once per op in both interpreters, so tiling an
    elementwise chain changes no bit, whatever the tails."""
    tensor = f"!tv.tensor<{rows}x{cols}xf16>"
    reference = parse(
        f"""
func.func @f(%x: {tensor}) -> {tensor} {{
  %s = tv.sigmoid %x : {tensor}
  %y = tv.mul %x, %s : {tensor}
  func.return %y : {tensor}
}}
"""
    )
    module = tiled_2d(
        rows, cols, tm, tn, "f16", "%s = tile.sigmoid %t : T\n%r = tile.mul %t, %s : T"
    )
    x = np.random.default_rng(rows * cols).normal(0, 3, (rows, cols)).astype(np.float16)
    out = np.full_like(x, np.nan)
    run_tile_function(module, "f", [x, out])
    (expected,) = run_tv_function(reference, "f", [x])
    np.testing.assert_array_equal(out, expected)


def test_tile_arguments_must_match_their_type() -> None:
    module = parse(
        """
func.func @f(%t: !tile.tile<8x16xf32, ub, valid = [?, 16]>) {
  func.return
}
"""
    )
    good = np.zeros((8, 16), np.float32)
    run_tile_function(module, "f", [TileValue(good, (3, 16))])
    with pytest.raises(InterpretationError, match="holds a float32 array of shape"):
        run_tile_function(module, "f", [TileValue(good.astype(np.float16), (3, 16))])
    with pytest.raises(InterpretationError, match="differs from the static 16"):
        run_tile_function(module, "f", [TileValue(good, (3, 15))])


# --------------------------------------------------------------------------------------
# Row-wise kernels: reductions, broadcasts, softmax, layernorm
# --------------------------------------------------------------------------------------


def row_kernel(rows: int, cols: int, tm: int, tn: int, body: str) -> ModuleOp:
    """`@f(%x, %out)`: rows in blocks of tm; a block keeps its whole (padded) row
    of tn >= cols columns in one tile %t; `body` computes %r."""
    assert tn >= cols
    x_type = f"memref<{rows}x{cols}xf32>"
    t = f"!tile.tile<{tm}x{tn}xf32, ub, valid = [?, {cols}]>"
    v = f"!tile.tile<{tm}x1xf32, ub, valid = [?, 1]>"
    body = body.replace("TV", v).replace("T", t)
    return parse(
        f"""
func.func @f(%x: {x_type}, %out: {x_type}) {{
  %c0 = arith.constant 0 : index
  %rows = arith.constant {rows} : index
  %tm = arith.constant {tm} : index
  scf.for %i = %c0 to %rows step %tm {{
    {extent("vi", "%rows", "%i", "%tm")}
    %t = tile.load %x[%i, %c0] valid [%vi] : {x_type} -> {t}
    {body}
    tile.store %r, %out[%i, %c0] : {t} -> {x_type}
  }}
  func.return
}}
"""
    )


SOFTMAX = """
%m = tile.reduce_max %t, axis = 1 : T -> TV
%d = tile.sub %t, %m : T, TV
%e = tile.exp %d : T
%s = tile.reduce_sum %e, axis = 1 : T -> TV
%r = tile.div %e, %s : T, TV
"""


@SETTINGS
@given(rows=st.integers(1, 40), cols=st.integers(1, 64), tm=st.sampled_from([1, 4, 16]))
def test_softmax_rows_with_tails(rows: int, cols: int, tm: int) -> None:
    module = row_kernel(rows, cols, tm, 64, SOFTMAX)
    x = (
        np.random.default_rng(rows + 1000 * cols)
        .normal(0, 3, (rows, cols))
        .astype(np.float32)
    )
    out = np.full_like(x, np.nan)
    run_tile_function(module, "f", [x, out])
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    np.testing.assert_allclose(
        out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7
    )


LAYERNORM = """
%inv_n = arith.constant INV_N : f32
%eps = arith.constant 1.0e-5 : f32
%sum = tile.reduce_sum %t, axis = 1 : T -> TV
%mean = tile.mul %sum, %inv_n : TV, f32
%d = tile.sub %t, %mean : T, TV
%sq = tile.mul %d, %d : T
%ss = tile.reduce_sum %sq, axis = 1 : T -> TV
%var = tile.mul %ss, %inv_n : TV, f32
%ve = tile.add %var, %eps : TV, f32
%rstd = tile.rsqrt %ve : TV
%r = tile.mul %d, %rstd : T, TV
"""


def test_layernorm_rows() -> None:
    rows, cols = 21, 50
    module = row_kernel(rows, cols, 8, 56, LAYERNORM.replace("INV_N", repr(1.0 / cols)))
    x = np.random.default_rng(5).normal(1, 2, (rows, cols)).astype(np.float32)
    out = np.full_like(x, np.nan)
    run_tile_function(module, "f", [x, out])
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    expected = (x64 - mean) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize(
    ("name", "reference"), [("sum", np.sum), ("max", np.max), ("min", np.min)]
)
@SETTINGS
@given(rows=shapes, cols=shapes, tn=st.sampled_from([1, 5, 16]))
def test_row_reduction_across_column_tiles(
    name: str, reference: Callable[..., np.ndarray], rows: int, cols: int, tn: int
) -> None:
    """A row reduction over column tiles, combined in a running [rows, 1] tile
    carried by scf.for; reductions ignore the invalid columns of each tail."""
    combine = {"sum": "add", "max": "max", "min": "min"}[name]
    init = {"sum": "0.0", "max": "0xFF800000", "min": "0x7F800000"}[name]
    x_type = f"memref<{rows}x{cols}xf32>"
    out_type = f"memref<{rows}x1xf32>"
    t = f"!tile.tile<{rows}x{tn}xf32, ub, valid = [{rows}, ?]>"
    v = f"!tile.tile<{rows}x1xf32, ub>"
    module = parse(
        f"""
func.func @f(%x: {x_type}, %out: {out_type}) {{
  %c0 = arith.constant 0 : index
  %cols = arith.constant {cols} : index
  %tn = arith.constant {tn} : index
  %init = arith.constant {init} : f32
  %acc0 = tile.fill %init : f32 -> {v}
  %acc = scf.for %j = %c0 to %cols step %tn iter_args(%a = %acc0) -> ({v}) {{
    {extent("vj", "%cols", "%j", "%tn")}
    %t = tile.load %x[%c0, %j] valid [%vj] : {x_type} -> {t}
    %p = tile.reduce_{name} %t, axis = 1 : {t} -> {v}
    %n = tile.{combine} %a, %p : {v}
    scf.yield %n : {v}
  }}
  tile.store %acc, %out[%c0, %c0] : {v} -> {out_type}
  func.return
}}
"""
    )
    x = (
        np.random.default_rng(rows * cols + tn)
        .normal(0, 1, (rows, cols))
        .astype(np.float32)
    )
    out = np.full((rows, 1), np.nan, np.float32)
    run_tile_function(module, "f", [x, out])
    expected = reference(x.astype(np.float64), axis=1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_column_reduction_and_broadcasts() -> None:
    module = parse(
        """
func.func @f(%x: memref<5x7xf32>, %n: index) -> (!tile.tile<1x8xf32, ub, valid = [1, 7]>, !tile.tile<8x8xf32, ub, valid = [?, 7]>, !tile.tile<8x8xf32, ub, valid = [5, ?]>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<5x7xf32> -> !tile.tile<8x8xf32, ub, valid = [5, 7]>
  %s = tile.reduce_sum %t, axis = 0 : !tile.tile<8x8xf32, ub, valid = [5, 7]> -> !tile.tile<1x8xf32, ub, valid = [1, 7]>
  %b = tile.broadcast %s valid [%n] : !tile.tile<1x8xf32, ub, valid = [1, 7]> -> !tile.tile<8x8xf32, ub, valid = [?, 7]>
  %m = tile.reduce_max %t, axis = 1 : !tile.tile<8x8xf32, ub, valid = [5, 7]> -> !tile.tile<8x1xf32, ub, valid = [5, 1]>
  %c = tile.broadcast %m valid [%n] : !tile.tile<8x1xf32, ub, valid = [5, 1]> -> !tile.tile<8x8xf32, ub, valid = [5, ?]>
  func.return %s, %b, %c : !tile.tile<1x8xf32, ub, valid = [1, 7]>, !tile.tile<8x8xf32, ub, valid = [?, 7]>, !tile.tile<8x8xf32, ub, valid = [5, ?]>
}
"""
    )
    x = np.arange(35, dtype=np.float32).reshape(5, 7)
    s, b, c = run_tile_function(module, "f", [x, 3])
    np.testing.assert_array_equal(s.valid_data(), x.sum(axis=0, keepdims=True))
    assert b.valid == (3, 7)
    np.testing.assert_array_equal(
        b.valid_data(), np.repeat(x.sum(axis=0, keepdims=True), 3, 0)
    )
    assert c.valid == (5, 3)
    np.testing.assert_array_equal(
        c.valid_data(), np.repeat(x.max(axis=1, keepdims=True), 3, 1)
    )


def test_row_and_column_operands_broadcast_together() -> None:
    module = parse(
        """
func.func @f(%r: !tile.tile<4x1xf32, ub>, %c: !tile.tile<1x8xf32, ub, valid = [1, 6]>) -> !tile.tile<4x8xf32, ub, valid = [4, 6]> {
  %s = tile.add %r, %c : !tile.tile<4x1xf32, ub>, !tile.tile<1x8xf32, ub, valid = [1, 6]>
  func.return %s : !tile.tile<4x8xf32, ub, valid = [4, 6]>
}
"""
    )
    r = TileValue(np.arange(4, dtype=np.float32).reshape(4, 1), (4, 1))
    c = TileValue(np.arange(8, dtype=np.float32).reshape(1, 8) * 10, (1, 6))
    (s,) = run_tile_function(module, "f", [r, c])
    np.testing.assert_array_equal(s.valid_data(), r.data + c.data[:, :6])
    assert np.isnan(s.data[:, 6:]).all()


# --------------------------------------------------------------------------------------
# Matmul: L1 and L0 levels, K accumulated in L0C, tails zero-padded
# --------------------------------------------------------------------------------------


@SETTINGS
@given(
    m=st.integers(1, 40),
    n=st.integers(1, 40),
    k=st.integers(1, 70),
    out=st.sampled_from(["f16", "f32"]),
)
def test_tiled_matmul_with_tails(m: int, n: int, k: int, out: str) -> None:
    module = parse(matmul_kernel(m, n, k, 16, 32, 32, out))
    rng = np.random.default_rng(m * 10000 + n * 100 + k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, NUMPY[out])
    run_tile_function(module, "f", [a, b, c])
    expected = a.astype(np.float64) @ b.astype(np.float64)
    tolerance = 1e-3 if out == "f16" else 1e-5
    np.testing.assert_allclose(c, expected, rtol=tolerance, atol=tolerance * np.sqrt(k))


def test_int8_matmul_accumulates_in_i32_and_transposed_move() -> None:
    module = parse(
        """
func.func @f(%a: !tile.tile<32x32xi8, l1, layout = nz>, %b: !tile.tile<32x32xi8, l1, valid = [32, 20], layout = nz>) -> !tile.tile<32x32xi32, l0c, valid = [32, 20]> {
  %a0 = tile.move %a : !tile.tile<32x32xi8, l1, layout = nz> -> !tile.tile<32x32xi8, l0a>
  %bt = tile.move %b transpose : !tile.tile<32x32xi8, l1, valid = [32, 20], layout = nz> -> !tile.tile<32x32xi8, l0a, valid = [20, 32]>
  %b0 = tile.move %b : !tile.tile<32x32xi8, l1, valid = [32, 20], layout = nz> -> !tile.tile<32x32xi8, l0b, valid = [32, 20]>
  %c = tile.matmul %a0, %b0 : !tile.tile<32x32xi8, l0a>, !tile.tile<32x32xi8, l0b, valid = [32, 20]> -> !tile.tile<32x32xi32, l0c, valid = [32, 20]>
  func.return %c : !tile.tile<32x32xi32, l0c, valid = [32, 20]>
}
"""
    )
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (32, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 32)).astype(np.int8)
    (c,) = run_tile_function(
        module, "f", [TileValue(a, (32, 32)), TileValue(b, (32, 20))]
    )
    np.testing.assert_array_equal(
        c.valid_data(), a.astype(np.int64) @ b[:, :20].astype(np.int64)
    )


def test_matmul_valid_k_must_agree_at_run_time() -> None:
    module = parse(
        """
func.func @f(%a: !tile.tile<16x16xf16, l0a, valid = [16, ?], pad = zero>, %b: !tile.tile<16x16xf16, l0b, valid = [?, 16], pad = zero>) {
  %c = tile.matmul %a, %b : !tile.tile<16x16xf16, l0a, valid = [16, ?], pad = zero>, !tile.tile<16x16xf16, l0b, valid = [?, 16], pad = zero> -> !tile.tile<16x16xf32, l0c>
  func.return
}
"""
    )
    a = TileValue(np.zeros((16, 16), np.float16), (16, 5))
    with pytest.raises(
        InterpretationError, match="valid K extents differ at run time: 5 vs 6"
    ):
        run_tile_function(
            module, "f", [a, TileValue(np.zeros((16, 16), np.float16), (6, 16))]
        )


# --------------------------------------------------------------------------------------
# Pad values, poison, cast, fill, transpose, valid_dim
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pad", "element", "value"),
    [
        ("zero", "f16", 0.0),
        ("min", "f32", -np.inf),
        ("max", "f16", np.inf),
        ("min", "i32", np.iinfo(np.int32).min),
        ("max", "i8", np.iinfo(np.int8).max),
    ],
)
def test_load_fills_the_invalid_part_with_the_pad(
    pad: str, element: str, value: float
) -> None:
    tile_type = f"!tile.tile<32x32x{element}, ub, valid = [?, ?], pad = {pad}>"
    module = parse(
        f"""
func.func @f(%x: memref<20x20x{element}>, %r: index, %c: index) -> {tile_type} {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] valid [%r, %c] : memref<20x20x{element}> -> {tile_type}
  func.return %t : {tile_type}
}}
"""
    )
    x = np.ones((20, 20), NUMPY[element])
    (t,) = run_tile_function(module, "f", [x, 20, 3])
    assert t.valid == (20, 3)
    np.testing.assert_array_equal(t.valid_data(), x[:, :3])
    mask = np.ones((32, 32), bool)
    mask[:20, :3] = False
    assert (t.data[mask] == value).all()


def test_undefined_parts_are_poison_and_pad_op_fills_them() -> None:
    module = parse(
        """
func.func @f(%t: !tile.tile<8x16xf32, ub, valid = [?, 16], pad = zero>) -> (!tile.tile<8x16xf32, ub, valid = [?, 16]>, !tile.tile<8x16xf32, ub, valid = [?, 16], pad = max>, !tile.tile<16x8xf32, ub, valid = [16, ?]>) {
  %e = tile.exp %t : !tile.tile<8x16xf32, ub, valid = [?, 16], pad = zero>
  %p = tile.pad %e : !tile.tile<8x16xf32, ub, valid = [?, 16]> -> !tile.tile<8x16xf32, ub, valid = [?, 16], pad = max>
  %tr = tile.transpose %p : !tile.tile<8x16xf32, ub, valid = [?, 16], pad = max> -> !tile.tile<16x8xf32, ub, valid = [16, ?]>
  func.return %e, %p, %tr : !tile.tile<8x16xf32, ub, valid = [?, 16]>, !tile.tile<8x16xf32, ub, valid = [?, 16], pad = max>, !tile.tile<16x8xf32, ub, valid = [16, ?]>
}
"""
    )
    data = np.zeros((8, 16), np.float32)
    data[:3] = np.arange(48).reshape(3, 16) / 10
    e, p, tr = run_tile_function(module, "f", [TileValue(data, (3, 16))])
    np.testing.assert_allclose(e.valid_data(), np.exp(data[:3]), rtol=1e-6)
    assert np.isnan(e.data[3:]).all(), (
        "outside the valid region an op's result is poison"
    )
    assert (p.data[3:] == np.inf).all()
    np.testing.assert_array_equal(p.valid_data(), e.valid_data())
    assert tr.valid == (16, 3)
    np.testing.assert_array_equal(tr.valid_data(), e.valid_data().T)
    assert np.isnan(tr.data[:, 3:]).all()


def test_move_keeps_the_pad_and_converts_out_of_l0c() -> None:
    module = parse(
        """
func.func @f(%t: !tile.tile<16x16xf32, l0c, valid = [?, 16]>) -> (!tile.tile<16x16xf16, ub, valid = [?, 16]>, !tile.tile<16x16xbf16, l1, valid = [?, 16], layout = nz>) {
  %u = tile.move %t : !tile.tile<16x16xf32, l0c, valid = [?, 16]> -> !tile.tile<16x16xf16, ub, valid = [?, 16]>
  %l = tile.move %t : !tile.tile<16x16xf32, l0c, valid = [?, 16]> -> !tile.tile<16x16xbf16, l1, valid = [?, 16], layout = nz>
  func.return %u, %l : !tile.tile<16x16xf16, ub, valid = [?, 16]>, !tile.tile<16x16xbf16, l1, valid = [?, 16], layout = nz>
}
"""
    )
    data = np.random.default_rng(1).normal(0, 100, (16, 16)).astype(np.float32)
    u, l1 = run_tile_function(module, "f", [TileValue(data, (9, 16))])
    assert u.data.dtype == np.float16
    np.testing.assert_array_equal(u.valid_data(), data[:9].astype(np.float16))
    np.testing.assert_array_equal(l1.valid_data(), round_to_bf16(data[:9]))


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("trunc", [-2, -1, 0, 1, 2, 2147483647, -2147483648, 0]),
        ("rint", [-2, -2, 0, 2, 2, 2147483647, -2147483648, 0]),
        ("round", [-3, -2, 1, 2, 3, 2147483647, -2147483648, 0]),
        ("floor", [-3, -2, 0, 1, 2, 2147483647, -2147483648, 0]),
        ("ceil", [-2, -1, 1, 2, 3, 2147483647, -2147483648, 0]),
    ],
)
def test_cast_float_to_int_rounds_and_saturates(mode: str, expected: list[int]) -> None:
    module = tiled_2d(
        1,
        8,
        1,
        8,
        "f32",
        f"%r = tile.cast %t round {mode} : T -> T_OUT",
        "i32",
    )
    x = np.array([[-2.5, -1.5, 0.5, 1.5, 2.5, 1e20, -np.inf, np.nan]], np.float32)
    out = np.zeros((1, 8), np.int32)
    run_tile_function(module, "f", [x, out])
    np.testing.assert_array_equal(out[0], expected)


def test_cast_conversions_match_tv() -> None:
    values = np.array([70000.0, 1 / 3, -1e-8, 2.5], np.float32)
    np.testing.assert_array_equal(
        cast_values(values, f32, f16), rounded(values, np.float16)
    )
    ints = np.array([300, -129, 127], np.int32)
    np.testing.assert_array_equal(
        cast_values(ints, i32, i8), np.array([44, 127, 127], np.int8)
    )
    big = np.array([2**24 + 1], np.int32)
    np.testing.assert_array_equal(cast_values(big, i32, bf16), [2**24])


def test_fill_and_valid_dim() -> None:
    module = parse(
        """
func.func @f(%v: f16, %n: index) -> (!tile.tile<4x16xf16, ub, valid = [?, 16], pad = zero>, index, index) {
  %t = tile.fill %v valid [%n] : f16 -> !tile.tile<4x16xf16, ub, valid = [?, 16], pad = zero>
  %d0 = tile.valid_dim %t, 0 : !tile.tile<4x16xf16, ub, valid = [?, 16], pad = zero>
  %d1 = tile.valid_dim %t, 1 : !tile.tile<4x16xf16, ub, valid = [?, 16], pad = zero>
  func.return %t, %d0, %d1 : !tile.tile<4x16xf16, ub, valid = [?, 16], pad = zero>, index, index
}
"""
    )
    t, d0, d1 = run_tile_function(module, "f", [0.1, 3])
    assert (d0, d1) == (3, 16)
    assert (t.valid_data() == np.float16(0.1)).all()
    assert (t.data[3:] == 0).all()


def test_iota_counts_the_columns_of_its_valid_region() -> None:
    """`tile.iota`: element [i, j] is j over the valid region, whose `?`
    extents come from its operands (3 rows of 16, then 2 of 5 columns)."""
    module = parse(
        """
func.func @f(%n: index, %m: index) -> (!tile.tile<4x16xi32, ub, valid = [?, 16]>, !tile.tile<2x8xi32, ub, valid = [2, ?]>) {
  %a = tile.iota valid [%n] : !tile.tile<4x16xi32, ub, valid = [?, 16]>
  %b = tile.iota valid [%m] : !tile.tile<2x8xi32, ub, valid = [2, ?]>
  func.return %a, %b : !tile.tile<4x16xi32, ub, valid = [?, 16]>, !tile.tile<2x8xi32, ub, valid = [2, ?]>
}
"""
    )
    a, b = run_tile_function(module, "f", [3, 5])
    np.testing.assert_array_equal(a.valid_data(), np.tile(np.arange(16), (3, 1)))
    np.testing.assert_array_equal(b.valid_data(), [[0, 1, 2, 3, 4]] * 2)


# --------------------------------------------------------------------------------------
# Builders (what passes use) and verification of built IR
# --------------------------------------------------------------------------------------


def test_builders_infer_result_types() -> None:
    x_type = MemRefType(f16, [100, 1000])
    t_type = TileType([64, 1008], f16, "ub", valid=[DYNAMIC_INDEX, 1000])
    block = Block(arg_types=[x_type, IndexType(), IndexType()])
    x, i, rows = block.args
    with ImplicitBuilder(block):
        t = tile.LoadOp(x, [i, i], t_type, [rows]).result
        m = tile.ReduceMaxOp(t, 1).result
        d = tile.SubOp(t, m).result
        e = tile.ExpOp(d).result
        h = tile.CastOp(e, f32).result
        p = tile.PadOp(h, "zero").result
        tile.StoreOp(e, x, [i, i])
        func.ReturnOp()
    assert m.type == TileType([64, 1], f16, "ub", valid=[DYNAMIC_INDEX, 1])
    assert d.type == t_type
    assert h.type == t_type.with_(element_type=f32)
    assert p.type == t_type.with_(element_type=f32, pad="zero")
    function = func.FuncOp(
        "f", FunctionType.from_lists(block.arg_types, []), Region(block)
    )
    module = ModuleOp([function])
    module.verify()
    # The same kernel on a target whose UB is too small for a 64x1008xf16 tile.
    module.attributes["pypto.target"] = StringAttr("tiny")
    with pytest.raises(
        VerifyException, match="needs 129024 bytes but ub of target 'tiny'"
    ):
        module.verify()


def test_matmul_builder_infers_the_accumulator() -> None:
    a_type = TileType([32, 64], f16, "l0a", valid=[DYNAMIC_INDEX, 64])
    b_type = TileType([64, 128], f16, "l0b")
    block = Block(arg_types=[a_type, b_type])
    with ImplicitBuilder(block):
        c = tile.MatmulOp(block.args[0], block.args[1]).result
        d = tile.MatmulOp(block.args[0], block.args[1], c).result
    expected = TileType([32, 128], f32, "l0c", valid=[DYNAMIC_INDEX, 128])
    assert c.type == expected and d.type == expected
