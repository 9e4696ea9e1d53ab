"""Errors of the kernel frontend, located in the kernel author's source.

A mistake in a kernel is reported at the line of the kernel (or of the call)
that made it, not inside the frontend: `user_location()` walks the Python stack
outward past the frontend's own frames.
"""

from __future__ import annotations

import os
import sys
from types import FrameType

from pypto_mlir.diagnostics import SourceLocation

_FRONTEND_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _is_frontend_frame(frame: FrameType) -> bool:
    return os.path.abspath(frame.f_code.co_filename).startswith(_FRONTEND_DIR)


def _display_path(path: str) -> str:
    """`path` relative to the working directory when it lies below it."""
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative


def user_location() -> SourceLocation | None:
    """The innermost source position outside the frontend on the current stack."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _is_frontend_frame(frame):
        frame = frame.f_back
    if frame is None:
        return None
    line = frame.f_lineno
    column = 0
    code = frame.f_code
    if frame.f_lasti >= 0:
        # Each instruction has its source span (PEP 657); 2-byte code units.
        positions = list(code.co_positions())
        index = frame.f_lasti // 2
        if index < len(positions):
            start_line, _, start_column, _ = positions[index]
            if start_line is not None and start_column is not None:
                line, column = start_line, start_column + 1
    return SourceLocation(_display_path(code.co_filename), line, column)


def definition_location(function: object) -> SourceLocation | None:
    """Where `function` is defined (its `def` line), if Python knows."""
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    return SourceLocation(_display_path(code.co_filename), code.co_firstlineno)


class KernelError(TypeError, ValueError):
    """A mistake in a kernel or in the arguments it is called with: a shape or
    dtype mismatch, an unsupported operation, a malformed annotation.

    Both a `TypeError` and a `ValueError`, so code that catches either sees it.
    `str(error)` starts with `FILE:LINE:` of the kernel author's source.
    """

    def __init__(self, message: str, location: SourceLocation | None = None):
        self.message = message
        self.location = location
        if location is not None and location.line:
            where = f"{location.file}:{location.line}: "
        elif location is not None:
            where = f"{location.file}: "
        else:
            where = ""
        super().__init__(where + message)


class KernelRuntimeError(RuntimeError):
    """A kernel failed while running (e.g. an out-of-bounds view found by the
    interpreter); located at the kernel line of the op that failed, when known."""

    def __init__(self, message: str, location: SourceLocation | None = None):
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}" if location is not None else message)


def kernel_error(message: str) -> KernelError:
    """A `KernelError` at the kernel author's current line."""
    return KernelError(message, user_location())
