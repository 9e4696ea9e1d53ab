"""`tile.select` against a `tile.fill` of a run-time scalar, end to end: the
compare is a `vcmps` of the other compared operand and the fill's scalar (a
fill on the left mirrors the compare), and the fill writes nothing when only
the compare reads it. Exact against `np.where` on the simulator, on both
targets, over a region of 70 of 80 columns (a repeat per row: the compare's
strides are the first lane operand's, the select's the other three)."""

from __future__ import annotations

import numpy as np
import pytest
from test_tile_to_hw import TARGETS, check, lower, parse

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import ascend_hw as hw

ROWS, COLS, PITCH = 3, 70, 80
NUMPY = {"f16": np.float16, "f32": np.float32, "i32": np.int32}


def _tile(element: str) -> str:
    return f"!tile.tile<{ROWS}x{PITCH}x{element}, ub, valid = [{ROWS}, {COLS}]>"


def _compare(side: str, cmp: str, lhs: str, types: str) -> str:
    """The select of `lhs` against the fill (`side`: which side the fill is on)."""
    pair = f"{lhs}, %f" if side == "rhs" else f"%f, {lhs}"
    return f"tile.select {cmp} {pair}, {types}"


def _lowered(text: str, target: str) -> list[hw.HwInstruction]:
    module = lower(parse(text), target)
    return [op for op in module.walk() if isinstance(op, hw.HwInstruction)]


def _assert_vcmps(text: str, target: str, fill_written: bool) -> None:
    """The lowering reads the fill as a scalar, `vcmps` (an ordered compare
    of i32 lanes: `vmins`, then eq of the minima), never a `vcmp` against the
    fill's lanes, and a vdup writes the fill's scalar exactly when
    `fill_written`."""
    ops = _lowered(text, target)
    names = [op.name for op in ops]
    readers = [op for op in ops if isinstance(op, hw.VCmpsOp | hw.VMinsOp)]
    assert readers, names
    if not any(isinstance(op, hw.VMinsOp) for op in readers):
        assert hw.VCmpOp.name not in names, names
    scalars = {op.scalar for op in readers}
    dups = [op for op in ops if isinstance(op, hw.VDupOp) and op.scalar in scalars]
    assert bool(dups) == fill_written, names


IOTA_MASK = """
func.func @f(%v: memref<ROWSx70xf32>, %len: index, %out: memref<ROWSx70xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%c0, %c0] : memref<ROWSx70xf32> -> TF
  %col = tile.iota : TI
  %n = arith.index_cast %len : index to i32
  %f = tile.fill %n : i32 -> !tile.tile<1x1xi32, ub>
  %z = arith.constant 0.0 : f32
  %zero = tile.fill %z : f32 -> TF
  %r = SELECT
  tile.store %r, %out[%c0, %c0] : TF -> memref<ROWSx70xf32>
  func.return
}
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("side", ["rhs", "lhs"])
@pytest.mark.parametrize("cmp", ["ge", "lt", "eq"])
@pytest.mark.parametrize("length", [0, 33, 80])
def test_iota_against_a_runtime_scalar(
    length: int, cmp: str, side: str, target: str
) -> None:
    """Lane positions against a number computed from an index argument (the
    computed masks of docs/sparse.md): one vcmps, no vdup of the number."""
    tf, ti = _tile("f32"), _tile("i32")
    scalar = "!tile.tile<1x1xi32, ub>"
    operands = f"{ti}, {scalar}" if side == "rhs" else f"{scalar}, {ti}"
    select = _compare(side, cmp, "%col", f"%t, %zero : {operands}, {tf}, {tf}")
    text = (
        IOTA_MASK.replace("SELECT", select)
        .replace("TF", tf)
        .replace("TI", ti)
        .replace("ROWS", str(ROWS))
    )
    _assert_vcmps(text, target, fill_written=False)
    v = np.random.default_rng(5).uniform(-3, 3, (ROWS, COLS)).astype(np.float32)
    out = np.full(v.shape, np.nan, np.float32)
    result = check(text, [v, np.int64(length), out], [], target, "f32")
    col = np.arange(COLS)[None, :]
    hit = op_facts.COMPARE[cmp](*((col, length) if side == "rhs" else (length, col)))
    np.testing.assert_array_equal(result.outputs[-1], np.where(hit, v, np.float32(0)))


LOADED = """
func.func @f(%x: memref<ROWSx70xE>, %s: memref<1xE>, %out: memref<ROWSx70xE>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<ROWSx70xE> -> T
  %n = memref.load %s[%c0] : memref<1xE>
  %f = tile.fill %n : E -> !tile.tile<1x1xE, ub>
  BODY
  tile.store %r, %out[%c0, %c0] : T -> memref<ROWSx70xE>
  func.return
}
"""

USERS = {
    # the fill read by the compare alone: it writes nothing
    "alone": ("%u = tile.neg %t : T", "%t, %u : CMPTYPES, T, T", False),
    # also the select's on_false (a [1, 1] operand, vbrcb): the fill is written
    "on_false": ("", "%t, %f : CMPTYPES, T, S", True),
    # also an add's operand: the fill is written
    "add": ("%u = tile.add %t, %f : T, S", "%u, %t : CMPTYPES, T, T", True),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("users", list(USERS))
@pytest.mark.parametrize("side", ["rhs", "lhs"])
@pytest.mark.parametrize("cmp", ["ge", "lt", "eq"])
@pytest.mark.parametrize("element", ["f16", "f32", "i32"])
def test_compare_against_a_loaded_scalar(
    element: str, cmp: str, side: str, users: str, target: str
) -> None:
    """Values against a scalar read from GM (f16 lanes compare with an f16
    scalar), ties and, for floats, NaN on either side: exactly np.where, with
    the fill written only when another operand or op reads it."""
    t, s = _tile(element), f"!tile.tile<1x1x{element}, ub>"
    before, selected, fill_written = USERS[users]
    operands = f"{t}, {s}" if side == "rhs" else f"{s}, {t}"
    select = _compare(side, cmp, "%t", selected.replace("CMPTYPES", operands))
    body = f"{before}\n  %r = {select}"
    text = (
        LOADED.replace("BODY", body)
        .replace("ROWS", str(ROWS))
        .replace("T", t)
        .replace("S", s)
        .replace("E", element)
    )
    _assert_vcmps(text, target, fill_written)
    dtype = NUMPY[element]
    x = np.random.default_rng(7).integers(-2, 3, (ROWS, COLS)).astype(dtype)
    if element != "i32":
        x[0, :2] = [np.nan, -0.0]
    for value in (1, 0, np.nan) if element != "i32" else (1, 0):
        scalar = np.array([value], dtype)
        out = np.zeros(x.shape, dtype)
        result = check(text, [x, scalar, out], [], target, element)
        n = scalar[0]
        with np.errstate(invalid="ignore"):
            hit = op_facts.COMPARE[cmp](*((x, n) if side == "rhs" else (n, x)))
            other = {
                "alone": x * dtype(-1),
                "on_false": np.full_like(x, n),
                "add": x + n,
            }
        taken = (x, other[users]) if users != "add" else (other[users], x)
        expected = np.where(hit, *taken).astype(dtype)
        width = f"u{expected.itemsize}"
        np.testing.assert_array_equal(
            result.outputs[2].view(width), expected.view(width)
        )


def test_the_fill_keeps_no_scratch_and_no_writer() -> None:
    """With the compare reading the scalar, the select asks for the bit buffer
    alone (no vbrcb of a splat) and nothing writes the fill's buffer."""
    t, s = _tile("f32"), "!tile.tile<1x1xf32, ub>"
    select = _compare("rhs", "lt", "%t", f"%t, %u : {t}, {s}, {t}, {t}")
    text = (
        LOADED.replace("BODY", f"%u = tile.neg %t : T\n  %r = {select}")
        .replace("ROWS", str(ROWS))
        .replace("T", t)
        .replace("E", "f32")
    )
    names = [op.name for op in _lowered(text, "ascend910b")]
    assert hw.VBrcbOp.name not in names and hw.VDupOp.name not in names, names
    module = lower(parse(text), "ascend910b")
    allocs = {str(op.result.type) for op in module.walk() if isinstance(op, hw.AllocOp)}
    # the loaded tile, the negation, the bit buffer: no splat blocks, no fill
    assert allocs == {
        "!ascend_hw.buf<3x80xf32, ub>",
        "!ascend_hw.buf<64xi8, ub>",
    }, allocs


I32_PAIR = """
func.func @f(%a: memref<ROWSx70xi32>, %b: memref<ROWSx70xi32>, %out: memref<ROWSx70xi32>) {
  %c0 = arith.constant 0 : index
  %x = tile.load %a[%c0, %c0] : memref<ROWSx70xi32> -> T
  %y = tile.load %b[%c0, %c0] : memref<ROWSx70xi32> -> T
  %r = tile.select CMP %x, %y, %x, %y : T, T, T, T
  tile.store %r, %out[%c0, %c0] : T -> memref<ROWSx70xi32>
  func.return
}
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("cmp", sorted(op_facts.COMPARE))
def test_i32_compares_are_eq_of_minima(cmp: str, target: str) -> None:
    """The vector unit compares int32 for eq only: an ordered compare is eq of
    `vmin(a, b)` with a (le, gt) or b (ge, lt), ne is eq, each selecting the
    other way where it negates; exact at the ends of the range and on ties."""
    t = _tile("i32")
    text = I32_PAIR.replace("CMP", cmp).replace("ROWS", str(ROWS)).replace("T", t)
    ops = _lowered(text, target)
    compares = [op for op in ops if isinstance(op, hw.VCmpOp | hw.VCmpsOp)]
    assert compares and all(op.cmp.data == hw.CmpMode.EQ for op in compares)
    assert any(isinstance(op, hw.VMinOp) for op in ops) == (cmp not in ("eq", "ne"))
    rng = np.random.default_rng(11)
    ends = np.iinfo(np.int32)
    a = rng.integers(-3, 4, (ROWS, COLS)).astype(np.int32)
    b = rng.integers(-3, 4, (ROWS, COLS)).astype(np.int32)
    a[0, :4], b[0, :4] = [ends.min, ends.max, ends.min, 5], [ends.max, ends.min, 0, 5]
    result = check(text, [a, b, np.zeros_like(a)], [], target, "i32")
    expected = np.where(op_facts.COMPARE[cmp](a, b), a, b)
    np.testing.assert_array_equal(result.outputs[2], expected)
