"""pypto-lower's optimisations switched on and off in every combination
(double-buffer, coalesce-dma, bank-offset): every example kernel on both
targets gives the tv reference's results with no race, and the same bits in
every combination (none of them changes arithmetic, only where data lives and
when it moves).
"""

from __future__ import annotations

import itertools

import pytest
from test_pipeline import EXAMPLE_KERNELS, TARGETS, Example, check_through_pipeline

SWITCHES = ("double_buffer", "coalesce_dma", "bank_offset")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "example", EXAMPLE_KERNELS, ids=[e.kernel for e in EXAMPLE_KERNELS]
)
def test_every_combination_of_switches(example: Example, target: str) -> None:
    text = example.ir(37, 45)
    outputs = {}
    for values in itertools.product((False, True), repeat=len(SWITCHES)):
        options = dict(zip(SWITCHES, values, strict=True))
        result = check_through_pipeline(text, target, seed=3745, **options)
        outputs[values] = [c.actual.tobytes() for c in result.comparisons]
    reference = outputs[(True, True, True)]
    for values, got in outputs.items():
        assert got == reference, dict(zip(SWITCHES, values, strict=True))
