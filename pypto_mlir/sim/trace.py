"""Timelines of a Report: Chrome trace JSON (opens in Perfetto) and a matplotlib PNG."""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from pypto_mlir.sim.report import PIPE_ORDER, Report

__all__ = [
    "chrome_trace",
    "l2_counter_events",
    "write_chrome_trace",
    "write_timeline_png",
]


def chrome_trace(report: Report) -> dict[str, Any]:
    """Trace Event Format: one process per core, one thread per pipe, one "X" slice
    per instruction; timestamps in microseconds at the target clock."""
    us_per_cycle = 1.0 / (report.clock_ghz * 1e3)
    events: list[dict[str, Any]] = []
    for core in range(report.block_dim):
        events.append(
            {
                "ph": "M",
                "name": "process_name",
                "pid": core,
                "args": {"name": f"core {core}"},
            }
        )
        for tid, pipe in enumerate(PIPE_ORDER):
            events.append(
                {
                    "ph": "M",
                    "name": "thread_name",
                    "pid": core,
                    "tid": tid,
                    "args": {"name": pipe},
                }
            )
            events.append(
                {
                    "ph": "M",
                    "name": "thread_sort_index",
                    "pid": core,
                    "tid": tid,
                    "args": {"sort_index": tid},
                }
            )
    tids = {pipe: tid for tid, pipe in enumerate(PIPE_ORDER)}
    for s in report.slices:
        events.append(
            {
                "ph": "X",
                "name": s.name,
                "cat": s.pipe,
                "pid": s.core,
                "tid": tids[s.pipe],
                "ts": s.start * us_per_cycle,
                "dur": (s.end - s.start) * us_per_cycle,
                "args": {
                    "bytes": s.nbytes,
                    "loc": s.loc,
                    "start_cycle": s.start,
                    "cycles": s.end - s.start,
                },
            }
        )
    events += l2_counter_events(report)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"target": report.target, "cycles": report.cycles},
    }


def l2_counter_events(report: Report, bins: int = 256) -> list[dict[str, Any]]:
    """Counter tracks of the L2 (none without one), in a process "L2" after the
    cores': per time bin of the run (at most `bins`, so the trace stays small),
    the hit rate of the GM bytes read by the transfers that start in it, and the
    HBM read bandwidth (GB/s) of the line fills, each transfer's spread evenly
    over its cycles before HBM sharing."""
    transfers = report.l2_transfers
    if transfers is None or not transfers.start.size:
        return []
    pid = report.block_dim
    start = transfers.start
    end = start + np.maximum(transfers.cycles, 1)
    width = max(1, math.ceil(max(report.cycles, int(end.max()), 1) / bins))
    count = -(-int(end.max()) // width)
    which = start // width
    hit = np.bincount(which, transfers.hit_bytes, count)
    read = hit + np.bincount(which, transfers.miss_bytes, count)
    edges = np.arange(count + 1, dtype=np.float64) * width
    delivered = _ramp(edges, start, end, transfers.hbm_bytes)
    hbm = np.diff(delivered)
    us_per_cycle = 1.0 / (report.clock_ghz * 1e3)
    gbps_per_byte = report.clock_ghz / width
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": "L2"}}
    ]
    for b in range(count + 1):  # the last: HBM back to 0 after the last read
        ts = b * width * us_per_cycle
        if b < count and read[b]:
            events.append(
                {
                    "ph": "C",
                    "name": "L2 hit rate",
                    "pid": pid,
                    "ts": ts,
                    "args": {"hit %": round(100 * float(hit[b] / read[b]), 3)},
                }
            )
        bandwidth = float(hbm[b]) * gbps_per_byte if b < count else 0.0
        events.append(
            {
                "ph": "C",
                "name": "HBM read",
                "pid": pid,
                "ts": ts,
                "args": {"GB/s": round(bandwidth, 3)},
            }
        )
    return events


def _ramp(
    x: np.ndarray, start: np.ndarray, end: np.ndarray, nbytes: np.ndarray
) -> np.ndarray:
    """Bytes delivered by each time in `x` when transfer i moves nbytes[i] evenly
    over [start[i], end[i]): the sum of rate_i * (clip(x, s_i, e_i) - s_i),
    as two sorted cumulative sums (no loop over transfers)."""
    rate = nbytes / (end - start)

    def since(points: np.ndarray) -> np.ndarray:
        """sum over points p < x of rate * (x - p)."""
        order = np.argsort(points, kind="stable")
        p = points[order].astype(np.float64)
        r = rate[order]
        k = np.searchsorted(p, x, side="left")
        rates = np.concatenate(([0.0], np.cumsum(r)))
        moments = np.concatenate(([0.0], np.cumsum(r * p)))
        return x * rates[k] - moments[k]

    return since(start) - since(end)


def write_chrome_trace(report: Report, path: str | os.PathLike[str]) -> None:
    with open(path, "w") as f:
        json.dump(chrome_trace(report), f)


def write_timeline_png(
    report: Report, path: str | os.PathLike[str], max_slices_per_row: int = 20000
) -> None:
    """One row per (core, pipe) that executed something; bars are instructions.

    Rows with more than `max_slices_per_row` instructions are drawn from the first
    that many (the figure says so) to keep drawing time bounded.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for s in report.slices:
        if s.end > s.start:
            rows.setdefault((s.core, s.pipe), []).append((s.start, s.end - s.start))
    order = sorted(rows, key=lambda r: (r[0], PIPE_ORDER.index(r[1])))
    colors = {
        "S": "#7f7f7f",
        "MTE1": "#9467bd",
        "MTE2": "#1f77b4",
        "MTE3": "#2ca02c",
        "M": "#d62728",
        "V": "#ff7f0e",
        "FIX": "#8c564b",
    }
    height = max(2.0, 0.35 * len(order) + 1.2)
    fig, ax = plt.subplots(figsize=(12, height))
    truncated = False
    for y, key in enumerate(order):
        bars = rows[key]
        if len(bars) > max_slices_per_row:
            bars = bars[:max_slices_per_row]
            truncated = True
        ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=colors[key[1]], linewidth=0)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([f"core {c} {p}" for c, p in order])
    ax.invert_yaxis()
    ax.set_xlim(0, max(report.cycles, 1))
    ax.set_xlabel(
        f"cycles ({report.clock_ghz} GHz; total {report.cycles} = {report.microseconds:.2f} us)"
    )
    title = f"{report.target}: {report.instructions} instructions on {report.block_dim} core(s)"
    if truncated:
        title += f" (rows cut at {max_slices_per_row} instructions)"
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
