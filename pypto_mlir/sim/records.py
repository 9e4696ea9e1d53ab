"""The instruction records a kernel's execution leaves, and the run they form.

A leaf of `sim/`: the machine (machine.py) issues `Record`s, and the replay
(timing.py), the race detector (race.py) and the report (report.py) read them
through `RecordedRun`, the part of a finished `Machine` they need. So none of
them imports the machine, and the machine imports the replay to finish a run.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

import numpy as np

from pypto_mlir.sim.access import Access, GmTensor, Pipe
from pypto_mlir.targets import DmaPath, Target

__all__ = ["Record", "RecordKind", "RecordedCore", "RecordedRun", "int_column"]


def int_column(n: int) -> array[int]:
    """`n` zeros as 64-bit ints, for a value per record (times, clocks): a list
    holds a pointer and an int object per value, an array 8 bytes, and numpy
    reads it without a copy (`np.frombuffer`)."""
    return array("q", bytes(8 * n))


class RecordKind:
    INSTR = 0
    SET = 1
    WAIT = 2
    BARRIER = 3
    SYNC_ALL = 4


class Record(NamedTuple):
    """One issued instruction (or set/wait/barrier) in program order.

    A tuple (built with `tuple.__new__` when issued): records are created once per
    simulated instruction, so they must be cheap to make and to read.
    """

    gid: int
    core: int
    kind: int
    pipe: int
    name: str
    loc: str
    cycles: int = 0
    reads: tuple[Access, ...] = ()
    writes: tuple[Access, ...] = ()
    path: DmaPath | None = None
    nbytes: int = 0
    wire_bytes: int = 0
    key: tuple[int, int, int] | None = None
    scalar_cycles: int = 0
    head: int = 0
    """Start-up cycles added to `cycles` when the instruction starts a stream on
    its pipe (docs/simulator.md, "Start-up"); 0 for everything but V and M."""

    def describe(self) -> str:
        """`name` on `pipe` at `loc`, for error messages."""
        where = f" at {self.loc}" if self.loc else ""
        return f"'{self.name}' (core {self.core}, {Pipe(self.pipe).name}){where}"


class RecordedCore(Protocol):
    """What the replay and the report read of one core of a run (`machine.Core`)."""

    @property
    def index(self) -> int: ...
    @property
    def records(self) -> Sequence[Record]: ...
    @property
    def syncs(self) -> Sequence[int]:
        """Positions in `records` of the core's `sync_all` records, in order."""
        ...

    @property
    def used_paths(self) -> Mapping[int, DmaPath]:
        """Every DMA path an issued record used (by id)."""
        ...

    @property
    def memories(self) -> Mapping[str, np.ndarray]: ...
    @property
    def allocs(self) -> Mapping[str, Sequence[tuple[int, int]]]: ...
    @property
    def bank_conflict_cycles(self) -> int: ...
    @property
    def bank_conflict_instructions(self) -> int: ...


class RecordedRun(Protocol):
    """What the replay, the race detector and the report read of a run
    (`machine.Machine` once every record is issued)."""

    @property
    def target(self) -> Target: ...
    @property
    def block_dim(self) -> int: ...
    @property
    def cores(self) -> Sequence[RecordedCore]: ...
    @property
    def records(self) -> Sequence[Record]:
        """Every record of every core, in gid order."""
        ...

    @property
    def instructions(self) -> Sequence[Record]:
        """The records of instructions (not flags or barriers), in gid order."""
        ...

    @property
    def gm_tensors(self) -> Sequence[GmTensor]: ...
