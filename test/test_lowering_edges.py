"""Kernels at the edges of the lowering, each once a defect (most found by
test/test_lowering_fuzz.py): Python kernels lowered by `pypto-lower` for
ascend910b and tiny, simulated and compared with the tv reference within the
documented tolerances (`pypto_mlir.check`).

No `from __future__ import annotations`: the kernels' annotations use local shapes.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func

import pypto_mlir as pto
from pypto_mlir.check import check_lowering
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.pipelines import LowerPipeline

TARGETS = ("ascend910b", "tiny")


def check_kernel(kernel: Any, *inputs: Any, level: str = "ascend_hw") -> None:
    """`kernel` lowers for both targets and agrees with the tv reference."""
    module = kernel.module()
    name = next(op.sym_name.data for op in module.walk() if isinstance(op, func.FuncOp))
    for target in TARGETS:
        with diagnostic_handler(lambda _: None):
            result = check_lowering(
                module, name, list(inputs), level, LowerPipeline(target=target)
            )
        problems = [c.describe() for c in result.comparisons if not c.ok]
        assert not problems, f"{target}: {problems}"


def arange(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) % 23 - 11).reshape(shape).astype(dtype)


def f32_kernel(shape: tuple[int, ...], body: Callable[[Any], Any]) -> Any:
    @pto.kernel(backend="reference")
    def kernel(x: pto.Tensor[shape, pto.f32]):
        return body(x)

    return kernel


# --------------------------------------------------------------------------------------
# Views: columns of a matrix, strided single columns
# --------------------------------------------------------------------------------------

COLUMN_VIEWS: dict[str, tuple[tuple[int, ...], Callable[[Any], Any]]] = {
    "first column of 2x2": ((2, 2), lambda x: x[:, :1] + 0.0),
    "every other column of 2x1": ((2, 1), lambda x: x[:, ::2] + 0.0),
    "a column far apart": ((37, 70), lambda x: pto.exp(x[:, 5:6] * 0.1)),
    "a column of every third row": ((50, 9), lambda x: x[1::3, -1:] * 2.0),
    "a picked column": ((33, 17), lambda x: x[:, 3] - 1.0),
    "transpose (1, 0, 2) of 3x2x1": ((3, 2, 1), lambda x: x.transpose(1, 0, 2)),
}


@pytest.mark.parametrize("case", list(COLUMN_VIEWS))
def test_column_views(case: str) -> None:
    shape, body = COLUMN_VIEWS[case]
    check_kernel(f32_kernel(shape, body), arange(shape))


# --------------------------------------------------------------------------------------
# Transposes of rows and columns
# --------------------------------------------------------------------------------------

TRANSPOSES: dict[str, tuple[tuple[int, ...], Callable[[Any], Any]]] = {
    "row (1, 2)": ((1, 2), lambda x: x.T),
    "column (5, 1)": ((5, 1), lambda x: x.T),
    "(1, 70)": ((1, 70), lambda x: x.T * 2.0),
    "(1, 1, 7) to (7, 1, 1)": ((1, 1, 7), lambda x: x.transpose(2, 0, 1)),
    "(3, 1, 9) by (2, 1, 0)": ((3, 1, 9), lambda x: x.T),
    "broadcast against a transposed row": ((1, 8), lambda x: x.T + x[0, :3]),
}


TRANSPOSES["a transposed f16 tile, then an i8 cast"] = (
    (25, 16),
    lambda x: x.astype(pto.f16).T.astype(pto.i8),
)


@pytest.mark.parametrize("case", list(TRANSPOSES))
def test_transposes_of_rows_and_columns(case: str) -> None:
    shape, body = TRANSPOSES[case]
    check_kernel(f32_kernel(shape, body), arange(shape))


# --------------------------------------------------------------------------------------
# Casts between every pair of dtypes
# --------------------------------------------------------------------------------------

DTYPES = {d.name: d for d in (pto.f16, pto.bf16, pto.f32, pto.i8, pto.i16, pto.i32)}


def cast_inputs(dtype: str, count: int) -> np.ndarray:
    """Values at the edges of every conversion: halves (ties), the limits of the
    integer types, out-of-range values, infinities and NaN; then random ones."""
    rng = np.random.default_rng(7)
    numpy_dtype = DTYPES[dtype].numpy_dtype
    if DTYPES[dtype].is_float:
        edges = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 127.9, 128.0, -128.5, -129.0]
        edges += [255.7, 300.2, -3e4, 32767.5, 32768.0, -32769.0, 65000.0]
        edges += [3e9, -3e9, np.inf, -np.inf, np.nan]
        if dtype == "f16":
            edges = [e for e in edges if not abs(e) > 65504 or not np.isfinite(e)]
        values = np.array(edges + list(rng.uniform(-300, 300, count)))
    else:
        info = np.iinfo(numpy_dtype)
        edges = [0, 1, -1, int(info.min), int(info.max), 127, 128, -128, -129, 255]
        edges += [256, 2**15, -(2**15) - 1, 2**25 + 2**17 + 1, -(2**25 + 2**17 + 1)]
        edges += [2**24 + 1, 2**31 - 1]
        edges = [e for e in edges if info.min <= e <= info.max]
        values = np.array(edges + list(rng.integers(info.min, info.max, count)))
    return values.astype(numpy_dtype)


@pytest.mark.parametrize("source", list(DTYPES))
@pytest.mark.parametrize("dest", list(DTYPES))
def test_casts(source: str, dest: str) -> None:
    """Every pair rounds (float), saturates (float -> int) and wraps (int -> int)
    exactly as tv.cast does, on a row and on rows with a pitch."""
    if source == dest:
        return
    values = cast_inputs(source, 90)
    for shape in ((len(values),), (3, len(values) // 3)):

        @pto.kernel(backend="reference")
        def convert(x: pto.Tensor[shape, DTYPES[source]]):
            return x.astype(DTYPES[dest])

        check_kernel(convert, values[: int(np.prod(shape))].reshape(shape))


# --------------------------------------------------------------------------------------
# Rank 0
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "i16", "i32"])
def test_rank0_tensors(dtype: str) -> None:
    """A sum over every dim and a rank-0 argument (bf16 ones were left as poison:
    the simulator's GM wrote to a copy of a rank-0 bf16 array)."""

    @pto.kernel(backend="reference")
    def total(x: pto.Tensor[(13, 3), DTYPES[dtype]], s: pto.Tensor[(), DTYPES[dtype]]):
        return x.sum() + s, -s

    check_kernel(
        total,
        arange((13, 3), DTYPES[dtype].numpy_dtype),
        np.asarray(2, DTYPES[dtype].numpy_dtype),
    )


# --------------------------------------------------------------------------------------
# Integer reductions
# --------------------------------------------------------------------------------------

INT_REDUCTIONS = [
    ((70,), None),
    ((1,), None),
    ((5, 70), 1),
    ((33, 17), 1),
    ((64, 8), 1),
    ((3, 9), 0),
    ((65, 1), 0),
    ((3, 129), 1),
    ((2, 5, 7), 2),
    ((200,), 0),
]


@pytest.mark.parametrize("dtype", ["i8", "i16", "i32"])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize(("shape", "axis"), INT_REDUCTIONS)
def test_integer_reductions(
    dtype: str, kind: str, shape: tuple[int, ...], axis: int | None
) -> None:
    """vreduce is float-only: integer rows are folded into a block, transposed
    and combined pairwise (sums wrap, as in tv)."""
    rng = np.random.default_rng(3)
    info = np.iinfo(DTYPES[dtype].numpy_dtype)

    @pto.kernel(backend="reference")
    def reduce(x: pto.Tensor[shape, DTYPES[dtype]]):
        return getattr(x, kind)(axis=axis, keepdims=True), getattr(x, kind)()

    values = rng.integers(info.min, info.max, shape, endpoint=True)
    check_kernel(reduce, values.astype(DTYPES[dtype].numpy_dtype))


# --------------------------------------------------------------------------------------
# 8-bit tensors (the vector unit moves 16/32-bit elements)
# --------------------------------------------------------------------------------------

I8_KERNELS: dict[str, tuple[tuple[int, ...], Callable[[Any, Any], Any]]] = {
    "fill": ((5, 40), lambda x, s: pto.full((5, 40), -7, pto.i8) + x),
    "a full row": ((5, 40), lambda x, s: pto.minimum(x, pto.full((40,), 3, pto.i8))),
    "a full element": ((35,), lambda x, s: pto.minimum(x, pto.full((1,), -7, pto.i8))),
    "scalar argument": ((5, 40), lambda x, s: x * s),
    "scalar argument first": ((5, 40), lambda x, s: s - x),
    "transpose": ((3, 20), lambda x, s: x.T),
    "transpose of a row": ((1, 20), lambda x, s: x.T),
    "transposes, a row at a time on tiny": ((16, 15), lambda x, s: x.T),
    "a 3-d transpose": ((5, 33, 17), lambda x, s: x.T),
    "a transpose, then a reduction": ((17, 16), lambda x, s: x.T.max(axis=1)),
    "arithmetic, then a transpose": ((15, 29), lambda x, s: (x - s).T.max(axis=0)),
    "a large product": ((70, 70), lambda x, s: x * x + 3),
    "every third column": ((32, 22), lambda x, s: x[2:19:3, -6:21:3]),
    "a column": ((32, 22), lambda x, s: x[:, 5:6]),
    "a column, then arithmetic": ((32, 22), lambda x, s: x[:, 5:6] + 1),
    "a column broadcast": ((5, 40), lambda x, s: x + x[:, :1]),
    "neg, abs, relu": ((5, 40), lambda x, s: (-x, abs(x), pto.relu(x))),
}


@pytest.mark.parametrize("case", list(I8_KERNELS))
def test_i8_kernels(case: str) -> None:
    shape, body = I8_KERNELS[case]

    @pto.kernel(backend="reference")
    def kernel(x: pto.Tensor[shape, pto.i8], s: pto.i8):
        return body(x, s)

    values = np.random.default_rng(5).integers(-128, 128, shape).astype(np.int8)
    check_kernel(kernel, values, -3)
    check_kernel(kernel, values, -3, level="tile")  # arith.extsi of the i8 scalar


# --------------------------------------------------------------------------------------
# Transposed matmul operands
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "i8"])
@pytest.mark.parametrize(
    ("transpose_a", "transpose_b"), [(True, False), (False, True), (True, True)]
)
@pytest.mark.parametrize("mkn", [(2, 18, 38), (33, 70, 17), (1, 1, 1)])
def test_transposed_matmul_operands(
    dtype: str, transpose_a: bool, transpose_b: bool, mkn: tuple[int, int, int]
) -> None:
    """load_l0 transposes 16-bit fractals only: an f32 operand with a flag is
    transposed by a vector nest into GM first (it was refused)."""
    m, k, n = mkn
    a_shape = (k, m) if transpose_a else (m, k)
    b_shape = (n, k) if transpose_b else (k, n)

    @pto.kernel(backend="reference")
    def mm(
        a: pto.Tensor[a_shape, DTYPES[dtype]], b: pto.Tensor[b_shape, DTYPES[dtype]]
    ):
        return pto.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)

    rng = np.random.default_rng(m + k + n)
    numpy_dtype = DTYPES[dtype].numpy_dtype
    a = rng.integers(-4, 5, a_shape).astype(numpy_dtype)
    b = rng.integers(-4, 5, b_shape).astype(numpy_dtype)
    check_kernel(mm, a, b)


def test_a_matmul_epilogue_that_does_not_fit_is_a_nest_of_its_own() -> None:
    """An i8 matmul's 32x32 i32 block fills tiny's UB: its epilogue was refused."""

    @pto.kernel(backend="reference")
    def mm(
        a: pto.Tensor[(64, 33), pto.i8],
        b: pto.Tensor[(33, 13), pto.i8],
        y: pto.Tensor[(64, 13), pto.i32],
        z: pto.Tensor[(1, 13), pto.i32],
    ):
        c = a @ b
        return z + pto.minimum(y, c * 2), c

    rng = np.random.default_rng(0)
    shapes = [(64, 33), (33, 13), (64, 13), (1, 13)]
    types = [np.int8, np.int8, np.int32, np.int32]
    check_kernel(
        mm,
        *(
            rng.integers(-100, 100, s).astype(t)
            for s, t in zip(shapes, types, strict=True)
        ),
    )


def test_an_i8_epilogue_after_an_f32_matmul() -> None:
    """Base blocks of 16 f32 columns are too narrow for i8 tile rows (32 bytes):
    the epilogue's cast was refused by the tile verifier."""

    @pto.kernel(backend="reference")
    def mm(
        a: pto.Tensor[(17, 8), pto.f32],
        b: pto.Tensor[(8, 2), pto.f32],
        s: pto.Tensor[(), pto.f32],
    ):
        return ((a @ b) - s).astype(pto.i8), a

    rng = np.random.default_rng(0)
    a = rng.integers(-4, 4, (17, 8)).astype(np.float32)
    b = rng.integers(-4, 4, (8, 2)).astype(np.float32)
    check_kernel(mm, a, b, np.asarray(1.5, np.float32))


def test_a_single_buffered_matmul_holds_two_skewed_steps_in_l0() -> None:
    """On tiny an f32 matmul with a cast epilogue falls back to single
    buffering; its L1 chunks of two cube steps keep both steps' L0A tiles live
    (the skew), which the model counted once (the memory plan refused it)."""

    @pto.kernel(backend="reference")
    def mm(a: pto.Tensor[(63, 64), pto.f32], b: pto.Tensor[(64, 16), pto.f32]):
        return (a @ b).astype(pto.f16)

    rng = np.random.default_rng(2)
    a = rng.integers(-3, 3, (63, 64)).astype(np.float32)
    check_kernel(mm, a, rng.integers(-3, 3, (64, 16)).astype(np.float32))


def test_pipelined_matmul_accumulators_fit_l0c() -> None:
    """tile-pipeline counted an accumulator's l0c tile only up to the next K
    step's matmul, so two copies of a 32x32 block were planned in tiny's l0c."""

    @pto.kernel(backend="reference")
    def chained(
        a: pto.Tensor[(64, 1), pto.f16],
        b: pto.Tensor[(47, 1), pto.f16],
        c: pto.Tensor[(47, 70), pto.f16],
    ):
        return pto.matmul(pto.matmul(a, b, transpose_b=True), c, out_dtype=pto.bf16)

    @pto.kernel(backend="reference")
    def batched(a: pto.Tensor[(7, 7, 33), pto.i8], b: pto.Tensor[(7, 33, 42), pto.i8]):
        return pto.full((7, 7, 33), -3, pto.i8) @ b + a.astype(pto.i32).sum(
            axis=2, keepdims=True
        )

    rng = np.random.default_rng(4)
    check_kernel(
        chained,
        *(
            rng.integers(-3, 3, s).astype(np.float16)
            for s in ((64, 1), (47, 1), (47, 70))
        ),
    )
    check_kernel(
        batched,
        rng.integers(-50, 50, (7, 7, 33)).astype(np.int8),
        rng.integers(-50, 50, (7, 33, 42)).astype(np.int8),
    )


@pytest.mark.parametrize(("shape", "axis"), [((47, 32), 0), ((4, 200), 1), ((300,), 0)])
def test_f16_sums_do_not_overflow_in_partial_sums(
    shape: tuple[int, ...], axis: int
) -> None:
    """Columns were summed pairwise in f16 (and long rows combined in f16):
    partial sums of +-1000s overflowed to infinity where tv's f32 sum is small."""

    @pto.kernel(backend="reference")
    def sums(x: pto.Tensor[shape, pto.f16]):
        return x.sum(axis=axis), x.mean(axis=axis, keepdims=True)

    index = np.indices(shape)[axis]
    if axis == 0 and len(shape) == 2:  # rows i and i + 24 are added first
        values = np.where(index % 2 == 0, 40000.0, -40000.0)
    else:  # the first 128 of a row are one partial sum
        values = np.where(index < 128, 600.0, -600.0)
    check_kernel(sums, values.astype(np.float16))


def test_tanh_near_zero_within_the_error_bound() -> None:
    """tile-to-hw evaluates tanh as 2 / (1 + e^-2x) - 1, accurate near 0 in
    absolute terms only: the check's error bound counts the rounding of that
    last step at magnitude |tanh x| + 1 (an f16 tanh of means near 0, cast to
    f32, was reported outside the tolerance)."""

    @pto.kernel(backend="reference")
    def small(x: pto.Tensor[(39, 13), pto.f16]):
        return pto.tanh(x.mean(axis=1, keepdims=True)).astype(pto.f32)

    values = np.random.default_rng(950220).integers(-16, 17, (39, 13)) / 4.0
    check_kernel(small, values.astype(np.float16))
