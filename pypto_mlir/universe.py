"""The `xdsl.universe` entry point: every dialect and pass of pypto-mlir.

`xdsl-opt`, `pypto-opt` and any other xDSL tool discover them through the
`xdsl.universe` entry-point group declared in pyproject.toml. Factories import
lazily so that listing passes does not import every dialect. The testing aid
`pypto-test-diagnostics` is not here: test/plugin registers it for the tests.
`default_context()` is the context of every installed universe, for the tools and
the library functions that parse or lower.
"""

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _tensor_view() -> Dialect:
    from pypto_mlir.dialects.tensor_view import TensorView

    return TensorView


def _tile() -> Dialect:
    from pypto_mlir.dialects.tile import Tile

    return Tile


def _ascend_hw() -> Dialect:
    from pypto_mlir.dialects.ascend_hw import AscendHW

    return AscendHW


def _dialects() -> dict[str, Callable[[], Dialect]]:
    return {
        "tv": _tensor_view,
        "tile": _tile,
        "ascend_hw": _ascend_hw,
    }


def _tile_peel_tails() -> type[ModulePass]:
    from pypto_mlir.passes.tile_peel_tails import TilePeelTailsPass

    return TilePeelTailsPass


def _tile_pipeline() -> type[ModulePass]:
    from pypto_mlir.passes.tile_pipeline import TilePipelinePass

    return TilePipelinePass


def _tile_to_hw() -> type[ModulePass]:
    from pypto_mlir.passes.tile_to_hw import TileToHwPass

    return TileToHwPass


def _tv_to_tile() -> type[ModulePass]:
    from pypto_mlir.passes.tv_to_tile import TvToTilePass

    return TvToTilePass


def _tv_sparse_to_tile() -> type[ModulePass]:
    from pypto_mlir.passes.tv_sparse_to_tile import TvSparseToTilePass

    return TvSparseToTilePass


def _tv_schedule() -> type[ModulePass]:
    from pypto_mlir.passes.tv_schedule import TvSchedulePass

    return TvSchedulePass


def _tv_expand_math() -> type[ModulePass]:
    from pypto_mlir.passes.tv_expand_math import TvExpandMathPass

    return TvExpandMathPass


def _set_target() -> type[ModulePass]:
    from pypto_mlir.passes.set_target import SetTargetPass

    return SetTargetPass


def _hw_insert_sync() -> type[ModulePass]:
    from pypto_mlir.passes.hw_insert_sync import HwInsertSyncPass

    return HwInsertSyncPass


def _hw_coalesce_dma() -> type[ModulePass]:
    from pypto_mlir.passes.hw_coalesce_dma import HwCoalesceDmaPass

    return HwCoalesceDmaPass


def _hw_strip_sync() -> type[ModulePass]:
    from pypto_mlir.passes.hw_insert_sync import HwStripSyncPass

    return HwStripSyncPass


def _passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from pypto_mlir.pipelines import get_all_pipelines

    return {
        **get_all_pipelines(),
        "pypto-set-target": _set_target,
        "hw-coalesce-dma": _hw_coalesce_dma,
        "hw-insert-sync": _hw_insert_sync,
        "hw-strip-sync": _hw_strip_sync,
        "tv-expand-math": _tv_expand_math,
        "tv-schedule": _tv_schedule,
        "tv-sparse-to-tile": _tv_sparse_to_tile,
        "tv-to-tile": _tv_to_tile,
        "tile-peel-tails": _tile_peel_tails,
        "tile-pipeline": _tile_pipeline,
        "tile-to-hw": _tile_to_hw,
    }


PYPTO_UNIVERSE = Universe(all_dialects=_dialects(), all_passes=_passes())


def default_context(allow_unregistered: bool = False) -> Context:
    """A context that knows every dialect of every installed `xdsl.universe`."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx
