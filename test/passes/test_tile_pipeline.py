"""tile-pipeline end to end: tv -> pypto-lower with and without double buffering
-> simulator, on `ascend910b` and `tiny`.

The outputs must match the tv reference (`check_lowering`; a race or deadlock
would raise from the simulator), the pipelined kernel must use more buffers
than the single-buffered one when its loop runs more than once, and it must
not be slower.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.parser import Parser

from pypto_mlir.check import LoweringCheck, check_lowering, lower
from pypto_mlir.cli.source import default_context
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.pipelines import LowerPipeline

TARGETS = ("ascend910b", "tiny")
TILE_SIZES = {"ascend910b": (16, 64), "tiny": ()}
"""Small tiles on ascend910b so that the small shapes here take several trips
(its automatic tiles would cover them in one); tiny's own tiles are small."""

SWISH = """
func.func @k(%x: !tv.tensor<{r}x{c}x{t}>) -> !tv.tensor<{r}x{c}x{t}> {{
  %s = tv.sigmoid %x : !tv.tensor<{r}x{c}x{t}>
  %y = tv.mul %x, %s : !tv.tensor<{r}x{c}x{t}>
  func.return %y : !tv.tensor<{r}x{c}x{t}>
}}
"""

ADD_EXP = """
func.func @k(%x: !tv.tensor<{r}x{c}x{t}>, %y: !tv.tensor<{r}x{c}x{t}>) -> !tv.tensor<{r}x{c}x{t}> {{
  %a = tv.add %x, %y : !tv.tensor<{r}x{c}x{t}>
  %e = tv.exp %a : !tv.tensor<{r}x{c}x{t}>
  func.return %e : !tv.tensor<{r}x{c}x{t}>
}}
"""


def parse(text: str) -> ModuleOp:
    return Parser(default_context(), text).parse_module()


def inputs(count: int, rows: int, cols: int, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(rows * 1000 + cols)
    numpy_type = {"f16": np.float16, "f32": np.float32}[dtype]
    return [
        (rng.standard_normal((rows, cols)) * 2).astype(numpy_type) for _ in range(count)
    ]


def run(
    template: str, rows: int, cols: int, dtype: str, target: str, double: bool
) -> LoweringCheck:
    module = parse(template.format(r=rows, c=cols, t=dtype))
    count = 2 if template is ADD_EXP else 1
    pipeline = LowerPipeline(
        target=target,
        double_buffer=double,
        max_cores=1,
        tile_sizes=TILE_SIZES[target],
    )
    check = check_lowering(
        module, "k", inputs(count, rows, cols, dtype), pipeline=pipeline
    )
    for comparison in check.comparisons:
        assert comparison.ok, comparison
    return check


def allocs(module: ModuleOp, space: str) -> int:
    return sum(
        1
        for op in module.walk()
        if isinstance(op, hw.AllocOp) and str(op.result.type.memory_space) == space
    )


# With the 1295-cycle GM read latency and the L2 (a re-read line costs 50), the
# double-buffered swish of 37 x 96 on ascend910b is 3% slower than single: its
# peeled row-tail tile's load waits for the store of the buffer it reuses
# (mte3 -> mte2) where the single-buffered program loads it as soon as V is
# done. A scheduling defect of tile-pipeline's peeled tail, left for the
# scheduler issue; strict, so the fix shows here.
_TAIL_WAITS_FOR_STORE = pytest.mark.xfail(
    strict=True, reason="the peeled tail's load waits for the reused buffer's store"
)
PIPELINE_CASES = [
    pytest.param(
        *case, target, marks=marks, id=f"{case[3]}-{case[1]}x{case[2]}-{target}"
    )
    for case, target, marks in [
        ((SWISH, 64, 128, "f16"), t, ())
        for t in TARGETS  # several full trips
    ]
    + [
        # a peeled row tail and a column tail
        ((SWISH, 37, 96, "f32"), t, _TAIL_WAITS_FOR_STORE if t == "ascend910b" else ())
        for t in TARGETS
    ]
    + [((ADD_EXP, 48, 64, "f32"), t, ()) for t in TARGETS]  # two loads per trip
]


@pytest.mark.parametrize(
    ("template", "rows", "cols", "dtype", "target"), PIPELINE_CASES
)
def test_numerics_buffers_and_cycles(
    template: str, rows: int, cols: int, dtype: str, target: str
) -> None:
    single = run(template, rows, cols, dtype, target, double=False)
    double = run(template, rows, cols, dtype, target, double=True)
    assert single.sim_report is not None and double.sim_report is not None
    assert double.sim_report.cycles <= single.sim_report.cycles
    assert allocs(double.lowered, "ub") > allocs(single.lowered, "ub")


@pytest.mark.parametrize("target", TARGETS)
def test_one_trip_is_unchanged(target: str) -> None:
    """A kernel of one tile: nothing to overlap, the same program."""
    module = parse(SWISH.format(r=8, c=16, t="f16"))
    texts = [
        str(lower(module, "tile", LowerPipeline(target=target, double_buffer=d)))
        for d in (False, True)
    ]
    assert texts[0] == texts[1]
    run(SWISH, 8, 16, "f16", target, double=True)


@settings(max_examples=6, deadline=None)
@given(
    rows=st.integers(1, 80),
    cols=st.sampled_from([16, 40, 64, 200]),
    target=st.sampled_from(TARGETS),
)
def test_random_shapes(rows: int, cols: int, target: str) -> None:
    run(SWISH, rows, cols, "f32", target, double=True)


def _phases(loop: scf.ForOp, load: type, store: type, dialect: str) -> list[int]:
    return [
        0 if isinstance(op, load) else 2 if isinstance(op, store) else 1
        for op in loop.body.block.ops
        if op.dialect_name() == dialect and not isinstance(op, hw.SubviewOp | hw.FlagOp)
    ]


def test_tile_loops_unrolled_in_phases() -> None:
    """At the tile level every pipelined loop body loads before it computes and
    computes before it stores."""
    module = parse(SWISH.format(r=256, c=64, t="f16"))
    lowered = lower(module, "tile", LowerPipeline(target="tiny", max_cores=1))
    loops = [op for op in lowered.walk() if isinstance(op, scf.ForOp)]
    assert loops
    for loop in loops:
        kinds = _phases(loop, tile.LoadOp, tile.StoreOp, "tile")
        assert kinds == sorted(kinds)
        assert kinds.count(0) >= 2


def test_split_loops_unrolled_per_core() -> None:
    """A loop tile-to-hw splits over the cores is unrolled after the split: each
    core's chunk of single trips runs its odd trip first (a loop of at most one
    trip), then pairs in phases; the split's units stay single trips."""
    module = parse(SWISH.format(r=16 * 37, c=64, t="f16"))
    pipeline = LowerPipeline(target="ascend910b", tile_sizes=(16, 64))
    tiled = lower(module, "tile", pipeline)
    top = [op for op in tiled.walk() if isinstance(op, scf.ForOp)]
    assert len(top) == 1 and "pypto.pipeline_stages" in top[0].attributes
    check = check_lowering(
        module, "k", inputs(1, 16 * 37, 64, "f16"), pipeline=pipeline
    )
    assert check.ok
    loops = [op for op in check.lowered.walk() if isinstance(op, scf.ForOp)]
    assert len(loops) == 2
    rest, pairs = loops
    assert _phases(rest, hw.DmaLoadOp, hw.DmaStoreOp, "ascend_hw").count(0) == 1
    kinds = _phases(pairs, hw.DmaLoadOp, hw.DmaStoreOp, "ascend_hw")
    assert kinds.count(0) == 2 and kinds[:2] == [0, 0] and kinds[-2:] == [2, 2]
    # 37 units of one trip: at most 2 per core, on the fewest cores that do it.
    assert block_dim(check.lowered) == 19


def block_dim(module: ModuleOp) -> int:
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    attr = function.attributes["ascend_hw.block_dim"]
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def test_multicore_with_an_unrolled_remainder() -> None:
    """97 trips on 24 cores: 48 units of two trips and the last trip after the
    loop, on the last core; tile-to-hw still splits the loop over the cores."""
    rows = 16 * 97
    module = parse(SWISH.format(r=rows, c=64, t="f16"))
    results = {}
    for double in (False, True):
        pipeline = LowerPipeline(
            target="ascend910b", double_buffer=double, tile_sizes=(16, 64)
        )
        check = check_lowering(
            module, "k", inputs(1, rows, 64, "f16"), pipeline=pipeline
        )
        assert check.ok
        assert check.sim_report is not None
        results[double] = (block_dim(check.lowered), check.sim_report.cycles)
    assert results[True][0] > 1
    assert results[True][1] < results[False][1]


def test_few_trips_per_core_are_not_unrolled() -> None:
    """24 trips on 24 cores: one per core, nothing to overlap; the loop stays
    as it is."""
    module = parse(SWISH.format(r=16 * 24, c=64, t="f16"))
    texts = [
        str(
            lower(
                module,
                "tile",
                LowerPipeline(
                    target="ascend910b", double_buffer=d, tile_sizes=(16, 64)
                ),
            )
        )
        for d in (False, True)
    ]
    assert texts[0] == texts[1]


@settings(max_examples=6, deadline=None)
@given(rows=st.integers(1, 1600), cols=st.sampled_from([64, 200]))
def test_random_shapes_on_all_cores(rows: int, cols: int) -> None:
    """Any trip count (a remainder after the unrolled loop, a peeled row tail)
    split over the 24 cores of ascend910b: the tv reference's results, no race."""
    module = parse(SWISH.format(r=rows, c=cols, t="f32"))
    pipeline = LowerPipeline(target="ascend910b", tile_sizes=(16, 64))
    check = check_lowering(module, "k", inputs(1, rows, cols, "f32"), pipeline=pipeline)
    assert check.ok


GEMM = """
func.func @k(%a: !tv.tensor<{m}x{k}x{t}>, %b: !tv.tensor<{k}x{n}x{t}>) -> !tv.tensor<{m}x{n}x{t}> {{
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<{m}x{k}x{t}>, !tv.tensor<{k}x{n}x{t}> -> !tv.tensor<{m}x{n}x{t}>
  func.return %c : !tv.tensor<{m}x{n}x{t}>
}}
"""


@pytest.mark.parametrize(
    ("target", "m", "n", "k", "sizes"),
    [
        ("ascend910b", 128, 256, 1024, (128, 256, 256, 128, 256, 64)),
        ("ascend910b", 40, 70, 300, (48, 80, 64, 48, 80, 32)),
        ("tiny", 20, 30, 200, (16, 32, 48, 16, 32, 16)),
    ],
)
def test_matmul_k_loop_is_pipelined(
    target: str, m: int, n: int, k: int, sizes: tuple[int, ...]
) -> None:
    """The K loop carries its accumulators: pipelined, its loads run ahead of the
    cube in buffers of their own, with the same results and no more cycles."""
    module = parse(GEMM.format(m=m, n=n, k=k, t="f16"))
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float16)
    checks = []
    for double in (False, True):
        pipeline = LowerPipeline(
            target=target, double_buffer=double, max_cores=1, matmul_tile_sizes=sizes
        )
        check = check_lowering(module, "k", [a, b], pipeline=pipeline)
        assert all(c.ok for c in check.comparisons), check.comparisons
        checks.append(check)
    single, double = checks
    assert single.sim_report is not None and double.sim_report is not None
    assert double.sim_report.cycles < single.sim_report.cycles
    assert allocs(double.lowered, "l1") > allocs(single.lowered, "l1")
