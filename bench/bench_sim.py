"""Raw simulator throughput: records per second through Core.issue and Machine.finish.

CPU time is reported next to wall time because the machine may be shared.

Builds a double-buffered vector-add record stream (MTE2 -> V -> MTE3 with flags, as an
interpreter would issue it, without the numpy arithmetic) of at least 100k records and
times issuing it and replaying it (timing + race detection + report), with the CPU
time of each phase of the replay and which replay ran (dataflow on one core; on 8
cores GM bandwidth is shared, so the time-ordered one). Prints figures; asserts
nothing.

    .venv/bin/python bench/bench_sim.py [--records N] [--cores C]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from pypto_mlir.sim import Access, Machine, timing
from pypto_mlir.targets import load_target
from pypto_mlir.targets.cost import dma_cost, vector_cycles, vector_repeats

RECORDS_PER_TILE = 12  # 3 DMAs, 1 vector op, 8 set/wait


def build(target_name: str, records: int, block_dim: int, tile: int = 2048) -> Machine:
    """Issue a double-buffered vector add of enough tiles for `records` records."""
    target = load_target(target_name)
    machine = Machine(target, block_dim)
    tiles = max(1, records // (RECORDS_PER_TILE * block_dim))
    tile_bytes = tile * 2
    n = tiles * tile * block_dim
    x = machine.register_gm("x", np.zeros(n, np.float16))
    y = machine.register_gm("y", np.zeros(n, np.float16))
    z = machine.register_gm("z", np.zeros(n, np.float16))
    add_cycles = vector_cycles(target, "add", vector_repeats(target, tile, np.float16))
    load = dma_cost(target, ("gm", "ub"), 1, tile_bytes)
    store = dma_cost(target, ("ub", "gm"), 1, tile_bytes)
    for c in range(block_dim):
        core = machine.core(c)
        core.note_alloc("ub", 0, 6 * tile_bytes)
        for b in (0, 1):
            core.set_flag("mte3", "mte2", b, "bench:prologue")
        for i in range(tiles):
            b = i % 2
            base = 3 * b * tile_bytes
            g = (c * tiles + i) * tile_bytes
            ub_x = Access("ub", base, tile_bytes)
            ub_y = Access("ub", base + tile_bytes, tile_bytes)
            ub_z = Access("ub", base + 2 * tile_bytes, tile_bytes)
            core.wait_flag("mte3", "mte2", b, "bench:1")
            core.issue(
                "mte2",
                "dma",
                "bench:2",
                load.cycles,
                reads=[Access(x, g, tile_bytes)],
                writes=[ub_x],
                path=("gm", "ub"),
                wire_bytes=load.wire_bytes,
            )
            core.issue(
                "mte2",
                "dma",
                "bench:3",
                load.cycles,
                reads=[Access(y, g, tile_bytes)],
                writes=[ub_y],
                path=("gm", "ub"),
                wire_bytes=load.wire_bytes,
            )
            core.set_flag("mte2", "v", b, "bench:4")
            core.wait_flag("mte2", "v", b, "bench:5")
            core.issue(
                "v", "vadd", "bench:6", add_cycles, reads=[ub_x, ub_y], writes=[ub_z]
            )
            core.set_flag("v", "mte3", b, "bench:7")
            core.wait_flag("v", "mte3", b, "bench:8")
            core.issue(
                "mte3",
                "dma",
                "bench:9",
                store.cycles,
                reads=[ub_z],
                writes=[Access(z, g, tile_bytes)],
                path=("ub", "gm"),
                wire_bytes=store.wire_bytes,
            )
            core.set_flag("mte3", "mte2", b, "bench:10")
        for b in (0, 1):
            core.wait_flag("mte3", "mte2", b, "bench:epilogue")
    return machine


def measure(records: int, block_dim: int, profile: bool) -> None:
    c0, t0 = time.process_time(), time.perf_counter()
    machine = build("ascend910b", records, block_dim)
    c1, t1 = time.process_time(), time.perf_counter()
    n = len(machine.records)
    if profile:
        prof = cProfile.Profile()
        prof.enable()
    report = machine.finish()
    c2, t2 = time.process_time(), time.perf_counter()
    if profile:
        prof.disable()
    print(f"{n} records on {block_dim} core(s), simulated {report.cycles} cycles:")
    for stage, cpu, wall in (("issue", c1 - c0, t1 - t0), ("finish", c2 - c1, t2 - t1)):
        print(
            f"  {stage:<7} CPU {cpu:.2f} s = {n / cpu / 1e3:.0f}k records/s "
            f"({cpu / n * 1e6:.1f} us/record); wall {wall:.2f} s"
        )
    phases = ", ".join(f"{k} {v:.3f} s" for k, v in timing.last_phases.items())
    print(f"  finish by phase ({timing.last_replay} replay), CPU: {phases}")
    if profile:
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=120_000)
    parser.add_argument("--cores", type=int, nargs="*", default=[1, 8])
    parser.add_argument(
        "--profile", action="store_true", help="print where finish() spends time"
    )
    args = parser.parse_args()
    for block_dim in args.cores:
        measure(args.records, block_dim, args.profile)


if __name__ == "__main__":
    main()
