"""The dense fallback of top-k attention (passes/topk_dense.py,
docs/sparse.md, *Top-k attention*): an additive mask `ln(count)` built from
the indices, then `softmax(q @ k.T * s + mask) @ v` through the dense path,
against the tv reference (within its error bound, `pypto_mlir.check`) on
ascend910b (flash-fused) and tiny (no flash blocks fit: three nests), with
duplicate indices counted as `x[idx]` counts them, k = 1 and odd S; an index
outside the keys is the simulator's located error."""

from typing import Any

import numpy as np
import pytest
from test_topk_attention import SCALE, D, N
from test_topk_attention import _kernel as topk_kernel
from xdsl.dialects import func

import pypto_mlir as pto
from pypto_mlir.check import check_lowering, lower, lowered_arguments, result_buffers
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.numerics import round_to_bf16
from pypto_mlir.passes.tv_sparse_to_tile import TvSparseToTilePass
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sim import SimError
from pypto_mlir.targets import load_target
from pypto_mlir.universe import default_context

TARGETS = ("ascend910b", "tiny")


def _kernel(s: int, top: int) -> Any:
    return topk_kernel("reference", s, top)


def _inputs(s: int, top: int, repeats: bool, seed: int = 0) -> list[np.ndarray]:
    """Each query's `top` keys, drawn with or without repeats (a key named
    twice or more in a row), unsorted."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, D)).astype(np.float16) for n in (s, N, N))
    idx = np.stack([rng.choice(N, top, replace=repeats) for _ in range(s)])
    if repeats:
        idx[:, -1] = idx[:, 0]  # at least one key twice in every row
    return [q, k, v, idx.astype(np.int32)]


def _check(s: int, top: int, repeats: bool, target: str, mode: str) -> Any:
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        checked = check_lowering(
            _kernel(s, top).module(),
            "topk_attention",
            _inputs(s, top, repeats),
            pipeline=LowerPipeline(target=target, sparse_topk_dense_fallback=mode),
        )
    return checked, remarks


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("s", "top", "repeats"),
    [(16, 8, False), (13, 5, True), (7, 1, False), (9, 12, True), (4, 64, True)],
)
def test_the_fallback_matches_the_reference(
    target: str, s: int, top: int, repeats: bool
) -> None:
    """Distinct rows add an exact 0; repeated keys ln(count), rounded to f16
    (within the reference's error bound); k = 64 of 64 keys with repeats
    leaves some keys masked out entirely."""
    checked, remarks = _check(s, top, repeats, target, "always")
    assert any("by its dense fallback" in r for r in remarks)
    assert checked.ok, checked.comparisons
    if target == "ascend910b":
        assert any("fused attention (tv.matmul, tv.mul, tv.add" in r for r in remarks)


def _run(inputs: list[np.ndarray], target: str = "ascend910b", pipeline: bool = True):
    """The fallback (always) lowered and run on the simulator."""
    s, top = inputs[3].shape
    module = _kernel(s, top).module()
    return lowered_run(module, inputs, target, sparse_topk_mask_pipeline=pipeline)[1]


def lowered_run(
    module: Any, inputs: list[np.ndarray], target: str, **options: Any
) -> tuple[Any, Any]:
    """`module` lowered with the fallback (always) and `options`, and its run
    on the simulator."""
    lowered = lower(
        module,
        "ascend_hw",
        LowerPipeline(target=target, sparse_topk_dense_fallback="always", **options),
    )
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    arguments = [*lowered_arguments(function, inputs), *result_buffers(function)]
    run = run_hw_function(lowered, "topk_attention", arguments, load_target(target))
    return lowered, run


def _simulate(inputs: list[np.ndarray], target: str = "ascend910b") -> np.ndarray:
    return np.asarray(_run(inputs, target).outputs[-1], np.float32)


def _numpy(inputs: list[np.ndarray]) -> np.ndarray:
    """`softmax(q[:, None] @ k[idx].mT * s) @ v[idx]` in f32: a key named
    twice in a row weighs twice, as x[idx] does."""
    q, k, v, idx = inputs
    scores = np.einsum("sd,skd->sk", q.astype(np.float32), k[idx].astype(np.float32))
    p = np.exp(scores * SCALE - (scores * SCALE).max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return np.einsum("sk,skd->sd", p, v[idx].astype(np.float32))


@pytest.mark.parametrize("pipeline", [True, False])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("s", "top", "repeats"), [(45, 6, True), (7, 1, False), (32, 64, True)]
)
def test_the_mask_rows_pipelined_or_not_match_numpy(
    target: str, pipeline: bool, s: int, top: int, repeats: bool
) -> None:
    """topk-mask-pipeline on and off: several rows a block on each core (odd
    S = 45 in blocks of 3 or more), each row naming a key twice, k = 1, and
    k = 64 of the 64 keys with repeats (keys masked out entirely)."""
    inputs = _inputs(s, top, repeats, 3)
    got = np.asarray(_run(inputs, target, pipeline).outputs[-1], np.float32)
    np.testing.assert_allclose(got, _numpy(inputs), atol=4e-3, rtol=1e-2)


def test_pipelined_mask_rows_overlap() -> None:
    """With its rows pipelined the mask nest is faster: a row's marks no
    longer wait for the previous row's sum, ln and store (8 rows a core)."""
    inputs = _inputs(192, 16, False, 1)
    on, off = (_run(inputs, pipeline=p).report.cycles for p in (True, False))
    assert on < off


def test_repeated_keys_count_as_x_idx_does() -> None:
    """A row naming one key twice weighs it twice, as numpy's x[idx]."""
    q, k, v, idx = _inputs(3, 4, False, 5)
    idx[:, 1] = idx[:, 0]
    got = _simulate([q, k, v, idx])
    np.testing.assert_allclose(got, _numpy([q, k, v, idx]), atol=4e-3, rtol=1e-2)
    single = [q, k, v, idx[:, 1:].copy()]
    assert np.abs(_simulate(single) - got).max() > 1e-2


@pytest.mark.parametrize("mode", ["always", "never"])
def test_the_option_and_the_gather_path_agree(mode: str) -> None:
    checked, remarks = _check(16, 8, True, "ascend910b", mode)
    assert checked.ok, checked.comparisons
    dense = any("by its dense fallback" in r for r in remarks)
    assert dense is (mode == "always")


@pytest.mark.parametrize("bad", [N, -1])
def test_an_index_out_of_range_is_the_simulators_located_error(bad: int) -> None:
    """An index past the keys (or negative) writes outside the count row
    (exactly N wide): the simulator's error names the instruction, at the
    gather's line."""
    q, k, v, idx = _inputs(8, 4, False, 2)
    idx[3, 2] = bad
    line = topk_kernel.__code__.co_firstlineno + 8  # `k[idx]`
    with pytest.raises(
        SimError,
        match=rf"test_topk_attention.py:{line}:\d+: store_scalar: index \[0, {bad}\] is "
        "outside",
    ):
        _simulate([q, k, v, idx])


def test_bf16_takes_the_fallback_only_when_asked() -> None:
    """bf16 attention is not flash-fused (three nests through GM), which the
    estimate does not cover: `auto` keeps the gather nest (its remark says
    the flash nest is not estimated; that nest's bf16 lowering is refused
    later, by tile's verifier: not this test's), `always` takes the
    fallback, which matches the reference."""
    s, top = 8, 5

    @pto.kernel(backend="reference")
    def topk_bf16(
        q: pto.Tensor[(s, D), pto.bf16],
        k: pto.Tensor[(N, D), pto.bf16],
        v: pto.Tensor[(N, D), pto.bf16],
        idx: pto.Tensor[(s, top), pto.i32],
    ):
        p = pto.softmax(q[:, None, :] @ k[idx].mT * SCALE)
        return (p @ v[idx])[:, 0]

    rng = np.random.default_rng(4)
    q, k, v = (
        round_to_bf16(rng.standard_normal((n, D)).astype(np.float32)) for n in (s, N, N)
    )
    idx = np.stack([rng.choice(N, top, replace=True) for _ in range(s)])
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        TvSparseToTilePass(target="ascend910b").apply(
            default_context(), topk_bf16.module()
        )
    assert any("no dense fallback" in r and "not estimated" in r for r in remarks)
    remarks.clear()
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        checked = check_lowering(
            topk_bf16.module(),
            "topk_bf16",
            [q, k, v, idx.astype(np.int32)],
            pipeline=LowerPipeline(
                target="ascend910b", sparse_topk_dense_fallback="always"
            ),
        )
    assert any("by its dense fallback" in r for r in remarks)
    assert checked.ok, checked.comparisons
