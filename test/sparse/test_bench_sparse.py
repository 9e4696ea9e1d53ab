"""bench/bench_sparse.py's `simulate` on small kernels: the bench prints
without asserts, so a kernel shape it stops handling (a sparse result's values
buffer, the roofline from the run's pattern) shows only here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import scipy.sparse as sp

import pypto_mlir as pto

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_sparse.py"


def bench_sparse() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_sparse", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_sparse", module)
    spec.loader.exec_module(module)
    return module


def test_a_sparse_result_runs_and_matches_the_reference() -> None:
    bench = bench_sparse()
    rng = np.random.default_rng(3)
    a = sp.random_array((48, 40), density=0.1, format="csr", dtype=np.float32, rng=rng)
    a.data = a.data.astype(np.float16)

    @pto.kernel
    def csr_softmax(a: pto.CSR[(48, 40), pto.f16]):
        return pto.softmax(a)

    run = bench.simulate(csr_softmax.module(), [bench._csr_triple(a)], True)
    assert run.cycles > 0
    assert run.outputs[0].shape == (a.nnz,)
    assert run.numerics == "exact"


def test_a_dense_result_runs() -> None:
    bench = bench_sparse()
    rng = np.random.default_rng(4)
    a = sp.random_array((32, 32), density=0.2, format="csr", dtype=np.float32, rng=rng)
    a.data = a.data.astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)

    @pto.kernel
    def spmm(a: pto.CSR[(32, 32), pto.f16], b: pto.Tensor[(32, 16), pto.f16]):
        return a @ b

    run = bench.simulate(spmm.module(), [bench._csr_triple(a), b], True)
    assert run.cycles > 0 and 0 < run.fraction <= 1
    assert run.numerics == "exact"
