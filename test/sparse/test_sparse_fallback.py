"""The dense fallback of CSR spmm (docs/sparse.md, *The dense fallback*): both
paths of the run-time branch on nnz, on the tile interpreter and the simulator,
both targets, against the tv reference. The row nest is exact (the reference's
entry order); the fallback's cube matmul sums K in its own order, so it is
checked within tv.spmm's error bound (1 f16 ulp off in 17 of 131072 elements
at 1024 deep, bench/bench_sparse.py)."""

from __future__ import annotations

import numpy as np
import pytest
from lowered import lower_once
from sparse_patterns import PATTERNS
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from pypto_mlir.check import compare_levels
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.passes.tv_sparse_to_tile import model_densities
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target
from pypto_mlir.tune.space import SpaceContext, _sparse_dense_density
from pypto_mlir.universe import default_context

A = "!tv.tensor<48x40xf16, #tv.csr<rows = 48, cols = 40, nnz = ?, index = i32>>"
SPMM = f"""
func.func @f(%a: {A}, %b: !tv.tensor<40x32xf16>) -> !tv.tensor<48x32xf16> {{
  %c = tv.spmm %a, %b : {A}, !tv.tensor<40x32xf16> -> !tv.tensor<48x32xf16>
  func.return %c : !tv.tensor<48x32xf16>
}}"""

PATHS = {
    "dense": {"sparse_dense_density": 1e-6},  # from one stored entry
    "rows": {"sparse_dense_fallback": False},
    "model": {},
}


def _module() -> ModuleOp:
    return Parser(default_context(), SPMM).parse_module()


@pytest.mark.xdist_group("sparse_fallback")  # one worker: lower_once reuses
@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("pattern", ["random", "all_empty", "full", "power_law"])
def test_both_paths_are_exact(target: str, path: str, pattern: str) -> None:
    rng = np.random.default_rng(len(pattern))
    matrix = PATTERNS[pattern]((48, 40), rng)
    a = SparseArray(
        (48, 40),
        (1, 1),
        matrix.indptr.astype(np.int32),
        matrix.indices.astype(np.int32),
        matrix.data.astype(np.float16),
    )
    b = rng.standard_normal((40, 32)).astype(np.float16)
    module = _module()
    for level in ("tile", "ascend_hw"):
        pipeline = LowerPipeline(target=target, **PATHS[path])
        lowered = lower_once(module, level, pipeline)
        for comparison in compare_levels(module, lowered, "f", [a, b]):
            assert comparison.ok, comparison.describe()
            if path == "rows":
                np.testing.assert_array_equal(comparison.actual, comparison.expected)


def test_the_tuner_searches_around_the_model_threshold() -> None:
    module = _module()
    target = load_target("tiny")
    (density,) = model_densities(module, target)
    assert density is not None and 0 < density < 1
    pipeline = LowerPipeline(target="tiny")
    context = SpaceContext(module, "f", target, pipeline, [], baseline="")
    field = next(
        f
        for f in LowerPipeline.__dataclass_fields__.values()
        if f.name == "sparse_dense_density"
    )
    dimension = _sparse_dense_density(context, field)
    assert dimension is not None and dimension.default == 0.0
    assert dimension.values[0] == 0.0
    assert min(dimension.values[1:]) < density < max(dimension.values[1:])
