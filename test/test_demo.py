"""`make demo` (pypto_mlir.demo) and the roofline it compares against.

The demo runs once, as `make demo` does, at the real sizes (on two kernels in
`make test`, on all in `make test-all`: `SLICE`); its table, files
and figures are checked: every kernel matches numpy, the simulated cycles are
never below the roofline (a lower bound), the timelines are written. The
roofline is checked against the formulas of docs/pipeline.md computed here from
the target's numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pypto_mlir.cli.source import SourceChunk, default_context, load_module, parse_chunk
from pypto_mlir.demo import KERNELS, DemoKernel, KernelResult, load_example, table
from pypto_mlir.roofline import roofline
from pypto_mlir.targets import TARGET_DIR, load_target

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


SLICE = ("layernorm", "sum_diff")
"""The kernels `make test` runs the demo on (real sizes, the smallest two;
layernorm is also the reference of the --target FILE test); the whole demo,
every kernel, is the slow case that `make test-all` runs."""


@pytest.fixture(
    scope="module",
    params=[SLICE, pytest.param(None, marks=pytest.mark.slow, id="all")],
    ids=lambda only: "+".join(only) if only else "all",
)
def demo_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, list[DemoKernel]]:
    """The demo's output, folder and kernels, on SLICE or on every kernel."""
    out = tmp_path_factory.mktemp("demo")
    only = ["--only", ",".join(request.param)] if request.param else []
    result = subprocess.run(
        [sys.executable, "-m", "pypto_mlir.demo", "--out", str(out), *only],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    kernels = [k for k in KERNELS if not request.param or k.kernel in request.param]
    return result.stdout, out, kernels


def test_demo_prints_a_row_per_kernel(demo_run: tuple[str, Path, list]) -> None:
    stdout, _, demos = demo_run
    assert "at their real sizes" in stdout
    lines = stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("kernel "))
    header, rows = lines[at], lines[at + 2 : at + 2 + len(demos)]
    for column in (
        "shape",
        "cycles",
        "us",
        "roofline us",
        "bound by",
        "of roofline",
        "busiest pipe",
        "GM BW",
        "vs numpy",
    ):
        assert column in header
    for demo in demos:
        row = next(r for r in rows if r.split()[0] == demo.kernel)
        assert demo.shape in row and "ok (" in row, row
        # Progress: one line per stage of every kernel (not a terminal here).
        for stage in ("trace", "lower", "simulate", "check", "timeline"):
            assert any(
                line.split()[:2] == [demo.kernel, stage] for line in lines[:at]
            ), (demo.kernel, stage)


def test_demo_figures_respect_the_roofline(demo_run: tuple[str, Path, list]) -> None:
    _, out, demos = demo_run
    summary = json.loads((out / "demo.json").read_text())
    assert summary["target"] == "ascend910b"
    kernels = {k["kernel"]: k for k in summary["kernels"]}
    assert set(kernels) == {k.kernel for k in demos}
    target = load_target("ascend910b")
    for name, figures in kernels.items():
        assert figures["ok"] and figures["error"] is None, name
        assert figures["cycles"] >= figures["roofline_cycles"] > 0, name
        assert 0 < figures["roofline_fraction"] <= 1
        assert figures["microseconds"] == pytest.approx(
            figures["cycles"] / (target.clock_ghz * 1e3), rel=1e-9
        )
        assert 1 <= figures["cores"] <= target.cores
        assert 0 < figures["busiest_pipe_utilization"] <= 1
        assert 0 <= figures["gm_bandwidth_utilization"] <= 1


def test_demo_writes_a_timeline_per_kernel(demo_run: tuple[str, Path, list]) -> None:
    _, out, demos = demo_run
    for demo in demos:
        trace = json.loads((out / f"{demo.kernel}.trace.json").read_text())
        slices = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
        assert slices and all(e["dur"] >= 0 for e in slices)
        assert (out / f"{demo.kernel}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_rejects_an_unknown_kernel() -> None:
    from pypto_mlir.demo import main

    assert main(["--only", "nope", "--no-timeline"]) == 2
    assert main(["--target", "nope", "--no-timeline"]) == 2


def test_table_shows_a_failed_kernel() -> None:
    ok = KernelResult(KERNELS[0], cycles=2000, roofline_cycles=1000, check="ok (x)")
    ok.busiest_pipe, ok.busiest_utilization, ok.ok = "V", 0.5, True
    broken = KernelResult(DemoKernel("gemm", "gemm", shape="8x8x8"), error="boom")
    text = table([ok, broken])
    lines = text.splitlines()
    assert lines[2].split()[0] == "swish" and "50%" in lines[2]
    assert lines[3].split()[0] == "gemm" and lines[3].endswith("ERROR")


# --------------------------------------------------------------------------------------
# The roofline, from the formulas of docs/pipeline.md
# --------------------------------------------------------------------------------------


def test_roofline_of_gemm_is_the_cube() -> None:
    target = load_target("ascend910b")
    module = load_module(str(EXAMPLES / "gemm.mlir"))
    bound = roofline(module, "gemm", target)
    m = n = k = 1024
    cube = m * n * k / (target.cube.macs_per_cycle["f16"] * target.cores)
    assert bound.limit.resource == "cube"
    assert bound.cycles == pytest.approx(cube)
    paths = {b.resource: b for b in bound.bounds}
    assert paths["gm->l1"].work == 2 * (m * k + k * n)
    assert paths["l0c->gm"].work == 2 * m * n
    assert paths["gm"].cycles == pytest.approx(
        2 * (m * k + k * n + m * n) / target.gm_bytes_per_cycle
    )
    assert bound.flops == 2 * m * n * k


def test_roofline_of_swish_is_gm_bandwidth() -> None:
    target = load_target("ascend910b")
    module = load_module(str(EXAMPLES / "swish.mlir"))
    bound = roofline(module, "swish", target)
    size = 4096 * 1024 * 2
    b16 = target.vector.cycles_per_repeat[16]
    repeats = size / target.vector.repeat_bytes
    # x * sigmoid(x) is silu's four steps: x / (1 + exp(-x)).
    vector = repeats * sum(b16[step] for step in ("muls", "exp", "adds", "div"))
    paths = {b.resource: b for b in bound.bounds}
    assert paths["vector"].cycles == pytest.approx(vector / target.cores)
    assert paths["gm->ub"].cycles == pytest.approx(
        size / (target.dma["gm", "ub"].bytes_per_cycle * target.cores)
    )
    assert bound.limit.resource == "gm"
    assert bound.cycles == pytest.approx(2 * size / target.gm_bytes_per_cycle)


def test_roofline_counts_softmax_as_its_steps() -> None:
    """The op and the spelled-out form are the same problem: the same bound."""
    example = load_example("softmax")
    target = load_target("ascend910b")
    bounds = [
        roofline(kernel.module(), kernel.name, target)
        for kernel in (example.softmax, example.softmax_by_hand)
    ]
    assert bounds[0].limit.resource == bounds[1].limit.resource == "vector"
    assert bounds[0].cycles == pytest.approx(bounds[1].cycles)


def test_roofline_counts_composite_functions_as_their_steps() -> None:
    """sigmoid, tanh, gelu and silu need several vector instructions each (the
    sequences tile-to-hw emits); x * sigmoid(x) is silu."""
    target = load_target("ascend910b")
    b16 = target.vector.cycles_per_repeat[16]
    repeats = 64 * 128 * 2 / target.vector.repeat_bytes

    def vector(body: str) -> float:
        t = "!tv.tensor<64x128xf16>"
        text = f"func.func @k(%x: {t}) -> {t} {{\n{body}\n  func.return %y : {t}\n}}"
        module = parse_chunk(default_context(), SourceChunk(text, 1), "k.mlir")
        bounds = {b.resource: b for b in roofline(module, "k", target).bounds}
        return bounds["vector"].work

    steps = {
        "sigmoid": ("muls", "exp", "adds", "reciprocal"),
        "silu": ("muls", "exp", "adds", "div"),
        "tanh": ("muls", "exp", "adds", "reciprocal", "muls", "adds"),
        "gelu": ("mul", "mul", "muls", "add", "muls", "exp", "adds", "div"),
    }
    t = "!tv.tensor<64x128xf16>"
    for name, sequence in steps.items():
        expected = repeats * sum(b16[s] for s in sequence)
        assert vector(f"  %y = tv.{name} %x : {t}") == pytest.approx(expected), name
    product = f"  %s = tv.sigmoid %x : {t}\n  %y = tv.mul %x, %s : {t}"
    assert vector(product) == pytest.approx(vector(f"  %y = tv.silu %x : {t}"))
    # A sigmoid that something else reads too is computed on its own (its four
    # steps, then the mul and the add), not as silu's.
    shared = f"  %s = tv.sigmoid %x : {t}\n  %m = tv.mul %x, %s : {t}\n  %y = tv.add %m, %s : {t}"
    on_its_own = (*steps["sigmoid"], "mul", "add")
    assert vector(shared) == pytest.approx(repeats * sum(b16[s] for s in on_its_own))


def test_roofline_reads_what_the_views_cover() -> None:
    """A kernel reading a strided view of a big tensor reads the view, not the
    tensor (the GM bound would otherwise exceed what it needs)."""
    target = load_target("ascend910b")
    text = """
func.func @k(%x: !tv.tensor<4096x1024xf16>) -> !tv.tensor<4096x64xf16> {
  %v = tv.view %x[0, 0][4096, 64][1, 1] : !tv.tensor<4096x1024xf16> to !tv.tensor<4096x64xf16>
  %y = tv.neg %v : !tv.tensor<4096x64xf16>
  func.return %y : !tv.tensor<4096x64xf16>
}
"""
    module = parse_chunk(default_context(), SourceChunk(text, 1), "k.mlir")
    paths = {b.resource: b for b in roofline(module, "k", target).bounds}
    assert paths["gm->ub"].work == 4096 * 64 * 2
    assert paths["gm"].work == 2 * 4096 * 64 * 2


def test_roofline_of_ffn_keeps_the_hidden_tensor_on_chip() -> None:
    example = load_example("ffn")
    target = load_target("ascend910b")
    bound = roofline(example.ffn.module(), "ffn", target)
    paths = {b.resource: b.work for b in bound.bounds}
    tokens, hidden, inner = 128, 768, 3072
    assert paths["gm->l1"] == 2 * (tokens * hidden + 2 * hidden * inner)
    assert paths["l0c->ub"] == paths["ub->l1"] == 2 * tokens * inner
    assert paths["l0c->gm"] == 2 * tokens * hidden
    assert "gm->ub" not in paths


def _target_copy(folder: Path, name: str, cores: int | None = None) -> Path:
    """ascend910b.toml copied under another `name`, with `cores` if given."""
    lines = (TARGET_DIR / "ascend910b.toml").read_text().splitlines()
    edited = []
    for line in lines:
        if line.startswith("name = "):
            line = f'name = "{name}"'
        elif cores is not None and line.startswith("cores = "):
            line = f'cores = {{ value = {cores}, source = "assumed: a test copy" }}'
        edited.append(line)
    path = folder / f"{name}-copy.toml"
    path.write_text("\n".join(edited) + "\n")
    return path


def _layernorm_on(target: Path, out: Path) -> dict:
    """`python -m pypto_mlir.demo --target TARGET --only layernorm`'s figures
    (demo.json)."""
    from pypto_mlir.demo import main

    argv = ["--target", str(target), "--only", "layernorm", "--out", str(out)]
    assert main(argv) == 0
    summary = json.loads((out / "demo.json").read_text())
    (kernel,) = summary["kernels"]
    return kernel


def test_demo_runs_the_target_file_it_is_given(
    demo_run: tuple[str, Path, list], tmp_path: Path
) -> None:
    """`--target FILE` runs that file, not the builtin of the same name (a
    copy of ascend910b with 4 cores gives other figures) nor fails for want
    of a builtin of its name (a renamed copy gives ascend910b's figures)."""
    _, out, _ = demo_run
    builtin = next(
        k
        for k in json.loads((out / "demo.json").read_text())["kernels"]
        if k["kernel"] == "layernorm"
    )
    fewer_cores = _layernorm_on(_target_copy(tmp_path, "ascend910b", 4), tmp_path / "a")
    assert fewer_cores["ok"] and fewer_cores["cores"] <= 4 < builtin["cores"]
    assert fewer_cores["cycles"] > builtin["cycles"]
    assert fewer_cores["roofline_cycles"] > builtin["roofline_cycles"]
    renamed = _layernorm_on(_target_copy(tmp_path, "mychip"), tmp_path / "b")
    assert renamed["ok"] and renamed["error"] is None
    assert (renamed["cycles"], renamed["cores"]) == (
        builtin["cycles"],
        builtin["cores"],
    )


@pytest.mark.slow  # 1024x1024 CSR spmm at its real size: 105 s under load
def test_demo_runs_the_sparse_example() -> None:
    """The CSR example runs on the simulator, matches scipy, and is bounded by
    the sparse roofline of its pattern: the vector unit's f32 mul and add for
    each of its 10486 stored entries x 128 columns (4 B each, 256 B a repeat
    at 2.13 + 2.07 cycles, ascend910b.toml), over the 24 cores."""
    import io

    from pypto_mlir.demo import Progress, run_kernel

    (demo,) = (k for k in KERNELS if k.kernel == "spmm")
    target = load_target("ascend910b")
    result = run_kernel(demo, target, None, Progress(io.StringIO(), live=False))
    assert result.ok and result.error is None, result.check
    assert result.bound_by == "vector"
    assert result.roofline_cycles == pytest.approx(
        10486 * 128 * 4 / 256 * (2.13 + 2.07) / 24
    )
    assert 0 < result.fraction <= 1
