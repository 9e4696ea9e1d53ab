"""The run-time state shared by the interpreter functions: the machine, the core
executing now, per-op caches, and the threads that run the cores of a kernel
with `sync_all` epoch by epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from threading import Condition, Thread
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import Block, Operation

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw.errors import _op_loc
from pypto_mlir.sim import Machine
from pypto_mlir.sim.machine import Core


class HwRuntime:
    """The machine being run, the core executing now, and per-op caches."""

    def __init__(self, machine: Machine):
        self.machine = machine
        self.target = machine.target
        self.core: Core = machine.core(0)
        self.plans: dict[int, Any] = {}
        """Per-op data by `id(op)` (the module keeps its ops alive during a run;
        ids hash faster than ops, whose `__hash__` is Python code)."""
        self.locs: dict[Operation, str] = {}
        self.noted_allocs: set[tuple[int, Operation]] = set()
        self.scalar_ops: dict[Block, int] = {}
        self.workspaces: dict[Operation, Any] = {}
        """The GM workspace of each `memref.alloc`, shared by the cores."""
        self.threads: _CoreThreads | None = None
        """Set while the cores of a kernel with `sync_all` run epoch by epoch."""

    def loc(self, op: Operation) -> str:
        loc = self.locs.get(op)
        if loc is None:
            loc = self.locs[op] = _op_loc(op)
        return loc

    def scalar_work(self, block: Block) -> int:
        """Scalar ALU instructions of one run of `block`: its arith ops (not
        constants) and subviews, the address arithmetic of the kernel."""
        count = self.scalar_ops.get(block)
        if count is None:
            count = sum(
                isinstance(op, hw.SubviewOp)
                or (
                    op.dialect_name() == "arith"
                    and not isinstance(op, arith.ConstantOp)
                )
                for op in block.ops
            )
            self.scalar_ops[block] = count
        return count


class _Abandoned(BaseException):
    """Unwinds the thread of a core whose run was stopped (a BaseException, so
    that no handler of the interpreter turns it into an error of the op)."""


class _CoreThreads:
    """The cores of a kernel with `sync_all`, each calling the kernel in a thread
    of its own, one thread running at a time, epoch by epoch: every core runs to
    its next sync_all (or its end), core 0 first, before any goes past it. So
    what a core writes to GM before a sync_all is there when any core reads it
    after (program order per core, as without barriers).

    When some cores finish while others wait at a sync_all, the waiting cores
    are stopped there: `Machine.finish()` reports the deadlock.
    """

    def __init__(self, runtime: HwRuntime, run_core: Callable[[int], None]):
        self.runtime = runtime
        self.run_core = run_core
        cores = runtime.machine.block_dim
        self.turn = Condition()
        self.current: int | None = None
        """The core whose thread may run; None: the scheduler's."""
        self.stopping = False
        self.done = [False] * cores
        self.error: BaseException | None = None

    def run(self) -> None:
        cores = len(self.done)
        threads = [
            Thread(target=self._main, args=(c,), daemon=True) for c in range(cores)
        ]
        for thread in threads:
            thread.start()
        try:
            while not all(self.done):
                for c in range(cores):
                    if not self.done[c]:
                        self._hand(c)
                        if self.error is not None:
                            raise self.error
                if any(self.done):
                    break  # the others wait at a sync_all these never reach
        finally:
            self.stopping = True
            for c in range(cores):
                if threads[c].is_alive() and not self.done[c]:
                    self._hand(c)
            for thread in threads:
                thread.join()

    def sync_all(self) -> None:
        """In a core's thread: let the other cores run up to this barrier."""
        core = self.current
        assert core is not None
        self._give_back()
        self._wait_turn(core)

    def _main(self, core: int) -> None:
        try:
            self._wait_turn(core)
            with np.errstate(all="ignore"):  # numpy's error state is per thread
                self.run_core(core)
        except _Abandoned:
            pass
        except BaseException as error:  # raised again by the scheduler
            self.error = error
        finally:
            self.done[core] = True
            self._give_back()

    def _hand(self, core: int) -> None:
        """Run `core`'s thread until it reaches a sync_all or ends."""
        self.runtime.core = self.runtime.machine.core(core)
        with self.turn:
            self.current = core
            self.turn.notify_all()
            while self.current is not None:
                self.turn.wait()

    def _give_back(self) -> None:
        with self.turn:
            self.current = None
            self.turn.notify_all()

    def _wait_turn(self, core: int) -> None:
        with self.turn:
            while self.current != core:
                self.turn.wait()
        if self.stopping:
            raise _Abandoned
