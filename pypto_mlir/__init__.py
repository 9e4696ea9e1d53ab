"""pypto-mlir: a multi-level compiler for tile kernels on Ascend-style AI Cores.

`import pypto_mlir as pto` gives the Python kernel frontend (`pto.kernel`,
`pto.Tensor`, `pto.f16`, ...; see docs/frontend.md). Its names are loaded on
first use, so importing a submodule (e.g. `pypto_mlir.sim`) stays light.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pypto_mlir.frontend import *  # noqa: F403

_FRONTEND = "pypto_mlir.frontend"


def __getattr__(name: str) -> Any:
    submodule = f"{__name__}.{name}"
    if not name.startswith("__") and importlib.util.find_spec(submodule):
        # `from pypto_mlir import numerics` asks for the attribute before it
        # imports the submodule: that must not load the frontend.
        return importlib.import_module(submodule)
    frontend = importlib.import_module(_FRONTEND)
    if name == "__all__":  # `from pypto_mlir import *`
        return list(frontend.__all__)
    if name in frontend.__all__:
        return getattr(frontend, name)
    raise AttributeError(f"module 'pypto_mlir' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted([*globals(), *importlib.import_module(_FRONTEND).__all__])
