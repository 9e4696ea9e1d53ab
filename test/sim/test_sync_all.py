"""`sync_all`: the barrier of all cores in the timing replays, the race detector
and the report (every replay: the reference, the logged heap and the dataflow
one, which must agree)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from pypto_mlir.sim import (
    Access,
    DeadlockError,
    GmTensor,
    Machine,
    RaceError,
    chrome_trace,
    timing,
)
from pypto_mlir.targets import Target, load_target

TINY = load_target("tiny")
SHARED_GM = dataclasses.replace(TINY, gm_bytes_per_cycle=40.0)
"""GM slower than two transfers' paths: the logged replay runs, not the dataflow."""
LATENCY = TINY.sync.all_latency


def exchange(
    target: Target = TINY, *, sync: bool = True, work: tuple[int, int] = (0, 300)
) -> Machine:
    """Core c stores its UB block into row c of GM tensor t, (sync_all), loads the
    other core's row and stores it into its row of z. Core c first spends
    `work[c]` cycles on V, so core 1 arrives at the barrier later."""
    machine = Machine(target, 2)
    t = machine.register_gm("t", np.zeros(512, np.float16))
    z = machine.register_gm("z", np.zeros(512, np.float16))
    for c in range(2):
        core = machine.core(c)
        core.issue("v", "fill", f"k:{c}:1", work[c] + 10, writes=[("ub", 0, 512)])
        core.set_flag("v", "mte3", 0, f"k:{c}:2")
        core.wait_flag("v", "mte3", 0, f"k:{c}:3")
        core.dma("store", f"k:{c}:4", Access("ub", 0, 512), Access(t, 512 * c, 512))
        # Ordered by the barrier; the flag crosses it (as hw-insert-sync may do).
        core.set_flag("mte3", "mte2", 0, f"k:{c}:5")
        if sync:
            core.sync_all(f"k:{c}:6")
        core.wait_flag("mte3", "mte2", 0, f"k:{c}:7")
        other = Access(t, 512 * (1 - c), 512)
        core.dma("load", f"k:{c}:8", other, Access("ub", 512, 512))
        core.set_flag("mte2", "mte3", 0, f"k:{c}:9")
        core.wait_flag("mte2", "mte3", 0, f"k:{c}:10")
        core.dma("store", f"k:{c}:11", Access("ub", 512, 512), Access(z, 512 * c, 512))
    return machine


def replays(build) -> list[tuple[str, object]]:
    """(replay, report) of the fast path and of the reference for `build()`."""
    out = []
    for reference in (False, True):
        machine = build()
        for core in machine.cores:
            core._flush_scalar()
        report = timing.replay(machine, reference=reference)
        out.append((timing.last_replay, report))
    return out


@pytest.mark.parametrize("target", [TINY, SHARED_GM], ids=["dataflow", "logged"])
def test_every_core_goes_on_when_the_last_one_has_drained(target: Target) -> None:
    (fast, report), (ref, reference) = replays(lambda: exchange(target))
    assert fast == ("dataflow" if target is TINY else "logged")
    assert ref == "reference"
    assert report.to_dict() == reference.to_dict()
    assert list(report.slices) == list(reference.slices)
    (barrier,) = report.sync_alls
    stores = [s for s in report.slices if s.loc in ("k:0:4", "k:1:4")]
    assert barrier.arrive == [s.end for s in stores]
    assert barrier.arrive[1] > barrier.arrive[0]  # core 1 had more work
    assert barrier.release == max(barrier.arrive) + LATENCY
    assert barrier.loc == "k:0:6"
    loads = [s for s in report.slices if s.name == "load"]
    assert all(s.start > barrier.release for s in loads)
    waits = [barrier.release - t for t in barrier.arrive]
    assert [c.sync_wait_cycles for c in report.cores] == waits
    assert barrier.wait_cycles == sum(waits)
    # The barrier is a slice on S of each core, from its arrival to the release.
    on_s = [s for s in report.slices if s.name == "sync_all"]
    assert [(s.core, s.pipe, s.start, s.end) for s in on_s] == [
        (c, "S", barrier.arrive[c], barrier.release) for c in range(2)
    ]


def test_without_the_barrier_the_cores_race_on_gm() -> None:
    with pytest.raises(RaceError, match="between cores 0 and 1") as info:
        exchange(sync=False).finish()
    assert info.value.memory == "gm:t"
    assert "no sync_all separates them" in str(info.value)


def two_cores(gm_bytes: int) -> tuple[Machine, GmTensor]:
    """Two cores with 2 KiB of UB written, and a GM tensor t."""
    machine = Machine(TINY, 2)
    t = machine.register_gm("t", np.zeros(gm_bytes // 2, np.float16))
    for core in machine.cores:
        core.mark_written(Access("ub", 0, 2048))
    return machine, t


def test_cores_race_within_an_epoch() -> None:
    """Core 1 writes row 0 after the barrier, where core 0 reads it."""
    machine, t = two_cores(1024)
    for c in range(2):
        core = machine.core(c)
        core.sync_all(f"k:{c}:1")
        if c == 0:
            core.dma("load", "k:0:2", Access(t, 0, 512), Access("ub", 0, 512))
        else:
            core.dma("store", "k:1:2", Access("ub", 0, 512), Access(t, 0, 512))
    with pytest.raises(RaceError, match="between cores 0 and 1"):
        machine.finish()
    assert timing.last_replay == "reference"


def test_a_barrier_orders_the_pipes_of_a_core() -> None:
    """Like pipe_barrier all: V's write and MTE3's read need no flag across it."""
    machine = Machine(TINY, 1)
    z = machine.register_gm("z", np.zeros(256, np.float16))
    core = machine.core(0)
    core.issue("v", "fill", "k:1", 50, writes=[("ub", 0, 512)])
    core.sync_all("k:2")
    core.dma("store", "k:3", Access("ub", 0, 512), Access(z, 0, 512))
    report = machine.finish()
    fill, barrier, store = report.slices
    assert barrier.start == fill.end and store.start > barrier.end
    assert barrier.end == fill.end + LATENCY


def test_several_barriers_and_idle_cores() -> None:
    """Three epochs; core 1 has no work in the second."""

    def build() -> Machine:
        machine, t = two_cores(2048)
        for c in range(2):
            core = machine.core(c)
            for epoch in range(3):
                if c == 0 or epoch != 1:
                    start = 512 * (2 * (epoch % 2) + c)
                    core.dma(
                        "store",
                        f"k:{c}:{epoch}",
                        Access("ub", 0, 512),
                        Access(t, start, 512),
                    )
                if epoch < 2:
                    core.sync_all(f"k:{c}:sync{epoch}")
        return machine

    (_, report), (_, reference) = replays(build)
    assert report.to_dict() == reference.to_dict()
    first, second = report.sync_alls
    assert second.arrive[1] == first.release  # nothing to drain
    assert second.release == max(second.arrive) + LATENCY
    assert report.cycles > second.release


def test_unequal_barrier_counts_are_a_deadlock() -> None:
    machine = Machine(TINY, 2)
    for c in range(2):
        core = machine.core(c)
        core.issue("v", "op", f"k:{c}:1", 10)
        core.sync_all(f"k:{c}:2")
        if c == 0:
            core.sync_all("k:0:3")
    with pytest.raises(DeadlockError) as info:
        machine.finish()
    assert str(info.value) == (
        "k:0:3: deadlock: core 0 waits at its sync_all #2, which core 1 never "
        "reaches (it executes 1 sync_all); every core must execute every sync_all"
    )
    assert info.value.locs == ("k:0:3",)


def test_report_and_trace_show_the_barrier() -> None:
    report = exchange().finish()
    data = json.loads(report.to_json())
    (barrier,) = data["sync_all"]
    assert set(barrier) == {"loc", "arrive_cycles", "release_cycle", "wait_cycles"}
    assert [c["sync_wait_cycles"] for c in data["cores"]] == [
        barrier["release_cycle"] - t for t in barrier["arrive_cycles"]
    ]
    assert "sync_all: 1 barrier(s), released at cycles" in report.to_text()
    events = [e for e in chrome_trace(report)["traceEvents"] if e["name"] == "sync_all"]
    assert [(e["pid"], e["tid"], e["args"]["cycles"]) for e in events] == [
        (c, 0, barrier["release_cycle"] - barrier["arrive_cycles"][c]) for c in range(2)
    ]
    assert report.instructions == 8  # the barriers are not instructions
