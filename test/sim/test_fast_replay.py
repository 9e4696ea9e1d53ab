"""The fast replays (dataflow, logged heap, vectorised race check) against the
reference replay on random record streams: same report, same error."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pypto_mlir.sim import Access, Machine, SimError, race, timing
from pypto_mlir.sim.access import Pipe
from pypto_mlir.targets import L2Spec, load_target

TINY = load_target("tiny")
SHARED_GM = dataclasses.replace(TINY, gm_bytes_per_cycle=40.0)
"""GM slower than two transfers' paths: the replay must order GM transfers in time."""
WITH_L2 = dataclasses.replace(
    SHARED_GM,
    l2=L2Spec(
        size=256,
        line=64,
        policy="lru",
        write_allocate=True,
        read_bytes_per_cycle=30.0,
        hit_latency=50,
    ),
)
"""A 4-line L2 shared by the cores (GM transfers see its state in time order),
slower than the paths so its bandwidth matters too."""
TARGETS = {"tiny": TINY, "shared_gm": SHARED_GM, "l2": WITH_L2}

PIPES = ("mte1", "mte2", "mte3", "m", "v", "fix", "s")
UB_BLOCKS = 8
"""Accesses fall into a few blocks of UB and GM, so most of them overlap."""


def _access(draw: st.DrawFn, mem: str | object) -> Access:
    start = draw(st.integers(0, UB_BLOCKS * 32 - 1))
    count = draw(st.integers(1, 3))
    length = draw(st.integers(0, 64))
    stride = draw(st.integers(length, length + 80)) if count > 1 else None
    end = start + (count - 1) * (stride or 0) + length
    if end > UB_BLOCKS * 32 * 2:
        return Access(mem, start, min(length, 32))  # type: ignore[arg-type]
    return Access(mem, start, length, count, stride)  # type: ignore[arg-type]


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, bool, int, list[list[tuple]]]:
    """Per core a list of operations: ("instr", pipe, cycles, reads, writes, dma),
    ("set", src, dst, event), ("wait", src, dst, event), ("barrier", pipe),
    ("sync_all",) (as many on every core, but now and then one fewer on a core).

    With `private`, each pipe of each core touches bytes of its own (no races, so
    the timing of the fast replays is compared on long synchronised streams)."""
    target = draw(st.sampled_from(tuple(TARGETS)))
    private = draw(st.booleans())
    block_dim = draw(st.integers(1, 2))
    syncs = draw(st.integers(0, 2))
    programs = []
    for _ in range(block_dim):
        ops: list[tuple] = []
        open_sets: list[tuple[str, str, int]] = []
        for _ in range(draw(st.integers(0, 24))):
            choice = draw(st.integers(0, 9))
            if choice <= 4:
                pipe = draw(st.sampled_from(PIPES))
                dma = None
                if pipe in ("mte2", "mte3") and draw(st.booleans()):
                    dma = "load" if pipe == "mte2" else "store"
                reads = [
                    (draw(st.sampled_from(("ub", "gm", "l1"))), _access(draw, "?"))
                    for _ in range(draw(st.integers(0, 2)))
                ]
                writes = [
                    (draw(st.sampled_from(("ub", "gm"))), _access(draw, "?"))
                    for _ in range(draw(st.integers(0, 2)))
                ]
                cycles = draw(st.integers(0, 400))
                ops.append(("instr", pipe, cycles, reads, writes, dma))
            elif choice <= 6:
                src, dst = draw(
                    st.lists(
                        st.sampled_from(PIPES), min_size=2, max_size=2, unique=True
                    )
                )
                event = draw(st.integers(0, 1))
                ops.append(("set", src, dst, event))
                open_sets.append((src, dst, event))
            elif choice <= 8 and open_sets:
                # Usually the oldest open set; sometimes a wait that never matches.
                if draw(st.integers(0, 7)):
                    src, dst, event = open_sets.pop(0)
                else:
                    src, dst, event = "v", "mte2", 1
                ops.append(("wait", src, dst, event))
            else:
                ops.append(("barrier", draw(st.sampled_from((*PIPES, "all")))))
        if draw(st.integers(0, 5)):  # usually close every set
            ops += [("wait", *key) for key in open_sets]
        count = syncs - (syncs > 0 and not draw(st.integers(0, 9)))
        places = draw(
            st.lists(st.integers(0, len(ops)), min_size=count, max_size=count)
        )
        for place in sorted(places, reverse=True):
            ops.insert(place, ("sync_all",))
        programs.append(ops)
    return target, private, block_dim, programs


def _build(
    target: str, private: bool, block_dim: int, programs: list[list[tuple]]
) -> Machine:
    """The machine with every core's stream issued (GM and on-chip initialised)."""
    machine = Machine(TARGETS[target], block_dim)
    gm = machine.register_gm("x", np.zeros(UB_BLOCKS * 16 * 2, np.float16))

    def own(mem: str | object, core: int, pipe: str, a: Access) -> Access:
        """`a` moved into bytes only this pipe of this core touches."""
        region = PIPES.index(pipe) + (len(PIPES) * core if mem is gm else 0)
        return Access(mem, 32 * region + a.start % 16, min(a.length, 16))  # type: ignore[arg-type]

    for index, ops in enumerate(programs):
        core = machine.core(index)
        core.mark_written(Access("ub", 0, 2 * UB_BLOCKS * 32))
        core.mark_written(Access("l1", 0, 2 * UB_BLOCKS * 32))
        for op in ops:
            if op[0] == "instr":
                _, pipe, cycles, reads, writes, dma = op
                mems = {"gm": gm, "ub": "ub", "l1": "l1"}
                accesses = [
                    [
                        own(mems[m], index, pipe, a)
                        if private
                        else Access(mems[m], a.start, a.length, a.count, a.stride)
                        for m, a in side
                    ]
                    for side in (reads, writes)
                ]
                load = (Access(gm, 0, 64), Access("ub", 64 * (index + 1), 64))
                store = (Access("ub", 0, 64), Access(gm, 64 * index, 32))
                if private:
                    load = (
                        own(gm, index, pipe, load[0]),
                        own("ub", index, pipe, load[1]),
                    )
                    store = (
                        own("ub", index, pipe, store[0]),
                        own(gm, index, pipe, store[1]),
                    )
                if dma == "load":
                    src, dst = load
                    core.issue(
                        pipe,
                        "load",
                        f"c{index}:{len(machine.records)}",
                        cycles,
                        reads=[src, *accesses[0]],
                        writes=[dst],
                        path=("gm", "ub"),
                        wire_bytes=512,
                    )
                    continue
                if dma == "store":
                    core.issue(
                        pipe,
                        "store",
                        f"c{index}:{len(machine.records)}",
                        cycles,
                        reads=[store[0]],
                        writes=[store[1], *accesses[1]],
                        path=("ub", "gm"),
                    )
                    continue
                core.scalar(cycles % 3)
                core.issue(
                    pipe,
                    "op",
                    f"c{index}:{len(machine.records)}",
                    cycles,
                    reads=accesses[0],
                    writes=accesses[1],
                    # A start-up, paid only when the instruction starts a stream.
                    head=cycles % 17,
                )
            elif op[0] == "set":
                core.set_flag(op[1], op[2], op[3], f"c{index}:set")
            elif op[0] == "wait":
                core.wait_flag(op[1], op[2], op[3], f"c{index}:wait")
            elif op[0] == "sync_all":
                core.sync_all(f"c{index}:sync_all")
            else:
                core.barrier(op[1], f"c{index}:barrier")
    return machine


def _outcome(machine: Machine, reference: bool) -> tuple:
    for core in machine.cores:
        core._flush_scalar()
    try:
        report = timing.replay(machine, reference=reference)
    except SimError as error:
        return ("error", type(error).__name__, str(error), error.locs)
    return ("report", report.to_dict(), list(report.slices))


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(streams())
def test_fast_replay_matches_the_reference(
    stream: tuple[str, bool, int, list[list[tuple]]],
) -> None:
    try:
        fast_machine = _build(*stream)
    except SimError:
        return  # refused when issued (e.g. two pending sets): no replay to compare
    fast = _outcome(fast_machine, reference=False)
    path = timing.last_replay
    reference = _outcome(_build(*stream), reference=True)
    assert fast == reference
    if fast[0] == "report":
        # The vectorised race check compares the same pairs of accesses as the
        # reference's detector: it never suspects a race the reference does not see.
        assert path != "reference"


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(streams())
def test_race_pass_in_chunks_matches_the_whole(
    stream: tuple[str, bool, int, list[list[tuple]]],
) -> None:
    """`find_races` over block ranges of a few bursts decides as over all at once."""
    try:
        whole = _outcome(_build(*stream), reference=False)
    except SimError:
        return
    whole_path = timing.last_replay
    saved = race.RACE_CHUNK_ENTRIES
    race.RACE_CHUNK_ENTRIES = 2
    try:
        chunked = _outcome(_build(*stream), reference=False)
    finally:
        race.RACE_CHUNK_ENTRIES = saved
    assert (chunked, timing.last_replay) == (whole, whole_path)


def test_the_fast_paths_are_taken() -> None:
    """A race-free stream is replayed by the dataflow replay, or by the logged one
    when GM is shared or there is an L2; a racy one by the reference, which
    reports it."""
    for target, expected in (
        (TINY, "dataflow"),
        (SHARED_GM, "logged"),
        (WITH_L2, "logged"),
    ):
        machine = Machine(target, 2)
        x = machine.register_gm("x", np.zeros(1024, np.float16))
        for c in range(2):
            core = machine.core(c)
            for i in range(4):
                ub = Access("ub", 256 * (i % 2), 256)
                core.dma("load", "k:1", Access(x, 256 * i + 1024 * c, 256), ub)
                core.set_flag("mte2", "mte3", 0, "k:2")
                core.wait_flag("mte2", "mte3", 0, "k:3")
                core.dma("store", "k:4", ub, Access(x, 256 * i + 1024 * c, 256))
                core.set_flag("mte3", "mte2", 0, "k:5")
                core.wait_flag("mte3", "mte2", 0, "k:6")
        machine.finish()
        assert timing.last_replay == expected
    machine = Machine(TINY)
    core = machine.core(0)
    core.issue("mte2", "load", "k:1", 10, writes=[("ub", 0, 64)])
    core.issue("v", "use", "k:2", 10, reads=[("ub", 0, 64)])
    with pytest.raises(SimError, match="race on ub"):
        machine.finish()
    assert timing.last_replay == "reference"


def test_pipe_enum_and_strings_are_accepted_ints_are_not() -> None:
    core = Machine(TINY).core(0)
    core.issue(Pipe.V, "a", "k:1", 1)
    core.issue("PIPE_V", "b", "k:2", 1)
    with pytest.raises(ValueError, match="unknown pipe"):
        core.issue(5, "c", "k:3", 1)  # type: ignore[arg-type]
