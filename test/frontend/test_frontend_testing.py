"""`compare`: the tolerance check the examples use."""

from __future__ import annotations

import numpy as np

from pypto_mlir.frontend.testing import compare


def test_within_and_beyond_the_tolerance() -> None:
    expected = np.array([1.0, -2.0, 0.0])
    within = compare(expected + [1e-3, -2e-3, 1e-6], expected, rtol=1e-3, atol=1e-6)
    assert within.ok and np.isclose(within.worst_ratio, 1.0)
    assert np.isclose(within.max_abs_error, 2e-3)
    beyond = compare(expected + [0, 0, 2e-6], expected, rtol=1e-3, atol=1e-6)
    assert not beyond.ok and "FAILED" in str(beyond)


def test_per_element_atol_and_special_values() -> None:
    expected = np.array([np.nan, np.inf, 1.0, 5.0])
    actual = np.array([np.nan, np.inf, 1.5, 5.0], np.float16)
    assert compare(actual, expected, rtol=0, atol=np.array([0, 0, 0.5, 0])).ok
    assert not compare(actual, expected, rtol=0, atol=np.array([0, 0, 0.4, 0])).ok
    assert not compare(np.array([np.nan]), np.array([1.0]), rtol=1, atol=1).ok
    assert not compare(np.array([-np.inf]), np.array([np.inf]), rtol=1, atol=1).ok


def test_shapes_must_match() -> None:
    result = compare(np.zeros(3), np.zeros(4), rtol=1, atol=1)
    assert not result.ok and str(result) == "shapes differ: FAILED"
