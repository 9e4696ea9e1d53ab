"""Data-dependent addressing on the simulator (docs/sparse.md, *The tile level*).

Two figures, each from CSR tile kernels lowered by `pypto-lower{start-level=tile}`
on ascend910b (the kernels of test/sparse/sparse_tile_kernels.py, shared with
the tests):

- a gather of rows at indices read on the scalar unit, over a loop of
  run-time bounds, with `tile-pipeline`'s pipelining of such loops off and on
  (`pypto-lower{pipeline-runtime-bounds=...}`): the remainder-then-unrolled
  loop it makes of it;
- CSR spmv reading every column index from GM on the scalar unit (through its
  DataCache) against reading them 8 at a time into ub and taking them out
  with `tile.extract`: cycles and the S and MTE2 utilisation.

Checks every output against the tile interpreter; asserts nothing.

    .venv/bin/python bench/bench_sparse_hw.py [--rows 256] [--cols 1024] [--density 0.05]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from pypto_mlir.check import run_tile_level
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sim import Report
from pypto_mlir.targets import load_target
from pypto_mlir.universe import default_context

sys.path.insert(0, str(Path(__file__).parents[1] / "test" / "sparse"))
from sparse_tile_kernels import (  # noqa: E402
    csr_arguments,
    padded_indices,
    spmv_kernel,
    spmv_prefetch_kernel,
)

TARGET = "ascend910b"

GATHER = """
builtin.module {{
  func.func @f(%idx: memref<{n}xindex>, %x: memref<{k}x{c}xf32>,
               %out: memref<{n}x{c}xf32>, %lo: index, %hi: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %p = %lo to %hi step %c1 {{
      %col = memref.load %idx[%p] : memref<{n}xindex>
      %row = tile.load %x[%col, %c0] : memref<{k}x{c}xf32> -> !tile.tile<1x{c}xf32, ub>
      %e = tile.exp %row : !tile.tile<1x{c}xf32, ub>
      tile.store %e, %out[%p, %c0] : !tile.tile<1x{c}xf32, ub> -> memref<{n}x{c}xf32>
    }}
    func.return
  }}
}}
"""


def run(text: str, args: list[np.ndarray | int], output: int, **options) -> Report:
    """Lower `text` and run it; its output `output` must equal the tile
    interpreter's."""
    module = Parser(default_context(), text).parse_module()
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_tile_level(module, "f", expected)
    lowered: ModuleOp = module.clone()
    with diagnostic_handler(lambda _: None):
        LowerPipeline(target=TARGET, start_level="tile", **options).apply(
            default_context(), lowered
        )
    actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    result = run_hw_function(lowered, "f", actual, load_target(TARGET))
    same = np.array_equal(result.outputs[output], expected[output])  # type: ignore[arg-type]
    print(f"    numerics {'ok' if same else 'MISMATCH'}")
    return result.report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--density", type=float, default=0.05)
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    n, k, c = 64, 32, 64
    print(f"gather of {n} rows of {c} f32 at indices read on S, run-time bounds")
    gather = GATHER.format(n=n, k=k, c=c)
    idx = rng.integers(0, k, n).astype(np.int64)
    x = rng.standard_normal((k, c)).astype(np.float32)
    cycles = {}
    for pipelined in (False, True):
        out = np.zeros((n, c), np.float32)
        report = run(gather, [idx, x, out, 0, n], 2, pipeline_runtime_bounds=pipelined)
        cycles[pipelined] = report.cycles
        print(
            f"  pipeline-runtime-bounds={str(pipelined).lower()}: "
            f"{report.cycles} cycles"
        )
    print(f"  off / on: {cycles[False] / cycles[True]:.2f}x")

    m, k = args.rows, args.cols
    a = sp.random_array(
        (m, k), density=args.density, format="csr", dtype=np.float32, rng=rng
    )
    vector = rng.standard_normal(k).astype(np.float32)
    offsets, indices, values = csr_arguments(a)
    print(f"\nspmv {m}x{k}, {a.nnz} stored entries ({args.density:.0%}), f32")
    spmv = {}
    for name, kernel, column_indices in (
        ("indices read from GM on S", spmv_kernel, indices),
        ("indices prefetched into ub", spmv_prefetch_kernel, padded_indices(a)),
    ):
        y = np.zeros(m, np.float32)
        report = run(kernel(m, k), [offsets, column_indices, values, vector, y], 4)
        spmv[name] = report.cycles
        print(
            f"  {name}: {report.cycles} cycles on {report.block_dim} cores; "
            f"S {report.pipes['S'].utilization:.0%}, "
            f"MTE2 {report.pipes['MTE2'].utilization:.0%} busy"
        )
    first, second = spmv.values()
    print(f"  GM reads / prefetch: {first / second:.2f}x")


if __name__ == "__main__":
    main()
