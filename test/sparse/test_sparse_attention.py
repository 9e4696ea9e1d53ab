"""Block-sparse attention fused by tv-sparse-to-tile (passes/sparse_attention.py):
`softmax(sddmm(mask, q, k.T) [* s]) @ v` with a block-CSR mask, lowered through
pypto-lower to ascend_hw and run on the simulator against the tv reference with
the per-element error bounds of pypto_mlir.check (the online softmax reorders
the sums: not bit-exact), as the dense flash attention is checked; on both
targets, odd numbers of blocks per row, empty block rows, an all-empty and a
full mask, with and without the scale; the switches and the refusals.
"""

# No `from __future__ import annotations`: the kernels' annotations name the
# shapes of each case, which the frontend evaluates where the kernel is made.
from collections.abc import Callable

import numpy as np
import pytest
import scipy.sparse as sp
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp

import pypto_mlir as pto
from pypto_mlir.check import LoweringCheck, check_lowering, lower
from pypto_mlir.diagnostics import DiagnosticError, diagnostic_handler
from pypto_mlir.frontend.kernel import Kernel
from pypto_mlir.pipelines import LowerPipeline

FUSED = "fused block-sparse attention"


def _kernel(seq: int, block: int, dim: int, scale: str, dtype=pto.f16) -> Kernel:
    """softmax(sddmm(mask, q, k.T) [* 0.088 | / 11.3]) @ v as users write it."""
    Mask = pto.BSR[(seq, seq), dtype, (block, block)]
    Qkv = pto.Tensor[(seq, dim), dtype]

    @pto.kernel
    def attention(mask: Mask, q: Qkv, k: Qkv, v: Qkv):
        scores = pto.sddmm(mask, q, k, transpose_b=True)
        if scale == "mul":
            scores = scores * 0.088
        elif scale == "div":
            scores = scores / 11.3
        return pto.softmax(scores) @ v

    return attention


def _random(grid: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random((grid, grid)) < 0.4


def _odd_rows(grid: int, rng: np.random.Generator) -> np.ndarray:
    """1, 3, 0, 2, 5, ... blocks per row: odd counts and an empty block row."""
    keep = np.zeros((grid, grid), dtype=bool)
    for row, count in enumerate([1, 3, 0, 2, 5, 1][:grid]):
        keep[row, rng.choice(grid, size=min(count, grid), replace=False)] = True
    return keep


def _power_law(grid: int, rng: np.random.Generator) -> np.ndarray:
    """grid / (r + 1) blocks in row r (shuffled): one row holds many blocks,
    most few."""
    keep = np.zeros((grid, grid), dtype=bool)
    for row, count in enumerate(
        rng.permutation([grid // (r + 1) for r in range(grid)])
    ):
        keep[row, rng.choice(grid, size=count, replace=False)] = True
    return keep


def _empty(grid: int, rng: np.random.Generator) -> np.ndarray:
    return np.zeros((grid, grid), dtype=bool)


def _full(grid: int, rng: np.random.Generator) -> np.ndarray:
    return np.ones((grid, grid), dtype=bool)


def _single(grid: int, rng: np.random.Generator) -> np.ndarray:
    """One stored block, in a middle block row."""
    keep = np.zeros((grid, grid), dtype=bool)
    keep[grid // 2, rng.integers(grid)] = True
    return keep


PATTERNS: dict[str, Callable[[int, np.random.Generator], np.ndarray]] = {
    "random": _random,
    "odd_rows": _odd_rows,
    "all_empty": _empty,
    "full": _full,
    "single": _single,
    "power_law": _power_law,
}


def _inputs(
    seq: int, block: int, dim: int, pattern: str, dtype=np.float16
) -> list[object]:
    rng = np.random.default_rng(seq * 31 + block + dim)
    keep = PATTERNS[pattern](seq // block, rng)
    mask = sp.bsr_array(
        np.kron(keep, np.ones((block, block), np.float32)), blocksize=(block, block)
    )
    q, k, v = ((rng.standard_normal((seq, dim)) * 2).astype(dtype) for _ in range(3))
    return [(mask.indptr, mask.indices, mask.data.astype(dtype)), q, k, v]


def _check(
    module: ModuleOp, inputs: list[object], target: str, **options: bool
) -> tuple[LoweringCheck, list[str]]:
    """The lowering to ascend_hw against the tv reference, and its remarks."""
    remarks: list[str] = []
    with diagnostic_handler(lambda d: remarks.append(str(d))):
        result = check_lowering(
            module,
            "attention",
            inputs,
            "ascend_hw",
            LowerPipeline(target=target, **options),
        )
    return result, remarks


def _allocs(module: ModuleOp, target: str, **options: bool) -> int:
    with diagnostic_handler(lambda _: None):
        lowered = lower(module, "tile", LowerPipeline(target=target, **options))
    return sum(isinstance(op, memref.AllocOp) for op in lowered.walk())


# (target, seq, block, dim, pattern, scale)
CASES = [
    ("ascend910b", 384, 64, 64, "odd_rows", "mul"),
    ("ascend910b", 384, 64, 64, "odd_rows", "none"),
    ("ascend910b", 128, 64, 128, "full", "div"),
    ("ascend910b", 128, 64, 64, "all_empty", "mul"),
    ("tiny", 96, 16, 16, "odd_rows", "mul"),
    ("tiny", 96, 16, 16, "random", "none"),
    ("tiny", 48, 16, 16, "full", "mul"),
    ("tiny", 48, 16, 16, "all_empty", "none"),
]


@pytest.mark.parametrize(("target", "seq", "block", "dim", "pattern", "scale"), CASES)
def test_fused_nest_matches_the_reference(
    target: str, seq: int, block: int, dim: int, pattern: str, scale: str
) -> None:
    module = _kernel(seq, block, dim, scale).module()
    result, remarks = _check(module, _inputs(seq, block, dim, pattern), target)
    assert any(FUSED in r for r in remarks), remarks
    assert result.ok, [c.describe() for c in result.comparisons]
    # One nest: no GM temporary for the scores or the probabilities (with
    # more block rows than cores, the block split's three f32 workspaces of
    # the divided rows' partial statistics only).
    split = any("the stored blocks split evenly" in r for r in remarks)
    assert _allocs(module, target) == (3 if split else 0)
    assert _allocs(module, target, sparse_attention_block_split=False) == 0


@pytest.mark.parametrize(
    ("target", "scale", "options"),
    [
        ("ascend910b", "mul", {"sparse_fuse_attention": False}),
        ("ascend910b", "div", {"attention_scale_fold": False}),
        ("ascend910b", "none", {"sparse_fuse_attention": False}),
        ("tiny", "mul", {}),
    ],
    ids=["unfused-mul", "bf16-scores-div", "unfused-softmax", "tiny"],
)
def test_bf16_computes_in_f32(target: str, scale: str, options: dict) -> None:
    """bf16 attention: the BSR softmax's running max, the scale of the
    values (unfused) and the fused nest's scores in their type
    (attention-scale-fold=false; tiny, where the f32 scores do not fit)
    emitted bf16 tile.max / tile.mul / tile.div / tile.reduce_max, which the
    vector unit lacks (a verifier error); now in f32 and rounded back as tv
    rounds: exact against the reference."""
    module = _kernel(80, 16, 16, scale, pto.bf16).module()
    inputs = _inputs(80, 16, 16, "odd_rows", np.float32)
    result, _ = _check(module, inputs, target, **options)
    assert result.ok, [c.describe() for c in result.comparisons]


@pytest.mark.parametrize(
    "option",
    [
        "sparse_fuse_attention",
        "attention_cube_sum",
        "sparse_attention_defer_update",
        "attention_scale_fold",
        "sparse_attention_sum_column",
        "block_reduce",
    ],
)
def test_each_switch_off_matches_the_reference(option: str) -> None:
    """fuse-attention=false: one nest per op (the scale a nest of its own)
    through three GM temporaries; attention-cube-sum=false: the row sums on
    the vector unit; attention-defer-update=false: each block's update right
    after it; attention-scale-fold=false: the scores rounded to f16 and
    scaled in f16 as the reference; block-reduce=false (tile-to-hw): a
    vreduce_max repeat per row of the scores, the same bits as the block
    reductions; attention-sum-column=false: the running sums ONES columns
    wide. All as exact as the default, which says what it does."""
    module = _kernel(384, 64, 64, "mul").module()
    result, remarks = _check(
        module, _inputs(384, 64, 64, "odd_rows"), "ascend910b", **{option: False}
    )
    assert result.ok, [c.describe() for c in result.comparisons]
    text = " ".join(remarks)
    if option == "sparse_fuse_attention":
        assert FUSED not in text and "the scale of a sparse tensor" in text
        assert _allocs(module, "ascend910b", sparse_fuse_attention=False) == 3
    elif option == "attention_cube_sum":
        assert "row sums on the vector unit" in text
    elif option == "attention_scale_fold":
        assert FUSED in text and "kept in f32" not in text
    elif option == "block_reduce":
        assert FUSED in text and "by 32-byte blocks" not in text
    elif option == "sparse_attention_sum_column":
        assert FUSED in text and "reduced to one column" not in text
    else:
        assert FUSED in text and "after the next block's softmax" not in text
    on, default = _check(module, _inputs(384, 64, 64, "odd_rows"), "ascend910b")
    text = " ".join(default)
    if option == "block_reduce":
        assert "64 rows of 64 f32 reduced by 32-byte blocks" in text, text
        for a, b in zip(on.comparisons, result.comparisons, strict=True):
            assert a.actual.tobytes() == b.actual.tobytes()
    assert "row sums on the cube" in text, text
    assert "after the next block's softmax" in text, text
    assert "the scores kept in f32, scaled in f32" in text, text
    assert "each block's row sums reduced to one column" in text, text


SPLITS = {
    "blocks": {},
    "rows": {"sparse_attention_block_split": False},
    "count": {"sparse_attention_block_split": False, "sparse_attention_balance": False},
}
"""The core splits of the block rows and the options that select them."""


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(
    ("target", "seq", "pattern"),
    [
        ("ascend910b", 416, "power_law"),
        ("ascend910b", 416, "odd_rows"),
        ("ascend910b", 416, "all_empty"),
        ("ascend910b", 400, "full"),
        ("ascend910b", 400, "single"),
        ("tiny", 96, "power_law"),
        ("tiny", 96, "odd_rows"),
        ("tiny", 96, "all_empty"),
        ("tiny", 80, "full"),
        ("tiny", 80, "single"),
    ],
)
def test_block_rows_balanced_over_the_cores(
    target: str, seq: int, pattern: str, split: str
) -> None:
    """With more block rows than cores (26 or 25 on 24, 6 or 5 on 2):
    attention-block-split (default) splits the stored blocks evenly, dividing
    block rows between cores and merging their partial statistics after a
    sync_all (a row of all its blocks over several cores, odd counts, empty
    block rows, a single stored block, none at all, an odd number of block
    rows); off, attention-balance splits whole block rows by stored blocks;
    both off: by count. All match the reference and say which split they
    took."""
    module = _kernel(seq, 16, 16, "mul").module()
    result, remarks = _check(
        module, _inputs(seq, 16, 16, pattern), target, **SPLITS[split]
    )
    assert result.ok, [c.describe() for c in result.comparisons]
    text = " ".join(remarks)
    assert FUSED in text, text
    if split == "blocks":
        assert "the stored blocks split evenly over" in text, text
    elif split == "rows":
        assert "block rows split over" in text and "by stored blocks" in text, text
    else:
        assert "by count (attention-balance=false" in text, text


def test_few_block_rows_split_by_count() -> None:
    """No more block rows than cores (6 on 24): one block row a core, by
    count, whatever attention-block-split says (a divided row's combine after
    a sync_all would cost more than the longest row)."""
    module = _kernel(96, 16, 16, "mul").module()
    result, remarks = _check(module, _inputs(96, 16, 16, "full"), "ascend910b")
    assert result.ok, [c.describe() for c in result.comparisons]
    assert "one block row a core at most" in " ".join(remarks)


def test_the_scale_alone_lowers() -> None:
    """`a * s` on a sparse tensor (disassemble, tv.mul, assemble) returned as
    it is: a nest over the stored blocks, the values as tv.mul rounds them."""
    mask = pto.BSR[(64, 64), pto.f16, (16, 16)]

    @pto.kernel
    def attention(a: mask):
        return a * 0.3

    inputs = _inputs(64, 16, 16, "odd_rows")[:1]
    result, remarks = _check(attention.module(), inputs, "tiny")
    assert result.ok, [c.describe() for c in result.comparisons]
    assert any("the scale of a sparse tensor" in r for r in remarks), remarks


def test_refused_chains_keep_their_nests() -> None:
    """A CSR mask is not fused (a remark says why) and stays exact to the
    reference through its nests; f32 values are refused with a remark, then
    the block-CSR sddmm off the cube is an error."""
    Mask = pto.CSR[(64, 64), pto.f16]
    Qkv = pto.Tensor[(64, 16), pto.f16]

    @pto.kernel
    def attention(mask: Mask, q: Qkv, k: Qkv, v: Qkv):
        return pto.softmax(pto.sddmm(mask, q, k, transpose_b=True) * 0.25) @ v

    rng = np.random.default_rng(5)
    csr = sp.random_array((64, 64), density=0.2, format="csr", rng=rng)
    q, k, v = (rng.standard_normal((64, 16)).astype(np.float16) for _ in range(3))
    inputs = [(csr.indptr, csr.indices, csr.data.astype(np.float16)), q, k, v]
    result, remarks = _check(attention.module(), inputs, "ascend910b")
    assert result.ok, [c.describe() for c in result.comparisons]
    assert any("not fused: the mask is CSR" in r for r in remarks), remarks

    module = _kernel(128, 64, 64, "mul", pto.f32).module()
    remarks = []
    with (
        diagnostic_handler(lambda d: remarks.append(str(d))),
        pytest.raises(DiagnosticError, match="on the cube"),
    ):
        lower(module, "tile", LowerPipeline(target="ascend910b"))
    assert any("not fused: the values are f32" in r for r in remarks), remarks


def test_the_roofline_counts_the_scale_by_hand() -> None:
    """`a * 0.5` of a 64x64 block-CSR tensor with 3 stored 16x16 blocks: the
    indices and the 768 values read once, the scalar multiply's steps over
    the stored entries in f16, the 768 values written once."""
    from pypto_mlir.roofline import vector_steps
    from pypto_mlir.sparse_roofline import sparse_roofline
    from pypto_mlir.targets import load_target
    from pypto_mlir.targets.cost import cycles_per_repeat

    chip = load_target("ascend910b")

    @pto.kernel
    def scaled(a: pto.BSR[(64, 64), pto.f16, (16, 16)]):
        return a * 0.5

    mask = (
        np.array([0, 2, 2, 3, 3], np.int32),
        np.array([0, 2, 2], np.int32),
        np.ones((3, 16, 16), np.float16),
    )
    line = sparse_roofline(scaled.module(), "scaled", chip, [mask])
    work = {b.resource: b.work for b in line.bounds}
    assert work["gm->ub"] == (5 + 3) * 4 + 768 * 2
    assert work["ub->gm"] == 768 * 2
    expected = sum(
        768 * 2 / 256 * cycles_per_repeat(chip, step, 16)
        for step in vector_steps("mul", True)
    )
    assert work["vector"] == pytest.approx(expected)
