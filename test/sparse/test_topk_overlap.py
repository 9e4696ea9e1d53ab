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
from test_topk_dense import _numpy, lowered_run

import pypto_mlir as pto
from pypto_mlir.diagnostics import diagnostic_handler

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


def _run(s: int, top: int, d: int, target: str, overlap: bool):
    inputs = _inputs(s, top, d)
    module = _kernel(s, top, d).module()
    remarks: list[str] = []
    with diagnostic_handler(lambda x: remarks.append(str(x))):
        lowered, run = lowered_run(
            module, inputs, target, sparse_topk_mask_overlap=overlap
        )
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
