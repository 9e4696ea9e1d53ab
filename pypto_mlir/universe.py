"""The `xdsl.universe` entry point: every dialect and pass of pypto-mlir.

`xdsl-opt`, `pypto-opt` and any other xDSL tool discover them through the
`xdsl.universe` entry-point group declared in pyproject.toml. Factories import
lazily so that listing passes does not import every dialect.
"""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _tensor_view() -> Dialect:
    from pypto_mlir.dialects.tensor_view import TENSOR_VIEW

    return TENSOR_VIEW


def _tile() -> Dialect:
    from pypto_mlir.dialects.tile import Tile

    return Tile


def _ascend_hw() -> Dialect:
    from pypto_mlir.dialects.ascend_hw import ASCEND_HW

    return ASCEND_HW


def _dialects() -> dict[str, Callable[[], Dialect]]:
    return {
        "tv": _tensor_view,
        "tile": _tile,
        "ascend_hw": _ascend_hw,
    }


def _test_diagnostics() -> type[ModulePass]:
    from pypto_mlir.cli.diagnostics_test_pass import TestDiagnosticsPass

    return TestDiagnosticsPass


def _tv_to_tile() -> type[ModulePass]:
    from pypto_mlir.passes.tv_to_tile import TvToTilePass

    return TvToTilePass


def _passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from pypto_mlir.pipelines import get_all_pipelines

    return {
        **get_all_pipelines(),
        "pypto-test-diagnostics": _test_diagnostics,
        "tv-to-tile": _tv_to_tile,
    }


PYPTO_UNIVERSE = Universe(all_dialects=_dialects(), all_passes=_passes())
