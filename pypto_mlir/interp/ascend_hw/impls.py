"""The base of the `ascend_hw` interpreter function classes.

Their `@impl` methods are registered with `interp.direct_calls.direct_impl`, so
that the `scf.for` fast path can call them directly (`direct_calls`).
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions

from pypto_mlir.interp.ascend_hw.runtime import HwRuntime


class HwFunctions(InterpreterFunctions):
    """Base of the `ascend_hw` function classes: they issue to `runtime.core`."""

    def __init__(self, runtime: HwRuntime):
        self.runtime = runtime
