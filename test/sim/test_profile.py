"""The per-line profile (sim/profile.py) and its text, on hand-built record streams
whose cycles are known: explicit instruction cycles, one core or two, so every
figure below follows from the replay rules (docs/simulator.md) and the target's
`scalar.issue`."""

from __future__ import annotations

import numpy as np
import pytest

from pypto_mlir.sim import Access, Machine, Report
from pypto_mlir.sim.columns import flag_pairs, line_of
from pypto_mlir.sim.profile import blocked_waits, profile
from pypto_mlir.sim.profile_text import profile_text, top_line_text
from pypto_mlir.sim.report import RooflineBound
from pypto_mlir.targets import load_target

TARGET = load_target("ascend910b")
ISSUE = TARGET.scalar.issue


def _load(core, tensor, offset: int, loc: str, **wire: int) -> None:
    """MTE2 loads 256 B of `tensor` into ub[0, 256) in 100 cycles."""
    core.issue(
        "mte2",
        "load",
        loc,
        100,
        reads=[Access(tensor, offset, 256)],
        writes=[Access("ub", 0, 256)],
        path=("gm", "ub"),
        **wire,
    )


def _vector(core, name: str, loc: str, cycles: int) -> None:
    """V reads ub[0, 256) and writes ub[256, 512)."""
    core.issue(
        "v",
        name,
        loc,
        cycles,
        reads=[Access("ub", 0, 256)],
        writes=[Access("ub", 256, 256)],
    )


def _raw_kernel() -> Report:
    """MTE2 loads 256 B (512 on the wire) in 100 cycles, V adds in 50 after a flag."""
    machine = Machine(TARGET, 1)
    x = machine.register_gm("x", np.zeros(128, np.float16))
    core = machine.core(0)
    core.note_alloc("ub", 0, 512)
    _load(core, x, 0, "k.py:1:5", nbytes=256, wire_bytes=512)
    core.set_flag("mte2", "v", 0, "k.py:2:5")
    core.wait_flag("mte2", "v", 0, "k.py:2:5")
    _vector(core, "vadd", "k.py:2:9", 50)
    return machine.finish()


def test_lines_cycles_bytes_and_waits() -> None:
    report = _raw_kernel()
    prof = profile(report)
    assert [s.line for s in prof.lines] == ["k.py:1", "k.py:2"]
    load, add = prof.lines
    assert (load.cycles, load.pipe, load.pipe_cycles) == (100, "MTE2", {"MTE2": 100})
    assert (load.dma_bytes, load.wire_bytes, load.wire_efficiency) == (256, 512, 0.5)
    assert (load.instructions, load.cores, load.wait_cycles) == (1, 1, 0)
    # The load starts when S has issued it and fires the set at its end; V sat
    # idle from cycle 0 until then.
    assert (add.cycles, add.pipe, add.dma_bytes, add.wire_efficiency) == (
        50,
        "V",
        0,
        None,
    )
    assert add.wait_cycles == ISSUE + 100
    assert prof.cycles == 150
    assert report.cycles == ISSUE + 100 + 50


def test_hints_are_computed_from_the_run() -> None:
    prof = profile(_raw_kernel())
    texts = [h.text for h in prof.hints]
    assert texts[0] == (
        "the kernel runs on 1 of 24 cores: 23 stay idle for all "
        f"{ISSUE + 150} cycles (more blocks would use them)"
    )
    (wait,) = [h for h in prof.hints if h.kind == "wait"]
    share = (ISSUE + 100) / (ISSUE + 150)
    assert wait.text.startswith(
        f"V waits for MTE2 {ISSUE + 100} cycles ({share:.0%} of V's time) at k.py:2 "
        "for the data in ub[0, 256): MTE2 produces it too late"
    )
    (dma,) = [h for h in prof.hints if h.kind == "dma"]
    assert dma.text == (
        "DMA bursts of 256 B (1 per transfer) at k.py:1: 50% of the 512 wire bytes "
        "wasted (gm->ub moves whole 512 B granules); make the bursts longer or "
        "granule-aligned"
    )


def test_producer_waiting_for_consumer_asks_for_a_stage() -> None:
    """MTE2 must wait for V to finish reading ub[0, 256) before it loads the next
    tile into it: 300 cycles of V, during which MTE2 sits blocked."""
    machine = Machine(TARGET, 1)
    x = machine.register_gm("x", np.zeros(256, np.float16))
    core = machine.core(0)
    for i in range(2):
        if i:
            core.wait_flag("v", "mte2", 0, "k.py:3:1")
        _load(core, x, 256 * i, "k.py:3:5")
        core.set_flag("mte2", "v", 0, "k.py:4:1")
        core.wait_flag("mte2", "v", 0, "k.py:4:1")
        _vector(core, "vexp", "k.py:4:5", 300)
        if not i:
            core.set_flag("v", "mte2", 0, "k.py:4:9")
    report = machine.finish()
    waits, sets, blocked = blocked_waits(report.columns)
    c = report.columns
    war = waits[c.dst[waits] == 1 + 1]  # MTE2
    assert blocked[np.isin(waits, war)].tolist() == [300]
    (hint,) = [h for h in profile(report).hints if h.text.startswith("MTE2 waits")]
    assert hint.text.startswith("MTE2 waits for V 300 cycles")
    assert hint.text.endswith(
        "at k.py:3 before it overwrites ub[0, 256): add a stage (another buffer) so "
        "MTE2 fills the next one while V works on this one"
    )
    assert len(sets) == len(waits) == 3


def test_phase_and_line_on_fewer_cores() -> None:
    """After the sync_all only core 0 works: phase 1 and its line use 1 of 24."""
    machine = Machine(TARGET, 2)
    for c in range(2):
        core = machine.core(c)
        core.issue("v", "vadd", "k.py:1:1", 200, writes=[Access("ub", 0, 64)])
        core.sync_all("k.py:2:1")
        if c == 0:
            core.issue("v", "vmax", "k.py:3:1", 400, writes=[Access("ub", 64, 64)])
    report = machine.finish()
    prof = profile(report)
    # Equal pipe-cycles: ordered by line.
    assert [(s.line, s.cycles, s.cores) for s in prof.lines] == [
        ("k.py:1", 400, 2),
        ("k.py:3", 400, 1),
    ]
    texts = [h.text for h in prof.hints if h.kind == "cores"]
    release = report.sync_alls[0].release
    assert texts == [
        f"the kernel runs on 2 of 24 cores: 22 stay idle for all {report.cycles} "
        "cycles (more blocks would use them)",
        f"phase 1 (after the sync_all at k.py:2:1, cycles {release}-{report.cycles}) "
        "runs on 1 of 24 cores",
        "k.py:3 runs on 1 of 24 cores (V busy 400 cycles there)",
    ]


def test_text_table_and_top_line() -> None:
    report = _raw_kernel()
    report.roofline = RooflineBound(75.0, "gm->ub")
    prof = profile(report)
    text = profile_text(prof)
    lines = text.splitlines()
    assert lines[0] == (
        f"profile: {report.cycles} cycles on 1 of 24 cores (ascend910b); pipe-cycles "
        "per source line, most first"
    )
    assert lines[1] == (
        f"roofline: 75 cycles ({75 / 1850:.3f} us), bound by gm->ub; this run "
        f"reaches {75 / report.cycles:.1%} of it"
    )
    header = lines[3].split()
    assert header[:3] == ["line", "cycles", "share"]
    assert lines[5].split()[:6] == ["k.py:1", "100", "66.7%", "MTE2", "100", "0"]
    assert "hints:" in lines
    assert top_line_text(prof) == "k.py:1 67% of pipe-cycles, MTE2 100"
    assert report.roofline_fraction == pytest.approx(75 / report.cycles)
    assert report.to_dict()["roofline"] == {
        "cycles": 75.0,
        "microseconds": round(75 / 1850, 6),
        "bound_by": "gm->ub",
        "fraction": round(75 / report.cycles, 6),
    }


def test_flag_pairs_match_kth_set_to_kth_wait() -> None:
    machine = Machine(TARGET, 1)
    core = machine.core(0)
    core.set_flag("v", "mte3", 1, "a:1:1")
    core.set_flag("v", "mte3", 0, "b:1:1")
    core.wait_flag("v", "mte3", 0, "c:1:1")
    core.wait_flag("v", "mte3", 1, "d:1:1")
    c = machine.finish().columns
    sets, waits = flag_pairs(c)
    pairs = sorted(
        (c.locs[c.loc[s]], c.locs[c.loc[w]]) for s, w in zip(sets, waits, strict=True)
    )
    assert pairs == [("a:1:1", "d:1:1"), ("b:1:1", "c:1:1")]


@pytest.mark.parametrize(
    "loc,line",
    [
        ("k.py:3:5", "k.py:3"),
        ("/a/b.mlir:10:2", "/a/b.mlir:10"),
        ("t0.load", "t0.load"),
    ],
)
def test_line_of(loc: str, line: str) -> None:
    assert line_of(loc) == line
