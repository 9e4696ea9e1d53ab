"""The profiler's cost next to the run it profiles, at growing record counts.

Builds bench_sim.py's double-buffered vector add at 25k, 50k and 100k records on
2 cores, replays it, then times `Report.columns` (every record as numpy columns),
`profile` (cycles, waits and bytes per source line, and the hints), `chrome_trace`
(slices, flag flows, counters) and `write_timeline_png` (the default view), with
CPU time per record so linear growth shows as a flat column. Prints figures;
asserts nothing.

    .venv/bin/python bench/bench_profile.py [--records N ...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_sim import build  # the stream of bench_sim.py (bench/ is on the path)

from pypto_mlir.sim.profile import profile
from pypto_mlir.sim.trace import chrome_trace, write_timeline_png


def timed(action: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    """`action(*args)` and its CPU seconds."""
    start = time.process_time()
    value = action(*args)
    return value, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records", type=int, nargs="*", default=[25_000, 50_000, 100_000]
    )
    args = parser.parse_args()
    print(
        f"{'records':>8}  {'finish s':>9}  {'columns s':>9}  {'profile s':>9}  "
        f"{'trace s':>8}  {'png s':>7}  {'us/record (cols+prof+trace)':>28}"
    )
    with tempfile.TemporaryDirectory() as folder:
        png = Path(folder) / "timeline.png"
        for records in args.records:
            machine = build("ascend910b", records, 2)
            report, t_finish = timed(machine.finish)
            columns, t_columns = timed(lambda r: r.columns, report)
            n = len(columns)
            _, t_profile = timed(profile, report)
            _, t_trace = timed(chrome_trace, report)
            _, t_png = timed(write_timeline_png, report, png)
            per = (t_columns + t_profile + t_trace) / n * 1e6
            print(
                f"{n:>8}  {t_finish:>9.2f}  {t_columns:>9.3f}  {t_profile:>9.3f}  "
                f"{t_trace:>8.2f}  {t_png:>7.2f}  {per:>28.2f}"
            )


if __name__ == "__main__":
    main()
