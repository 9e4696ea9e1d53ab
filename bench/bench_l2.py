"""What the L2 model costs the simulator, and what it changes in a GEMM-like run.

Issues a GEMM-shaped stream of GM reads on 24 cores of ascend910b (each core
reads, per k step, a row panel of A and a column panel of B as strided
bursts, as the lowered GEMM does, then writes its C tile) and replays it with
the target's L2 and without (`l2 = None`): cycles, the L2's hit rate and HBM
bytes, the replay taken and the CPU time of `finish()`, and the CPU time per GM
transfer spent in the L2 model itself. CPU time is reported because the machine
may be shared. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_l2.py [--size N] [--tile T]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from pypto_mlir.sim import Access, Machine, timing
from pypto_mlir.sim.l2 import L2Cache
from pypto_mlir.targets import Target, load_target
from pypto_mlir.targets.cost import dma_cost


def build(target: Target, size: int, tile: int, cores: int) -> Machine:
    """C = A @ B (size^3 f16, row-major) in tile x tile output blocks dealt to
    the cores round-robin, k in steps of `tile`: per step one strided read of A's
    rows (tile bursts of tile * 2 B) and of B's rows, then the C tile's write."""
    machine = Machine(target, cores)
    row = size * 2
    a = machine.register_gm("a", np.zeros((size, size), np.float16))
    b = machine.register_gm("b", np.zeros((size, size), np.float16))
    c = machine.register_gm("c", np.zeros((size, size), np.float16))
    panel = tile * tile * 2
    load = dma_cost(target, ("gm", "l1"), tile, tile * 2, src_stride=row)
    store = dma_cost(target, ("ub", "gm"), tile, tile * 2, dst_stride=row)
    blocks = [(i, j) for i in range(size // tile) for j in range(size // tile)]
    for core_index in range(cores):
        core = machine.core(core_index)
        core.mark_written(Access("ub", 0, panel))
        for i, j in blocks[core_index::cores]:
            for k in range(size // tile):
                for tensor, at in (
                    (a, i * tile * row + k * tile * 2),
                    (b, k * tile * row + j * tile * 2),
                ):
                    core.issue(
                        "mte2",
                        "load",
                        "bench:1",
                        load.cycles,
                        reads=[Access(tensor, at, tile * 2, tile, row)],
                        writes=[Access("l1", 0, panel)],
                        path=("gm", "l1"),
                        wire_bytes=load.wire_bytes,
                    )
                core.set_flag("mte2", "mte3", 0, "bench:2")
                core.wait_flag("mte2", "mte3", 0, "bench:3")
                core.set_flag("mte3", "mte2", 0, "bench:4")
                core.wait_flag("mte3", "mte2", 0, "bench:5")
            core.issue(
                "mte3",
                "store",
                "bench:6",
                store.cycles,
                reads=[Access("ub", 0, panel)],
                writes=[Access(c, i * tile * row + j * tile * 2, tile * 2, tile, row)],
                path=("ub", "gm"),
                wire_bytes=store.wire_bytes,
            )
            core.set_flag("mte3", "mte2", 0, "bench:7")
            core.wait_flag("mte3", "mte2", 0, "bench:8")
    return machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--tile", type=int, default=128)
    args = parser.parse_args()
    a2 = load_target("ascend910b")
    print(
        f"GEMM-shaped stream {args.size}^3 f16, {args.tile}x{args.tile} tiles, "
        f"{a2.cores} cores of {a2.name}:"
    )
    spent = [0.0, 0]
    transfer = L2Cache.transfer

    def timed(self: L2Cache, rec: object, t: int) -> tuple[int, int]:
        start = time.process_time()
        result = transfer(self, rec, t)  # type: ignore[arg-type]
        spent[0] += time.process_time() - start
        spent[1] += 1
        return result

    L2Cache.transfer = timed  # type: ignore[method-assign]
    for label, target in (("no L2", dataclasses.replace(a2, l2=None)), ("L2", a2)):
        machine = build(target, args.size, args.tile, a2.cores)
        cpu = time.process_time()
        report = machine.finish()
        cpu = time.process_time() - cpu
        line = (
            f"  {label:<6} {report.cycles:>9} cycles, {len(machine.records)} "
            f"records, finish CPU {cpu:.2f} s ({timing.last_replay} replay)"
        )
        if report.l2 is not None:
            line += (
                f"; L2 hit rate {report.l2.hit_rate:.1%}, "
                f"{report.l2.hbm_bytes / 2**20:.1f} MiB from HBM "
                f"(of {report.gm_bytes_read / 2**20:.1f} MiB read); "
                f"L2 model {spent[0]:.2f} s CPU = "
                f"{spent[0] / max(spent[1], 1) * 1e6:.0f} us per GM transfer"
            )
        print(line)
    L2Cache.transfer = transfer  # type: ignore[method-assign]


if __name__ == "__main__":
    main()
