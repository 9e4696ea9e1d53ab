"""`AscendHwFunctions`: the interpreter functions of every `ascend_hw` op.

One class made of the family classes (each an xDSL `@register_impls` class of
`@impl` methods in a module of its own), so that an interpreter registers one
object and the fast path binds every direct call to it.
"""

from __future__ import annotations

from xdsl.interpreter import register_impls

from pypto_mlir.interp.ascend_hw.control_functions import HwControlFunctions
from pypto_mlir.interp.ascend_hw.move_functions import HwMoveFunctions
from pypto_mlir.interp.ascend_hw.vector_functions import HwVectorFunctions


@register_impls
class AscendHwFunctions(HwControlFunctions, HwMoveFunctions, HwVectorFunctions):
    """Interpreter functions of every `ascend_hw` op, issuing to `runtime.core`."""
