"""Matmul epilogue and row fusion (tv-to-tile's `epilogue-fusion` and
`row-fusion`, passes/matmul_fusion.py): the fused and unfused forms against the
tv reference with the per-element error bounds of pypto_mlir.check, on both
targets, at odd shapes; the switches and the refusals' remarks."""

import numpy as np
import pytest
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.check import check_lowering
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.pipelines import LowerPipeline


def _t(*shape: int) -> str:
    return f"!tv.tensor<{'x'.join(map(str, shape))}xf16>"


def _softmax(m: int, k: int, n: int) -> str:
    return f"""
func.func @f(%a: {_t(m, k)}, %b: {_t(k, n)}) -> {_t(m, n)} {{
  %s = tv.matmul %a, %b acc(f32) : {_t(m, k)}, {_t(k, n)} -> {_t(m, n)}
  %c = arith.constant 0.125 : f16
  %x = tv.mul %s, %c : {_t(m, n)}, f16 -> {_t(m, n)}
  %p = tv.softmax %x axis = 1 : {_t(m, n)}
  func.return %p : {_t(m, n)}
}}"""


def _bias_sum(m: int, k: int, n: int) -> str:
    """A bias, a row sum and a row max of the biased result, all returned."""
    return f"""
func.func @f(%a: {_t(m, k)}, %b: {_t(k, n)}, %c: {_t(n)}) -> ({_t(m, n)}, {_t(m)}, {_t(m, 1)}) {{
  %s = tv.matmul %a, %b acc(f32) : {_t(m, k)}, {_t(k, n)} -> {_t(m, n)}
  %y = tv.add %s, %c : {_t(m, n)}, {_t(n)} -> {_t(m, n)}
  %r = tv.reduce_sum %y [1] : {_t(m, n)} -> {_t(m)}
  %x = tv.reduce_max %y [1] keepdims : {_t(m, n)} -> {_t(m, 1)}
  func.return %y, %r, %x : {_t(m, n)}, {_t(m)}, {_t(m, 1)}
}}"""


def _swish(m: int, k: int, n: int) -> str:
    """x @ w -> swish (the FFN's first half)."""
    return f"""
func.func @f(%a: {_t(m, k)}, %b: {_t(k, n)}) -> {_t(m, n)} {{
  %s = tv.matmul %a, %b acc(f32) : {_t(m, k)}, {_t(k, n)} -> {_t(m, n)}
  %g = tv.sigmoid %s : {_t(m, n)}
  %y = tv.mul %s, %g : {_t(m, n)}, {_t(m, n)} -> {_t(m, n)}
  func.return %y : {_t(m, n)}
}}"""


def _module(text: str) -> ModuleOp:
    return parse_chunk(default_context(), SourceChunk(text, 1), "test.mlir")


def _inputs(text: str, seed: int) -> list[np.ndarray]:
    module = _module(text)
    function = next(iter(module.ops))
    rng = np.random.default_rng(seed)
    types = [a.type for a in function.regions[0].block.args]
    return [
        rng.standard_normal(tuple(t.get_shape())).astype(  # pyright: ignore
            np.float32 if str(t.element_type) == "f32" else np.float16  # pyright: ignore
        )
        for t in types
    ]


def _check(text: str, target: str, **options: bool) -> tuple[list[str], int]:
    """Lower and run `text` against the tv reference; the remarks and the GM
    temporaries of the lowering."""
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        result = check_lowering(
            _module(text),
            "f",
            _inputs(text, 7),
            "ascend_hw",
            LowerPipeline(target=target, **options),
        )
    assert result.ok, [c.describe() for c in result.comparisons]
    allocs = sum(isinstance(op, memref.AllocOp) for op in result.lowered.walk())
    return remarks, allocs


SHAPES = [(77, 40, 133), (1, 16, 17), (33, 20, 48)]


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kernel", [_softmax, _bias_sum])
def test_row_fusion_matches_the_reference(kernel, shape, target: str) -> None:  # noqa: ANN001
    text = kernel(*shape)
    remarks, allocs = _check(text, target)
    fused = any("into the nest of tv.matmul" in r for r in remarks)
    refused = any("not fused with tv.matmul: no base block" in r for r in remarks)
    assert fused, remarks
    # tiny's 4 KiB UB holds the whole rows only for the short ones.
    assert allocs == (1 if refused else 0), remarks
    if target == "ascend910b":
        assert not refused
    off, allocs_off = _check(text, target, row_fusion=False)
    assert not any("into the nest of tv.matmul" in r for r in off)
    assert allocs_off == 1


def test_row_fusion_declined_by_cost_matches_the_reference() -> None:
    """bench_fusion's 128x64x512 softmax: 8 whole-row blocks for 24 cores, so
    the estimate keeps two nests (the result through GM), still correct."""
    remarks, allocs = _check(_softmax(128, 64, 512), "ascend910b")
    assert any("two nests are estimated faster" in r for r in remarks), remarks
    assert allocs == 1


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize("shape", SHAPES)
def test_epilogue_fusion_switch(shape: tuple[int, int, int], target: str) -> None:
    text = _swish(*shape)
    remarks, allocs = _check(text, target)
    assert allocs == 0 or any("not fused" in r for r in remarks), remarks
    remarks, allocs = _check(text, target, epilogue_fusion=False)
    assert allocs == 1
    assert any(
        "not fused with tv.matmul: epilogue-fusion=false" in r for r in remarks
    ), remarks


def _prologue(kind: str, m: int, k: int, n: int) -> str:
    """A matmul whose operand is computed by elementwise ops: relu(x) @ w,
    (x * s) @ w, (x + b) @ w with a bias row, cast(x) @ w from f32, and
    x @ relu(w) (a prologue of B)."""
    x, w = _t(m, k), _t(k, n)
    ops = {
        "relu": f"%p = tv.relu %x : {x}",
        "scale": f"%s = arith.constant 0.5 : f16\n  %p = tv.mul %x, %s : {x}, f16 -> {x}",
        "bias": f"%p = tv.add %x, %b : {x}, {_t(k)} -> {x}",
        "cast": f"%p = tv.cast %x : !tv.tensor<{m}x{k}xf32> to {x}",
    }
    if kind == "rhs":
        return f"""
func.func @f(%x: {x}, %w: {w}) -> {_t(m, n)} {{
  %p = tv.relu %w : {w}
  %c = tv.matmul %x, %p acc(f32) : {x}, {w} -> {_t(m, n)}
  func.return %c : {_t(m, n)}
}}"""
    source = f"!tv.tensor<{m}x{k}xf32>" if kind == "cast" else x
    bias = f", %b: {_t(k)}" if kind == "bias" else ""
    return f"""
func.func @f(%x: {source}, %w: {w}{bias}) -> {_t(m, n)} {{
  {ops[kind]}
  %c = tv.matmul %p, %w acc(f32) : {x}, {w} -> {_t(m, n)}
  func.return %c : {_t(m, n)}
}}"""


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", ["relu", "scale", "bias", "cast", "rhs"])
def test_prologue_fusion_matches_the_reference(
    kind: str, shape: tuple[int, int, int], target: str
) -> None:
    text = _prologue(kind, *shape)
    remarks, allocs = _check(text, target)
    if shape[0] == 1 and kind != "rhs":
        assert any("not fused: the operand has a dim of extent 1" in r for r in remarks)
        return
    assert any("fused prologue" in r for r in remarks), remarks
    # On tiny the estimate mostly keeps two nests (its 2 cores would
    # recompute the operand on each of their many small blocks): the operand
    # through GM.
    by_cost = any("two nests are estimated faster" in r for r in remarks)
    assert not by_cost or target == "tiny", remarks
    assert allocs == int(by_cost)
    off, allocs_off = _check(text, target, prologue_fusion=False)
    assert not any("prologue" in r for r in off)
    assert allocs_off == 1


def test_prologue_refused_without_a_ub_to_l1_path() -> None:
    """A target whose UB has no path to L1 keeps the operand's own nest."""
    from dataclasses import replace

    from xdsl.dialects import func

    from pypto_mlir.passes.matmul_fusion import fuse_matmul_prologues
    from pypto_mlir.passes.tv_fusion import ExtentAnalysis, FusionAnalysis
    from pypto_mlir.targets import load_target

    tiny = load_target("tiny")
    target = replace(
        tiny,
        name="no_ub_l1",
        dma={p: d for p, d in tiny.dma.items() if p != ("ub", "l1")},
    )
    function = next(iter(_module(_prologue("relu", 32, 16, 48)).ops))
    assert isinstance(function, func.FuncOp)
    extents = ExtentAnalysis()
    for arg in function.body.block.args:
        extents.set_argument(arg, [])
    ops = [op for op in function.body.block.ops if op.dialect_name() == "tv"]
    for op in ops:
        extents.visit(op)
    analysis = FusionAnalysis(ops, extents)
    decisions = fuse_matmul_prologues(analysis, target)
    assert [d.text for d in decisions] == [
        "prologue tv.relu of the lhs not fused: target 'no_ub_l1' has no ub -> l1 path"
    ]
    assert len(analysis.groups) == 2
    assert fuse_matmul_prologues(analysis, tiny)[0].text.startswith("fused prologue")
    assert len(analysis.groups) == 1


def test_every_flag_of_the_fused_nest_is_needed() -> None:
    """Without any one set/wait pair of a nest with a prologue (computed in
    ub, moved to l1) and a row epilogue (softmax after the move out of l0c),
    the simulator reports a race, a deadlock or an event misuse, or the result
    changes."""
    from test_hw_insert_sync import flags_that_change_nothing

    from pypto_mlir.check import lower, result_buffers
    from pypto_mlir.interp.ascend_hw import run_hw_function
    from pypto_mlir.targets import load_target

    x, w, c = _t(40, 48), _t(48, 40), _t(40, 40)
    text = f"""
func.func @f(%x: {x}, %w: {w}) -> {c} {{
  %r = tv.relu %x : {x}
  %m = tv.matmul %r, %w acc(f32) : {x}, {w} -> {c}
  %p = tv.softmax %m axis = 1 : {c}
  func.return %p : {c}
}}"""
    module = _module(text)
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        lowered = lower(module, "ascend_hw", LowerPipeline(max_cores=1))
    assert sum("into the nest of tv.matmul" in r for r in remarks) == 2, remarks
    function = next(iter(module.ops))
    inputs = _inputs(text, 3)
    chip = load_target("ascend910b")

    def run(candidate: ModuleOp) -> bytes:
        args = [*(a.copy() for a in inputs), *result_buffers(function)]  # pyright: ignore
        run_hw_function(candidate, "f", args, chip)
        return args[-1].tobytes()

    count, kept = flags_that_change_nothing(lowered, run)
    assert count > 0
    assert not kept, f"flags {kept} of {count} change nothing"
