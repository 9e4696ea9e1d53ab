"""The CSR spmm row nest (passes/csr_spmm_nest.py) on the simulator: every
flag hw-insert-sync gives it should be needed (removing any one set/wait pair
makes the simulator report a race, a deadlock or an event misuse, or changes
the result), with index prefetch and the nnz-balanced split on.

Not so yet (xfail, strict): 32 of its 50 flags can be removed one at a time
without any error or change on these inputs (37 of 55 before hw-insert-sync's
runtime-loops, docs/hw_insert_sync.md "Loops of run-time bounds"), mostly in
the window branch's entry loops; on 5 more row patterns (rows of 8 entries
each, empty rows around long ones, two rows over 64 entries) 21 of 50 still
change nothing: the rest are needed by paths these two inputs do not take."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from test_hw_insert_sync import flags_that_change_nothing  # remove each flag in turn
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import lower, lowered_arguments, result_buffers
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

ROWS = 10
A = f"!tv.tensor<{ROWS}x80xf16, #tv.csr<rows = {ROWS}, cols = 80, nnz = ?, index = i32>>"
OUT = f"!tv.tensor<{ROWS}x16xf16>"
SPMM = f"""
func.func @f(%a: {A}, %b: !tv.tensor<80x16xf16>) -> {OUT} {{
  %c = tv.spmm %a, %b : {A}, !tv.tensor<80x16xf16> -> {OUT}
  func.return %c : {OUT}
}}"""


def _matrix(lengths: list[int], rng: np.random.Generator) -> sp.csr_array:
    dense = np.zeros((ROWS, 80), np.float32)
    for row, count in enumerate(lengths):
        dense[row, rng.choice(80, count, replace=False)] = rng.uniform(-1, 1, count)
    return sp.csr_array(dense.astype(np.float16).astype(np.float32))


@pytest.mark.xfail(
    strict=True,
    reason="32 of 50 flags around the loops of run-time bounds change nothing "
    "on these inputs (docs/hw_insert_sync.md, Limits)",
)
def test_every_flag_of_the_prefetching_spmm_is_needed() -> None:
    """10 rows on 2 cores (max-cores=2, 5 rows each: the row loop's remainder
    trip and two unrolled trips), run on two matrices: one of 96 entries
    (windows; rows of 0 to 70 entries, so a later window too) and one of 12
    (fewer than a window: the GM reads). Every flag of a path they take is
    needed."""
    module = parse_chunk(default_context(), SourceChunk(SPMM, 1), "spmm.mlir")
    rng = np.random.default_rng(3)
    matrices = [
        _matrix([0, 3, 70, 2, 5, 1, 0, 4, 9, 2], rng),
        _matrix([1, 0, 2, 3, 0, 1, 2, 0, 1, 2], rng),
    ]
    b = rng.standard_normal((80, 16)).astype(np.float16)
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        lowered = lower(module, "ascend_hw", LowerPipeline(max_cores=2))
    assert any("prefetched into ub" in r for r in remarks), remarks
    function = next(iter(module.ops))
    chip = load_target("ascend910b")
    inputs = [
        lowered_arguments(
            function,  # pyright: ignore
            [
                SparseArray(
                    (ROWS, 80),
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

    def run(candidate: ModuleOp) -> bytes:
        produced = b""
        for arguments in inputs:
            outputs = result_buffers(function)  # pyright: ignore
            args = [*(np.copy(x) for x in arguments), *outputs]
            result = run_hw_function(candidate, "f", args, chip)
            produced += result.outputs[-1].tobytes()
        return produced

    expected = b"".join(
        (a @ b.astype(np.float32)).astype(np.float16).tobytes() for a in matrices
    )
    assert run(lowered.clone()) == expected
    count, kept = flags_that_change_nothing(lowered, run)
    assert count
    assert not kept, f"flags {kept} of {count} change nothing"
