"""Errors of the simulated machine.

Each carries the source locations (`locs`) of the instructions involved, so a driver
can print them as diagnostics; `str(error)` is a complete one-line message.
"""

from __future__ import annotations


class SimError(Exception):
    """A program the machine cannot run correctly."""

    def __init__(self, message: str, locs: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.locs = tuple(locs)


class AccessError(SimError):
    """An access outside a memory or misaligned for its element type."""


class UninitializedReadError(SimError):
    """A read of on-chip bytes that no instruction has written."""


class RaceError(SimError):
    """Two unordered accesses from different pipes (or cores) to the same bytes."""

    def __init__(
        self,
        message: str,
        first_loc: str,
        second_loc: str,
        memory: str,
        lo: int,
        hi: int,
    ):
        super().__init__(message, (first_loc, second_loc))
        self.first_loc = first_loc
        self.second_loc = second_loc
        self.memory = memory
        self.lo = lo
        self.hi = hi


class DeadlockError(SimError):
    """A wait_flag (or barrier) that can never be satisfied."""

    def __init__(self, message: str, loc: str):
        super().__init__(message, (loc,))
        self.loc = loc


class EventError(SimError):
    """Misuse of set_flag/wait_flag: bad event id, too many pending sets, unmatched set."""
