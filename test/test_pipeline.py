"""The whole pipeline, tv -> pypto-lower -> ascend_hw -> simulator, against the
tv reference: every example kernel at many shapes (1, primes, sizes around a
tile edge, hypothesis-drawn) on ascend910b and tiny; `pypto-lower` as a pipeline
of its member passes; `pypto-run --check` and `check_lowering` catching a wrong
lowering; the frontend's default `sim` backend; the roofline as a true lower
bound of simulated cycles.

Shapes are small so that the suite stays fast: the demo runs the real sizes.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f16, f32, i32
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter

import pypto_mlir as pto
from pypto_mlir.check import (
    LEVEL_ULPS,
    check_lowering,
    compare_arrays,
    lower,
    tolerance,
)
from pypto_mlir.cli import run
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import DiagnosticError, diagnostic_handler, op_error
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.frontend import backends
from pypto_mlir.pipelines import LowerPipeline, pass_by_name
from pypto_mlir.roofline import roofline
from pypto_mlir.targets import load_target

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TARGETS = ("ascend910b", "tiny")

# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def parse(text: str) -> ModuleOp:
    """Parsed with op locations (`k.mlir:LINE:COL`), as pypto-opt does."""
    return parse_chunk(default_context(), SourceChunk(text, 1), "k.mlir")


def load_example(name: str) -> ModuleType:
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"pipeline_example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def resize(text: str, sizes: dict[int, int]) -> str:
    """`text` with the dims of every `!tv.tensor` type replaced per `sizes`."""

    def dims(match: re.Match[str]) -> str:
        parts = match.group(1).split("x")
        shape = [str(sizes.get(int(p), int(p))) for p in parts[:-1]]
        return "!tv.tensor<" + "x".join([*shape, parts[-1]]) + ">"

    return re.sub(r"!tv\.tensor<([^>]*)>", dims, text)


@dataclass(frozen=True)
class Example:
    """An example kernel and how to give it `rows` x `cols`."""

    file: str
    kernel: str
    sizes: Callable[[int], dict[str, int]]
    shrink: Callable[[int, int], dict[int, int]]

    def ir(self, rows: int, cols: int) -> str:
        kernel = getattr(load_example(self.file), self.kernel)
        return resize(kernel.mlir(**self.sizes(rows)), self.shrink(rows, cols))


EXAMPLE_KERNELS = (
    Example("swish", "swish", lambda r: {}, lambda r, c: {4096: r, 1024: c}),
    Example("softmax", "softmax", lambda r: {}, lambda r, c: {4096: r, 1024: c}),
    Example(
        "softmax", "softmax_by_hand", lambda r: {}, lambda r, c: {4096: r, 1024: c}
    ),
    Example("layernorm", "layernorm", lambda r: {"N": r}, lambda r, c: {768: c}),
    Example("gemm", "gemm", lambda r: {"M": r}, lambda r, c: {1024: c}),
    Example("ffn", "ffn", lambda r: {}, lambda r, c: {128: r, 768: c, 3072: c + 5}),
)

SHAPES = [(1, 1), (1, 17), (7, 13), (37, 45), (16, 33), (5, 129)]
"""1, primes, and sizes just above a power of two (a tile edge)."""


def inputs_for(module: ModuleOp, seed: int) -> tuple[str, list[Any]]:
    """The entry of a tv module and reproducible inputs (pypto-run's --random)."""
    entry = run.select_entry(module, None, "test")
    return entry.sym_name.data, run.random_inputs(
        entry, run.argument_specs(entry), seed
    )


def check_through_pipeline(
    text: str, target: str, seed: int = 0, **options: Any
) -> Any:
    """Lower `text` with pypto-lower for `target`, simulate it, and require every
    output within the ascend_hw tolerance of the tv reference and the cycles at
    or above the roofline."""
    module = parse(text)
    name, inputs = inputs_for(module, seed)
    with diagnostic_handler(lambda _: None):
        result = check_lowering(
            module, name, inputs, "ascend_hw", LowerPipeline(target=target, **options)
        )
    problems = [c.describe() for c in result.comparisons if not c.ok]
    assert not problems, f"{target}: " + "; ".join(problems)
    bound = roofline(module, name, load_target(target))
    assert result.sim_report.cycles >= bound.cycles, (bound.limit, bound.cycles)
    return result


# --------------------------------------------------------------------------------------
# Every example through the whole pipeline
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "example", EXAMPLE_KERNELS, ids=[e.kernel for e in EXAMPLE_KERNELS]
)
def test_examples_through_the_pipeline(example: Example, target: str) -> None:
    for rows, cols in SHAPES:
        check_through_pipeline(example.ir(rows, cols), target, seed=rows * 1000 + cols)


@settings(max_examples=12, deadline=None)
@given(
    st.sampled_from(EXAMPLE_KERNELS),
    st.integers(1, 40),
    st.integers(1, 140),
    st.sampled_from(TARGETS),
)
def test_examples_at_drawn_shapes(
    example: Example, rows: int, cols: int, target: str
) -> None:
    check_through_pipeline(example.ir(rows, cols), target, seed=rows + cols)


OTHER_KERNELS = {
    "scalar and integer outputs": """
func.func @f(%x: !tv.tensor<19x70xf32>, %n: !tv.tensor<19x70xi32>, %s: f32) -> (!tv.tensor<19x70xf32>, !tv.tensor<19x70xi32>) {
  %a = tv.mul %x, %s : !tv.tensor<19x70xf32>, f32 -> !tv.tensor<19x70xf32>
  %b = tv.exp %a : !tv.tensor<19x70xf32>
  %m = tv.sub %n, %n : !tv.tensor<19x70xi32>
  %k = tv.add %m, %n : !tv.tensor<19x70xi32>
  func.return %b, %k : !tv.tensor<19x70xf32>, !tv.tensor<19x70xi32>
}
""",
    "row statistics broadcast back": """
func.func @f(%x: !tv.tensor<23x50xf16>) -> !tv.tensor<23x50xf16> {
  %m = tv.reduce_max %x [1] keepdims : !tv.tensor<23x50xf16> -> !tv.tensor<23x1xf16>
  %y = tv.sub %x, %m : !tv.tensor<23x50xf16>, !tv.tensor<23x1xf16> -> !tv.tensor<23x50xf16>
  func.return %y : !tv.tensor<23x50xf16>
}
""",
    "strided and rank-reducing views": """
func.func @f(%x: !tv.tensor<20x30xf32>) -> (!tv.tensor<5x7xf32>, !tv.tensor<30xf32>) {
  %v = tv.view %x[4, 3][5, 7][2, 3] : !tv.tensor<20x30xf32> to !tv.tensor<5x7xf32>
  %e = tv.exp %v : !tv.tensor<5x7xf32>
  %r = tv.view %x[7, 0][1, 30][1, 1] : !tv.tensor<20x30xf32> to !tv.tensor<30xf32>
  %n = tv.neg %r : !tv.tensor<30xf32>
  func.return %e, %n : !tv.tensor<5x7xf32>, !tv.tensor<30xf32>
}
""",
    "matmuls with column tails through GM": """
func.func @f(%x: !tv.tensor<16x132xf16>, %w1: !tv.tensor<132x208xf16>, %w2: !tv.tensor<208x132xf16>) -> !tv.tensor<16x132xf16> {
  %0 = tv.matmul %x, %w1 acc(f32) : !tv.tensor<16x132xf16>, !tv.tensor<132x208xf16> -> !tv.tensor<16x208xf16>
  %1 = tv.silu %0 : !tv.tensor<16x208xf16>
  %2 = tv.matmul %1, %w2 acc(f32) : !tv.tensor<16x208xf16>, !tv.tensor<208x132xf16> -> !tv.tensor<16x132xf16>
  func.return %2 : !tv.tensor<16x132xf16>
}
""",
    "matmul with an epilogue": """
func.func @f(%a: !tv.tensor<40x70xf16>, %b: !tv.tensor<70x37xf16>) -> !tv.tensor<40x37xf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<40x70xf16>, !tv.tensor<70x37xf16> -> !tv.tensor<40x37xf16>
  %d = tv.relu %c : !tv.tensor<40x37xf16>
  func.return %d : !tv.tensor<40x37xf16>
}
""",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(OTHER_KERNELS))
def test_other_kernels_through_the_pipeline(name: str, target: str) -> None:
    check_through_pipeline(OTHER_KERNELS[name], target)


@pytest.mark.parametrize("level", ["tile", "ascend_hw"])
def test_pypto_run_executes_the_gm_memref_ops_of_each_level(
    level: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Views (memref.subview), broadcasts (memref.expand_shape) and GM
    temporaries (memref.alloc) run in the tile interpreter and the simulator."""
    views = OTHER_KERNELS["strided and rank-reducing views"]
    for text in (views, EXAMPLE_KERNELS[3].ir(5, 40), EXAMPLE_KERNELS[5].ir(3, 20)):
        with diagnostic_handler(lambda _: None):
            lowered = lower(parse(text), level, LowerPipeline(target="tiny"))
        assert {"memref.subview", "memref.expand_shape", "memref.alloc"} & {
            op.name for op in lowered.walk()
        }
        path = tmp_path / "lowered.mlir"
        path.write_text(printed(lowered))
        assert run.main([str(path)]) == 0, capsys.readouterr().err
        assert f"{level} level, run by" in capsys.readouterr().out


def test_explicit_tiles_and_cores_are_forwarded() -> None:
    text = EXAMPLE_KERNELS[0].ir(37, 45)
    result = check_through_pipeline(
        text, "tiny", tile_sizes=(8, 32), max_cores=2, double_buffer=False
    )
    assert result.sim_report.block_dim == 2
    shapes = {
        str(op.results[0].type)
        for op in result.lowered.walk()
        if op.name == "ascend_hw.alloc"
    }
    assert "!ascend_hw.buf<8x32xf16, ub>" in shapes


# --------------------------------------------------------------------------------------
# pypto-lower is its member passes
# --------------------------------------------------------------------------------------


def printed(module: ModuleOp) -> str:
    from io import StringIO

    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


@pytest.mark.parametrize("target", TARGETS)
def test_pypto_lower_is_its_stages_run_one_by_one(target: str) -> None:
    text = EXAMPLE_KERNELS[4].ir(20, 40)  # gemm
    pipeline = LowerPipeline(target=target)
    whole = parse(text)
    with diagnostic_handler(lambda _: None):
        pipeline.apply(Context(), whole)
        by_hand = parse(text)
        for member in pipeline.member_passes():
            pass_by_name(member.name, **_options(member)).apply(
                default_context(), by_hand
            )
    assert printed(whole) == printed(by_hand)
    names = [m.name for m in pipeline.member_passes()]
    assert names[:6] == [
        "canonicalize",
        "pypto-set-target",
        "tv-expand-math",
        "tv-schedule",
        "tv-sparse-to-tile",
        "tv-to-tile",
    ]
    assert names.index("tile-peel-tails") < names.index("tile-to-hw")
    assert names[-1] == "hw-insert-sync"


def _options(member: ModulePass) -> dict[str, Any]:
    from dataclasses import fields

    return {f.name: getattr(member, f.name) for f in fields(member)}


def test_the_tile_prefix_stops_before_tile_to_hw() -> None:
    pipeline = LowerPipeline(target="tiny", tile_sizes=(8, 32))
    names = [m.name for m in pipeline.stages("tile")]
    assert "tv-to-tile" in names and "tile-to-hw" not in names
    assert [m.name for m in pipeline.stages("tv")] == [
        "canonicalize",
        "pypto-set-target",
        "tv-expand-math",
        "tv-schedule",
        "tv-sparse-to-tile",
    ]
    with pytest.raises(ValueError, match="unknown level 'hw'"):
        pipeline.stages("hw")
    module = parse(EXAMPLE_KERNELS[0].ir(9, 50))
    name, inputs = inputs_for(module, 1)
    with diagnostic_handler(lambda _: None):
        result = check_lowering(module, name, inputs, "tile", pipeline)
    assert result.ok and result.sim_report is None
    dialects = {op.name.split(".")[0] for op in result.lowered.walk()}
    assert "tile" in dialects and "ascend_hw" not in dialects and "tv" not in dialects
    assert result.comparisons[0].ulps == LEVEL_ULPS["tile"]


def test_refusals_are_diagnostics_at_the_op() -> None:
    module = parse(EXAMPLE_KERNELS[0].ir(20, 300))
    with pytest.raises(DiagnosticError) as caught:
        lower(module, "ascend_hw", LowerPipeline(target="tiny", tile_sizes=(64, 1024)))
    diagnostic = caught.value.diagnostic
    assert diagnostic.message.startswith("tile-sizes 64,1024: the tiles live at once")
    assert diagnostic.message.endswith("but ub of target 'tiny' holds 4096 bytes")
    assert diagnostic.location is not None  # the tv.mul the swish nest ends with
    assert (diagnostic.location.file, diagnostic.location.line) == ("k.mlir", 4)
    with pytest.raises(DiagnosticError, match="cannot load the target: nope"):
        lower(module, "ascend_hw", LowerPipeline(target="nope"))


# --------------------------------------------------------------------------------------
# --check catches wrong lowerings
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SwapAddForSub(ModulePass):
    """A deliberately wrong 'optimisation': every tv.add becomes tv.sub."""

    name = "test-swap-add-for-sub"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for add in [o for o in op.walk() if isinstance(o, tv.AddOp)]:
            sub = tv.SubOp(add.lhs, add.rhs, add.results[0].type)
            Rewriter.replace_op(add, sub)


@dataclass(frozen=True)
class DropStores(ModulePass):
    """A lowering bug: no tile is ever stored, the outputs keep their poison."""

    name = "test-drop-stores"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for store in [o for o in op.walk() if isinstance(o, tile.StoreOp)]:
            Rewriter.erase_op(store)


def wrong_pipeline(
    monkeypatch: pytest.MonkeyPatch, bug: ModulePass, after: str
) -> None:
    """Make every LowerPipeline run `bug` after its member `after`."""
    stages = LowerPipeline.stages

    def with_bug(self: LowerPipeline, level: str = "ascend_hw") -> tuple[Any, ...]:
        members: list[Any] = []
        for member in stages(self, level):
            members.append(member)
            if member.name == after:
                members.append(bug)
        return tuple(members)

    monkeypatch.setattr(LowerPipeline, "stages", with_bug)


ADD = """
func.func @f(%x: !tv.tensor<37x45xf32>, %y: !tv.tensor<37x45xf32>) -> !tv.tensor<37x45xf32> {
  %z = tv.add %x, %y : !tv.tensor<37x45xf32>
  func.return %z : !tv.tensor<37x45xf32>
}
"""


@pytest.mark.parametrize(
    ("bug", "after", "level"),
    [
        (SwapAddForSub(), "canonicalize", "ascend_hw"),
        (SwapAddForSub(), "canonicalize", "tile"),
        (DropStores(), "tv-to-tile", "ascend_hw"),
    ],
)
def test_check_rejects_a_wrong_lowering(
    bug: ModulePass,
    after: str,
    level: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    wrong_pipeline(monkeypatch, bug, after)
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    status = run.main([str(path), f"--check={level}"])
    captured = capsys.readouterr()
    assert status == 1
    assert (
        "MISMATCH" in captured.out and "check: FAILED (0 of 1 outputs" in captured.out
    )
    assert (
        f"add.mlir:2:1: error: --check: result0 (f32[37x45]) of the {level} level "
        "differs from the tv reference: " in captured.err
    )
    module = parse(ADD)
    name, inputs = inputs_for(module, 0)
    result = check_lowering(module, name, inputs, level)
    assert not result.ok and result.comparisons[0].mismatches > 0


def test_check_passes_the_right_lowering(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "swish.mlir"
    assert run.main([str(path), "--check", "--target", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "check: ok (1 of 1 outputs within tolerance of the tv reference)" in out
    assert "cycles: " in out and "(target tiny)" in out


# --------------------------------------------------------------------------------------
# Tolerances
# --------------------------------------------------------------------------------------


def test_tolerances_per_dtype_and_level() -> None:
    assert tolerance(f16, LEVEL_ULPS["ascend_hw"]) == 8 * 2.0**-10
    assert tolerance(f32, LEVEL_ULPS["tile"]) == 4 * 2.0**-23
    expected = np.array([1.0, -2.0, 0.5], np.float16)
    ok = compare_arrays(0, expected, expected + np.float16(2.0**-8), f16, 8)
    assert ok.ok and "allowed 8 ulps" in ok.error_text()
    bad = compare_arrays(0, expected, expected + np.float16(2.0**-5), f16, 8)
    assert not bad.ok and bad.mismatches == 3
    integers = np.array([1, 2, 3], np.int32)
    assert not compare_arrays(0, integers, integers + [0, 0, 1], i32).ok
    poisoned = compare_arrays(0, expected, np.full(3, np.nan, np.float16), f16)
    assert not poisoned.ok


# --------------------------------------------------------------------------------------
# The frontend runs kernels on the simulator by default
# --------------------------------------------------------------------------------------

R = pto.sym("R")


@pto.kernel
def scaled_swish(x: pto.Tensor[(R, 48), pto.f16], w: pto.Tensor[(48,), pto.f16]):
    return x * pto.sigmoid(x) * w


def test_kernels_run_on_the_simulator_by_default() -> None:
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 2, (21, 48)).astype(np.float16)
    w = rng.uniform(-1, 1, 48).astype(np.float16)
    result = scaled_swish.run(x, w)
    report = result.report
    assert report.backend == "sim" and report.level == "ascend_hw"
    assert report.target == "ascend910b" and report.cycles and report.cycles > 0
    assert report.microseconds == pytest.approx(report.cycles / 1850, rel=1e-6)
    text = report.to_text()
    assert (
        f"cycles:  {report.cycles} (" in text and "us at 1.85 GHz on ascend910b" in text
    )
    reference = scaled_swish.run(x, w, backend="reference")
    assert reference.report.backend == "reference" and reference.report.cycles is None
    comparison = compare_arrays(
        0, reference.value, result.value, f16, LEVEL_ULPS["ascend_hw"]
    )
    assert comparison.ok, comparison.describe()


@pto.kernel
def bf16_scale(x: pto.Tensor[(R, 48), pto.bf16]) -> pto.Tensor[(R, 48), pto.f32]:
    return x.astype(pto.f32) * 2.0


@pytest.mark.parametrize("backend", ["sim", "reference"])
def test_a_call_leaves_its_arguments_unchanged(backend: str) -> None:
    """The simulator rounds a bf16 argument to bf16 in its GM (a float32 array):
    in a copy, not in the caller's array."""
    x = np.full((5, 48), 1.0 + 2.0**-12, np.float32)
    before = x.copy()
    y = bf16_scale(x, backend=backend)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(y, np.full((5, 48), 2.0, np.float32))


def test_another_target_is_another_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    tiny = backends.SimBackend("tiny", name="sim-tiny", priority=1)
    monkeypatch.setitem(backends._BACKENDS, "sim-tiny", tiny)  # pyright: ignore[reportPrivateUsage]
    x = np.ones((3, 48), np.float16)
    report = scaled_swish.run(x, np.ones(48, np.float16), backend="sim-tiny").report
    assert report.target == "tiny" and "simulated tiny" in report.pipeline
    assert backends.SimBackend("nope").unavailable_reason() is not None


@dataclass(frozen=True)
class RefuseCasts(ModulePass):
    """A lowering stage that refuses every tv.cast, at the op."""

    name = "test-refuse-casts"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for cast in [o for o in op.walk() if isinstance(o, tv.CastOp)]:
            raise op_error(cast, "test-refuse-casts: no casts")


def test_a_kernel_the_lowering_refuses_names_the_kernel_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wrong_pipeline(monkeypatch, RefuseCasts(), "canonicalize")

    @pto.kernel
    def narrow(n: pto.Tensor[(3, 16), pto.i16]):
        return n.astype(pto.i8)

    with pytest.raises(pto.KernelError) as caught:
        narrow(np.ones((3, 16), np.int16))
    error = caught.value
    assert "cannot lower kernel 'narrow' for ascend910b" in error.message
    assert "test-refuse-casts: no casts" in error.message
    assert "backend='reference'" in error.message
    assert error.location is not None and error.location.file.endswith(
        "test_pipeline.py"
    )
    assert narrow(np.ones((3, 16), np.int16), backend="reference").dtype == np.int8
