"""Run every benchmark (bench/bench_*.py) and print its figures: `make bench`.

Each benchmark runs in its own Python process with its default arguments, one
after the other (the machine may be small and shared); its output is printed as it
comes, under a header with its wall time. BLAS runs single-threaded
(OPENBLAS_NUM_THREADS=1 unless set): the simulator multiplies small fractal blocks,
where BLAS threads only contend for a shared machine's cores. Benchmarks print
figures and assert nothing; the exit status is 1 if one of them crashed.

    .venv/bin/python bench/run.py [NAME ...]     # e.g. bench/run.py hw (bench_hw.py)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).parent


def benchmarks(names: list[str]) -> list[Path]:
    """The benchmark scripts, all or those named (`hw` or `bench_hw.py`)."""
    found = sorted(BENCH_DIR.glob("bench_*.py"))
    if not names:
        return found
    wanted = {n.removeprefix("bench_").removesuffix(".py") for n in names}
    chosen = [p for p in found if p.stem.removeprefix("bench_") in wanted]
    missing = wanted - {p.stem.removeprefix("bench_") for p in chosen}
    if missing:
        known = ", ".join(p.stem.removeprefix("bench_") for p in found)
        sys.exit(
            f"bench/run.py: no benchmark {', '.join(sorted(missing))} (known: {known})"
        )
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    scripts = benchmarks(parser.parse_args().names)
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **os.environ}
    failed = []
    for script in scripts:
        print(f"=== {script.name} ===", flush=True)
        start = time.perf_counter()
        run = subprocess.run([sys.executable, str(script)], env=env, check=False)
        status = run.returncode
        elapsed = time.perf_counter() - start
        print(
            f"=== {script.name}: {elapsed:.1f} s wall"
            + (f", exit status {status}" if status else "")
        )
        print(flush=True)
        if status:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
