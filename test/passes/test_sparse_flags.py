"""The flag-removal test on a sparse kernel: the block-CSR softmax by whole
blocks, its block rows split over two cores (two block rows each) by its
entry loops (pypto.row_entries, docs/sparse.md), whose bounds are read at run
time: hw-insert-sync may assume no trip count for them (docs/hw_insert_sync.md,
"Loops of run-time bounds")."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from test_hw_insert_sync import flags_that_change_nothing
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import pypto_mlir as pto
from pypto_mlir.check import lower, lowered_arguments
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

PATTERNS = [(4, 5, 5, 4), (5, 5, 2, 3), (0, 0, 1, 1), (1, 0, 3, 0), (3, 3, 0, 2)]
"""Stored blocks per block row (of 5), block rows 0-1 on core 0, 2-3 on core 1."""


def test_every_flag_of_the_bsr_softmax_over_the_cores_is_needed() -> None:
    """Removing any one flag hw-insert-sync gave it is a race, a deadlock or
    an event misuse on the simulator, or changes the result, on one of these
    patterns: their block rows of 0 to 5 blocks run each entry loop (the
    unrolled pairs, the remainder) zero times, once and more, and a core's two
    rows take every combination a flag is needed for (a flag carried from one
    row to the next is needed only when both rows run its loop)."""

    @pto.kernel(backend="reference")
    def softmax(a: pto.BSR[(64, 80), pto.f16, (16, 16)]):
        return pto.softmax(a)

    rng = np.random.default_rng(3)
    module = softmax.module()
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    inputs = []
    for lengths in PATTERNS:
        blocks = np.zeros((4, 5), bool)
        for row, count in enumerate(lengths):
            blocks[row, rng.choice(5, count, replace=False)] = True
        dense = np.kron(blocks, rng.standard_normal((16, 16))).astype(np.float32)
        matrix = sp.bsr_array(dense, blocksize=(16, 16))
        triple = (matrix.indptr, matrix.indices, matrix.data.astype(np.float16))
        inputs.append((lowered_arguments(function, [triple]), matrix.data.shape))
    with diagnostic_handler(lambda _: None):
        lowered = lower(
            module, "ascend_hw", LowerPipeline(target="ascend910b", max_cores=2)
        )
    assert "ascend_hw.block_idx" in str(lowered)
    chip = load_target("ascend910b")

    def run(candidate: ModuleOp) -> bytes:
        produced = b""
        for arguments, shape in inputs:
            out = np.full(shape, np.nan, np.float16)
            run_hw_function(candidate, "softmax", [*arguments, out], chip)
            produced += out.tobytes()
        return produced

    count, kept = flags_that_change_nothing(lowered, run)
    assert count > 0
    assert not kept, f"flags {kept} of {count} change nothing"
