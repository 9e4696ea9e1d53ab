"""The CSR spmm row nest (passes/csr_spmm_nest.py) on the simulator: each
flag hw-insert-sync gives it that a run of these inputs fires is needed
(removing its set/wait pair makes the simulator report a race, a deadlock or
an event misuse, or changes the result) but two, with index prefetch and the
nnz-balanced split on.

Two paths do not run at 10x80 (12 flags): the resident branch (nnz >= 2048,
4 flags) and the window loops of the unrolled row pair (8 flags: no 10x80
pattern a model of the split's chunk search tried, 200000 random ones, puts
a row of more than 64 entries in one chunk with another row).
Two flags that run are not shown needed (docs/hw_insert_sync.md, Limits):
the mte3 -> mte2 flag carried around the pairs' remainder loop (at most one
trip, but not innermost, so not taken for a branch: it orders nothing), and
the GM row loop's mte2 -> mte3 flag back for its carried mte3 -> mte2 flag
(no pattern found where it holds a set back). The chunk loop's flag backs
that only S's issue order made needless are gone (hw-insert-sync
scalar-issue; before it 29 of 46 flags changed nothing on the first two
patterns, 19 of them because their set never fired there)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from test_hw_insert_sync import flags_that_change_nothing  # remove each flag in turn
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

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


PATTERNS = [
    [0, 3, 70, 2, 5, 1, 0, 4, 9, 2],  # windows, a later window
    [1, 0, 2, 3, 0, 1, 2, 0, 1, 2],  # fewer entries than a window: GM reads
    [0, 6, 0, 0, 0, 0, 0, 0, 0, 57],  # GM: two rows in a chunk
    [40, 0, 0, 0, 0, 1, 0, 0, 20, 1],  # GM: a chunk's second row has entries
    [0, 2, 0, 2, 0, 2, 0, 2, 0, 70],  # windows: pairs of short rows
    [65, 0, 0, 66, 0, 1, 0, 0, 2, 0],  # windows: long rows, later windows
    [40, 80, 40, 80, 80, 40, 5, 1, 2, 1],  # windows: a chunk of two pairs
]
"""Stored entries per row (of 80 columns): each takes paths the others do not
(a chunk of the nnz-balanced split holds a row pair, two pairs, a remainder
row and a pair, or rows of the GM path)."""
UNEXERCISED = 12
"""Flags of paths no input can take at this shape (module docstring)."""
KEPT = 2
"""Flags that run but that the patterns do not show needed (module docstring)."""


def matrices(rng: np.random.Generator) -> list[sp.csr_array]:
    """A 10x80 matrix of f16 values for each of `PATTERNS`."""
    made = []
    for lengths in PATTERNS:
        dense = np.zeros((ROWS, 80), np.float32)
        for row, count in enumerate(lengths):
            dense[row, rng.choice(80, count, replace=False)] = rng.uniform(-1, 1, count)
        made.append(sp.csr_array(dense.astype(np.float16).astype(np.float32)))
    return made


def runner(
    function: Operation, inputs: list[sp.csr_array], *dense: np.ndarray
) -> Callable[[ModuleOp], bytes]:
    """Runs a lowered module's @f on each sparse input (with the `dense`
    arguments after it) on ascend910b: the result bytes of all runs."""
    chip = load_target("ascend910b")
    arguments = [
        lowered_arguments(
            function,  # pyright: ignore
            [
                SparseArray(
                    a.shape,
                    (1, 1),
                    a.indptr.astype(np.int32),
                    a.indices.astype(np.int32),
                    a.data.astype(np.float16),
                ),
                *dense,
            ],
        )
        for a in inputs
    ]

    def run(candidate: ModuleOp) -> bytes:
        produced = b""
        for values in arguments:
            outputs = result_buffers(function)  # pyright: ignore
            args = [*(np.copy(x) for x in values), *outputs]
            result = run_hw_function(candidate, "f", args, chip)
            produced += result.outputs[-1].tobytes()
        return produced

    return run


def test_every_flag_of_the_prefetching_spmm_is_needed() -> None:
    """10 rows on 2 cores (max-cores=2, 12 chunks of the nnz-balanced split
    each) on the patterns above. Every flag of a path they take is needed,
    but the two the module docstring names."""
    module = parse_chunk(default_context(), SourceChunk(SPMM, 1), "spmm.mlir")
    rng = np.random.default_rng(3)
    inputs = matrices(rng)
    b = rng.standard_normal((80, 16)).astype(np.float16)
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        # rows stored one a DMA (sparse-row-block=0): the flags of the rows
        # stored by blocks are those of tile.insert_rows
        # (test/sparse/test_tile_insert_rows.py), not checked one by one here
        lowered = lower(
            module, "ascend_hw", LowerPipeline(max_cores=2, sparse_row_block=0)
        )
    assert any("prefetched into ub" in r for r in remarks), remarks
    run = runner(next(iter(module.ops)), inputs, b)
    expected = b"".join(
        (a @ b.astype(np.float32)).astype(np.float16).tobytes() for a in inputs
    )
    assert run(lowered.clone()) == expected
    unexercised: list[int] = []
    count, kept = flags_that_change_nothing(lowered, run, unexercised)
    assert count
    assert len(unexercised) <= UNEXERCISED, f"flags {unexercised} of {count} never fire"
    assert len(kept) <= KEPT, f"flags {kept} of {count} change nothing"
