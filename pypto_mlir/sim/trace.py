"""Timelines of a Report: Chrome trace JSON (opens in Perfetto) and a matplotlib PNG.

The trace has one process per core and one thread per pipe; every instruction is
an "X" slice whose args name its source line, every set_flag and wait_flag a slice
too (a wait spans the time its pipe sat blocked on it), joined by a flow arrow
("s"/"f" events) from the set to the wait it releases. Chip-wide counter tracks
("C" events) come from the functions in `COUNTER_TRACKS`, each turning a report
into `CounterTrack`s: GM bandwidth, and with an L2 its hit rate and the HBM
read bandwidth of its fills.

The PNG shows, by default, the slowest, median and fastest core (cores running
the same program are drawn once, with how many they stand for), every pipe a row,
instructions coloured by op kind and named when wide enough, waits hatched,
sync_all releases and the first start of the busiest source lines marked on the
time axis; `all_cores=True` draws every core.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto_mlir.sim.columns import RecordColumns, line_of, short_line
from pypto_mlir.sim.profile import blocked_waits
from pypto_mlir.sim.records import RecordKind
from pypto_mlir.sim.report import PIPE_ORDER, Report

__all__ = [
    "COUNTER_TRACKS",
    "CounterTrack",
    "binned_rate",
    "chrome_trace",
    "gm_bandwidth_counters",
    "l2_counters",
    "write_chrome_trace",
    "write_timeline_png",
]

COUNTER_BINS = 256
"""Time bins of a counter track (fewer when the run has fewer cycles)."""


@dataclass(frozen=True)
class CounterTrack:
    """A chip-wide counter: one value per series at each time (cycles)."""

    name: str
    times: np.ndarray
    """Cycles at which the values start to hold, increasing."""
    series: dict[str, np.ndarray]
    """Series name -> values, one per time (plain numbers)."""


def _bin_edges(report: Report) -> np.ndarray:
    """The counter tracks' time bins: at most `COUNTER_BINS` over the run."""
    bins = max(1, min(COUNTER_BINS, report.cycles))
    return np.linspace(0, max(report.cycles, 1), bins + 1)


def binned_rate(
    edges: np.ndarray, start: np.ndarray, end: np.ndarray, amounts: np.ndarray
) -> np.ndarray:
    """Amount per cycle in each bin of `edges` of `amounts` spread evenly over
    [start, end) (no loop over the transfers: two sorted cumulative sums)."""
    start = start.astype(np.float64)
    end = np.maximum(end, start + 1).astype(np.float64)
    rate = amounts.astype(np.float64) / (end - start)
    # Amount done by time t: sum over transfers of rate * clamp(t - start, 0, dur).
    by_start, by_end = np.argsort(start), np.argsort(end)
    r_start = np.concatenate([[0.0], np.cumsum(rate[by_start])])
    rs_start = np.concatenate([[0.0], np.cumsum((rate * start)[by_start])])
    r_end = np.concatenate([[0.0], np.cumsum(rate[by_end])])
    re_end = np.concatenate([[0.0], np.cumsum((rate * end)[by_end])])
    i = np.searchsorted(start[by_start], edges, side="left")
    k = np.searchsorted(end[by_end], edges, side="left")
    done = (r_start[i] * edges - rs_start[i]) - (r_end[k] * edges - re_end[k])
    return np.diff(done) / np.diff(edges)


def gm_bandwidth_counters(report: Report) -> list[CounterTrack]:
    """GM bandwidth over time, payload and wire bytes, in GB/s."""
    c = report.columns
    gm_paths = np.array(
        [-1, *(i for i, p in enumerate(c.paths) if "gm" in p.split("->"))], np.int64
    )[1:]
    rows = np.flatnonzero(np.isin(c.path, gm_paths) & (c.kind == RecordKind.INSTR))
    if not len(rows):
        return []
    edges = _bin_edges(report)
    start, end = c.start[rows], c.end[rows]
    payload = binned_rate(edges, start, end, c.nbytes[rows])
    wire = binned_rate(edges, start, end, c.wire_bytes[rows])
    return [
        CounterTrack(
            "GM bandwidth (GB/s)",
            edges[:-1],
            {
                "payload": payload * report.clock_ghz,
                "wire": wire * report.clock_ghz,
            },
        )
    ]


def l2_counters(report: Report) -> list[CounterTrack]:
    """With an L2: the hit rate of the GM bytes read by the transfers that start in
    each bin (bins with reads only), and the HBM read bandwidth of the line fills
    in GB/s, each transfer's spread evenly over its cycles before HBM sharing."""
    transfers = report.l2_transfers
    if transfers is None or not transfers.start.size:
        return []
    edges = _bin_edges(report)
    start = transfers.start
    which = np.clip(np.searchsorted(edges, start, side="right") - 1, 0, len(edges) - 2)
    hit = np.bincount(which, transfers.hit_bytes, len(edges) - 1)
    read = hit + np.bincount(which, transfers.miss_bytes, len(edges) - 1)
    some = read > 0
    hbm = binned_rate(
        edges, start, start + np.maximum(transfers.cycles, 1), transfers.hbm_bytes
    )
    return [
        CounterTrack(
            "L2 hit rate", edges[:-1][some], {"hit %": 100 * hit[some] / read[some]}
        ),
        CounterTrack("HBM read", edges[:-1], {"GB/s": hbm * report.clock_ghz}),
    ]


COUNTER_TRACKS: tuple[Callable[[Report], list[CounterTrack]], ...] = (
    gm_bandwidth_counters,
    l2_counters,
)
"""The counter functions `chrome_trace` draws, in order."""


def _us(report: Report) -> float:
    return 1.0 / (report.clock_ghz * 1e3)


def _metadata(report: Report) -> list[dict[str, Any]]:
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
    events.append(
        {
            "ph": "M",
            "name": "process_name",
            "pid": report.block_dim,
            "args": {"name": "chip"},
        }
    )
    return events


def _flag_events(report: Report, c: RecordColumns) -> list[dict[str, Any]]:
    """A slice per set and wait (a wait spans its blocked time) and a flow from
    each set to the wait it releases."""
    us = _us(report)
    waits, sets, blocked = blocked_waits(c)
    events: list[dict[str, Any]] = []
    for flow, (s, w, b) in enumerate(
        zip(sets.tolist(), waits.tolist(), blocked.tolist(), strict=True)
    ):
        src, dst = PIPE_ORDER[c.src[s]], PIPE_ORDER[c.dst[s]]
        label = f"{src}->{dst} event {c.event[s]}"
        set_ts = int(c.end[s]) * us
        wait_end = int(c.end[w])
        for row, name, ts, dur in (
            (s, f"set_flag {label}", set_ts, 0.0),
            (w, f"wait_flag {label}", (wait_end - b) * us, b * us),
        ):
            events.append(
                {
                    "ph": "X",
                    "name": name,
                    "cat": "flag",
                    "pid": int(c.core[row]),
                    "tid": int(c.queue[row]),
                    "ts": ts,
                    "dur": dur,
                    "args": {
                        "loc": c.locs[c.loc[row]],
                        "line": line_of(c.locs[c.loc[row]]),
                        "blocked_cycles": b if row == w else 0,
                    },
                }
            )
        for phase, row, ts in (("s", s, set_ts), ("f", w, wait_end * us)):
            point: dict[str, Any] = {
                "ph": phase,
                "name": "flag",
                "cat": "flag",
                "id": flow,
                "pid": int(c.core[row]),
                "tid": int(c.queue[row]),
                "ts": ts,
            }
            if phase == "f":
                point["bp"] = "e"  # bound to the enclosing slice: the wait's
            events.append(point)
    return events


def _counter_events(report: Report) -> list[dict[str, Any]]:
    us = _us(report)
    events: list[dict[str, Any]] = []
    for counters in COUNTER_TRACKS:
        for track in counters(report):
            names = list(track.series)
            for i, t in enumerate(track.times.tolist()):
                events.append(
                    {
                        "ph": "C",
                        "name": track.name,
                        "pid": report.block_dim,
                        "ts": t * us,
                        "args": {n: round(float(track.series[n][i]), 6) for n in names},
                    }
                )
    return events


def chrome_trace(report: Report) -> dict[str, Any]:
    """Trace Event Format: one process per core, one thread per pipe, one "X"
    slice per instruction (and per flag, with flows), counters on a "chip"
    process; timestamps in microseconds at the target clock."""
    us = _us(report)
    tids = {pipe: tid for tid, pipe in enumerate(PIPE_ORDER)}
    events = _metadata(report)
    for s in report.slices:
        events.append(
            {
                "ph": "X",
                "name": s.name,
                "cat": s.pipe,
                "pid": s.core,
                "tid": tids[s.pipe],
                "ts": s.start * us,
                "dur": (s.end - s.start) * us,
                "args": {
                    "bytes": s.nbytes,
                    "loc": s.loc,
                    "line": line_of(s.loc),
                    "start_cycle": s.start,
                    "cycles": s.end - s.start,
                },
            }
        )
    if report.columns_builder is not None:
        events += _flag_events(report, report.columns)
        events += _counter_events(report)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"target": report.target, "cycles": report.cycles},
    }


def write_chrome_trace(report: Report, path: str | os.PathLike[str]) -> None:
    with open(path, "w") as f:
        json.dump(chrome_trace(report), f)


# --- the PNG -------------------------------------------------------------------------

PIPE_COLORS = {
    "S": "#7f7f7f",
    "MTE1": "#9467bd",
    "MTE2": "#1f77b4",
    "MTE3": "#2ca02c",
    "M": "#d62728",
    "V": "#ff7f0e",
    "FIX": "#8c564b",
}
"""Each pipe's colour: its op kinds are shades of it."""

MAX_LABELS = 600
"""Op names drawn at most (the widest slices first), to bound drawing time."""


def _shades(base: str, count: int) -> list[tuple[float, float, float]]:
    """`count` distinguishable shades of `base`, from darker to lighter."""
    import matplotlib.colors as mcolors

    rgb = np.array(mcolors.to_rgb(base))
    if count == 1:
        return [tuple(rgb)]
    out = []
    for k in range(count):
        f = -0.35 + 0.8 * k / (count - 1)  # <0 darker, >0 lighter
        mixed = rgb * (1 + f) if f < 0 else rgb + (1 - rgb) * f
        out.append(tuple(np.clip(mixed, 0, 1)))
    return out


def _shown_cores(
    report: Report, c: RecordColumns, all_cores: bool
) -> list[tuple[int, str]]:
    """(core, label) of the cores to draw: all, or the slowest, median and fastest
    with the count of cores that run the same program as each."""
    cycles = [core.cycles for core in report.cores]
    indices = [core.index for core in report.cores]
    if all_cores or len(indices) <= 1:
        return [(i, f"core {i}") for i in indices]
    # Cores running the same program: the same op names in the same order.
    signature: dict[int, int] = {}
    programs: dict[bytes, int] = {}
    for i in indices:
        names = c.name[c.core == i]
        signature[i] = programs.setdefault(names.tobytes(), len(programs))
    same = {i: sum(1 for j in indices if signature[j] == signature[i]) for i in indices}
    order = sorted(indices, key=lambda i: (cycles[indices.index(i)], i))
    picks = [
        ("slowest", order[-1]),
        ("median", order[len(order) // 2]),
        ("fastest", order[0]),
    ]
    shown: list[tuple[int, str]] = []
    for role, i in picks:
        if any(i == j for j, _ in shown):
            continue
        twins = same[i] - 1
        note = f", {twins + 1} alike" if twins else ""
        shown.append((i, f"core {i} ({role}, {cycles[indices.index(i)]} cyc{note})"))
    return shown


def write_timeline_png(
    report: Report,
    path: str | os.PathLike[str],
    max_slices_per_row: int = 20000,
    all_cores: bool = False,
) -> None:
    """Draw the timeline (see the module docstring); rows with more than
    `max_slices_per_row` instructions are drawn from the first that many (the
    title says so) to keep drawing time bounded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.patches as mpatches
    import matplotlib.pyplot as plt

    c = report.columns
    shown = _shown_cores(report, c, all_cores)
    instr = (c.kind == RecordKind.INSTR) & (c.end > c.start)
    waits, _, blocked = blocked_waits(c)
    # Rows: for each shown core, the pipes it uses (instructions or waits).
    rows: list[tuple[int, int, str]] = []  # (core, pipe, label)
    for core, label in shown:
        used = set(c.pipe[instr & (c.core == core)].tolist())
        used |= set(c.queue[waits[(c.core[waits] == core) & (blocked > 0)]].tolist())
        for k, p in enumerate(sorted(used)):
            rows.append(
                (core, p, f"{label}  {PIPE_ORDER[p]}" if k == 0 else PIPE_ORDER[p])
            )
    # Op kinds: shades of their pipe's colour.
    kinds: dict[tuple[int, int], tuple[float, float, float]] = {}
    for p in range(len(PIPE_ORDER)):
        names = sorted(
            set(c.name[instr & (c.pipe == p)].tolist()), key=lambda n: c.names[n]
        )
        for name, shade in zip(
            names, _shades(PIPE_COLORS[PIPE_ORDER[p]], len(names)), strict=True
        ):
            kinds[(p, name)] = shade
    # Up to ~40 rows get a labelled row each; more (every core of a big run)
    # are drawn thinner, labelled per core, up to a 30 in tall figure.
    compact = 0.32 * len(rows) > 14.0
    height = (min(0.12 * len(rows), 28.0) if compact else 0.32 * len(rows)) + 2.2
    fig, ax = plt.subplots(figsize=(14, max(height, 3.0)))
    span = max(report.cycles, 1)
    px_per_cycle = 14 * 0.78 * 100 / span  # the axes are ~78% of the 14 in width
    truncated = False
    labels: list[tuple[float, int, float, str]] = []  # (width, y, x, text)
    for y, (core, p, _) in enumerate(rows):
        mine = np.flatnonzero(instr & (c.core == core) & (c.pipe == p))
        if len(mine) > max_slices_per_row:
            mine = mine[:max_slices_per_row]
            truncated = True
        for name in np.unique(c.name[mine]).tolist():
            sel = mine[c.name[mine] == name]
            bars = np.stack([c.start[sel], c.end[sel] - c.start[sel]], axis=1)
            ax.broken_barh(
                bars.tolist(),
                (y - 0.4, 0.8),
                facecolors=[kinds[(p, name)]],
                linewidth=0,
            )
            text = c.names[name]
            wide = sel[
                (c.end[sel] - c.start[sel]) * px_per_cycle >= 6.5 * len(text) + 4
            ]
            labels += [
                (
                    float(c.end[r] - c.start[r]),
                    y,
                    float(c.start[r] + c.end[r]) / 2,
                    text,
                )
                for r in wide[:MAX_LABELS].tolist()
            ]
        held = (c.core[waits] == core) & (c.queue[waits] == p) & (blocked > 0)
        if held.any():
            b = blocked[held]
            ends = c.end[waits[held]]
            ax.broken_barh(
                np.stack([ends - b, b], axis=1).tolist(),
                (y - 0.3, 0.6),
                facecolors="none",
                edgecolors="#444444",
                hatch="////",
                linewidth=0.5,
            )
    labels.sort(key=lambda item: -item[0])
    for _, y, x, text in labels[:MAX_LABELS]:
        ax.text(
            x,
            y,
            text,
            ha="center",
            va="center",
            fontsize=5 if compact else 7,
            color="white",
            clip_on=True,
        )
    ax.set_yticks(range(len(rows)))
    if compact:
        first = [
            k == 0 or rows[k - 1][0] != core for k, (core, _, _) in enumerate(rows)
        ]
        ax.set_yticklabels(
            [
                f"core {core}" if f else ""
                for (core, _, _), f in zip(rows, first, strict=True)
            ],
            fontsize=7,
        )
        ax.tick_params(axis="y", length=0)
        for k, f in enumerate(first):
            if f and k:
                ax.axhline(k - 0.5, color="#bbbbbb", linewidth=0.5)
    else:
        ax.set_yticklabels([label for _, _, label in rows], fontsize=8)
    ax.set_ylim(max(len(rows), 1) - 0.5, -0.5)
    ax.set_xlim(0, span)
    for barrier in report.sync_alls:
        ax.axvline(barrier.release, color="black", linestyle="--", linewidth=0.8)
    # Source lines on the time axis: where the busiest lines start on the slowest core.
    top = ax.secondary_xaxis("top")
    marks = _line_marks(c, shown[0][0] if shown else 0, instr)
    top.set_xticks([t for t, _ in marks])
    top.set_xticklabels([name for _, name in marks], fontsize=7, rotation=30, ha="left")
    ax.set_xlabel(
        f"cycles ({report.clock_ghz} GHz; total {report.cycles} = {report.microseconds:.2f} us)"
        + ("; dashed: sync_all releases" if report.sync_alls else "")
    )
    title = f"{report.target}: {report.instructions} instructions on {report.block_dim} core(s)"
    if compact:
        title += "; each core's rows: the pipes it uses, in order " + " ".join(
            PIPE_ORDER
        )
    if not all_cores and len(shown) < report.block_dim:
        title += (
            f", {len(shown)} shown (all_cores / --timeline-all-cores for every core)"
        )
    if truncated:
        title += f" (rows cut at {max_slices_per_row} instructions)"
    ax.set_title(title, fontsize=10, pad=28)
    handles = [
        mpatches.Patch(color=shade, label=f"{c.names[name]} ({PIPE_ORDER[p]})")
        for (p, name), shade in sorted(kinds.items(), key=lambda item: item[0])
    ]
    handles.append(
        mpatches.Patch(
            facecolor="none",
            edgecolor="#444444",
            hatch="////",
            label="blocked on wait_flag",
        )
    )
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=min(6, len(handles)),
        fontsize=8,
        frameon=False,
    )
    legend_rows = (len(handles) + 5) // 6
    fig.tight_layout(rect=(0, 0.03 + 0.25 * legend_rows / max(height, 3.0), 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _line_marks(
    c: RecordColumns, core: int, instr: np.ndarray, count: int = 8
) -> list[tuple[int, str]]:
    """(first start cycle, short line) of the `count` busiest source lines of `core`
    (on the pipes other than S, whose bookkeeping runs ahead of the work)."""
    mine = np.flatnonzero(instr & (c.core == core) & (c.pipe != 0))
    if not len(mine):
        return []
    busy = np.bincount(
        c.line[mine], weights=c.end[mine] - c.start[mine], minlength=len(c.lines)
    )
    first = np.full(len(c.lines), np.iinfo(np.int64).max)
    np.minimum.at(first, c.line[mine], c.start[mine])
    best = sorted(
        (k for k in range(len(c.lines)) if busy[k] > 0), key=lambda k: (-busy[k], k)
    )[:count]
    return sorted((int(first[k]), short_line(c.lines[k])) for k in best)
