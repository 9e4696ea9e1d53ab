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
    slices = [e for e in data["traceEvents"] if e["ph"] == "X"]
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
