"""The entry point pyproject.toml declares in the `xdsl.universe` group."""

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _scale_dialect() -> Dialect:
    from pypto_example_plugin.dialect import Scale

    return Scale


def _scale_to_arith() -> type[ModulePass]:
    from pypto_example_plugin.scale_to_arith import ScaleToArithPass

    return ScaleToArithPass


EXAMPLE_UNIVERSE = Universe(
    all_dialects={"scale": _scale_dialect},
    all_passes={"scale-to-arith": _scale_to_arith},
)
