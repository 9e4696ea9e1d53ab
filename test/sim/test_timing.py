"""The replay: in-order pipes, flags, barriers, deadlock, event limits, GM sharing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_streams import intervals, overlaps, vector_add

from pypto_mlir.sim import Access, DeadlockError, EventError, Machine, RaceError
from pypto_mlir.targets import load_target
from pypto_mlir.targets.cost import (
    mmad_cycles,
    vector_cycles,
    vector_head_cycles,
)

TINY = load_target("tiny")
A2 = load_target("ascend910b")

# --- cycles derived by hand from ascend910b.toml ------------------------------------
# The expected cycles of these tests are worked out in their docstrings from the
# target file's numbers (test_cost.py lists them), so a change of the replay's
# rules (overlap, flag waits, start-ups) fails here. S dispatches one record per
# cycle (scalar.issue = 1): the k-th record of a core is issued at cycle k.
# An 8 KiB gm -> ub load costs 1295 + 2 + ceil(8192 / 58.56) = 1437 cycles and
# an 8 KiB ub -> gm store 278 + 2 + ceil(8192 / 109.38) = 355 (test_cost.py).
LOAD_8K, STORE_8K = 1437, 355


def _vector(core, op: str, repeats: int, loc: str, dst: int = 0) -> None:
    """Issue vector op `op` on f16 with its target cost, writing UB at `dst`."""
    core.issue(
        "v",
        f"v{op}",
        loc,
        vector_cycles(A2, op, repeats, np.float16),
        writes=[("ub", dst, dst + 256 * repeats)],
        head=vector_head_cycles(A2, op, np.float16),
    )


def _load(core, gm, loc: str, ub: int = 0) -> None:
    core.dma("load", loc, Access(gm, 0, 8192), Access("ub", ub, 8192))


def test_hand_single_dma() -> None:
    """Issued at cycle 1, the 8 KiB load ends at 1 + 1437 = 1438."""
    m = Machine(A2)
    x = m.register_gm("x", np.zeros(4096, np.float16))
    _load(m.core(0), x, "k:1")
    assert m.finish().cycles == 1 + LOAD_8K


def test_hand_two_pipes_overlap() -> None:
    """An 8 KiB load (MTE2, issued at 1) and an independent 32-repeat vadd (V,
    issued at 2: head 6 + ceil(32 * 2.07) = 67) run at once: the run ends with
    the load at 1438, not 1438 + 73."""
    m = Machine(A2)
    x = m.register_gm("x", np.zeros(4096, np.float16))
    core = m.core(0)
    _load(core, x, "k:1")
    _vector(core, "add", 32, "k:2", dst=65536)
    report = m.finish()
    (add,) = [s for s in report.slices if s.name == "vadd"]
    assert (add.start, add.end) == (2, 2 + 6 + 67)
    assert report.cycles == 1 + LOAD_8K


def test_hand_flag_wait() -> None:
    """load (issued 1, ends 1438); set_flag(MTE2 -> V) (issued 2, fires when the
    load ends, 1438); wait_flag on V (issued 3) holds V until 1438; the vadd
    (issued 4) then starts a stream on V: 1438 + 6 + 67 = 1511."""
    m = Machine(A2)
    x = m.register_gm("x", np.zeros(4096, np.float16))
    core = m.core(0)
    _load(core, x, "k:1")
    core.set_flag("mte2", "v", 0, "k:2")
    core.wait_flag("mte2", "v", 0, "k:3")
    _vector(core, "add", 32, "k:4")
    report = m.finish()
    (add,) = [s for s in report.slices if s.name == "vadd"]
    assert (add.start, add.end) == (1 + LOAD_8K, 1 + LOAD_8K + 6 + 67)
    assert report.cycles == 1511


def test_hand_vector_chain_pays_one_start_up_per_stream() -> None:
    """vadd, vexp, vmul of 32 f16 repeats issued at 1, 2, 3 run back to back on
    V: only the first starts a stream and pays its head. vadd 6 + 67 = 73 ends at
    74; vexp ceil(32 * 3.99) = 128 ends at 202; vmul ceil(32 * 2.13) = 69 at 271.
    A set_flag(V -> MTE3) (issued 4, fires at 271) drains V (there is no
    separate vector tail: the profiles' start-up includes it), so the vexp after
    it (issued 6) starts a new stream: 271 + 12 + 128 = 411."""
    m = Machine(A2)
    core = m.core(0)
    _vector(core, "add", 32, "k:1")
    _vector(core, "exp", 32, "k:2")
    _vector(core, "mul", 32, "k:3")
    core.set_flag("v", "mte3", 0, "k:4")
    core.wait_flag("v", "mte3", 0, "k:5")
    _vector(core, "exp", 32, "k:6")
    report = m.finish()
    ends = [s.end for s in report.slices if s.pipe == "V" and s.name.startswith("v")]
    assert ends == [74, 202, 271, 411]
    assert report.pipes["V"].busy_cycles == 73 + 128 + 69 + 12 + 128


def test_hand_cube_start_up() -> None:
    """Two 32 x 32 x 32 f16 mmads back to back (8 cycles each, test_cost.py):
    the first, issued at 1, starts a stream on M and pays cube.head_cycles = 6:
    [1, 15); the second, issued at 2, follows at once: [15, 23). After a
    barrier on M, the third pays the head again: [23, 37). In f32 (32 cycles)
    a lone mmad issued at 1 ends at 1 + 6 + 32 = 39."""
    for dtype, expected in ((np.float16, [15, 23, 37]), (np.float32, [39])):
        m = Machine(A2)
        core = m.core(0)
        for i in range(len(expected)):
            if i == 2:
                core.barrier("m", "k:b")
            core.issue(
                "m",
                "mmad",
                f"k:{i}",
                mmad_cycles(A2, 32, 32, 32, dtype),
                writes=[("l0c", 0, 4096)],
                head=A2.cube.head_cycles,
            )
        ends = [s.end for s in m.finish().slices if s.name == "mmad"]
        assert ends == expected


def test_hand_double_buffered_three_tiles() -> None:
    """sim_streams.vector_add, 3 tiles of 4096 f16 in two buffers (ascend910b).
    Per tile: loads of x and y (1437 each), vadd of 32 repeats (67, + 6 when V
    starts a stream: it always does, V waits for the loads), store (355).
    S issues the records one per cycle: the prologue sets (MTE3, cycles 1-2),
    tile 0's wait (3) and loads (4, 5). MTE2: x0 [4, 1441), y0 [1441, 2878),
    x1, y1 right after (buffer 1 is free): [2878, 5752); x2, y2 wait for buffer
    0's store, long done, so [5752, 8626). Tile 2's vadd [8626, 8699), its
    store [8699, 9054): the run takes 9054 cycles, MTE2 busy 6 * 1437 = 8622."""
    _, report = vector_add(double_buffer=True, tiles=3)
    assert report.pipes["MTE2"].busy_cycles == 6 * LOAD_8K
    assert report.pipes["V"].busy_cycles == 3 * (6 + 67)
    assert report.pipes["MTE3"].busy_cycles == 3 * STORE_8K
    assert report.cycles == 4 + 6 * LOAD_8K + 6 + 67 + STORE_8K


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
    # 32 KiB tiles: long enough that transfer time, not GM latency, dominates.
    kw = {"double_buffer": True, "tiles": 4, "tile": 16384, "target": narrow}
    _, one = vector_add(block_dim=1, **kw)
    _, eight = vector_add(block_dim=8, **kw)
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
