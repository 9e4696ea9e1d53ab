"""The race detector: found when pipes or cores are unordered, silent when ordered."""

from __future__ import annotations

import numpy as np
import pytest
from sim_streams import FLAGS, vector_add

from pypto_mlir.sim import Access, Machine, RaceError
from pypto_mlir.targets import load_target

TINY = load_target("tiny")


def test_raw_race_names_both_instructions_and_the_bytes() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k.mlir:3:5", 100, writes=[("ub", 0, 512)])
    core.issue(
        "v",
        "vadd",
        "k.mlir:4:5",
        10,
        reads=[("ub", 256, 512)],
        writes=[("ub", 1024, 1280)],
    )
    with pytest.raises(RaceError) as info:
        m.finish()
    e = info.value
    assert (e.first_loc, e.second_loc) == ("k.mlir:3:5", "k.mlir:4:5")
    assert (e.memory, e.lo, e.hi) == ("ub", 256, 512)
    assert e.locs == ("k.mlir:3:5", "k.mlir:4:5")
    assert "'load'" in str(e) and "'vadd'" in str(e) and "[256, 512)" in str(e)


def test_war_race() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("v", "fill", "k:1", 10, writes=[("ub", 0, 256)])
    core.set_flag("v", "mte3", 0)
    core.wait_flag("v", "mte3", 0)
    core.issue("mte3", "store", "k:2", 100, reads=[("ub", 0, 256)])
    core.issue("v", "overwrite", "k:3", 10, writes=[("ub", 0, 32)])
    with pytest.raises(
        RaceError, match=r"read by 'store'.*write by 'overwrite'"
    ) as info:
        m.finish()
    assert (info.value.first_loc, info.value.second_loc) == ("k:2", "k:3")


def test_waw_race() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k:1", 10, writes=[("l1", 0, 4096)])
    core.issue("fix", "fixpipe", "k:2", 10, writes=[("l1", 2048, 2080)], reads=[])
    with pytest.raises(RaceError, match=r"l1 bytes \[2048, 2080\)"):
        m.finish()


def test_no_race_when_ordered() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k:1", 100, writes=[("ub", 0, 512)])
    core.set_flag("mte2", "v", 0)
    core.wait_flag("mte2", "v", 0)
    core.issue(
        "v", "vadd", "k:2", 10, reads=[("ub", 0, 512)], writes=[("ub", 512, 1024)]
    )
    core.set_flag("v", "mte3", 0)
    core.wait_flag("v", "mte3", 0)
    # MTE3 may read what MTE2 wrote: ordered through V (transitively).
    core.issue("mte3", "store", "k:3", 100, reads=[("ub", 0, 1024)])
    m.finish()


def test_no_race_on_disjoint_bytes_or_the_same_pipe() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k:1", 100, writes=[("ub", 0, 512)])
    core.issue("mte2", "load", "k:2", 100, writes=[("ub", 0, 512)])
    core.issue("v", "vdup", "k:3", 10, writes=[("ub", 512, 1024)])
    core.issue(
        "v", "vabs", "k:4", 10, reads=[("ub", 512, 1024)], writes=[("ub", 512, 1024)]
    )
    # Two pipes reading the same bytes never race.
    core.set_flag("mte2", "v", 0)
    core.wait_flag("mte2", "v", 0)
    core.issue("v", "r1", "k:5", 10, reads=[("ub", 0, 512)])
    core.set_flag("mte2", "mte3", 0)
    core.wait_flag("mte2", "mte3", 0)
    core.issue("mte3", "r2", "k:6", 10, reads=[("ub", 0, 512)])
    m.finish()


def test_memories_and_cores_are_separate() -> None:
    m = Machine(TINY, 2)
    for c in range(2):
        core = m.core(c)
        core.issue("mte2", "load", "k:1", 10, writes=[("ub", 0, 64)])
        core.issue("mte1", "load", "k:2", 10, writes=[("l0a", 0, 512)])
    m.finish()


def test_barrier_all_removes_the_race() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.issue("mte2", "load", "k:1", 100, writes=[("ub", 0, 512)])
    core.barrier("all")
    core.issue("v", "vadd", "k:2", 10, reads=[("ub", 0, 512)])
    m.finish()


def test_strided_accesses_overlap_only_where_they_touch() -> None:
    # MTE2 writes even 64-byte rows, V reads odd rows: no overlap, no race.
    m = Machine(TINY)
    core = m.core(0)
    core.issue("v", "init", "k:0", 10, writes=[("ub", 0, 1024)])
    core.set_flag("v", "mte2", 0)
    core.wait_flag("v", "mte2", 0)
    core.issue(
        "mte2", "load", "k:1", 10, writes=[Access("ub", 0, 64, count=8, stride=128)]
    )
    core.issue("v", "use", "k:2", 10, reads=[Access("ub", 64, 64, count=8, stride=128)])
    m.finish()
    # ...but rows that touch the same block race.
    m = Machine(TINY)
    core = m.core(0)
    core.issue("v", "init", "k:0", 10, writes=[("ub", 0, 1024)])
    core.set_flag("v", "mte2", 0)
    core.wait_flag("v", "mte2", 0)
    core.issue(
        "mte2", "load", "k:1", 10, writes=[Access("ub", 0, 64, count=8, stride=128)]
    )
    core.issue(
        "v", "use", "k:2", 10, reads=[Access("ub", 384, 32, count=2, stride=256)]
    )
    with pytest.raises(RaceError, match=r"ub bytes \[384, 416\)"):
        m.finish()


def test_race_through_gm_on_one_core() -> None:
    m = Machine(TINY)
    core = m.core(0)
    g = m.register_gm("g", np.zeros(256, np.float16))
    core.issue("v", "fill", "k:0", 10, writes=[("ub", 0, 512)])
    core.set_flag("v", "mte3", 0)
    core.wait_flag("v", "mte3", 0)
    core.issue(
        "mte3", "store", "k:1", 100, reads=[("ub", 0, 512)], writes=[Access(g, 0, 512)]
    )
    core.issue(
        "mte2",
        "reload",
        "k:2",
        100,
        reads=[Access(g, 0, 512)],
        writes=[("ub", 512, 1024)],
    )
    with pytest.raises(RaceError, match=r"gm:g bytes \[0, 512\)"):
        m.finish()


def test_cores_writing_the_same_gm_bytes_race() -> None:
    m = Machine(TINY, 2)
    g = m.register_gm("g", np.zeros(64, np.float32))
    for c in range(2):
        core = m.core(c)
        core.issue("v", "fill", f"c{c}:1", 10, writes=[("ub", 0, 256)])
        core.set_flag("v", "mte3", 0)
        core.wait_flag("v", "mte3", 0)
        lo = 0 if c == 0 else 96  # core 1 overlaps core 0's [96, 128)
        core.issue(
            "mte3",
            "store",
            f"c{c}:2",
            50,
            reads=[("ub", 0, 128)],
            writes=[Access(g, lo, 128)],
        )
    with pytest.raises(
        RaceError, match=r"gm:g bytes \[96, 128\) between cores"
    ) as info:
        m.finish()
    assert (info.value.first_loc, info.value.second_loc) == ("c0:2", "c1:2")


def test_cores_reading_shared_gm_and_writing_disjoint_gm_do_not_race() -> None:
    m = Machine(TINY, 2)
    shared = m.register_gm("w", np.ones(64, np.float32))
    out = m.register_gm("out", np.zeros(64, np.float32))
    for c in range(2):
        core = m.core(c)
        core.issue(
            "mte2",
            "load",
            f"c{c}:1",
            50,
            reads=[Access(shared, 0, 256)],
            writes=[("ub", 0, 256)],
        )
        core.set_flag("mte2", "mte3", 0)
        core.wait_flag("mte2", "mte3", 0)
        core.issue(
            "mte3",
            "store",
            f"c{c}:2",
            50,
            reads=[("ub", 0, 128)],
            writes=[Access(out, 128 * c, 128)],
        )
    m.finish()


def test_a_core_reading_what_another_writes_races() -> None:
    m = Machine(TINY, 2)
    g = m.register_gm("g", np.zeros(64, np.float32))
    m.core(0).issue(
        "mte2", "load", "c0:1", 50, reads=[Access(g, 0, 64)], writes=[("ub", 0, 64)]
    )
    m.core(1).issue(
        "mte2", "load", "c1:1", 50, reads=[Access(g, 32, 64)], writes=[("ub", 0, 64)]
    )
    core = m.core(1)
    core.issue("v", "fill", "c1:2", 10, writes=[("ub", 64, 128)])
    core.set_flag("v", "mte3", 0)
    core.wait_flag("v", "mte3", 0)
    core.issue(
        "mte3", "store", "c1:3", 50, reads=[("ub", 64, 128)], writes=[Access(g, 0, 64)]
    )
    with pytest.raises(RaceError, match="between cores 0 and 1") as info:
        m.finish()
    assert info.value.first_loc == "c0:1"


@pytest.mark.parametrize("omit", FLAGS)
def test_removing_any_flag_pair_of_the_pipeline_is_caught(omit: str) -> None:
    with pytest.raises(RaceError):
        vector_add(double_buffer=True, tiles=4, omit=omit)


def test_the_full_pipeline_is_race_free() -> None:
    for double in (False, True):
        vector_add(double_buffer=double, tiles=4, block_dim=2)
