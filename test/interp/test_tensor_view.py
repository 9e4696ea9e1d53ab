"""Numerics of the tv reference interpreter against numpy references.

References compute in float64 (exact or nearly so for these sizes) and round
to the element type, so they check the stated fp16 semantics rather than
repeat the implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    Builtin,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    bf16,
    f16,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.parser import Parser
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.utils.exceptions import InterpretationError, VerifyException

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.interp.tensor_view import (
    numpy_dtype,
    round_to_bf16,
    run_tv_function,
)

DYN = -(2**63)
FLOAT_TYPES = (f16, bf16, f32)
ANY_SETTINGS = settings(max_examples=30, deadline=None)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def context() -> Context:
    ctx = Context()
    for dialect in (
        Builtin,
        func.Func,
        arith.Arith,
        scf.Scf,
        tv.TensorView,
    ):
        ctx.load_dialect(dialect)
    return ctx


def parse(source: str) -> ModuleOp:
    module = Parser(context(), source).parse_module()
    module.verify()
    return module


def build(
    arg_types: Sequence[Attribute],
    body: Callable[..., SSAValue | Sequence[SSAValue]],
) -> ModuleOp:
    """A module with `func.func @f` whose body `body(*args)` builds."""
    block = Block(arg_types=arg_types)
    with ImplicitBuilder(block):
        results = body(*block.args)
        if isinstance(results, SSAValue):
            results = [results]
        func.ReturnOp(*results)
    function = func.FuncOp(
        "f",
        FunctionType.from_lists(arg_types, [r.type for r in results]),
        Region(block),
    )
    module = ModuleOp([function])
    module.verify()
    return module


def tensor(element_type: Attribute, shape: Sequence[int]) -> tv.TensorViewType:
    return tv.TensorViewType(element_type, shape)


def run1(module: ModuleOp, *args: np.ndarray | float | int) -> np.ndarray:
    (result,) = run_tv_function(module, "f", list(args))
    return result


def random_array(
    rng: np.random.Generator,
    element_type: Attribute,
    shape: Sequence[int],
    low: float = -4.0,
    high: float = 4.0,
) -> np.ndarray:
    if element_type in FLOAT_TYPES:
        values = rng.uniform(low, high, size=shape)
        if element_type == bf16:
            return round_to_bf16(values.astype(np.float32))
        return values.astype(numpy_dtype(element_type))
    info = np.iinfo(numpy_dtype(element_type))
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(
        numpy_dtype(element_type)
    )


def nearest_bf16(exact: np.ndarray) -> np.ndarray:
    """Brute force: the bf16 nearest each float64 value, ties to an even pattern.

    Values at or past the midpoint between the largest bf16 and 2^128 become
    infinities, as IEEE rounding does.
    """
    exact = np.asarray(exact, dtype=np.float64)
    result = np.empty(exact.shape, dtype=np.float32)
    for index, x in np.ndenumerate(exact):
        if np.isnan(x) or np.isinf(x):
            result[index] = x
            continue
        with np.errstate(over="ignore"):
            base = int(np.float32(x).view(np.uint32)) >> 16
        best: tuple[float, int, float] | None = None
        for pattern in ((base + d) & 0xFFFF for d in (-1, 0, 1)):
            magnitude = pattern & 0x7FFF
            if magnitude > 0x7F80:
                continue  # NaN patterns
            sign = -1.0 if pattern & 0x8000 else 1.0
            if magnitude == 0x7F80:
                distance_value, value = sign * 2.0**128, sign * np.inf
            else:
                value = float(np.uint32(pattern << 16).view(np.float32))
                distance_value = value
            key = (abs(distance_value - x), pattern & 1, value)
            if best is None or key[:2] < best[:2]:
                best = key
        assert best is not None
        result[index] = best[2]
    return result


def round_exact(values: np.ndarray, element_type: Attribute) -> np.ndarray:
    """Correct rounding of float64 values to a float element type."""
    if element_type == bf16:
        return nearest_bf16(values)
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype=np.float64).astype(numpy_dtype(element_type))


def compute_ulps(element_type: Attribute) -> float:
    """How far from the correctly rounded result an op computed in f32 may be:
    one ulp of f16/bf16 (one rounding of a nearly exact f32 value); for f32
    the error of the f32 evaluation itself, up to ~2^-16 relative (gelu's exp
    multiplies the few-ulp error of its computed argument, |arg| <= 25 here,
    by |arg|)."""
    return 128.0 if element_type == f32 else 1.0


def ulp(element_type: Attribute, values: np.ndarray) -> np.ndarray:
    """The spacing of `element_type` at each value."""
    magnitude = np.abs(np.asarray(values, dtype=np.float64))
    if element_type == f16:
        return np.spacing(magnitude.astype(np.float16)).astype(np.float64)
    spacing = np.spacing(magnitude.astype(np.float32)).astype(np.float64)
    return spacing * (2**16 if element_type == bf16 else 1)


def assert_within_ulps(
    actual: np.ndarray,
    expected: np.ndarray,
    element_type: Attribute,
    ulps: float = 1.0,
    atol: float = 0.0,
) -> None:
    actual64 = np.asarray(actual, dtype=np.float64)
    expected64 = np.asarray(expected, dtype=np.float64)
    assert actual64.shape == expected64.shape
    both_nan = np.isnan(actual64) & np.isnan(expected64)
    same = actual64 == expected64
    error = np.abs(actual64 - expected64)
    bound = ulps * ulp(element_type, expected64) + atol
    ok = both_nan | same | (error <= bound)
    assert ok.all(), (
        f"{(~ok).sum()} elements off by more than {ulps} ulp: "
        f"actual {actual64[~ok][:5]}, expected {expected64[~ok][:5]}"
    )


def f16_from_bits(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint16).view(np.float16)


# ---------------------------------------------------------------------------
# fp16 / bf16 semantics
# ---------------------------------------------------------------------------

_EXACT_BINARY: dict[
    type[tv.BinaryOp], Callable[[np.ndarray, np.ndarray], np.ndarray]
] = {
    tv.AddOp: np.add,
    tv.SubOp: np.subtract,
    tv.MulOp: np.multiply,
    tv.DivOp: np.divide,
    tv.MaxOp: np.maximum,
    tv.MinOp: np.minimum,
}


@pytest.mark.parametrize("op", list(_EXACT_BINARY), ids=lambda o: o.name)
@ANY_SETTINGS
@given(bits=hnp.arrays(np.uint16, (2, 64)))
def test_f16_arithmetic_is_correctly_rounded(
    op: type[tv.BinaryOp], bits: np.ndarray
) -> None:
    """Computing in f32 and rounding once equals native, correctly rounded fp16
    arithmetic, for any bit patterns (subnormals, infinities and NaNs included)."""
    a, b = f16_from_bits(bits)
    module = build([tensor(f16, [64])] * 2, lambda x, y: op(x, y).result)
    with np.errstate(all="ignore"):
        expected = _EXACT_BINARY[op](a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(run1(module, a, b), round_exact(expected, f16))


@pytest.mark.parametrize("op", list(_EXACT_BINARY), ids=lambda o: o.name)
def test_bf16_arithmetic_is_correctly_rounded(op: type[tv.BinaryOp]) -> None:
    rng = np.random.default_rng(7)
    a = random_array(rng, bf16, [200], -100, 100)
    b = random_array(rng, bf16, [200], -100, 100)
    b[b == 0] = 1.0
    module = build([tensor(bf16, [200])] * 2, lambda x, y: op(x, y).result)
    expected = nearest_bf16(
        _EXACT_BINARY[op](a.astype(np.float64), b.astype(np.float64))
    )
    np.testing.assert_array_equal(run1(module, a, b), expected)


def test_round_to_bf16_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    values = np.concatenate(
        [
            rng.standard_normal(500).astype(np.float32) * 1e3,
            np.float32([0.0, -0.0, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-40]),
            # exact ties between two bf16 values
            np.uint32([0x3F808000, 0x3F818000, 0xBF808000]).view(np.float32),
        ]
    )
    np.testing.assert_array_equal(round_to_bf16(values), nearest_bf16(values))
    assert np.isnan(round_to_bf16(np.float32([np.nan]))).all()


def test_sqrt_f16_is_correctly_rounded() -> None:
    a = f16_from_bits(np.arange(0, 0x7C00, 7, dtype=np.uint16))
    module = build([tensor(f16, [a.size])], lambda x: tv.SqrtOp(x).result)
    expected = np.sqrt(a.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(run1(module, a), expected)


def test_composite_op_rounds_once() -> None:
    """silu computes x * sigmoid(x) in f32 and rounds once: nearly always the
    f16 nearest the exact value, unlike rounding sigmoid to f16 first."""
    x = np.linspace(-6, 6, 2001).astype(np.float16)
    module = build([tensor(f16, [x.size])], lambda v: tv.SiluOp(v).result)
    x32, x64 = x.astype(np.float32), x.astype(np.float64)
    nearest = (x64 / (1 + np.exp(-x64))).astype(np.float16)
    sigmoid_f16 = (np.float32(1) / (np.float32(1) + np.exp(-x32))).astype(np.float16)
    twice = (x32 * sigmoid_f16).astype(np.float16)
    result = run1(module, x)
    assert_within_ulps(result, nearest, f16, ulps=1)
    assert (result == nearest).mean() > 0.99
    assert (twice == nearest).mean() < 0.9


# ---------------------------------------------------------------------------
# Elementwise unary ops
# ---------------------------------------------------------------------------


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


_UNARY_REFERENCES: list[
    tuple[type[tv.UnaryOp], Callable[[np.ndarray], np.ndarray], float, float]
] = [
    # op, float64 reference, low, high of the test domain
    (tv.NegOp, np.negative, -8, 8),
    (tv.AbsOp, np.abs, -8, 8),
    (tv.ExpOp, np.exp, -8, 8),
    (tv.LogOp, np.log, 0.01, 100),
    (tv.SqrtOp, np.sqrt, 0, 100),
    (tv.RsqrtOp, lambda x: 1 / np.sqrt(x), 0.01, 100),
    (tv.ReciprocalOp, lambda x: 1 / x, 0.05, 20),
    (tv.ReluOp, lambda x: np.maximum(x, 0), -8, 8),
    (tv.SigmoidOp, lambda x: 1 / (1 + np.exp(-x)), -12, 12),
    (tv.TanhOp, np.tanh, -6, 6),
    (tv.GeluOp, _gelu, -6, 6),
    (tv.SiluOp, lambda x: x / (1 + np.exp(-x)), -12, 12),
]


@pytest.mark.parametrize(
    "op, reference, low, high", _UNARY_REFERENCES, ids=lambda v: getattr(v, "name", "")
)
@pytest.mark.parametrize("element_type", FLOAT_TYPES, ids=str)
@ANY_SETTINGS
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=6),
    seed=st.integers(0, 2**32 - 1),
)
def test_unary_float(
    op: type[tv.UnaryOp],
    reference: Callable[[np.ndarray], np.ndarray],
    low: float,
    high: float,
    element_type: Attribute,
    shape: tuple[int, ...],
    seed: int,
) -> None:
    x = random_array(np.random.default_rng(seed), element_type, shape, low, high)
    module = build([tensor(element_type, shape)], lambda v: op(v).result)
    result = run1(module, x)
    assert result.dtype == numpy_dtype(element_type) and result.shape == shape
    expected = round_exact(reference(x.astype(np.float64)), element_type)
    assert_within_ulps(
        result, expected, element_type, compute_ulps(element_type), atol=1e-30
    )


@pytest.mark.parametrize("op", [tv.NegOp, tv.AbsOp, tv.ReluOp], ids=lambda o: o.name)
@pytest.mark.parametrize("element_type", [i8, i16, i32], ids=str)
def test_unary_integer_wraps(op: type[tv.UnaryOp], element_type: Attribute) -> None:
    dtype = numpy_dtype(element_type)
    info = np.iinfo(dtype)
    x = np.array([info.min, info.min + 1, -5, -1, 0, 1, 7, info.max], dtype=dtype)
    module = build([tensor(element_type, [x.size])], lambda v: op(v).result)
    wide = x.astype(np.int64)
    expected = {
        tv.NegOp: -wide,
        tv.AbsOp: np.abs(wide),
        tv.ReluOp: np.maximum(wide, 0),
    }[op].astype(dtype)  # astype wraps: -(-128) is -128 in i8
    np.testing.assert_array_equal(run1(module, x), expected)


@pytest.mark.parametrize("op", [tv.ExpOp, tv.GeluOp, tv.SqrtOp], ids=lambda o: o.name)
def test_unary_float_only(op: type[tv.UnaryOp]) -> None:
    with pytest.raises(VerifyException, match="expects a float tensor"):
        build([tensor(i32, [4])], lambda v: op(v).result)


# ---------------------------------------------------------------------------
# Elementwise binary ops and broadcasting
# ---------------------------------------------------------------------------


@ANY_SETTINGS
@given(
    shapes=hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=4, max_side=5
    ),
    op=st.sampled_from(list(_EXACT_BINARY)),
    seed=st.integers(0, 2**32 - 1),
)
def test_broadcasting_matches_numpy(
    shapes: hnp.BroadcastableShapes, op: type[tv.BinaryOp], seed: int
) -> None:
    lhs_shape, rhs_shape = shapes.input_shapes
    rng = np.random.default_rng(seed)
    a = random_array(rng, f16, lhs_shape)
    b = random_array(rng, f16, rhs_shape, 0.5, 4)
    module = build(
        [tensor(f16, lhs_shape), tensor(f16, rhs_shape)],
        lambda x, y: op(x, y).result,
    )
    result = run1(module, a, b)
    assert result.shape == shapes.result_shape
    expected = _EXACT_BINARY[op](a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(result, expected.astype(np.float16))


@ANY_SETTINGS
@given(
    shapes=hnp.mutually_broadcastable_shapes(
        num_shapes=4, min_dims=0, max_dims=3, max_side=4
    ),
    cmp=st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_select_matches_np_where(
    shapes: hnp.BroadcastableShapes, cmp: str, seed: int
) -> None:
    """tv.select is np.where of numpy's compare, broadcasting all four operands;
    ties, NaN and -0.0 against 0.0 included; f16 compared, f16 selected."""
    rng = np.random.default_rng(seed)
    pool = np.array([np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, 2.5], np.float16)
    a, b, t, f = (rng.choice(pool, s) for s in shapes.input_shapes)
    module = build(
        [tensor(f16, s) for s in shapes.input_shapes],
        lambda *args: tv.SelectOp(cmp, *args).result,
    )
    result = run1(module, a, b, t, f)
    compare = {"lt": np.less, "le": np.less_equal, "gt": np.greater}
    compare |= {"ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}
    with np.errstate(invalid="ignore"):
        expected = np.where(compare[cmp](a, b), t, f)
    assert result.shape == shapes.result_shape
    np.testing.assert_array_equal(result.view(np.uint16), expected.view(np.uint16))


def test_select_compares_bf16_and_selects_i32() -> None:
    a = np.array([1.0, np.nan, -2.0, 3.0], np.float32)
    b = np.array([1.0, 1.0, 0.0, 2.0], np.float32)
    t = np.array([1, 2, 3, 4], np.int32)
    f = np.array([-1, -2, -3, -4], np.int32)
    module = build(
        [tensor(bf16, [4]), tensor(bf16, [4]), tensor(i32, [4]), tensor(i32, [4])],
        lambda *args: tv.SelectOp("ge", *args).result,
    )
    np.testing.assert_array_equal(run1(module, a, b, t, f), [1, -2, -3, 4])


@ANY_SETTINGS
@given(
    lhs=hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4),
    rhs=hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4),
)
def test_broadcast_shapes_agrees_with_numpy(
    lhs: tuple[int, ...], rhs: tuple[int, ...]
) -> None:
    try:
        expected = np.broadcast_shapes(lhs, rhs)
    except ValueError:
        with pytest.raises(ValueError, match="not broadcast-compatible"):
            tv.broadcast_shapes(lhs, rhs)
        return
    assert tv.broadcast_shapes(lhs, rhs) == expected


def test_broadcast_with_dynamic_dims() -> None:
    assert tv.broadcast_shapes([DYN, 8], [8]) == (DYN, 8)
    assert tv.broadcast_shapes([DYN, 1], [4, 8]) == (4, 8)
    assert tv.broadcast_shapes([DYN, 8], [DYN, 1]) == (DYN, 8)
    assert tv.broadcast_shapes([DYN], [DYN]) == (DYN,)


def test_dynamic_dims_never_broadcast_at_run_time() -> None:
    module = build(
        [tensor(f32, [DYN, 4]), tensor(f32, [DYN, 4])],
        lambda x, y: tv.AddOp(x, y).result,
    )
    a = np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(run1(module, a, a), 2 * a)
    with pytest.raises(InterpretationError, match="differ at run time"):
        run1(module, a, np.ones((1, 4), np.float32))


@pytest.mark.parametrize("scalar_type", FLOAT_TYPES, ids=str)
@pytest.mark.parametrize("scalar_first", [False, True])
def test_scalar_operand(scalar_type: Attribute, scalar_first: bool) -> None:
    """A scalar is rounded to its own type, then the op runs in f32 once."""
    x = np.linspace(-3, 3, 24, dtype=np.float16).reshape(4, 6)

    def body(v: SSAValue, s: SSAValue) -> SSAValue:
        return (tv.SubOp(s, v) if scalar_first else tv.SubOp(v, s)).result

    module = build([tensor(f16, [4, 6]), scalar_type], body)
    scalar = 0.1
    stored = round_exact(np.float64(scalar), scalar_type).astype(np.float64)
    x64 = x.astype(np.float64)
    exact = stored - x64 if scalar_first else x64 - stored
    expected = np.float32(exact).astype(np.float16)  # f32 holds x - s exactly here
    np.testing.assert_array_equal(run1(module, x, scalar), expected)


@pytest.mark.parametrize("element_type", [i8, i16, i32], ids=str)
@pytest.mark.parametrize(
    "op", [tv.AddOp, tv.SubOp, tv.MulOp, tv.MaxOp, tv.MinOp], ids=lambda o: o.name
)
def test_binary_integer_wraps(element_type: Attribute, op: type[tv.BinaryOp]) -> None:
    rng = np.random.default_rng(11)
    dtype = numpy_dtype(element_type)
    a = random_array(rng, element_type, [5, 7])
    b = random_array(rng, element_type, [7])
    module = build(
        [tensor(element_type, [5, 7]), tensor(element_type, [7]), element_type],
        lambda x, y, s: op(op(x, y), s).result,
    )
    scalar = int(np.iinfo(dtype).max)
    wide = _EXACT_BINARY[op](a.astype(np.int64), b.astype(np.int64)).astype(dtype)
    expected = _EXACT_BINARY[op](wide.astype(np.int64), scalar).astype(dtype)
    np.testing.assert_array_equal(run1(module, a, b, scalar), expected)


def test_binary_builder_infers_type() -> None:
    def body(x: SSAValue, y: SSAValue, s: SSAValue) -> list[SSAValue]:
        return [tv.MulOp(x, y).result, tv.AddOp(s, x).result]

    module = build([tensor(bf16, [3, 1, 5]), tensor(bf16, [4, 1]), f32], body)
    result_types = module.body.block.first_op.function_type.outputs.data  # type: ignore[union-attr]
    assert result_types == (tensor(bf16, [3, 4, 5]), tensor(bf16, [3, 1, 5]))


# ---------------------------------------------------------------------------
# Cast
# ---------------------------------------------------------------------------


def _cast(source: Attribute, target: Attribute, x: np.ndarray) -> np.ndarray:
    module = build(
        [tensor(source, list(x.shape))], lambda v: tv.CastOp(v, target).result
    )
    return run1(module, x)


@pytest.mark.parametrize("target", FLOAT_TYPES, ids=str)
def test_cast_float_to_float_rounds_to_nearest_even(target: Attribute) -> None:
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            (rng.standard_normal(300) * 100).astype(np.float32),
            np.float32([np.inf, -np.inf, 1e6, -1e6, 0.0, -0.0, 1e-8]),
        ]
    )
    np.testing.assert_array_equal(_cast(f32, target, x), round_exact(x, target))


@pytest.mark.parametrize("target", [i8, i16, i32], ids=str)
def test_cast_float_to_int_truncates_and_saturates(target: Attribute) -> None:
    info = np.iinfo(numpy_dtype(target))
    x = np.float32([2.9, -2.9, 0.5, -0.5, 1e10, -1e10, np.inf, -np.inf, np.nan, 100.0])
    expected = np.array(
        [2, -2, 0, 0, info.max, info.min, info.max, info.min, 0, min(100, info.max)],
        dtype=numpy_dtype(target),
    )
    np.testing.assert_array_equal(_cast(f32, target, x), expected)


def test_cast_int_to_int_wraps() -> None:
    x = np.int32([300, -129, 127, -128, 65535])
    np.testing.assert_array_equal(_cast(i32, i8, x), x.astype(np.int8))
    np.testing.assert_array_equal(_cast(i8, i32, x.astype(np.int8)), x.astype(np.int8))


def test_cast_int_to_bf16_rounds_once() -> None:
    """2^24 + 2^16 + 1 is just above the midpoint of two bf16 values; rounding
    through f32 first would land on the midpoint and then round down."""
    x = np.int32([2**24 + 2**16 + 1, 3, -(2**20) - 1])
    np.testing.assert_array_equal(
        _cast(i32, bf16, x), np.float32([2**24 + 2**17, 3, -(2**20)])
    )


def test_cast_int_to_f16_overflows_to_inf() -> None:
    x = np.int32([70000, -70000, 2049])
    np.testing.assert_array_equal(
        _cast(i32, f16, x), np.float16([np.inf, -np.inf, 2048])
    )


# ---------------------------------------------------------------------------
# Matmul
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("element_type", FLOAT_TYPES, ids=str)
def test_matmul_float(
    transpose_a: bool, transpose_b: bool, element_type: Attribute
) -> None:
    rng = np.random.default_rng(1)
    m, k, n = 17, 96, 33
    a_shape = [k, m] if transpose_a else [m, k]
    b_shape = [n, k] if transpose_b else [k, n]
    a = random_array(rng, element_type, a_shape, -1, 1)
    b = random_array(rng, element_type, b_shape, -1, 1)

    def body(x: SSAValue, y: SSAValue) -> list[SSAValue]:
        kw = {"transpose_a": transpose_a, "transpose_b": transpose_b}
        return [
            tv.MatmulOp(x, y, **kw).result,
            tv.MatmulOp(x, y, result_element_type=f32, **kw).result,
        ]

    module = build([tensor(element_type, a_shape), tensor(element_type, b_shape)], body)
    rounded, accumulated = run_tv_function(module, "f", [a, b])
    a64 = a.astype(np.float64).T if transpose_a else a.astype(np.float64)
    b64 = b.astype(np.float64).T if transpose_b else b.astype(np.float64)
    exact = a64 @ b64
    assert accumulated.dtype == np.float32 and accumulated.shape == (m, n)
    # f32 accumulation error of a k-term dot product is far below 1e-4 here
    np.testing.assert_allclose(accumulated, exact, rtol=1e-5, atol=1e-4)
    # the narrow result is the f32 sum rounded once
    np.testing.assert_array_equal(
        rounded, round_exact(accumulated.astype(np.float64), element_type)
    )


def test_matmul_accumulates_in_f32() -> None:
    """In f16, 2048 + 1 rounds back to 2048; an f32 accumulator reaches 4096."""
    a = np.ones((1, 4096), np.float16)
    b = np.ones((4096, 1), np.float16)
    module = build(
        [tensor(f16, [1, 4096]), tensor(f16, [4096, 1])],
        lambda x, y: tv.MatmulOp(x, y).result,
    )
    np.testing.assert_array_equal(run1(module, a, b), np.float16([[4096]]))


def test_matmul_batched_dynamic() -> None:
    rng = np.random.default_rng(2)
    a = random_array(rng, f32, [3, 5, 8])
    b = random_array(rng, f32, [3, 6, 8])
    module = build(
        [tensor(f32, [3, DYN, 8]), tensor(f32, [3, 6, 8])],
        lambda x, y: tv.MatmulOp(x, y, transpose_b=True).result,
    )
    result = run1(module, a, b)
    np.testing.assert_allclose(result, a @ np.swapaxes(b, 1, 2), rtol=1e-5)


def test_matmul_i8_accumulates_in_i32() -> None:
    rng = np.random.default_rng(4)
    a = random_array(rng, i8, [9, 200])
    b = random_array(rng, i8, [200, 7])
    module = build(
        [tensor(i8, [9, 200]), tensor(i8, [200, 7])],
        lambda x, y: tv.MatmulOp(x, y).result,
    )
    result = run1(module, a, b)
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, a.astype(np.int64) @ b.astype(np.int64))


# ---------------------------------------------------------------------------
# Reductions, softmax, transpose
# ---------------------------------------------------------------------------


@st.composite
def shape_and_axes(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int], bool]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6))
    axes = draw(
        st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=4)
    )
    if len({a % len(shape) for a in axes}) != len(axes):
        axes = sorted({a % len(shape) for a in axes})
    return shape, axes, draw(st.booleans())


_REDUCTIONS = {
    tv.ReduceSumOp: np.sum,
    tv.ReduceMaxOp: np.max,
    tv.ReduceMinOp: np.min,
}


@pytest.mark.parametrize("element_type", [f16, bf16, f32, i8, i32], ids=str)
@pytest.mark.parametrize("op", list(_REDUCTIONS), ids=lambda o: o.name)
@ANY_SETTINGS
@given(case=shape_and_axes(), seed=st.integers(0, 2**32 - 1))
def test_reductions(
    element_type: Attribute,
    op: type[tv.ReduceOp],
    case: tuple[tuple[int, ...], list[int], bool],
    seed: int,
) -> None:
    shape, axes, keepdims = case
    x = random_array(np.random.default_rng(seed), element_type, shape)
    module = build(
        [tensor(element_type, shape)], lambda v: op(v, axes, keepdims).result
    )
    result = run1(module, x)
    axis = tuple(sorted({a % len(shape) for a in axes}))
    expected_shape = np.sum(x, axis=axis, keepdims=keepdims).shape
    assert result.shape == expected_shape
    assert result.dtype == numpy_dtype(element_type)
    if element_type in FLOAT_TYPES:
        wide = _REDUCTIONS[op](x.astype(np.float64), axis=axis, keepdims=keepdims)
        if op is tv.ReduceSumOp:
            # f32 accumulation, one rounding: within an ulp of the element
            # type, plus the f32 summation error, a small multiple of
            # eps(f32) * sum(|x|), which matters only under cancellation
            expected = round_exact(wide, element_type)
            magnitude = np.sum(np.abs(x.astype(np.float64)), axis, keepdims=keepdims)
            slack = 2.0**-18 * magnitude
            ulps = compute_ulps(element_type)
            assert_within_ulps(result, expected, element_type, ulps, atol=slack)
        else:
            np.testing.assert_array_equal(result, wide.astype(result.dtype))
    else:
        wide = _REDUCTIONS[op](x.astype(np.int64), axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(result, np.asarray(wide).astype(result.dtype))


def test_reduce_sum_accumulates_in_f32() -> None:
    x = np.ones((2, 4096), np.float16)
    module = build([tensor(f16, [2, 4096])], lambda v: tv.ReduceSumOp(v, [1]).result)
    np.testing.assert_array_equal(run1(module, x), np.float16([4096, 4096]))


def test_reduce_builder_normalizes_axes() -> None:
    module = build(
        [tensor(f32, [2, 3, 4])], lambda v: tv.ReduceMaxOp(v, [-1, 0], True).result
    )
    op = module.body.block.first_op.body.block.first_op  # type: ignore[union-attr]
    assert isinstance(op, tv.ReduceMaxOp)
    assert op.axes.get_values() == (0, 2)
    assert op.result.type == tensor(f32, [1, 3, 1])


@pytest.mark.parametrize("element_type", FLOAT_TYPES, ids=str)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax(element_type: Attribute, axis: int) -> None:
    rng = np.random.default_rng(9)
    x = random_array(rng, element_type, [6, 40], -10, 10)
    module = build(
        [tensor(element_type, [6, 40])], lambda v: tv.SoftmaxOp(v, axis).result
    )
    result = run1(module, x)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    expected = round_exact(e / e.sum(axis=axis, keepdims=True), element_type)
    assert_within_ulps(result, expected, element_type, compute_ulps(element_type), 1e-7)


def test_softmax_is_stable_for_large_inputs() -> None:
    x = np.float32([[1000.0, 1000.0], [-1000.0, 0.0]])
    module = build([tensor(f32, [2, 2])], lambda v: tv.SoftmaxOp(v, 1).result)
    np.testing.assert_allclose(run1(module, x), [[0.5, 0.5], [0.0, 1.0]])


@ANY_SETTINGS
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=5),
    data=st.data(),
)
def test_transpose(shape: tuple[int, ...], data: st.DataObject) -> None:
    permutation = data.draw(st.permutations(range(len(shape))))
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    module = build(
        [tensor(i32, shape)], lambda v: tv.TransposeOp(v, permutation).result
    )
    np.testing.assert_array_equal(run1(module, x), np.transpose(x, permutation))


# ---------------------------------------------------------------------------
# View, dim, fill
# ---------------------------------------------------------------------------


def test_view_static_dynamic_and_rank_reducing() -> None:
    module = parse(
        """
        func.func @f(%x: !tv.tensor<16x32xf32>, %i: index, %n: index)
            -> (!tv.tensor<4x5xf32>, !tv.tensor<?x8xf32>, !tv.tensor<32xf32>) {
          %a = tv.view %x[2, 3][4, 5][3, 2] : !tv.tensor<16x32xf32> to !tv.tensor<4x5xf32>
          %b = tv.view %x[%i, 0][%n, 8][1, 4] : !tv.tensor<16x32xf32> to !tv.tensor<?x8xf32>
          %c = tv.view %x[%i, 0][1, 32][1, 1] : !tv.tensor<16x32xf32> to !tv.tensor<32xf32>
          func.return %a, %b, %c : !tv.tensor<4x5xf32>, !tv.tensor<?x8xf32>, !tv.tensor<32xf32>
        }
        """
    )
    x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    a, b, c = run_tv_function(module, "f", [x, 5, 3])
    np.testing.assert_array_equal(a, x[2:14:3, 3:13:2])
    np.testing.assert_array_equal(b, x[5:8, 0:32:4])
    np.testing.assert_array_equal(c, x[5])
    a[0, 0] = -1  # value semantics: results do not alias the input
    assert x[2, 3] == 2 * 32 + 3


def test_view_out_of_bounds_at_run_time() -> None:
    module = build(
        [tensor(f32, [8]), IndexType()],
        lambda x, i: tv.ViewOp(x, [i], [4]).result,
    )
    x = np.zeros(8, np.float32)
    assert run1(module, x, 4).shape == (4,)
    with pytest.raises(InterpretationError, match="out of bounds"):
        run1(module, x, 5)


def test_dim_and_dynamic_fill() -> None:
    module = parse(
        """
        func.func @f(%x: !tv.tensor<?x3xf16>) -> !tv.tensor<?x3xf16> {
          %n = tv.dim %x, 0 : !tv.tensor<?x3xf16>
          %c = arith.constant 0.1 : f32
          %s = tv.fill %c[%n] : f32 -> !tv.tensor<?x3xf16>
          %y = tv.add %x, %s : !tv.tensor<?x3xf16>
          func.return %y : !tv.tensor<?x3xf16>
        }
        """
    )
    x = np.arange(15, dtype=np.float16).reshape(5, 3)
    fill = np.float16(np.float32(0.1))  # rounded to f32 (its type), then to f16
    expected = (x.astype(np.float64) + np.float64(fill)).astype(np.float16)
    np.testing.assert_array_equal(run1(module, x), expected)


def test_fill_integer() -> None:
    module = build(
        [i8],
        lambda s: tv.FillOp(s, tensor(i8, [2, 2])).result,
    )
    np.testing.assert_array_equal(run1(module, -7), np.full((2, 2), -7, np.int8))


# ---------------------------------------------------------------------------
# Control flow, canonicalization, the runner
# ---------------------------------------------------------------------------


def test_tensors_flow_through_scf_for() -> None:
    module = parse(
        """
        func.func @f(%x: !tv.tensor<4xf32>) -> !tv.tensor<4xf32> {
          %c0 = arith.constant 0 : index
          %c3 = arith.constant 3 : index
          %c1 = arith.constant 1 : index
          %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> (!tv.tensor<4xf32>) {
            %n = tv.add %acc, %x : !tv.tensor<4xf32>
            scf.yield %n : !tv.tensor<4xf32>
          }
          func.return %r : !tv.tensor<4xf32>
        }
        """
    )
    x = np.float32([1, 2, 3, 4])
    np.testing.assert_array_equal(run1(module, x), 4 * x)


_CANONICALIZABLE = """
func.func @f(%x: !tv.tensor<8x12xf16>, %w: !tv.tensor<16x12xf16>) -> (!tv.tensor<4x3xf16>, !tv.tensor<8x16xf32>, !tv.tensor<8x12xf16>) {
  %one = arith.constant 1.0 : f32
  %neg_zero = arith.constant -0.0 : f32
  %v = tv.view %x[1, 2][6, 9][1, 1] : !tv.tensor<8x12xf16> to !tv.tensor<6x9xf16>
  %vv = tv.view %v[1, 0][4, 3][1, 3] : !tv.tensor<6x9xf16> to !tv.tensor<4x3xf16>
  %t = tv.transpose %x [1, 0] : !tv.tensor<8x12xf16> -> !tv.tensor<12x8xf16>
  %tt = tv.transpose %t [1, 0] : !tv.tensor<12x8xf16> -> !tv.tensor<8x12xf16>
  %m = tv.mul %tt, %one : !tv.tensor<8x12xf16>, f32 -> !tv.tensor<8x12xf16>
  %wt = tv.transpose %w [1, 0] : !tv.tensor<16x12xf16> -> !tv.tensor<12x16xf16>
  %mm = tv.matmul %m, %wt acc(f32) : !tv.tensor<8x12xf16>, !tv.tensor<12x16xf16> -> !tv.tensor<8x16xf32>
  %c = tv.cast %x : !tv.tensor<8x12xf16> to !tv.tensor<8x12xf32>
  %cc = tv.cast %c : !tv.tensor<8x12xf32> to !tv.tensor<8x12xf16>
  %a = tv.add %cc, %neg_zero : !tv.tensor<8x12xf16>, f32 -> !tv.tensor<8x12xf16>
  func.return %vv, %mm, %a : !tv.tensor<4x3xf16>, !tv.tensor<8x16xf32>, !tv.tensor<8x12xf16>
}
"""


def test_canonicalization_preserves_results() -> None:
    rng = np.random.default_rng(12)
    x = random_array(rng, f16, [8, 12])
    x[0, 0] = -0.0
    w = random_array(rng, f16, [16, 12])
    module = parse(_CANONICALIZABLE)
    before = run_tv_function(module, "f", [x, w])
    CanonicalizePass().apply(context(), module)
    module.verify()
    ops = [type(op) for op in module.walk()]
    assert tv.TransposeOp not in ops and tv.CastOp not in ops and tv.MulOp not in ops
    assert ops.count(tv.ViewOp) == 1
    after = run_tv_function(module, "f", [x, w])
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)
        assert np.array_equal(np.signbit(a), np.signbit(b))


def test_run_tv_function_checks_arguments() -> None:
    module = build([tensor(f16, [DYN, 4])], lambda v: tv.NegOp(v).result)
    with pytest.raises(ValueError, match="expected shape"):
        run1(module, np.zeros((3, 5), np.float16))
    with pytest.raises(ValueError, match="numpy float16 array, got float32"):
        run1(module, np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="takes 1 arguments, got 2"):
        run_tv_function(module, "f", [np.zeros((3, 4), np.float16)] * 2)
    with pytest.raises(ValueError, match="no func.func @g"):
        run_tv_function(module, "g", [])


def test_run_tv_function_scalars_and_bf16_inputs() -> None:
    module = build(
        [tensor(bf16, [3]), f32, i32],
        lambda v, s, k: [tv.MulOp(v, s).result, arith.AddiOp(k, k).result],
    )
    x = np.float32([1.00390625, 2.0, 3.0])  # 1 + 2^-8 is not a bf16: rounds to 1
    y, k = run_tv_function(module, "f", [x, 2.0, 21])
    np.testing.assert_array_equal(y, np.float32([2.0, 4.0, 6.0]))
    assert k == 42


# ---------------------------------------------------------------------------
# Types and verifiers not reachable from text
# ---------------------------------------------------------------------------


def test_tensor_type_verifies() -> None:
    with pytest.raises(VerifyException, match="non-negative or '\\?'"):
        tensor(f16, [4, -3])
    with pytest.raises(VerifyException, match="element type must be one of"):
        tensor(i64, [4])
    csr = tv.CsrEncodingAttr(4, 8, 5)
    sparse = tv.TensorViewType(f32, [4, 8], csr)
    assert sparse.is_sparse and not tensor(f32, [4, 8]).is_sparse
    assert (
        str(sparse)
        == "!tv.tensor<4x8xf32, #tv.csr<rows = 4, cols = 8, nnz = 5, index = i32>>"
    )


def test_scalar_attr_values_are_accepted() -> None:
    """Scalars reach tv ops as xDSL's FloatAttr / IntegerAttr runtime values."""
    module = build(
        [tensor(f32, [2])],
        lambda v: tv.MulOp(v, arith.ConstantOp(FloatAttr(3.0, f32)).result).result,
    )
    np.testing.assert_array_equal(run1(module, np.float32([1, 2])), [3.0, 6.0])
    module = build(
        [tensor(i16, [2])],
        lambda v: tv.AddOp(v, arith.ConstantOp(IntegerAttr(-1, i16)).result).result,
    )
    np.testing.assert_array_equal(run1(module, np.int16([1, 2])), [0, 1])
