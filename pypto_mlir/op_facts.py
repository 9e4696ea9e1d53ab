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

from pypto_mlir import numerics

Array = np.ndarray
Bound = np.ndarray | float

F32_EPSILON = float(np.finfo(np.float32).eps)
"""One ulp at 1.0 of f32: the unit of the approximation errors below."""

F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).smallest_subnormal)
INF = math.inf


def carry_product(error: Bound, factor: Bound) -> Bound:
    """`error * factor`, 0 where the error is 0: an exact operand carries no
    error into the result, even where the factor is infinite (sqrt' at 0, an
    infinite operand of a product), instead of the NaN of `0 * inf`."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.asarray(error) == 0, 0.0, np.multiply(error, factor))


# --------------------------------------------------------------------------------------
# The entries
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One step of an expansion: `result = lhs <op> rhs` in f32, `op` a binary
    op's suffix (`mul`, `add`, `sub`, `max`, `min`, `div`), `lhs` a value's name
    (`x`: the op's operand, else an earlier step's result) and `rhs` a value's
    name or an f32 constant. The last step's result is the op's."""

    result: str
    op: str
    lhs: str
    rhs: str | float

    @property
    def instruction(self) -> str:
        """The vector instruction (target cost key) the step takes."""
        facts = BINARY[self.op]
        steps = (
            facts.scalar_steps if isinstance(self.rhs, float) else facts.vector_steps
        )
        (instruction,) = steps
        return instruction


def expansion_steps(expansion: tuple[Step, ...]) -> tuple[str, ...]:
    """The vector instructions of an expansion, in order."""
    return tuple(step.instruction for step in expansion)


def run_expansion(expansion: tuple[Step, ...], x: Array) -> Array:
    """An expansion on f32 values as the expanded tv ops compute it (each
    step rounds to f32): the expansion's numerics without compiling it."""
    values: dict[str, Array] = {"x": np.asarray(x, dtype=np.float32)}
    with np.errstate(all="ignore"):
        for step in expansion:
            rhs = (
                np.float32(step.rhs)
                if isinstance(step.rhs, float)
                else values[step.rhs]
            )
            values[step.result] = np.asarray(
                BINARY[step.op].kernel(values[step.lhs], rhs), dtype=np.float32
            )
    return values[expansion[-1].result]


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
    exponent: Callable[[Array], Array] | None = None
    """The `t` of the `e^t` the lowering computes in the element type (f32 for
    bf16) in a `1 / (1 + e^t)` form (sigmoid, silu, gelu): where `e^t`
    overflows that type the result flushes to 0, an error of `|v|` that the
    bound counts (f16 sigmoid(x) is 0 for x < -11.09, not up to 1.5e-5)."""
    expansion: tuple[Step, ...] | None = None
    """The chip has no instruction for it: `tv-expand-math` rewrites the tv op
    into these f32 steps (other tv ops) before tiling, so no tile-to-hw lowering
    exists; `vector_steps` are the steps' instructions."""
    perturbation: Callable[[Array, Bound], Bound] | None = None
    """A bound on `|f(x + d) - f(x)|` for every `|d| <= e`, at operand `x` and
    error `e` (float64), that holds where the derivative is infinite (sqrt at
    0: `sqrt(e)`); the carried error is the smaller of it and `|f'(x)| e`.
    None: the op has no point with a finite result and an infinite derivative."""
    singular_points: tuple[float, ...] | None = None
    """The operand values where the first-order rule `|f'(x)| E(x)` breaks
    down: an infinite or undefined derivative (sqrt, log at 0), a kink (relu at
    0), overflow or underflow (exp), saturation (tanh), the end of an
    approximation's range, infinities. test/test_error_bound_singular.py feeds
    the checker wrong outputs at each and expects a mismatch; () for none, None
    (undeclared) fails that test."""


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
    singular_points: tuple[tuple[float, float], ...] | None = None
    """Operand pairs where the first-order carry breaks down (division by 0,
    overflow, infinities; see `UnaryFacts.singular_points`)."""


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

GELU_SCALE = np.float32(numerics.GELU_SCALE)
GELU_CUBIC = np.float32(numerics.GELU_CUBIC)


def sigmoid(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


def gelu_tanh(x: Array) -> Array:
    """The tanh approximation, as `x * sigmoid(2 y)` (= `0.5 x (1 + tanh(y))`):
    the sum `1 + tanh(y)` cancels catastrophically in f32 for negative x."""
    return x / (1.0 + np.exp(-GELU_SCALE * (x + GELU_CUBIC * x**3)))


def _gated_slope(x: Array, g: Array, dg: Array | float) -> Array:
    """`|d/dx x sigmoid(g(x))| = |s + x s (1 - s) g'(x)|`, `s = sigmoid(g)`
    (silu: g = x; gelu's tanh form), with the second term 0 where the sigmoid
    saturates: not the global maximum (1.1), which would allow an error of the
    size of the operand's where the result is exactly 0 (gelu(-1e13))."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = sigmoid(g)
        slope = s * (1.0 - s)
        return np.abs(s + np.where(slope == 0, 0.0, x * slope * dg))


def gelu_derivative(x: Array, v: Array) -> Array:
    """|gelu'(x)| of the tanh form `x sigmoid(g)`, at most 1.129."""
    with np.errstate(over="ignore", invalid="ignore"):
        g = GELU_SCALE * (x + GELU_CUBIC * x**3)
        dg = GELU_SCALE * (1.0 + 3.0 * GELU_CUBIC * x * x)
    return _gated_slope(x, g, dg)


_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x: Array) -> Array:
    """erf in float64 (Python's `math.erf`, correctly rounded to a few ulps of
    f64), so the f32 result is the nearest f32 of the true value."""
    values = np.asarray(_ERF(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    return values.astype(np.asarray(x).dtype)


_ROUND = 1.5 * 2.0**23
"""`(v + _ROUND) - _ROUND` is `v` rounded to the nearest integer (ties to even)
in f32 for |v| < 2^22: the f32 addition's rounding is the rounding to integer
(tv.cast to an integer truncates, and the vector unit's adds rounds to nearest)."""

_PI_2_PARTS = (1.5703125, 4.837512969970703125e-4, 7.54978995489188216e-8)
"""pi/2 as C1 + C2 + C3 (Cody-Waite, Cephes' sinf split doubled): C1 has 8 and
C2 11 significant bits, so `k * C1` and `k * C2` are exact in f32 for
|k| < 2^13 (|x| < 12868), and `x - k C1` is exact (Sterbenz)."""


def _trig_expansion(quadrant_offset: float) -> tuple[Step, ...]:
    """sin (offset 0) or cos (offset 1: cos x = sin(x + pi/2)) in f32: k =
    round(x 2/pi); r = x - k pi/2 (Cody-Waite); the quadrant q = (k + offset)
    mod 4 selects sin r, cos r, -sin r, -cos r, with exact arithmetic on q
    (products by 0 and 1, sums with 0) in place of a select; Cephes' sinf and
    cosf polynomials on |r| <= pi/4."""
    c1, c2, c3 = _PI_2_PARTS
    steps = [
        Step("y", "mul", "x", float(np.float32(2.0 / np.pi))),
        Step("k0", "add", "y", _ROUND),
        Step("k", "add", "k0", -_ROUND),
        Step("t1", "mul", "k", c1),
        Step("r1", "sub", "x", "t1"),
        Step("t2", "mul", "k", c2),
        Step("r2", "sub", "r1", "t2"),
        Step("t3", "mul", "k", c3),
        Step("r", "sub", "r2", "t3"),
    ]
    quadrant = "k"
    if quadrant_offset:
        steps.append(Step("kq", "add", "k", quadrant_offset))
        quadrant = "kq"
    steps += [
        # m = floor(kq / 4): kq / 4 - 3/8 is never half-way between integers
        Step("a0", "mul", quadrant, 0.25),
        Step("a1", "add", "a0", -0.375),
        Step("m0", "add", "a1", _ROUND),
        Step("m", "add", "m0", -_ROUND),
        Step("q0", "mul", "m", -4.0),
        Step("q", "add", quadrant, "q0"),  # q in {0, 1, 2, 3}
        # b = floor(q / 2) = clamp(q - 1, 0, 1); s = q mod 2; sign = 1 - 2 b
        Step("b0", "add", "q", -1.0),
        Step("b1", "max", "b0", 0.0),
        Step("b", "min", "b1", 1.0),
        Step("b2", "mul", "b", -2.0),
        Step("s", "add", "q", "b2"),
        Step("sign", "add", "b2", 1.0),
        Step("z", "mul", "r", "r"),
        # sin r = r + r z (S1 + z (S2 + z S3))
        Step("ps0", "mul", "z", -1.9515295891e-4),
        Step("ps1", "add", "ps0", 8.3321608736e-3),
        Step("ps2", "mul", "ps1", "z"),
        Step("ps", "add", "ps2", -1.6666654611e-1),
        Step("r3", "mul", "z", "r"),
        Step("sr0", "mul", "r3", "ps"),
        Step("sin_r", "add", "r", "sr0"),
        # cos r = 1 - z / 2 + z^2 (C1 + z (C2 + z C3))
        Step("pc0", "mul", "z", 2.443315711809948e-5),
        Step("pc1", "add", "pc0", -1.388731625493765e-3),
        Step("pc2", "mul", "pc1", "z"),
        Step("pc", "add", "pc2", 4.166664568298827e-2),
        Step("z2", "mul", "z", "z"),
        Step("cr0", "mul", "z2", "pc"),
        Step("h0", "mul", "z", -0.5),
        Step("h", "add", "h0", 1.0),
        Step("cos_r", "add", "cr0", "h"),
        # (sin r (1 - s) + cos r s) sign: each product and the sum are exact
        Step("ns0", "mul", "s", -1.0),
        Step("ns", "add", "ns0", 1.0),
        Step("u", "mul", "sin_r", "ns"),
        Step("w", "mul", "cos_r", "s"),
        Step("v", "add", "u", "w"),
        Step("result", "mul", "v", "sign"),
    ]
    return tuple(steps)


_ERF_NUMERATOR = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
_ERF_DENOMINATOR = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)
"""Eigen's (and XLA's) f32 erf: `x P(x^2) / Q(x^2)` on x clamped to [-4, 4]
(outside, erf is +-1 in f32), highest coefficient first."""


def _horner(name: str, coefficients: tuple[float, ...]) -> list[Step]:
    """`name` = the polynomial in `x2` with `coefficients` (highest first)."""
    steps = [
        Step(f"{name}0", "mul", "x2", coefficients[0]),
        Step(f"{name}1", "add", f"{name}0", coefficients[1]),
    ]
    for i, coefficient in enumerate(coefficients[2:], 1):
        steps.append(Step(f"{name}{i}m", "mul", steps[-1].result, "x2"))
        steps.append(Step(f"{name}{i + 1}", "add", f"{name}{i}m", coefficient))
    return steps


def _erf_expansion() -> tuple[Step, ...]:
    return (
        Step("c0", "min", "x", 4.0),
        Step("c", "max", "c0", -4.0),
        Step("x2", "mul", "c", "c"),
        *_horner("p", _ERF_NUMERATOR),
        Step("px", "mul", "c", f"p{len(_ERF_NUMERATOR) - 1}"),
        *_horner("q", _ERF_DENOMINATOR),
        Step("result", "div", "px", f"q{len(_ERF_DENOMINATOR) - 1}"),
    )


def _trig_approximation(x: Array) -> Bound:
    """The absolute error of the sin/cos expansion in f32: 0.77 ulp of 1.0
    measured over |x| <= 1e4 (stated: 1 ulp), plus |x| 2^-35 for the rounding
    of `k * C2` once |k| >= 2^13; no claim for |x| >= 2^22 (where f32 addition
    no longer rounds `x 2/pi` to an integer)."""
    magnitude = np.abs(x)
    bound = F32_EPSILON + magnitude * 2.0**-35
    return np.where(magnitude < 2.0**22, bound, np.inf)


def _erf_approximation(x: Array) -> Bound:
    """The absolute error of the erf expansion in f32: 3.5 ulps of 1.0
    measured over [-6, 6] (stated: 4 ulps)."""
    return 4.0 * F32_EPSILON


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
            singular_points=(0.0, INF, -INF),
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
            singular_points=(0.0, -0.0, -INF),
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
            # overflow to inf, underflow to 0 and into the subnormals
            singular_points=(88.8, 89.0, -88.0, -104.0, INF, -INF),
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
            singular_points=(0.0, -0.0, F32_TINY, -1.0, INF),
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
            # sqrt(x + d) - sqrt(x) <= sqrt(|d|): finite where sqrt' is not
            perturbation=lambda x, e: np.sqrt(e),
            singular_points=(0.0, -0.0, F32_TINY, -1.0, INF),
        ),
        UnaryFacts(
            "rsqrt",
            lambda x: 1.0 / np.sqrt(x),
            lambda x, v: 0.5 * np.abs(v) / np.abs(x),
            ("rsqrt",),
            "pto.rsqrt(x)",
            frontend="rsqrt",
            doc="1 / sqrt(x).",
            singular_points=(0.0, -0.0, F32_TINY, -1.0, INF),
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
            # 1 / 1e-39 overflows f32
            singular_points=(0.0, -0.0, 1e-39, F32_TINY, INF, -INF),
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
            singular_points=(0.0, -0.0, INF, -INF),
        ),
        UnaryFacts(
            "sigmoid",
            sigmoid,
            lambda x, v: np.abs(v * (1.0 - v)),
            ("muls", "exp", "adds", "reciprocal"),
            "pto.sigmoid(x)",
            frontend="sigmoid",
            doc="1 / (1 + exp(-x)).",
            exponent=np.negative,
            # saturation to 1 and 0, exp(-x) overflowing
            singular_points=(20.0, -20.0, 100.0, -100.0, INF, -INF),
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
            singular_points=(10.0, -10.0, 100.0, -100.0, INF, -INF),
        ),
        UnaryFacts(
            "gelu",
            gelu_tanh,
            gelu_derivative,  # at most 1.129
            ("mul", "mul", "muls", "add", "muls", "exp", "adds", "div"),
            "pto.gelu(x)",
            frontend="gelu",
            doc="GELU, tanh approximation (see docs/tensor_view.md).",
            exponent=lambda x: -GELU_SCALE * (x + GELU_CUBIC * x**3),
            # exp overflowing for x < -88 / 1.6; x ** 3 overflowing f32
            singular_points=(-60.0, -100.0, 100.0, -1e13, 1e13, INF),
        ),
        UnaryFacts(
            "silu",
            lambda x: x * sigmoid(x),
            lambda x, v: _gated_slope(x, x, 1.0),  # at most 1.0998
            ("muls", "exp", "adds", "div"),
            "pto.silu(x)",
            frontend="silu",
            doc="x * sigmoid(x) (swish) as one op, rounded once.",
            exponent=np.negative,
            singular_points=(-100.0, 100.0, -1e38, INF),
        ),
        UnaryFacts(
            "sin",
            np.sin,
            lambda x, v: np.abs(np.cos(x)),
            expansion_steps(SIN_EXPANSION),
            "pto.sin(x)",
            frontend="sin",
            doc="Sine (radians); on the chip a polynomial after a range reduction, "
            "in f32 (docs/tensor_view.md).",
            numpy_names=("sin",),
            approximation=_trig_approximation,
            expansion=SIN_EXPANSION,
            singular_points=(0.0, 2.0**13, 2.0**22, -1e9, INF),
        ),
        UnaryFacts(
            "cos",
            np.cos,
            lambda x, v: np.abs(np.sin(x)),
            expansion_steps(COS_EXPANSION),
            "pto.cos(x)",
            frontend="cos",
            doc="Cosine (radians); on the chip a polynomial after a range "
            "reduction, in f32 (docs/tensor_view.md).",
            numpy_names=("cos",),
            approximation=_trig_approximation,
            expansion=COS_EXPANSION,
            singular_points=(0.0, 2.0**13, 2.0**22, -1e9, INF),
        ),
        UnaryFacts(
            "erf",
            erf,
            lambda x, v: 2.0 / np.sqrt(np.pi) * np.exp(-x * x),
            expansion_steps(ERF_EXPANSION),
            "pto.erf(x)",
            frontend="erf",
            doc="The error function (exact GELU is `0.5 x (1 + erf(x / sqrt(2)))`); "
            "on the chip a rational approximation in f32.",
            approximation=_erf_approximation,
            expansion=ERF_EXPANSION,
            singular_points=(4.0, -4.0, 10.0, INF, -INF),
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
            singular_points=((F32_MAX, F32_MAX), (INF, 1.0), (INF, -INF)),
        ),
        BinaryFacts(
            "sub",
            np.subtract,
            lambda ea, eb, a, b: ea + eb,
            ("sub",),
            ("adds",),
            "x - y",
            numpy_names=("subtract",),
            singular_points=((F32_MAX, -F32_MAX), (INF, 1.0), (INF, INF)),
        ),
        BinaryFacts(
            "mul",
            np.multiply,
            lambda ea, eb, a, b: carry_product(ea, b) + carry_product(eb, a),
            ("mul",),
            ("muls",),
            "x * y",
            numpy_names=("multiply",),
            singular_points=((1e30, 1e30), (0.0, INF), (INF, 2.0), (1e-30, 1e-30)),
        ),
        BinaryFacts(
            "div",
            np.divide,
            lambda ea, eb, a, b: (
                carry_product(ea, 1.0 / b) + carry_product(eb, a / (b * b))
            ),
            ("div",),
            ("muls",),
            "x / y",
            numpy_names=("divide", "true_divide"),
            # by 0, by a tiny or an infinite value, overflow
            singular_points=(
                (1.0, 0.0),
                (-1.0, 0.0),
                (0.0, 0.0),
                (1.0, F32_TINY),
                (1e30, 1e-30),
                (1.0, INF),
                (INF, INF),
            ),
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
            singular_points=((INF, -INF), (0.0, -0.0), (math.nan, 1.0)),
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
            singular_points=((INF, -INF), (0.0, -0.0), (1.0, math.nan)),
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

BINARY: dict[str, BinaryFacts] = _binary_table()
"""The elementwise binary ops, by op suffix."""

SIN_EXPANSION = _trig_expansion(0.0)
COS_EXPANSION = _trig_expansion(1.0)
ERF_EXPANSION = _erf_expansion()

UNARY: dict[str, UnaryFacts] = _unary_table()
"""The elementwise unary ops, by op suffix."""


COMPARE: dict[str, Callable[[Array, Array], Array]] = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
"""The predicates of `tv.select`, `tile.select` and `vcmp` / `vcmps` (`CmpMode`'s
names, which are these strings): numpy's,
so a NaN operand compares false except for ne, and -0.0 equals 0.0."""

SELECT_STEPS: tuple[str, ...] = ("cmp", "select")
"""The vector instructions of a select (`vcmp` into a bit buffer, `vselect`)."""


def select(cmp: str, lhs: Array, rhs: Array, on_true: Array, on_false: Array) -> Array:
    """`where(lhs <cmp> rhs, on_true, on_false)`: the reference of the selects
    (operands in a compute type; numpy broadcasting)."""
    return np.where(COMPARE[cmp](lhs, rhs), on_true, on_false)


def numpy_spellings() -> dict[str, str]:
    """numpy function name -> how a kernel writes it, for every op here."""
    spellings: dict[str, str] = {}
    for table in (UNARY, BINARY, REDUCE):
        for entry in table.values():
            for numpy_name in entry.numpy_names:
                spellings[numpy_name] = entry.spelling
    return spellings
