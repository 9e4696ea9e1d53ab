"""The error of a kernel that cannot run, and how the interpreter names an op's
place (`FILE:LINE:COL`) in it and in the simulator's errors.
"""

from __future__ import annotations

from xdsl.ir import Operation

from pypto_mlir.diagnostics import op_location
from pypto_mlir.sim import SimError


class HwRunError(SimError):
    """A kernel that cannot be run: bad arguments, unsupported ops, bad indices."""


def _at(loc: str) -> str:
    return f"{loc}: " if loc else ""


def _op_loc(op: Operation) -> str:
    location = op_location(op)
    return "" if location is None else str(location)


def _short_name(op: Operation) -> str:
    return op.name.removeprefix("ascend_hw.")


def _execution_error(op: Operation, error: Exception) -> HwRunError:
    loc = _op_loc(op)
    message = str(error).split("\n")[0] or type(error).__name__
    return HwRunError(f"{_at(loc)}cannot execute '{op.name}': {message}", (loc,))
