"""Hand-built record streams for the simulator tests (what an interpreter would issue)."""

from __future__ import annotations

import numpy as np

from pypto_mlir.sim import Access, Machine, Report
from pypto_mlir.targets import Target, load_target
from pypto_mlir.targets.cost import vector_cycles, vector_head_cycles, vector_repeats

# Flags of one tile of the vector-add pipeline, by name; a test can leave one out.
FLAGS = ("mte3->mte2", "mte2->v", "v->mte3")


def vector_add(
    *,
    double_buffer: bool,
    tiles: int = 6,
    tile: int = 4096,
    block_dim: int = 1,
    target: Target | str = "ascend910b",
    omit: str | None = None,
) -> tuple[Machine, Report]:
    """z = x + y tile by tile: MTE2 loads, V adds, MTE3 stores, synchronised by flags.

    With `double_buffer` the tiles alternate between two UB buffer sets with one
    event id each, so loading tile i+1 overlaps adding and storing tile i. `omit`
    drops one flag pair (see FLAGS) to make the program racy.
    """
    tgt = load_target(target) if isinstance(target, str) else target
    machine = Machine(tgt, block_dim)
    n = tiles * tile * block_dim
    rng = np.random.default_rng(0)
    x = machine.register_gm("x", rng.standard_normal(n).astype(np.float16))
    y = machine.register_gm("y", rng.standard_normal(n).astype(np.float16))
    z = machine.register_gm("z", np.zeros(n, np.float16))
    tb = tile * 2
    buffers = 2 if double_buffer else 1
    add_cycles = vector_cycles(tgt, "add", vector_repeats(tgt, tile, np.float16))
    add_head = vector_head_cycles(tgt, "add", np.float16)
    for c in range(block_dim):
        core = machine.core(c)
        for b in range(buffers):
            core.note_alloc("ub", 3 * b * tb, 3 * tb, f"alloc{b}")
        if omit != "mte3->mte2":
            for b in range(buffers):
                core.set_flag("mte3", "mte2", b, f"prologue.set{b}")
        for i in range(tiles):
            b = i % buffers
            base = 3 * b * tb
            g = (c * tiles + i) * tb
            ub_x, ub_y, ub_z = (Access("ub", base + k * tb, tb) for k in range(3))
            if omit != "mte3->mte2":
                core.wait_flag("mte3", "mte2", b, f"t{i}.wait_mte3_mte2")
            core.dma("dma_x", f"t{i}.load_x", Access(x, g, tb), ub_x)
            core.dma("dma_y", f"t{i}.load_y", Access(y, g, tb), ub_y)
            if omit != "mte2->v":
                core.set_flag("mte2", "v", b, f"t{i}.set_mte2_v")
                core.wait_flag("mte2", "v", b, f"t{i}.wait_mte2_v")
            a = core.view("ub", base, (tile,), np.float16)
            bb = core.view("ub", base + tb, (tile,), np.float16)
            core.view("ub", base + 2 * tb, (tile,), np.float16)[:] = a + bb
            core.issue(
                "v",
                "vadd",
                f"t{i}.vadd",
                add_cycles,
                reads=[ub_x, ub_y],
                writes=[ub_z],
                head=add_head,
            )
            if omit != "v->mte3":
                core.set_flag("v", "mte3", b, f"t{i}.set_v_mte3")
                core.wait_flag("v", "mte3", b, f"t{i}.wait_v_mte3")
            core.dma("dma_z", f"t{i}.store_z", ub_z, Access(z, g, tb))
            if omit != "mte3->mte2":
                core.set_flag("mte3", "mte2", b, f"t{i}.set_mte3_mte2")
        if omit != "mte3->mte2":
            for b in range(buffers):
                core.wait_flag("mte3", "mte2", b, f"epilogue.wait{b}")
    report = machine.finish()
    expected = (x.array + y.array).astype(np.float16)
    assert np.array_equal(z.array, expected)
    return machine, report


def intervals(report: Report, pipe: str, core: int = 0) -> list[tuple[int, int]]:
    return [
        (s.start, s.end) for s in report.slices if s.pipe == pipe and s.core == core
    ]


def overlaps(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
    """Whether some interval of a overlaps some interval of b in time."""
    return any(s1 < e2 and s2 < e1 for s1, e1 in a for s2, e2 in b)
