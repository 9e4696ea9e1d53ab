"""The CSR nests that build result tiles with `tile.insert`
(passes/csr_entry_nests.py) on the simulator of both targets against the tv
reference (and so scipy, test_sparse_numerics.py): to_dense by rows built in
ub (exact); sddmm by windows of 64 dot products (within the reference's
error bound); softmax split over the cores by whole blocks of entries
(each core computes a straddling row's max and sum over all of it: exact
with the entry windows, within the error bound with the masked windows); with index prefetch and the nnz-balanced core split and without each,
and with entry-insert off; the patterns
that break sparse code (empty rows, all empty, one dense row, a single
nonzero, nnz = rows x cols, odd shapes, power-law rows)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sparse_patterns import ODD_SHAPES, PATTERNS, softmax_rows
from test_sparse_lowering import (
    TARGETS,
    _check_hw,
    _rng,
    _sparse,
    dense_module,
    sddmm_module,
    softmax_module,
)

from pypto_mlir.check import compare_levels, lower
from pypto_mlir.diagnostics import DiagnosticError
from pypto_mlir.pipelines import LowerPipeline

SWITCHES = (
    {},
    {"sparse_index_prefetch": False},
    {"sparse_nnz_balance": False},
    {"sparse_entry_insert": False},
)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_csr_to_dense_rows(pattern: str, target: str) -> None:
    a = PATTERNS[pattern]((40, 80), _rng("to-dense-rows", pattern, target))
    _check_hw(dense_module(40, 80, "f16"), [_sparse(a, "f16")], target)


@pytest.mark.parametrize("shape", ODD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("options", SWITCHES, ids=str)
def test_csr_to_dense_odd_shapes(options: dict, shape: tuple[int, int]) -> None:
    a = PATTERNS["power_law"](shape, _rng("to-dense-odd", shape))
    _check_hw(dense_module(*shape, "f32"), [_sparse(a, "f32")], "ascend910b", **options)
    expected = a.toarray()
    assert np.isfinite(expected).all()


def _check_sddmm(
    shape: tuple[int, int], depth: int, pattern: str, target: str, **options
) -> None:
    rng = _rng("sddmm-windows", shape, depth, pattern)
    mask = PATTERNS[pattern](shape, rng)
    q = rng.standard_normal((shape[0], depth)).astype(np.float16)
    k = rng.standard_normal((shape[1], depth)).astype(np.float16)
    module = sddmm_module(shape[0], shape[1], depth, "f16")
    lowered = lower(module, "ascend_hw", LowerPipeline(target=target, **options))
    inputs = [_sparse(mask, "f16"), q, k]
    for comparison in compare_levels(module, lowered, "f", inputs):
        assert comparison.ok, comparison.describe()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_csr_sddmm_windows(pattern: str, target: str) -> None:
    """Rows straddling windows and cores, the last nnz mod 64 entries alone."""
    _check_sddmm((24, 40), 40, pattern, target)


@pytest.mark.parametrize("options", SWITCHES, ids=str)
@pytest.mark.parametrize("shape", ODD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_csr_sddmm_switches(shape: tuple[int, int], options: dict) -> None:
    _check_sddmm(shape, 24, "power_law", "ascend910b", **options)


def test_csr_sddmm_k_in_column_tiles() -> None:
    """K wider than a tile (sparse-tile-cols=16): q's row per column tile."""
    _check_sddmm((12, 30), 40, "full", "tiny", sparse_tile_cols=16)


def _check_softmax(
    shape: tuple[int, int], a, element_type: str, target: str, **options
) -> None:
    """Exact with the entry windows (`sparse_masked_window=0`: the sum in the
    reference's entry order); within the reference's error bound with the
    masked windows (the sum by windows, rescaled)."""
    module = softmax_module(*shape, element_type)
    lowered = lower(module, "ascend_hw", LowerPipeline(target=target, **options))
    inputs = [_sparse(a, element_type)]
    for comparison in compare_levels(module, lowered, "f", inputs):
        assert comparison.ok, comparison.describe()
        if options.get("sparse_masked_window") == 0:
            np.testing.assert_array_equal(comparison.actual, comparison.expected)


@pytest.mark.parametrize("masked", [64, 0])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_csr_softmax_split(pattern: str, target: str, masked: int) -> None:
    """Rows straddling cores (one dense row, full: every core shares rows)."""
    a = PATTERNS[pattern]((30, 50), _rng("softmax-split", pattern, target))
    _check_softmax((30, 50), a, "f16", target, sparse_masked_window=masked)


@pytest.mark.parametrize("window", [1, 4, 8])
@pytest.mark.parametrize("options", SWITCHES, ids=str)
@pytest.mark.parametrize("shape", ODD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_csr_softmax_split_switches(
    shape: tuple[int, int], options: dict, window: int
) -> None:
    a = PATTERNS["power_law"](shape, _rng("softmax-odd", shape))
    _check_softmax(shape, a, "f32", "ascend910b", sparse_entry_window=window, **options)


def _rising(shape: tuple[int, int], rng: np.random.Generator):
    """One dense row whose values rise along it (each later window raises the
    max: the sum is rescaled), among power-law rows."""
    a = PATTERNS["power_law"](shape, rng).tolil()
    row = shape[0] // 2
    a[row, :] = np.linspace(-4.0, 6.0, shape[1])
    return a.tocsr()


MASKED_CASES = {
    **{name: PATTERNS[name] for name in ("full", "power_law", "one_dense_row")},
    "rising": _rising,
}


@pytest.mark.parametrize("element_type", ["f16", "f32"])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(MASKED_CASES))
def test_csr_softmax_masked_windows(case: str, target: str, element_type: str) -> None:
    """Rows of several 64-entry windows (the max raised window by window),
    cores of many windows (full: whole-window stores, the last < 64 entries
    of a core exact), the last window of the values loaded from nnz - 64:
    within the error bound of the tv reference, and of scipy's."""
    shape = (45, 300)
    a = MASKED_CASES[case](shape, _rng("softmax-masked", case, target))
    assert a.nnz >= 64 and np.diff(a.indptr).max() > 64
    module = softmax_module(*shape, element_type)
    lowered = lower(module, "ascend_hw", LowerPipeline(target=target))
    assert "ascend_hw.vselect" in str(lowered)
    sparse = _sparse(a, element_type)
    (comparison,) = compare_levels(module, lowered, "f", [sparse])
    assert comparison.ok, comparison.describe()
    expected = softmax_rows(
        sp.csr_array((sparse.values.astype(np.float64), a.indices, a.indptr), shape)
    )
    got = sp.csr_array(
        (comparison.actual.astype(np.float64), a.indices, a.indptr), shape
    ).toarray()
    tolerance = 2e-3 if element_type == "f16" else 1e-5
    np.testing.assert_allclose(got, expected, atol=tolerance, rtol=tolerance)


@pytest.mark.parametrize("width", [-16, 24, 8])
def test_a_masked_window_of_part_blocks_is_refused(width: int) -> None:
    """f16 values and f32 work tiles: a window is a multiple of 16 entries
    (whole 32-byte blocks of both), or 0 (off)."""
    with pytest.raises(DiagnosticError, match="masked-window must be 0 or a positive"):
        lower(
            softmax_module(30, 50, "f16"),
            "tile",
            LowerPipeline(target="ascend910b", sparse_masked_window=width),
        )
