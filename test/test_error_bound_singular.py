"""The checker at the singular points of every op (`op_facts.*.singular_points`):
where a derivative is infinite (sqrt, rsqrt, log at 0), a division is by 0 or
a tiny value, a result overflows (exp, reciprocal) or saturates (tanh,
sigmoid), a deliberately wrong output is a mismatch, and a correct one (the
reference, or one f32 ulp from it) still passes.

Each op is checked on an exact operand, on an operand carrying a rounding error
(`(x + 1) - 1`), and through two consumers (`u * x`, `1 / u`): a bound that was
NaN at `sqrt(0)` (`0.5 / 0 * 0`) or at `1 / exp(100)` (`0 * inf`) used to
become infinite, which the check read as "anything passes"."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, f32

from pypto_mlir import op_facts
from pypto_mlir.check import compare_arrays
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.error_bound import run_with_error_bounds

ULPS = 8
"""The ascend_hw level's tolerance (`check.LEVEL_ULPS`), the looser one."""

NO_CLAIM = {"sin": 2.0**22, "cos": 2.0**22}
"""Ops whose approximation makes no claim from this |x| on (op_facts): there
the bound is infinite and the check requires the exact value."""


def parse(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "k.mlir")


def _tensor(n: int) -> str:
    return f"!tv.tensor<{n}xf32>"


def _unary_module(name: str, n: int) -> ModuleOp:
    t = _tensor(n)
    return parse(f"""
func.func @f(%x: {t}, %one: {t}) -> ({t}, {t}, {t}, {t}) {{
  %u = tv.{name} %x : {t}
  %y = tv.mul %u, %x : {t}, {t} -> {t}
  %r = tv.reciprocal %u : {t}
  %a = tv.add %x, %one : {t}, {t} -> {t}
  %noisy = tv.sub %a, %one : {t}, {t} -> {t}
  %u2 = tv.{name} %noisy : {t}
  func.return %u, %y, %r, %u2 : {t}, {t}, {t}, {t}
}}
""")


def _binary_module(name: str, n: int) -> ModuleOp:
    t = _tensor(n)
    return parse(f"""
func.func @f(%x: {t}, %z: {t}, %one: {t}) -> ({t}, {t}, {t}, {t}) {{
  %u = tv.{name} %x, %z : {t}, {t} -> {t}
  %y = tv.mul %u, %x : {t}, {t} -> {t}
  %r = tv.reciprocal %u : {t}
  %a = tv.add %x, %one : {t}, {t} -> {t}
  %xn = tv.sub %a, %one : {t}, {t} -> {t}
  %b = tv.add %z, %one : {t}, {t} -> {t}
  %zn = tv.sub %b, %one : {t}, {t} -> {t}
  %u2 = tv.{name} %xn, %zn : {t}, {t} -> {t}
  func.return %u, %y, %r, %u2 : {t}, {t}, {t}, {t}
}}
""")


OUTPUTS = ("op(x)", "op(x) * x", "1 / op(x)", "op((x + 1) - 1)")


def _wrong_values(expected: float) -> list[float]:
    """Outputs no correct lowering gives for `expected`."""
    if np.isnan(expected):
        return [1234.0, np.inf, 0.0]
    if np.isinf(expected):
        return [1234.0, -expected, np.nan, float(np.finfo(np.float32).max)]
    big = max(1.0, abs(expected))
    return [expected + 1234.0 * big, expected + big / 16, np.nan, np.inf]


def _check_element(
    where: str, e: np.ndarray, b: np.ndarray, no_claim: bool = False
) -> list[str]:
    """What is wrong with the check of one element (`e`, bound `b`): a wrong
    value that passes, a right one (the reference, one f32 ulp from it) that
    does not, an infinite bound at a finite value (unless of `no_claim`)."""
    faults: list[str] = []
    where = f"{where} = {e[0]!r} (bound {b[0]:.3g})"
    if np.isfinite(e[0]) and not np.isfinite(b[0]) and not no_claim:
        faults.append(f"{where}: infinite bound")
    for wrong in _wrong_values(float(e[0])):
        if compare_arrays(0, e, np.array([wrong]), f32, ULPS, b).ok:
            faults.append(f"{where}: accepts {wrong!r}")
    right = [e]
    if np.isfinite(e[0]) and np.isfinite(b[0]):
        right.append(np.nextafter(e, np.float32(np.inf)))
    for value in right:
        if not compare_arrays(0, e, value, f32, ULPS, b).ok:
            faults.append(f"{where}: rejects {value[0]!r}")
    return faults


def _check_points(
    op: str, module: ModuleOp, inputs: list[np.ndarray], points: list[str]
) -> None:
    """`_check_element` on every element of every output of `module`."""
    outputs, bounds = run_with_error_bounds(module, "f", inputs)
    faults: list[str] = []
    for output, bound, label in zip(outputs, bounds, OUTPUTS, strict=True):
        assert bound is not None
        for i, point in enumerate(points):
            x = abs(float(inputs[0][i]))
            no_claim = op in NO_CLAIM and x >= NO_CLAIM[op]
            e, b = output[i : i + 1], bound[i : i + 1]
            faults += _check_element(f"{op} at {point}, {label}", e, b, no_claim)
    assert not faults, "\n".join(faults)


def _undeclared(table: dict[str, object]) -> list[str]:
    return [
        name
        for name, facts in table.items()
        if facts.singular_points is None  # type: ignore[attr-defined]
    ]


def test_every_op_declares_its_singular_points() -> None:
    """A new op names its singular points (or `()`), so this file checks it."""
    missing = _undeclared(op_facts.UNARY) + _undeclared(op_facts.BINARY)
    assert not missing, f"no singular_points in pypto_mlir.op_facts: {missing}"


@pytest.mark.parametrize("op", list(op_facts.UNARY))
def test_unary_op_at_its_singular_points(op: str) -> None:
    points = op_facts.UNARY[op].singular_points
    assert points is not None, f"{op}: no singular_points in pypto_mlir.op_facts"
    if not points:
        pytest.skip(f"{op} has no singular points")
    x = np.array(points, dtype=np.float32)
    one = np.ones_like(x)
    _check_points(op, _unary_module(op, x.size), [x, one], [repr(p) for p in points])


@pytest.mark.parametrize("op", list(op_facts.BINARY))
def test_binary_op_at_its_singular_points(op: str) -> None:
    pairs = op_facts.BINARY[op].singular_points
    assert pairs is not None, f"{op}: no singular_points in pypto_mlir.op_facts"
    x = np.array([a for a, _ in pairs], dtype=np.float32)
    z = np.array([b for _, b in pairs], dtype=np.float32)
    inputs = [x, z, np.ones_like(x)]
    _check_points(op, _binary_module(op, x.size), inputs, [repr(p) for p in pairs])


def test_the_reported_case() -> None:
    """issue 18: relu -> sqrt -> mul with 1234.0 where sqrt(relu(x)) = 0 was
    reported ok with 0 mismatches (its bounds were 1.8e308)."""
    module = parse("""
func.func @f(%x: !tv.tensor<8xf32>) -> !tv.tensor<8xf32> {
  %r = tv.relu %x : !tv.tensor<8xf32>
  %s = tv.sqrt %r : !tv.tensor<8xf32>
  %m = tv.mul %s, %x : !tv.tensor<8xf32>, !tv.tensor<8xf32> -> !tv.tensor<8xf32>
  func.return %m : !tv.tensor<8xf32>
}
""")
    x = np.array([-2, -1, 0.5, 1, 2, -3, 4, -0.25], np.float32)
    (out,), (bound,) = run_with_error_bounds(module, "f", [x])
    zero = out == 0
    assert zero.sum() == 4 and not bound[zero].any()
    wrong = np.where(zero, np.float32(1234.0), out)
    assert compare_arrays(0, out, wrong, f32, ULPS, bound).mismatches == 4
    assert compare_arrays(0, out, out, f32, ULPS, bound).ok


def test_sqrt_of_an_inexact_zero_is_bounded_by_the_square_root_of_its_error() -> None:
    """sqrt(x + d) - sqrt(x) <= sqrt(|d|): finite where sqrt' is infinite."""
    module = _unary_module("sqrt", 1)
    x = np.zeros(1, np.float32)
    outputs, bounds = run_with_error_bounds(module, "f", [x, np.ones_like(x)])
    noisy_bound = bounds[3]
    assert noisy_bound is not None
    # (0 + 1) - 1 carries the add's rounding, eps(f32) * |0 + 1|
    error = float(np.finfo(np.float32).eps)
    np.testing.assert_allclose(noisy_bound, np.sqrt(error))
    assert outputs[3][0] == 0.0


def test_other_ops_at_infinities() -> None:
    """Sums, maxima, matmul and softmax with infinite terms: an infinite result
    is required as it is, and what consumes it starts from an exact value."""
    t2, t1 = "!tv.tensor<2xf32>", "!tv.tensor<1xf32>"
    module = parse(f"""
func.func @f(%x: {t2}, %y: {t2}, %m: !tv.tensor<1x2xf32>, %w: !tv.tensor<2x1xf32>) -> ({t1}, {t1}, {t2}, !tv.tensor<1x1xf32>) {{
  %s = tv.reduce_sum %x [0] keepdims : {t2} -> {t1}
  %r = tv.reciprocal %s : {t1}
  %mx = tv.reduce_max %y [0] keepdims : {t2} -> {t1}
  %e = tv.exp %mx : {t1}
  %sm = tv.softmax %y axis = 0 : {t2}
  %mm = tv.matmul %m, %w acc(f32) : !tv.tensor<1x2xf32>, !tv.tensor<2x1xf32> -> !tv.tensor<1x1xf32>
  %rm = tv.reciprocal %mm : !tv.tensor<1x1xf32>
  func.return %r, %e, %sm, %rm : {t1}, {t1}, {t2}, !tv.tensor<1x1xf32>
}}
""")
    x = np.array([np.inf, 1.0], np.float32)
    y = np.array([-np.inf, 1.0], np.float32)
    m = np.array([[1e30, 1e30]], np.float32)
    w = np.array([[1e30], [1.0]], np.float32)
    outputs, bounds = run_with_error_bounds(module, "f", [x, y, m, w])
    faults: list[str] = []
    for index, (e, b) in enumerate(zip(outputs, bounds, strict=True)):
        assert b is not None
        for i in range(e.size):
            element = e.reshape(-1)[i : i + 1]
            bound = b.reshape(-1)[i : i + 1]
            faults += _check_element(f"output {index}[{i}]", element, bound)
    assert not faults, "\n".join(faults)
