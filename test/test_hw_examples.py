"""The hand-written ascend_hw examples (examples/hw): numerics against numpy, the
pipe overlap that double buffering buys, and that every flag in them is needed.

The sync-removal tests walk each example's IR, remove one set_flag/wait_flag pair
(or every flag of one pipe pair and event) and require the simulator to report a
race, a deadlock or an event misuse, or the result to change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from pypto_mlir.cli.source import load_module
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw import HwRunResult, run_hw_function
from pypto_mlir.sim import DeadlockError, EventError, RaceError, Report
from pypto_mlir.targets import load_target

EXAMPLES = Path(__file__).parent.parent / "examples" / "hw"
TARGET = load_target("ascend910b")


def vadd_inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((256, 1024)).astype(np.float16)
    y = rng.standard_normal((256, 1024)).astype(np.float16)
    return [x, y, np.zeros_like(x)]


def matmul_inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((128, 128)).astype(np.float16)
    b = rng.standard_normal((128, 128)).astype(np.float16)
    return [a, b, np.zeros((128, 128), np.float32)]


def vadd_reference(args: list[np.ndarray]) -> np.ndarray:
    return args[0] + args[1]  # numpy's f16 add: f32 sum rounded once


def matmul_reference(args: list[np.ndarray]) -> np.ndarray:
    return args[0].astype(np.float64) @ args[1].astype(np.float64)


EXAMPLE_SPECS: dict[str, tuple[str, Callable[..., list[np.ndarray]], Callable]] = {
    "vadd_single.mlir": ("vadd", vadd_inputs, vadd_reference),
    "vadd_double.mlir": ("vadd", vadd_inputs, vadd_reference),
    "matmul.mlir": ("matmul", matmul_inputs, matmul_reference),
}


def run_example(
    module: ModuleOp, file: str, block_dim: int | None = None
) -> tuple[list[np.ndarray], HwRunResult]:
    name, inputs, _ = EXAMPLE_SPECS[file]
    args = inputs()
    return args, run_hw_function(module, name, args, TARGET, block_dim)


def check_result(file: str, args: list[np.ndarray]) -> None:
    expected = EXAMPLE_SPECS[file][2](args)
    if file == "matmul.mlir":
        # Products of f16 values are exact in f32; only the f32 sums round.
        np.testing.assert_allclose(args[2], expected, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(args[2], expected)


@pytest.fixture(scope="module")
def modules() -> dict[str, ModuleOp]:
    return {file: load_module(str(EXAMPLES / file)) for file in EXAMPLE_SPECS}


@pytest.mark.parametrize("block_dim", [None, 1, 4])
@pytest.mark.parametrize("file", EXAMPLE_SPECS)
def test_example_matches_numpy(
    modules: dict[str, ModuleOp], file: str, block_dim: int | None
) -> None:
    args, result = run_example(modules[file], file, block_dim)
    check_result(file, args)
    assert result.report.block_dim == (block_dim or 2)  # declared: 2


# --------------------------------------------------------------------------------------
# Overlap of the pipes
# --------------------------------------------------------------------------------------


def busy_intervals(report: Report, core: int, pipe: str) -> list[tuple[int, int]]:
    """The merged time intervals in which `pipe` of `core` executes something."""
    spans = sorted(
        (s.start, s.end)
        for s in report.slices
        if s.core == core and s.pipe == pipe and s.end > s.start
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def overlap(report: Report, core: int, p: str, q: str) -> int:
    """Cycles during which both pipes of `core` are busy."""
    total = 0
    for a_start, a_end in busy_intervals(report, core, p):
        for b_start, b_end in busy_intervals(report, core, q):
            total += max(0, min(a_end, b_end) - max(a_start, b_start))
    return total


PAIRS = [("MTE2", "V"), ("MTE2", "MTE3"), ("V", "MTE3")]
LOAD_OVERLAPS = [("MTE2", "V"), ("MTE2", "MTE3")]
"""What double buffering overlaps in this bandwidth-bound add: loading the next
tile with adding and with storing the current one. (V and MTE3 cannot overlap
here: a tile's add and store together take less time than loading the next
tile, so V only starts again after the store is done.)"""


def test_single_buffering_never_overlaps(modules: dict[str, ModuleOp]) -> None:
    _, result = run_example(modules["vadd_single.mlir"], "vadd_single.mlir")
    report = result.report
    for core in range(report.block_dim):
        for p, q in PAIRS:
            assert overlap(report, core, p, q) == 0, (core, p, q)


def test_double_buffering_overlaps_all_three_stages(
    modules: dict[str, ModuleOp],
) -> None:
    _, single = run_example(modules["vadd_single.mlir"], "vadd_single.mlir")
    _, double = run_example(modules["vadd_double.mlir"], "vadd_double.mlir")
    report = double.report
    for core in range(report.block_dim):
        for p, q in LOAD_OVERLAPS:
            assert overlap(report, core, p, q) > 0, (core, p, q)
    # Same work, same busy cycles per pipe, less time.
    for pipe in ("MTE2", "V", "MTE3"):
        assert report.pipes[pipe].busy_cycles == single.report.pipes[pipe].busy_cycles
    assert report.cycles < single.report.cycles
    assert report.pipes["MTE2"].utilization > 0.9


def test_matmul_report(modules: dict[str, ModuleOp]) -> None:
    """Every stage runs on its pipe; bytes per path are what the kernel moves."""
    _, result = run_example(modules["matmul.mlir"], "matmul.mlir")
    report = result.report
    names = {(s.name, s.pipe) for s in report.slices}
    assert {
        ("nd2nz", "MTE2"),
        ("load_l0", "MTE1"),
        ("mmad", "M"),
        ("fixpipe", "FIX"),
    } <= names
    per_core = 2 * 128 * 128 + 64 * 128 * 2  # B once, 64 rows of A
    assert report.bytes_per_path["gm->l1"] == 2 * per_core
    assert report.bytes_per_path["l0c->gm"] == 128 * 128 * 4
    assert report.gm_bytes_written == 128 * 128 * 4


# --------------------------------------------------------------------------------------
# Removing synchronisation
# --------------------------------------------------------------------------------------

FlagKey = tuple[str, str, int]


def flag_ops(module: ModuleOp) -> list[hw.FlagOp]:
    return [op for op in module.walk() if isinstance(op, hw.FlagOp)]


def flag_pairs(module: ModuleOp) -> list[tuple[int, int]]:
    """Indices (in `flag_ops` order) of each set_flag and the wait_flag it pairs
    with: the k-th set and the k-th wait of one (src, dst, event) in IR order."""
    sets: dict[FlagKey, list[int]] = defaultdict(list)
    waits: dict[FlagKey, list[int]] = defaultdict(list)
    for index, op in enumerate(flag_ops(module)):
        key = (str(op.src_pipe), str(op.dst_pipe), op.event_id)
        (sets if isinstance(op, hw.SetFlagOp) else waits)[key].append(index)
    pairs = []
    for key, set_indices in sets.items():
        assert len(set_indices) == len(waits[key]), key
        pairs += list(zip(set_indices, waits[key], strict=True))
    return sorted(pairs)


def flag_keys(module: ModuleOp) -> dict[FlagKey, list[int]]:
    """Indices of every flag op of each (src, dst, event)."""
    keys: dict[FlagKey, list[int]] = defaultdict(list)
    for index, op in enumerate(flag_ops(module)):
        keys[(str(op.src_pipe), str(op.dst_pipe), op.event_id)].append(index)
    return dict(keys)


def without(module: ModuleOp, indices: set[int]) -> ModuleOp:
    """A copy of `module` without the flag ops at `indices` (`flag_ops` order)."""
    copy = module.clone()
    ops: list[Operation] = flag_ops(copy)
    for index in sorted(indices, reverse=True):
        ops[index].detach()
        ops[index].erase()
    return copy


def variants(file: str) -> list[tuple[str, str, tuple[int, ...]]]:
    module = load_module(str(EXAMPLES / file))
    ops = flag_ops(module)
    cases = []
    for s, w in flag_pairs(module):
        cases.append((file, f"pair {s},{w}: {ops[s].name} / {ops[w].name}", (s, w)))
    for key, indices in flag_keys(module).items():
        cases.append((file, f"all of {key[0]}->{key[1]}, {key[2]}", tuple(indices)))
    return cases


ALL_VARIANTS = [v for file in EXAMPLE_SPECS for v in variants(file)]


def test_every_example_has_flags_to_remove() -> None:
    counts = defaultdict(int)
    for file, _, _ in ALL_VARIANTS:
        counts[file] += 1
    assert counts == {
        "vadd_single.mlir": 4 + 3,
        "vadd_double.mlir": 8 + 6,
        "matmul.mlir": 10 + 7,
    }


@pytest.mark.parametrize(
    "file, what, indices", ALL_VARIANTS, ids=[f"{f}-{w}" for f, w, _ in ALL_VARIANTS]
)
def test_removing_sync_is_detected(
    modules: dict[str, ModuleOp], file: str, what: str, indices: tuple[int, ...]
) -> None:
    """Without the flags, the simulator reports an error (naming ops of the
    example by FILE:LINE:COL) or the outputs differ from the synchronised run."""
    module = modules[file]
    reference, _ = run_example(module, file)
    broken = without(module, set(indices))
    try:
        args, _ = run_example(broken, file)
    except (RaceError, DeadlockError, EventError) as error:
        assert error.locs and all(
            loc.startswith(str(EXAMPLES / file) + ":") for loc in error.locs if loc
        ), error.locs
        return
    assert not np.array_equal(args[2], reference[2]), f"{what}: not detected"


def test_race_report_names_both_ops(modules: dict[str, ModuleOp]) -> None:
    """Removing the mte2 -> v pair of the single-buffered add: the vadd reads the
    tile the dma_load writes, unordered."""
    module = modules["vadd_single.mlir"]
    ops = flag_ops(module)
    pair = next(
        (s, w)
        for s, w in flag_pairs(module)
        if (str(ops[s].src_pipe), str(ops[s].dst_pipe)) == ("mte2", "v")
    )
    with pytest.raises(RaceError) as info:
        run_example(without(module, set(pair)), "vadd_single.mlir")
    error = info.value
    text = (EXAMPLES / "vadd_single.mlir").read_text().splitlines()

    def line_of(loc: str) -> str:
        return text[int(loc.split(":")[-2]) - 1]

    assert "dma_load" in line_of(error.first_loc)
    assert "vadd" in line_of(error.second_loc)
    assert error.memory == "ub"
