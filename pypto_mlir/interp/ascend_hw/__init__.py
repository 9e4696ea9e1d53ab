"""Interpreter of the `ascend_hw` dialect on the AI Core simulator (`pypto_mlir.sim`).

Each instruction runs functionally, in program order, on numpy views of the
simulated memories of the current core (exact numerics, as the op docstrings in
`dialects/ascend_hw.py` state them), and hands the simulator one record: its pipe,
its cycles from `targets.cost`, the bytes it reads and writes as `Access` ranges
(`count`/`stride` bursts for strided DMA and vector lanes) and its source location
(`FILE:LINE:COL`), so that races and timing are reported against the IR.
`run_hw_function` runs a kernel on `block_dim` cores and returns the `Report`.
docs/ascend_hw_interp.md describes the mapping from ops to records.

Everything an op needs that does not change between executions (attributes, lane
index patterns, costs, byte ranges relative to the operands) is computed once per
op and cached; per execution only the operand addresses are looked at.

The modules, each importing only those above it:

- `errors`: `HwRunError` and op locations;
- `float_formats`: element storage and the conversions with rounding modes;
- `values`: the run-time values `HwBuffer` and `GmRef`;
- `lanes`: vector lane addressing (`LanePattern`);
- `vector_plans`, `move_plans`: the per-op static data of vector ops and of DMA,
  matrix moves and mmad;
- `vector_kernels`: the numerics of the vector families;
- `runtime`: `HwRuntime`, the state the functions share, and the core threads;
- `impls`: `HwFunctions`, the base of the function classes, whose `@impl`s are
  registered with `interp.direct_calls.direct_impl` for the fast path;
- `control_functions`, `move_functions`, `vector_functions`: the `@impl`
  methods per op family, combined in `functions.AscendHwFunctions`;
- `fast_path`: the compiled `scf.for` bodies (`HwScfFunctions`);
- `gm_memref`: the memref ops of tv-to-tile output on GM tensors;
- `runner`: `run_hw_function`, `hw_interpreter` and the argument checks.

Names with a leading underscore are private to this package; the public ones are
re-exported here.
"""

from pypto_mlir.interp.ascend_hw.errors import HwRunError
from pypto_mlir.interp.ascend_hw.fast_path import HwScfFunctions
from pypto_mlir.interp.ascend_hw.float_formats import (
    bf16_bits,
    bf16_values,
    convert,
    round_float,
    scalar_value,
    storage_dtype,
)
from pypto_mlir.interp.ascend_hw.functions import AscendHwFunctions
from pypto_mlir.interp.ascend_hw.gm_memref import HwGmMemRefFunctions
from pypto_mlir.interp.ascend_hw.lanes import LanePattern, lane_pattern, make_pattern
from pypto_mlir.interp.ascend_hw.runner import (
    BLOCK_DIM_ATTR,
    HwRunResult,
    declared_block_dim,
    hw_interpreter,
    run_hw_function,
)
from pypto_mlir.interp.ascend_hw.runtime import HwRuntime
from pypto_mlir.interp.ascend_hw.values import GmRef, HwBuffer
from pypto_mlir.interp.ascend_hw.vector_plans import _pattern_rows

__all__ = [
    "BLOCK_DIM_ATTR",
    "AscendHwFunctions",
    "GmRef",
    "HwBuffer",
    "HwGmMemRefFunctions",
    "HwRunError",
    "HwRunResult",
    "HwRuntime",
    "HwScfFunctions",
    "LanePattern",
    "_pattern_rows",
    "bf16_bits",
    "bf16_values",
    "convert",
    "declared_block_dim",
    "hw_interpreter",
    "lane_pattern",
    "make_pattern",
    "round_float",
    "run_hw_function",
    "scalar_value",
    "storage_dtype",
]
