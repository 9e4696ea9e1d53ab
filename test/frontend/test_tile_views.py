"""The tile level of the frontend: `@pto.tile_kernel`, tile views, `pto.tiles`.

The examples (examples/tile_*.py) against numpy on both targets with odd shapes
(primes, 1, below one tile), on the simulator and on the tile interpreter; the
traced Swish against tv-to-tile's tiling of the tensor-level one; every
mistake's located error; reports, profiles and the pipeline's tile entry.
"""

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func

import pypto_mlir as pto
from pypto_mlir.frontend.testing import check_run, compare
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.universe import default_context

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
THIS_FILE = Path(__file__).name


def load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_example(name: str) -> ModuleType:
    return load_module(f"example_{name}", EXAMPLES / f"{name}.py")


SWISH = load_example("tile_swish")
GEMM = load_example("tile_gemm")
SOFTMAX = load_example("tile_softmax")

# (example, kernel, shapes on the simulator per target, shapes on the interpreter)
CASES: list[tuple[ModuleType, str, dict[str, list[Any]], list[Any]]] = [
    (
        SWISH,
        "swish",
        {
            "ascend910b": [(1, 1), (7, 13), (97, 1031)],
            "tiny": [(1, 1), (7, 13), (97, 1031)],
        },
        [(1, 1), (7, 13), (97, 1031)],
    ),
    (
        GEMM,
        "gemm",
        {
            "ascend910b": [(1, 1, 1), (17, 19, 23), (131, 67, 97)],
            "tiny": [(1, 1, 1), (17, 19, 23), (41, 37, 29)],
        },
        [(1, 1, 1), (17, 19, 23), (131, 67, 97)],
    ),
    (
        SOFTMAX,
        "softmax",
        {"ascend910b": [(1, 1), (5, 7), (67, 53)], "tiny": [(1, 1), (5, 7), (41, 31)]},
        [(1, 1), (5, 7), (67, 131)],
    ),
]


def _check(example: ModuleType, kernel: Any, shape: Any, backend: str) -> Any:
    inputs = example.make_inputs(np.random.default_rng(sum(shape)), shape)
    result, comparison = check_run(
        kernel, inputs, example.reference, example.tolerance, backend
    )
    assert comparison.ok, f"{kernel.name} {shape} on {backend}: {comparison}"
    return result


@pytest.mark.parametrize(
    ("example", "name", "target", "shape"),
    [
        (example, name, target, shape)
        for example, name, sims, _ in CASES
        for target, shapes in sims.items()
        for shape in shapes
    ],
    ids=lambda value: str(value) if not isinstance(value, ModuleType) else "",
)
def test_examples_on_the_simulator(
    example: ModuleType, name: str, target: str, shape: Any
) -> None:
    result = _check(example, getattr(example, name), shape, pto.sim_backend(target))
    report = result.report
    assert report.target == target and report.cycles > 0
    assert report.pipeline.startswith(
        f"pypto-lower{{target={target} start-level=tile}}"
    )


@pytest.mark.parametrize(
    ("example", "name", "shape"),
    [(example, name, shape) for example, name, _, shapes in CASES for shape in shapes],
    ids=lambda value: str(value) if not isinstance(value, ModuleType) else "",
)
def test_examples_on_the_tile_interpreter(
    example: ModuleType, name: str, shape: Any
) -> None:
    result = _check(example, getattr(example, name), shape, "reference")
    assert result.report.level == "tile" and result.report.cycles is None


def test_swish_for_each_traces_as_the_for_loop() -> None:
    loop = SWISH.swish.mlir(M=300, N=1000)
    callback = SWISH.swish_for_each.mlir(M=300, N=1000)
    assert loop.replace("@swish(", "@swish_for_each(") == callback


def _body(text: str) -> list[str]:
    """The ops of a printed function, without its attributes and SSA names."""
    lines = [
        line.strip() for line in text.splitlines() if "tile." in line or "scf." in line
    ]
    return [re.sub(r"%\w+", "%", line) for line in lines]


BENCH = load_module(
    "bench_tile_views", EXAMPLES.parent / "bench" / "bench_tile_views.py"
)
SWISH_SHAPES = [*BENCH.SWISH_SHAPES, (37, 45), (13, 17), (7, 4096), (1, 1)]
"""The bench's Swish shapes (bench/bench_tile_views.py) and odd ones: shapes
where tv-to-tile shortens the largest tiles so that more cores share them
(512x512, 77x133, 1x4096 on ascend910b) and shapes where it does not."""


def _tensor_swish(rows: int, cols: int) -> Any:
    @pto.kernel
    def swish(
        x: pto.Tensor[(rows, cols), pto.f16],
    ) -> pto.Tensor[(rows, cols), pto.f16]:
        return x * pto.sigmoid(x)

    return swish


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize("shape", SWISH_SHAPES)
def test_swish_traces_as_tv_to_tile_tiles_the_tensor_level_swish(
    target: str, shape: tuple[int, int]
) -> None:
    """pto.auto sizes the tile with tv-to-tile's tiling model and its core
    balance (`tiling_model.balanced_tiling`), so the Swish of tile views is the
    tile IR of the tensor-level Swish: the same tile steps, the same cycles."""
    rows, cols = shape
    tiled = _tensor_swish(rows, cols).module()
    ctx = default_context()
    for stage in LowerPipeline(target=target).stages("tile"):
        stage.apply(ctx, tiled)
        if stage.name == "tv-to-tile":
            break
    traced = SWISH.swish.mlir(M=rows, N=cols, target=target)
    assert _body(str(tiled)) == _body(traced)


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize("shape", [(1000, 333), (512, 512), (77, 133), (1, 4096)])
def test_auto_swish_reaches_the_tensor_level_cycles(
    target: str, shape: tuple[int, int]
) -> None:
    """Issue 17 on the simulator: the same cycles as the tensor-level Swish,
    also where the largest tiles would leave cores idle (ascend910b: 512x512
    took 1.14x, 1x4096 1.37x before pto.auto balanced the cores)."""
    backend = pto.sim_backend(target)
    tensor = _check(SWISH, _tensor_swish(*shape), shape, backend)
    tiles = _check(SWISH, SWISH.swish, shape, backend)
    assert tiles.report.cycles == tensor.report.cycles


def _swish_of(view: pto.TileView) -> Any:
    rows, cols = pto.sym("M"), pto.sym("N")

    @pto.tile_kernel
    def swish(
        x: pto.Tensor[(rows, cols), pto.f16], out: pto.Out[(rows, cols), pto.f16]
    ) -> None:
        for i, j in pto.tiles((x, out), view):
            pto.store(out[i, j], pto.silu(view.load(x[i, j])))

    return swish


def _ub_tiles(text: str) -> set[tuple[str, str]]:
    return set(re.findall(r"!tile\.tile<(\d+)x(\d+)xf16, ub", text))


def test_auto_balances_only_the_dims_left_auto() -> None:
    """A size the author gives stays; the auto dim beside it is sized for the
    cores with the author's tiles counted as parallel units (512x512 on
    ascend910b: 86 rows beside 128 columns, 6x4 tiles for 24 cores, where the
    largest tile, 128 rows, gives 4x4), which is faster than the largest."""
    auto_rows = _swish_of(pto.TileView((pto.auto, 128), pto.f16, pto.UB))
    largest = _swish_of(pto.TileView((128, 128), pto.f16, pto.UB))
    assert _ub_tiles(auto_rows.mlir(M=4096, N=512, target="ascend910b")) == {
        ("128", "128")
    }
    assert _ub_tiles(auto_rows.mlir(M=512, N=512, target="ascend910b")) == {
        ("86", "128")
    }
    backend = pto.sim_backend("ascend910b")
    balanced = _check(SWISH, auto_rows, (512, 512), backend).report.cycles
    assert balanced < _check(SWISH, largest, (512, 512), backend).report.cycles


def test_auto_leaves_a_loop_carrying_values_unbalanced() -> None:
    """The iterations of a `fold` run one after the other on a core: its auto
    tile is the largest that fits (8x2048 of 8x4096 f32 on ascend910b), as for
    a reduced dim of tv-to-tile; the same grid without carried values is split
    over the cores, so it gets shorter tiles."""
    grid = (None, pto.auto)

    @pto.tile_kernel
    def row_sums(x: pto.Tensor[(8, 4096), pto.f32], out: pto.Out[(8, 1), pto.f32]):
        def add(j: Any, acc: Any) -> Any:
            part = pto.load(x[:, j]).sum(axis=1)
            return part if acc is None else acc + part

        pto.store(out[:, :], pto.tiles(x, grid).fold(add, init=None))

    @pto.tile_kernel
    def exp(x: pto.Tensor[(8, 4096), pto.f32], out: pto.Out[(8, 4096), pto.f32]):
        for j in pto.tiles((x, out), grid):
            pto.store(out[:, j], pto.exp(pto.load(x[:, j])))

    def steps(text: str) -> set[str]:
        return set(re.findall(r"!tile\.tile<8x(\d+)xf32, ub>", text)) - {"1"}

    assert steps(row_sums.mlir(target="ascend910b")) == {"2048"}
    parallel = steps(exp.mlir(target="ascend910b"))
    assert len(parallel) == 1 and int(parallel.pop()) < 2048


def test_auto_sizes_per_target_and_caches_per_target() -> None:
    kernel = SWISH.swish
    big = kernel.specialize(M=4096, N=1024, target="ascend910b")
    small = kernel.specialize(M=4096, N=1024, target="tiny")
    assert "!tile.tile<16x1024xf16, ub>" in str(big.module)
    assert "!tile.tile<16x1024xf16, ub>" not in str(small.module)
    assert kernel.specialize(M=4096, N=1024, target="tiny") is small


def test_profile_and_report_name_the_kernel_lines() -> None:
    x = np.ones((40, 70), np.float16)
    profile = SWISH.swish.profile(x)
    lines = {str(stats.line) for stats in profile.lines}
    source = (EXAMPLES / "tile_swish.py").read_text().splitlines()
    load_line = next(i for i, t in enumerate(source, 1) if "VIEW.load(x[i, j])" in t)
    assert any(line.endswith(f"tile_swish.py:{load_line}") for line in lines)
    text = SWISH.swish.run(x, backend="reference").report.to_text()
    assert "tile reference interpreter" in text and "outputs: f16[40x70]" in text


def test_pipeline_entry_at_the_tile_level() -> None:
    names = [p.name for p in LowerPipeline(start_level="tile").stages()]
    assert names[0] == "pypto-set-target" and "tv-to-tile" not in names
    full = [p.name for p in LowerPipeline().stages()]
    assert names[1:] == full[full.index("tv-to-tile") + 1 :]
    assert [p.name for p in LowerPipeline(start_level="tile").stages("tile")] == [
        "pypto-set-target",
        "tile-peel-tails",
        "tile-pipeline",
    ]
    with pytest.raises(ValueError, match="unknown level 'gm'"):
        LowerPipeline(start_level="gm").stages()


def test_tile_kernel_signature_is_the_lowered_convention() -> None:
    module = GEMM.gemm.module(M=17, K=19, N=23)
    function = module.ops.first
    assert isinstance(function, func.FuncOp)
    assert [str(t) for t in function.function_type.inputs.data] == [
        "memref<17x19xf16>",
        "memref<19x23xf16>",
        "memref<17x23xf16>",
    ]
    assert GEMM.gemm.symbols == ("M", "K", "N")
    assert repr(GEMM.gemm).startswith("<pto.tile_kernel gemm(a: pto.Tensor")


# --------------------------------------------------------------------------------------
# Mistakes: located errors at the author's line (the line marked `# error`)
# --------------------------------------------------------------------------------------

R, C = 64, 128
UB16 = pto.TileView((16, 32), pto.f16, pto.UB)


def _line_of(function: Any) -> int:
    """The line of `function`'s body marked with `# error`."""
    source, start = __import__("inspect").getsourcelines(function)
    marked = [
        n for n, text in enumerate(source, start) if text.rstrip().endswith("# error")
    ]
    assert len(marked) == 1
    return marked[0]


def _fails(body: Any, message: str, target: str | None = None, **kinds: Any) -> None:
    kernel = pto.tile_kernel(body)
    with pytest.raises(pto.KernelError) as raised:
        kernel.mlir(target=target)
    text = str(raised.value)
    assert re.match(rf"(.*/)?{THIS_FILE}:{_line_of(body)}: ", text), text
    assert re.search(message, text), text


def test_auto_tile_too_big_names_the_smallest_tile_tried() -> None:
    """Rows are not aligned: the smallest tile pto.auto tries is one row."""

    def k(x: pto.Tensor[(R, 4096), pto.f16], out: pto.Out[(R, 4096), pto.f16]):
        for i in pto.tiles((x, out), (pto.auto, None)):  # error
            pto.store(out[i, :], pto.exp(pto.load(x[i, :])))

    _fails(
        k,
        r"pto.auto: not even a \(1, 4096\) tile of this loop's body fits the "
        "memories of tiny",
        "tiny",
    )


def test_tile_too_big_for_its_memory() -> None:
    def k(x: pto.Tensor[(R, 4096), pto.f16], out: pto.Out[(R, 4096), pto.f16]):
        for i in pto.tiles(out, (64, None)):
            pto.store(out[i, :], pto.load(x[i, :]))  # error

    _fails(
        k, r"f16\[64x4096\] in ub needs 524288 bytes, but ub of ascend910b holds 196608"
    )
    _fails(k, r"needs 524288 bytes, but ub of tiny holds 4096 bytes", target="tiny")


def test_vector_op_on_l1() -> None:
    def k(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        for i, j in pto.tiles(out, (16, 32)):
            t = pto.load(x[i, j], pto.L1)
            pto.store(out[i, j], t + 1.0)  # error

    _fails(k, r"\+: the tile f16\[16x32\] in l1 is not in ub: the vector unit computes")


def test_comparison_of_tiles() -> None:
    def k(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        for i, j in pto.tiles(out, (16, 32)):
            t = pto.load(x[i, j])
            pto.store(out[i, j], pto.where(t > 0, t, t))  # error

    _fails(k, r"comparisons of tiles are not supported in a tile kernel")


def test_matmul_operands_outside_l0a_l0b() -> None:
    def k(
        a: pto.Tensor[(32, 32), pto.f16],
        b: pto.Tensor[(32, 32), pto.f16],
        c: pto.Out[(32, 32), pto.f16],
    ):
        a1 = pto.load(a[:, :], pto.L1)
        b0 = pto.move(pto.load(b[:, :], pto.L1), pto.L0B)
        pto.store(c[:, :], pto.matmul(a1, b0))  # error

    _fails(k, r"left operand.*is not in l0a: the cube reads its left operand from l0a")

    def k2(
        a: pto.Tensor[(32, 32), pto.f16],
        b: pto.Tensor[(32, 32), pto.f16],
        c: pto.Out[(32, 32), pto.f16],
    ):
        a0 = pto.move(pto.load(a[:, :], pto.L1), pto.L0A)
        pto.store(c[:, :], a0 @ pto.load(b[:, :]))  # error

    _fails(k2, r"right operand.*f16\[32x32\] in ub is not in l0b")


def test_load_into_l0a() -> None:
    def k(a: pto.Tensor[(32, 32), pto.f16], c: pto.Out[(32, 32), pto.f32]):
        pto.load(a[:, :], pto.L0A)  # error

    _fails(k, r"loads go from GM to ub or l1, not l0a")


def test_shapes_that_disagree() -> None:
    def k(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        for i in pto.tiles(out, (16, None)):
            t = pto.load(x[i, :])
            half = pto.load(x[i, 0:64])
            pto.store(out[i, :], t + half)  # error

    _fails(k, r"disagree in dim 1")

    def k2(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, 64), pto.f16]):
        for i, j in pto.tiles(out, (16, 32)):
            pto.store(out[i, j], pto.load(x[i, j]))  # error

    _fails(k2, r"steps over 64 elements, but x has 128 there")

    def k3(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, 64), pto.f16]):
        pto.tiles((x, out), (16, 32))  # error

    _fails(k3, r"iterated in step must have one shape")


def test_store_of_a_tile_in_the_wrong_memory() -> None:
    def k(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        for i, j in pto.tiles(out, (16, 32)):
            pto.store(out[i, j], pto.load(x[i, j], pto.L1))  # error

    _fails(k, r"not in ub or l0c: stores write GM from ub or l0c")

    def k2(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        for i, j in pto.tiles(out, (16, 32)):
            pto.store(x[i, j], pto.load(x[i, j]))  # error

    _fails(k2, r"x is an input")


def test_out_of_range_tile_index() -> None:
    def k(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        grid = pto.tiles(out, (16, None))
        i = grid[4]  # error
        pto.store(out[i, :], pto.load(x[i, :]))

    _fails(k, r"tile index 4 is out of range: the grid has 4 tiles along dim 0")

    def k2(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        pto.store(out[64, :], pto.load(x[0, :]))  # error

    _fails(k2, r"index 64 is out of range for dim 0 of size 64")


def test_a_value_outliving_its_loop() -> None:
    def k(x: pto.Tensor[(R, C), pto.f16], out: pto.Out[(R, C), pto.f16]):
        for i, j in pto.tiles(out, (16, 32)):
            t = pto.load(x[i, j])
            pto.store(out[i, j], t)
        pto.store(out[0:16, 0:32], pto.exp(t))  # error

    _fails(k, r"computed inside a tile loop that has ended.*fold")


def test_a_fold_whose_carried_tile_changes() -> None:
    def k(x: pto.Tensor[(R, C), pto.f32], out: pto.Out[(R, 1), pto.f32]):
        def rows(ctx: pto.TileContext) -> None:
            (i,) = ctx.index
            start = pto.TileView((16, 1), pto.f32).full(0.0)
            total = pto.tiles(x, (None, 32)).fold(  # error
                lambda j, acc: acc + pto.load(x[i, j]), start
            )
            ctx.store(total, out)

        pto.tiles(out, (16, None)).for_each(rows)

    _fails(k, r"fold: a carried tile changes from f32\[16x1\] in ub")


def test_kernel_shape_mistakes() -> None:
    with pytest.raises(pto.KernelError, match="has no output"):

        @pto.tile_kernel
        def no_output(x: pto.Tensor[(4, 8), pto.f16]):
            pass

    with pytest.raises(pto.KernelError, match="come after the inputs"):

        @pto.tile_kernel
        def output_first(y: pto.Out[(4, 8), pto.f16], x: pto.Tensor[(4, 8), pto.f16]):
            pass

    @pto.tile_kernel
    def never_stores(x: pto.Tensor[(4, 16), pto.f16], y: pto.Out[(4, 16), pto.f16]):
        pto.load(x[:, :])

    with pytest.raises(pto.KernelError, match="never stores to its output 'y'"):
        never_stores.mlir()
    with pytest.raises(
        pto.KernelError, match="cannot be used here|only be used inside"
    ):
        pto.load(None)


B3, R3, C3 = 3, 37, 45


@pto.tile_kernel
def centred_scaled(
    x: pto.Tensor[(B3, R3, C3), pto.f32],
    g: pto.Tensor[(1, C3), pto.f32],
    alpha: pto.f32,
    out: pto.Out[(B3, R3, C3), pto.f32],
):
    """A 3-D iteration space, a row statistic broadcast back (with a tail's
    valid extent), a [1, C] row broadcast by the ops, a scalar parameter."""
    for b, i in pto.tiles((x, out), (1, 8, None)):
        t = pto.load(x[b, i, :])
        mean = t.sum(axis=1) * (1.0 / C3)
        centred = t - mean.broadcast_to(t.shape, valid=(i, C3))
        pto.store(out[b, i, :], centred * pto.load(g[0, :]) * alpha)


@pytest.mark.parametrize("backend", ["reference", "sim-tiny"])
def test_three_dims_broadcasts_and_scalars(backend: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((B3, R3, C3)).astype(np.float32)
    g = rng.standard_normal((1, C3)).astype(np.float32)
    expected = (x - x.mean(axis=2, keepdims=True)) * g * 0.5
    if backend == "sim-tiny":
        backend = pto.sim_backend("tiny")
    result = centred_scaled(x, g, 0.5, backend=backend)
    assert compare(result, expected, rtol=2.0**-20, atol=2.0**-20).ok


MW, KW, NW = 64, 128, 48


@pto.tile_kernel
def gemm_windows(
    a: pto.Tensor[(MW, KW), pto.f16],
    b: pto.Tensor[(KW, NW), pto.f16],
    c: pto.Out[(MW, NW), pto.f16],
):
    """An L1 tile deeper than L0: four cube steps on K windows of it (a Python
    loop: straight-line code)."""
    a1 = pto.TileView((64, 128), pto.f16, pto.L1).load(a[:, :])
    b1 = pto.TileView((128, 48), pto.f16, pto.L1).load(b[:, :])
    a0_view = pto.TileView((64, 32), pto.f16, pto.L0A)
    b0_view = pto.TileView((32, 48), pto.f16, pto.L0B)
    acc = None
    for step in range(4):
        a0 = pto.move(a1, a0_view, window=(0, 32 * step))
        b0 = pto.move(b1, b0_view, window=(32 * step, 0))
        acc = pto.matmul(a0, b0, acc=acc)
    pto.store(c[:, :], acc)


@pto.tile_kernel
def gemm_transposed(
    at: pto.Tensor[(KW, MW), pto.f16],
    b: pto.Tensor[(KW, NW), pto.f16],
    c: pto.Out[(MW, NW), pto.f16],
):
    """A stored transposed: transposed on its way into L0A."""
    a0 = pto.move(pto.load(at[:, :], pto.L1), pto.L0A, transpose=True)
    b0 = pto.move(pto.load(b[:, :], pto.L1), pto.L0B)
    pto.store(c[:, :], a0 @ b0)


@pytest.mark.parametrize("backend", ["reference", "sim"])
def test_l1_windows_and_transposed_moves(backend: str) -> None:
    a, b = GEMM.make_inputs(np.random.default_rng(5), (MW, KW, NW))
    rtol, atol = GEMM.tolerance(a, b)
    expected = GEMM.reference(a, b)
    for result in (
        gemm_windows(a, b, backend=backend),
        gemm_transposed(np.ascontiguousarray(a.T), b, backend=backend),
    ):
        assert compare(result, expected, rtol=rtol, atol=atol).ok
    with pytest.raises(pto.KernelError, match="l0a of tiny holds 2048 bytes"):
        gemm_windows.mlir(target="tiny")


def test_a_view_with_a_valid_shape_for_the_tail() -> None:
    tail = pto.TileView((16, 48), pto.f16, pto.UB, valid=(16, 45))

    @pto.tile_kernel
    def copy(x: pto.Tensor[(32, 45), pto.f16], out: pto.Out[(32, 45), pto.f16]):
        for i in pto.tiles(out, (16, None)):
            pto.store(out[i, :], tail.load(x[i, :]))

    assert "!tile.tile<16x48xf16, ub, valid = [16, 45]>" in copy.mlir()
    x = np.arange(32 * 45, dtype=np.float16).reshape(32, 45)
    np.testing.assert_array_equal(copy(x, backend="reference"), x)

    def k(x: pto.Tensor[(32, 40), pto.f16], out: pto.Out[(32, 40), pto.f16]):
        for i in pto.tiles(out, (16, None)):
            pto.store(out[i, :], tail.load(x[i, :]))  # error

    _fails(k, r"the view's valid shape \(16, 45\) disagrees with the tile of x")
