"""Simulator errors as diagnostics at the instructions' source locations.

A `SimError` carries `FILE:LINE:COL` strings of the instructions involved (the
simulator knows nothing about IR); `sim_diagnostic` turns one into the
`Diagnostic` that pypto-run and the Python frontend report.
"""

from __future__ import annotations

from pypto_mlir.diagnostics import Diagnostic, Severity, SourceLocation
from pypto_mlir.sim import RaceError, SimError

__all__ = ["sim_diagnostic"]


def _parse_loc(loc: str) -> SourceLocation | None:
    """A simulator location string (`FILE:LINE:COL`, `FILE:LINE` or `FILE`)."""
    if not loc:
        return None
    parts = loc.rsplit(":", 2)
    numbers = [p for p in parts[1:] if p.isdigit()]
    if len(parts) == 3 and len(numbers) == 2:
        return SourceLocation(parts[0], int(parts[1]), int(parts[2]))
    if len(parts) >= 2 and parts[-1].isdigit():
        return SourceLocation(loc.rsplit(":", 1)[0], int(parts[-1]))
    return SourceLocation(loc)


def sim_diagnostic(error: SimError) -> Diagnostic:
    """A simulator error at its instruction; a race at the later access, with a
    note at the earlier one."""
    locs = [loc for loc in error.locs if loc]
    message = error.message
    if locs and message.startswith(f"{locs[0]}: "):
        message = message.removeprefix(f"{locs[0]}: ")
    if isinstance(error, RaceError):
        return Diagnostic(
            Severity.ERROR,
            message,
            _parse_loc(error.second_loc),
            [
                Diagnostic(
                    Severity.NOTE, "the earlier access", _parse_loc(error.first_loc)
                )
            ],
        )
    notes = [
        Diagnostic(Severity.NOTE, "involved here", _parse_loc(loc)) for loc in locs[1:]
    ]
    return Diagnostic(
        Severity.ERROR, message, _parse_loc(locs[0]) if locs else None, notes
    )
