"""The shared tiling model's core balance (passes/tiling_model.py): the
multi-core split's granule and the busiest core's parallel iterations."""

from __future__ import annotations

from pypto_mlir.passes.tiling_model import busiest_core_units, split_granule


def test_split_granule_is_the_iterations_of_a_whole_gm_block() -> None:
    # 42 rows of 333 f16: 27972 bytes, 4 past a 32-byte block: 8 tiles a share.
    assert split_granule(32, 42 * 333 * 2) == 8
    assert split_granule(32, 16 * 333 * 2) == 1
    assert split_granule(32, 0) == 1


def test_busiest_core_counts_whole_granules() -> None:
    # Swish 1000x333 in 42-row tiles: 24 tiles in shares of 8 on 3 cores.
    assert busiest_core_units([(24, 8, True)], 24) == 8
    # 16-row tiles: 63 tiles over 24 cores, at most 3 each.
    assert busiest_core_units([(63, 1, True)], 24) == 3


def test_busiest_core_grid_needs_an_inner_loop() -> None:
    # 4 outer units and 6 inner ones: a 4x6 grid on 24 cores.
    assert busiest_core_units([(4, 1, True), (6, 1, True)], 24) == 1
    # An inner dim of two trips with a tail is peeled into straight-line code:
    # no loop to cut, each core runs both.
    assert busiest_core_units([(3, 1, True), (2, 1, False)], 24) == 2
    # One-trip loops are not loops.
    assert busiest_core_units([(1, 1, True), (48, 1, True)], 24) == 2
