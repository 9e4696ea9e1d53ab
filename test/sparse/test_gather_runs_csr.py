"""Gathers coalesced (`sparse-gather-runs`, `SparseNest.runs`): the CSR spmm
row nest with the rows of b from GM and CSR sddmm move a group of 8
consecutive column indices of a row as one DMA of their rows, on the
simulator of both targets. spmm stays exact (the entries take their rows of
the run tile in entry order): equal to the tv reference and to scipy; sddmm
within its bound, and the same bits with the runs on and off. Patterns: the
usual ones (random, empty rows, all empty, one dense row, a single nonzero,
nnz = rows x cols, power-law), banded rows (runs of every length), odd
shapes, a row longer than a window of 64 (runs up to and across its end),
rows divided over the cores (tiny), a column tile that does not divide N
(runs refused, still exact), rows of 24 columns padded to 32 in ub (the
padding never read)."""

from __future__ import annotations

import numpy as np
import pytest
from sparse_patterns import ODD_SHAPES, PATTERNS, banded
from test_sparse_lowering import (
    TARGETS,
    _rng,
    _sparse,
    sddmm_module,
    spmm_module,
)

from pypto_mlir.check import compare_levels, lower
from pypto_mlir.pipelines import LowerPipeline

RUN_PATTERNS = {**PATTERNS, "banded": banded}

GM_ROWS = {
    "sparse_resident_b": False,
    "sparse_b_ranges": False,
    "sparse_dense_fallback": False,
}
"""The CSR spmm nest that gathers the rows of b from GM."""


def _run(module, inputs: list, target: str, **options) -> list[np.ndarray]:
    """The outputs on the simulator, each checked against the tv reference
    (exactly where `exact`)."""
    exact = options.pop("exact", True)
    lowered = lower(module, "ascend_hw", LowerPipeline(target=target, **options))
    outputs = []
    for comparison in compare_levels(module, lowered, "f", inputs):
        if exact:
            np.testing.assert_array_equal(comparison.actual, comparison.expected)
        else:
            assert comparison.ok, comparison.describe()
        outputs.append(np.asarray(comparison.actual))
    return outputs


def _spmm(shape: tuple[int, int], n: int, pattern: str, target: str, **options):
    rng = _rng("gather-runs-spmm", shape, n, pattern, target)
    a = RUN_PATTERNS[pattern](shape, rng)
    a.data = a.data.astype(np.float16).astype(np.float32)
    b = rng.standard_normal((shape[1], n)).astype(np.float16)
    module = spmm_module(*shape, n, "f16")
    (got,) = _run(module, [_sparse(a, "f16"), b], target, **GM_ROWS, **options)
    expected = (a @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(got, expected)  # scipy's entry order, exact
    return module


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", sorted(RUN_PATTERNS))
def test_spmm_gather_runs(pattern: str, target: str) -> None:
    module = _spmm((40, 80), 32, pattern, target)
    tiled = str(lower(module, "tile", LowerPipeline(target=target, **GM_ROWS)))
    assert "x32xf16, ub>, !tile.tile<64xi32, ub> -> !tile.tile<1x32xf16" in tiled


@pytest.mark.parametrize("shape", ODD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_spmm_gather_runs_odd_shapes(shape: tuple[int, int]) -> None:
    _spmm(shape, 16, "banded", "ascend910b")


def test_spmm_gather_runs_across_windows() -> None:
    """A row of 150 consecutive entries: windows of 64 (runs up to each
    window's end, the rest alone), and its neighbours' runs."""
    _spmm((9, 150), 32, "one_dense_row", "ascend910b")
    _spmm((9, 150), 32, "full", "tiny")


def test_spmm_gather_runs_column_tiles() -> None:
    """Column tiles of 16: runs where they divide N (32), refused where they
    do not (40: the remark says so); exact both ways."""
    _spmm((24, 60), 32, "banded", "tiny", sparse_tile_cols=16)
    _spmm((24, 60), 40, "banded", "tiny", sparse_tile_cols=16)


@pytest.mark.parametrize("target", TARGETS)
def test_spmm_gather_runs_padded_rows(target: str) -> None:
    """N = 24: a run tile's rows are 24 f16 DMAed into ub rows of 32, whose
    padding no instruction writes; each entry's `tile.gather` copies the 24
    valid columns only (it read the padding: an `UninitializedReadError` on
    the simulator, test_sparse_lowering's spmm on the simulator). One core
    (nnz-balance=false: the lowering in a second)."""
    _spmm((8, 24), 24, "banded", target, sparse_nnz_balance=False)


def test_sddmm_gather_runs_padded_rows() -> None:
    """K = 24 (rows of k padded to 32 in ub): the same bits on and off (one
    core)."""
    rng = _rng("gather-runs-sddmm-padded")
    mask = banded((8, 24), rng)
    q = rng.standard_normal((8, 24)).astype(np.float16)
    k = rng.standard_normal((24, 24)).astype(np.float16)
    module = sddmm_module(8, 24, 24, "f16")
    inputs = [_sparse(mask, "f16"), q, k]
    one = {"exact": False, "sparse_nnz_balance": False}
    on = _run(module, inputs, "ascend910b", **one)
    off = _run(module, inputs, "ascend910b", **one, sparse_gather_runs=False)
    for got, expected in zip(on, off, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_spmm_gather_runs_off_gathers_nothing() -> None:
    module = spmm_module(40, 80, 32, "f16")
    off = LowerPipeline(target="ascend910b", sparse_gather_runs=False, **GM_ROWS)
    assert "tile.gather" not in str(lower(module, "tile", off))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", sorted(RUN_PATTERNS))
def test_sddmm_gather_runs(pattern: str, target: str) -> None:
    """Within the bound of the tv reference, the same bits on and off."""
    shape, depth = (24, 100), 32
    rng = _rng("gather-runs-sddmm", pattern, target)
    mask = RUN_PATTERNS[pattern](shape, rng)
    q = rng.standard_normal((shape[0], depth)).astype(np.float16)
    k = rng.standard_normal((shape[1], depth)).astype(np.float16)
    module = sddmm_module(*shape, depth, "f16")
    inputs = [_sparse(mask, "f16"), q, k]
    on = _run(module, inputs, target, exact=False)
    off = _run(module, inputs, target, exact=False, sparse_gather_runs=False)
    for got, expected in zip(on, off, strict=True):
        np.testing.assert_array_equal(got, expected)
