"""Deliberate cost-model mutations, each of which the cost tests must catch.

    python bench/cost_mutations.py

Runs the hand-derived cost tests (test/sim/test_cost.py, test/sim/test_timing.py
and the vexp timing of test/interp/test_ascend_hw.py) once unchanged and once
under each mutation below, each in a subprocess that monkeypatches the cost
formulas or the machine before the tests are collected, and prints a table:
a mutation the tests do not catch ("survived") makes the script exit non-zero.
On demand only (about a minute), not part of `make test`: docs/simulator.md,
"Tests of the cost model".
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TESTS = [
    "test/sim/test_cost.py",
    "test/sim/test_timing.py",
    "test/interp/test_ascend_hw.py::test_vector_record_accesses_and_cycles",
]

# Each mutation is Python run before pytest collects the tests. `_patch(module,
# name, new)` replaces `module.name` and every `from module import name` copy
# already imported, so the mutation reaches the machine and the interpreters.
_PRELUDE = """
import math, sys
import pypto_mlir.targets.cost as cost
import pypto_mlir.sim.machine as machine
import pypto_mlir.interp.ascend_hw  # noqa: F401  (imports the cost users)

def _patch(module, name, new):
    old = getattr(module, name)
    for mod in list(sys.modules.values()):
        if mod is not None and getattr(mod, name, None) is old:
            setattr(mod, name, new)
    return old
"""

MUTATIONS: dict[str, str] = {
    "DMA latency per burst instead of per transfer": """
old = cost.dma_cost
def dma_cost(target, path, bursts, burst_bytes, *args, **kw):
    c = old(target, path, bursts, burst_bytes, *args, **kw)
    extra = (bursts - 1) * c.path.latency
    return cost.DmaCost(c.cycles + extra, c.wire_bytes, c.path)
_patch(cost, "dma_cost", dma_cost)
""",
    "DMA start-up (latency) dropped": """
old = cost.dma_cost
def dma_cost(*args, **kw):
    c = old(*args, **kw)
    return cost.DmaCost(c.cycles - c.path.latency, c.wire_bytes, c.path)
_patch(cost, "dma_cost", dma_cost)
""",
    "DMA bandwidth halved": """
old = cost.dma_cost
def dma_cost(*args, **kw):
    c = old(*args, **kw)
    extra = math.ceil(c.wire_bytes / c.path.bytes_per_cycle)
    return cost.DmaCost(c.cycles + extra, c.wire_bytes, c.path)
_patch(cost, "dma_cost", dma_cost)
""",
    "vector/cube start-up dropped": """
for name in ("issue", "issue_planned"):
    def make(old):
        def issue(self, *args, head=0, **kw):
            return old(self, *args, **kw)
        return issue
    setattr(machine.Core, name, make(getattr(machine.Core, name)))
""",
    "start-up on every instruction (no streams)": """
for name in ("issue", "issue_planned"):
    def make(old):
        def issue(self, pipe, name, loc, cycles, *args, head=0, **kw):
            return old(self, pipe, name, loc, cycles + head, *args, **kw)
        return issue
    setattr(machine.Core, name, make(getattr(machine.Core, name)))
""",
    "pipe overlap removed (each instruction waits for all pipes)": """
for name in ("issue", "issue_planned"):
    def make(old):
        def issue(self, pipe, name, loc, *args, **kw):
            self.barrier("all", loc)
            return old(self, pipe, name, loc, *args, **kw)
        return issue
    setattr(machine.Core, name, make(getattr(machine.Core, name)))
""",
    "fp32 mmad at the fp16 rate": """
old = cost.mmad_cycles
def mmad_cycles(target, m, n, k, dtype):
    c = old(target, m, n, k, dtype)
    return c // 2 if cost.dtype_key(dtype) == "f32" else c
_patch(cost, "mmad_cycles", mmad_cycles)
""",
    "vector cycles per repeat of the other width": """
old = cost.cycles_per_repeat
def cycles_per_repeat(target, op, bits):
    return old(target, op, 48 - bits if bits in (16, 32) else bits)
_patch(cost, "cycles_per_repeat", cycles_per_repeat)
""",
    "bank conflicts not charged": """
_patch(cost, "bank_conflict_cycles", lambda *args, **kw: 0)
""",
}


def _run(mutation: str) -> tuple[bool, str]:
    """Run the tests under `mutation`; (passed, the first failing test)."""
    code = (
        _PRELUDE
        + textwrap.dedent(mutation)
        + "\nimport pytest\n"
        + f"sys.exit(pytest.main({TESTS + ['-q', '-x', '-p', 'no:cacheprovider']!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    failed = [
        line.split()[1]
        for line in done.stdout.splitlines()
        if line.startswith("FAILED ")
    ]
    return done.returncode == 0, failed[0] if failed else ""


def main() -> int:
    ok, failure = _run("")
    if not ok:
        print(f"the unmutated tests fail ({failure or 'see pytest'}): fix them first")
        return 1
    width = max(map(len, MUTATIONS))
    print(f"{'mutation':<{width}}  result  first failing test")
    survived = 0
    for name, mutation in MUTATIONS.items():
        passed, failure = _run(mutation)
        survived += passed
        result = "SURVIVED" if passed else "caught"
        print(f"{name:<{width}}  {result:<8}{failure}")
    print(f"{len(MUTATIONS) - survived} of {len(MUTATIONS)} mutations caught")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
