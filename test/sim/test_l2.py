"""The L2 cache model (sim/l2.py): hits, misses, LRU eviction, write allocation,
its cost in the replay, its report fields and trace counters, and that a target
without an L2 times exactly as before the model existed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from example_kernels import example_kernel
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from pypto_mlir.cli.source import default_context
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sim import Access, Machine, timing
from pypto_mlir.sim.report import Report
from pypto_mlir.sim.trace import chrome_trace
from pypto_mlir.targets import L2Spec, Target, TargetError, load_target

A2 = load_target("ascend910b")
LINE = 512


def _l2_target(tmp_path: Path, body: str, name: str = "chip") -> Target:
    """ascend910b with its [l2] table replaced by `body`."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'base = "ascend910b"\n[l2]\n{body}\n')
    return load_target(path)


def _small_l2(lines: int, write_allocate: bool = True) -> Target:
    """ascend910b with an L2 of `lines` lines of 512 B."""
    assert A2.l2 is not None
    spec = dataclasses.replace(A2.l2, size=lines * LINE, write_allocate=write_allocate)
    return dataclasses.replace(A2, l2=spec)


def _loads(target: Target, panels: list[int], panel: int = LINE) -> Report:
    """One core reads panel i (bytes [i * panel, (i + 1) * panel) of one tensor)
    for each i of `panels`, one after the other."""
    machine = Machine(target, 1)
    x = machine.register_gm("x", np.zeros(16 * 1024, np.float16))
    core = machine.core(0)
    for i in panels:
        core.dma("load", f"k:{i}", Access(x, i * panel, panel), Access("ub", 0, panel))
        core.set_flag("mte2", "mte3", 0, "k:s")
        core.wait_flag("mte2", "mte3", 0, "k:w")
        core.set_flag("mte3", "mte2", 0, "k:s")
        core.wait_flag("mte3", "mte2", 0, "k:w")
    return machine.finish()


def _hits(report: Report) -> list[int]:
    assert report.l2_transfers is not None
    return report.l2_transfers.hit_bytes.tolist()


def test_a_panel_read_twice_hits_the_second_time() -> None:
    panel = 32 * 1024
    report = _loads(A2, [0, 0], panel)
    assert _hits(report) == [0, panel]
    assert report.l2 is not None
    assert (report.l2.hit_bytes, report.l2.miss_bytes) == (panel, panel)
    assert report.l2.hbm_bytes == panel
    assert report.l2.hit_rate == 0.5
    assert report.cores[0].l2 == report.l2
    first, second = (s.end - s.start for s in report.slices if s.name == "load")
    # All lines hit: the hit latency instead of the HBM round trip; the hit bytes
    # move at the path's rate (the L2's per-core rate is higher).
    path = A2.dma_path("gm", "ub")
    assert A2.l2 is not None
    assert first - second == path.latency - A2.l2.hit_latency


def test_a_working_set_larger_than_the_l2_misses() -> None:
    """16 lines streamed twice through an 8-line LRU: every read misses."""
    report = _loads(_small_l2(8), [*range(16), *range(16)])
    assert _hits(report) == [0] * 32
    assert report.l2 is not None and report.l2.hbm_bytes == 32 * LINE
    # The same 8 lines twice fit: the second pass hits.
    assert _hits(_loads(_small_l2(8), [*range(8), *range(8)])) == [0] * 8 + [LINE] * 8


def test_lru_evicts_the_least_recently_used_line() -> None:
    """Capacity 2: A, B, A, C evicts B (A was used after it), so A then hits and
    B misses."""
    a, b, c = 0, 1, 2
    assert _hits(_loads(_small_l2(2), [a, b, a, c, a, b])) == [
        0,
        0,
        LINE,
        0,
        LINE,
        0,
    ]


def test_lines_of_one_transfer_are_used_in_address_order() -> None:
    """One read of lines 0..3 into a 3-line L2 leaves 1, 2, 3 resident."""
    machine = Machine(_small_l2(3), 1)
    x = machine.register_gm("x", np.zeros(4096, np.float16))
    core = machine.core(0)
    core.dma("load", "k:1", Access(x, 0, 4 * LINE), Access("ub", 0, 4 * LINE))
    for i, line in enumerate((1, 3, 0)):
        core.set_flag("mte2", "mte3", 0, "k:s")
        core.wait_flag("mte2", "mte3", 0, "k:w")
        core.set_flag("mte3", "mte2", 0, "k:s")
        core.wait_flag("mte3", "mte2", 0, "k:w")
        core.dma("load", f"k:{i}", Access(x, line * LINE, 64), Access("ub", 8192, 64))
    report = machine.finish()
    # Partial lines: the hit and miss bytes are the payload, HBM fills whole lines.
    assert _hits(report) == [0, 64, 64, 0]
    assert report.l2_transfers is not None
    assert report.l2_transfers.hbm_bytes.tolist() == [4 * LINE, 0, 0, LINE]


@pytest.mark.parametrize("allocate", [True, False])
def test_writes_allocate_as_the_target_says(allocate: bool) -> None:
    """Written lines are resident for a later read with write_allocate, not
    without; the write itself costs what it costs without an L2 (write-through)."""
    target = _small_l2(8, write_allocate=allocate)
    reports = []
    for chip in (target, dataclasses.replace(target, l2=None)):
        machine = Machine(chip, 1)
        y = machine.register_gm("y", np.zeros(1024, np.float16))
        core = machine.core(0)
        core.mark_written(Access("ub", 0, LINE))
        core.dma("store", "k:1", Access("ub", 0, LINE), Access(y, 0, LINE))
        core.set_flag("mte3", "mte2", 0, "k:2")
        core.wait_flag("mte3", "mte2", 0, "k:3")
        core.dma("load", "k:4", Access(y, 0, LINE), Access("ub", LINE, LINE))
        reports.append(machine.finish())
    assert _hits(reports[0]) == [LINE if allocate else 0]
    stores = [next(s for s in r.slices if s.name == "store") for r in reports]
    assert stores[0] == stores[1]


def test_cores_share_the_l2_in_time_order() -> None:
    """Core 1 reads the panel core 0 read long before: a hit; both read at once:
    the later one hits a line in flight and waits for its data."""
    machine = Machine(A2, 2)
    x = machine.register_gm("x", np.zeros(4096, np.float16))
    for c in range(2):
        core = machine.core(c)
        if c == 1:
            core.scalar(5000)  # core 1 starts late
        core.dma("load", "k:1", Access(x, 0, 4096), Access("ub", 0, 4096))
    report = machine.finish()
    assert report.l2_transfers is not None
    assert report.l2_transfers.core.tolist() == [0, 1]
    assert _hits(report) == [0, 4096]
    late = [s.end - s.start for s in report.slices]
    assert late[1] < late[0]

    machine = Machine(A2, 2)
    x = machine.register_gm("x", np.zeros(4096, np.float16))
    for c in range(2):
        machine.core(c).dma("load", "k:1", Access(x, 0, 4096), Access("ub", 0, 4096))
    report = machine.finish()
    assert _hits(report) == [0, 4096]
    # Its data comes no earlier than the fill's: the same latency, not the hit's.
    together = [(s.start, s.end) for s in report.slices]
    assert together[0] == together[1]


def test_fast_and_reference_replays_agree_with_an_l2() -> None:
    """Four cores read overlapping panels, with HBM shared and an L2 that
    evicts: the logged heap replay and the reference give the same report."""
    target = dataclasses.replace(_small_l2(40), gm_bytes_per_cycle=60.0)
    machine = Machine(target, 4)
    x = machine.register_gm("x", np.zeros(32 * 1024, np.float16))
    y = machine.register_gm("y", np.zeros(8 * 1024, np.float16))
    for c in range(4):
        core = machine.core(c)
        for i in range(6):
            panel = Access(x, ((c + i) % 5) * 4096, 4096)
            core.dma("load", f"k:{i}", panel, Access("ub", 0, 4096))
            core.set_flag("mte2", "mte3", 0, "k:s")
            core.wait_flag("mte2", "mte3", 0, "k:w")
            core.dma("store", "k:st", Access("ub", 0, 1024), Access(y, 1024 * c, 1024))
            core.set_flag("mte3", "mte2", 0, "k:s")
            core.wait_flag("mte3", "mte2", 0, "k:w")
    for core in machine.cores:
        core._flush_scalar()
    fast = timing.replay(machine)
    assert timing.last_replay == "logged"
    reference = timing.replay(machine, reference=True)
    assert fast.to_dict() == reference.to_dict()
    assert list(fast.slices) == list(reference.slices)
    assert fast.l2 is not None and 0 < fast.l2.hit_rate < 1
    assert fast.l2 == reference.l2


def test_report_and_trace_show_the_l2_only_when_there_is_one() -> None:
    with_l2 = _loads(A2, [0, 0])
    without = _loads(dataclasses.replace(A2, l2=None), [0, 0])
    assert "L2:" in with_l2.to_text() and "L2" not in without.to_text()
    assert with_l2.to_dict()["l2"] == {
        "hit_bytes": LINE,
        "miss_bytes": LINE,
        "hit_rate": 0.5,
        "hbm_bytes": LINE,
    }
    assert "l2" in with_l2.to_dict()["cores"][0]
    assert "l2" not in without.to_dict() and "l2" not in without.to_dict()["cores"][0]
    l2_tracks = {"L2 hit rate", "HBM read"}
    events = chrome_trace(with_l2)["traceEvents"]
    counters = [e for e in events if e["ph"] == "C" and e["name"] in l2_tracks]
    assert {e["name"] for e in counters} == l2_tracks
    assert [e["args"]["hit %"] for e in counters if e["name"] == "L2 hit rate"][:1] == [
        0.0
    ]
    assert max(e["args"]["hit %"] for e in counters if "hit %" in e["args"]) == 100
    # The HBM counter integrates to the bytes filled from HBM.
    hbm = [e for e in counters if e["name"] == "HBM read"]
    width_us = hbm[1]["ts"] - hbm[0]["ts"]
    total = sum(e["args"]["GB/s"] * width_us * 1e3 for e in hbm)
    assert total == pytest.approx(LINE, rel=1e-3)
    events = chrome_trace(without)["traceEvents"]
    assert not [e for e in events if e["ph"] == "C" and e["name"] in l2_tracks]


def _lowered(
    name: str, dims: tuple[int, ...], target: str, **options: bool
) -> tuple[ModuleOp, list[np.ndarray], tuple[int, int]]:
    """Example kernel `name` lowered for `target` (with pypto-lower `options`),
    its inputs and output shape."""
    kernel, shapes = example_kernel(name, dims)
    module = Parser(default_context(), kernel.mlir()).parse_module()
    with diagnostic_handler(lambda _: None):
        LowerPipeline(target=target, **options).apply(default_context(), module)
    rng = np.random.default_rng(0)
    inputs = [(rng.standard_normal(s) / 4).astype(np.float16) for s in shapes]
    return module, inputs, (dims[0], dims[-1])


def _run(
    name: str,
    module: ModuleOp,
    inputs: list[np.ndarray],
    out_shape: tuple[int, int],
    target: Target,
) -> tuple[np.ndarray, Report]:
    out = np.full(out_shape, np.nan, np.float16)
    report = run_hw_function(module, name, [*inputs, out], target).report
    return out, report


def test_numerics_do_not_depend_on_the_l2() -> None:
    """A GEMM lowered for ascend910b: the same output bits with and without the
    L2; with it, its re-read panels hit and it takes fewer cycles."""
    module, inputs, shape = _lowered("gemm", (64, 96, 80), "ascend910b")
    out_l2, with_l2 = _run("gemm", module, inputs, shape, A2)
    no_l2 = dataclasses.replace(A2, l2=None)
    out, without = _run("gemm", module, inputs, shape, no_l2)
    assert out_l2.tobytes() == out.tobytes()
    assert with_l2.l2 is not None and with_l2.l2.hit_bytes > 0
    assert with_l2.cycles < without.cycles
    assert with_l2.gm_bytes_read == without.gm_bytes_read


# Figures of the example kernels on `tiny` (no L2) captured on branch costmodel at
# commit 5b3a93d (the corrected cost model, before the L2 model existed), with this
# module's `_lowered` and `_run`:
# (kernel, dims, cycles, GM wire bytes, busy cycles per pipe S..FIX). A change of
# a cost tiny inherits from ascend910b changes them legitimately: recapture then.
# The lowering decisions added after the capture are switched off
# (BEFORE_L2_OPTIONS), so the programs are the ones timed then.
BEFORE_L2_OPTIONS = {"schedule": False, "matmul_panels": False, "matmul_split_k": False}
TINY_BEFORE_L2 = [
    ("gemm", (64, 96, 80), 20007, 716800, (610, 4200, 34910, 0, 480, 0, 7460)),
    ("softmax", (40, 200), 26709, 71680, (1428, 0, 52510, 11550, 0, 5680, 0)),
    ("layernorm", (33, 96), 26095, 44032, (1588, 0, 48394, 9445, 0, 3838, 0)),
]


@pytest.mark.parametrize(("name", "dims", "cycles", "wire", "busy"), TINY_BEFORE_L2)
def test_a_target_without_l2_times_as_before(
    name: str, dims: tuple[int, ...], cycles: int, wire: int, busy: tuple[int, ...]
) -> None:
    tiny = load_target("tiny")
    assert tiny.l2 is None
    module, inputs, shape = _lowered(name, dims, "tiny", **BEFORE_L2_OPTIONS)
    _, report = _run(name, module, inputs, shape, tiny)
    assert report.l2 is None and report.l2_transfers is None
    assert (report.cycles, report.gm_wire_bytes) == (cycles, wire)
    assert tuple(p.busy_cycles for p in report.pipes.values()) == busy


def test_the_ascend910b_l2_numbers_and_their_sources() -> None:
    assert A2.l2 == L2Spec(
        size=192 * 1024 * 1024,
        line=512,
        policy="lru",
        write_allocate=True,
        read_bytes_per_cycle=110.0,
        hit_latency=50,
    )
    assert "A2A3.ini l2_size=201326592" in A2.sources["l2.size"]
    assert A2.sources["l2.read_bandwidth"].startswith("assumed reading:")


def test_a_derived_target_can_drop_the_l2(tmp_path: Path) -> None:
    assert _l2_target(tmp_path, "enabled = false").l2 is None
    path = tmp_path / "plain.toml"
    path.write_text('base = "tiny"\n')
    assert load_target(path).l2 is None


_SOURCE = 'source = "assumed: test"'
_GOOD = {
    "size": f"size = {{ value = 4, unit = 'KiB', {_SOURCE} }}",
    "line": f"line = {{ value = 512, unit = 'B', {_SOURCE} }}",
    "policy": 'policy = "lru"',
    "write_allocate": "write_allocate = true",
    "read_bandwidth": f"read_bandwidth = {{ value = 110, unit = 'B/cycle', {_SOURCE} }}",
    "hit_latency": f"hit_latency = {{ value = 50, {_SOURCE} }}",
}


@pytest.mark.parametrize(
    ("key", "line", "message"),
    [
        (
            "size",
            f"size = {{ value = 1000, {_SOURCE} }}",
            "l2.size: 1000 is not a multiple of the line size 512",
        ),
        (
            "line",
            f"line = {{ value = 500, {_SOURCE} }}",
            "l2.line: must be a power of two",
        ),
        ("policy", 'policy = "fifo"', "l2.policy: must be one of lru, got 'fifo'"),
        (
            "write_allocate",
            'write_allocate = "yes"',
            "l2.write_allocate: must be true or false",
        ),
        (
            "hit_latency",
            "hit_latency = { value = 50 }",
            "l2.hit_latency: needs a source",
        ),
        (
            "read_bandwidth",
            f"read_bandwidth = {{ value = 0, {_SOURCE} }}",
            "l2.read_bandwidth: must be positive",
        ),
        (
            "size",
            f"size = {{ value = 4, unit = 'KiB', {_SOURCE} }}\nways = 8",
            "l2.ways: unknown key",
        ),
        ("size", "enabled = 1", "l2.enabled: must be true or false"),
    ],
)
def test_bad_l2_entries_are_located(
    tmp_path: Path, key: str, line: str, message: str
) -> None:
    body = "\n".join(line if k == key else v for k, v in _GOOD.items())
    with pytest.raises(TargetError) as error:
        _l2_target(tmp_path, body)
    assert str(error.value).startswith(f"{tmp_path / 'chip.toml'}: {message}")
