"""tv-schedule's fused forms against the tv reference, on both targets and odd
shapes, and a removed flag in a fused nest caught by the simulator.

The lit tests (test/filecheck/passes/tv_schedule/) show what the pass decides;
these check that the nests it leads to compute what `tv` says, with the
schedule on and off.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_hw_insert_sync import flags_that_change_nothing  # remove each flag in turn
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import check_lowering, lower, result_buffers
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.dialects import tile
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target


def _t(shape: str, dtype: str) -> str:
    return f"!tv.tensor<{shape}x{dtype}>"


def _sum_diff(shape: str, dtype: str) -> str:
    t = _t(shape, dtype)
    return f"""
func.func @k(%a: {t}, %b: {t}) -> ({t}, {t}) {{
  %s = tv.add %a, %b : {t}, {t} -> {t}
  %d = tv.sub %a, %b : {t}, {t} -> {t}
  func.return %s, %d : {t}, {t}
}}
"""


def _max_min_rows(shape: str, dtype: str) -> str:
    """Siblings and a row reduction of their product: one ROW nest."""
    t = _t(shape, dtype)
    rows = shape.split("x")[0]
    r = _t(f"{rows}x1", dtype)
    return f"""
func.func @k(%a: {t}, %b: {t}) -> ({t}, {t}, {r}) {{
  %hi = tv.max %a, %b : {t}, {t} -> {t}
  %lo = tv.min %a, %b : {t}, {t} -> {t}
  %p = tv.mul %hi, %lo : {t}, {t} -> {t}
  %s = tv.reduce_sum %p [1] keepdims : {t} -> {r}
  func.return %hi, %lo, %s : {t}, {t}, {r}
}}
"""


def _broadcast_siblings(shape: str, dtype: str) -> str:
    """Siblings sharing a broadcast row vector, and an independent group."""
    t = _t(shape, dtype)
    cols = shape.split("x")[1]
    v = _t(cols, dtype)
    return f"""
func.func @k(%a: {t}, %w: {v}) -> ({t}, {t}, {v}) {{
  %s = tv.mul %a, %w : {t}, {v} -> {t}
  %e = tv.exp %a : {t}
  %m = tv.add %e, %w : {t}, {v} -> {t}
  %n = tv.neg %w : {v}
  func.return %s, %m, %n : {t}, {t}, {v}
}}
"""


def _column_sum(shape: str, dtype: str) -> str:
    """A reduction over the long axis: balance-cores splits its columns."""
    t = _t(shape, dtype)
    c = _t(shape.split("x")[1], dtype)
    return f"""
func.func @k(%a: {t}) -> {c} {{
  %s = tv.reduce_sum %a [0] : {t} -> {c}
  func.return %s : {c}
}}
"""


def _module(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "test.mlir")


def _inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(seed)
    arrays = []
    for arg in function.body.block.args:
        shape = arg.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
        dtype = str(arg.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
        arrays.append(
            rng.standard_normal(shape).astype(np.dtype(dtype.replace("f", "float")))
        )
    return arrays


CASES = [
    (_sum_diff, "96x256", "f16"),
    (_sum_diff, "37x45", "f32"),
    (_max_min_rows, "33x70", "f16"),
    (_broadcast_siblings, "29x96", "f16"),
    (_column_sum, "70x400", "f16"),
]


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize(
    ("kernel", "shape", "dtype"),
    CASES,
    ids=[f"{k.__name__}-{s}-{d}" for k, s, d in CASES],
)
def test_fused_forms_match_the_reference(
    kernel, shape: str, dtype: str, target: str
) -> None:
    module = _module(kernel(shape, dtype))
    inputs = _inputs(module, 0)
    # Off is the pre-schedule lowering (covered elsewhere): once, as a control.
    controls = (False,) if shape == "37x45" and target == "tiny" else ()
    for schedule in (True, *controls):
        check = check_lowering(
            module,
            "k",
            inputs,
            pipeline=LowerPipeline(target=target, schedule=schedule),
        )
        assert check.ok, (schedule, [str(c) for c in check.comparisons])


def _loads(module: ModuleOp) -> int:
    return sum(isinstance(op, tile.LoadOp) for op in module.walk())


def test_siblings_load_each_input_once() -> None:
    """With the schedule, a + b and a - b load a and b once per tile; without
    it, one nest per output loads them twice."""
    module = _module(_sum_diff("512x512", "f16"))
    fused = lower(module, "tile", LowerPipeline(target="ascend910b"))
    apart = lower(
        module, "tile", LowerPipeline(target="ascend910b", fuse_siblings=False)
    )
    assert _loads(apart) == 2 * _loads(fused)
    assert _loads(fused) in (2, 4)  # a and b; again in a peeled tail


def test_a_removed_flag_in_a_fused_nest_is_caught() -> None:
    """Each set/wait pair hw-insert-sync places in the fused two-output nest is
    needed: without it the simulator reports a race, a deadlock or an event
    misuse, or an output changes."""
    target = load_target("ascend910b")
    module = _module(_sum_diff("64x96", "f16"))
    inputs = _inputs(module, 1)
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    pipeline = LowerPipeline(target="ascend910b", max_cores=1, double_buffer=False)
    lowered = lower(module, "ascend_hw", pipeline)

    def run(hw_module: ModuleOp) -> list[bytes]:
        outputs = result_buffers(function)
        run_hw_function(hw_module, "k", [*(a.copy() for a in inputs), *outputs], target)
        return [o.tobytes() for o in outputs]

    count, kept = flags_that_change_nothing(lowered, run)
    assert count >= 3
    assert not kept, f"flags {kept} of {count} change nothing"
