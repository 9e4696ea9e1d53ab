"""The sparse roofline (`pypto_mlir.sparse_roofline`) against hand counts of
the work of one run: stored entries, indices, gathered rows, outputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from xdsl.parser import Parser

import pypto_mlir as pto
from pypto_mlir.roofline import roofline
from pypto_mlir.sparse_roofline import sparse_roofline
from pypto_mlir.targets import load_target
from pypto_mlir.targets.cost import cycles_per_repeat
from pypto_mlir.universe import default_context

TARGET = load_target("ascend910b")
F32 = np.float32
CSR = "!tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>"
BSR = (
    "!tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, "
    "block = [16, 16]>>"
)


def _module(text: str):
    return Parser(default_context(), text).parse_module()


def _csr() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """8x16, 5 entries in columns 1, 3, 3, 7, 15 (4 distinct), rows 2 and 5 empty."""
    offsets = np.array([0, 1, 2, 2, 3, 4, 4, 5, 5], np.int32)
    indices = np.array([1, 3, 3, 7, 15], np.int32)
    return offsets, indices, np.ones(5, np.float16)


def _bounds(line) -> dict[str, float]:
    return {b.resource: b.work for b in line.bounds}


def test_csr_spmm_by_hand() -> None:
    """Indices (9 offsets + 5 indices, i32), 5 f16 values and 4 gathered rows
    of 40 f16 read on GM -> UB; a mul and an add in f32 per entry and column on
    the vector unit; the 8x40 f16 result written once."""
    module = _module(
        f"""
func.func @spmm(%a: {CSR}, %b: !tv.tensor<16x40xf16>) -> !tv.tensor<8x40xf16> {{
  %c = tv.spmm %a, %b : {CSR}, !tv.tensor<16x40xf16> -> !tv.tensor<8x40xf16>
  func.return %c : !tv.tensor<8x40xf16>
}}"""
    )
    b = np.ones((16, 40), np.float16)
    line = sparse_roofline(module, "spmm", TARGET, [_csr(), b])
    work = _bounds(line)
    read = (9 + 5) * 4 + 5 * 2 + 4 * 40 * 2
    assert work["gm->ub"] == read
    assert work["ub->gm"] == 8 * 40 * 2
    assert work["gm"] == read + 8 * 40 * 2
    # 200 f32 products: 800 B = 3.125 repeats of 256 B, mul 2.13 and add 2.07
    # cycles a repeat (ascend910b.toml, b32)
    assert work["vector"] == pytest.approx(3.125 * (2.13 + 2.07))
    assert "cube" not in work
    assert line.cycles >= (read + 640) / TARGET.gm_bytes_per_cycle


def test_bsr_attention_by_hand() -> None:
    """`softmax(sddmm(mask, q, k.T)) @ v`, 64x64 in 16x16 blocks, 3 blocks in
    block rows 0 and 2 at block columns 0, 2, 2: the cube does 3 x 256 x 32 MACs
    (sddmm) and 3 x 256 x 40 (spmm); q's 2 block rows, k's and v's 2 block
    columns are read once on GM -> L1; the scores stay fused; the softmax's
    steps (with the f16 casts) run over the 768 stored entries, but its
    quotients on the 32 x 40 product rows with entries (the flash form)."""
    module = _module(
        f"""
func.func @att(%m: {BSR}, %q: !tv.tensor<64x32xf16>, %k: !tv.tensor<64x32xf16>,
               %v: !tv.tensor<64x40xf16>) -> !tv.tensor<64x40xf16> {{
  %s = tv.sddmm %m, %q, %k transpose_b : {BSR}, !tv.tensor<64x32xf16>, !tv.tensor<64x32xf16> -> {BSR}
  %p = tv.sparse_softmax %s : {BSR}
  %o = tv.spmm %p, %v : {BSR}, !tv.tensor<64x40xf16> -> !tv.tensor<64x40xf16>
  func.return %o : !tv.tensor<64x40xf16>
}}"""
    )
    mask = (
        np.array([0, 2, 2, 3, 3], np.int32),
        np.array([0, 2, 2], np.int32),
        np.ones((3, 16, 16), np.float16),
    )
    q, k = np.ones((64, 32), np.float16), np.ones((64, 32), np.float16)
    v = np.ones((64, 40), np.float16)
    line = sparse_roofline(module, "att", TARGET, [mask, q, k, v])
    work = _bounds(line)
    assert work["cube"] == 3 * 256 * 32 + 3 * 256 * 40
    assert work["gm->l1"] == 32 * 32 * 2 + 32 * 32 * 2 + 32 * 40 * 2
    assert work["gm->ub"] == (5 + 3) * 4  # the mask's values are not read
    assert work["l0c->gm"] == 64 * 40 * 2
    softmax = ("cast", "reduce_max", "sub", "exp", "reduce_sum", "cast")
    expected = sum(
        768 * 4 / 256 * cycles_per_repeat(TARGET, step, 32) for step in softmax
    )
    expected += 32 * 40 * 4 / 256 * cycles_per_repeat(TARGET, "div", 32)
    assert work["vector"] == pytest.approx(expected)


def test_the_dense_roofline_still_refuses_sparse_ops() -> None:
    module = _module(
        f"""
func.func @d(%a: {CSR}) -> !tv.tensor<8x16xf16> {{
  %d = tv.to_dense %a : {CSR} -> !tv.tensor<8x16xf16>
  func.return %d : !tv.tensor<8x16xf16>
}}"""
    )
    with pytest.raises(ValueError, match="no model of tv.to_dense"):
        roofline(module, "d", TARGET)


def test_a_sparse_kernel_run_reports_its_roofline() -> None:
    """The sim backend bounds each run by its own pattern: twice the stored
    entries, a larger bound."""

    @pto.kernel(backend="sim")
    def spmm(a: pto.CSR[(16, 16), pto.f16], b: pto.Tensor[(16, 64), pto.f16]):
        return a @ b

    rng = np.random.default_rng(0)
    b = rng.standard_normal((16, 64)).astype(np.float16)
    bounds = []
    for density in (0.1, 0.5):
        a = sp.random_array((16, 16), density=density, format="csr", dtype=F32, rng=rng)
        result = spmm.run(a, b)
        assert result.report.roofline_fraction is not None
        assert 0 < result.report.roofline_fraction <= 1
        bounds.append(result.report.roofline_cycles)
    assert bounds[0] < bounds[1]


def test_gather_and_a_returned_sparse_result_by_hand() -> None:
    """`x[idx]` reads the distinct rows named (2 of 3) and the indices once and
    writes every gathered row; a returned sparse softmax writes its 5 stored
    values (f16), its steps in f32 with the casts in and out."""
    module = _module(
        f"""
func.func @g(%x: !tv.tensor<8x64xf32>, %i: !tv.tensor<3xi32>, %a: {CSR})
    -> (!tv.tensor<3x64xf32>, {CSR}) {{
  %y = tv.gather %x[%i] : !tv.tensor<8x64xf32>, !tv.tensor<3xi32> -> !tv.tensor<3x64xf32>
  %p = tv.sparse_softmax %a : {CSR}
  func.return %y, %p : !tv.tensor<3x64xf32>, {CSR}
}}"""
    )
    x = np.ones((8, 64), F32)
    line = sparse_roofline(
        module, "g", TARGET, [x, np.array([0, 5, 5], np.int32), _csr()]
    )
    work = _bounds(line)
    assert work["gm->ub"] == 2 * 64 * 4 + 3 * 4 + (9 + 5) * 4 + 5 * 2
    assert work["ub->gm"] == 3 * 64 * 4 + 5 * 2
    softmax = ("cast", "reduce_max", "sub", "exp", "reduce_sum", "div", "cast")
    assert work["vector"] == pytest.approx(
        sum(5 * 4 / 256 * cycles_per_repeat(TARGET, step, 32) for step in softmax)
    )


def test_sddmm_without_transpose_reads_the_gathered_columns() -> None:
    """`q @ k` at the mask: the 2 block columns of k (32 of its 64 columns, K =
    32 rows), not all of k; the 3 stored blocks written from L0C."""
    module = _module(
        f"""
func.func @s(%m: {BSR}, %q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>) -> {BSR} {{
  %s = tv.sddmm %m, %q, %k : {BSR}, !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> {BSR}
  func.return %s : {BSR}
}}"""
    )
    mask = (
        np.array([0, 2, 2, 3, 3], np.int32),
        np.array([0, 2, 2], np.int32),
        np.ones((3, 16, 16), np.float16),
    )
    q, k = np.ones((64, 32), np.float16), np.ones((32, 64), np.float16)
    work = _bounds(sparse_roofline(module, "s", TARGET, [mask, q, k]))
    assert work["gm->l1"] == 32 * 32 * 2 + 32 * 32 * 2
    assert work["l0c->gm"] == 3 * 256 * 2
    assert work["cube"] == 3 * 256 * 32
