"""The order of a float matmul's sums (`numerics.ordered_matmul`): each f32
product added in k order, at every level. BLAS sums in an order that depends on
the CPU's kernel (OpenBLAS on AMD Zen and on older x86 gave different bits), so
results must not come from it; with the order defined, a K split that
accumulates gives the whole sum exactly, and the simulator's mmad matches the
tv reference bit for bit."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from xdsl.parser import Parser

from pypto_mlir.check import compare_levels, lower
from pypto_mlir.numerics import ordered_matmul
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.universe import default_context


def k_ordered(lhs: np.ndarray, rhs: np.ndarray, init: np.ndarray | None) -> np.ndarray:
    """The definition, element by element: acc = acc + lhs[i, k] * rhs[k, j]."""
    m, k = lhs.shape
    n = rhs.shape[1]
    acc = np.zeros((m, n), np.float32) if init is None else init.astype(np.float32)
    for i in range(m):
        for j in range(n):
            total = acc[i, j]
            for step in range(k):
                total = np.float32(total + np.float32(lhs[i, step] * rhs[step, j]))
            acc[i, j] = total
    return acc


SHAPES = [(1, 1, 1), (1, 64, 1), (1, 37, 2), (2, 40, 1), (3, 1, 5), (7, 19, 9)]


@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_the_sum_is_k_ordered(m: int, k: int, n: int, with_init: bool) -> None:
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    # f16 operands spread over magnitudes, so that the order changes the bits
    lhs = (rng.standard_normal((m, k)) * 2.0 ** rng.integers(-8, 8, (m, k))).astype(
        np.float32
    )
    rhs = rng.standard_normal((k, n)).astype(np.float16).astype(np.float32)
    init = rng.standard_normal((m, n)).astype(np.float32) if with_init else None
    got = ordered_matmul(lhs, rhs, init)
    np.testing.assert_array_equal(got, k_ordered(lhs, rhs, init))


def test_a_k_split_continues_the_sum() -> None:
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal((2, 5, 48)).astype(np.float32)  # batched
    rhs = rng.standard_normal((48, 6)).astype(np.float32)
    whole = ordered_matmul(lhs, rhs)
    first = ordered_matmul(lhs[..., :16], rhs[:16])
    second = ordered_matmul(lhs[..., 16:40], rhs[16:40], first)
    np.testing.assert_array_equal(
        ordered_matmul(lhs[..., 40:], rhs[40:], second), whole
    )
    for b in range(2):
        np.testing.assert_array_equal(whole[b], k_ordered(lhs[b], rhs, None))


def test_vector_forms_follow_numpy_shapes() -> None:
    rng = np.random.default_rng(2)
    matrix = rng.standard_normal((4, 7)).astype(np.float32)
    vector = rng.standard_normal(7).astype(np.float32)
    assert ordered_matmul(matrix, vector).shape == (4,)
    assert ordered_matmul(vector, matrix.T).shape == (4,)
    assert np.shape(ordered_matmul(vector, vector)) == ()
    with pytest.raises(ValueError, match="K extents differ"):
        ordered_matmul(matrix, matrix)


MATMUL = """
func.func @f(%a: !tv.tensor<40x300xf16>, %b: !tv.tensor<300x72xf16>) -> !tv.tensor<40x72xf32> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<40x300xf16>, !tv.tensor<300x72xf16> -> !tv.tensor<40x72xf32>
  func.return %c : !tv.tensor<40x72xf32>
}"""


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
def test_the_simulator_matches_the_reference_bit_for_bit(target: str) -> None:
    """K = 300 is several mmad steps accumulating in L0C (several tiles on
    tiny): the same sum, in the same order, as the tv reference's."""
    module = Parser(default_context(), MATMUL).parse_module()
    rng = np.random.default_rng(3)
    inputs = [
        rng.standard_normal((40, 300)).astype(np.float16),
        rng.standard_normal((300, 72)).astype(np.float16),
    ]
    lowered = lower(module, "ascend_hw", LowerPipeline(target=target))
    for comparison in compare_levels(module, lowered, "f", inputs):
        np.testing.assert_array_equal(comparison.actual, comparison.expected)


SCRIPT = """
import numpy as np, sys
from pypto_mlir.interp.tensor_view import matmul
from xdsl.dialects.builtin import f16, f32
rng = np.random.default_rng(4)
a = rng.standard_normal((64, 512)).astype(np.float16)
b = rng.standard_normal((512, 96)).astype(np.float16)
sys.stdout.write(matmul(a, b, f16, f32).tobytes().hex())
"""


def test_the_bits_do_not_depend_on_the_blas_kernel() -> None:
    """The reference under two OpenBLAS kernels (an old x86 one and the one
    this CPU selects) gives the same bytes."""
    outputs = set()
    for coretype in ("Prescott", None):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        env.pop("OPENBLAS_CORETYPE", None)
        if coretype:
            env["OPENBLAS_CORETYPE"] = coretype
        run = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(run.stdout)
    assert len(outputs) == 1
