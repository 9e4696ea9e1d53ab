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
from test_csr_spmm_nest import matrices, runner
from test_hw_insert_sync import flags_that_change_nothing

from pypto_mlir.check import lower
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.pipelines import LowerPipeline

A = "!tv.tensor<10x80xf16, #tv.csr<rows = 10, cols = 80, nnz = ?, index = i32>>"
OUT = "!tv.tensor<10x80xf16>"
TO_DENSE = f"""
func.func @f(%a: {A}) -> {OUT} {{
  %c = tv.to_dense %a : {A} -> {OUT}
  func.return %c : {OUT}
}}"""


@pytest.mark.xfail(
    strict=True,
    reason="8 of 30 flags change nothing on these patterns (module docstring)",
)
def test_every_flag_of_the_csr_to_dense_nest_is_needed() -> None:
    """10x80 on 2 cores (max-cores=2) on the patterns of
    test_csr_spmm_nest.py: every flag a run fires is needed."""
    module = parse_chunk(default_context(), SourceChunk(TO_DENSE, 1), "dense.mlir")
    inputs = matrices(np.random.default_rng(5))
    with diagnostic_handler(lambda _: None):
        lowered = lower(module, "ascend_hw", LowerPipeline(max_cores=2))
    run = runner(next(iter(module.ops)), inputs)
    expected = b"".join(a.toarray().astype(np.float16).tobytes() for a in inputs)
    assert run(lowered.clone()) == expected
    unexercised: list[int] = []
    count, kept = flags_that_change_nothing(lowered, run, unexercised)
    assert count
    assert not kept, f"flags {kept} of {count} change nothing"
