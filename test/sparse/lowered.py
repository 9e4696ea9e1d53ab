"""Sparse kernels lowered once per (module text, level, pipeline) in a test
process.

Many sparse tests run one kernel on several sparsity patterns: the pattern is
an input (`nnz = ?`), not part of the IR, so each lowered the same module again,
and lowering (hw-insert-sync above all, on ascend910b) was most of their time.
`lower_once` lowers the first time and hands out a clone afterwards; the
diagnostics the lowering emitted (remarks the tests read) are emitted again on
every call, so a caller sees what a fresh lowering would show it. The tests
that use it carry an `xdist_group` mark (`make pytest` runs `--dist loadgroup`),
so that their parametrizations share one worker and its cache.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import lower
from pypto_mlir.diagnostics import Diagnostic, diagnostic_handler, emit

_LOWERED: dict[tuple[str, str, Any], tuple[ModuleOp, tuple[Diagnostic, ...]]] = {}


def lower_once(module: ModuleOp, level: str, pipeline: Any) -> ModuleOp:
    """`check.lower(module, level, pipeline)`, memoised; a clone each call."""
    key = (str(module), level, pipeline)
    if key not in _LOWERED:
        emitted: list[Diagnostic] = []
        with diagnostic_handler(emitted.append):
            lowered = lower(module, level, pipeline)
        _LOWERED[key] = (lowered, tuple(emitted))
    lowered, emitted = _LOWERED[key]
    for diagnostic in emitted:
        emit(diagnostic)
    return lowered.clone()
