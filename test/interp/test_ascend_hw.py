"""The ascend_hw interpreter, op by op, against numpy models of the op docstrings.

Every test builds a small kernel: DMA its buffers from GM into on-chip memory, run
the op under test, DMA the results back (ordered by flags, so the simulator sees no
race), and compares the GM arrays with a model. The models follow the docstrings
literally: per repeat and per lane, with Python loops over elements where that is
the clearest statement of the semantics (the interpreter itself uses whole-array
numpy). Random data, masks, block and repeat strides, several repeats.
"""

from __future__ import annotations

import math
import zlib
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import verify
from pypto_mlir.interp.ascend_hw import HwRunError, HwRunResult, run_hw_function
from pypto_mlir.sim import (
    AccessError,
    EventError,
    RaceError,
    SimError,
    UninitializedReadError,
)
from pypto_mlir.targets import load_target

TARGET = load_target("ascend910b")
FILE = "kernel.mlir"
DTYPES = {
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "bf16": np.dtype(np.uint16),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
}


def parse(text: str):
    module = parse_chunk(default_context(), SourceChunk(text, 1), FILE)
    verify(module)
    return module


def seed_of(*parts: object) -> int:
    """A reproducible seed from test parameters (str hashes vary per process)."""
    return zlib.crc32(repr(parts).encode())


def random_values(rng: np.random.Generator, elem: str, size: int) -> np.ndarray:
    """Random storage values: normal floats (some negative), small-ish integers."""
    if elem in ("f16", "f32"):
        return (rng.standard_normal(size) * 4).astype(DTYPES[elem])
    if elem == "bf16":
        values = (rng.standard_normal(size) * 4).astype(np.float32)
        return (values.view(np.uint32) >> 16).astype(np.uint16)
    info = np.iinfo(DTYPES[elem])
    return rng.integers(info.min, info.max, size, endpoint=True).astype(DTYPES[elem])


# --------------------------------------------------------------------------------------
# Kernel harness
# --------------------------------------------------------------------------------------


@dataclass
class Buf:
    """An on-chip buffer of the kernel, loaded from (and stored back to) GM."""

    name: str
    elem: str
    data: np.ndarray
    space: str = "ub"
    store: bool = True
    shape: tuple[int, ...] | None = None
    layout: str = ""
    offset: int = field(default=-1)

    @property
    def type(self) -> str:
        shape = "x".join(str(d) for d in (self.shape or (self.data.size,)))
        layout = f", {self.layout}" if self.layout else ""
        return f"!ascend_hw.buf<{shape}x{self.elem}, {self.space}{layout}>"

    @property
    def nbytes(self) -> int:
        return self.data.nbytes


PIPE_OF_LOAD = {"ub": "mte2", "l1": "mte2"}


def vector_kernel(
    body: str,
    bufs: Sequence[Buf],
    scalars: Sequence[tuple[str, str]] = (),
) -> str:
    """A kernel that loads every buffer (ub), runs `body` on V and stores the
    buffers marked `store`. `scalars` are (name, type) function arguments."""
    params = [f"%g_{b.name}: memref<{b.data.size}x{b.elem}>" for b in bufs]
    params += [f"%{name}: {type_}" for name, type_ in scalars]
    lines = ["  %c0 = arith.constant 0 : index"]
    offset = 0
    for b in bufs:
        b.offset = offset
        lines.append(
            f"  %{b.name} = ascend_hw.alloc [{offset}, {offset + b.nbytes}) : {b.type}"
        )
        offset += -(-b.nbytes // 512) * 512
    for b in bufs:
        lines.append(
            f"  ascend_hw.dma_load %g_{b.name}[%c0] -> %{b.name} {{bursts = 1, "
            f"burst_bytes = {b.nbytes}}} : memref<{b.data.size}x{b.elem}> -> {b.type}"
        )
    lines += [
        "  ascend_hw.set_flag mte2 -> v, 0",
        "  ascend_hw.wait_flag mte2 -> v, 0",
        *("  " + line for line in body.strip().splitlines()),
        "  ascend_hw.set_flag v -> mte3, 0",
        "  ascend_hw.wait_flag v -> mte3, 0",
    ]
    for b in bufs:
        if b.store:
            lines.append(
                f"  ascend_hw.dma_store %{b.name} -> %g_{b.name}[%c0] {{bursts = 1, "
                f"burst_bytes = {b.nbytes}}} : {b.type} -> memref<{b.data.size}x{b.elem}>"
            )
    return (
        'builtin.module attributes {pypto.target = "ascend910b"} {\n'
        f"func.func @k({', '.join(params)}) {{\n"
        + "\n".join(lines)
        + "\n  func.return\n}\n}\n"
    )


def run_vector(
    body: str, bufs: Sequence[Buf], scalars: Sequence[tuple[str, str, object]] = ()
) -> tuple[dict[str, np.ndarray], HwRunResult]:
    text = vector_kernel(body, bufs, [(n, t) for n, t, _ in scalars])
    arrays = [b.data.copy() for b in bufs]
    result = run_hw_function(
        parse(text), "k", [*arrays, *(v for _, _, v in scalars)], TARGET
    )
    return {b.name: a for b, a in zip(bufs, arrays, strict=True)}, result


# --------------------------------------------------------------------------------------
# The lane addressing model (VectorOp docstring)
# --------------------------------------------------------------------------------------


@dataclass
class Form:
    """repeat / mask / block strides / repeat strides of one vector op."""

    repeat: int = 1
    mask: int | None = None
    bits: int | None = None
    blk: tuple[int, ...] | None = None
    rep: tuple[int, ...] | None = None

    def attrs(self) -> str:
        items = [f"repeat = {self.repeat}"]
        if self.mask is not None:
            items.append(f"mask = {self.mask}")
        if self.bits is not None:
            items.append(f"mask = #ascend_hw.mask<{self.bits:#x}>")
        if self.blk is not None:
            items.append(f"blk_stride = array<i64: {', '.join(map(str, self.blk))}>")
        if self.rep is not None:
            items.append(f"rep_stride = array<i64: {', '.join(map(str, self.rep))}>")
        return "{" + ", ".join(items) + "}"

    def active(self, lanes: int) -> list[int]:
        if self.mask is not None:
            return list(range(self.mask))
        if self.bits is not None:
            return [lane for lane in range(lanes) if self.bits >> lane & 1]
        return list(range(lanes))

    def strides(self, k: int, ebytes: int, lanes: int) -> tuple[int, int]:
        blk = 1 if self.blk is None else self.blk[k]
        rep = lanes * ebytes // 32 if self.rep is None else self.rep[k]
        return blk, rep


def lane_element(ebytes: int, blk: int, rep: int, i: int, lane: int) -> int:
    """Element index of lane `lane` of repeat `i` (the VectorOp formula)."""
    per_block = 32 // ebytes
    byte = (i * rep + (lane // per_block) * blk) * 32 + (lane % per_block) * ebytes
    return byte // ebytes


def extent(form: Form, k: int, ebytes: int, lanes: int) -> int:
    """Elements a buffer needs for operand k (rounded up to a 32-byte block)."""
    blk, rep = form.strides(k, ebytes, lanes)
    last = max(
        lane_element(ebytes, blk, rep, i, lane)
        for i in range(form.repeat)
        for lane in form.active(lanes)
    )
    per_block = 32 // ebytes
    return -(-(last + 1) // per_block) * per_block


def model_lanes(
    form: Form,
    lanes: int,
    operands: Sequence[tuple[np.ndarray, int]],
    fn: Callable[..., object],
    dst: int,
) -> None:
    """Sequential model of an elementwise vector op: repeat by repeat, reading the
    enabled lanes of every operand but `dst`, then writing `fn` of them to `dst`."""
    active = form.active(lanes)
    for i in range(form.repeat):
        values: list[list[object]] = []
        for k, (array, ebytes) in enumerate(operands):
            if k == dst:
                continue
            blk, rep = form.strides(k, ebytes, lanes)
            values.append(
                [array[lane_element(ebytes, blk, rep, i, lane)] for lane in active]
            )
        inputs = zip(*values, strict=True) if values else [()] * len(active)
        results = [fn(*args) for args in inputs]
        array, ebytes = operands[dst]
        blk, rep = form.strides(dst, ebytes, lanes)
        for lane, result in zip(active, results, strict=True):
            array[lane_element(ebytes, blk, rep, i, lane)] = result


def in_f32(fn: Callable[..., object], dtype: np.dtype) -> Callable[..., object]:
    """A float op evaluated in f32 and rounded once (integers: the numpy op in the
    element type, which wraps)."""
    if dtype.kind != "f":
        return lambda *a: np.array(fn(*a)).astype(dtype)[()]
    return lambda *a: dtype.type(fn(*(np.float32(x) for x in a)))


FORMS = {
    "plain": Form(),
    "repeats": Form(repeat=3),
    "count-mask": Form(repeat=2, mask=37),
    "bit-mask": Form(repeat=2, bits=0xF0F0_0F0F_00FF_FF01),
    "strided": Form(repeat=2, blk=(2, 1, 3), rep=(20, 9, 30)),
    "broadcast-block": Form(repeat=3, blk=(0, 1, 1), rep=(1, 8, 8)),
}

BINARY = {
    "vadd": np.add,
    "vsub": np.subtract,
    "vmul": np.multiply,
    "vdiv": np.divide,
    "vmax": np.maximum,
    "vmin": np.minimum,
}


@pytest.mark.parametrize("form_name", FORMS)
@pytest.mark.parametrize("elem", ["f16", "f32", "i16", "i32"])
@pytest.mark.parametrize("name", BINARY)
def test_binary(name: str, elem: str, form_name: str) -> None:
    if name == "vdiv" and elem[0] == "i":
        pytest.skip("vdiv is float-only")
    form = FORMS[form_name]
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    rng = np.random.default_rng(seed_of(name, elem, form_name))
    bufs = [
        Buf(n, elem, random_values(rng, elem, extent(form, k, e, lanes)))
        for k, n in enumerate("abd")
    ]
    body = (
        f"ascend_hw.{name} %a, %b -> %d {form.attrs()} : "
        f"{bufs[0].type}, {bufs[1].type} -> {bufs[2].type}"
    )
    out, _ = run_vector(body, bufs)
    expected = [b.data.copy() for b in bufs]
    with np.errstate(all="ignore"):
        model_lanes(
            form,
            lanes,
            [(a, e) for a in expected],
            in_f32(BINARY[name], dtype),
            dst=2,
        )
    np.testing.assert_array_equal(out["d"], expected[2])
    np.testing.assert_array_equal(out["a"], expected[0])


def test_in_place_overlapping_repeats_run_in_order() -> None:
    """rep_stride 0 makes every repeat read what the previous one wrote: d += b
    three times, not once."""
    form = Form(repeat=3, rep=(0, 0, 0))
    rng = np.random.default_rng(1)
    a = Buf("a", "f32", random_values(rng, "f32", 64))
    b = Buf("b", "f32", random_values(rng, "f32", 64))
    body = (
        f"ascend_hw.vadd %a, %b -> %a {form.attrs()} : {a.type}, {b.type} -> {a.type}"
    )
    out, _ = run_vector(body, [a, b])
    expected = a.data.copy()
    for _ in range(3):
        expected = (expected + b.data).astype(np.float32)
    np.testing.assert_array_equal(out["a"], expected)


def test_shifted_overlap_runs_in_order() -> None:
    """dst one repeat ahead of src in the same buffer: a running prefix copy."""
    form = Form(repeat=4, rep=(8, 8))
    rng = np.random.default_rng(2)
    data = random_values(rng, "f32", 64 * 5)
    a = Buf("a", "f32", data)
    row = "!ascend_hw.buf<256xf32, ub>"
    body = f"""
    %lo = ascend_hw.subview %a[%c0] : {a.type} -> {row}
    %c64 = arith.constant 64 : index
    %hi = ascend_hw.subview %a[%c64] : {a.type} -> {row}
    ascend_hw.vcopy %lo -> %hi {form.attrs()} : {row} -> {row}
    """
    out, _ = run_vector(body, [a])
    expected = data.copy()
    for i in range(4):
        expected[64 * (i + 1) : 64 * (i + 2)] = expected[64 * i : 64 * (i + 1)]
    np.testing.assert_array_equal(out["a"], expected)


SCALAR = {
    "vadds": np.add,
    "vmuls": np.multiply,
    "vmaxs": np.maximum,
    "vmins": np.minimum,
}


@pytest.mark.parametrize("form_name", ["plain", "count-mask", "strided"])
@pytest.mark.parametrize("elem", ["f16", "f32", "i16", "i32"])
@pytest.mark.parametrize("name", SCALAR)
def test_scalar(name: str, elem: str, form_name: str) -> None:
    form = FORMS[form_name]
    form = Form(
        form.repeat,
        form.mask,
        form.bits,
        form.blk and form.blk[:2],
        form.rep and form.rep[:2],
    )
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    rng = np.random.default_rng(seed_of(name, elem, form_name))
    a = Buf("a", elem, random_values(rng, elem, extent(form, 0, e, lanes)))
    d = Buf("d", elem, random_values(rng, elem, extent(form, 1, e, lanes)))
    scalar = -2.3 if dtype.kind == "f" else -7
    body = (
        f"ascend_hw.{name} %a, %s -> %d {form.attrs()} : {a.type}, {elem} -> {d.type}"
    )
    out, _ = run_vector(body, [a, d], [("s", elem, scalar)])
    expected = [a.data.copy(), d.data.copy()]
    s = dtype.type(scalar)
    with np.errstate(all="ignore"):
        model_lanes(
            form,
            lanes,
            [(x, e) for x in expected],
            lambda x: in_f32(SCALAR[name], dtype)(x, s),
            dst=1,
        )
    np.testing.assert_array_equal(out["d"], expected[1])


UNARY = {
    "vexp": np.exp,
    "vln": np.log,
    "vabs": np.abs,
    "vrelu": lambda x: max(x, 0) if not np.isnan(x) else x,
    "vsqrt": np.sqrt,
    "vrsqrt": lambda x: np.float32(1) / np.sqrt(x),
    "vreciprocal": lambda x: np.float32(1) / x,
}


@pytest.mark.parametrize("form_name", ["plain", "bit-mask", "strided"])
@pytest.mark.parametrize("elem", ["f16", "f32"])
@pytest.mark.parametrize("name", UNARY)
def test_unary(name: str, elem: str, form_name: str) -> None:
    check_unary(name, elem, FORMS[form_name], UNARY[name])


def test_relu_i32() -> None:
    check_unary("vrelu", "i32", Form(repeat=2, mask=50), lambda x: max(x, 0))


def test_vcopy_bits() -> None:
    """vcopy moves bits (bf16 included) through any strides."""
    check_unary("vcopy", "bf16", Form(repeat=3, blk=(1, 2), rep=(8, 17)), lambda x: x)
    check_unary("vcopy", "i32", Form(repeat=2, bits=0xFFFF_0000_FFFF), lambda x: x)


def check_unary(name: str, elem: str, form: Form, fn: Callable[..., object]) -> None:
    form = Form(
        form.repeat,
        form.mask,
        form.bits,
        form.blk and form.blk[:2],
        form.rep and form.rep[:2],
    )
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    rng = np.random.default_rng(seed_of(name, elem))
    a = Buf("a", elem, random_values(rng, elem, extent(form, 0, e, lanes)))
    d = Buf("d", elem, random_values(rng, elem, extent(form, 1, e, lanes)))
    body = f"ascend_hw.{name} %a -> %d {form.attrs()} : {a.type} -> {d.type}"
    out, _ = run_vector(body, [a, d])
    expected = [a.data.copy(), d.data.copy()]
    op = fn if name in ("vcopy", "vrelu") and elem[0] in "ib" else in_f32(fn, dtype)
    with np.errstate(all="ignore"):
        model_lanes(form, lanes, [(x, e) for x in expected], op, dst=1)
    np.testing.assert_array_equal(out["d"], expected[1])


# --------------------------------------------------------------------------------------
# vcast: an independent rounding model (neighbours on the destination's value grid)
# --------------------------------------------------------------------------------------


def _grid(bits_dtype: type, value_of: Callable[[np.ndarray], np.ndarray], big: float):
    """Sorted finite values of a 16-bit float format, their bit patterns, plus the
    first value beyond the range on each side (which stands for +-inf)."""
    patterns = np.arange(65536, dtype=np.uint32).astype(bits_dtype)
    with np.errstate(invalid="ignore"):
        values = value_of(patterns).astype(np.float64)
    finite = np.isfinite(values)
    order = np.argsort(values[finite], kind="stable")
    vals = values[finite][order]
    pats = patterns[finite][order]
    keep = np.concatenate(([True], np.diff(vals) != 0))  # -0 and +0
    vals, pats = vals[keep], pats[keep]
    return [-big, *vals.tolist(), big], [0, *pats.tolist(), 0]


F16_GRID = _grid(np.uint16, lambda p: p.view(np.float16), 65536.0)
BF16_GRID = _grid(
    np.uint16, lambda p: (p.astype(np.uint32) << 16).view(np.float32), 2.0**128
)


def round_on_grid(x: float, grid, mode: str) -> float:
    """x rounded onto `grid` with `mode`; the sentinels at both ends mean +-inf."""
    vals, pats = grid
    if math.isnan(x):
        return x
    if math.isinf(x) or abs(x) >= vals[-1]:
        return math.copysign(math.inf, x)
    hi = bisect_left(vals, x)
    lo = hi if vals[hi] == x else hi - 1
    if lo < 0 or hi >= len(vals):
        return math.copysign(math.inf, x)
    down, up = vals[lo], vals[hi]
    if mode == "floor":
        r = down
    elif mode == "ceil":
        r = up
    elif mode == "trunc":
        r = down if x >= 0 else up
    elif mode in ("rint", "round"):
        if x - down < up - x:
            r = down
        elif up - x < x - down:
            r = up
        elif mode == "round":
            r = up if x > 0 else down
        else:
            r = down if pats[lo] % 2 == 0 else up
    else:  # odd: truncate, then make the last bit 1 if inexact
        k = lo if x >= 0 else hi
        r = vals[k]
        if r != x and pats[k] % 2 == 0:
            r = vals[k + 1] if x >= 0 else vals[k - 1]
    if abs(r) >= abs(vals[-1]):
        return math.copysign(math.inf, x)
    return r


def round_int(x: float, mode: str) -> float:
    if mode == "floor":
        return math.floor(x)
    if mode == "ceil":
        return math.ceil(x)
    if mode == "trunc":
        return math.trunc(x)
    if mode == "round":
        return math.copysign(math.floor(abs(x) + 0.5), x)
    return round(x)  # rint: ties to even


def to_f32_rounded(x: int, mode: str) -> float:
    """An integer rounded to f32 with `mode`, from numpy's nearest neighbours."""
    near = np.float32(x)
    if float(near) == x:
        return float(near)
    if float(near) > x:
        down, up = np.nextafter(near, np.float32(-np.inf)), near
    else:
        down, up = near, np.nextafter(near, np.float32(np.inf))
    down, up = float(down), float(up)
    if mode == "floor":
        return down
    if mode == "ceil":
        return up
    if mode == "trunc":
        return down if x > 0 else up
    if x - down != up - x:
        return down if x - down < up - x else up
    if mode == "round":
        return up if x > 0 else down
    return float(near)  # numpy rounds ties to even


def cast_model(value: object, src: str, dst: str, mode: str) -> object:
    if src == "bf16":
        x = float(
            (np.array([value], np.uint16).astype(np.uint32) << 16).view(np.float32)[0]
        )
    else:
        x = float(value) if src[0] == "f" else int(value)  # type: ignore[arg-type]
    if dst == "f32":
        if src == "i32":
            return np.float32(to_f32_rounded(int(x), mode))
        return np.float32(x)
    if dst == "f16":
        return np.float16(
            round_on_grid(x, F16_GRID, "rint" if mode == "none" else mode)
        )
    if dst == "bf16":
        r = round_on_grid(x, BF16_GRID, mode)
        return (np.array([r], np.float32).view(np.uint32) >> 16).astype(np.uint16)[0]
    info = np.iinfo(DTYPES[dst])
    if math.isnan(x):
        return DTYPES[dst].type(0)
    if math.isinf(x):
        return DTYPES[dst].type(info.max if x > 0 else info.min)
    r = min(max(round_int(x, mode), info.min), info.max)
    return DTYPES[dst].type(int(r))


CASTS = [
    ("f16", "f32", "none"),
    ("bf16", "f32", "none"),
    ("i8", "f16", "none"),
    ("i16", "f32", "none"),
    *[("f32", "f16", m) for m in ("rint", "round", "floor", "ceil", "trunc", "odd")],
    *[("f32", "bf16", m) for m in ("rint", "round", "floor", "ceil", "trunc")],
    *[
        (s, d, m)
        for s, d in (
            ("f32", "i32"),
            ("f16", "i32"),
            ("f16", "i16"),
            ("f16", "i8"),
            ("i32", "f32"),
        )
        for m in ("rint", "round", "floor", "ceil", "trunc")
    ],
]


def cast_inputs(rng: np.random.Generator, src: str, size: int) -> np.ndarray:
    """Values that exercise rounding: ties, subnormals, overflow, NaN, big ints."""
    if src == "f32":
        specials = np.array(
            [
                0.5,
                1.5,
                2.5,
                -0.5,
                -2.5,
                65504.0,
                65519.0,
                65520.0,
                70000.0,
                -1e6,
                2.0**-20,
                -(2.0**-25),
                1.0 + 2.0**-11,
                1.0 + 3 * 2.0**-11,
                np.nan,
                np.inf,
                3e9,
                -3e9,
                1.00390625,
                2.0**-130,
            ],
            np.float32,
        )
        bulk = (rng.standard_normal(size) * rng.choice([1e-3, 1, 300], size)).astype(
            np.float32
        )
        bulk[: specials.size] = specials
        return bulk
    if src == "f16":
        bulk = (rng.standard_normal(size) * 200).astype(np.float16)
        bulk[:8] = np.array(
            [0.5, 1.5, 2.5, -2.5, 60000, -60000, np.nan, -0.49], np.float16
        )
        return bulk
    if src == "i32":
        bulk = rng.integers(-(2**31), 2**31 - 1, size, dtype=np.int64).astype(np.int32)
        bulk[:4] = [2**24 + 1, 2**24 + 3, -(2**25) - 2, 2**31 - 1]
        return bulk
    return random_values(rng, src, size)


@pytest.mark.parametrize("src, dst, mode", CASTS)
def test_vcast(src: str, dst: str, mode: str) -> None:
    """Lanes follow the wider type; the narrow side's contiguous stride is half a
    repeat. Two repeats with a lane mask, default strides."""
    e_src, e_dst = DTYPES[src].itemsize, DTYPES[dst].itemsize
    lanes = 256 // max(e_src, e_dst)
    form = Form(repeat=2, mask=lanes - 3)
    rng = np.random.default_rng(seed_of(src, dst, mode))
    a = Buf("a", src, cast_inputs(rng, src, extent(form, 0, e_src, lanes)))
    d = Buf("d", dst, random_values(rng, dst, extent(form, 1, e_dst, lanes)))
    body = f"ascend_hw.vcast {mode} %a -> %d {form.attrs()} : {a.type} -> {d.type}"
    out, _ = run_vector(body, [a, d])
    expected = d.data.copy()
    model_lanes(
        form,
        lanes,
        [(a.data.copy(), e_src), (expected, e_dst)],
        lambda x: cast_model(x, src, dst, mode),
        dst=1,
    )
    np.testing.assert_array_equal(out["d"].view(DTYPES[dst]), expected)


# --------------------------------------------------------------------------------------
# Reductions, dup, brcb, compare, select, gather
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dst_stride", [1, 3])
@pytest.mark.parametrize("elem", ["f16", "f32"])
@pytest.mark.parametrize("name", ["vreduce_sum", "vreduce_max", "vreduce_min"])
def test_reduce(name: str, elem: str, dst_stride: int) -> None:
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    form = Form(
        repeat=4,
        bits=(1 << lanes) - 1 - (1 << 5) - (1 << 17),
        rep=(lanes * e // 32 + 1,),
    )
    rng = np.random.default_rng(seed_of(name, elem, dst_stride))
    a = Buf("a", elem, random_values(rng, elem, extent(form, 0, e, lanes)))
    d = Buf("d", elem, random_values(rng, elem, 64))
    body = (
        f"ascend_hw.{name} %a -> %d {form.attrs()[:-1]}, dst_stride = {dst_stride}}} : "
        f"{a.type} -> {d.type}"
    )
    out, _ = run_vector(body, [a, d])
    expected = d.data.copy()
    for i in range(form.repeat):
        row = [
            a.data[lane_element(e, 1, form.rep[0], i, lane)]
            for lane in form.active(lanes)
        ]
        row = np.array(row, dtype)
        if name == "vreduce_sum":
            value = np.sum(row.astype(np.float32), dtype=np.float32)
        else:
            value = row.max() if name == "vreduce_max" else row.min()
        expected[i * dst_stride] = dtype.type(value)
    np.testing.assert_array_equal(out["d"], expected)


@pytest.mark.parametrize("elem", ["f16", "f32"])
@pytest.mark.parametrize("name", ["vblock_reduce_max", "vblock_reduce_min"])
def test_block_reduce(name: str, elem: str) -> None:
    """Each 32-byte block of a repeat to one value, 8 a repeat, packed; the
    repeat stride skips a block between repeats."""
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    per_block, repeat, rep = 32 // e, 3, 9
    rng = np.random.default_rng(seed_of(name, elem))
    a = Buf("a", elem, random_values(rng, elem, (repeat - 1) * rep * per_block + lanes))
    d = Buf("d", elem, random_values(rng, elem, 32))
    body = (
        f"ascend_hw.{name} %a -> %d {{repeat = {repeat}, "
        f"rep_stride = array<i64: {rep}>}} : {a.type} -> {d.type}"
    )
    out, _ = run_vector(body, [a, d])
    expected = d.data.copy()
    for i in range(repeat):
        blocks = a.data[i * rep * per_block : i * rep * per_block + lanes]
        blocks = blocks.reshape(8, per_block)
        found = blocks.max(axis=1) if name.endswith("max") else blocks.min(axis=1)
        expected[8 * i : 8 * i + 8] = found
    np.testing.assert_array_equal(out["d"], expected)


@pytest.mark.parametrize("elem", ["f16", "f32", "i16", "i32", "bf16"])
def test_vdup(elem: str) -> None:
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    form = Form(repeat=3, mask=lanes // 2 + 1, blk=(2,), rep=(lanes * e // 16,))
    rng = np.random.default_rng(7)
    d = Buf("d", elem, random_values(rng, elem, extent(form, 0, e, lanes)))
    value = -1.75 if elem[0] in "fb" else -3
    body = f"ascend_hw.vdup %s -> %d {form.attrs()} : {elem} -> {d.type}"
    out, _ = run_vector(body, [d], [("s", elem, value)])
    stored = np.array([value], np.float32)
    bits = (
        (stored.view(np.uint32) >> 16).astype(np.uint16)[0]
        if elem == "bf16"
        else dtype.type(value)
    )
    expected = d.data.copy()
    model_lanes(form, lanes, [(expected, e)], lambda: bits, dst=0)
    np.testing.assert_array_equal(out["d"], expected)


@pytest.mark.parametrize("elem", ["f16", "f32"])
def test_vbrcb(elem: str) -> None:
    """Repeat i fills block j with src[i * 8 + j]; block stride 2, repeat stride 20."""
    dtype = DTYPES[elem]
    e = dtype.itemsize
    per_block = 32 // e
    repeat = 3
    rng = np.random.default_rng(8)
    src = Buf("s", elem, random_values(rng, elem, 32 // e * 4))
    d = Buf("d", elem, random_values(rng, elem, (2 * 20 + 15 * 1 + 1) * per_block + 64))
    body = (
        f"ascend_hw.vbrcb %s -> %d {{repeat = {repeat}, blk_stride = array<i64: 2>, "
        f"rep_stride = array<i64: 20>}} : {src.type} -> {d.type}"
    )
    out, _ = run_vector(body, [src, d])
    expected = d.data.copy()
    for i in range(repeat):
        for j in range(8):
            start = (i * 20 + j * 2) * per_block
            expected[start : start + per_block] = src.data[i * 8 + j]
    np.testing.assert_array_equal(out["d"], expected)


CMP = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


def _bits_of(mask_bytes: np.ndarray, count: int) -> np.ndarray:
    return np.array([(int(mask_bytes[b // 8]) >> (b % 8)) & 1 for b in range(count)])


@pytest.mark.parametrize("scalar", [False, True])
@pytest.mark.parametrize(
    ("mode", "elem"),
    # int32 lanes compare for eq only (the verifier refuses the others)
    [(m, e) for e in ("f16", "f32", "i32") for m in CMP if e != "i32" or m == "eq"],
)
def test_compare(mode: str, elem: str, scalar: bool) -> None:
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    form = Form(repeat=2, bits=(1 << lanes) - 1 - 0b1011_0000)
    rng = np.random.default_rng(seed_of(mode, elem, scalar))
    a = Buf("a", elem, random_values(rng, elem, extent(form, 0, e, lanes)))
    b = Buf("b", elem, a.data.copy())
    b.data[::3] = random_values(rng, elem, b.data[::3].size)
    if dtype.kind == "f":
        a.data[8] = np.nan
    m = Buf("m", "i8", random_values(rng, "i8", 64))
    s_value = a.data[2].item()
    if scalar:
        body = f"ascend_hw.vcmps {mode} %a, %s -> %m {form.attrs()} : {a.type}, {elem} -> {m.type}"
        out, _ = run_vector(body, [a, m], [("s", elem, s_value)])
    else:
        body = f"ascend_hw.vcmp {mode} %a, %b -> %m {form.attrs()} : {a.type}, {b.type} -> {m.type}"
        out, _ = run_vector(body, [a, b, m])
    got = _bits_of(out["m"].view(np.uint8), form.repeat * lanes)
    expected = np.zeros(form.repeat * lanes, int)
    with np.errstate(invalid="ignore"):
        for i in range(form.repeat):
            for lane in form.active(lanes):
                x = a.data[i * lanes + lane]
                y = dtype.type(s_value) if scalar else b.data[i * lanes + lane]
                expected[i * lanes + lane] = bool(CMP[mode](x, y))
    np.testing.assert_array_equal(got, expected)
    rest = form.repeat * lanes // 8
    np.testing.assert_array_equal(out["m"][rest:], m.data[rest:])


@pytest.mark.parametrize("elem", ["f16", "f32", "bf16"])
def test_vselect(elem: str) -> None:
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    form = Form(repeat=3, mask=lanes - 10, blk=(1, 2, 1), rep=(lanes * e // 32, 20, 9))
    rng = np.random.default_rng(11)
    cond = Buf("c", "i8", random_values(rng, "i8", 64))
    bufs = [
        Buf(n, elem, random_values(rng, elem, extent(form, k, e, lanes)))
        for k, n in enumerate("abd")
    ]
    body = (
        f"ascend_hw.vselect %c, %a, %b -> %d {form.attrs()} : {cond.type}, "
        f"{bufs[0].type}, {bufs[1].type} -> {bufs[2].type}"
    )
    out, _ = run_vector(body, [cond, *bufs])
    bits = _bits_of(cond.data.view(np.uint8), form.repeat * lanes)
    expected = bufs[2].data.copy()
    active = form.active(lanes)
    for i in range(form.repeat):
        for lane in active:
            src = 0 if bits[i * lanes + lane] else 1
            blk, rep = form.strides(src, e, lanes)
            value = bufs[src].data[lane_element(e, blk, rep, i, lane)]
            blk, rep = form.strides(2, e, lanes)
            expected[lane_element(e, blk, rep, i, lane)] = value
    np.testing.assert_array_equal(out["d"], expected)


@pytest.mark.parametrize("elem", ["f16", "f32"])
def test_vgather(elem: str) -> None:
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    form = Form(repeat=2, mask=lanes - 5)
    rng = np.random.default_rng(12)
    src = Buf("s", elem, random_values(rng, elem, 1024))
    offsets = Buf("o", "i32", (rng.integers(0, 1024, 2 * lanes) * e).astype(np.int32))
    d = Buf("d", elem, random_values(rng, elem, extent(form, 0, e, lanes)))
    body = f"ascend_hw.vgather %s, %o -> %d {form.attrs()} : {src.type}, {offsets.type} -> {d.type}"
    out, result = run_vector(body, [src, offsets, d])
    expected = d.data.copy()
    for i in range(form.repeat):
        for lane in form.active(lanes):
            expected[i * lanes + lane] = src.data[offsets.data[i * lanes + lane] // e]
    np.testing.assert_array_equal(out["d"], expected)


def test_vgather_bad_offset_is_an_error_at_the_op() -> None:
    rng = np.random.default_rng(13)
    src = Buf("s", "f32", random_values(rng, "f32", 64))
    offsets = Buf("o", "i32", np.full(64, 4, np.int32))
    offsets.data[9] = 64 * 4  # one past the end
    d = Buf("d", "f32", random_values(rng, "f32", 64))
    body = f"ascend_hw.vgather %s, %o -> %d : {src.type}, {offsets.type} -> {d.type}"
    with pytest.raises(AccessError, match="gather offset 256") as info:
        run_vector(body, [src, offsets, d])
    assert info.value.locs[0].startswith(f"{FILE}:")


# --------------------------------------------------------------------------------------
# Lane addressing against the formula, for random strides and masks (hypothesis)
# --------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    elem=st.sampled_from(["f16", "f32"]),
    repeat=st.integers(1, 4),
    blk=st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(1, 3)),
    rep=st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(8, 24)),
    bits=st.integers(1, 2**64 - 1),
    seed=st.integers(0, 2**16),
)
def test_vmul_addressing(
    elem: str,
    repeat: int,
    blk: tuple[int, int, int],
    rep: tuple[int, int, int],
    bits: int,
    seed: int,
) -> None:
    """Any strides and mask: the interpreter's whole-array lanes equal the
    per-lane formula, applied repeat by repeat (dst separate from the sources)."""
    form = Form(repeat=repeat, bits=bits, blk=blk, rep=rep)
    dtype = DTYPES[elem]
    e, lanes = dtype.itemsize, 256 // dtype.itemsize
    if elem == "f32":
        form.bits = bits & (2**64 - 1) or 1
    rng = np.random.default_rng(seed)
    bufs = [
        Buf(n, elem, random_values(rng, elem, extent(form, k, e, lanes)))
        for k, n in enumerate("abd")
    ]
    body = (
        f"ascend_hw.vmul %a, %b -> %d {form.attrs()} : "
        f"{bufs[0].type}, {bufs[1].type} -> {bufs[2].type}"
    )
    out, result = run_vector(body, bufs)
    expected = [b.data.copy() for b in bufs]
    model_lanes(form, lanes, [(a, e) for a in expected], in_f32(np.multiply, dtype), 2)
    np.testing.assert_array_equal(out["d"], expected[2])


def test_vector_record_accesses_and_cycles() -> None:
    """One record per instruction, with the op's loc and its cycles, derived by
    hand from ascend910b.toml: the vexp waits for the loads, so it starts a stream
    on V and pays its start-up, round(12.01) = 12 (head_cycles.b16.exp), plus
    ceil(5 repeats * 3.99) = 20 (cycles_per_repeat.b16.exp), plus 5 bank conflict
    cycles: 37."""
    rng = np.random.default_rng(3)
    bufs = [Buf(n, "f16", random_values(rng, "f16", 128 * 5)) for n in "abd"]
    body = f"ascend_hw.vexp %a -> %d {{repeat = 5}} : {bufs[0].type} -> {bufs[2].type}"
    _, result = run_vector(body, bufs)
    (vexp,) = [s for s in result.report.slices if s.name == "vexp"]
    assert vexp.pipe == "V"
    assert vexp.loc == f"{FILE}:12:3"  # after 3 allocs, 3 loads and 2 flags
    # a at 0 and d at 3072 start in bank 0: every repeat reads and writes banks
    # 0-7, one bank conflict cycle each (targets.cost.bank_conflict_cycles).
    assert result.report.bank_conflict_cycles == 5
    assert vexp.end - vexp.start == 12 + 20 + 5


# --------------------------------------------------------------------------------------
# DMA, matrix moves, cube
# --------------------------------------------------------------------------------------


def dma_kernel(body: str, params: str) -> str:
    return (
        'builtin.module attributes {pypto.target = "ascend910b"} {\n'
        f"func.func @k({params}) {{\n"
        "  %c0 = arith.constant 0 : index\n"
        + "\n".join("  " + line.strip() for line in body.strip().splitlines())
        + "\n  func.return\n}\n}\n"
    )


def test_dma_bursts_with_gaps() -> None:
    """GM -> UB with a source gap (a column window), UB -> GM with a destination
    gap; UB pitches round up to 32 B, padding bytes untouched."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 40)).astype(np.float16)
    y = rng.standard_normal((8, 40)).astype(np.float16)
    y0 = y.copy()
    body = """
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %t = ascend_hw.alloc [0, 512) : !ascend_hw.buf<256xf16, ub>
    ascend_hw.dma_load %x[%c1, %c3] -> %t {bursts = 6, burst_bytes = 40, src_gap = 40} : memref<8x40xf16> -> !ascend_hw.buf<256xf16, ub>
    ascend_hw.set_flag mte2 -> mte3, 0
    ascend_hw.wait_flag mte2 -> mte3, 0
    ascend_hw.dma_store %t -> %y[%c0, %c0] {bursts = 6, burst_bytes = 40, dst_gap = 40} : !ascend_hw.buf<256xf16, ub> -> memref<8x40xf16>
    """
    module = parse(dma_kernel(body, "%x: memref<8x40xf16>, %y: memref<8x40xf16>"))
    result = run_hw_function(module, "k", [x, y], TARGET)
    expected = y0.copy()
    # Burst b: 20 elements from flat x index 43 + b * 40, to flat y index b * 40.
    flat_x, flat_y = x.reshape(-1), expected.reshape(-1)
    for b in range(6):
        flat_y[b * 40 : b * 40 + 20] = flat_x[43 + b * 40 : 63 + b * 40]
    np.testing.assert_array_equal(y, expected)
    load = next(s for s in result.report.slices if s.name == "dma_load")
    assert load.nbytes == 240 and load.pipe == "MTE2"


def test_dma_copy_ub_l1_round_trip() -> None:
    """UB -> L1 (MTE3) and L1 -> UB (MTE1), with an on-chip destination gap."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(256).astype(np.float32)
    z = np.zeros(256, np.float32)
    body = """
    %u = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<256xf32, ub>
    %l = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<512xf32, l1>
    %v = ascend_hw.alloc [1024, 2048) : !ascend_hw.buf<256xf32, ub>
    ascend_hw.dma_load %x[%c0] -> %u {bursts = 1, burst_bytes = 1024} : memref<256xf32> -> !ascend_hw.buf<256xf32, ub>
    ascend_hw.set_flag mte2 -> mte3, 0
    ascend_hw.wait_flag mte2 -> mte3, 0
    ascend_hw.dma_copy %u -> %l {bursts = 4, burst_bytes = 256, dst_gap = 256} : !ascend_hw.buf<256xf32, ub> -> !ascend_hw.buf<512xf32, l1>
    ascend_hw.set_flag mte3 -> mte1, 0
    ascend_hw.wait_flag mte3 -> mte1, 0
    ascend_hw.dma_copy %l -> %v {bursts = 4, burst_bytes = 256, src_gap = 256} : !ascend_hw.buf<512xf32, l1> -> !ascend_hw.buf<256xf32, ub>
    ascend_hw.set_flag mte1 -> mte3, 0
    ascend_hw.wait_flag mte1 -> mte3, 0
    ascend_hw.dma_store %v -> %z[%c0] {bursts = 1, burst_bytes = 1024} : !ascend_hw.buf<256xf32, ub> -> memref<256xf32>
    """
    module = parse(dma_kernel(body, "%x: memref<256xf32>, %z: memref<256xf32>"))
    result = run_hw_function(module, "k", [x, z], TARGET)
    np.testing.assert_array_equal(z, x)
    pipes = {s.name + s.loc.split(":")[1]: s.pipe for s in result.report.slices}
    assert sorted(pipes.values()) == ["MTE1", "MTE2", "MTE3", "MTE3"]


def nz_of(matrix: np.ndarray, c0: int) -> np.ndarray:
    """The nz byte order of a matrix: column blocks of c0, each all rows."""
    rows, cols = matrix.shape
    return matrix.reshape(rows, cols // c0, c0).transpose(1, 0, 2).reshape(-1)


def test_cube_chain_partial_blocks_and_accumulate() -> None:
    """nd2nz of a window, load_l0 (one plain, one transposed), two mmads (the
    second accumulating over part of k), fixpipe of a partial block to f16 GM and
    to an nd UB buffer."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((48, 64)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)  # B^T: loaded transposed
    c = np.zeros((32, 40), np.float16)
    u = np.zeros((32, 48), np.float32)
    body = """
    %c16 = arith.constant 16 : index
    %a1 = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x64xf16, l1, nz>
    %b1 = ascend_hw.alloc [4096, 8192) : !ascend_hw.buf<32x64xf16, l1, nz>
    %a0 = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x64xf16, l0a, nz>
    %b0 = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<64x32xf16, l0b, nz>
    %acc = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x32xf32, l0c, nz>
    %ub = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x32xf32, ub>
    ascend_hw.nd2nz %a[%c16, %c0] -> %a1[%c0, %c0] {rows = 32, cols = 64} : memref<48x64xf16> -> !ascend_hw.buf<32x64xf16, l1, nz>
    ascend_hw.nd2nz %b[%c0, %c0] -> %b1[%c0, %c0] {rows = 32, cols = 64} : memref<32x64xf16> -> !ascend_hw.buf<32x64xf16, l1, nz>
    ascend_hw.set_flag mte2 -> mte1, 0
    ascend_hw.wait_flag mte2 -> mte1, 0
    ascend_hw.load_l0 %a1[%c0, %c0] -> %a0[%c0, %c0] {rows = 32, cols = 64} : !ascend_hw.buf<32x64xf16, l1, nz> -> !ascend_hw.buf<32x64xf16, l0a, nz>
    ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 64, cols = 32, transpose} : !ascend_hw.buf<32x64xf16, l1, nz> -> !ascend_hw.buf<64x32xf16, l0b, nz>
    ascend_hw.set_flag mte1 -> m, 0
    ascend_hw.wait_flag mte1 -> m, 0
    ascend_hw.mmad %a0, %b0 -> %acc {m = 32, n = 32, k = 64} : !ascend_hw.buf<32x64xf16, l0a, nz>, !ascend_hw.buf<64x32xf16, l0b, nz> -> !ascend_hw.buf<32x32xf32, l0c, nz>
    ascend_hw.mmad %a0, %b0 -> %acc {m = 32, n = 24, k = 16, accumulate} : !ascend_hw.buf<32x64xf16, l0a, nz>, !ascend_hw.buf<64x32xf16, l0b, nz> -> !ascend_hw.buf<32x32xf32, l0c, nz>
    ascend_hw.set_flag m -> fix, 0
    ascend_hw.wait_flag m -> fix, 0
    ascend_hw.fixpipe %acc[%c0, %c0] -> %c[%c0, %c16] {rows = 32, cols = 24} : !ascend_hw.buf<32x32xf32, l0c, nz> -> memref<32x40xf16>
    ascend_hw.fixpipe %acc[%c0, %c0] -> %ub[%c0, %c0] {rows = 32, cols = 32} : !ascend_hw.buf<32x32xf32, l0c, nz> -> !ascend_hw.buf<32x32xf32, ub>
    ascend_hw.set_flag fix -> mte3, 0
    ascend_hw.wait_flag fix -> mte3, 0
    ascend_hw.dma_store %ub -> %u[%c0, %c16] {bursts = 32, burst_bytes = 128, dst_gap = 64} : !ascend_hw.buf<32x32xf32, ub> -> memref<32x48xf32>
    """
    params = "%a: memref<48x64xf16>, %b: memref<32x64xf16>, %c: memref<32x40xf16>, %u: memref<32x48xf32>"
    module = parse(dma_kernel(body, params))
    run_hw_function(module, "k", [a, b, c, u], TARGET)
    a32, bt32 = a[16:48].astype(np.float64), b.T.astype(np.float64)
    acc = a32 @ bt32
    acc[:, :24] += a32[:, :16] @ bt32[:16, :24]
    np.testing.assert_allclose(u[:, 16:], acc, rtol=1e-5, atol=1e-5)
    assert not u[:, :16].any()
    np.testing.assert_array_equal(c[:, 16:], u[:, 16:40].astype(np.float16))
    assert not c[:, :16].any()


def test_nd2nz_layout_and_fixpipe_conversions() -> None:
    """nd2nz writes the fractal order (checked byte for byte through an l1 -> ub
    copy); fixpipe converts f32 to bf16 and to f16 (round to nearest even)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((16, 32)).astype(np.float16)
    raw = np.zeros(512, np.float16)
    body = """
    %l = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<16x32xf16, l1, nz>
    %u = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<512xf16, ub>
    ascend_hw.nd2nz %x[%c0, %c0] -> %l[%c0, %c0] {rows = 16, cols = 32} : memref<16x32xf16> -> !ascend_hw.buf<16x32xf16, l1, nz>
    ascend_hw.set_flag mte2 -> mte1, 0
    ascend_hw.wait_flag mte2 -> mte1, 0
    ascend_hw.dma_copy %l -> %u {bursts = 1, burst_bytes = 1024} : !ascend_hw.buf<16x32xf16, l1, nz> -> !ascend_hw.buf<512xf16, ub>
    ascend_hw.set_flag mte1 -> mte3, 0
    ascend_hw.wait_flag mte1 -> mte3, 0
    ascend_hw.dma_store %u -> %raw[%c0] {bursts = 1, burst_bytes = 1024} : !ascend_hw.buf<512xf16, ub> -> memref<512xf16>
    """
    module = parse(dma_kernel(body, "%x: memref<16x32xf16>, %raw: memref<512xf16>"))
    run_hw_function(module, "k", [x, raw], TARGET)
    np.testing.assert_array_equal(raw, nz_of(x, 16))


def test_mmad_i8_accumulates_in_i32() -> None:
    """i8 fractals are 16 x 32; products accumulate in i32. nd2nz of a partial
    block leaves the rest of the fractal unwritten, which load_l0 then reads."""
    rng = np.random.default_rng(10)
    a = rng.integers(-128, 127, (16, 32), endpoint=True).astype(np.int8)
    b = rng.integers(-128, 127, (32, 32), endpoint=True).astype(np.int8)
    c = np.zeros((16, 16), np.int32)
    body = """
    %a1 = ascend_hw.alloc [0, 512) : !ascend_hw.buf<16x32xi8, l1, nz>
    %b1 = ascend_hw.alloc [512, 1536) : !ascend_hw.buf<32x32xi8, l1, nz>
    %a0 = ascend_hw.alloc [0, 512) : !ascend_hw.buf<16x32xi8, l0a, nz>
    %b0 = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<32x32xi8, l0b, nz>
    %acc = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<16x16xi32, l0c, nz>
    ascend_hw.nd2nz %a[%c0, %c0] -> %a1[%c0, %c0] {rows = 16, cols = 32} : memref<16x32xi8> -> !ascend_hw.buf<16x32xi8, l1, nz>
    ascend_hw.nd2nz %b[%c0, %c0] -> %b1[%c0, %c0] {rows = 32, cols = COLS} : memref<32x32xi8> -> !ascend_hw.buf<32x32xi8, l1, nz>
    ascend_hw.set_flag mte2 -> mte1, 0
    ascend_hw.wait_flag mte2 -> mte1, 0
    ascend_hw.load_l0 %a1[%c0, %c0] -> %a0[%c0, %c0] {rows = 16, cols = 32} : !ascend_hw.buf<16x32xi8, l1, nz> -> !ascend_hw.buf<16x32xi8, l0a, nz>
    ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 32, cols = 32} : !ascend_hw.buf<32x32xi8, l1, nz> -> !ascend_hw.buf<32x32xi8, l0b, nz>
    ascend_hw.set_flag mte1 -> m, 0
    ascend_hw.wait_flag mte1 -> m, 0
    ascend_hw.mmad %a0, %b0 -> %acc {m = 16, n = 16, k = 32} : !ascend_hw.buf<16x32xi8, l0a, nz>, !ascend_hw.buf<32x32xi8, l0b, nz> -> !ascend_hw.buf<16x16xi32, l0c, nz>
    ascend_hw.set_flag m -> fix, 0
    ascend_hw.wait_flag m -> fix, 0
    ascend_hw.fixpipe %acc[%c0, %c0] -> %c[%c0, %c0] {rows = 16, cols = 16} : !ascend_hw.buf<16x16xi32, l0c, nz> -> memref<16x16xi32>
    """
    params = "%a: memref<16x32xi8>, %b: memref<32x32xi8>, %c: memref<16x16xi32>"
    partial = parse(dma_kernel(body.replace("COLS", "16"), params))
    with pytest.raises(
        UninitializedReadError, match="no instruction has written"
    ) as info:
        run_hw_function(partial, "k", [a, b, c], TARGET)
    assert info.value.locs == (f"{FILE}:14:3",)  # the load_l0 of %b1
    run_hw_function(
        parse(dma_kernel(body.replace("COLS", "32"), params)), "k", [a, b, c], TARGET
    )
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b[:, :16].astype(np.int32))


def test_fixpipe_bf16() -> None:
    """f32 accumulators written as bf16 (round to nearest even), via a UB copy."""
    rng = np.random.default_rng(14)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = np.eye(16, dtype=np.float16)
    c = np.zeros((16, 16), np.uint16)
    body = """
    %a1 = ascend_hw.alloc [0, 512) : !ascend_hw.buf<16x16xf16, l1, nz>
    %b1 = ascend_hw.alloc [512, 1024) : !ascend_hw.buf<16x16xf16, l1, nz>
    %a0 = ascend_hw.alloc [0, 512) : !ascend_hw.buf<16x16xf16, l0a, nz>
    %b0 = ascend_hw.alloc [0, 512) : !ascend_hw.buf<16x16xf16, l0b, nz>
    %acc = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<16x16xf32, l0c, nz>
    ascend_hw.nd2nz %a[%c0, %c0] -> %a1[%c0, %c0] {rows = 16, cols = 16} : memref<16x16xf16> -> !ascend_hw.buf<16x16xf16, l1, nz>
    ascend_hw.nd2nz %b[%c0, %c0] -> %b1[%c0, %c0] {rows = 16, cols = 16} : memref<16x16xf16> -> !ascend_hw.buf<16x16xf16, l1, nz>
    ascend_hw.set_flag mte2 -> mte1, 0
    ascend_hw.wait_flag mte2 -> mte1, 0
    ascend_hw.load_l0 %a1[%c0, %c0] -> %a0[%c0, %c0] {rows = 16, cols = 16} : !ascend_hw.buf<16x16xf16, l1, nz> -> !ascend_hw.buf<16x16xf16, l0a, nz>
    ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 16, cols = 16} : !ascend_hw.buf<16x16xf16, l1, nz> -> !ascend_hw.buf<16x16xf16, l0b, nz>
    ascend_hw.set_flag mte1 -> m, 0
    ascend_hw.wait_flag mte1 -> m, 0
    ascend_hw.mmad %a0, %b0 -> %acc {m = 16, n = 16, k = 16} : !ascend_hw.buf<16x16xf16, l0a, nz>, !ascend_hw.buf<16x16xf16, l0b, nz> -> !ascend_hw.buf<16x16xf32, l0c, nz>
    ascend_hw.set_flag m -> fix, 0
    ascend_hw.wait_flag m -> fix, 0
    ascend_hw.fixpipe %acc[%c0, %c0] -> %c[%c0, %c0] {rows = 16, cols = 16} : !ascend_hw.buf<16x16xf32, l0c, nz> -> memref<16x16xbf16>
    """
    params = "%a: memref<16x16xf16>, %b: memref<16x16xf16>, %c: memref<16x16xbf16>"
    run_hw_function(parse(dma_kernel(body, params)), "k", [a, b, c], TARGET)
    expected = np.array(
        [
            cast_model(v, "f32", "bf16", "rint")
            for v in a.astype(np.float32).reshape(-1)
        ],
        np.uint16,
    ).reshape(16, 16)
    np.testing.assert_array_equal(c, expected)


# --------------------------------------------------------------------------------------
# Buffers, cores, errors
# --------------------------------------------------------------------------------------


def test_dynamic_subview_and_block_idx() -> None:
    """Each core writes its block_idx-th row through a dynamic subview; the report
    counts one alloc per core."""
    x = np.arange(4 * 64, dtype=np.float32).reshape(4, 64)
    y = np.zeros((4, 64), np.float32)
    body = """
    %core = ascend_hw.block_idx
    %n = ascend_hw.block_dim
    %all = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<4x64xf32, ub>
    %row = ascend_hw.subview %all[%core, %c0] : !ascend_hw.buf<4x64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
    ascend_hw.dma_load %x[%core, %c0] -> %row {bursts = 1, burst_bytes = 256} : memref<4x64xf32> -> !ascend_hw.buf<64xf32, ub>
    ascend_hw.set_flag mte2 -> v, 0
    ascend_hw.wait_flag mte2 -> v, 0
    ascend_hw.vadds %row, %s -> %row : !ascend_hw.buf<64xf32, ub>, f32 -> !ascend_hw.buf<64xf32, ub>
    ascend_hw.set_flag v -> mte3, 0
    ascend_hw.wait_flag v -> mte3, 0
    ascend_hw.dma_store %row -> %y[%core, %c0] {bursts = 1, burst_bytes = 256} : !ascend_hw.buf<64xf32, ub> -> memref<4x64xf32>
    """
    params = "%x: memref<4x64xf32>, %y: memref<4x64xf32>, %s: f32"
    result = run_hw_function(
        parse(dma_kernel(body, params)), "k", [x, y, 0.5], TARGET, 3
    )
    np.testing.assert_array_equal(y[:3], x[:3] + 0.5)
    assert not y[3].any()
    assert result.report.block_dim == 3
    assert [c.memories["ub"].allocated_bytes for c in result.report.cores] == [1024] * 3


def test_declared_block_dim() -> None:
    text = dma_kernel("%i = ascend_hw.block_idx", "").replace(
        "func.func @k()", "func.func @k() attributes {ascend_hw.block_dim = 4 : i64}"
    )
    assert run_hw_function(parse(text), "k", [], TARGET).report.block_dim == 4
    assert run_hw_function(parse(text), "k", [], TARGET, 2).report.block_dim == 2


def test_missing_flag_is_a_race_naming_both_ops() -> None:
    rng = np.random.default_rng(15)
    bufs = [Buf(n, "f16", random_values(rng, "f16", 128)) for n in "ab"]
    text = vector_kernel(
        f"ascend_hw.vabs %a -> %b : {bufs[0].type} -> {bufs[1].type}", bufs
    ).replace(
        "  ascend_hw.set_flag mte2 -> v, 0\n  ascend_hw.wait_flag mte2 -> v, 0\n", ""
    )
    with pytest.raises(RaceError) as info:
        run_hw_function(parse(text), "k", [b.data for b in bufs], TARGET)
    error = info.value
    assert error.memory == "ub"
    assert error.first_loc == f"{FILE}:6:3"  # the dma_load of %a
    assert error.second_loc == f"{FILE}:8:3"  # vabs
    assert "'dma_load'" in error.message and "'vabs'" in error.message


def test_read_of_unwritten_buffer() -> None:
    text = dma_kernel(
        """
        %u = ascend_hw.alloc [0, 256) : !ascend_hw.buf<128xf16, ub>
        %v = ascend_hw.alloc [256, 512) : !ascend_hw.buf<128xf16, ub>
        ascend_hw.vexp %u -> %v : !ascend_hw.buf<128xf16, ub> -> !ascend_hw.buf<128xf16, ub>
        """,
        "",
    )
    with pytest.raises(UninitializedReadError) as info:
        run_hw_function(parse(text), "k", [], TARGET)
    assert info.value.locs == (f"{FILE}:6:3",)


def test_index_out_of_range_is_an_access_error_at_the_op() -> None:
    text = dma_kernel(
        """
        %u = ascend_hw.alloc [0, 256) : !ascend_hw.buf<128xf16, ub>
        ascend_hw.dma_load %x[%i] -> %u {bursts = 1, burst_bytes = 256} : memref<256xf16> -> !ascend_hw.buf<128xf16, ub>
        """,
        "%x: memref<256xf16>, %i: index",
    )
    module = parse(text)
    x = np.zeros(256, np.float16)
    with pytest.raises(AccessError, match=r"index \[300\] is outside memref") as info:
        run_hw_function(module, "k", [x, 300], TARGET)
    assert info.value.locs == (f"{FILE}:5:3",)
    # The window starts inside but runs past the memref's end (256 bytes from
    # element 200 of 256): refused at the instruction, naming it.
    with pytest.raises(
        AccessError,
        match=r"dma_load: the 256 bytes from index \[200\] run past the end of "
        r"memref 'x'",
    ):
        run_hw_function(module, "k", [x, 200], TARGET)


def test_dynamic_subview_outside_its_source() -> None:
    text = dma_kernel(
        """
        %u = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<4x128xf16, ub>
        %r = ascend_hw.subview %u[%i, %c0] : !ascend_hw.buf<4x128xf16, ub> -> !ascend_hw.buf<2x128xf16, ub>
        """,
        "%i: index",
    )
    module = parse(text)
    run_hw_function(module, "k", [2], TARGET)
    with pytest.raises(
        AccessError, match=r"subview bytes \[768, 1280\) run past"
    ) as info:
        run_hw_function(module, "k", [3], TARGET)
    assert info.value.locs == (f"{FILE}:5:3",)


def test_double_set_is_an_event_error() -> None:
    text = dma_kernel(
        "ascend_hw.set_flag mte2 -> v, 3\nascend_hw.set_flag mte2 -> v, 3", ""
    )
    with pytest.raises(EventError, match="pending"):
        run_hw_function(parse(text), "k", [], TARGET)


@pytest.mark.parametrize(
    "args, message",
    [
        ([np.zeros(8, np.float16)], "takes 2 arguments, got 1"),
        ([np.zeros(9, np.float16), 1.0], r"memref<8xf16>: got an array of shape \[9\]"),
        ([np.zeros(8, np.float32), 1.0], "expected a float16 array, got float32"),
        ([[0.0] * 8, 1.0], "pass a numpy array"),
        ([np.zeros(8, np.float16), "x"], "f32: pass a number"),
    ],
)
def test_bad_arguments(args: list[object], message: str) -> None:
    module = parse(dma_kernel("", "%x: memref<8xf16>, %s: f32"))
    with pytest.raises(HwRunError, match=message) as info:
        run_hw_function(module, "k", args, TARGET)
    assert isinstance(info.value, SimError)


def test_unsupported_op_is_located() -> None:
    text = dma_kernel("%v = memref.load %m[%c0] : memref<4xf32>", "%m: memref<4xf32>")
    with pytest.raises(HwRunError, match="cannot execute 'memref.load'") as info:
        run_hw_function(parse(text), "k", [np.zeros(4, np.float32)], TARGET)
    assert info.value.locs == (f"{FILE}:4:3",)


def test_unsigned_index_arithmetic() -> None:
    """divui/remui/ceildivui/minui (missing from xDSL's arith interpreter) pick a row."""
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    y = np.zeros(16, np.float32)
    body = """
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %q = arith.divui %c7, %c3 : index
    %r = arith.remui %c7, %c3 : index
    %d = arith.ceildivui %c7, %c3 : index
    %s = arith.addi %q, %r : index
    %t = arith.addi %s, %d : index
    %row = arith.minui %t, %c7 : index
    %u = ascend_hw.alloc [0, 64) : !ascend_hw.buf<16xf32, ub>
    ascend_hw.dma_load %x[%row, %c0] -> %u {bursts = 1, burst_bytes = 64} : memref<8x16xf32> -> !ascend_hw.buf<16xf32, ub>
    ascend_hw.set_flag mte2 -> mte3, 0
    ascend_hw.wait_flag mte2 -> mte3, 0
    ascend_hw.dma_store %u -> %y[%c0] {bursts = 1, burst_bytes = 64} : !ascend_hw.buf<16xf32, ub> -> memref<16xf32>
    """
    params = "%x: memref<8x16xf32>, %y: memref<16xf32>"
    run_hw_function(parse(dma_kernel(body, params)), "k", [x, y], TARGET)
    np.testing.assert_array_equal(y, x[2 + 1 + 3])


def test_bf16_memref_takes_float32_values() -> None:
    """A bf16 GM memref accepts float32 arrays of bf16 values, written back."""
    x = np.array([1.0, -2.5, 3.0, 0.15625] * 16, np.float32)
    y = np.zeros(64, np.float32)
    body = """
    %u = ascend_hw.alloc [0, 128) : !ascend_hw.buf<64xbf16, ub>
    ascend_hw.dma_load %x[%c0] -> %u {bursts = 1, burst_bytes = 128} : memref<64xbf16> -> !ascend_hw.buf<64xbf16, ub>
    ascend_hw.set_flag mte2 -> mte3, 0
    ascend_hw.wait_flag mte2 -> mte3, 0
    ascend_hw.dma_store %u -> %y[%c0] {bursts = 1, burst_bytes = 128} : !ascend_hw.buf<64xbf16, ub> -> memref<64xbf16>
    """
    params = "%x: memref<64xbf16>, %y: memref<64xbf16>"
    result = run_hw_function(parse(dma_kernel(body, params)), "k", [x, y], TARGET)
    np.testing.assert_array_equal(y, x)
    assert result.outputs[1] is y


def test_every_op_has_an_interpreter_function() -> None:
    from pypto_mlir.dialects.ascend_hw import AscendHW
    from pypto_mlir.interp.ascend_hw import AscendHwFunctions

    registered = {op_type for op_type, _ in AscendHwFunctions._impls()}
    assert set(AscendHW.operations) == registered


def test_pipe_barrier_all_orders_pipes_and_a_pipe_barrier_does_not() -> None:
    rng = np.random.default_rng(16)
    bufs = [Buf(n, "f32", random_values(rng, "f32", 64)) for n in "ab"]
    flags = "  ascend_hw.set_flag mte2 -> v, 0\n  ascend_hw.wait_flag mte2 -> v, 0\n"
    kernel = vector_kernel(
        f"ascend_hw.vabs %a -> %b : {bufs[0].type} -> {bufs[1].type}", bufs
    )
    assert flags in kernel
    for barrier, error in (("all", None), ("mte2", RaceError), ("v", RaceError)):
        text = kernel.replace(flags, f"  ascend_hw.pipe_barrier {barrier}\n")
        arrays = [b.data.copy() for b in bufs]
        if error is None:
            result = run_hw_function(parse(text), "k", arrays, TARGET)
            np.testing.assert_array_equal(arrays[1], np.abs(bufs[0].data))
            load = max(s.end for s in result.report.slices if s.name == "dma_load")
            (vabs,) = [s for s in result.report.slices if s.name == "vabs"]
            assert vabs.start >= load
        else:
            with pytest.raises(error):
                run_hw_function(parse(text), "k", arrays, TARGET)


def test_cores_storing_the_same_gm_bytes_race() -> None:
    """Cores never synchronise: two cores storing one row is a race between them."""
    text = dma_kernel(
        """
        %u = ascend_hw.alloc [0, 256) : !ascend_hw.buf<64xf32, ub>
        ascend_hw.vdup %s -> %u : f32 -> !ascend_hw.buf<64xf32, ub>
        ascend_hw.set_flag v -> mte3, 0
        ascend_hw.wait_flag v -> mte3, 0
        ascend_hw.dma_store %u -> %y[%c0] {bursts = 1, burst_bytes = 256} : !ascend_hw.buf<64xf32, ub> -> memref<64xf32>
        """,
        "%y: memref<64xf32>, %s: f32",
    )
    module = parse(text)
    y = np.zeros(64, np.float32)
    run_hw_function(module, "k", [y, 2.0], TARGET, 1)
    np.testing.assert_array_equal(y, 2.0)
    with pytest.raises(RaceError, match="between cores 0 and 1"):
        run_hw_function(module, "k", [y, 3.0], TARGET, 2)


def test_vgather_in_place_sees_earlier_repeats() -> None:
    """Gathering into the source: repeat 1 reads what repeat 0 wrote."""
    rng = np.random.default_rng(17)
    a = Buf("a", "f32", random_values(rng, "f32", 128))
    lanes = np.arange(64)
    offsets = np.concatenate(((lanes + 1) % 64, lanes)) * 4
    o = Buf("o", "i32", offsets.astype(np.int32))
    body = f"ascend_hw.vgather %a, %o -> %a {{repeat = 2}} : {a.type}, {o.type} -> {a.type}"
    out, _ = run_vector(body, [a, o])
    expected = a.data.copy()
    expected[:64] = a.data[(lanes + 1) % 64]
    expected[64:] = expected[:64]
    np.testing.assert_array_equal(out["a"], expected)
