"""Report JSON/text, Chrome trace and PNG timeline."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.image
import pytest
from sim_streams import vector_add

from pypto_mlir.sim import chrome_trace, write_chrome_trace, write_timeline_png
from pypto_mlir.sim.report import PIPE_ORDER


@pytest.fixture(scope="module")
def report():
    return vector_add(double_buffer=True, tiles=4, block_dim=2)[1]


def test_json_schema(report) -> None:
    data = json.loads(report.to_json())
    for key in (
        "cycles",
        "microseconds",
        "pipes",
        "gm_bytes_read",
        "gm_bytes_written",
        "gm_bandwidth_utilization",
        "gm_bandwidth_gbps",
        "bytes_per_path",
        "cores",
        "target",
        "block_dim",
        "instructions",
    ):
        assert key in data
    assert set(data["pipes"]) == set(PIPE_ORDER)
    for stats in data["pipes"].values():
        assert set(stats) == {"busy_cycles", "utilization"}
        assert 0.0 <= stats["utilization"] <= 1.0
    assert len(data["cores"]) == 2
    core = data["cores"][0]
    assert set(core) >= {"core", "cycles", "pipes", "bytes_per_path", "memories"}
    assert core["memories"]["ub"]["allocated_bytes"] == 2 * 3 * 8192
    # x and y read, z written: 2 cores x 4 tiles x 8 KiB each.
    assert data["gm_bytes_read"] == 2 * 2 * 4 * 8192
    assert data["gm_bytes_written"] == 2 * 4 * 8192
    assert data["bytes_per_path"] == {
        "gm->ub": 2 * 2 * 4 * 8192,
        "ub->gm": 2 * 4 * 8192,
    }
    assert data["microseconds"] == pytest.approx(data["cycles"] / 1850, rel=1e-6)
    assert 0 < data["gm_bandwidth_utilization"] < 1


def test_utilization_is_busy_over_elapsed(report) -> None:
    v = report.pipes["V"]
    assert v.utilization == pytest.approx(v.busy_cycles / (report.cycles * 2))
    core = report.cores[1]
    assert core.pipes["MTE2"].utilization == pytest.approx(
        core.pipes["MTE2"].busy_cycles / report.cycles
    )


def test_text_report(report) -> None:
    text = report.to_text()
    assert "ascend910b" in text and f"{report.cycles} cycles" in text
    for pipe in PIPE_ORDER:
        assert pipe in text
    assert "peak occupancy" in text and "GM:" in text


def test_chrome_trace(report, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    write_chrome_trace(report, path)
    data = json.loads(path.read_text())
    slices = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] != "flag"]
    assert len(slices) == report.instructions
    assert {e["pid"] for e in slices} == {0, 1}
    for e in slices:
        assert e["dur"] >= 0 and e["ts"] >= 0
        assert {"bytes", "loc"} <= set(e["args"])
        assert 0 <= e["tid"] < len(PIPE_ORDER)
    names = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in data["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }
    assert names[(0, PIPE_ORDER.index("MTE2"))] == "MTE2"
    vadd = next(e for e in slices if e["name"] == "vadd")
    assert vadd["tid"] == PIPE_ORDER.index("V") and vadd["args"]["loc"].endswith(
        ".vadd"
    )
    assert chrome_trace(report) == data


def test_timeline_png(report, tmp_path: Path) -> None:
    path = tmp_path / "timeline.png"
    write_timeline_png(report, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    assert image.shape[0] > 100 and image.shape[1] > 100
    # Every core drawn: more rows, a taller picture.
    everything = tmp_path / "all.png"
    write_timeline_png(report, everything, all_cores=True)
    assert matplotlib.image.imread(everything).shape[0] >= image.shape[0]


_REQUIRED = {
    "X": {"name", "ph", "ts", "dur", "pid", "tid"},
    "M": {"name", "ph", "pid", "args"},
    "s": {"name", "cat", "ph", "id", "ts", "pid", "tid"},
    "f": {"name", "cat", "ph", "id", "ts", "pid", "tid", "bp"},
    "C": {"name", "ph", "ts", "pid", "args"},
}
"""Fields the Trace Event Format requires per phase (the flow and counter
events of its "Flow Events" and "Counter Events" sections)."""


def test_chrome_trace_is_valid_trace_event_json(report, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    write_chrome_trace(report, path)
    events = json.loads(path.read_text())["traceEvents"]
    for e in events:
        assert e["ph"] in _REQUIRED, e
        assert _REQUIRED[e["ph"]] <= set(e), e
        if "ts" in e:
            assert isinstance(e["ts"], float | int) and e["ts"] >= 0
    # Instruction slices of one track never overlap (a pipe is in order).
    tracks: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X" and e["cat"] != "flag":
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["dur"]))
    for spans in tracks.values():
        starts = [ts for ts, _ in spans]
        assert starts == sorted(starts)
        for (ts, dur), (next_ts, _) in zip(spans[:-1], spans[1:], strict=True):
            assert ts + dur <= next_ts + 1e-9
    # Flows pair up: one start and one finish per id, each inside a flag slice of
    # its track, the finish (the wait's release) not before the start (the set).
    flags = [e for e in events if e["ph"] == "X" and e["cat"] == "flag"]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    finishes = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == len([e for e in events if e["ph"] == "s"])
    assert set(starts) == set(finishes) and starts
    n_sets = sum(1 for e in flags if e["name"].startswith("set_flag"))
    assert len(starts) == n_sets
    for flow, s in starts.items():
        f = finishes[flow]
        assert f["bp"] == "e" and f["ts"] >= s["ts"] - 1e-9
        for point in (s, f):
            assert any(
                x["pid"] == point["pid"]
                and x["tid"] == point["tid"]
                and x["ts"] - 1e-9 <= point["ts"] <= x["ts"] + x["dur"] + 1e-9
                for x in flags
            ), point
    # Counters: numeric values at increasing times; the GM bandwidth integrates
    # to the GM bytes moved.
    every_counter = [e for e in events if e["ph"] == "C"]
    assert {e["name"] for e in every_counter} <= {
        "GM bandwidth (GB/s)",
        "L2 hit rate",
        "HBM read",
    }
    for name in {e["name"] for e in every_counter}:
        times = [e["ts"] for e in every_counter if e["name"] == name]
        assert times == sorted(set(times)), name
    for e in every_counter:
        assert all(isinstance(v, float | int) and v >= 0 for v in e["args"].values())
    counters = [e for e in every_counter if e["name"] == "GM bandwidth (GB/s)"]
    times = [e["ts"] for e in counters]
    width_us = times[1] - times[0]
    moved = sum(e["args"]["payload"] * 1e3 * width_us for e in counters)  # GB/s*us
    assert moved == pytest.approx(
        report.gm_bytes_read + report.gm_bytes_written, rel=1e-3
    )
    # Slices name their source line.
    assert all("line" in e["args"] for e in events if e["ph"] == "X")
