"""The replay: in-order pipes, flags, barriers, deadlock, event limits, GM sharing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_streams import intervals, overlaps, vector_add

from pypto_mlir.sim import Access, DeadlockError, EventError, Machine, RaceError
from pypto_mlir.targets import load_target

TINY = load_target("tiny")


def test_double_buffering_overlaps_the_pipes() -> None:
    _, single = vector_add(double_buffer=False)
    _, double = vector_add(double_buffer=True)
    mte2, v, mte3 = (intervals(single, p) for p in ("MTE2", "V", "MTE3"))
    assert not overlaps(mte2, v) and not overlaps(v, mte3) and not overlaps(mte2, mte3)
    mte2, v, mte3 = (intervals(double, p) for p in ("MTE2", "V", "MTE3"))
    assert overlaps(mte2, v) and overlaps(mte2, mte3)
    assert double.cycles < single.cycles
    assert double.pipes["MTE2"].utilization > single.pipes["MTE2"].utilization
    # Same work, same busy time: only the overlap differs.
    assert double.pipes["V"].busy_cycles == single.pipes["V"].busy_cycles


def test_single_buffered_time_is_the_sum_of_the_stages() -> None:
    machine, report = vector_add(double_buffer=False, tiles=3)
    busy = sum(report.pipes[p].busy_cycles for p in ("MTE2", "V", "MTE3"))
    # Only scalar dispatch cycles at the start may add to the serial stage time.
    assert busy <= report.cycles <= busy + 10 * TINY.scalar.issue


def test_one_pipe_runs_in_order() -> None:
    m = Machine(TINY)
    core = m.core(0)
    for i in range(5):
        core.issue("v", "op", f"k:{i}", 100, writes=[("ub", 0, 256)])
    report = m.finish()
    starts = [s.start for s in report.slices]
    assert starts == sorted(starts)
    assert all(b - a == 100 for a, b in zip(starts, starts[1:], strict=False))
    assert report.cycles == starts[-1] + 100
    assert report.pipes["V"].busy_cycles == 500


def test_independent_pipes_run_concurrently() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("v", "vop", "k:1", 1000, writes=[("ub", 0, 256)])
    core.issue("m", "mmad", "k:2", 1000, writes=[("l0c", 0, 512)])
    report = m.finish()
    assert report.cycles < 1100


def test_wait_blocks_until_the_set_fires() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k:1", 500, writes=[("ub", 0, 256)])
    core.set_flag("mte2", "v", 0, "k:2")
    core.wait_flag("mte2", "v", 0, "k:3")
    core.issue("v", "use", "k:4", 10, reads=[("ub", 0, 256)])
    report = m.finish()
    load, use = report.slices
    assert use.start >= load.end


def test_wait_before_its_set_in_program_order() -> None:
    """Loop-carried sync: a wait issued before the set it matches."""
    m = Machine(TINY)
    core = m.core(0)
    core.wait_flag("v", "mte2", 0, "k:1")  # MTE2 waits for V, which is issued later
    core.issue("mte2", "load", "k:2", 50, writes=[("ub", 0, 256)])
    core.issue("v", "fill", "k:3", 400, writes=[("ub", 256, 512)])
    core.set_flag("v", "mte2", 0, "k:4")
    report = m.finish()
    load, fill = (s for s in report.slices if s.name in ("load", "fill"))
    assert load.start >= fill.end


def test_scalar_pipe_blocks_on_its_waits() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("v", "compute", "k:1", 300, writes=[("ub", 0, 32)])
    core.set_flag("v", "s", 0, "k:2")
    core.wait_flag("v", "s", 0, "k:3")
    core.issue("s", "ld", "k:4", 1, reads=[("ub", 0, 4)])
    core.scalar(7)
    core.issue("v", "next", "k:5", 10, writes=[("ub", 64, 96)])
    report = m.finish()
    compute, ld, nxt = report.slices
    assert ld.start >= compute.end
    assert nxt.start >= ld.end + 7


def test_barrier_all_orders_everything() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k:1", 700, writes=[("ub", 0, 256)])
    core.barrier("all", "k:2")
    core.issue("v", "use", "k:3", 10, reads=[("ub", 0, 256)])
    report = m.finish()
    load, use = report.slices
    assert use.start >= load.end


def test_barrier_on_one_pipe_does_not_order_others() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k:1", 700, writes=[("ub", 0, 256)])
    core.barrier("v", "k:2")
    core.issue("v", "use", "k:3", 10, reads=[("ub", 0, 256)])
    with pytest.raises(RaceError):
        m.finish()


def test_deadlock_names_the_wait() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k:1", 10, writes=[("ub", 0, 32)])
    core.wait_flag("v", "mte2", 3, "k:2")
    core.issue("mte2", "load", "k:3", 10, writes=[("ub", 0, 32)])
    with pytest.raises(DeadlockError, match="no matching set_flag") as info:
        m.finish()
    assert info.value.loc == "k:2"
    assert "k:2" in str(info.value) and "event 3" in str(info.value)


def test_circular_wait_is_a_deadlock() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.wait_flag("v", "mte2", 0, "k:1")
    core.set_flag("mte2", "v", 0, "k:2")
    core.wait_flag("mte2", "v", 0, "k:3")
    core.set_flag("v", "mte2", 0, "k:4")
    with pytest.raises(DeadlockError, match="circular") as info:
        m.finish()
    assert info.value.loc == "k:1"


def test_scalar_wait_without_set_is_a_deadlock() -> None:
    m = Machine(TINY)
    m.core(0).wait_flag("mte3", "s", 1, "k:7")
    with pytest.raises(DeadlockError, match="k:7"):
        m.finish()


def test_two_sets_without_a_wait_between() -> None:
    core = Machine(TINY).core(0)
    core.set_flag("mte2", "v", 0, "k:2")
    with pytest.raises(EventError, match="no wait_flag between") as info:
        core.set_flag("mte2", "v", 0, "k:4")
    assert info.value.locs == ("k:4", "k:2")


def test_a_set_firing_before_the_previous_wait_consumed() -> None:
    """set, wait, set in program order, but V reaches its wait only after the second
    set has fired: the flag would be set twice."""
    m = Machine(TINY)
    core = m.core(0)
    core.issue("v", "long", "k:0", 5000, writes=[("ub", 1024, 1056)])
    core.issue("mte2", "load", "k:1", 10, writes=[("ub", 0, 32)])
    core.set_flag("mte2", "v", 0, "k:2")
    core.wait_flag("mte2", "v", 0, "k:3")
    core.issue("mte2", "load", "k:4", 10, writes=[("ub", 32, 64)])
    core.set_flag("mte2", "v", 0, "k:5")
    core.wait_flag("mte2", "v", 0, "k:6")
    with pytest.raises(EventError, match="still pending") as info:
        m.finish()
    assert info.value.locs == ("k:5", "k:2")


def test_reusing_an_event_after_its_wait_is_fine() -> None:
    m = Machine(TINY)
    core = m.core(0)
    for i in range(3):
        core.issue("mte2", "load", f"k:{i}", 10, writes=[("ub", 0, 32)])
        core.set_flag("mte2", "v", 0)
        core.wait_flag("mte2", "v", 0)
        core.issue("v", "use", f"k:{i}", 100, reads=[("ub", 0, 32)])
        core.set_flag("v", "mte2", 0)
        core.wait_flag("v", "mte2", 0)
    m.finish()


def test_a_set_never_waited_for() -> None:
    m = Machine(TINY)
    m.core(0).set_flag("mte3", "mte2", 2, "k:9")
    with pytest.raises(EventError, match="never waited for"):
        m.finish()


def test_multi_core_runs_cores_in_parallel() -> None:
    _, one = vector_add(double_buffer=True, tiles=8, block_dim=1)
    _, two = vector_add(double_buffer=True, tiles=4, block_dim=2)
    assert len(two.cores) == 2
    assert two.cores[0].cycles == pytest.approx(two.cores[1].cycles, rel=0.05)
    assert two.cycles < 0.7 * one.cycles
    assert two.gm_bytes_read == one.gm_bytes_read


def _narrow_gm_target(tmp_path: Path) -> str:
    path = tmp_path / "narrow.toml"
    path.write_text(
        'base = "ascend910b"\nname = "narrow"\n[memories.gm]\n'
        'bandwidth = { value = 60, unit = "B/cycle", source = "assumed: test" }\n'
    )
    return str(path)


def test_cores_share_gm_bandwidth(tmp_path: Path) -> None:
    narrow = load_target(_narrow_gm_target(tmp_path))
    # With GM as fast as one core's MTE2, eight cores cannot all stream at full rate.
    _, one = vector_add(double_buffer=True, tiles=4, block_dim=1, target=narrow)
    _, eight = vector_add(double_buffer=True, tiles=4, block_dim=8, target=narrow)
    assert eight.cycles > 3 * one.cycles
    # The default chip has bandwidth to spare for eight cores.
    _, fast = vector_add(double_buffer=True, tiles=4, block_dim=8)
    _, fast1 = vector_add(double_buffer=True, tiles=4, block_dim=1)
    assert fast.cycles < 1.3 * fast1.cycles
    assert eight.gm_bandwidth_utilization <= 1.0


def test_empty_machine() -> None:
    report = Machine(TINY).finish()
    assert report.cycles == 0 and report.instructions == 0


def test_strided_record_on_the_cube() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.view("l0a", 0, (16, 16), np.float16)[:] = 1
    core.mark_written(Access("l0a", 0, 512))
    core.mark_written(Access("l0b", 0, 512))
    core.issue(
        "m",
        "mmad",
        "k:1",
        21,
        reads=[("l0a", 0, 512), ("l0b", 0, 512)],
        writes=[("l0c", 0, 1024)],
    )
    core.set_flag("m", "fix", 0)
    core.wait_flag("m", "fix", 0)
    out = m.register_gm("out", np.zeros(256, np.float32))
    core.dma("fixpipe", "k:2", Access("l0c", 0, 1024), Access(out, 0, 1024))
    report = m.finish()
    assert report.bytes_per_path == {"l0c->gm": 1024}
    assert report.pipes["FIX"].busy_cycles > 0
