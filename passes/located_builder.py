"""The one IR builder of the lowering passes: xDSL's `Builder` that stamps locations.

A pass that replaces an op by others gives the new ops the location of the op they
replace, so that diagnostics, remarks and the profiler name the user's line. xDSL's
`Builder` tracks where to insert; this subclass also carries the location to give.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.builder import Builder, InsertOpInvT
from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint


@dataclass
class LocatedBuilder(Builder):
    """Inserts ops at `insertion_point`; each op without a location gets `location`."""

    location: Attribute | None = None

    @staticmethod
    def before(op: Operation) -> LocatedBuilder:
        """A builder inserting before `op`, with its location."""
        return LocatedBuilder(InsertPoint.before(op), location=op.location)

    def insert(
        self, op: InsertOpInvT, insertion_point: InsertPoint | None = None
    ) -> InsertOpInvT:
        if self.location is not None:
            for each in (op,) if isinstance(op, Operation) else op:
                if isinstance(each.location, UnknownLoc):
                    each.location = self.location
        return super().insert(op, insertion_point)

    def value(self, op: Operation) -> SSAValue:
        """Insert `op` and return its single result."""
        return self.insert(op).results[0]

    @contextmanager
    def located(self, location: Attribute | None) -> Iterator[None]:
        """Give the ops inserted in this block `location` (restored afterwards)."""
        saved, self.location = self.location, location
        try:
            yield
        finally:
            self.location = saved
