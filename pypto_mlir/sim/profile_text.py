"""The per-line profile (profile.py) as the text a kernel author reads.

A table of source lines, most pipe-cycles first, with each line's own code when
its file can be read (linecache: the kernel's Python file or the MLIR file), then
the hints.
"""

from __future__ import annotations

import linecache

from pypto_mlir.sim.columns import short_line
from pypto_mlir.sim.profile import LineStats, Profile

__all__ = ["line_source", "profile_text", "top_line_text"]


def line_source(line: str, width: int = 48) -> str:
    """The stripped source text of `file:line` ('' when it cannot be read)."""
    file, sep, number = line.rpartition(":")
    if not sep or not number.isdigit():
        return ""
    text = linecache.getline(file, int(number)).strip()
    return text if len(text) <= width else text[: width - 3] + "..."


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _row(stats: LineStats, total: int) -> list[str]:
    pipe = stats.pipe
    busiest = stats.pipe_cycles.get(pipe, 0)
    efficiency = stats.wire_efficiency
    return [
        short_line(stats.line),
        str(stats.cycles),
        f"{stats.cycles / total:.1%}" if total else "-",
        f"{pipe} {busiest}" if pipe else "-",
        str(stats.wait_cycles),
        _bytes(stats.dma_bytes) if stats.dma_bytes else "-",
        f"{efficiency:.0%}" if efficiency is not None else "-",
        str(stats.cores),
        line_source(stats.line),
    ]


HEADERS = (
    "line",
    "cycles",
    "share",
    "busiest pipe",
    "waits",
    "DMA",
    "wire",
    "cores",
    "code",
)
_RIGHT = {1, 2, 4, 5, 6, 7}


def profile_text(profile: Profile, limit: int | None = 20) -> str:
    """The table (at most `limit` lines; None: all) and the hints."""
    report = profile.report
    total = profile.cycles
    shown = profile.lines if limit is None else profile.lines[:limit]
    rows = [list(HEADERS), *(_row(s, total) for s in shown)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]

    def render(cells: list[str]) -> str:
        return "  ".join(
            f"{cell:>{w}}" if i in _RIGHT else f"{cell:<{w}}"
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    lines = [
        f"profile: {report.cycles} cycles on {report.block_dim} of "
        f"{report.target_cores or report.block_dim} cores ({report.target}); "
        f"pipe-cycles per source line, most first",
        report.roofline_text(),
        "",
        render(rows[0]),
        "  ".join("-" * w for w in widths),
        *(render(r) for r in rows[1:]),
    ]
    if len(shown) < len(profile.lines):
        lines.append(f"... {len(profile.lines) - len(shown)} more line(s)")
    lines.append("")
    lines.append(
        "cycles: busy cycles of the line's instructions summed over pipes and cores; "
        "waits: cycles pipes sat blocked at its wait_flags; wire: DMA payload / bytes "
        "on the wire"
    )
    if profile.hints:
        lines.append("")
        lines.append("hints:")
        lines += [f"  - {hint.text}" for hint in profile.hints]
    return "\n".join(lines) + "\n"


def top_line_text(profile: Profile) -> str:
    """One line: the source line with most pipe-cycles and its share."""
    if not profile.lines:
        return "no instructions"
    top = profile.lines[0]
    share = top.cycles / profile.cycles if profile.cycles else 0.0
    code = line_source(top.line, 40)
    return (
        f"{short_line(top.line)} {share:.0%} of pipe-cycles, {top.pipe} "
        f"{top.pipe_cycles.get(top.pipe, 0)}" + (f"  `{code}`" if code else "")
    )
