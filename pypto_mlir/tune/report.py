"""A search's results for people: the table, the JSON report, the plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pypto_mlir.tune.tuner import Candidate, TuneResult

TABLE_ROWS = 10
"""The table shows the default and the best this many candidates."""


def _row(result: TuneResult, candidate: Candidate) -> list[str]:
    if candidate.cycles is None:
        return [candidate.text, "-", "-", "-", f"failed: {candidate.error}"]
    share = result.roofline_share(candidate)
    speedup = (result.default.cycles or 0) / candidate.cycles
    note = "default" if candidate.index == 0 else ""
    if candidate is result.best:
        note = (note + ", best" if note else "best") + " (checked)"
    return [
        candidate.text,
        str(candidate.cycles),
        "-" if share is None else f"{100 * share:.1f}%",
        f"{speedup:.2f}x",
        note,
    ]


def table(result: TuneResult, rows: int = TABLE_ROWS) -> str:
    """The default, the fastest candidates and the failed ones, aligned."""
    measured = sorted(
        (c for c in result.candidates if c.cycles is not None),
        key=lambda c: (c.cycles, c.index),
    )
    shown = measured[:rows]
    if result.default not in shown:
        shown.append(result.default)
    failed = [c for c in result.candidates if c.cycles is None]
    header = ["candidate", "cycles", "% roofline", "speed-up", ""]
    body = [_row(result, c) for c in shown] + [_row(result, c) for c in failed[:5]]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if len(failed) > 5:
        lines.append(f"... and {len(failed) - 5} more failed candidates")
    return "\n".join(lines)


def summary(result: TuneResult) -> str:
    """What was searched, how, and what won."""
    space = result.space
    lines = [
        f"@{result.entry} on {result.target}: {space.size} configurations "
        f"({len(space.dimensions)} options), "
        f"{sum(space.pruned.values())} choices pruned before running",
        *(f"  {line}" for line in space.describe()),
        f"measured {len(result.candidates)} candidates in {result.seconds:.1f} s on "
        f"{result.workers} {result.executor} worker(s) "
        f"({result.throughput:.2f} candidates/s"
        + (f", {result.rerun} re-run after a worker died" if result.rerun else "")
        + ")",
        table(result),
        f"best: {result.best.text}: {result.best.cycles} cycles, "
        f"{result.speedup:.2f}x the default ({result.default.cycles}); "
        f"numerics: {result.check}",
    ]
    lines += [f"rejected by the check: {r}" for r in result.rejected]
    return "\n".join(lines) + "\n"


def to_dict(result: TuneResult) -> dict[str, Any]:
    return {
        "entry": result.entry,
        "target": result.target,
        "space": {
            "size": result.space.size,
            "dimensions": {
                d.label: {"values": len(d.values), "source": d.source}
                for d in result.space.dimensions
            },
            "pruned": result.space.pruned,
            "untuned": list(result.space.untuned),
        },
        "executor": result.executor,
        "workers": result.workers,
        "seconds": result.seconds,
        "candidates_per_second": result.throughput,
        "rerun": result.rerun,
        "roofline_cycles": result.roofline_cycles,
        "default": {"options": {}, "cycles": result.default.cycles},
        "best": {
            "options": {k: _json(v) for k, v in result.best.options.items()},
            "cycles": result.best.cycles,
            "speedup": result.speedup,
        },
        "check": result.check,
        "rejected": result.rejected,
        "candidates": [
            {
                "index": c.index,
                "options": {k: _json(v) for k, v in c.options.items()},
                "cycles": c.cycles,
                "error": c.error,
                "seconds": c.seconds,
                "worker": c.worker,
            }
            for c in result.candidates
        ],
    }


def _json(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def write_json(result: TuneResult, path: str | Path) -> None:
    Path(path).write_text(json.dumps(to_dict(result), indent=2) + "\n")


def plot(result: TuneResult, path: str | Path) -> None:
    """Cycles of each candidate in measurement order, the best so far, the
    default and the roofline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=110)
    xs = [c.index for c in result.candidates if c.cycles is not None]
    ys = [c.cycles for c in result.candidates if c.cycles is not None]
    failed = [c.index for c in result.candidates if c.cycles is None]
    axes.scatter(xs, ys, s=18, label="candidate", color="tab:blue")
    best: list[float] = []
    for c in sorted(result.candidates, key=lambda c: c.index):
        value = float(c.cycles) if c.cycles is not None else float("inf")
        best.append(min(value, best[-1]) if best else value)
    axes.step(
        range(len(best)), best, where="post", color="tab:green", label="best so far"
    )
    if result.default.cycles:
        axes.axhline(result.default.cycles, color="gray", ls="--", label="default")
    if result.roofline_cycles:
        axes.axhline(result.roofline_cycles, color="tab:red", ls=":", label="roofline")
    if failed and ys:
        axes.scatter(
            failed, [max(ys)] * len(failed), marker="x", color="tab:red", label="failed"
        )
    axes.set_xlabel("candidate (measurement order)")
    axes.set_ylabel("simulated cycles")
    axes.set_title(
        f"@{result.entry} on {result.target}: {result.speedup:.2f}x over the default"
    )
    axes.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
