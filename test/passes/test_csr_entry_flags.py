"""The flag-removal check on a CSR entry nest (passes/csr_entry_nests.py):
to_dense by rows over two cores, its rows split by stored entries, each row's
entries inserted into a row tile in ub by the entry loops, whose bounds are
read at run time (docs/hw_insert_sync.md, "Loops of run-time bounds").

Not so yet (xfail, strict): of its 30 flags, 4 never fire on these patterns
(counted apart: `flags_that_change_nothing`'s `unexercised`) and 8 fire but
change nothing when removed:
- the chunk loop's v -> mte3 flag back of its mte3 -> v flag into the row
  loops: that dependency cannot ride on the row loops' own flag
  (`_enter_loop`) because the loops sit in the window/GM `scf.if`;
- the mte3 -> v and s -> mte2 flags carried around the remainder row loop
  (at most one trip by the index ranges, but not innermost, so not taken for
  a branch: they order nothing);
- the s -> mte2 flag carried around a row's window loop, which runs at most
  once at 80 columns (a row has at most 80 entries, two windows of 64): the
  IR does not bound a row's entries by the column count;
- four flags of loops these patterns did not run often enough (the row pair
  loop's carried mte3 -> mte2 and mte3 -> v and its s -> v, the GM row loop's
  carried mte3 -> v: two pairs, or two GM rows, in one chunk of the
  nnz-balanced split)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from test_hw_insert_sync import flags_that_change_nothing
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import lower, lowered_arguments, result_buffers
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

ROWS, COLS = 10, 80
A = f"!tv.tensor<{ROWS}x{COLS}xf16, #tv.csr<rows = {ROWS}, cols = {COLS}, nnz = ?, index = i32>>"
OUT = f"!tv.tensor<{ROWS}x{COLS}xf16>"
TO_DENSE = f"""
func.func @f(%a: {A}) -> {OUT} {{
  %c = tv.to_dense %a : {A} -> {OUT}
  func.return %c : {OUT}
}}"""
PATTERNS = [
    [0, 3, 70, 2, 5, 1, 0, 4, 9, 2],
    [1, 0, 2, 3, 0, 1, 2, 0, 1, 2],
    [0, 6, 0, 0, 0, 0, 0, 0, 0, 57],
    [40, 0, 0, 0, 0, 1, 0, 0, 20, 1],
    [0, 2, 0, 2, 0, 2, 0, 2, 0, 70],
    [65, 0, 0, 66, 0, 1, 0, 0, 2, 0],
    [40, 80, 40, 80, 80, 40, 5, 1, 2, 1],
]
"""Stored entries per row (of 80 columns), as test_csr_spmm_nest.py's."""


@pytest.mark.xfail(
    strict=True,
    reason="8 of 30 flags change nothing on these patterns (module docstring)",
)
def test_every_flag_of_the_csr_to_dense_nest_is_needed() -> None:
    """10x80 on 2 cores (max-cores=2) on the patterns of
    test_csr_spmm_nest.py: every flag a run fires is needed."""
    module = parse_chunk(default_context(), SourceChunk(TO_DENSE, 1), "dense.mlir")
    rng = np.random.default_rng(5)
    matrices = []
    for lengths in PATTERNS:
        dense = np.zeros((ROWS, COLS), np.float32)
        for row, count in enumerate(lengths):
            dense[row, rng.choice(COLS, count, replace=False)] = rng.uniform(
                -1, 1, count
            )
        matrices.append(sp.csr_array(dense.astype(np.float16).astype(np.float32)))
    with diagnostic_handler(lambda _: None):
        lowered = lower(module, "ascend_hw", LowerPipeline(max_cores=2))
    function = next(iter(module.ops))
    chip = load_target("ascend910b")
    inputs = [
        lowered_arguments(
            function,  # pyright: ignore
            [
                SparseArray(
                    (ROWS, COLS),
                    (1, 1),
                    a.indptr.astype(np.int32),
                    a.indices.astype(np.int32),
                    a.data.astype(np.float16),
                )
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

    expected = b"".join(a.toarray().astype(np.float16).tobytes() for a in matrices)
    assert run(lowered.clone()) == expected
    unexercised: list[int] = []
    count, kept = flags_that_change_nothing(lowered, run, unexercised)
    assert count
    assert not kept, f"flags {kept} of {count} change nothing"
