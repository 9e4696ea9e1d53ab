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


def check_kernel(kernel: Any, *inputs: Any) -> None:
    """`kernel` lowers for both targets and agrees with the tv reference."""
    module = kernel.module()
    name = next(op.sym_name.data for op in module.walk() if isinstance(op, func.FuncOp))
    for target in TARGETS:
        with diagnostic_handler(lambda _: None):
            result = check_lowering(
                module, name, list(inputs), "ascend_hw", LowerPipeline(target=target)
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


@pytest.mark.parametrize("case", list(TRANSPOSES))
def test_transposes_of_rows_and_columns(case: str) -> None:
    shape, body = TRANSPOSES[case]
    check_kernel(f32_kernel(shape, body), arange(shape))
