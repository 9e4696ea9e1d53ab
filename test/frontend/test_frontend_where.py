"""pto.where and comparisons of tensors (tv.select, tile.select, vcmp + vselect)
end to end against np.where: every predicate and element type on the reference
and on the simulated chips of both targets, odd shapes with NaN and -0.0
inputs, broadcast and scalar operands, a fused chain with a reduction after it,
and the errors of a comparison used as anything but a condition."""

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.context import Context

import pypto_mlir as pto
from pypto_mlir.frontend.backends import sim_backend
from pypto_mlir.passes.tv_to_tile import TvToTilePass

BACKENDS = ["reference", "sim", sim_backend("tiny")]
DTYPES = {"f16": pto.f16, "bf16": pto.bf16, "f32": pto.f32, "i32": pto.i32}
NUMPY = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "i32": np.int32}
SHAPE = (37, 129)


def _all_predicates(dtype: pto.DType) -> pto.Kernel:
    out = pto.Tensor[SHAPE, dtype]

    @pto.kernel
    def predicates(
        a: pto.Tensor[SHAPE, dtype], b: pto.Tensor[SHAPE, dtype]
    ) -> tuple[out, out, out, out, out, out]:
        return (
            pto.where(a < b, a, b),
            pto.where(a <= b, a, b),
            pto.where(a > b, a, b),
            pto.where(a >= b, a, b),
            pto.where(a == b, b, a),
            pto.where(a != b, b, a),
        )

    return predicates


def _inputs(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Values that tie often, with NaN, -0.0 against 0.0 and infinities."""
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, SHAPE).astype(np.float64)
    b = rng.integers(-3, 4, SHAPE).astype(np.float64)
    if name != "i32":
        a[0, :8] = [np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan, 1.5, -0.0]
        b[0, :8] = [1.0, 0.0, -0.0, np.inf, 2.0, np.nan, np.nan, -0.0]
        a[5] += 0.25
    dtype = NUMPY[name]
    if name == "bf16":  # bf16 values (these are exact), stored as f32
        return a.astype(np.float32), b.astype(np.float32)
    return a.astype(dtype), b.astype(dtype)


def _same(actual: np.ndarray, expected: np.ndarray) -> None:
    """Bit for bit (a select copies one of its operands): NaN and the sign of
    zero included."""
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(
        actual.view(f"u{actual.itemsize}"), expected.view(f"u{expected.itemsize}")
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(DTYPES))
def test_every_predicate_against_np_where(name: str, backend: str) -> None:
    a, b = _inputs(name)
    results = _all_predicates(DTYPES[name])(a, b, backend=backend)
    expected = (
        np.where(a < b, a, b),
        np.where(a <= b, a, b),
        np.where(a > b, a, b),
        np.where(a >= b, a, b),
        np.where(a == b, b, a),
        np.where(a != b, b, a),
    )
    for actual, wanted in zip(results, expected, strict=True):
        _same(actual, wanted)


@pto.kernel
def leaky_relu_rows(x: pto.Tensor[SHAPE, pto.f32]) -> pto.Tensor[(37,), pto.f32]:
    return pto.where(x > 0, x, x * 0.01).sum(axis=1)


@pto.kernel
def leaky_relu_f16(x: pto.Tensor[SHAPE, pto.f16]) -> pto.Tensor[SHAPE, pto.f16]:
    return pto.where(x >= 0.0, x, x * 0.125)


@pytest.mark.parametrize("backend", BACKENDS)
def test_leaky_relu_then_a_row_sum(backend: str) -> None:
    x = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    x[2, 3] = -0.0
    expected = np.where(x > 0, x, x * np.float32(0.01)).astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(
        leaky_relu_rows(x, backend=backend), expected, rtol=1e-5, atol=1e-5
    )
    y = np.random.default_rng(2).standard_normal(SHAPE).astype(np.float16)
    y[0, :3] = [-0.0, np.nan, -np.inf]
    _same(
        leaky_relu_f16(y, backend=backend), np.where(y >= 0, y, y * np.float16(0.125))
    )


def test_leaky_relu_is_one_loop_nest() -> None:
    """The select fuses with the multiply before it and the sum after it."""
    assert "tv.select gt" in leaky_relu_rows.mlir()
    module = leaky_relu_rows.module()
    TvToTilePass(target="ascend910b").apply(Context(), module)
    lowered = str(module)
    assert "tile.select gt" in lowered
    assert "tile.reduce_sum" in lowered
    assert lowered.count("tile.store") == 1, lowered


@pto.kernel
def broadcast_select(
    x: pto.Tensor[(19, 70), pto.f32],
    threshold: pto.Tensor[(19, 1), pto.f32],
    fallback: pto.Tensor[(70,), pto.i32],
    ids: pto.Tensor[(19, 70), pto.i32],
) -> tuple[pto.Tensor[(19, 70), pto.i32], pto.Tensor[(19, 70), pto.f32]]:
    return pto.where(x >= threshold, ids, fallback), pto.where(x != 0.5, 2.0, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_broadcast_and_scalar_operands(backend: str) -> None:
    """A [M, 1] threshold, a row of fallbacks, an f32 compare selecting i32
    values (both 32-bit), numbers as rhs and as a branch."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, (19, 70)).astype(np.float32) / 2
    threshold = rng.integers(0, 4, (19, 1)).astype(np.float32) / 2
    fallback = rng.integers(-100, 100, 70).astype(np.int32)
    ids = rng.integers(-100, 100, (19, 70)).astype(np.int32)
    picked, constant = broadcast_select(x, threshold, fallback, ids, backend=backend)
    _same(picked, np.where(x >= threshold, ids, fallback))
    _same(constant, np.where(x != 0.5, np.float32(2.0), x))


@pto.kernel
def clamp_below(
    x: pto.Tensor[(9, 40), pto.f16], floor: pto.f32
) -> pto.Tensor[(9, 40), pto.f16]:
    return pto.where(x < floor, floor, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_parameter_operands(backend: str) -> None:
    """A scalar parameter on the right of the compare and as a branch: filled
    to the tensor's shape and dtype (f16 here)."""
    x = np.linspace(-2, 2, 360, dtype=np.float16).reshape(9, 40)
    floor = np.float16(-0.5)
    _same(clamp_below(x, -0.5, backend=backend), np.where(x < floor, floor, x))


Body = Callable[[pto.Tensor, pto.Tensor], object]

ERRORS: list[tuple[Body, str]] = [
    (lambda x, n: x < 1.0, "usable only as the condition of pto.where"),
    (lambda x, n: (x < 1.0) + x, "usable only as the condition of pto.where"),
    (lambda x, n: x * (x > 0), "usable only as the condition of pto.where"),
    (lambda x, n: x if x > 0 else x, "usable only as the condition of pto.where"),
    (lambda x, n: pto.exp(x > 0), "pto.exp: a comparison of tensors is usable only"),
    (lambda x, n: pto.where(x, x, x), "the condition must be a comparison of tensors"),
    (lambda x, n: pto.where(x > 0, x, n), "dtype mismatch in 'pto.where': f16 and i32"),
    (lambda x, n: pto.where(x > 0, x, x > 1), "usable only as the condition"),
    (lambda x, n: pto.where(n > 0.5, n, n), "float constant 0.5 cannot be used"),
    (
        lambda x, n: pto.where(x > 0, n, n),
        "the compared type f16 and the selected type i32 differ in width",
    ),
    (lambda x, n: pto.where(x > x[0:2], x, x), "shape mismatch in 'pto.where'"),
]


@pytest.mark.parametrize(
    ("body", "message"), ERRORS, ids=[message for _, message in ERRORS]
)
def test_errors_at_the_call_site(body: Body, message: str) -> None:
    @pto.kernel
    def bad(x: pto.Tensor[(4, 8), pto.f16], n: pto.Tensor[(4, 8), pto.i32]):
        return body(x, n)

    with pytest.raises(pto.KernelError, match=message):
        bad.mlir()


def test_numpy_comparison_with_a_tensor_is_a_condition() -> None:
    @pto.kernel
    def flipped(x: pto.Tensor[(4, 8), pto.f32]) -> pto.Tensor[(4, 8), pto.f32]:
        return pto.where(np.float32(0) < x, x, 0.0)

    x = np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8)
    _same(flipped(x, backend="reference"), np.where(x > 0, x, np.float32(0)))


def test_where_is_documented() -> None:
    assert "where" in pto.__all__
    assert pto.where.__doc__
