"""A differential fuzzer of the whole lowering: random kernels written with the
Python frontend, lowered by `pypto-lower` for ascend910b and tiny, run on the
simulator and compared with the tv reference (`pypto_mlir.check` tolerances).

A kernel is a few statements over its tensor and scalar parameters, each drawn
from what the frontend accepts: unary and binary elementwise ops (operands of
the same shape, rows, columns, lower rank, rank 0, `pto.full` tensors, Python
constants and scalar parameters, on either side), casts between every pair of
dtypes, reductions (sum, max, min, mean over any axes, keepdims), softmax,
transposes with any permutation, views (integers, slices with start, stop and
step, negative indices, ellipsis) and matmuls (transposed operands, f16, bf16,
f32, i8, another result dtype), on shapes of 1 to 70 per dim. A kernel must
lower on both targets and agree with the reference; a refusal fails the test
unless it is a located diagnostic listed in `ALLOWED_REFUSALS` (none is).

The comparison uses the documented tolerances, which hold per op: they do not
cover an error that a later op amplifies (`sigmoid(x) - 0.5` cancels). The
generator therefore tracks, for every value, bounds of its magnitude, whether
it is a dyadic number whose sums are exact in its type (so reductions and
matmuls of it give bit-identical results in any order), and whether it is
*noisy*: computed by an op whose result depends on rounding order or
approximation (composite unary ops, softmax, inexact sums). A noisy value is
only followed by ops that keep its error relative to the output's largest
magnitude (neg, abs, scaling by a power of two, float casts, transposes).

Attention-shaped kernels (`attention`: heads, query and key tails, K stored
either way, the scale spelled three ways, an additive mask, `pto.softmax` or
the softmax written out) fuzz the flash-attention fusion, which must fuse them
on ascend910b (or refuse with its reason).

The suite checks the same kernels on every run: 30 hypothesis examples
(derandomized; small kernels, shrunk when one fails), 100 seeded random
programs (`PYPTO_FUZZ_SEEDS`, `PYPTO_FUZZ_SEED_BASE`), 24 seeded attention
kernels (`PYPTO_FUZZ_ATTENTION_SEEDS`, about 20 s) and 6 over 512 or 1024 keys
(`PYPTO_FUZZ_LONG_KEY_SEEDS`, about 30 s; two of them split their keys over
the cores). While hunting, draw new
ones and more: `PYPTO_FUZZ_RANDOM=1 PYPTO_FUZZ_EXAMPLES=2000 pytest -q
test/test_lowering_fuzz.py`, or `python test/test_lowering_fuzz.py 500 [SEED]`
(seeded programs, failures grouped by message, each with its kernel source).
"""

from __future__ import annotations

import linecache
import math
import os
import random
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func

from pypto_mlir.check import check_lowering
from pypto_mlir.diagnostics import DiagnosticError, diagnostic_handler
from pypto_mlir.frontend.dtypes import DTYPES
from pypto_mlir.pipelines import LowerPipeline

TARGETS = ("ascend910b", "tiny")
EXAMPLES = int(os.environ.get("PYPTO_FUZZ_EXAMPLES", "30"))
SEEDS = int(os.environ.get("PYPTO_FUZZ_SEEDS", "100"))
SEED_BASE = int(os.environ.get("PYPTO_FUZZ_SEED_BASE", "0"))
ATTENTION_SEEDS = int(os.environ.get("PYPTO_FUZZ_ATTENTION_SEEDS", "24"))
RANDOM = "PYPTO_FUZZ_RANDOM" in os.environ
"""Draw new kernels on every run (hunting); by default the examples are the
same on every run, so that the suite is reproducible."""

FLOATS = ("f16", "bf16", "f32")
INTEGERS = ("i8", "i16", "i32")
SIGNIFICAND = {"f16": 11, "bf16": 8, "f32": 24}
"""Bits of the significand: integers below 2**bits are exact."""
INT_RANGE = {"i8": 2**7, "i16": 2**15, "i32": 2**31}
INPUT_RANGE = {"i8": 60, "i16": 1000, "i32": 100000}
"""Integer inputs lie in [-r, r]; float inputs are multiples of 1/4 in [-4, 4]."""
FLOAT_LIMIT = {"f16": 500.0, "bf16": 1e4, "f32": 1e5}
"""Beyond this magnitude a float value is scaled down before it grows again."""
NUMPY = {d.name: d.numpy_dtype for d in DTYPES}
SIZES = (1, 2, 3, 5, 7, 8, 13, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 70)
MAX_SIZE = int(os.environ.get("PYPTO_FUZZ_MAX_SIZE", "70"))
MAX_ELEMENTS = int(os.environ.get("PYPTO_FUZZ_MAX_ELEMENTS", "4096"))
"""Per dim and per tensor (larger while hunting: `PYPTO_FUZZ_MAX_SIZE=300`)."""

ALLOWED_REFUSALS: tuple[str, ...] = ()
"""Regexes of diagnostics for what the hardware cannot do (none so far)."""

UNARY_FLOAT = (
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "relu",
    "sigmoid", "tanh", "gelu", "silu",
)  # fmt: skip
UNARY_INT = ("neg", "abs", "relu")
COMPOSITE = ("sigmoid", "tanh", "gelu", "silu")
BINARY = ("+", "-", "*", "/", "maximum", "minimum")


# --------------------------------------------------------------------------------------
# Choices: hypothesis draws or a plain random generator
# --------------------------------------------------------------------------------------


class Chooser:
    """The decisions a program is built from."""

    def __init__(
        self, integer: Callable[[int, int], int], choice: Callable[[Sequence[Any]], Any]
    ):
        self.integer = integer
        self.choice = choice

    def boolean(self, percent: int = 50) -> bool:
        return self.integer(0, 99) < percent

    def size(self) -> int:
        if self.boolean(70 if MAX_SIZE <= 70 else 40):
            return self.choice(SIZES)
        return self.integer(1, MAX_SIZE)

    @staticmethod
    def of_hypothesis(draw: st.DrawFn) -> Chooser:
        return Chooser(
            lambda lo, hi: draw(st.integers(lo, hi)),
            lambda items: draw(st.sampled_from(list(items))),
        )

    @staticmethod
    def of_random(rng: random.Random) -> Chooser:
        return Chooser(rng.randint, lambda items: rng.choice(list(items)))


# --------------------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A value of the program and what is known about it."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    low: float
    high: float
    frac: int | None
    """Fractional bits of a dyadic value (None: not known to be dyadic)."""
    noisy: bool = False

    @property
    def bound(self) -> float:
        return max(abs(self.low), abs(self.high))

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOATS

    def exact_sums(self, terms: int) -> bool:
        """Whether sums of `terms` of these values are exact in any order."""
        if not self.is_float:
            return True
        if self.frac is None or self.noisy:
            return False
        return self.bound * terms * 2.0**self.frac < 2.0 ** SIGNIFICAND[self.dtype]


@dataclass
class Program:
    """A kernel under construction: parameters, statements, values."""

    chooser: Chooser
    params: list[str] = field(default_factory=list[str])
    """`name: annotation` of each parameter."""
    scalars: dict[str, float | int] = field(default_factory=dict[str, float | int])
    tensors: dict[str, Value] = field(default_factory=dict[str, Value])
    lines: list[str] = field(default_factory=list[str])
    values: list[Value] = field(default_factory=list[Value])
    results: list[str] = field(default_factory=list[str])
    counter: int = 0
    expected_remark: str = ""
    """A remark the lowering for ascend910b gives (attention: fused or why not;
    empty: none expected)."""

    # Building -------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def tensor_param(self, shape: tuple[int, ...], dtype: str) -> Value:
        name = self.fresh("a")
        self.params.append(f"{name}: pto.Tensor[{shape!r}, pto.{dtype}]")
        if dtype in FLOATS:
            value = Value(name, shape, dtype, -4.0, 4.0, 2)
        else:
            r = INPUT_RANGE[dtype]
            value = Value(name, shape, dtype, -r, r, 0)
        self.tensors[name] = value
        self.values.append(value)
        return value

    def scalar_param(self, dtype: str, number: float | int) -> str:
        name = self.fresh("s")
        self.params.append(f"{name}: pto.{dtype}")
        self.scalars[name] = number
        return name

    def let(self, expression: str, value: Value) -> Value:
        name = self.fresh("t")
        self.lines.append(f"{name} = {expression}")
        value = replace(value, name=name)
        self.values.append(value)
        return value

    def source(self) -> str:
        body = "\n".join(f"    {line}" for line in self.lines)
        returned = ", ".join(self.results)
        return (
            "import pypto_mlir as pto\n\n\n"
            '@pto.kernel(backend="reference")\n'
            f"def kernel({', '.join(self.params)}):\n"
            f"{body}\n"
            f"    return {returned}\n"
        )

    def inputs(self, seed: int) -> list[Any]:
        """Arguments in parameter order: floats are multiples of 1/4 in [-4, 4],
        integers uniform in their input range."""
        rng = np.random.default_rng(seed)
        args: list[Any] = []
        for param in self.params:
            name = param.split(":")[0]
            if name in self.scalars:
                args.append(self.scalars[name])
                continue
            value = self.tensors[name]
            if value.is_float:
                data = np.asarray(rng.integers(-16, 17, size=value.shape) / 4.0)
                dtype = np.float16 if value.dtype == "f16" else np.float32
                args.append(data.astype(dtype))
            else:
                r = INPUT_RANGE[value.dtype]
                data = np.asarray(rng.integers(-r, r + 1, size=value.shape))
                args.append(data.astype(NUMPY[value.dtype]))
        return args


# --------------------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------------------


def _limit_float(program: Program, v: Value) -> Value:
    """Scale a large float value down by a power of two (exact) before it grows
    further (products of it would overflow the narrow types)."""
    if not v.is_float or v.bound <= FLOAT_LIMIT[v.dtype]:
        return v
    scale = 2.0 ** -math.ceil(math.log2(v.bound / 4.0))
    frac = None if v.frac is None else v.frac + round(-math.log2(scale))
    return program.let(
        f"{v.name} * {scale!r}",
        replace(v, low=v.low * scale, high=v.high * scale, frac=frac),
    )


def _positive(program: Program, v: Value, floor: float = 0.5) -> Value:
    """`abs(v) + floor`: a value bounded away from zero (for log, sqrt, 1/x)."""
    if v.low >= floor:
        return v
    frac = None if v.frac is None else max(v.frac, 1)
    return program.let(
        f"abs({v.name}) + {floor!r}",
        replace(v, low=floor, high=v.bound + floor, frac=frac),
    )


def _unary_bounds(op: str, v: Value) -> tuple[float, float, int | None]:
    """Bounds (and fractional bits) of a float unary op's result."""
    lo, hi = v.low, v.high
    if op == "neg":
        return -hi, -lo, v.frac
    if op == "abs":
        return 0.0, v.bound, v.frac
    if op == "relu":
        return max(lo, 0.0), max(hi, 0.0), v.frac
    if op == "exp":
        return math.exp(max(lo, -30.0)), math.exp(min(hi, 30.0)), None
    if op == "log":
        return math.log(max(lo, 1e-30)), math.log(max(hi, 1e-30)), None
    if op == "sqrt":
        return math.sqrt(max(lo, 0.0)), math.sqrt(max(hi, 0.0)), None
    if op == "rsqrt":
        return 1 / math.sqrt(max(hi, 1e-30)), 1 / math.sqrt(max(lo, 1e-30)), None
    if op == "reciprocal":
        return 1 / max(hi, 1e-30), 1 / max(lo, 1e-30), None
    if op == "sigmoid":
        return 0.0, 1.0, None
    if op == "tanh":
        return -1.0, 1.0, None
    return -0.3, max(hi, 0.0), None  # gelu, silu


def unary(program: Program, v: Value) -> Value:
    """A unary op (integers: neg, abs, relu); log, sqrt, rsqrt and 1/x of a
    value bounded away from zero, exp of at most 4."""
    c = program.chooser
    if not v.is_float:
        op = c.choice(UNARY_INT)
        low, high = {
            "neg": (-v.high, -v.low),
            "abs": (0.0, v.bound),
            "relu": (max(v.low, 0.0), max(v.high, 0.0)),
        }[op]
        if op == "neg" and v.low <= -INT_RANGE[v.dtype]:
            low, high = -INT_RANGE[v.dtype], INT_RANGE[v.dtype]
        spelled = {"neg": f"-{v.name}", "abs": f"abs({v.name})"}.get(
            op, f"pto.{op}({v.name})"
        )
        return program.let(spelled, replace(v, low=low, high=high))
    op = c.choice(UNARY_FLOAT)
    if c.boolean(10) and v.bound <= 8.0:  # x ** 2, x ** 3: products
        power = c.choice([2, 3])
        frac = None if v.frac is None else v.frac * power
        low, high = (0.0, v.bound**2) if power == 2 else (v.low**3, v.high**3)
        return program.let(
            f"{v.name} ** {power}", replace(v, low=low, high=high, frac=frac)
        )
    if op in ("log", "sqrt", "rsqrt", "reciprocal"):
        v = _positive(program, v)
    if op == "exp" and v.high > 4.0:
        v = program.let(
            f"pto.minimum({v.name}, 4.0)", replace(v, high=4.0, low=min(v.low, 4.0))
        )
    low, high, frac = _unary_bounds(op, v)
    spelled = {
        "neg": c.choice([f"-{v.name}", f"pto.neg({v.name})"]),
        "abs": c.choice([f"abs({v.name})", f"pto.abs({v.name})"]),
        "sqrt": c.choice([f"pto.sqrt({v.name})", f"{v.name} ** 0.5"]),
        "rsqrt": c.choice([f"pto.rsqrt({v.name})", f"{v.name} ** -0.5"]),
        "reciprocal": c.choice([f"pto.reciprocal({v.name})", f"{v.name} ** -1"]),
    }.get(op, f"pto.{op}({v.name})")
    noisy = v.noisy or op in COMPOSITE
    return program.let(spelled, replace(v, low=low, high=high, frac=frac, noisy=noisy))


def _interval(
    op: str, a: tuple[float, float], b: tuple[float, float]
) -> tuple[float, float]:
    """Interval arithmetic of a binary op."""
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    if op == "maximum":
        return max(a[0], b[0]), max(a[1], b[1])
    if op == "minimum":
        return min(a[0], b[0]), min(a[1], b[1])
    if op == "/":
        products = [a[i] / b[j] for i in (0, 1) for j in (0, 1)]
    else:
        products = [a[i] * b[j] for i in (0, 1) for j in (0, 1)]
    return min(products), max(products)


def _frac(op: str, a: int | None, b: int | None) -> int | None:
    """Fractional bits of the result of dyadic operands."""
    if a is None or b is None or op == "/":
        return None
    return a + b if op == "*" else max(a, b)


def _wrap(v: Value) -> Value:
    """Integer values that may wrap cover their whole range."""
    if v.is_float:
        return v
    r = INT_RANGE[v.dtype]
    if v.low < -r or v.high >= r:
        return replace(v, low=-r, high=r - 1)
    return v


def _broadcast_shape(program: Program, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts against `shape`: rows, columns, lower rank, rank 0."""
    c = program.chooser
    rank = len(shape)
    kind = c.choice(["same", "rows", "columns", "lower", "scalar", "ones", "mixed"])
    if kind == "same" or rank == 0:
        return shape
    if kind == "rows":
        return (*shape[:-1], 1)
    if kind == "columns":
        return (shape[-1],) if c.boolean() else (*([1] * (rank - 1)), shape[-1])
    if kind == "lower":
        return shape[c.integer(1, rank) :]
    if kind == "scalar":
        return ()
    if kind == "ones":
        return (1,) * c.integer(1, rank)
    return tuple(d if c.boolean() else 1 for d in shape)


def _operand(program: Program, v: Value, op: str) -> tuple[str, Value]:
    """The other operand of a binary op with `v`: its spelling and what is known."""
    c = program.chooser
    kind = c.choice(["tensor", "tensor", "constant", "scalar", "full", "pool"])
    if kind == "pool":
        pool = [
            w
            for w in program.values
            if w.dtype == v.dtype
            and not w.noisy
            and w.name != v.name
            and _broadcasts(w.shape, v.shape)
        ]
        if pool:
            w = c.choice(pool)
            return w.name, w
        kind = "tensor"
    if kind == "tensor":
        w = program.tensor_param(_broadcast_shape(program, v.shape), v.dtype)
        return w.name, w
    if v.is_float:
        number = c.choice([0.5, 2.0, -1.5, 3.0, 0.25, -0.75, 1.0, 0.0, 0.1])
        if op == "/" and number == 0.0:
            number = 2.0
        frac = None if number == 0.1 else 2
    else:
        number = c.choice([0, 1, -1, 2, 3, -7, 100])
        frac = 0
        if v.dtype == "i8":
            number = max(min(number, 127), -128)
    w = Value("", (), v.dtype, number, number, frac)
    if kind == "constant":
        return repr(number), w
    if kind == "scalar":
        dtype = c.choice(FLOATS) if v.is_float else v.dtype
        if dtype == "bf16" or (dtype == "f16" and v.dtype != "f16"):
            # a value the scalar's own (narrower) type holds exactly
            number = float(c.choice([0.5, 2.0, -1.5, 0.25]))
            w = replace(w, low=number, high=number, frac=2)
        return program.scalar_param(dtype, number), w
    shape = _broadcast_shape(program, v.shape)
    spelled = f"pto.full({shape!r}, {number!r}, pto.{v.dtype})"
    if number in (0, 1) and c.boolean():
        function = "pto.zeros" if number == 0 else "pto.ones"
        spelled = f"{function}({shape!r}, pto.{v.dtype})"
    return spelled, replace(w, shape=shape)


def _broadcasts(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    if len(small) > len(big):
        return False
    return all(
        s in (1, b) for s, b in zip(reversed(small), reversed(big), strict=False)
    )


def binary(program: Program, v: Value) -> Value:
    """`v op w` or `w op v` with another operand of any broadcasting kind."""
    c = program.chooser
    ops = BINARY if v.is_float else tuple(op for op in BINARY if op != "/")
    op = c.choice(ops)
    v = _limit_float(program, v)
    spelled, w = _operand(program, v, op)
    if op == "/" and w.low <= 0.0 <= w.high and w.name:
        # a tensor divisor (constants and scalars are nonzero by construction)
        w = _positive(program, w)
        spelled = w.name
    if op == "*" and v.is_float and w.bound > FLOAT_LIMIT[v.dtype] / max(v.bound, 1.0):
        op = "+"
    shape = tuple(np.broadcast_shapes(v.shape, w.shape)) if w.shape else v.shape
    reflected = c.boolean(30)
    if reflected and op == "/" and v.low <= 0.0 <= v.high:
        v = _positive(program, v)  # v is the divisor
    lhs, rhs = (spelled, v.name) if reflected else (v.name, spelled)
    a, b = (
        ((w.low, w.high), (v.low, v.high))
        if reflected
        else ((v.low, v.high), (w.low, w.high))
    )
    low, high = _interval(op, a, b)
    if op in ("maximum", "minimum"):
        expression = f"pto.{op}({lhs}, {rhs})"
    else:
        expression = f"{lhs} {op} {rhs}"
    result = replace(
        v,
        shape=shape,
        low=low,
        high=high,
        frac=_frac(op, v.frac, w.frac),
        noisy=v.noisy or w.noisy,
    )
    return program.let(expression, _wrap(result))


def cast(program: Program, v: Value) -> Value:
    """A cast to another dtype (`.astype` or `pto.cast`)."""
    c = program.chooser
    dtype = c.choice([d for d in (*FLOATS, *INTEGERS) if d != v.dtype])
    spelled = c.choice(
        [f"{v.name}.astype(pto.{dtype})", f"pto.cast({v.name}, pto.{dtype})"]
    )
    low, high, frac = v.low, v.high, v.frac
    if dtype in INTEGERS:
        r = INT_RANGE[dtype]
        if v.is_float:
            low, high = max(math.trunc(low), -r), min(math.trunc(high), r - 1)
            frac = 0
        result = _wrap(replace(v, dtype=dtype, low=low, high=high, frac=0))
        return program.let(spelled, result)
    if v.frac is not None and v.bound * 2.0**v.frac >= 2.0 ** SIGNIFICAND[dtype]:
        frac = None  # rounded
    return program.let(spelled, replace(v, dtype=dtype, frac=frac))


def reduction(program: Program, v: Value) -> Value:
    """sum, max, min or mean over one axis, several, or all, keepdims or not;
    a sum of values that are not exact in any order is noisy."""
    c = program.chooser
    rank = len(v.shape)
    kinds = ["sum", "max", "min"] + (["mean"] if v.is_float else [])
    kind = c.choice(kinds)
    choice = c.integer(0, 3)
    if choice == 0:
        axes: list[int] = list(range(rank))
        axis_text = ""
    elif choice == 1 or rank == 1:
        axis = c.integer(-rank, rank - 1)
        axes = [axis % rank]
        axis_text = f"axis={axis}"
    else:
        axes = sorted({c.integer(0, rank - 1) for _ in range(c.integer(1, rank))})
        axis_text = f"axis={tuple(axes)!r}"
    keepdims = c.boolean()
    args = ", ".join(a for a in (axis_text, "keepdims=True" if keepdims else "") if a)
    if choice == 3 and not keepdims:
        args = "axis=None"
        axes = list(range(rank))
    terms = math.prod(v.shape[a] for a in axes)
    shape = tuple(
        1 if d in axes else n
        for d, n in enumerate(v.shape)
        if keepdims or d not in axes
    )
    low, high, frac, noisy = v.low, v.high, v.frac, v.noisy
    if kind in ("sum", "mean"):
        noisy = noisy or not v.exact_sums(terms)
        low, high = low * terms if low < 0 else low, high * terms if high > 0 else high
        if kind == "mean":
            low, high, frac = v.low, v.high, None
    result = _wrap(replace(v, shape=shape, low=low, high=high, frac=frac, noisy=noisy))
    return program.let(f"{v.name}.{kind}({args})", result)


def softmax(program: Program, v: Value) -> Value:
    """Softmax along an axis (noisy: exp and a sum)."""
    c = program.chooser
    rank = len(v.shape)
    axis = c.integer(-rank, rank - 1)
    spelled = (
        f"pto.softmax({v.name})"
        if axis == -1 and c.boolean()
        else (f"pto.softmax({v.name}, axis={axis})")
    )
    return program.let(spelled, replace(v, low=0.0, high=1.0, frac=None, noisy=True))


def transpose(program: Program, v: Value) -> Value:
    """`.T` or `.transpose` with a random permutation."""
    c = program.chooser
    rank = len(v.shape)
    permutation = list(range(rank))
    for i in range(rank - 1, 0, -1):  # Fisher-Yates from the chooser
        j = c.integer(0, i)
        permutation[i], permutation[j] = permutation[j], permutation[i]
    shape = tuple(v.shape[p] for p in permutation)
    spelling = c.integer(0, 2)
    if spelling == 0 or rank < 2:
        permutation = list(reversed(range(rank)))
        shape = tuple(reversed(v.shape))
        spelled = f"{v.name}.T"
    elif spelling == 1:
        spelled = f"{v.name}.transpose({', '.join(map(str, permutation))})"
    else:
        spelled = f"{v.name}.transpose({tuple(permutation)!r})"
    return program.let(spelled, replace(v, shape=shape))


def view(program: Program, v: Value) -> Value:
    """`v[key]`: per dim an integer (negative too), `:` or a slice with a start,
    stop and step; with an ellipsis the key indexes only the trailing dims."""
    c = program.chooser
    rank = len(v.shape)
    ellipsis = rank > 1 and c.boolean(10)
    first = c.integer(1, rank - 1) if ellipsis else 0
    items: list[str] = []
    shape: list[int] = list(v.shape[:first])
    for extent in v.shape[first:]:
        kind = c.integer(0, 9)
        if kind == 0:
            index = c.integer(-extent, extent - 1)
            items.append(str(index))
            continue
        if kind == 1:
            items.append(":")
            shape.append(extent)
            continue
        start = c.integer(0, extent - 1)
        step = c.choice([1, 1, 2, 3, 4, 7])
        stop = c.integer(start + 1, extent)
        size = len(range(start, stop, step))
        start_text = str(start - extent) if c.boolean(25) else str(start)
        stop_text = "" if stop == extent and c.boolean() else str(stop)
        if c.boolean(20) and start == 0:
            start_text = ""
        step_text = "" if step == 1 else f":{step}"
        items.append(f"{start_text}:{stop_text}{step_text}")
        shape.append(size)
    if not ellipsis:
        while items and items[-1] == ":" and c.boolean():
            items.pop()
    key = ", ".join(items) or ":"
    if ellipsis:
        key = f"..., {key}"
    return program.let(f"{v.name}[{key}]", replace(v, shape=tuple(shape)))


def matmul(program: Program, v: Value) -> Value:
    """`v @ b` of a new parameter, maybe with transposed operands (stored as
    such) and another result dtype; exact when the f32 sums of dyadic values
    are."""
    c = program.chooser
    transpose_a = c.boolean(25)
    m, k = (v.shape[-1], v.shape[-2]) if transpose_a else (v.shape[-2], v.shape[-1])
    n = c.size()
    transpose_b = c.boolean(30)
    batch = v.shape[:-2]
    b_shape = (*batch, n, k) if transpose_b else (*batch, k, n)
    b = program.tensor_param(b_shape, v.dtype)
    out = None
    if v.dtype in FLOATS and c.boolean(30):
        out = c.choice(FLOATS)
    if transpose_a or transpose_b or out is not None or c.boolean(30):
        options = [f"transpose_a={transpose_a}"] if transpose_a else []
        options += [f"transpose_b={transpose_b}"] if transpose_b else []
        options += [f"out_dtype=pto.{out}"] if out else []
        spelled = f"pto.matmul({', '.join([v.name, b.name, *options])})"
    else:
        spelled = f"{v.name} @ {b.name}"
    dtype = out or ("i32" if v.dtype == "i8" else v.dtype)
    bound = v.bound * b.bound * k
    exact = v.dtype == "i8" or (
        v.frac is not None and not v.noisy and bound * 2.0 ** (v.frac + 2) < 2.0**24
    )
    frac = None if not exact or v.frac is None else v.frac + 2
    if (
        frac is not None
        and dtype in FLOATS
        and bound * 2.0**frac >= 2.0 ** SIGNIFICAND[dtype]
    ):
        frac = None
    result = Value("", (*batch, m, n), dtype, -bound, bound, frac, noisy=not exact)
    return program.let(spelled, _wrap(result))


def _safe_step(program: Program, v: Value) -> Value:
    """An op that keeps a noisy value's error relative to its largest magnitude."""
    c = program.chooser
    kind = c.integer(0, 4)
    if kind == 0:
        return program.let(f"-{v.name}", replace(v, low=-v.high, high=-v.low))
    if kind == 1:
        return program.let(f"abs({v.name})", replace(v, low=0.0, high=v.bound))
    if kind == 2:
        return program.let(
            f"{v.name} * 2.0", replace(v, low=2 * v.low, high=2 * v.high)
        )
    if kind == 3 and len(v.shape) >= 2:
        return transpose(program, v)
    dtype = c.choice([d for d in FLOATS if d != v.dtype])
    return program.let(f"{v.name}.astype(pto.{dtype})", replace(v, dtype=dtype))


STEPS: dict[str, Callable[[Program, Value], Value]] = {
    "unary": unary,
    "binary": binary,
    "cast": cast,
    "reduction": reduction,
    "softmax": softmax,
    "transpose": transpose,
    "view": view,
    "matmul": matmul,
}


def _applicable(v: Value) -> list[str]:
    steps = ["unary", "binary", "binary", "cast", "transpose", "view"]
    if v.shape:
        steps += ["reduction"]
    if v.shape and v.is_float:
        steps += ["softmax"]
    if len(v.shape) >= 2 and v.dtype in ("f16", "bf16", "f32", "i8"):
        steps += ["matmul", "matmul"]
    if not v.shape:
        steps = [s for s in steps if s not in ("transpose", "view")]
    return steps


def _shape(c: Chooser) -> tuple[int, ...]:
    rank = c.choice([1, 2, 2, 2, 3])
    while True:
        shape = tuple(c.size() for _ in range(rank))
        if math.prod(shape) <= MAX_ELEMENTS:
            return shape
        rank = max(rank - 1, 1) if c.boolean() else rank


def generate(c: Chooser) -> Program:
    """A random kernel: one to four steps from a tensor parameter (and sometimes a
    second chain), returning one or two values."""
    program = Program(c)
    dtype = c.choice(["f16", "f16", "f32", "f32", "bf16", "i8", "i16", "i32"])
    v = program.tensor_param(_shape(c), dtype)
    if c.boolean(10):
        fill = c.choice([0.5, -2.0, 3.0]) if v.is_float else c.choice([0, 5, -3])
        v = program.let(
            f"pto.full({v.shape!r}, {fill!r}, pto.{dtype})",
            replace(v, low=fill, high=fill),
        )
    for _ in range(c.integer(1, 4)):
        if v.noisy:
            v = _safe_step(program, v)
            continue
        step = c.choice(_applicable(v))
        if math.prod(v.shape) > MAX_ELEMENTS and step == "matmul":
            step = "unary"
        v = STEPS[step](program, v)
    program.results.append(v.name)
    if c.boolean(25):
        other = c.choice(program.values)
        program.results.append(other.name)
    return program


# --------------------------------------------------------------------------------------
# Attention-shaped programs (the flash-attention fusion of tv-to-tile)
# --------------------------------------------------------------------------------------

HEAD_DIMS = (16, 32, 48, 64, 24)
LONG_KEYS = (512, 1024)
"""Key lengths for few query blocks over many keys (the key split's case)."""
"""Head dims: multiples of the cube's 16 fuse; 24 is refused (three nests)."""


def _softmax_of(program: Program, x: Value) -> Value:
    """The softmax over the last dim, as `pto.softmax` or written out."""
    c = program.chooser
    noisy = replace(x, low=0.0, high=1.0, frac=None, noisy=True)
    if c.boolean():
        axis = c.choice(["axis=-1", f"axis={len(x.shape) - 1}"])
        return program.let(f"pto.softmax({x.name}, {axis})", noisy)
    e = program.let(
        f"pto.exp({x.name} - {x.name}.max(axis=-1, keepdims=True))",
        replace(noisy, high=1.0),
    )
    return program.let(f"{e.name} / {e.name}.sum(axis=-1, keepdims=True)", noisy)


def attention(c: Chooser, long_keys: bool = False) -> Program:
    """`softmax(q @ k.T * s [+ mask]) @ v` as a user writes it: heads or not,
    query and key lengths of any size (tails; `long_keys`: 512 or 1024 keys,
    queries more often whole blocks, which the estimate may split over
    cores), K stored transposed or not, the
    scale divided by sqrt(d) or multiplied by its inverse (a constant or a
    scalar parameter), an additive mask, either softmax spelling."""
    program = Program(c)
    heads = c.choice([0, 0, 1, 2, 3])
    batch: tuple[int, ...] = (heads,) if heads else ()
    if long_keys:
        rows, keys = c.choice(SIZES + (16, 32, 64)), c.choice(LONG_KEYS)
    else:
        rows, keys = c.choice(SIZES), c.choice(SIZES)
    d = c.choice(HEAD_DIMS)
    dv = c.choice([16, 32, d])
    q = program.tensor_param((*batch, rows, d), "f16")
    if c.boolean(30):
        k = program.tensor_param((*batch, d, keys), "f16")
        kt = k.name
    else:
        k = program.tensor_param((*batch, keys, d), "f16")
        kt = f"{k.name}.transpose(0, 2, 1)" if heads else f"{k.name}.T"
    v = program.tensor_param((*batch, keys, dv), "f16")
    bound = 16.0 * d
    scores = Value("", (*batch, rows, keys), "f16", -bound, bound, 2)
    scale = c.integer(0, 2)
    if scale == 0:
        x = program.let(f"{q.name} @ {kt} / {math.sqrt(d)!r}", scores)
    elif scale == 1:
        x = program.let(f"({q.name} @ {kt}) * {1 / math.sqrt(d)!r}", scores)
    else:
        factor = program.scalar_param("f16", 0.125)
        x = program.let(f"{q.name} @ {kt} * {factor}", scores)
    if c.boolean(40):
        mask = program.tensor_param(
            c.choice([(rows, keys), (*batch, rows, keys)]), "f16"
        )
        x = program.let(f"{x.name} + {mask.name}", x)
    p = _softmax_of(program, x)
    out = program.let(f"{p.name} @ {v.name}", replace(p, shape=(*batch, rows, dv)))
    program.results.append(out.name)
    # One key: canonicalize folds the reductions over it (the softmax is 1).
    if keys > 1:
        program.expected_remark = (
            "fused attention"
            if d % 16 == 0
            else f"attention not fused: head dims {d}, {dv} are not multiples of 16"
        )
    return program


# --------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------


@dataclass
class Failure:
    target: str
    message: str


def trace(program: Program, tag: str) -> Any:
    """The kernel of `program`, compiled from its source (kept for tracebacks)."""
    source = program.source()
    filename = f"<fuzz {tag}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["kernel"]


def _collect(found: list[str]) -> Callable[[Any], None]:
    """A diagnostic handler that appends each diagnostic's text to `found`."""
    return lambda diagnostic: found.append(str(diagnostic))


def check_program(
    program: Program,
    seed: int,
    tag: str = "kernel",
    remarks: dict[str, list[str]] | None = None,
) -> list[Failure]:
    """The failures of `program` on each target; `remarks` collects each
    target's diagnostics."""
    kernel = trace(program, tag)
    module = kernel.module()
    name = next(op.sym_name.data for op in module.walk() if isinstance(op, func.FuncOp))
    inputs = program.inputs(seed)
    failures: list[Failure] = []
    for target in TARGETS:
        found = [] if remarks is None else remarks.setdefault(target, [])
        try:
            with diagnostic_handler(_collect(found)):
                result = check_lowering(
                    module, name, inputs, "ascend_hw", LowerPipeline(target=target)
                )
        except DiagnosticError as error:
            text = str(error)
            located = re.match(rf"<fuzz {re.escape(tag)}>:(\d+):", text)
            first_statement = 6
            if (
                located
                and int(located.group(1)) >= first_statement
                and any(re.search(pattern, text) for pattern in ALLOWED_REFUSALS)
            ):
                continue
            failures.append(Failure(target, f"refused: {text}"))
            continue
        except Exception as error:  # a simulator error or a crash
            failures.append(
                Failure(
                    target,
                    f"{type(error).__name__}: {error}\n"
                    + "".join(traceback.format_exception(error)[-4:]),
                )
            )
            continue
        for comparison in result.comparisons:
            if not comparison.ok:
                failures.append(Failure(target, comparison.describe()))
    return failures


@st.composite
def programs(draw: st.DrawFn) -> Program:
    return generate(Chooser.of_hypothesis(draw))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not RANDOM,
    database=None if not RANDOM else settings.default.database,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(programs(), st.integers(0, 2**16))
def test_random_kernels_lower_and_match_the_reference(
    program: Program, seed: int
) -> None:
    failures = check_program(program, seed)
    assert not failures, (
        program.source()
        + "\n"
        + "\n".join(f"{f.target}: {f.message}" for f in failures)
    )


@pytest.mark.parametrize("seed", range(SEED_BASE, SEED_BASE + SEEDS))
def test_seeded_random_kernels_lower_and_match_the_reference(seed: int) -> None:
    """The same generator driven by a plain random generator: hypothesis explores
    around small kernels and shrinks what fails; seeds give varied ones (up to
    four steps, shapes up to 70) and a failure is reproduced by its seed
    (`python test/test_lowering_fuzz.py 1 SEED`)."""
    program = generate(Chooser.of_random(random.Random(seed)))
    failures = check_program(program, seed, f"seed {seed}")
    assert not failures, (
        program.source()
        + "\n"
        + "\n".join(f"{f.target}: {f.message}" for f in failures)
    )


@pytest.mark.parametrize("seed", range(SEED_BASE, SEED_BASE + ATTENTION_SEEDS))
def test_seeded_attention_kernels_fuse_and_match_the_reference(seed: int) -> None:
    """Attention-shaped kernels (`attention`) with the fusion on: on ascend910b
    the flash-attention nest is built whenever the head dims are whole
    fractals, and on both targets the result is within the reference's
    bounds (tiny's UB holds no key step: three nests)."""
    program = attention(Chooser.of_random(random.Random(seed)))
    remarks: dict[str, list[str]] = {}
    failures = check_program(program, seed, f"attention {seed}", remarks)
    assert not failures, (
        program.source()
        + "\n"
        + "\n".join(f"{f.target}: {f.message}" for f in failures)
    )
    expected = program.expected_remark
    assert not expected or any(expected in r for r in remarks["ascend910b"]), (
        program.source() + "\n".join(remarks["ascend910b"])
    )


LONG_KEY_SEEDS = int(os.environ.get("PYPTO_FUZZ_LONG_KEY_SEEDS", "6"))


@pytest.mark.parametrize("seed", range(SEED_BASE, SEED_BASE + LONG_KEY_SEEDS))
def test_seeded_long_key_attention_matches_the_reference(seed: int) -> None:
    """Attention kernels over 512 or 1024 keys (`attention(long_keys=True)`):
    where the query blocks are few and whole the estimate may split the keys
    over cores (attention-key-split); either way the result is within the
    reference's bounds on both targets."""
    program = attention(Chooser.of_random(random.Random(seed)), long_keys=True)
    remarks: dict[str, list[str]] = {}
    failures = check_program(program, seed, f"long-key attention {seed}", remarks)
    print(next((r for r in remarks["ascend910b"] if "fused attention" in r), ""))
    assert not failures, (
        program.source()
        + "\n"
        + "\n".join(f"{f.target}: {f.message}" for f in failures)
    )


# --------------------------------------------------------------------------------------
# The tiling model's bound of tile-to-hw's scratch
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_scratch_terms_bound_the_scratch_of_random_nests(target: str) -> None:
    """What the tiling model counts for an op's scratch (`Selector.scratch_terms`
    over its tiles' physical extents) is at least what tile-to-hw allocates for
    it (`Selector.scratch` with the static valid extents), for every tile op of
    random kernels: the model never lets a nest need more UB than it budgets."""
    from pypto_mlir.cli.source import default_context
    from pypto_mlir.dialects.tile import TileType
    from pypto_mlir.passes.hw_isel import Selector
    from pypto_mlir.passes.tile_peel_tails import TilePeelTailsPass
    from pypto_mlir.passes.tile_to_hw import _ValidExtents, tile_values  # pyright: ignore[reportPrivateUsage]
    from pypto_mlir.passes.tv_to_tile import TvToTilePass
    from pypto_mlir.targets import load_target

    checked = 0
    for seed in range(int(os.environ.get("PYPTO_SCRATCH_SEEDS", "40"))):
        program = generate(Chooser.of_random(random.Random(seed)))
        module = trace(program, f"scratch {seed}").module()
        ctx = default_context()
        with diagnostic_handler(lambda _: None):
            TvToTilePass(target=target).apply(ctx, module)
        TilePeelTailsPass().apply(ctx, module)
        for function in [op for op in module.walk() if isinstance(op, func.FuncOp)]:
            extents = _ValidExtents(function)
            valid = {v: extents.of(v) for v in tile_values(function)}
            selector = Selector(load_target(target), valid)
            if any(o.name == "tile.matmul" for o in function.walk()):
                continue  # matmul nests (epilogues included) have a model of their own
            for op in function.walk():
                tiles = [
                    v.type.get_shape()
                    for v in (*op.operands, *op.results)
                    if isinstance(v.type, TileType)
                ]
                if not tiles or op.dialect_name() != "tile":
                    continue
                rank = len(tiles[0])
                physical = [
                    max(t[d] for t in tiles if len(t) == rank) for d in range(rank)
                ]
                actual = sum(t.byte_size() for t in selector.scratch(op))

                def spans_of(value: Any) -> tuple[bool, ...]:
                    return tuple(extent > 1 for extent in value.type.get_shape())

                bound = 0
                for per, spans in selector.scratch_terms(op, spans_of):
                    size = per
                    for spanned, extent in zip(spans, physical, strict=True):
                        size *= extent if spanned else 1
                    bound += math.ceil(size)
                staged = 0
                if op.name == "tile.load" and selector._strided_load(op) is not None:  # pyright: ignore[reportPrivateUsage]
                    staged = sum(t.byte_size() for t in selector.scratch(op)[:1])
                assert actual <= bound + staged, (
                    program.source(),
                    op.name,
                    str(op)[:300],
                    actual,
                    bound,
                )
                checked += 1
    assert checked > 100


# --------------------------------------------------------------------------------------
# Hunting: python test/test_lowering_fuzz.py COUNT [SEED]
# --------------------------------------------------------------------------------------


def _signature(message: str) -> str:
    """A failure message without numbers and names: failures grouped by cause."""
    first = message.splitlines()[0]
    first = re.sub(r"<fuzz [^>]*>:\d+:\d+", "<loc>", first)
    return re.sub(r"\d+", "N", first)[:160]


def hunt(count: int, seed: int) -> None:
    groups: dict[str, list[tuple[int, str, str]]] = {}
    for i in range(count):
        rng = random.Random(seed + i)
        program = generate(Chooser.of_random(rng))
        try:
            failures = check_program(program, seed + i, str(seed + i))
        except Exception as error:  # a generator mistake
            failures = [Failure("trace", f"{type(error).__name__}: {error}")]
        for failure in failures:
            key = _signature(failure.message)
            groups.setdefault(key, []).append(
                (seed + i, failure.target, program.source() + failure.message)
            )
        print(f"\r{i + 1}/{count}: {len(groups)} kinds of failure", end="", flush=True)
    print()
    for key, cases in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        smallest = min(cases, key=lambda case: len(case[2]))
        print(f"=== {len(cases)}x {key}\n--- seed {smallest[0]} {smallest[1]}")
        print(smallest[2])


if __name__ == "__main__":
    hunt(
        int(sys.argv[1]) if len(sys.argv) > 1 else 100,
        int(sys.argv[2]) if len(sys.argv) > 2 else 0,
    )
