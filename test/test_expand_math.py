"""sin, cos and erf: the chip has no instruction for them, `tv-expand-math`
expands them into f32 tv ops (pypto_mlir/op_facts.py). Checked: the expansion's
f32 numerics against the exact functions within the accuracy the facts state
(the checker's error-bound term), and whole kernels through pypto-lower and the
simulator of both targets against the tv reference (numpy), at odd shapes and
large arguments (|x| up to 1e4 for sin/cos)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import pypto_mlir.op_facts as op_facts
from pypto_mlir.check import check_lowering
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.tensor_view import run_tv_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.roofline import roofline
from pypto_mlir.targets import load_target

EXPANDED = ("sin", "cos", "erf")
RANGES = {"sin": 1e4, "cos": 1e4, "erf": 6.0}
TARGETS = ("tiny", "ascend910b")
SHAPES = [(1, 1), (7, 13), (37, 45)]


def _exact(name: str, x: np.ndarray) -> np.ndarray:
    function = getattr(math, name)
    values = [function(v) for v in x.astype(np.float64).ravel()]
    return np.array(values).reshape(x.shape)


def _arguments(name: str, size: int, seed: int) -> np.ndarray:
    """Uniform over the op's range, plus zeros, tiny values and multiples of
    pi/4 (the quadrant boundaries of the range reduction)."""
    limit = RANGES[name]
    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, 1e-30, -1e-7, 0.5, -2.0, 3.5], np.float32)
    boundaries = (np.arange(-40, 41) * (np.pi / 4)).astype(np.float32)
    uniform = rng.uniform(-limit, limit, size).astype(np.float32)
    return np.concatenate([special, boundaries, uniform])


@pytest.mark.parametrize("name", EXPANDED)
def test_expansion_within_the_stated_accuracy(name: str) -> None:
    facts = op_facts.UNARY[name]
    assert facts.expansion is not None and facts.approximation is not None
    x = _arguments(name, 200_000, 1)
    error = np.abs(op_facts.run_expansion(facts.expansion, x) - _exact(name, x))
    bound = facts.approximation(x.astype(np.float64))
    worst = int(np.argmax(error / bound))
    assert np.all(error <= bound), (name, x[worst], error[worst], bound[worst])


def test_sin_cos_make_no_claim_beyond_their_range() -> None:
    bound = op_facts.UNARY["sin"].approximation
    assert bound is not None
    assert np.all(np.isinf(bound(np.array([2.0**22, -1e9]))))


@pytest.mark.parametrize("name", EXPANDED)
def test_expansion_steps_are_the_vector_steps(name: str) -> None:
    facts = op_facts.UNARY[name]
    assert facts.expansion is not None
    assert facts.vector_steps == op_facts.expansion_steps(facts.expansion)
    names = {"x"}
    for step in facts.expansion:
        assert step.lhs in names and (isinstance(step.rhs, float) or step.rhs in names)
        names.add(step.result)


def _parse(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "k.mlir")


def _kernel(name: str, shape: tuple[int, int], dtype: str) -> str:
    t = f"!tv.tensor<{shape[0]}x{shape[1]}x{dtype}>"
    return (
        f"func.func @k(%x: {t}) -> {t} {{\n"
        f"  %y = tv.{name} %x : {t}\n"
        f"  func.return %y : {t}\n"
        "}\n"
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("name", EXPANDED)
def test_through_the_pipeline_against_numpy(name: str, dtype: str, target: str) -> None:
    for rows, cols in SHAPES:
        module = _parse(_kernel(name, (rows, cols), dtype))
        values = _arguments(name, rows * cols, rows * 100 + cols)[-rows * cols :]
        x = values.reshape(rows, cols).astype(
            np.float16 if dtype == "f16" else np.float32
        )
        with diagnostic_handler(lambda _: None):
            result = check_lowering(
                module, "k", [x], "ascend_hw", LowerPipeline(target=target)
            )
        problems = [c.describe() for c in result.comparisons if not c.ok]
        assert not problems, (name, dtype, target, rows, cols, problems)
        bound = roofline(module, "k", load_target(target))
        assert result.sim_report.cycles >= bound.cycles


def test_reference_is_numpy() -> None:
    """The tv and tile interpreters run numpy's f32 sin/cos and the f32 nearest
    erf (from the facts), not the expansion."""
    x = np.linspace(-10, 10, 64, dtype=np.float32).reshape(8, 8)
    for name, function in (("sin", np.sin), ("cos", np.cos)):
        module = _parse(_kernel(name, (8, 8), "f32"))
        (y,) = run_tv_function(module, "k", [x])
        np.testing.assert_array_equal(y, function(x))
    (y,) = run_tv_function(_parse(_kernel("erf", (8, 8), "f32")), "k", [x])
    np.testing.assert_array_equal(y, _exact("erf", x).astype(np.float32))
