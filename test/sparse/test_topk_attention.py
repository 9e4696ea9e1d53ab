"""Top-k attention (issue 14, docs/sparse.md): each query attends to the k key
rows its index row names, written as numpy users write it,

    p = pto.softmax(q[:, None, :] @ k[idx].mT * scale)
    out = (p @ v[idx])[:, 0]

run on the tv reference, lowered on the simulated ascend910b and tiny (by
default the fused nest of passes/topk_attention.py; with
sparse-fuse-topk-attention=false tv-sparse-to-tile's gathers and the dense ops
outlined for tv-to-tile), with its roofline counted by hand and a bad index
reported by the simulator."""

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func, memref, scf

import pypto_mlir as pto
from pypto_mlir.check import lower, lowered_arguments, result_buffers
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.frontend.backends import sim_backend
from pypto_mlir.frontend.dtypes import DType
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.interp.tensor_view import run_tv_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sparse_roofline import sparse_roofline
from pypto_mlir.targets import load_target

S, K, D, N = 16, 8, 32, 64
SCALE = 0.088
TARGETS = ("ascend910b", "tiny")


def _kernel(backend: str, s: int = S, top: int = K, dtype: DType = pto.f16):
    @pto.kernel(backend=backend)
    def topk_attention(
        q: pto.Tensor[(s, D), dtype],
        k: pto.Tensor[(N, D), dtype],
        v: pto.Tensor[(N, D), dtype],
        idx: pto.Tensor[(s, top), pto.i32],
    ):
        p = pto.softmax(q[:, None, :] @ k[idx].mT * SCALE)
        return (p @ v[idx])[:, 0]

    return topk_attention


def _inputs(
    seed: int = 0, s: int = S, top: int = K, order: str = "sorted"
) -> list[np.ndarray]:
    """Each query's `top` distinct keys: sorted (DeepSeek's top-k selection),
    shuffled, or consecutive from a random start (`runs`)."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, D)).astype(np.float16) for n in (s, N, N))
    if order == "runs":
        idx = rng.integers(0, N - top, s)[:, None] + np.arange(top)[None, :]
    else:
        idx = np.sort(np.stack([rng.choice(N, top, replace=False) for _ in range(s)]))
        if order == "unsorted":
            idx = rng.permuted(idx, axis=1)
    return [q, k, v, idx.astype(np.int32)]


def _numpy(q, k, v, idx) -> np.ndarray:
    """The same attention in f32 numpy, query by query."""
    scores = np.einsum("sd,skd->sk", q.astype(np.float32), k[idx].astype(np.float32))
    scores *= SCALE
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return np.einsum("sk,skd->sd", p, v[idx].astype(np.float32))


def test_the_numpy_spelling_matches_numpy() -> None:
    """The reference rounds the scores, the scaled scores and the
    probabilities to f16 (each op's result type): within a few f16 ulps of
    the f32 numpy computation."""
    inputs = _inputs()
    out = np.asarray(_kernel("reference")(*inputs), np.float32)
    assert out.shape == (S, D)
    np.testing.assert_allclose(out, _numpy(*inputs), atol=4e-3, rtol=1e-2)


def test_the_traced_ops() -> None:
    """Two gathers, the batched matmuls of one query row each (m = 1), the
    scale and a softmax over the keys."""
    text = str(_kernel("reference").module())
    assert text.count("tv.gather") == 2
    assert "tv.matmul %0, %2 acc(f32) : !tv.tensor<16x1x32xf16>" in text
    assert "tv.softmax %5 axis = 2 : !tv.tensor<16x1x8xf16>" in text


@pytest.mark.parametrize("target", TARGETS)
def test_the_lowered_kernel_matches_the_reference(target: str) -> None:
    inputs = _inputs(1)
    expected = np.asarray(_kernel("reference")(*inputs), np.float32)
    got = np.asarray(_kernel(sim_backend(target))(*inputs), np.float32)
    np.testing.assert_allclose(got, expected, atol=2e-3, rtol=0)


@pytest.mark.parametrize("interleave", [True, False])
def test_the_gathers_are_split_over_the_cores(interleave: bool) -> None:
    """Unfused, the gathers share a phase with the copy of q (outlined reshape): each
    is split over all the cores (`pypto.interleave_groups`), none is left to
    the last core under an `scf.if` on the core index; interleave=false
    leaves them there."""
    lowered = lower(
        _kernel("reference").module(),
        "ascend_hw",
        LowerPipeline(
            target="ascend910b",
            interleave=interleave,
            sparse_fuse_topk_attention=False,
        ),
    )
    function = next(op for op in lowered.walk() if isinstance(op, func.FuncOp))
    guarded = [
        op
        for op in function.body.block.ops
        if isinstance(op, scf.IfOp)
        and any(isinstance(o, hw.LoadScalarOp) for o in op.walk())
    ]
    assert bool(guarded) is not interleave


def test_an_index_out_of_range_is_the_simulators_located_error() -> None:
    q, k, v, idx = _inputs(2)
    idx[3, 5] = N
    kernel = _kernel(sim_backend("ascend910b"))
    with pytest.raises(
        pto.KernelRuntimeError,
        match=rf"dma_load: index \[{N}, 0\] is outside memref 'k' of shape \[{N}, {D}\]",
    ) as error:
        kernel(q, k, v, idx)
    assert error.value.location is not None
    assert error.value.location.line == _kernel.__code__.co_firstlineno + 8


def test_the_roofline_by_hand() -> None:
    """Gathered rows read once per query (S*K rows of K and of V, on GM -> L1),
    q whole on GM -> L1, the indices on GM -> UB; 2*S*K*D MACs on the cube; the
    result (S x D f16) from L0C."""
    target = load_target("ascend910b")
    inputs = _inputs()
    line = sparse_roofline(
        _kernel("reference").module(), "topk_attention", target, inputs
    )
    work = {b.resource: b.work for b in line.bounds}
    assert work["gm->l1"] == 2 * S * K * D * 2 + S * D * 2
    assert work["gm->ub"] == S * K * 4
    assert work["cube"] == 2 * S * K * D
    assert work["l0c->gm"] == S * D * 2
    assert work["l1->l0b"] == 2 * S * K * D * 2
    assert work["gm"] == work["gm->l1"] + work["gm->ub"] + work["l0c->gm"]
    assert work["vector"] > 0  # the scale and the softmax over S x K scores


# The fused nest (passes/topk_attention.py) -----------------------------------


def _run(
    module: Any, inputs: list[np.ndarray], target: str, **options: Any
) -> tuple[np.ndarray, int, Any, list[str]]:
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        lowered = lower(module, "ascend_hw", LowerPipeline(target=target, **options))
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    outputs = result_buffers(function)
    arguments = [*lowered_arguments(function, inputs), *outputs]
    run = run_hw_function(lowered, "topk_attention", arguments, load_target(target))
    return np.asarray(run.outputs[-1], np.float32), run.report.cycles, run, remarks


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("s", "top", "order"),
    [(16, 8, "sorted"), (13, 5, "unsorted"), (7, 1, "sorted"), (9, 12, "runs")],
)
def test_the_fused_nest_matches_the_reference(
    target: str, s: int, top: int, order: str
) -> None:
    module = _kernel("reference", s, top).module()
    inputs = _inputs(0, s, top, order)
    expected = np.asarray(
        run_tv_function(module, "topk_attention", inputs)[0], np.float32
    )
    got, _, _, remarks = _run(module, inputs, target)
    assert any("fused top-k attention" in r for r in remarks)
    np.testing.assert_allclose(got, expected, atol=2e-3, rtol=0)
    np.testing.assert_allclose(got, _numpy(*inputs), atol=4e-3, rtol=1e-2)


def test_fused_and_unfused_agree_and_fused_is_faster() -> None:
    module = _kernel("reference").module()
    inputs = _inputs(3, order="runs")
    fused, fused_cycles, _, _ = _run(module, inputs, "ascend910b")
    unfused, unfused_cycles, _, remarks = _run(
        _kernel("reference").module(),
        inputs,
        "ascend910b",
        sparse_fuse_topk_attention=False,
    )
    assert any(
        "top-k attention not fused: fuse-topk-attention=false" in r for r in remarks
    )
    np.testing.assert_allclose(fused, unfused, atol=2e-3, rtol=0)
    assert fused_cycles < unfused_cycles


@pytest.mark.parametrize(("run", "rows"), [(1, [1]), (4, [1, 4])])
def test_the_nest_writes_no_gm_temporary_and_one_store_per_row(
    run: int, rows: list[int]
) -> None:
    """One nest: no memref.alloc (the S x k x d temporaries of the unfused
    lowering), the output row stored once per query; the gathered rows one
    by one (topk-gather-run=1, the default) or also in runs of 4."""
    lowered = lower(
        _kernel("reference").module(),
        "tile",
        LowerPipeline(target="ascend910b", sparse_topk_gather_run=run),
    )
    function = next(op for op in lowered.walk() if isinstance(op, func.FuncOp))
    assert not [op for op in function.walk() if isinstance(op, memref.AllocOp)]
    stores = [op for op in function.walk() if isinstance(op, tile.StoreOp)]
    assert len(stores) == 1
    loads = [op for op in function.walk() if isinstance(op, tile.LoadOp)]
    assert sorted({op.result.type.get_shape()[0] for op in loads}) == rows


@pytest.mark.parametrize("target", TARGETS)
def test_runs_of_keys_match_the_reference(target: str) -> None:
    """topk-gather-run=4: runs as one DMA, other groups row by row (every
    other query's keys consecutive, the others random and unsorted)."""
    module = _kernel("reference", 9, 12).module()
    inputs = _inputs(0, 9, 12, "runs")
    inputs[3][::2] = _inputs(1, 5, 12, "unsorted")[3]
    expected = np.asarray(
        run_tv_function(module, "topk_attention", inputs)[0], np.float32
    )
    got, _, _, _ = _run(module, inputs, target, sparse_topk_gather_run=4)
    np.testing.assert_allclose(got, expected, atol=2e-3, rtol=0)


@pytest.mark.parametrize("target", TARGETS)
def test_bf16_scales_in_f32(target: str) -> None:
    """bf16 q, k, v: the fused nest scales the rounded scores in f32 (the
    vector unit has no bf16 tile.mul, which the nest used to emit: a verifier
    error), rounded back to bf16 as tv.mul is: exact against the reference."""
    module = _kernel("reference", 7, 5, pto.bf16).module()
    inputs = [x.astype(np.float32) for x in _inputs(5, 7, 5, "unsorted")]
    inputs[3] = inputs[3].astype(np.int32)
    expected = np.asarray(
        run_tv_function(module, "topk_attention", inputs)[0], np.float32
    )
    got, _, _, remarks = _run(module, inputs, target)
    assert any("fused top-k attention" in r for r in remarks)
    np.testing.assert_array_equal(got, expected)


def test_fewer_keys_than_a_run_fuse_row_by_row() -> None:
    """k = 1 with topk-gather-run=4 gathers row by row; the ub check counted
    4-row tiles and refused to fuse on tiny where one row's tiles fit."""
    module = _kernel("reference", 5, 1).module()
    inputs = _inputs(2, 5, 1)
    expected = np.asarray(
        run_tv_function(module, "topk_attention", inputs)[0], np.float32
    )
    got, _, _, remarks = _run(module, inputs, "tiny", sparse_topk_gather_run=16)
    assert any("fused top-k attention" in r for r in remarks), remarks
    np.testing.assert_allclose(got, expected, atol=2e-3, rtol=0)
