"""`kernel.run(...).report` carries the roofline; `kernel.profile(...)` maps the
simulated cycles back to the kernel's own lines."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import pypto_mlir as pto
from pypto_mlir.roofline import roofline
from pypto_mlir.sim.columns import short_line
from pypto_mlir.targets import load_target


@pto.kernel
def add_mul(
    x: pto.Tensor[(64, 1024), pto.f16], y: pto.Tensor[(64, 1024), pto.f16]
) -> pto.Tensor[(64, 1024), pto.f16]:
    z = x + y
    return z * y


FIRST_LINE = inspect.getsourcelines(add_mul.function)[1]
"""The `def` line; `z = x + y` is 4 lines below it, the return 5."""


@pytest.fixture(scope="module")
def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1024)).astype(np.float16)
    return x, rng.standard_normal((64, 1024)).astype(np.float16)


def test_report_carries_the_roofline(inputs) -> None:
    report = add_mul.run(*inputs).report
    bound = roofline(add_mul.module(), "add_mul", load_target("ascend910b"))
    assert report.roofline_cycles == pytest.approx(bound.cycles)
    assert report.bound_by == bound.limit.resource
    assert report.roofline_fraction == pytest.approx(bound.cycles / report.cycles)
    assert 0 < report.roofline_fraction <= 1
    assert f"bound by {bound.limit.resource}" in report.to_text()
    assert report.to_dict()["roofline_fraction"] == report.roofline_fraction


def test_profile_lines_are_the_kernels_lines(inputs) -> None:
    result = add_mul.profile(*inputs)
    name = "test_frontend_profile.py"
    lines = {short_line(s.line): s for s in result.lines}
    assert set(lines) == {f"{name}:{FIRST_LINE + 4}", f"{name}:{FIRST_LINE + 5}"}
    add = lines[f"{name}:{FIRST_LINE + 4}"]
    # x and y loaded (64 x 1024 f16 each) by the add; the result stored by the mul.
    assert add.dma_bytes == 2 * 64 * 1024 * 2
    assert lines[f"{name}:{FIRST_LINE + 5}"].dma_bytes == 64 * 1024 * 2
    # Every busy cycle of the pipes S dispatches to belongs to some line (S's
    # own busy cycles also count its dispatching, which no instruction owns).
    pipes = result.run.report.sim.pipes
    for pipe in ("MTE2", "MTE3", "V"):
        assert pipes[pipe].busy_cycles == sum(
            s.pipe_cycles.get(pipe, 0) for s in result.lines
        )
    text = str(result)
    assert "z = x + y" in text and "return z * y" in text and "hints:" in text


def test_profile_needs_a_simulator(inputs) -> None:
    with pytest.raises(pto.KernelError, match="nothing to profile"):
        add_mul.profile(*inputs, backend="reference")
