"""tile-to-hw end to end: tile IR -> tile-peel-tails -> tile-to-hw -> simulator.

Every kernel runs on the tile reference interpreter and, lowered, on the
simulated AI Core of `ascend910b` and `tiny`; the outputs must agree within the
tolerance of docs/tile_to_hw.md ("Numerics"). Before `hw-insert-sync` exists in
a test's pipeline, `serialise` puts a `pipe_barrier all` after every
instruction: the lowering must be right when every instruction completes
before the next one starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tile_kernels import elementwise_kernel, extent, matmul_kernel
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.parser import Parser
from xdsl.rewriter import InsertPoint, Rewriter

import pypto_mlir.op_facts as op_facts
from pypto_mlir.check import run_tile_level
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.interp.ascend_hw import HwRunResult, run_hw_function
from pypto_mlir.interp.tensor_view import run_tv_function
from pypto_mlir.passes.hw_insert_sync import HwInsertSyncPass
from pypto_mlir.passes.tile_peel_tails import TilePeelTailsPass
from pypto_mlir.passes.tile_to_hw import TileToHwPass
from pypto_mlir.passes.tv_to_tile import TvToTilePass
from pypto_mlir.sim import RaceError
from pypto_mlir.targets import load_target

TARGETS = ("ascend910b", "tiny")
SETTINGS = settings(max_examples=8, deadline=None)
NUMPY = {"f16": np.float16, "f32": np.float32, "i32": np.int32, "i16": np.int16}

ULPS = {"f16": 4, "f32": 4}
"""Allowed difference from the tile interpreter, in ulps of the output type
relative to the largest magnitude of the reference (docs/tile_to_hw.md)."""
EPSILON = {"f16": 2.0**-10, "f32": 2.0**-23}


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
        hw.AscendHW,
    ):
        ctx.load_dialect(dialect)
    return ctx


def parse(text: str) -> ModuleOp:
    module = Parser(context(), text).parse_module()
    module.verify()
    return module


def lower(module: ModuleOp, target: str, max_cores: int = 0) -> ModuleOp:
    """tile-peel-tails and tile-to-hw on a copy of `module`."""
    lowered = module.clone()
    ctx = context()
    TilePeelTailsPass().apply(ctx, lowered)
    TileToHwPass(target=target, max_cores=max_cores).apply(ctx, lowered)
    lowered.verify()
    return lowered


def serialise(module: ModuleOp) -> ModuleOp:
    """A `pipe_barrier all` after every instruction (test-only stand-in for sync)."""
    for op in list(module.walk()):
        if isinstance(op, hw.HwInstruction) and not isinstance(op, hw.PipeBarrierOp):
            Rewriter.insert_op(hw.PipeBarrierOp("all"), InsertPoint.after(op))
    return module


def run_lowered(
    module: ModuleOp,
    target: str,
    args: list[Any],
    max_cores: int = 0,
    sync: bool = False,
) -> HwRunResult:
    """Lower `module` and run `@f` on the simulator, serialised or (with `sync`)
    synchronised by hw-insert-sync."""
    lowered = lower(module, target, max_cores)
    if sync:
        HwInsertSyncPass().apply(context(), lowered)
        lowered.verify()
    else:
        serialise(lowered)
    return run_hw_function(lowered, "f", args, load_target(target))


def assert_close(
    expected: np.ndarray, actual: np.ndarray, element: str, atol: float = 0.0
) -> None:
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    if element not in EPSILON:
        np.testing.assert_array_equal(a, e)
        return
    finite = np.isfinite(e)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
    np.testing.assert_array_equal(a[~finite & ~np.isnan(e)], e[~finite & ~np.isnan(e)])
    scale = max(float(np.max(np.abs(e[finite]), initial=0.0)), 2.0**-14)
    allowed = ULPS[element] * EPSILON[element] * scale + atol
    worst = float(np.max(np.abs(a - e)[finite], initial=0.0))
    assert worst <= allowed, f"off by {worst:.3g}, allowed {allowed:.3g}"


def check(
    text: str,
    inputs: list[np.ndarray],
    outputs: list[int],
    target: str,
    element: str,
    max_cores: int = 0,
    sync: bool = False,
) -> HwRunResult:
    """Run `@f` of tile module `text` on the interpreter and lowered on `target`;
    the arguments numbered in `outputs` must agree."""
    module = parse(text)
    expected = [a.copy() for a in inputs]
    run_tile_level(module, "f", expected)
    actual = [a.copy() for a in inputs]
    result = run_lowered(module, target, actual, max_cores, sync)
    for index in outputs:
        assert_close(expected[index], result.outputs[index], element)
    return result


def random(shape: tuple[int, ...], element: str, seed: int, lo=-3.0, hi=3.0):
    rng = np.random.default_rng(seed)
    if element.startswith("i"):
        return rng.integers(-100, 100, shape).astype(NUMPY[element])
    return rng.uniform(lo, hi, shape).astype(NUMPY[element])


def poison(shape: tuple[int, ...], element: str) -> np.ndarray:
    if element.startswith("i"):
        return np.full(shape, np.iinfo(NUMPY[element]).min, NUMPY[element])
    return np.full(shape, np.nan, NUMPY[element])


# --------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------


def elementwise(
    rows: int, cols: int, tm: int, tn: int, element: str, body: str, out: str = ""
) -> str:
    """`@f(%x, %y, %out)`: per tm x tn tile (tails included) %t of x and %u of y,
    `body` computes %r (tile type T, T_OUT for the result type)."""
    return elementwise_kernel(rows, cols, tm, tn, element, body, out, inputs=2)


def row_kernel(rows: int, cols: int, tm: int, tn: int, body: str, element="f32") -> str:
    """`@f(%x, %out)`: blocks of tm rows holding whole rows (tn >= cols) in %t;
    `body` computes %r; T is the row tile type, TV the [tm, 1] statistics."""
    x_type = f"memref<{rows}x{cols}x{element}>"
    t = f"!tile.tile<{tm}x{tn}x{element}, ub, valid = [?, {cols}]>"
    v = f"!tile.tile<{tm}x1x{element}, ub, valid = [?, 1]>"
    body = body.replace("TV", v).replace("T", t)
    return f"""
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


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------

UNARY = ["neg", "abs", "exp", "relu", "sigmoid", "tanh", "gelu", "silu", "reciprocal"]
POSITIVE_UNARY = ["log", "sqrt", "rsqrt"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f16", "f32"])
@pytest.mark.parametrize("name", UNARY + POSITIVE_UNARY)
def test_unary_with_tails(name: str, element: str, target: str) -> None:
    rows, cols = 13, 45
    text = elementwise(rows, cols, 8, 32, element, f"%r = tile.{name} %t : T")
    lo = 0.1 if name in POSITIVE_UNARY else -4.0
    x = random((rows, cols), element, 1, lo, 4.0)
    check(text, [x, x, poison(x.shape, element)], [2], target, element)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f16", "f32", "i32"])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "max", "min", "div"])
def test_binary_with_tails(name: str, element: str, target: str) -> None:
    if name == "div" and element == "i32":
        pytest.skip("div is float only")
    rows, cols = 11, 70
    text = elementwise(rows, cols, 4, 64, element, f"%r = tile.{name} %t, %u : T")
    x, y = random((rows, cols), element, 2), random((rows, cols), element, 3)
    if name == "div":
        y = np.where(np.abs(y) < 0.1, 1, y).astype(y.dtype)
    check(text, [x, y, poison(x.shape, element)], [2], target, element)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f16", "f32", "i32"])
@pytest.mark.parametrize("cmp", ["lt", "le", "gt", "ge", "eq", "ne"])
def test_select_with_tails(cmp: str, element: str, target: str) -> None:
    """vcmp into the bit buffer, then vselect, over tails (11x70 in 4x64 tiles):
    exactly np.where, ties and (floats) NaN and -0.0 included."""
    rows, cols = 11, 70
    body = f"%r = tile.select {cmp} %t, %u, %u, %t : T"
    text = elementwise(rows, cols, 4, 64, element, body)
    rng = np.random.default_rng(11)
    x = rng.integers(-2, 3, (rows, cols)).astype(NUMPY[element])
    y = rng.integers(-2, 3, (rows, cols)).astype(NUMPY[element])
    if element != "i32":
        x[0, :4] = [np.nan, -0.0, 0.0, np.inf]
        y[0, :4] = [1.0, 0.0, -0.0, np.nan]
    result = check(text, [x, y, poison(x.shape, element)], [], target, element)
    with np.errstate(invalid="ignore"):
        expected = np.where(op_facts.COMPARE[cmp](x, y), y, x)
    width = f"u{expected.itemsize}"
    np.testing.assert_array_equal(result.outputs[2].view(width), expected.view(width))


ROW_MASK = """
func.func @f(%v: memref<ROWSx70xf32>, %lens: memref<ROWSx1xi32>, %out: memref<ROWSx70xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%c0, %c0] : memref<ROWSx70xf32> -> !tile.tile<ROWSx72xf32, ub, valid = [ROWS, 70]>
  %n = tile.load %lens[%c0, %c0] : memref<ROWSx1xi32> -> !tile.tile<ROWSx1xi32, ub>
  %col = tile.iota : !tile.tile<ROWSx72xi32, ub, valid = [ROWS, 70]>
  %z = arith.constant 0.0 : f32
  %zero = tile.fill %z : f32 -> !tile.tile<ROWSx72xf32, ub, valid = [ROWS, 70]>
  %r = tile.select lt %col, %n, %t, %zero : !tile.tile<ROWSx72xi32, ub, valid = [ROWS, 70]>, !tile.tile<ROWSx1xi32, ub>, !tile.tile<ROWSx72xf32, ub, valid = [ROWS, 70]>, !tile.tile<ROWSx72xf32, ub, valid = [ROWS, 70]>
  tile.store %r, %out[%c0, %c0] : !tile.tile<ROWSx72xf32, ub, valid = [ROWS, 70]> -> memref<ROWSx70xf32>
  func.return
}
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rows", [1, 3])
def test_iota_masks_each_row_to_its_length(rows: int, target: str) -> None:
    """A computed mask: `tile.iota`'s column positions compared with a
    run-time length per row (a `[rows, 1]` tile) keep each row's first
    `len` values and zero the rest: `where(arange(70) < len, v, 0)`, lengths
    0, inside and past the row included."""
    text = ROW_MASK.replace("ROWS", str(rows))
    v = random((rows, 70), "f32", 5)
    lens = np.array([[33], [0], [80]][:rows], np.int32)
    result = check(text, [v, lens, poison(v.shape, "f32")], [2], target, "f32")
    expected = np.where(np.arange(70)[None, :] < lens, v, np.float32(0))
    np.testing.assert_array_equal(result.outputs[2], expected)


SCALAR_BODIES = [
    "%c = arith.constant 1.5 : E\n%r = tile.add %t, %c : T, E",
    "%c = arith.constant 1.5 : E\n%r = tile.sub %t, %c : T, E",
    "%c = arith.constant 1.5 : E\n%r = tile.sub %c, %t : E, T",
    "%c = arith.constant 0.7 : E\n%r = tile.mul %t, %c : T, E",
    "%c = arith.constant 3.0 : E\n%r = tile.div %t, %c : T, E",
    "%c = arith.constant 3.0 : E\n%r = tile.div %c, %t : E, T",
    "%c = arith.constant 0.5 : E\n%r = tile.max %t, %c : T, E",
    "%c = arith.constant 0.5 : E\n%r = tile.min %c, %t : E, T",
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f16", "f32"])
@pytest.mark.parametrize("body", SCALAR_BODIES)
def test_binary_with_a_scalar(body: str, element: str, target: str) -> None:
    rows, cols = 9, 40
    text = elementwise(rows, cols, 8, 32, element, body.replace("E", element))
    x = random((rows, cols), element, 4, 0.5, 4.0)
    check(text, [x, x, poison(x.shape, element)], [2], target, element)


@pytest.mark.parametrize("target", TARGETS)
def test_swish_chain_with_scalar_operand_in_a_loop(target: str) -> None:
    body = (
        "%s = tile.sigmoid %t : T\n%p = tile.mul %t, %s : T\n"
        "%q = tile.add %p, %u : T\n%r = tile.max %q, %t : T"
    )
    text = elementwise(30, 100, 8, 64, "f16", body)
    x, y = random((30, 100), "f16", 5), random((30, 100), "f16", 6)
    check(text, [x, y, poison(x.shape, "f16")], [2], target, "f16")


@SETTINGS
@given(
    rows=st.integers(1, 40),
    cols=st.integers(1, 300),
    tm=st.sampled_from([1, 3, 8]),
    tn=st.sampled_from([16, 64, 144]),
)
def test_elementwise_any_shape_and_tile(rows: int, cols: int, tm: int, tn: int) -> None:
    text = elementwise(
        rows, cols, tm, tn, "f16", "%s = tile.exp %t : T\n%r = tile.sub %s, %u : T"
    )
    x, y = random((rows, cols), "f16", rows), random((rows, cols), "f16", cols)
    check(text, [x, y, poison(x.shape, "f16")], [2], "ascend910b", "f16")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("source", "dest", "body"),
    [
        ("f16", "f32", "%r = tile.cast %t : T -> T_OUT"),
        ("f32", "f16", "%r = tile.cast %t : T -> T_OUT"),
        ("f32", "i32", "%r = tile.cast %t round floor : T -> T_OUT"),
        ("i32", "f16", "%r = tile.cast %t : T -> T_OUT"),
    ],
)
def test_cast(source: str, dest: str, body: str, target: str) -> None:
    rows, cols = 10, 48
    text = elementwise(rows, cols, 8, 32, source, body, dest)
    x = random((rows, cols), source, 7)
    check(text, [x, x, poison(x.shape, dest)], [2], target, dest)


@pytest.mark.parametrize(
    ("target", "element", "rows", "cols", "tile_rows", "tile_cols"),
    [
        ("ascend910b", "f16", 13, 40, 16, 48),
        ("ascend910b", "f32", 21, 70, 24, 72),
        ("ascend910b", "f16", 150, 9, 160, 16),
        ("tiny", "f16", 13, 20, 16, 32),
        ("tiny", "f32", 7, 10, 8, 16),
    ],
)
def test_transpose(
    target: str, element: str, rows: int, cols: int, tile_rows: int, tile_cols: int
) -> None:
    """A gather per block of result rows (on tiny: per row, the offset table
    would not fit comfortably), result rows longer than one repeat included."""
    t = f"!tile.tile<{tile_rows}x{tile_cols}x{element}, ub, valid = [{rows}, {cols}]>"
    u = f"!tile.tile<{tile_cols}x{tile_rows}x{element}, ub, valid = [{cols}, {rows}]>"
    text = f"""
func.func @f(%x: memref<{rows}x{cols}x{element}>, %out: memref<{cols}x{rows}x{element}>) {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<{rows}x{cols}x{element}> -> {t}
  %u = tile.transpose %t : {t} -> {u}
  %r = tile.neg %u : {u}
  tile.store %r, %out[%c0, %c0] : {u} -> memref<{cols}x{rows}x{element}>
  func.return
}}
"""
    x = random((rows, cols), element, rows)
    check(text, [x, poison((cols, rows), element)], [1], target, element)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("element", "rows", "cols", "strides", "tile_cols"),
    [
        ("f32", 5, 7, (60, 3), 8),  # each row's span staged, then gathered
        ("f32", 3, 6, (1000, 100), 8),  # one element per 32-byte block
        ("f16", 3, 150, (400, 2), 160),  # rows longer than a repeat
        ("f16", 4, 5, (35, 7), 16),  # rows equally spaced: one DMA
    ],
)
def test_load_from_a_view_with_strided_rows(
    element: str,
    rows: int,
    cols: int,
    strides: tuple[int, int],
    tile_cols: int,
    target: str,
) -> None:
    offset = 5
    memref = f"memref<{rows}x{cols}x{element}, strided<[{strides[0]}, {strides[1]}], offset: {offset}>>"
    t = f"!tile.tile<{rows}x{tile_cols}x{element}, ub, valid = [{rows}, {cols}]>"
    text = f"""
func.func @f(%x: {memref}, %out: memref<{rows}x{cols}x{element}>) {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : {memref} -> {t}
  %r = tile.exp %t : {t}
  tile.store %r, %out[%c0, %c0] : {t} -> memref<{rows}x{cols}x{element}>
  func.return
}}
"""
    size = offset + (rows - 1) * strides[0] + (cols - 1) * strides[1] + 1
    flat = random((size,), element, rows + cols)
    itemsize = flat.itemsize
    view = np.lib.stride_tricks.as_strided(
        flat[offset:], (rows, cols), (strides[0] * itemsize, strides[1] * itemsize)
    )
    module = parse(text)
    expected = poison((rows, cols), element)
    run_tile_level(module, "f", [view, expected])
    result = run_lowered(module, target, [flat.copy(), poison((rows, cols), element)])
    assert_close(expected, result.outputs[1], element)


# --------------------------------------------------------------------------------------
# Row operations: reductions, broadcasts, softmax, layernorm
# --------------------------------------------------------------------------------------

SOFTMAX = """
%m = tile.reduce_max %t, axis = 1 : T -> TV
%d = tile.sub %t, %m : T, TV
%e = tile.exp %d : T
%s = tile.reduce_sum %e, axis = 1 : T -> TV
%r = tile.div %e, %s : T, TV
"""

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


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("rows", "cols", "tm", "tn"), [(21, 50, 8, 64), (5, 200, 4, 208), (37, 9, 16, 16)]
)
def test_softmax_rows(rows: int, cols: int, tm: int, tn: int, target: str) -> None:
    text = row_kernel(rows, cols, tm, tn, SOFTMAX)
    x = random((rows, cols), "f32", rows + cols)
    check(text, [x, poison(x.shape, "f32")], [1], target, "f32")


@pytest.mark.parametrize("target", TARGETS)
def test_layernorm_rows(target: str) -> None:
    rows, cols = 21, 50
    text = row_kernel(rows, cols, 8, 56, LAYERNORM.replace("INV_N", repr(1.0 / cols)))
    x = random((rows, cols), "f32", 8)
    check(text, [x, poison(x.shape, "f32")], [1], target, "f32")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f16", "f32"])
def test_row_reductions_and_broadcasts(element: str, target: str) -> None:
    body = """
%mx = tile.reduce_max %t, axis = 1 : T -> TV
%mn = tile.reduce_min %t, axis = 1 : T -> TV
%sm = tile.reduce_sum %t, axis = 1 : T -> TV
%a = tile.add %mx, %mn : TV
%b = tile.broadcast %a : TV -> T
%c = tile.mul %t, %sm : T, TV
%r = tile.sub %c, %b : T
"""
    rows, cols, tm, tn = (
        (19, 300, 16, 304) if target == "ascend910b" else (19, 150, 2, 160)
    )
    text = row_kernel(rows, cols, tm, tn, body, element)
    x = random((rows, cols), element, 9, -1.0, 1.0)
    check(text, [x, poison(x.shape, element)], [1], target, element)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("rows", "cols"), [(1, 7), (2, 16), (5, 7), (8, 40), (13, 33)])
@pytest.mark.parametrize("name", ["sum", "max", "min"])
def test_column_reductions_and_row_vectors(
    name: str, rows: int, cols: int, target: str
) -> None:
    """A [1, N] column reduction broadcast back against the tile (repeat stride 0)."""
    pitch = -(-cols // 8) * 8
    t = f"!tile.tile<16x{pitch}xf32, ub, valid = [{rows}, {cols}]>"
    v = f"!tile.tile<1x{pitch}xf32, ub, valid = [1, {cols}]>"
    text = f"""
func.func @f(%x: memref<{rows}x{cols}xf32>, %out: memref<{rows}x{cols}xf32>, %col: memref<1x{cols}xf32>) {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<{rows}x{cols}xf32> -> {t}
  %s = tile.reduce_{name} %t, axis = 0 : {t} -> {v}
  tile.store %s, %col[%c0, %c0] : {v} -> memref<1x{cols}xf32>
  %d = tile.sub %t, %s : {t}, {v}
  tile.store %d, %out[%c0, %c0] : {t} -> memref<{rows}x{cols}xf32>
  func.return
}}
"""
    x = random((rows, cols), "f32", rows * cols)
    check(
        text,
        [x, poison(x.shape, "f32"), poison((1, cols), "f32")],
        [1, 2],
        target,
        "f32",
    )


@pytest.mark.parametrize("target", TARGETS)
def test_carried_tile_with_dynamic_extents(target: str) -> None:
    """A carried [8, 1] tile with `?` rows takes the extents of its init."""
    text = """
func.func @f(%x: memref<5x100xf32>, %out: memref<5x1xf32>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c32 = arith.constant 32 : index
  %c100 = arith.constant 100 : index
  %init = arith.constant 0.0 : f32
  %acc0 = tile.fill %init valid [%c5] : f32 -> !tile.tile<8x1xf32, ub, valid = [?, 1]>
  %acc = scf.for %j = %c0 to %c100 step %c32 iter_args(%a = %acc0) -> (!tile.tile<8x1xf32, ub, valid = [?, 1]>) {
    %left = arith.subi %c100, %j : index
    %lt = arith.cmpi slt, %left, %c32 : index
    %vj = arith.select %lt, %left, %c32 : index
    %t = tile.load %x[%c0, %j] valid [%c5, %vj] : memref<5x100xf32> -> !tile.tile<8x32xf32, ub, valid = [?, ?]>
    %p = tile.reduce_sum %t, axis = 1 : !tile.tile<8x32xf32, ub, valid = [?, ?]> -> !tile.tile<8x1xf32, ub, valid = [?, 1]>
    %n = tile.add %a, %p : !tile.tile<8x1xf32, ub, valid = [?, 1]>
    scf.yield %n : !tile.tile<8x1xf32, ub, valid = [?, 1]>
  }
  tile.store %acc, %out[%c0, %c0] : !tile.tile<8x1xf32, ub, valid = [?, 1]> -> memref<5x1xf32>
  func.return
}
"""
    x = random((5, 100), "f32", 13)
    check(text, [x, poison((5, 1), "f32")], [1], target, "f32")


@pytest.mark.parametrize(
    ("name", "element", "n"), [("sum", "f32", 20000), ("max", "f16", 40000)]
)
def test_long_flat_reduction(name: str, element: str, n: int) -> None:
    """More than one repeat of repeats: partial results are reduced level by level
    (and the instructions split at vector.max_repeat)."""
    width = -(-n // 16) * 16
    t = f"!tile.tile<1x{width}x{element}, ub, valid = [1, {n}]>"
    v = f"!tile.tile<1x1x{element}, ub>"
    text = f"""
func.func @f(%x: memref<1x{n}x{element}>, %out: memref<1x1x{element}>) {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<1x{n}x{element}> -> {t}
  %r = tile.reduce_{name} %t, axis = 1 : {t} -> {v}
  tile.store %r, %out[%c0, %c0] : {v} -> memref<1x1x{element}>
  func.return
}}
"""
    x = random((1, n), element, n)
    module = parse(text)
    expected = poison((1, 1), element)
    run_tile_level(module, "f", [x, expected])
    result = run_lowered(module, "ascend910b", [x, poison((1, 1), element)])
    # Sums in another order: within the f32 summation bound eps * sum |x|.
    bound = float(np.sum(np.abs(x.astype(np.float64)))) * 2.0**-23
    assert_close(expected, result.outputs[1], element, bound if name == "sum" else 0.0)


@pytest.mark.parametrize(
    ("name", "element", "rows", "cols"),
    [
        ("max", "f32", 64, 64),
        ("min", "f32", 24, 64),
        ("max", "f16", 16, 16),
        ("max", "f32", 64, 16),
        ("min", "f16", 8, 32),
    ],
)
def test_block_row_reductions(name: str, element: str, rows: int, cols: int) -> None:
    """Rows of whole blocks reduced 8 rows a repeat (vblock_reduce_*: rows of
    one block, of two - combined first -, of 8 f32 blocks - two levels): exact
    against the tile reference."""
    t = f"!tile.tile<{rows}x{cols}x{element}, ub>"
    v = f"!tile.tile<{rows}x1x{element}, ub>"
    text = f"""
func.func @f(%x: memref<{rows}x{cols}x{element}>, %out: memref<{rows}x1x{element}>) {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<{rows}x{cols}x{element}> -> {t}
  %r = tile.reduce_{name} %t, axis = 1 : {t} -> {v}
  tile.store %r, %out[%c0, %c0] : {v} -> memref<{rows}x1x{element}>
  func.return
}}
"""
    x = random((rows, cols), element, rows + cols)
    module = parse(text)
    expected = poison((rows, 1), element)
    run_tile_level(module, "f", [x, expected])
    result = run_lowered(module, "ascend910b", [x, poison((rows, 1), element)])
    assert_close(expected, result.outputs[1], element, 0.0)


def test_row_reduction_carried_across_column_tiles() -> None:
    """A running [rows, 1] maximum carried by scf.for (one buffer, in place)."""
    rows, cols, tn = 12, 100, 32
    t = f"!tile.tile<{rows}x{tn}xf32, ub, valid = [{rows}, ?]>"
    v = f"!tile.tile<{rows}x1xf32, ub>"
    text = f"""
func.func @f(%x: memref<{rows}x{cols}xf32>, %out: memref<{rows}x1xf32>) {{
  %c0 = arith.constant 0 : index
  %cols = arith.constant {cols} : index
  %tn = arith.constant {tn} : index
  %init = arith.constant 0xFF800000 : f32
  %acc0 = tile.fill %init : f32 -> {v}
  %acc = scf.for %j = %c0 to %cols step %tn iter_args(%a = %acc0) -> ({v}) {{
    {extent("vj", "%cols", "%j", "%tn")}
    %t = tile.load %x[%c0, %j] valid [%vj] : memref<{rows}x{cols}xf32> -> {t}
    %p = tile.reduce_max %t, axis = 1 : {t} -> {v}
    %n = tile.max %a, %p : {v}
    scf.yield %n : {v}
  }}
  tile.store %acc, %out[%c0, %c0] : {v} -> memref<{rows}x1xf32>
  func.return
}}
"""
    x = random((rows, cols), "f32", 10)
    for target in TARGETS:
        check(text, [x, poison((rows, 1), "f32")], [1], target, "f32")


# --------------------------------------------------------------------------------------
# Matmul
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("out", ["f16", "f32"])
@pytest.mark.parametrize(
    ("m", "n", "k"), [(32, 32, 64), (40, 37, 70), (1, 5, 3), (17, 33, 16)]
)
def test_matmul_with_tails(m: int, n: int, k: int, out: str, target: str) -> None:
    tm, tn, tk = (16, 32, 32) if target == "ascend910b" else (16, 16, 32)
    text = matmul_kernel(m, n, k, tm, tn, tk, out)
    a, b = random((m, k), "f16", m, -1, 1), random((k, n), "f16", n, -1, 1)
    check(text, [a, b, poison((m, n), out)], [2], target, out)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f16", "f32"])
def test_pads_and_fills(element: str, target: str) -> None:
    """Loads and fills with a pad, tile.pad (in place and not), broadcasts of a
    filled column: the valid results, with no read of an undefined byte."""
    t = f"!tile.tile<8x32x{element}, ub, valid = [5, 20]>"
    tp = f"!tile.tile<8x32x{element}, ub, valid = [5, 20], pad = min>"
    tz = f"!tile.tile<8x32x{element}, ub, valid = [5, 20], pad = zero>"
    col = f"!tile.tile<8x1x{element}, ub, valid = [5, 1], pad = max>"
    text = f"""
func.func @f(%x: memref<5x20x{element}>, %out: memref<5x20x{element}>) {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<5x20x{element}> -> {tp}
  %z = tile.pad %t : {tp} -> {tz}
  %e = tile.exp %z : {tz}
  %p = tile.pad %e : {t} -> {tz}
  %two = arith.constant 2.0 : {element}
  %c = tile.fill %two : {element} -> {col}
  %m = tile.mul %p, %c : {tz}, {col}
  %r = tile.add %m, %t : {t}, {tp}
  tile.store %r, %out[%c0, %c0] : {t} -> memref<5x20x{element}>
  func.return
}}
"""
    x = random((5, 20), element, 15)
    check(text, [x, poison((5, 20), element)], [1], target, element)


@pytest.mark.parametrize("target", TARGETS)
def test_moves_between_ub_and_l1(target: str) -> None:
    """ub -> l1 -> ub in whole 32-byte blocks: the bytes after the valid columns
    (40 of 64 bytes per row) are defined before the first copy."""
    t = "!tile.tile<8x32xf16, ub, valid = [5, 20]>"
    l1 = "!tile.tile<8x32xf16, l1, valid = [5, 20]>"
    text = f"""
func.func @f(%x: memref<5x20xf16>, %out: memref<5x20xf16>) {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<5x20xf16> -> {t}
  %e = tile.exp %t : {t}
  %l = tile.move %e : {t} -> {l1}
  %u = tile.move %l : {l1} -> {t}
  %r = tile.add %u, %t : {t}
  tile.store %r, %out[%c0, %c0] : {t} -> memref<5x20xf16>
  func.return
}}
"""
    x = random((5, 20), "f16", 14)
    check(text, [x, poison((5, 20), "f16")], [1], target, "f16")


@pytest.mark.parametrize("target", TARGETS)
def test_int8_matmul_with_partial_tiles(target: str) -> None:
    """i8 tails are zeroed in L1 through an i16 view of the zero buffer."""
    m, n, k = 20, 24, 40
    a1 = "!tile.tile<32x64xi8, l1, valid = [20, 40], layout = nz, pad = zero>"
    b1 = "!tile.tile<64x32xi8, l1, valid = [40, 24], layout = nz, pad = zero>"
    a0 = "!tile.tile<32x64xi8, l0a, valid = [20, 40], pad = zero>"
    b0 = "!tile.tile<64x32xi8, l0b, valid = [40, 24], pad = zero>"
    c = "!tile.tile<32x32xi32, l0c, valid = [20, 24]>"
    text = f"""
func.func @f(%a: memref<{m}x{k}xi8>, %b: memref<{k}x{n}xi8>, %out: memref<{m}x{n}xi32>) {{
  %c0 = arith.constant 0 : index
  %a1 = tile.load %a[%c0, %c0] : memref<{m}x{k}xi8> -> {a1}
  %b1 = tile.load %b[%c0, %c0] : memref<{k}x{n}xi8> -> {b1}
  %a0 = tile.move %a1 : {a1} -> {a0}
  %b0 = tile.move %b1 : {b1} -> {b0}
  %p = tile.matmul %a0, %b0 : {a0}, {b0} -> {c}
  tile.store %p, %out[%c0, %c0] : {c} -> memref<{m}x{n}xi32>
  func.return
}}
"""
    rng = np.random.default_rng(12)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    out = np.full((m, n), np.iinfo(np.int32).min, np.int32)
    check(text, [a, b, out], [2], target, "i32")


@pytest.mark.parametrize("target", TARGETS)
def test_chained_matmul_through_l1(target: str) -> None:
    """(A @ B) @ C without GM in between: the first product goes l0c -> l1 (nz,
    f16, its 20 valid rows zeroed up to the fractal) -> l0a."""
    a1 = "!tile.tile<32x32xf16, l1, valid = [20, 32], layout = nz>"
    b1 = "!tile.tile<32x32xf16, l1, layout = nz>"
    a0 = "!tile.tile<32x32xf16, l0a, valid = [20, 32]>"
    b0 = "!tile.tile<32x32xf16, l0b>"
    c = "!tile.tile<32x32xf32, l0c, valid = [20, 32]>"
    text = f"""
func.func @f(%a: memref<20x32xf16>, %b: memref<32x32xf16>, %c: memref<32x32xf16>, %out: memref<20x32xf32>) {{
  %c0 = arith.constant 0 : index
  %a1 = tile.load %a[%c0, %c0] : memref<20x32xf16> -> {a1}
  %b1 = tile.load %b[%c0, %c0] : memref<32x32xf16> -> {b1}
  %a0 = tile.move %a1 : {a1} -> {a0}
  %b0 = tile.move %b1 : {b1} -> {b0}
  %p = tile.matmul %a0, %b0 : {a0}, {b0} -> {c}
  %p1 = tile.move %p : {c} -> {a1}
  %p0 = tile.move %p1 : {a1} -> {a0}
  %c1 = tile.load %c[%c0, %c0] : memref<32x32xf16> -> {b1}
  %c0b = tile.move %c1 : {b1} -> {b0}
  %q = tile.matmul %p0, %c0b : {a0}, {b0} -> {c}
  tile.store %q, %out[%c0, %c0] : {c} -> memref<20x32xf32>
  func.return
}}
"""
    a = random((20, 32), "f16", 16, -1, 1)
    b, cc = random((32, 32), "f16", 17, -1, 1), random((32, 32), "f16", 18, -1, 1)
    check(text, [a, b, cc, poison((20, 32), "f32")], [3], target, "f32")


@pytest.mark.parametrize("sync", [False, True])
def test_matmul_on_a_grid_of_cores(sync: bool) -> None:
    """3 row blocks x 3 column blocks of C (the last of each a tail) on 9 of 24
    cores: rows of 160 bytes, so cores may split rows and columns."""
    m, n, k = 40, 80, 70
    text = matmul_kernel(m, n, k, 16, 32, 32, "f16")
    a, b = random((m, k), "f16", 3, -1, 1), random((k, n), "f16", 4, -1, 1)
    result = check(
        text, [a, b, poison((m, n), "f16")], [2], "ascend910b", "f16", sync=sync
    )
    assert result.report.block_dim == 9


# --------------------------------------------------------------------------------------
# tv IR through tv-to-tile
# --------------------------------------------------------------------------------------


def through_tv_to_tile(text: str, target: str) -> ModuleOp:
    module = parse(text)
    TvToTilePass(target=target).apply(context(), module)
    return module


TV_KERNELS: dict[str, tuple[str, Callable[[np.random.Generator], list[np.ndarray]]]] = {
    "swish": (
        """
func.func @f(%x: !tv.tensor<37x50xf16>) -> !tv.tensor<37x50xf16> {
  %s = tv.sigmoid %x : !tv.tensor<37x50xf16>
  %y = tv.mul %x, %s : !tv.tensor<37x50xf16>
  func.return %y : !tv.tensor<37x50xf16>
}
""",
        lambda rng: [rng.uniform(-4, 4, (37, 50)).astype(np.float16)],
    ),
    "softmax": (
        """
func.func @f(%x: !tv.tensor<19x70xf32>) -> !tv.tensor<19x70xf32> {
  %y = tv.softmax %x axis = 1 : !tv.tensor<19x70xf32>
  func.return %y : !tv.tensor<19x70xf32>
}
""",
        lambda rng: [rng.normal(0, 2, (19, 70)).astype(np.float32)],
    ),
    "gemm": (
        """
func.func @f(%a: !tv.tensor<40x70xf16>, %b: !tv.tensor<70x37xf16>) -> !tv.tensor<40x37xf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<40x70xf16>, !tv.tensor<70x37xf16> -> !tv.tensor<40x37xf16>
  func.return %c : !tv.tensor<40x37xf16>
}
""",
        lambda rng: [
            rng.uniform(-1, 1, (40, 70)).astype(np.float16),
            rng.uniform(-1, 1, (70, 37)).astype(np.float16),
        ],
    ),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(TV_KERNELS))
def test_tv_kernels_through_tv_to_tile(name: str, target: str) -> None:
    text, make_inputs = TV_KERNELS[name]
    tiled = through_tv_to_tile(text, target)
    inputs = make_inputs(np.random.default_rng(11))
    (expected,) = run_tv_function(parse(text), "f", [a.copy() for a in inputs])
    out = np.full(expected.shape, np.nan, expected.dtype)
    result = run_lowered(tiled, target, [*inputs, out])
    element = "f16" if expected.dtype == np.float16 else "f32"
    assert_close(expected, result.outputs[-1], element)


# --------------------------------------------------------------------------------------
# With hw-insert-sync instead of serialisation: pipes overlap, cores run together
# --------------------------------------------------------------------------------------


def sync_cases() -> list[tuple[str, str, list[np.ndarray], int, str]]:
    x, y = random((30, 100), "f16", 5), random((30, 100), "f16", 6)
    s = random((21, 50), "f32", 7)
    a, b = random((40, 70), "f16", 1, -1, 1), random((70, 37), "f16", 2, -1, 1)
    swish = (
        "%s = tile.sigmoid %t : T\n%p = tile.mul %t, %s : T\n"
        "%q = tile.add %p, %u : T\n%r = tile.max %q, %t : T"
    )
    return [
        (
            "chain",
            elementwise(30, 100, 8, 64, "f16", swish),
            [x, y, poison(x.shape, "f16")],
            2,
            "f16",
        ),
        (
            "softmax",
            row_kernel(21, 50, 8, 64, SOFTMAX),
            [s, poison(s.shape, "f32")],
            1,
            "f32",
        ),
        (
            "matmul",
            matmul_kernel(40, 37, 70, 16, 16, 32, "f16"),
            [a, b, poison((40, 37), "f16")],
            2,
            "f16",
        ),
    ]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "case", range(len(sync_cases())), ids=[c[0] for c in sync_cases()]
)
def test_with_hw_insert_sync(case: int, target: str) -> None:
    """The lowering needs nothing but hw-insert-sync to run with overlapping pipes
    and several cores: no race, the same results."""
    _, text, inputs, output, element = sync_cases()[case]
    result = check(text, inputs, [output], target, element, sync=True)
    assert result.report.block_dim > 1


@SETTINGS
@given(
    m=st.integers(1, 40),
    n=st.integers(1, 40),
    k=st.integers(1, 70),
    target=st.sampled_from(TARGETS),
)
def test_matmul_any_shape(m: int, n: int, k: int, target: str) -> None:
    text = matmul_kernel(m, n, k, 16, 16, 32, "f16")
    a, b = random((m, k), "f16", m, -1, 1), random((k, n), "f16", n, -1, 1)
    check(text, [a, b, poison((m, n), "f16")], [2], target, "f16")


@SETTINGS
@given(
    rows=st.integers(1, 30),
    cols=st.integers(1, 90),
    kernel=st.sampled_from(["swish", "softmax"]),
    target=st.sampled_from(TARGETS),
)
def test_tv_kernels_any_shape(rows: int, cols: int, kernel: str, target: str) -> None:
    """tv -> tv-to-tile (its own tile sizes) -> tile-to-hw with hw-insert-sync."""
    element = "f16" if kernel == "swish" else "f32"
    tensor = f"!tv.tensor<{rows}x{cols}x{element}>"
    body = (
        f"%s = tv.sigmoid %x : {tensor}\n  %y = tv.mul %x, %s : {tensor}"
        if kernel == "swish"
        else f"%y = tv.softmax %x axis = 1 : {tensor}"
    )
    text = f"""
func.func @f(%x: {tensor}) -> {tensor} {{
  {body}
  func.return %y : {tensor}
}}
"""
    x = random((rows, cols), element, rows * cols)
    (expected,) = run_tv_function(parse(text), "f", [x.copy()])
    tiled = through_tv_to_tile(text, target)
    result = run_lowered(tiled, target, [x, poison(x.shape, element)], sync=True)
    assert_close(expected, result.outputs[-1], element)


# --------------------------------------------------------------------------------------
# Nests that communicate through GM: phases separated by sync_all
# --------------------------------------------------------------------------------------


def mirrored(rows: int, cols: int, tm: int, tn: int, tm2: int) -> str:
    """`@f(%x, %out)`: nest 1 stores swish(x) into a GM temporary %t in tm x tn
    tiles (tails included); nest 2 adds to block b of x (tm2 whole rows, rows a
    multiple of tm2) the block of %t mirrored about the middle, which other
    cores wrote."""
    x_type = f"memref<{rows}x{cols}xf16>"
    t = f"!tile.tile<{tm}x{tn}xf16, ub, valid = [?, ?]>"
    pad = -(-cols // 16) * 16
    row = f"!tile.tile<{tm2}x{pad}xf16, ub, valid = [{tm2}, {cols}]>"
    return f"""
func.func @f(%x: {x_type}, %out: {x_type}) {{
  %c0 = arith.constant 0 : index
  %rows = arith.constant {rows} : index
  %cols = arith.constant {cols} : index
  %tm = arith.constant {tm} : index
  %tn = arith.constant {tn} : index
  %tm2 = arith.constant {tm2} : index
  %last = arith.constant {rows - tm2} : index
  %t = memref.alloc() : {x_type}
  scf.for %i = %c0 to %rows step %tm {{
    {extent("vi", "%rows", "%i", "%tm")}
    scf.for %j = %c0 to %cols step %tn {{
      {extent("vj", "%cols", "%j", "%tn")}
      %a = tile.load %x[%i, %j] valid [%vi, %vj] : {x_type} -> {t}
      %s = tile.sigmoid %a : {t}
      %p = tile.mul %a, %s : {t}
      tile.store %p, %t[%i, %j] : {t} -> {x_type}
    }}
  }}
  scf.for %i = %c0 to %rows step %tm2 {{
    %k = arith.subi %last, %i : index
    %m = tile.load %t[%k, %c0] : {x_type} -> {row}
    %a = tile.load %x[%i, %c0] : {x_type} -> {row}
    %r = tile.add %m, %a : {row}
    tile.store %r, %out[%i, %c0] : {row} -> {x_type}
  }}
  memref.dealloc %t : {x_type}
  func.return
}}
"""


MIRRORED = {
    "ascend910b": (64, 40, 8, 32, 16),  # 8 units, then 4: block_dim 8
    "tiny": (32, 40, 8, 32, 8),  # 4 units on each of 2 cores
}


@pytest.mark.parametrize("sync", [False, True])
@pytest.mark.parametrize("target", TARGETS)
def test_nests_through_gm_run_on_all_cores(target: str, sync: bool) -> None:
    rows, cols, *_ = shape = MIRRORED[target]
    text = mirrored(*shape)
    lowered = lower(parse(text), target)
    assert sum(isinstance(op, hw.SyncAllOp) for op in lowered.walk()) == 1
    x = random((rows, cols), "f16", rows + cols)
    result = check(text, [x, poison(x.shape, "f16")], [1], target, "f16", sync=sync)
    assert result.report.block_dim == (8 if target == "ascend910b" else 2)
    assert len(result.report.sync_alls) == 1


@pytest.mark.parametrize("target", TARGETS)
def test_without_the_barrier_the_nests_race_across_cores(target: str) -> None:
    lowered = lower(parse(mirrored(*MIRRORED[target])), target)
    for op in [op for op in lowered.walk() if isinstance(op, hw.SyncAllOp)]:
        Rewriter.erase_op(op)
    HwInsertSyncPass().apply(context(), lowered)
    rows, cols = MIRRORED[target][:2]
    x = random((rows, cols), "f16", 1)
    with pytest.raises(RaceError, match="between cores"):
        run_hw_function(lowered, "f", [x, poison(x.shape, "f16")], load_target(target))


@pytest.mark.parametrize("sync", [False, True])
@pytest.mark.parametrize("target", TARGETS)
def test_a_phase_that_is_no_loop_runs_on_core_0(target: str, sync: bool) -> None:
    """The second phase is one tile (the last rows of the temporary, which the
    last core wrote): core 0 runs it after the barrier."""
    text = """
func.func @f(%x: memref<32x64xf32>, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<32x64xf32>
  scf.for %i = %c0 to %c32 step %c8 {
    %a = tile.load %x[%i, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
    %r = tile.relu %a : !tile.tile<8x64xf32, ub>
    tile.store %r, %t[%i, %c0] : !tile.tile<8x64xf32, ub> -> memref<32x64xf32>
  }
  %a = tile.load %t[%c24, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
  %e = tile.exp %a : !tile.tile<8x64xf32, ub>
  tile.store %e, %out[%c0, %c0] : !tile.tile<8x64xf32, ub> -> memref<8x64xf32>
  memref.dealloc %t : memref<32x64xf32>
  func.return
}
"""
    x = random((32, 64), "f32", 9)
    result = check(text, [x, poison((8, 64), "f32")], [1], target, "f32", sync=sync)
    assert result.report.block_dim > 1 and len(result.report.sync_alls) == 1
