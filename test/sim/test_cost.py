"""The cost model: every figure from the target, and the shape of the formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pypto_mlir.targets import load_target
from pypto_mlir.targets.cost import (
    dma_cost,
    dma_cycles,
    mmad_cycles,
    scalar_cycles,
    vector_cycles,
    vector_repeats,
)

T = load_target("ascend910b")


def test_dma_formula_uses_the_target() -> None:
    path = T.dma[("gm", "ub")]
    cost = dma_cost(T, ("gm", "ub"), 1, 8192)
    assert cost.wire_bytes == 8192
    assert cost.cycles == path.latency + path.burst_overhead + math.ceil(
        8192 / path.bytes_per_cycle
    )
    assert dma_cycles(T, ("gm", "ub"), 1, 8192) == cost.cycles


def test_short_bursts_cost_more_per_byte() -> None:
    total = 64 * 1024
    per_byte = [
        dma_cycles(T, ("gm", "ub"), total // length, length) / total
        for length in (32, 128, 512, 2048, 8192, total)
    ]
    assert per_byte == sorted(per_byte, reverse=True)
    assert per_byte[0] > 2 * per_byte[-1]


def test_misaligned_bursts_cost_more() -> None:
    aligned = dma_cost(T, ("gm", "ub"), 16, 2048, src_addr=0, src_stride=4096)
    shifted = dma_cost(T, ("gm", "ub"), 16, 2048, src_addr=32, src_stride=4096)
    assert shifted.wire_bytes == aligned.wire_bytes + 16 * T.dma[("gm", "ub")].granule
    assert shifted.cycles > aligned.cycles
    # Alignment is judged on the GM side: the UB address does not matter for gm->ub.
    assert (
        dma_cost(T, ("gm", "ub"), 16, 2048, dst_addr=32).cycles
        == dma_cost(T, ("gm", "ub"), 16, 2048).cycles
    )
    # ...and for ub->gm it is the destination.
    assert (
        dma_cost(T, ("ub", "gm"), 4, 2048, dst_addr=64).cycles
        > dma_cost(T, ("ub", "gm"), 4, 2048).cycles
    )


def test_strided_misalignment_varies_per_burst() -> None:
    # A stride that is not a multiple of the granule misaligns some bursts only.
    granule = T.dma[("gm", "ub")].granule
    cost = dma_cost(T, ("gm", "ub"), 4, granule, src_stride=granule + granule // 2)
    assert cost.wire_bytes == (1 + 2 + 1 + 2) * granule  # starts 0, 1.5g, 3g, 4.5g


def test_unknown_path_is_an_error() -> None:
    with pytest.raises(KeyError, match="no DMA path l0a->gm"):
        dma_cycles(T, ("l0a", "gm"), 1, 512)


def test_mmad_counts_fractals() -> None:
    base = mmad_cycles(T, 16, 16, 16, np.float16)
    assert base == T.cube.startup + 1
    assert mmad_cycles(T, 128, 128, 128, "f16") == T.cube.startup + 8 * 8 * 8
    # Partial fractals cost whole ones.
    assert mmad_cycles(T, 17, 16, 16, "f16") == T.cube.startup + 2
    # fp32 inputs run at half rate.
    fp32 = mmad_cycles(T, 128, 128, 128, np.float32) - T.cube.startup
    assert fp32 == 2 * (mmad_cycles(T, 128, 128, 128, np.float16) - T.cube.startup)
    with pytest.raises(ValueError):
        mmad_cycles(T, 0, 16, 16, "f16")


def test_vector_costs() -> None:
    assert vector_repeats(T, 128, np.float16) == 1
    assert vector_repeats(T, 129, np.float16) == 2
    assert vector_repeats(T, 64, np.float32) == 1
    per = T.vector.cycles_per_repeat[16]
    assert vector_cycles(T, "add", 10) == T.vector.startup + math.ceil(10 * per["add"])
    assert vector_cycles(T, "exp", 100) > vector_cycles(T, "add", 100)
    # More than 255 repeats needs a second instruction and pays a second start-up.
    assert vector_cycles(T, "muls", 256) == 2 * T.vector.startup + 256
    # No default cost: an instruction the cost model does not know is an error.
    with pytest.raises(ValueError, match="'no_such_op' is not a vector instruction"):
        vector_cycles(T, "no_such_op", 10)
    assert vector_cycles(T, "div", 10, np.float32) < vector_cycles(
        T, "div", 10, np.float16
    )
    assert scalar_cycles(T, 5) == 5 * T.scalar.op
