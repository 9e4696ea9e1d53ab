"""The CSR spmm nest over row ranges of b (passes/csr_spmm_ranges.py) on the
simulator, both targets, against the tv reference (scipy's sum in entry order):
within tv.spmm's error bound (pypto_mlir/error_bound.py), since a row's sum is
split by column range (each range's entries in order, then the ranges'
partials in range order: docs/sparse.md, *Row ranges of b*). The patterns that
break sparse code: empty rows, an empty matrix, a single nonzero, one dense
row, nnz = rows x cols, power-law rows; odd shapes (rows not a multiple of the
combine block, depth not a multiple of the ranges)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sparse_patterns import PATTERNS
from test_sparse_lowering import _rng, _sparse, spmm_module
from xdsl.parser import Parser

import pypto_mlir as pto
from pypto_mlir.check import compare_levels, compare_runs, lower
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.universe import default_context

# Shapes where the row ranges are taken (resident slices off, the choice
# estimated at 50 % density): ascend910b 2 ranges of 500 rows x 12 row groups
# (37 rows: combined a row at a time), tiny 2 ranges of 40 x 1 row group.
SHAPES = {"ascend910b": (37, 1000, 32), "tiny": (40, 80, 16)}
OPTIONS = {
    "sparse_resident_b": False,
    "sparse_b_ranges_density": 0.5,
    "sparse_dense_fallback": False,
}


def _lowered(m: int, k: int, n: int, target: str, **options: object):
    module = spmm_module(m, k, n, "f16")
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        lowered = lower(module, "ascend_hw", LowerPipeline(target=target, **options))
    return module, lowered, remarks


@pytest.mark.parametrize("target", sorted(SHAPES))
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_row_ranges_within_the_bound(pattern: str, target: str) -> None:
    m, k, n = SHAPES[target]
    module, lowered, remarks = _lowered(m, k, n, target, **OPTIONS)
    assert any("row ranges of" in r and "b split into" in r for r in remarks), remarks
    rng = _rng("ranges", pattern, target)
    a = PATTERNS[pattern]((m, k), rng)
    b = rng.standard_normal((k, n)).astype(np.float16)
    for comparison in compare_levels(module, lowered, "f", [_sparse(a, "f16"), b]):
        assert comparison.ok, comparison.describe()


def test_row_ranges_off() -> None:
    """b-ranges=false: the row nest (whole rows here: no sync_all)."""
    m, k, n = SHAPES["ascend910b"]
    _, lowered, remarks = _lowered(
        m,
        k,
        n,
        "ascend910b",
        **{**OPTIONS, "sparse_b_ranges": False, "sparse_divide_rows": False},
    )
    assert any("row ranges of b off (b-ranges=false)" in r for r in remarks)
    assert "sync_all" not in str(lowered)


def test_row_ranges_without_the_offsets_table() -> None:
    """2048 rows x 1440 deep x 128 on ascend910b: 2 ranges of 720 rows of b
    (180 KiB) leave no room for the 8 KiB offsets table, so each block of 4
    rows loads its offsets (and the group search reads them from GM), and its
    entries in a chunk of 128. Rows 0-99 empty, row 100 with 700 entries (more
    than a chunk: per-row windows, several a row), the rest at 0.5 %."""
    m, k, n = 2048, 1440, 128
    options = {**OPTIONS, "sparse_b_ranges_density": 0.01}
    module, lowered, remarks = _lowered(m, k, n, "ascend910b", **options)
    wanted = "the offsets loaded per block of 4 rows, indices and values per block"
    assert any(wanted in r for r in remarks), remarks
    rng = _rng("ranges", "no table")
    dense = sp.random_array(
        (m, k), density=0.005, format="csr", dtype=np.float32, rng=rng
    ).toarray()
    dense[:100] = 0
    dense[100, rng.choice(k, 700, replace=False)] = rng.standard_normal(700)
    a = sp.csr_array(dense.astype(np.float16).astype(np.float32))
    b = rng.standard_normal((k, n)).astype(np.float16)
    for comparison in compare_levels(module, lowered, "f", [_sparse(a, "f16"), b]):
        assert comparison.ok, comparison.describe()


@pytest.mark.parametrize("pattern", ["empty_rows", "power_law"])
def test_row_blocks_store_the_same_partials(pattern: str) -> None:
    """row-block (default 4): 200 x 1000 x 32 on ascend910b, 2 ranges x 12
    row groups, the partial rows stored 4 a DMA from a ub block (the rows
    after a group's last whole block one at a time): within the bound, and
    the same bits as one DMA a row (row-block=0), whose sums are the same.
    About one entry in 8 of the pattern kept (6123 of empty_rows' 50020): the
    blocks are about rows, and each entry is a simulated row update."""
    m, k, n = 200, 1000, 32
    options = {**OPTIONS, "sparse_b_ranges_density": 0.01}
    module, blocked, remarks = _lowered(m, k, n, "ascend910b", **options)
    assert any("partial rows stored 4 at a time" in r for r in remarks), remarks
    _, single, remarks = _lowered(
        m, k, n, "ascend910b", **{**options, "sparse_row_block": 0}
    )
    assert any("partial rows stored one at a time (row-block=0)" in r for r in remarks)
    assert "insert_rows" not in str(single)
    rng = _rng("ranges", "blocks", pattern)
    a = PATTERNS[pattern]((m, k), rng)
    a = sp.csr_array(np.where(rng.random(a.shape) < 0.125, a.toarray(), 0))
    inputs = [_sparse(a, "f16"), rng.standard_normal((k, n)).astype(np.float16)]
    comparisons, run = compare_runs(module, blocked, "f", inputs)
    for comparison in comparisons:
        assert comparison.ok, comparison.describe()
    _, alone = compare_runs(module, single, "f", inputs)
    np.testing.assert_array_equal(run.outputs[0], alone.outputs[0])


@pto.kernel(backend="reference")
def spmm_bias_relu(
    a: pto.CSR[(40, 80), pto.f16],
    b: pto.Tensor[(80, 16), pto.f16],
    bias: pto.Tensor[(16,), pto.f16],
):
    return pto.relu(a @ b + bias)


@pytest.mark.parametrize("target", sorted(SHAPES))
def test_row_ranges_with_an_epilogue(target: str) -> None:
    """relu(a @ b + bias row) applied by the combine to its blocks of rows (40
    x 80 x 16: the tiny shape; on ascend910b 2 ranges of 40 x 12 groups)."""
    module = Parser(default_context(), spmm_bias_relu.mlir()).parse_module()
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        lowered = lower(module, "ascend_hw", LowerPipeline(target=target, **OPTIONS))
    assert any("b split into" in r for r in remarks), remarks
    assert any("fused into the rows" in r for r in remarks), remarks
    rng = _rng("ranges", "epilogue", target)
    a = PATTERNS["empty_rows"]((40, 80), rng)
    b = rng.standard_normal((80, 16)).astype(np.float16)
    bias = rng.standard_normal(16).astype(np.float16)
    for comparison in compare_levels(
        module, lowered, "spmm_bias_relu", [_sparse(a, "f16"), b, bias]
    ):
        assert comparison.ok, comparison.describe()
