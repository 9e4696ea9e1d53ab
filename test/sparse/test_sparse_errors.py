"""Malformed sparse input is an error at the call site (frontend) or a located
diagnostic (pypto-run, the tv interpreter), never a wrong result; unsorted and
repeated column indices are sorted and summed by the frontend (as scipy does)
and an error in the IR."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import pypto_mlir as pto
from pypto_mlir.cli import run
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.frontend.backends import sim_backend
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.interp.tensor_view import sparse_argument

K = pto.sym("K")


@pto.kernel(backend="reference")
def dense(a: pto.CSR[(3, 4), pto.f32]):
    return a.to_dense()


@pto.kernel(backend="reference")
def bsr_dense(a: pto.BSR[(4, 4), pto.f32, (2, 2)]):
    return a.to_dense()


F32 = np.float32
BAD_TRIPLES = [
    (
        ([0, 2, 1, 3], [0, 1, 2], np.ones(3, F32)),
        "the row offsets decrease at row 1: 2 then 1",
    ),
    (
        ([0, 1, 2, 4], [0, 1, 2], np.ones(3, F32)),
        "the last row offset is 4, but there are 3 stored entries",
    ),
    (([1, 1, 2, 3], [0, 1, 2], np.ones(3, F32)), "the row offsets must start at 0"),
    (
        ([0, 1, 2, 3], [0, -1, 2], np.ones(3, F32)),
        r"column index -1 at position 1 is outside \[0, 4\)",
    ),
    (
        ([0, 1, 2, 3], [0, 4, 2], np.ones(3, F32)),
        r"column index 4 at position 1 is outside \[0, 4\)",
    ),
    (
        ([0, 1, 2, 3], np.array([0.0, 1.0, 2.0]), np.ones(3, F32)),
        "the column indices must be an integer array, got dtype float64",
    ),
    (
        (np.array([0, 1, 2, 3], np.float32), [0, 1, 2], np.ones(3, F32)),
        r"the row offsets \(indptr\) must be an integer array",
    ),
    (
        ([0, 1, 2, 3], [0, 1, 2], np.ones(4, F32)),
        r"the values \(4\) and the column indices \(3\) have different lengths",
    ),
    (
        ([0, 1, 2], [0, 1], np.ones(2, F32)),
        "expected shape",  # 2 rows for a 3-row annotation
    ),
    (
        ([0, 1, 1, 1], [2**40], np.ones(1, F32)),
        "the column indices do not fit in int32",
    ),
]


@pytest.mark.parametrize(("triple", "message"), BAD_TRIPLES)
def test_bad_triples_fail_at_the_call(triple: tuple[object, ...], message: str) -> None:
    with pytest.raises(pto.KernelError, match=message) as caught:
        dense(triple)
    assert "argument 'a'" in str(caught.value)
    assert caught.value.location is not None
    assert caught.value.location.file.endswith("test_sparse_errors.py")


def test_bsr_errors_count_blocks() -> None:
    with pytest.raises(pto.KernelError, match=r"expected shape \(4, 4\), got \(6, 4\)"):
        bsr_dense(([0, 1, 1, 1], [0], np.ones((1, 2, 2), F32)))
    with pytest.raises(
        pto.KernelError, match=r"must have shape \(1, 2, 2\) for 2x2 blocks"
    ):
        bsr_dense(([0, 1, 1], [0], np.ones((1, 2, 3), F32)))
    with pytest.raises(
        pto.KernelError, match=r"expected \(2, 2\) blocks, got \(1, 1\)"
    ):
        bsr_dense(sp.bsr_array(np.eye(4, dtype=F32), blocksize=(1, 1)))
    with pytest.raises(pto.KernelError, match=r"expected a bsr_array, got a csr one"):
        bsr_dense(sp.csr_array(np.eye(4, dtype=F32)))


def test_unsorted_and_duplicate_indices_are_sorted_and_summed() -> None:
    """As scipy's sum_duplicates: row 0 stores column 2 twice (1 + 2) and out
    of order; the kernel sees the canonical form."""
    triple = ([0, 3, 3, 4], [2, 0, 2, 1], np.array([1.0, 5.0, 2.0, 7.0], F32))
    expected = sp.csr_array((triple[2], triple[1], triple[0]), shape=(3, 4))
    np.testing.assert_array_equal(dense(triple), expected.toarray())
    unsorted = sp.csr_array((triple[2], triple[1], triple[0]), shape=(3, 4))
    assert not unsorted.has_canonical_format
    np.testing.assert_array_equal(dense(unsorted), expected.toarray())


def test_values_that_overflow_and_odd_annotations() -> None:
    @pto.kernel(backend="reference")
    def half(a: pto.CSR[(1, 2), pto.f16]):
        return a.to_dense()

    with pytest.raises(pto.KernelError, match="values overflow f16"):
        half(([0, 1], [0], np.array([1e6], F32)))
    with pytest.raises(pto.KernelError, match="float pto dtype"):
        pto.CSR[(4, 4), pto.i32]
    with pytest.raises(pto.KernelError, match="not a multiple of the block"):
        pto.BSR[(6, 4), pto.f16, (4, 4)]
    with pytest.raises(pto.KernelError, match="two sizes >= 1"):
        pto.BSR[(4, 4), pto.f16, (0, 4)]
    with pytest.raises(pto.KernelError, match="expected a scipy.sparse csr_array or"):
        dense(np.zeros((3, 4), F32))


def test_a_triple_needs_its_column_count() -> None:
    @pto.kernel(backend="reference")
    def columns(a: pto.CSR[(2, K), pto.f32]):
        return a.to_dense()

    with pytest.raises(pto.KernelError, match="does not say its column count K"):
        columns(([0, 0, 0], [], np.zeros(0, F32)))
    assert columns(sp.csr_array((2, 5), dtype=F32)).shape == (2, 5)


def test_sparse_operands_are_checked_while_tracing() -> None:
    with pytest.raises(pto.KernelError, match="dtype mismatch in '@'"):

        @pto.kernel
        def mixed(a: pto.CSR[(4, 4), pto.f16], b: pto.Tensor[(4, 4), pto.f32]):
            return a @ b

        mixed.mlir()
    with pytest.raises(pto.KernelError, match="shape mismatch in pto.sddmm"):

        @pto.kernel
        def scores(m: pto.CSR[(4, 4), pto.f16], q: pto.Tensor[(4, 8), pto.f16]):
            return pto.sddmm(m, q, q)

        scores.mlir()
    with pytest.raises(pto.KernelError, match="the index tensor must be i32 or i16"):

        @pto.kernel
        def pick(x: pto.Tensor[(4, 4), pto.f16], i: pto.Tensor[(2,), pto.f32]):
            return x[i]

        pick.mlir()


def test_gather_out_of_range_is_a_runtime_error_at_the_line() -> None:
    @pto.kernel(backend="reference")
    def pick(x: pto.Tensor[(4, 2), pto.f32], i: pto.Tensor[(2,), pto.i32]):
        return x[i]

    with pytest.raises(
        pto.KernelRuntimeError, match=r"index 4 at \(1,\) is outside \[0, 4\)"
    ):
        pick(np.zeros((4, 2), F32), np.array([0, 4], np.int32))
    with pytest.raises(pto.KernelRuntimeError, match="index -1"):
        pick(np.zeros((4, 2), F32), np.array([-1, 0], np.int32))


def test_the_simulator_backend_runs_a_sparse_kernel() -> None:
    """tv-sparse-to-tile's nests run through tile-to-hw on the simulator (the
    scalar unit reads the offsets and indices): the result is scipy's."""

    @pto.kernel(backend="sim")
    def spmm(a: pto.CSR[(16, 16), pto.f16], b: pto.Tensor[(16, 16), pto.f16]):
        return a @ b

    rng = np.random.default_rng(0)
    a = sp.random_array((16, 16), density=0.2, format="csr", dtype=F32, rng=rng)
    a.data = a.data.astype(np.float16).astype(F32)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    expected = (a @ b.astype(F32)).astype(np.float16)
    np.testing.assert_array_equal(spmm(a, b), expected)


@pytest.mark.parametrize("target", ["tiny", "ascend910b"])
def test_the_simulator_backend_returns_a_sparse_result(target: str) -> None:
    """A sparse result (softmax of a scaled CSR tensor) on the simulator: its
    values buffer as long as the argument's, returned as a scipy array of the
    argument's pattern. The sim backend allocated the dense shape instead
    ('argument #3 (%out) is a memref<?xf16>: got an array of shape [37, 29]'),
    for every input; the frontend sums the repeated column of a triple."""

    def softmax(a: pto.CSR[(37, 29), pto.f16]):
        return pto.softmax(a * 0.5)

    reference = pto.kernel(backend="reference")(softmax)
    simulated = pto.kernel(backend=sim_backend(target))(softmax)
    rng = np.random.default_rng(1)
    a = sp.random_array((37, 29), density=0.3, format="csr", dtype=F32, rng=rng)
    triple = ([0, 3] + [3] * 35 + [6], [5, 5, 1, 0, 28, 2], np.ones(6, F32))
    empty = sp.csr_array((37, 29), dtype=F32)
    for argument in (a, triple, empty):
        got, expected = simulated(argument), reference(argument)
        assert isinstance(got, sp.csr_array)
        np.testing.assert_array_equal(got.indptr, expected.indptr)
        np.testing.assert_array_equal(got.indices, expected.indices)
        np.testing.assert_array_equal(got.data, expected.data)


def test_a_sparse_result_needs_an_arguments_pattern() -> None:
    """The simulator backend refuses, at the call, a sparse result whose
    offsets and indices no argument gives."""

    @pto.kernel(backend=sim_backend("tiny"))
    def passthrough(a: pto.CSR[(8, 16), pto.f16]):
        return a

    with pytest.raises(pto.KernelError) as caught:
        passthrough(sp.csr_array((8, 16), dtype=F32))
    assert "Traceback" not in str(caught.value)


def test_the_interpreter_requires_the_canonical_form() -> None:
    """Below the frontend nothing is repaired: the IR's format is canonical."""
    sparse_type = tv.TensorViewType(
        tv.f32, (2, 4), tv.CsrEncodingAttr(2, 4, -1 << 63, tv.i32)
    )
    i32 = np.int32
    with pytest.raises(ValueError, match="at position 1 it repeats"):
        sparse_argument(
            sparse_type,
            (np.array([0, 2, 2], i32), np.array([1, 1], i32), np.ones(2, F32)),
        )
    with pytest.raises(ValueError, match="at position 1 it decreases"):
        sparse_argument(
            sparse_type,
            (np.array([0, 2, 2], i32), np.array([3, 1], i32), np.ones(2, F32)),
        )
    with pytest.raises(ValueError, match="must be int32 .* got int64"):
        sparse_argument(
            sparse_type, (np.array([0, 0, 0]), np.array([], i32), np.ones(0, F32))
        )
    ok = sparse_argument(
        sparse_type, (np.array([0, 1, 2], i32), np.array([3, 0], i32), np.ones(2, F32))
    )
    assert isinstance(ok, SparseArray) and ok.nnz == 2


ASSEMBLE = """
func.func @a(%o: !tv.tensor<4xi32>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?xf32>) -> !tv.tensor<3x4xf32> {
  %s = tv.assemble %o, %i, %v : !tv.tensor<4xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf32> -> !tv.tensor<3x4xf32, #tv.csr<rows = 3, cols = 4, nnz = ?, index = i32>>
  %d = tv.to_dense %s : !tv.tensor<3x4xf32, #tv.csr<rows = 3, cols = 4, nnz = ?, index = i32>> -> !tv.tensor<3x4xf32>
  func.return %d : !tv.tensor<3x4xf32>
}
"""


@pytest.mark.parametrize(
    ("offsets", "indices", "message"),
    [
        ([0, 2, 1, 3], [0, 1, 2], "the row offsets decrease at row 1"),
        ([0, 1, 2, 2], [0, 1, 2], "the last row offset is 2, but there are 3"),
        ([0, 1, 2, 3], [0, 9, 2], "column index 9 at position 1"),
        ([0, 2, 2, 3], [1, 0, 2], "the column indices of a row must be sorted"),
    ],
)
def test_pypto_run_locates_bad_buffers(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    offsets: list[int],
    indices: list[int],
    message: str,
) -> None:
    source = tmp_path / "assemble.mlir"
    source.write_text(ASSEMBLE)
    np.savez(
        tmp_path / "in.npz",
        arg0=np.array(offsets, np.int32),
        arg1=np.array(indices, np.int32),
        arg2=np.ones(len(indices), F32),
    )
    status = run.main([str(source), "--inputs", str(tmp_path / "in.npz")])
    assert status == 1
    err = capsys.readouterr().err
    assert f"assemble.mlir:3:3: error: tv.assemble: {message}" in err
    assert "Traceback" not in err
