"""Top-k attention (issue 14, docs/sparse.md): each query attends to the k key
rows its index row names, written as numpy users write it,

    p = pto.softmax(q[:, None, :] @ k[idx].mT * scale)
    out = (p @ v[idx])[:, 0]

run on the tv reference, lowered (tv-sparse-to-tile's gathers, the dense ops
outlined for tv-to-tile) on the simulated ascend910b and tiny, with its
roofline counted by hand and a bad index reported by the simulator."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func, scf

import pypto_mlir as pto
from pypto_mlir.check import lower
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.frontend.backends import sim_backend
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.sparse_roofline import sparse_roofline
from pypto_mlir.targets import load_target

S, K, D, N = 16, 8, 32, 64
SCALE = 0.088
TARGETS = ("ascend910b", "tiny")


def _kernel(backend: str):
    @pto.kernel(backend=backend)
    def topk_attention(
        q: pto.Tensor[(S, D), pto.f16],
        k: pto.Tensor[(N, D), pto.f16],
        v: pto.Tensor[(N, D), pto.f16],
        idx: pto.Tensor[(S, K), pto.i32],
    ):
        p = pto.softmax(q[:, None, :] @ k[idx].mT * SCALE)
        return (p @ v[idx])[:, 0]

    return topk_attention


def _inputs(seed: int = 0) -> list[np.ndarray]:
    """Each query's K distinct keys, sorted (DeepSeek's top-k selection)."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, D)).astype(np.float16) for n in (S, N, N))
    idx = np.sort(
        np.stack([rng.choice(N, K, replace=False) for _ in range(S)]), axis=1
    ).astype(np.int32)
    return [q, k, v, idx]


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
    """The gathers share a phase with the copy of q (outlined reshape): each
    is split over all the cores (`pypto.interleave_groups`), none is left to
    the last core under an `scf.if` on the core index; interleave=false
    leaves them there."""
    lowered = lower(
        _kernel("reference").module(),
        "ascend_hw",
        LowerPipeline(target="ascend910b", interleave=interleave),
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
