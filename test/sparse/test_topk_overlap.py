"""topk-mask-overlap (passes/topk_overlap.py, docs/sparse.md, *Top-k
attention*): the dense fallback's mask rows built at the start of each of the
flash nest's query blocks, with no sync_all, against numpy on ascend910b and
tiny (no flash blocks fit there: the mask nest stays a phase of its own), on
and off: keys named twice, k = 1, k = N, S not a multiple of the query block
(the phases kept), an odd head dim. The simulator's race detector checks that
each core reads back only mask rows it stored, after storing them."""

import numpy as np
import pytest
from test_topk_attention import SCALE
from xdsl.dialects import func

import pypto_mlir as pto
from pypto_mlir.check import lower, lowered_arguments, result_buffers
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import load_target

N = 64


def _kernel(s: int, top: int, d: int):
    @pto.kernel(backend="reference")
    def topk_attention(
        q: pto.Tensor[(s, d), pto.f16],
        k: pto.Tensor[(N, d), pto.f16],
        v: pto.Tensor[(N, d), pto.f16],
        idx: pto.Tensor[(s, top), pto.i32],
    ):
        p = pto.softmax(q[:, None, :] @ k[idx].mT * SCALE)
        return (p @ v[idx])[:, 0]

    return topk_attention


def _inputs(s: int, top: int, d: int) -> list[np.ndarray]:
    """Unsorted keys with repeats, one key twice in every row (k > 1)."""
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((n, d)).astype(np.float16) for n in (s, N, N))
    idx = np.stack([rng.choice(N, top, replace=True) for _ in range(s)])
    idx[:, -1] = idx[:, 0]
    return [q, k, v, idx.astype(np.int32)]


def _numpy(inputs: list[np.ndarray]) -> np.ndarray:
    """`softmax(q[:, None] @ k[idx].mT * s) @ v[idx]` in f32."""
    q, k, v, idx = inputs
    scores = np.einsum("sd,skd->sk", q.astype(np.float32), k[idx].astype(np.float32))
    p = np.exp(scores * SCALE - (scores * SCALE).max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return np.einsum("sk,skd->sd", p, v[idx].astype(np.float32))


def _run(s: int, top: int, d: int, target: str, overlap: bool):
    inputs = _inputs(s, top, d)
    module = _kernel(s, top, d).module()
    remarks: list[str] = []
    with diagnostic_handler(lambda x: remarks.append(str(x))):
        lowered = lower(
            module,
            "ascend_hw",
            LowerPipeline(
                target=target,
                sparse_topk_dense_fallback="always",
                sparse_topk_mask_overlap=overlap,
            ),
        )
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    arguments = [*lowered_arguments(function, inputs), *result_buffers(function)]
    run = run_hw_function(lowered, "topk_attention", arguments, load_target(target))
    got = np.asarray(run.outputs[-1], np.float32)
    np.testing.assert_allclose(got, _numpy(inputs), atol=4e-3, rtol=1e-2)
    return str(lowered).count("ascend_hw.sync_all"), remarks


@pytest.mark.parametrize(
    ("s", "top", "d", "target", "overlap", "syncs"),
    [
        # two query blocks of 16 rows, keys named twice: no sync_all left
        (32, 6, 32, "ascend910b", True, 0),
        (32, 6, 32, "ascend910b", False, 1),
        (32, 1, 32, "ascend910b", True, 0),  # k = 1
        (32, N, 32, "ascend910b", True, 0),  # k = N: keys masked out entirely
        # S not a multiple of the query block: the phases kept
        (45, 6, 32, "ascend910b", True, 1),
        # an odd head dim (a sync_all of its own for the padded operands)
        (32, 5, 33, "ascend910b", True, 1),
        (32, 5, 33, "ascend910b", False, 2),
        # tiny: no flash blocks fit, three nests through GM, the phases kept
        (32, 6, 32, "tiny", True, 2),
    ],
)
def test_the_mask_rows_in_the_flash_nest_match_numpy(
    s: int, top: int, d: int, target: str, overlap: bool, syncs: int
) -> None:
    found, remarks = _run(s, top, d, target, overlap)
    said = any("in the flash nest query blocks" in r for r in remarks)
    assert said is (overlap and syncs == int(d % 2)), remarks
    assert found == syncs
