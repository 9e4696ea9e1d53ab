"""The CSR nests that build result tiles with `tile.insert`
(passes/csr_entry_nests.py) on the simulator of both targets against the tv
reference (and so scipy, test_sparse_numerics.py): to_dense by rows built in
ub; with index prefetch and the nnz-balanced core split and without each,
and with entry-insert off; the patterns
that break sparse code (empty rows, all empty, one dense row, a single
nonzero, nnz = rows x cols, odd shapes, power-law rows)."""

from __future__ import annotations

import numpy as np
import pytest
from sparse_patterns import ODD_SHAPES, PATTERNS
from test_sparse_lowering import TARGETS, _check_hw, _rng, _sparse, dense_module

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
