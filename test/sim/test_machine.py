"""Functional memory, records and the checks made when an instruction is issued."""

from __future__ import annotations

import numpy as np
import pytest

from pypto_mlir.sim import (
    Access,
    AccessError,
    EventError,
    Machine,
    Pipe,
    SimError,
    UninitializedReadError,
)
from pypto_mlir.targets import load_target

TINY = load_target("tiny")


def test_pipe_parse() -> None:
    assert Pipe.parse("mte2") is Pipe.MTE2
    assert Pipe.parse("PIPE_FIX") is Pipe.FIX
    assert Pipe.parse(" v ") is Pipe.V
    assert Pipe.parse(Pipe.M) is Pipe.M
    with pytest.raises(ValueError, match="unknown pipe"):
        Pipe.parse("mte4")


def test_memories_have_target_sizes() -> None:
    m = Machine(TINY, 2)
    for core in m.cores:
        assert core.memory("ub").size == 4096
        assert core.memory("l0c").size == 4096
        assert core.memory("l1").dtype == np.uint8
    with pytest.raises(AccessError, match="unknown on-chip memory"):
        m.core(0).memory("l2")


def test_views_are_typed_and_shared() -> None:
    core = Machine(TINY).core(0)
    v = core.view("ub", 64, (4, 8), np.float32)
    v[:] = np.arange(32, dtype=np.float32).reshape(4, 8)
    again = core.view("ub", 64, (32,), np.float32)
    assert np.array_equal(again, np.arange(32, dtype=np.float32))
    column = core.view("ub", 64, (4,), np.float32, strides=(32,))
    assert column.tolist() == [0, 8, 16, 24]
    with pytest.raises(AccessError, match="not aligned"):
        core.view("ub", 2, (4,), np.float32)
    with pytest.raises(AccessError, match="outside"):
        core.view("ub", 4000, (100,), np.float16)
    with pytest.raises(AccessError, match="outside"):
        core.view("ub", 0, (4,), np.float32, strides=(2048,))


def test_block_dim_is_bounded_by_the_cores() -> None:
    with pytest.raises(SimError, match="block_dim 3"):
        Machine(TINY, 3)


def test_gm_tensors() -> None:
    m = Machine(TINY)
    a = m.register_gm("a", np.arange(16, dtype=np.float32))
    assert m.gm("a") is a and a.nbytes == 64
    assert a.view(16, (2,), np.float32).tolist() == [4.0, 5.0]
    with pytest.raises(SimError, match="already registered"):
        m.register_gm("a", np.zeros(4))
    with pytest.raises(ValueError, match="C-contiguous"):
        m.register_gm("b", np.zeros((4, 4))[:, ::2])


def test_uninitialized_read_is_an_error() -> None:
    core = Machine(TINY).core(0)
    core.issue("v", "vdup", "k:1", 10, writes=[Access("ub", 0, 256)])
    core.issue(
        "v", "vabs", "k:2", 10, reads=[Access("ub", 0, 256)], writes=[("ub", 256, 512)]
    )
    with pytest.raises(
        UninitializedReadError, match="k:3: read of ub byte 512"
    ) as info:
        core.issue("v", "vadd", "k:3", 10, reads=[Access("ub", 256, 512)])
    assert info.value.locs == ("k:3",)


def test_interned_accesses_are_shared_and_still_checked() -> None:
    """`core.access` gives one object per distinct on-chip access; an interned
    read of bytes never written is refused like any other."""
    core = Machine(TINY).core(0)
    first = core.access("ub", 0, 32, 4, 64)
    assert core.access("ub", 0, 32, 4, 64) is first
    assert first == Access("ub", 0, 32, count=4, stride=64)
    assert core.access("ub", 0, 64) == Access("ub", 0, 64)
    assert core.machine.core(0).access("ub", 0, 64) is core.access("ub", 0, 64)
    with pytest.raises(UninitializedReadError, match="k:1: read of ub byte 0"):
        core.issue("v", "vabs", "k:1", 10, reads=[first])
    core.issue("v", "vdup", "k:2", 10, writes=[first])
    core.issue("v", "vabs", "k:3", 10, reads=[core.access("ub", 0, 32, 4, 64)])
    with pytest.raises(AccessError, match="bad access"):
        core.access("ub", -32, 32)


def test_strided_uninitialized_read() -> None:
    core = Machine(TINY).core(0)
    core.mark_written(Access("ub", 0, 32, count=4, stride=64))
    core.check_initialized(Access("ub", 0, 32, count=4, stride=64))
    with pytest.raises(UninitializedReadError, match="byte 32"):
        core.check_initialized(Access("ub", 0, 64, count=2, stride=64))


def test_out_of_range_access_is_an_error() -> None:
    m = Machine(TINY)
    core = m.core(0)
    with pytest.raises(AccessError, match=r"k:1: access to ub bytes \[4000, 4128\)"):
        core.issue("v", "vdup", "k:1", 10, writes=[Access("ub", 4000, 128)])
    g = m.register_gm("g", np.zeros(8, np.float16))
    with pytest.raises(AccessError, match="gm:g"):
        core.issue("mte3", "dma", "k:2", 10, writes=[Access(g, 0, 32)])
    with pytest.raises(AccessError, match="outside"):
        core.issue(
            "v", "x", "k:3", 1, writes=[Access("ub", 0, 512, count=9, stride=512)]
        )


def test_issue_checks_the_dma_path_and_pipe() -> None:
    core = Machine(TINY).core(0)
    core.issue("mte2", "dma", "k:1", 10, writes=[("ub", 0, 32)], path=("gm", "ub"))
    with pytest.raises(SimError, match="runs on MTE2, not MTE3"):
        core.issue("mte3", "dma", "k:2", 10, writes=[("ub", 0, 32)], path=("gm", "ub"))
    with pytest.raises(SimError, match="no DMA path l0a->gm"):
        core.issue("fix", "dma", "k:3", 10, reads=[("ub", 0, 32)], path=("l0a", "gm"))
    with pytest.raises(SimError, match="pipe ALL"):
        core.issue("all", "x", "k:4", 1)


def test_event_ids_are_bounded() -> None:
    core = Machine(TINY).core(0)
    core.set_flag("mte2", "v", 7)
    with pytest.raises(EventError, match="event id 8 out of range"):
        core.set_flag("mte2", "v", 8, "k:9")


def test_dma_copies_bursts_and_charges_the_cost() -> None:
    m = Machine(TINY)
    core = m.core(0)
    src = m.register_gm("src", np.arange(64 * 16, dtype=np.float16).reshape(64, 16))
    # Rows 0, 2, 4, ... of the 32-byte-row matrix into a packed UB tile.
    gid = core.dma(
        "load", "k:1", Access(src, 0, 32, count=8, stride=64), Access("ub", 0, 256)
    )
    tile = core.view("ub", 0, (8, 16), np.float16)
    assert np.array_equal(tile, src.array[0:16:2])
    rec = m.records[gid]
    assert rec.pipe == Pipe.MTE2 and rec.nbytes == 256
    assert rec.wire_bytes == 8 * TINY.dma[("gm", "ub")].granule
    out = m.register_gm("out", np.zeros(128, np.float16))
    core.dma("store", "k:2", Access("ub", 0, 256), Access(out, 0, 256))
    assert np.array_equal(out.array, src.array[0:16:2].reshape(-1))
    with pytest.raises(SimError, match="moves 256 bytes"):
        core.dma("bad", "k:3", Access("ub", 0, 256), Access(out, 0, 128))
    with pytest.raises(SimError, match="no DMA path"):
        core.dma("bad", "k:4", Access("ub", 0, 32), Access("l0a", 0, 32))


def test_allocations_are_checked_and_reported() -> None:
    m = Machine(TINY)
    core = m.core(0)
    core.note_alloc("ub", 0, 1024)
    core.note_alloc("ub", 512, 1024)
    core.note_alloc("l0a", 512, 512)
    with pytest.raises(AccessError, match="not 512-byte aligned"):
        core.note_alloc("l0b", 32, 512, "k:1")
    with pytest.raises(AccessError, match="does not fit in ub"):
        core.note_alloc("ub", 4064, 64, "k:2")
    report = m.finish()
    ub = report.cores[0].memories["ub"]
    assert (ub.allocated_bytes, ub.high_water, ub.size) == (1536, 1536, 4096)
    assert report.cores[0].memories["l0a"].allocated_bytes == 512


def test_finish_only_once() -> None:
    m = Machine(TINY)
    m.finish()
    with pytest.raises(SimError, match="already"):
        m.finish()
