"""The AI Core machine model: memories, pipes, cost model, race detector, timeline.

Knows nothing about IR. See docs/simulator.md for the model, the cost formulas and
the report schema.
"""

from pypto_mlir.sim.access import Access, GmTensor, Pipe, burst_view, typed_view
from pypto_mlir.sim.errors import (
    AccessError,
    DeadlockError,
    EventError,
    RaceError,
    SimError,
    UninitializedReadError,
)
from pypto_mlir.sim.machine import Core, Machine
from pypto_mlir.sim.records import Record
from pypto_mlir.sim.report import (
    CoreStats,
    MemoryStats,
    PipeStats,
    Report,
    Slice,
    SyncAllStats,
)
from pypto_mlir.sim.trace import chrome_trace, write_chrome_trace, write_timeline_png

__all__ = [
    "Access",
    "AccessError",
    "Core",
    "CoreStats",
    "DeadlockError",
    "EventError",
    "GmTensor",
    "Machine",
    "MemoryStats",
    "Pipe",
    "PipeStats",
    "RaceError",
    "Record",
    "Report",
    "SimError",
    "Slice",
    "SyncAllStats",
    "UninitializedReadError",
    "burst_view",
    "chrome_trace",
    "typed_view",
    "write_chrome_trace",
    "write_timeline_png",
]
