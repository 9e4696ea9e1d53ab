"""Comparing kernel outputs with references, with a tolerance per element.

    result = compare(actual, expected, rtol=2**-10, atol=2**-24)
    print(result)            # max |error| 0.00195, ..., 0.98 of the tolerance: OK
    assert result.ok, result

The tolerance is numpy's `allclose` form, `atol + rtol * |expected|`, where
`atol` may be an array (e.g. an error bound per element of a matmul).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Comparison:
    """How far `actual` is from `expected`."""

    max_abs_error: float
    max_rel_error: float
    """Over elements whose expected value is not zero."""
    worst_ratio: float
    """max |error| / tolerance over elements: at most 1 when all are within it."""
    shape_matches: bool = True

    @property
    def ok(self) -> bool:
        return self.shape_matches and self.worst_ratio <= 1.0

    def __str__(self) -> str:
        if not self.shape_matches:
            return "shapes differ: FAILED"
        verdict = "OK" if self.ok else "FAILED"
        return (
            f"max |error| {self.max_abs_error:.3g}, max relative error "
            f"{self.max_rel_error:.3g}, {self.worst_ratio:.2f} of the tolerance: {verdict}"
        )


def compare(
    actual: np.ndarray,
    expected: np.ndarray,
    *,
    rtol: float,
    atol: float | np.ndarray = 0.0,
) -> Comparison:
    """Compare elementwise in float64; NaN matches NaN, infinities must be equal."""
    actual64 = np.asarray(actual, np.float64)
    expected64 = np.asarray(expected, np.float64)
    if actual64.shape != expected64.shape:
        return Comparison(np.inf, np.inf, np.inf, shape_matches=False)
    both_nan = np.isnan(actual64) & np.isnan(expected64)
    same_inf = np.isinf(expected64) & (actual64 == expected64)
    exact = both_nan | same_inf
    with np.errstate(invalid="ignore"):
        error = np.where(exact, 0.0, np.abs(actual64 - expected64))
    error = np.where(np.isnan(error), np.inf, error)
    with np.errstate(divide="ignore", invalid="ignore"):
        tolerance = np.asarray(atol, np.float64) + rtol * np.abs(expected64)
        ratio = np.where(error == 0, 0.0, error / tolerance)
        relative = np.where(expected64 != 0, error / np.abs(expected64), 0.0)
    return Comparison(
        float(error.max(initial=0.0)),
        float(np.nan_to_num(relative, nan=np.inf).max(initial=0.0)),
        float(np.nan_to_num(ratio, nan=np.inf).max(initial=0.0)),
    )


def check_run(
    kernel: Any,
    inputs: Sequence[Any],
    reference: Callable[..., np.ndarray],
    tolerance: Callable[..., tuple[float, float | np.ndarray]],
    backend: str | None = None,
) -> tuple[Any, Comparison]:
    """Run `kernel` on `inputs` and compare its output with `reference(*inputs)`
    within `tolerance(*inputs)` = (rtol, atol): the `RunResult` and the
    `Comparison` (how the examples check themselves)."""
    result = kernel.run(*inputs, backend=backend)
    rtol, atol = tolerance(*inputs)
    return result, compare(result.value, reference(*inputs), rtol=rtol, atol=atol)
