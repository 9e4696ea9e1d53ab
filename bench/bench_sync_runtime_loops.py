"""hw-insert-sync runtime-loops and scalar-issue off vs on: flags and cycles of
sparse kernels.

The two kernels of the sparse flag-removal tests, whose entry loops have bounds
read at run time (docs/hw_insert_sync.md, "Loops of run-time bounds"): the
BSR softmax (64x80, 16x16 blocks) on 2 cores over the five block patterns of
test/passes/test_sparse_flags.py, and the CSR spmm row nest (10x80 @ 80x16,
prefetch and nnz balance on) on 2 cores over six row patterns, lowered with
`pypto-lower sync-runtime-loops=false` and `=true`, then the same for
`sync-scalar-issue` ("Sets issued by S"). Prints the set_flag ops and the
simulated cycles per pattern, and the ratio off / on; asserts nothing.

    .venv/bin/python bench/bench_sync_runtime_loops.py   # ~2 min
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import pypto_mlir as pto
from pypto_mlir.check import lower, lowered_arguments, result_buffers
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.dialects.ascend_hw import SetFlagOp
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

TARGET = "ascend910b"
BSR_PATTERNS = [(4, 5, 5, 4), (5, 5, 2, 3), (0, 0, 1, 1), (1, 0, 3, 0), (3, 3, 0, 2)]
"""Stored blocks per block row (of 5), as test_sparse_flags.py."""
CSR_PATTERNS = [
    [0, 3, 70, 2, 5, 1, 0, 4, 9, 2],
    [1, 0, 2, 3, 0, 1, 2, 0, 1, 2],
    [8] * 10,
    [0, 0, 0, 0, 0, 30, 30, 10, 0, 0],
    [12, 1, 0, 14, 9, 13, 0, 2, 11, 10],
    [66, 0, 1, 0, 0, 0, 75, 2, 0, 1],
]
"""Stored entries per row (of 80 columns): the first two are test_csr_spmm_nest.py's."""
CSR_TYPE = "!tv.tensor<10x80xf16, #tv.csr<rows = 10, cols = 80, nnz = ?, index = i32>>"
SPMM = f"""
func.func @f(%a: {CSR_TYPE}, %b: !tv.tensor<80x16xf16>) -> !tv.tensor<10x16xf16> {{
  %c = tv.spmm %a, %b : {CSR_TYPE}, !tv.tensor<80x16xf16> -> !tv.tensor<10x16xf16>
  func.return %c : !tv.tensor<10x16xf16>
}}"""


OPTIONS = {"runtime-loops": "sync_runtime_loops", "scalar-issue": "sync_scalar_issue"}
"""hw-insert-sync's options measured, with their LowerPipeline fields."""


def _lower(module: ModuleOp, option: str, on: bool) -> ModuleOp:
    options = LowerPipeline(target=TARGET, max_cores=2, **{OPTIONS[option]: on})
    with diagnostic_handler(lambda _: None):
        return lower(module.clone(), "ascend_hw", options)


def _sets(module: ModuleOp) -> int:
    return sum(isinstance(op, SetFlagOp) for op in module.walk())


def bsr_softmax(option: str) -> tuple[str, dict[bool, tuple[int, list[int]]]]:
    @pto.kernel(backend="reference")
    def softmax(a: pto.BSR[(64, 80), pto.f16, (16, 16)]):
        return pto.softmax(a)

    module = softmax.module()
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(3)
    inputs = []
    for lengths in BSR_PATTERNS:
        blocks = np.zeros((4, 5), bool)
        for row, count in enumerate(lengths):
            blocks[row, rng.choice(5, count, replace=False)] = True
        dense = np.kron(blocks, rng.standard_normal((16, 16))).astype(np.float32)
        matrix = sp.bsr_array(dense, blocksize=(16, 16))
        triple = (matrix.indptr, matrix.indices, matrix.data.astype(np.float16))
        inputs.append((lowered_arguments(function, [triple]), matrix.data.shape))
    chip = load_target(TARGET)
    runs: dict[bool, tuple[int, list[int]]] = {}
    for on in (False, True):
        lowered = _lower(module, option, on)
        cycles = []
        for arguments, shape in inputs:
            out = np.full(shape, np.nan, np.float16)
            result = run_hw_function(lowered, "softmax", [*arguments, out], chip)
            cycles.append(result.report.cycles)
        runs[on] = (_sets(lowered), cycles)
    return "BSR softmax 64x80, 16x16 blocks, 2 cores", runs


def csr_spmm(option: str) -> tuple[str, dict[bool, tuple[int, list[int]]]]:
    module = parse_chunk(default_context(), SourceChunk(SPMM, 1), "spmm.mlir")
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(3)
    matrices = []
    for lengths in CSR_PATTERNS:
        dense = np.zeros((10, 80), np.float32)
        for row, count in enumerate(lengths):
            dense[row, rng.choice(80, count, replace=False)] = rng.uniform(-1, 1, count)
        matrices.append(sp.csr_array(dense.astype(np.float16).astype(np.float32)))
    b = rng.standard_normal((80, 16)).astype(np.float16)
    inputs = [
        lowered_arguments(
            function,
            [
                SparseArray(
                    (10, 80),
                    (1, 1),
                    a.indptr.astype(np.int32),
                    a.indices.astype(np.int32),
                    a.data.astype(np.float16),
                ),
                b,
            ],
        )
        for a in matrices
    ]
    chip = load_target(TARGET)
    runs: dict[bool, tuple[int, list[int]]] = {}
    for on in (False, True):
        lowered = _lower(module, option, on)
        cycles = []
        for arguments in inputs:
            args = [*arguments, *result_buffers(function)]
            cycles.append(run_hw_function(lowered, "f", args, chip).report.cycles)
        runs[on] = (_sets(lowered), cycles)
    return "CSR spmm 10x80 @ 80x16, prefetch, 2 cores", runs


def main() -> None:
    for option in OPTIONS:
        print(f"hw-insert-sync {option} on {TARGET}: set_flag ops, cycles per pattern")
        for name, runs in (bsr_softmax(option), csr_spmm(option)):
            (off_sets, off), (on_sets, on) = runs[False], runs[True]
            ratios = " ".join(f"{a / b:.3f}x" for a, b in zip(off, on, strict=True))
            print(f"{name}\n  off: {off_sets:>3} sets, cycles {off}")
            print(f"  on:  {on_sets:>3} sets, cycles {on}\n  off / on: {ratios}")


if __name__ == "__main__":
    main()
