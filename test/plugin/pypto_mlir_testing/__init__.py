"""Testing aids of pypto-mlir, registered for the tests only.

An `xdsl.universe` plugin like examples/plugin, "installed" by putting test/plugin
on the Python path: pytest does it (`pythonpath` in pyproject.toml) and so does the
lit configuration (test/filecheck/lit.cfg), and the `.dist-info` beside this
package declares the entry point. So `pypto-test-diagnostics` is not a pass of the
production universe (`pypto_mlir.universe`).
"""

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _test_diagnostics() -> type[ModulePass]:
    from pypto_mlir_testing.diagnostics_test_pass import TestDiagnosticsPass

    return TestDiagnosticsPass


_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "pypto-test-diagnostics": _test_diagnostics,
}

TESTING_UNIVERSE = Universe(all_passes=_PASSES)
