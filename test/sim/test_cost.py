"""The cost formulas, checked against cycles derived by hand from ascend910b.toml.

Every expected number below is worked out in the docstring from the target
file's figures (quoted with their keys), not recomputed with targets.cost's own
formula: a change of formula (latency per burst, a dropped start-up, a halved
bandwidth) fails here. `bench/cost_mutations.py` shows that it does.

Figures used (ascend910b.toml, clock 1.85 GHz):
- dma.gm->l1: 135.0 GiB/s = 78.35 B/cycle, latency 1295, granule 512 B,
  burst_overhead 2; l2: hit_latency 50;
- dma.gm->ub: 100.9 GiB/s = 100.9 * 2**30 / 1.85e9 = 58.56 B/cycle,
  latency 1295, granule 512 B, burst_overhead 2;
- dma.ub->gm: 188.46 GiB/s = 109.38 B/cycle, latency 278, granule 512 B,
  burst_overhead 2;
- cube: 16 x 16 fractals, fractal_k_bytes 32, macs_per_cycle f16 4096, f32 1024,
  head_cycles 6;
- vector: 256 B repeats; b16 add 2.065788 -> 2.07 per repeat, head 5.93;
  b16 exp 3.99, head 12.01; b32 exp 2.0, head 12.0;
- memories.ub.banks: 16 groups, 32 B rows, conflict_cycles 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from pypto_mlir.targets import load_target
from pypto_mlir.targets.cost import (
    bank_conflict_cycles,
    dma_cost,
    dma_cycles,
    l2_hit_dma_cycles,
    matrix_move_cycles,
    mmad_cycles,
    scalar_cycles,
    vector_cycles,
    vector_cycles_for,
    vector_head_cycles,
    vector_repeats,
)

T = load_target("ascend910b")


def test_one_dma_of_one_burst() -> None:
    """8 KiB gm -> ub in one aligned burst: 16 granules of 512 B = 8192 wire
    bytes; 1295 latency + 1 * 2 burst overhead + ceil(8192 / 58.56) = 140:
    1437 cycles."""
    cost = dma_cost(T, ("gm", "ub"), 1, 8192)
    assert (cost.cycles, cost.wire_bytes) == (1437, 8192)
    assert dma_cycles(T, ("gm", "ub"), 1, 8192) == 1437


def test_l2_hit_dma_pays_the_hit_latency() -> None:
    """One 256 B row gm -> ub that hits the L2: a 512 B granule, 50 (the L2's
    hit_latency, not the path's 1295) + 2 + ceil(512 / 58.56) = 61; a write
    and a target without an L2 (tiny) cost what dma_cycles says."""
    assert l2_hit_dma_cycles(T, ("gm", "ub"), 1, 256) == 61
    assert l2_hit_dma_cycles(T, ("ub", "gm"), 1, 256) == dma_cycles(
        T, ("ub", "gm"), 1, 256
    )
    tiny = load_target("tiny")
    assert l2_hit_dma_cycles(tiny, ("gm", "ub"), 1, 256) == dma_cycles(
        tiny, ("gm", "ub"), 1, 256
    )


def test_matrix_move_of_whole_rows_is_one_burst() -> None:
    """An nd2nz of 64 rows of 256 B gm -> l1 (a 64 x 128 f16 K block) whose
    lines all miss the L2: at a pitch of 256 B the rows follow each other, one
    burst of 16384 B (32 granules): 1295 + 2 + ceil(16384 / 78.35) = 210:
    1507, as the simulator merges them; at a pitch of 4096 B each row is a
    burst of its own granule: 1295 + 64 * 2 + ceil(32768 / 78.35) = 419: 1842.
    All lines in the L2 (the default), it starts after 50 instead of 1295:
    262; a quarter missing, after 50 + 0.25 * (1295 - 50): 573.25."""
    assert matrix_move_cycles(T, ("gm", "l1"), 64, 256, 256, 1.0) == 1507
    assert matrix_move_cycles(T, ("gm", "l1"), 64, 256, 4096, 1.0) == 1842
    assert matrix_move_cycles(T, ("gm", "l1"), 64, 256, 256) == 262
    assert matrix_move_cycles(T, ("gm", "l1"), 64, 256, 256, 0.25) == 573.25
    tiny = load_target("tiny")
    assert matrix_move_cycles(tiny, ("gm", "l1"), 64, 256, 256) == dma_cycles(
        tiny, ("gm", "l1"), 1, 16384
    )


def test_vector_cycles_for_counts_the_repeats() -> None:
    """1000 f32 elements are ceil(4000 / 256) = 16 repeats."""
    assert vector_cycles_for(T, "add", 1000, "f32") == vector_cycles(
        T, "add", 16, "f32"
    )


def test_latency_is_per_transfer_and_overhead_per_burst() -> None:
    """16 bursts of 256 B, 1024 B apart in GM: each touches one 512 B granule, so
    8192 wire bytes; one latency for the transfer, 2 cycles per burst:
    1295 + 16 * 2 + ceil(8192 / 58.56) = 1295 + 32 + 140 = 1467."""
    cost = dma_cost(T, ("gm", "ub"), 16, 256, src_stride=1024)
    assert (cost.cycles, cost.wire_bytes) == (1467, 8192)


def test_misaligned_bursts_touch_one_more_granule() -> None:
    """4 bursts of 2048 B from GM byte 64 (4096 apart): each covers [64, 2112) of
    its 4 KiB, 5 granules, 20 in all = 10240 wire bytes:
    1295 + 4 * 2 + ceil(10240 / 58.56) = 1295 + 8 + 175 = 1478. Alignment is
    judged on the GM side: the UB address of a gm -> ub copy does not count, the
    GM address of a ub -> gm one does: 278 + 8 + ceil(10240 / 109.38) = 380."""
    cost = dma_cost(T, ("gm", "ub"), 4, 2048, src_addr=64, src_stride=4096)
    assert (cost.cycles, cost.wire_bytes) == (1478, 10240)
    assert dma_cycles(T, ("gm", "ub"), 4, 2048, dst_addr=64) == 1295 + 8 + 140
    assert dma_cycles(T, ("ub", "gm"), 4, 2048, dst_addr=64, dst_stride=4096) == 380


def test_strided_misalignment_varies_per_burst() -> None:
    """Bursts of 512 B every 768 B start at 0, 768, 1536, 2304: granule offsets
    0, 256, 0, 256, so 1 + 2 + 1 + 2 = 6 granules."""
    cost = dma_cost(T, ("gm", "ub"), 4, 512, src_stride=768)
    assert cost.wire_bytes == 6 * 512


def test_unknown_path_is_an_error() -> None:
    with pytest.raises(KeyError, match="no DMA path l0a->gm"):
        dma_cycles(T, ("l0a", "gm"), 1, 512)


def test_mmad_f16() -> None:
    """32 x 32 x 32 in f16: k0 = 32 B / 2 = 16, so 2 * 2 * 2 = 8 fractals of
    16 * 16 * 16 MACs; at 4096 MACs per cycle one fractal takes 1 cycle: 8 cycles
    (plus cube.head_cycles = 6 when it starts a stream on M). A partial fractal
    costs a whole one: 17 x 16 x 16 is 2 fractals."""
    assert mmad_cycles(T, 32, 32, 32, np.float16) == 8
    assert mmad_cycles(T, 17, 16, 16, "f16") == 2
    assert T.cube.head_cycles == 6
    with pytest.raises(ValueError):
        mmad_cycles(T, 0, 16, 16, "f16")


def test_mmad_f32() -> None:
    """32 x 32 x 32 in f32: k0 = 32 B / 4 = 8, so 2 * 2 * 4 = 16 fractals of
    16 * 16 * 8 = 2048 MACs; at 1024 MACs per cycle (PTO-ISA's 2 cycles per fp32
    fractal) 2 cycles each: 32 cycles. bf16 runs at the fp16 rate: 8."""
    assert mmad_cycles(T, 32, 32, 32, np.float32) == 32
    assert mmad_cycles(T, 32, 32, 32, "bf16") == 8


def test_vector_instruction_costs() -> None:
    """vadd of 32 repeats of f16: ceil(32 * 2.065788) = ceil(66.1) = 67 in a
    stream, round(5.93) = 6 more when it starts one. vexp of 5 repeats of f16:
    ceil(5 * 3.99) = 20, head round(12.01) = 12; of f32: 5 * 2.0 = 10, head 12.
    300 muls repeats are two instructions (max_repeat 255) issued back to back:
    300 * 1.0 = 300, no second start-up."""
    assert vector_repeats(T, 4096, np.float16) == 32
    assert vector_repeats(T, 129, np.float16) == 2
    assert vector_repeats(T, 64, np.float32) == 1
    assert vector_cycles(T, "add", 32, np.float16) == 67
    assert vector_head_cycles(T, "add", np.float16) == 6
    assert (vector_cycles(T, "exp", 5), vector_head_cycles(T, "exp")) == (20, 12)
    assert vector_cycles(T, "exp", 5, np.float32) == 10
    assert vector_head_cycles(T, "exp", np.float32) == 12
    assert vector_cycles(T, "muls", 300) == 300
    with pytest.raises(ValueError, match="'no_such_op' is not a vector instruction"):
        vector_cycles(T, "no_such_op", 10)
    with pytest.raises(ValueError, match="'no_such_op' is not a vector instruction"):
        vector_head_cycles(T, "no_such_op")
    assert scalar_cycles(T, 5) == 5


def _blocks(*addresses: int) -> np.ndarray:
    """One repeat touching the 32 B blocks at `addresses`."""
    return np.array([addresses], dtype=np.int64)


def test_bank_conflicts() -> None:
    """The Ascend C bank-conflict guide's write examples: a repeat writing its 8
    blocks into one bank group (addresses 512 B apart: 16 groups of 32 B rows)
    takes 8 cycles, 7 more than one; into two groups (4 each) 4 cycles, 3 more;
    8 blocks in 8 groups take 1 cycle, none more. conflict_cycles = 1 per cycle."""
    one_group = _blocks(*(512 * k for k in range(8)))
    two_groups = _blocks(
        *(512 * k for k in range(4)), *(32 + 512 * k for k in range(4))
    )
    spread = _blocks(*(32 * k for k in range(8)))
    assert bank_conflict_cycles(T, [], [one_group]) == 7
    assert bank_conflict_cycles(T, [], [two_groups]) == 3
    assert bank_conflict_cycles(T, [], [spread]) == 0
