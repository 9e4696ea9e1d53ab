"""Instruction selection for `tile-to-hw`: each tile op becomes ascend_hw instructions.

The valid extents of every tile are static here (`tile-to-hw` resolved them), and
every tile value, and every scratch buffer an op asked for, has a buffer
(`memory_plan`). Each family of tile ops has one strategy (`strategy.py`'s
`TileOpStrategy`) that answers, for its ops, which operands the result may
overwrite (`inplace`), which scratch buffers the instructions need (`scratch`, and
the tiling model's bound of them, `scratch_terms`) and the instructions
(`lower`). `Selector` asks the op's strategy; `lower_tile_ops` lowers a
function's tile ops with one rewrite pattern per family.

Modules, by seam:

- `emitter`: `Lanes`/`Kind`/`Region`, `Emitter` (vector instructions over a
  valid region, through a `LocatedBuilder`) and `ConstantPool`;
- `strategy`: the strategy interface and the facts of the nest it reads;
- `movement`: load, store, move, fill, pad; `matmul`: the cube;
- `elementwise`: unary functions, binary ops, broadcasts; `casts`;
  `reductions`; `gather`: transposes and the gathers they share with
  reductions;
- `selector`: the registry (`STRATEGIES`, `STRATEGY_OF`), `Selector` and the
  patterns.

Adding a family of tile ops: write one `TileOpStrategy` subclass listing its op
classes in `ops` (derive from `NoScratch` when its instructions need no
scratch: that answers `scratch` and `scratch_terms` together), with `lower`
emitting through the `Emitter` and, when the result may share an operand's
buffer, `inplace`; then add the class to `STRATEGIES` in `selector.py`.
`test_hw_isel_strategies` fails naming any tile op without a strategy.
docs/tile_to_hw.md lists the instructions of every op.
"""

from pypto_mlir.passes.hw_isel.casts import cast_plan
from pypto_mlir.passes.hw_isel.emitter import (
    BufferOf,
    ConstantPool,
    Emitter,
    Lanes,
    Valid,
    buffer_type,
    unary,
)
from pypto_mlir.passes.hw_isel.selector import (
    STRATEGIES,
    STRATEGY_OF,
    PhysicalExtents,
    Selector,
    lower_tile_ops,
)
from pypto_mlir.passes.hw_isel.strategy import NoScratch, TileOpStrategy

__all__ = [
    "STRATEGIES",
    "STRATEGY_OF",
    "BufferOf",
    "ConstantPool",
    "Emitter",
    "Lanes",
    "NoScratch",
    "PhysicalExtents",
    "Selector",
    "TileOpStrategy",
    "Valid",
    "buffer_type",
    "cast_plan",
    "lower_tile_ops",
    "unary",
]
