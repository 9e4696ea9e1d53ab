"""The facts of every elementwise and reduction op, one definition per op.

An op of these families exists at several levels (`tv.exp`, `tile.exp`, the
`vexp` it lowers to) and is known to several layers: the interpreters compute it,
`error_bound` carries errors through it, `roofline` counts its vector steps, the
frontend spells it `pto.exp`. Each of those layers reads the op's entry here
instead of keeping its own table, so that adding an op is adding an entry (and
its dialect classes), and a layer that lacks the op fails a test naming both
(test/test_op_facts.py) instead of falling back to a default.

This module is a leaf: numpy only, no IR, so dialects, interpreters, passes and
the frontend can all import it. An op is named by its suffix: `exp` is `tv.exp`
and `tile.exp`.

Kernels compute on values in the compute type (float32 for float tensors, the
integer type itself for integers); the interpreter rounds the result once to
the element type (docs/tensor_view.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Array = np.ndarray
Bound = np.ndarray | float

F32_EPSILON = float(np.finfo(np.float32).eps)
"""One ulp at 1.0 of f32: the unit of the approximation errors below."""


# --------------------------------------------------------------------------------------
# The entries
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnaryFacts:
    """An elementwise op on one tensor (`tv.UnaryOp`, `tile.TileUnaryOp`)."""

    name: str
    """The op's suffix: `exp` is `tv.exp` and `tile.exp`."""
    kernel: Callable[[Array], Array]
    """The reference: the op on values in the compute type."""
    derivative: Callable[[Array, Array], Bound]
    """`|f'(x)|` at the operand `x` with result `v` (float64): how the operand's
    error carries into the result (pypto_mlir.error_bound)."""
    vector_steps: tuple[str, ...]
    """The vector instructions the op takes on the chip, one pass over the tile
    each, named by their target cost keys (`vector.cycles_per_repeat`): the
    roofline's steps, the shortest sequence tile-to-hw (or an expansion) emits."""
    spelling: str
    """How a kernel author writes it (the frontend), e.g. `pto.exp(x)`."""
    frontend: str | None = None
    """The `pto.<function>` the frontend defines for it (None: an operator)."""
    doc: str = ""
    """The docstring of the frontend function."""
    numpy_names: tuple[str, ...] = ()
    """numpy functions that compute the same; applied to a traced tensor they
    raise an error that names `spelling`."""
    exact: bool = False
    """The result is one of the operand's values (or its negation): no rounding."""
    rounding_offset: float = 0.0
    """Added to `|v|` for the magnitude the last step rounds (tanh's `2/(1 + e^-2x)
    - 1` rounds a value of `|v| + 1`)."""
    approximation: Callable[[Array], Bound] | None = None
    """The absolute error of the lowering's approximation at `x` (float64), added
    to the bound, for ops the chip computes by a polynomial instead of an
    instruction whose result is rounded once."""
    expanded: bool = False
    """The chip has no instruction for it: `tv-expand-math` rewrites the tv op
    into other tv ops before tiling, so no tile-to-hw lowering exists."""


@dataclass(frozen=True)
class BinaryFacts:
    """An elementwise op on two operands with broadcasting (`tv.BinaryOp`)."""

    name: str
    kernel: Callable[[Array, Array], Array]
    carry: Callable[[Bound, Bound, Array, Array], Bound]
    """The operands' errors `ea`, `eb` through the op, at operand magnitudes
    `a`, `b` (pypto_mlir.error_bound)."""
    vector_steps: tuple[str, ...]
    scalar_steps: tuple[str, ...]
    """The steps with a scalar operand (`x / s` is `x * (1/s)`)."""
    spelling: str
    frontend: str | None = None
    doc: str = ""
    numpy_names: tuple[str, ...] = ()
    exact: bool = False


@dataclass(frozen=True)
class ReduceFacts:
    """A reduction over axes (`tv.ReduceOp`, `tile.TileReduceOp`)."""

    name: str
    kernel: Callable[[Array, tuple[int, ...], bool], Array]
    """The reduction of `(values, axes, keepdims)`."""
    accumulates: bool
    """A sum: it computes in f32 (the kernel sees compute-type values, narrow
    floats are cast to f32 and back on the chip, and the accumulation adds an
    f32 rounding per term to the bound); otherwise it picks one of its operand's
    values (exact) and sees the stored values."""
    vector_steps: tuple[str, ...]
    spelling: str
    numpy_names: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------
# Kernels that are not one numpy function
# --------------------------------------------------------------------------------------

GELU_SCALE = np.float32(2.0 * np.sqrt(2.0 / np.pi))
"""`2 sqrt(2/pi)` in f32: gelu is `x * sigmoid(GELU_SCALE (x + GELU_CUBIC x^3))`."""
GELU_CUBIC = np.float32(0.044715)


def sigmoid(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


def gelu_tanh(x: Array) -> Array:
    """The tanh approximation, as `x * sigmoid(2 y)` (= `0.5 x (1 + tanh(y))`):
    the sum `1 + tanh(y)` cancels catastrophically in f32 for negative x."""
    return x / (1.0 + np.exp(-GELU_SCALE * (x + GELU_CUBIC * x**3)))


_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x: Array) -> Array:
    """erf in float64 (Python's `math.erf`, correctly rounded to a few ulps of
    f64), so the f32 result is the nearest f32 of the true value."""
    values = np.asarray(_ERF(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    return values.astype(np.asarray(x).dtype)


def _trig_approximation(x: Array) -> Bound:
    """The absolute error of tv-expand-math's sin/cos in f32 (measured over
    |x| <= 1e4, with margin): the polynomials are accurate to 2 ulps of f32; the
    range reduction's Cody-Waite split of pi/2 into three f32 parts leaves an
    error of about |x| * 2^-47."""
    return 8.0 * F32_EPSILON + np.abs(x) * 2.0**-44


def _erf_approximation(x: Array) -> Bound:
    """The absolute error of tv-expand-math's erf in f32: Eigen's rational
    approximation is accurate to a few ulps of f32 over the clamped range."""
    return 8.0 * F32_EPSILON


# --------------------------------------------------------------------------------------
# The tables
# --------------------------------------------------------------------------------------


def _one(x: Array, v: Array) -> float:
    return 1.0


def _unary_table() -> dict[str, UnaryFacts]:
    entries = (
        UnaryFacts(
            "neg",
            np.negative,
            _one,
            ("muls",),
            "-x (or pto.neg(x))",
            frontend="neg",
            doc="-x; also for integer tensors.",
            numpy_names=("negative",),
            exact=True,
        ),
        UnaryFacts(
            "abs",
            np.abs,
            _one,
            ("abs",),
            "pto.abs(x)",
            frontend="abs",
            doc="|x|; also for integer tensors.",
            numpy_names=("absolute", "fabs"),
            exact=True,
        ),
        UnaryFacts(
            "exp",
            np.exp,
            lambda x, v: np.abs(v),
            ("exp",),
            "pto.exp(x)",
            frontend="exp",
            doc="e**x.",
            numpy_names=("exp",),
        ),
        UnaryFacts(
            "log",
            np.log,
            lambda x, v: 1.0 / np.abs(x),
            ("ln",),
            "pto.log(x)",
            frontend="log",
            doc="Natural logarithm (NaN for negative values).",
            numpy_names=("log",),
        ),
        UnaryFacts(
            "sqrt",
            np.sqrt,
            lambda x, v: 0.5 / np.abs(v),
            ("sqrt",),
            "pto.sqrt(x)",
            frontend="sqrt",
            doc="Square root (NaN for negative values).",
            numpy_names=("sqrt",),
        ),
        UnaryFacts(
            "rsqrt",
            lambda x: 1.0 / np.sqrt(x),
            lambda x, v: 0.5 * np.abs(v) / np.abs(x),
            ("rsqrt",),
            "pto.rsqrt(x)",
            frontend="rsqrt",
            doc="1 / sqrt(x).",
        ),
        UnaryFacts(
            "reciprocal",
            lambda x: 1.0 / x,
            lambda x, v: v * v,
            ("reciprocal",),
            "pto.reciprocal(x)",
            frontend="reciprocal",
            doc="1 / x.",
            numpy_names=("reciprocal",),
        ),
        UnaryFacts(
            "relu",
            lambda x: np.maximum(x, np.zeros((), x.dtype)),
            _one,
            ("relu",),
            "pto.relu(x)",
            frontend="relu",
            doc="max(x, 0); also for integer tensors.",
            exact=True,
        ),
        UnaryFacts(
            "sigmoid",
            sigmoid,
            lambda x, v: np.abs(v * (1.0 - v)),
            ("muls", "exp", "adds", "reciprocal"),
            "pto.sigmoid(x)",
            frontend="sigmoid",
            doc="1 / (1 + exp(-x)).",
        ),
        UnaryFacts(
            "tanh",
            np.tanh,
            lambda x, v: np.abs(1.0 - v * v),
            ("muls", "exp", "adds", "reciprocal", "muls", "adds"),
            "pto.tanh(x)",
            frontend="tanh",
            doc="Hyperbolic tangent.",
            numpy_names=("tanh",),
            rounding_offset=1.0,
        ),
        UnaryFacts(
            "gelu",
            gelu_tanh,
            lambda x, v: 1.13,  # max |gelu'| ~ 1.129
            ("mul", "mul", "muls", "add", "muls", "exp", "adds", "div"),
            "pto.gelu(x)",
            frontend="gelu",
            doc="GELU, tanh approximation (see docs/tensor_view.md).",
        ),
        UnaryFacts(
            "silu",
            lambda x: x * sigmoid(x),
            lambda x, v: 1.1,  # max |silu'| ~ 1.0998
            ("muls", "exp", "adds", "div"),
            "pto.silu(x)",
            frontend="silu",
            doc="x * sigmoid(x) (swish) as one op, rounded once.",
        ),
    )
    return {entry.name: entry for entry in entries}


def _binary_table() -> dict[str, BinaryFacts]:
    entries = (
        BinaryFacts(
            "add",
            np.add,
            lambda ea, eb, a, b: ea + eb,
            ("add",),
            ("adds",),
            "x + y",
            numpy_names=("add",),
        ),
        BinaryFacts(
            "sub",
            np.subtract,
            lambda ea, eb, a, b: ea + eb,
            ("sub",),
            ("adds",),
            "x - y",
            numpy_names=("subtract",),
        ),
        BinaryFacts(
            "mul",
            np.multiply,
            lambda ea, eb, a, b: ea * b + a * eb,
            ("mul",),
            ("muls",),
            "x * y",
            numpy_names=("multiply",),
        ),
        BinaryFacts(
            "div",
            np.divide,
            lambda ea, eb, a, b: ea / b + a * eb / (b * b),
            ("div",),
            ("muls",),
            "x / y",
            numpy_names=("divide", "true_divide"),
        ),
        BinaryFacts(
            "max",
            np.maximum,
            lambda ea, eb, a, b: np.maximum(ea, eb),
            ("max",),
            ("maxs",),
            "pto.maximum(x, y)",
            frontend="maximum",
            doc="Elementwise maximum with broadcasting; NaN propagates.",
            numpy_names=("maximum", "fmax"),
            exact=True,
        ),
        BinaryFacts(
            "min",
            np.minimum,
            lambda ea, eb, a, b: np.maximum(ea, eb),
            ("min",),
            ("mins",),
            "pto.minimum(x, y)",
            frontend="minimum",
            doc="Elementwise minimum with broadcasting; NaN propagates.",
            numpy_names=("minimum", "fmin"),
            exact=True,
        ),
    )
    return {entry.name: entry for entry in entries}


def _sum(values: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    return np.sum(values, axis=axes, keepdims=keepdims, dtype=values.dtype)


def _max(values: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    return np.max(values, axis=axes, keepdims=keepdims)


def _min(values: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    return np.min(values, axis=axes, keepdims=keepdims)


REDUCE: dict[str, ReduceFacts] = {
    entry.name: entry
    for entry in (
        ReduceFacts("reduce_sum", _sum, True, ("reduce_sum",), "x.sum(axis)", ("sum",)),
        ReduceFacts(
            "reduce_max", _max, False, ("reduce_max",), "x.max(axis)", ("max", "amax")
        ),
        ReduceFacts(
            "reduce_min", _min, False, ("reduce_min",), "x.min(axis)", ("min", "amin")
        ),
    )
}
"""The reductions, by op suffix."""

UNARY: dict[str, UnaryFacts] = _unary_table()
"""The elementwise unary ops, by op suffix."""

BINARY: dict[str, BinaryFacts] = _binary_table()
"""The elementwise binary ops, by op suffix."""


def numpy_spellings() -> dict[str, str]:
    """numpy function name -> how a kernel writes it, for every op here."""
    spellings: dict[str, str] = {}
    for table in (UNARY, BINARY, REDUCE):
        for entry in table.values():
            for numpy_name in entry.numpy_names:
                spellings[numpy_name] = entry.spelling
    return spellings
