"""Sparse tensors at run time and the reference kernels of the sparse tv ops.

A CSR or block-CSR (BSR) tensor is a `SparseArray`: its row offsets, column
indices and values (scipy's `indptr`, `indices`, `data`), the dense shape and
the block shape (1x1 for CSR). Every kernel treats CSR as BSR with 1x1 blocks,
so one code path serves both, and every kernel works on whole numpy arrays in
time linear in the stored entries (segment sums over the row offsets, no Python
loop over rows).

The format is canonical: column indices strictly increase within a row (sorted,
no duplicates). `check_sparse` says what is wrong with arrays that are not a
valid tensor; `canonicalize` sorts indices and sums duplicates as scipy's
`sum_duplicates` does (the frontend applies it to user input, docs/sparse.md).

Numerics match the dense reference (`pypto_mlir.interp.tensor_view`): products
and sums in f32, one rounding to the element type at the end.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Attribute

from pypto_mlir.numerics import ordered_matmul, round_to_element_type


class SparseFormatError(ValueError):
    """Arrays that do not form a valid CSR/BSR tensor; the message says why."""


@dataclass(frozen=True)
class SparseArray:
    """A CSR/BSR tensor: `offsets` (block rows + 1), `indices` (nnz block
    columns), `values` (`nnz` for CSR, `nnz x bm x bn` for BSR)."""

    shape: tuple[int, int]
    block: tuple[int, int]
    offsets: np.ndarray
    indices: np.ndarray
    values: np.ndarray

    @property
    def nnz(self) -> int:
        """Stored entries (blocks for BSR), scipy's `nnz` for CSR / `nnzb` for BSR."""
        return int(self.indices.shape[0])

    @property
    def grid(self) -> tuple[int, int]:
        """(block rows, block columns)."""
        return (self.shape[0] // self.block[0], self.shape[1] // self.block[1])

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    def blocks(self) -> np.ndarray:
        """The values as `nnz x bm x bn` (a view; CSR's entries are 1x1 blocks)."""
        return self.values.reshape(self.nnz, *self.block)

    def block_rows(self) -> np.ndarray:
        """The block row of each stored entry (nondecreasing)."""
        counts = np.diff(self.offsets.astype(np.int64))
        return np.repeat(np.arange(self.grid[0], dtype=np.int64), counts)

    def with_values(self, values: np.ndarray) -> SparseArray:
        """The same pattern with other values (of the stored shape)."""
        return SparseArray(
            self.shape,
            self.block,
            self.offsets,
            self.indices,
            values.reshape(self.values.shape),
        )


RANDOM_DENSITY = 0.3
"""The share of the entries (blocks) of a random sparse tensor that is stored
(`pypto-run --random`, the auto-tuner's inputs)."""


def random_sparse(
    shape: tuple[int, int],
    block: tuple[int, int],
    index_dtype: np.dtype,
    rng: np.random.Generator,
    draw_values: Callable[[tuple[int, ...]], np.ndarray],
) -> SparseArray:
    """A random CSR/BSR tensor: each entry (block) stored with probability
    `RANDOM_DENSITY`, then its values from `draw_values(values shape)`; the
    draws from `rng` in that order, so a seed gives the same tensor anywhere."""
    grid = (shape[0] // block[0], shape[1] // block[1])
    stored = rng.random(grid) < RANDOM_DENSITY
    offsets = np.concatenate(([0], np.cumsum(stored.sum(axis=1)))).astype(index_dtype)
    indices = np.nonzero(stored)[1].astype(index_dtype)
    values = draw_values(values_shape(int(indices.shape[0]), block))
    return SparseArray(shape, block, offsets, indices, values)


def values_shape(nnz: int, block: Sequence[int]) -> tuple[int, ...]:
    return (nnz,) if tuple(block) == (1, 1) else (nnz, *block)


def check_sparse(
    shape: Sequence[int],
    block: Sequence[int],
    offsets: np.ndarray,
    indices: np.ndarray,
    values: np.ndarray,
    canonical: bool = True,
) -> None:
    """Raise SparseFormatError naming the first way the arrays are not a valid
    CSR/BSR tensor of `shape`, canonical unless `canonical` is False (no dtype
    conversions: integer arrays are required for the offsets and indices)."""
    rows, cols = shape
    bm, bn = block
    if rows % bm or cols % bn:
        raise SparseFormatError(
            f"the shape {rows}x{cols} is not a multiple of the block {bm}x{bn}"
        )
    block_rows, block_cols = rows // bm, cols // bn
    unit = "block " if (bm, bn) != (1, 1) else ""
    for what, array in (("row offsets", offsets), ("column indices", indices)):
        if array.dtype.kind not in "iu":
            raise SparseFormatError(
                f"the {what} must be an integer array, got dtype {array.dtype}"
            )
        if array.ndim != 1:
            raise SparseFormatError(
                f"the {what} must be one-dimensional, got shape {array.shape}"
            )
    if offsets.shape[0] != block_rows + 1:
        raise SparseFormatError(
            f"the row offsets have {offsets.shape[0]} entries, but {block_rows} "
            f"{unit}rows need {block_rows + 1}"
        )
    nnz = indices.shape[0]
    if values.shape[:1] != (nnz,):
        raise SparseFormatError(
            f"the values ({values.shape[0] if values.ndim else 'a scalar'}) and "
            f"the column indices ({nnz}) have different lengths"
        )
    want = values_shape(nnz, block)
    if values.shape != want:
        raise SparseFormatError(
            f"the values must have shape {want} for {bm}x{bn} blocks, got "
            f"{values.shape}"
        )
    starts = offsets.astype(np.int64)
    if starts[0] != 0:
        raise SparseFormatError(f"the row offsets must start at 0, got {starts[0]}")
    steps = np.diff(starts)
    if np.any(steps < 0):
        row = int(np.argmax(steps < 0))
        raise SparseFormatError(
            f"the row offsets decrease at {unit}row {row}: {starts[row]} then "
            f"{starts[row + 1]}"
        )
    if starts[-1] != nnz:
        raise SparseFormatError(
            f"the last row offset is {starts[-1]}, but there are {nnz} stored "
            f"{'blocks' if unit else 'entries'} (it must equal nnz)"
        )
    columns = indices.astype(np.int64)
    bad = (columns < 0) | (columns >= block_cols)
    if np.any(bad):
        at = int(np.argmax(bad))
        raise SparseFormatError(
            f"column index {columns[at]} at position {at} is outside [0, "
            f"{block_cols}) ({block_cols} {unit}columns)"
        )
    if canonical and nnz > 1:
        same_row = np.ones(nnz - 1, dtype=bool)
        row_starts = starts[1:-1]
        same_row[row_starts[(row_starts > 0) & (row_starts < nnz)] - 1] = False
        unsorted = same_row & (np.diff(columns) <= 0)
        if np.any(unsorted):
            at = int(np.argmax(unsorted))
            kind = "repeats" if columns[at] == columns[at + 1] else "decreases"
            raise SparseFormatError(
                f"the column indices of a row must be sorted and unique, but at "
                f"position {at + 1} it {kind} ({columns[at]} then "
                f"{columns[at + 1]}); the frontend sorts and sums duplicates"
            )


def canonicalize(
    shape: Sequence[int],
    block: Sequence[int],
    offsets: np.ndarray,
    indices: np.ndarray,
    values: np.ndarray,
    element_type: Attribute,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort the column indices of each row and sum duplicates (in f32, rounded
    once to `element_type`), as scipy's `sum_duplicates`. The arrays must be
    valid but for the order (checked before and after by the caller)."""
    nnz = indices.shape[0]
    starts = offsets.astype(np.int64)
    columns = indices.astype(np.int64)
    if nnz <= 1:
        return offsets, indices, values
    grid_cols = shape[1] // block[1]
    rows = np.repeat(np.arange(starts.shape[0] - 1), np.diff(starts))
    keys = rows * grid_cols + columns
    if np.all(np.diff(keys) > 0):
        return offsets, indices, values
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    first = np.concatenate(([True], np.diff(keys) != 0))
    segment_starts = np.flatnonzero(first)
    summed = np.add.reduceat(values[order].astype(np.float32), segment_starts, axis=0)
    kept = keys[segment_starts]
    kept_rows = kept // grid_cols
    counts = np.bincount(kept_rows, minlength=starts.shape[0] - 1)
    new_offsets = np.concatenate(([0], np.cumsum(counts))).astype(offsets.dtype)
    new_indices = (kept % grid_cols).astype(indices.dtype)
    new_values = round_to_element_type(summed, element_type)
    return new_offsets, new_indices, new_values


def _segment_sum(
    terms_of: Callable[[np.ndarray], Iterable[np.ndarray]],
    offsets: np.ndarray,
    segments: int,
    shape: tuple[int, ...],
    dtype: type[np.generic] = np.float32,
) -> np.ndarray:
    """Sum each row's terms over its range of `offsets`, one term after another
    in entry order (the order of a row loop, so that a lowering can match it
    exactly); rows with no entry are 0. `terms_of(entries)` gives the terms of
    those stored entries (each `len(entries) x shape`), several in order when an
    entry is a block contributing one term per column of it. Rows are visited
    longest first, so that step k adds the k-th entry of a prefix of them:
    whole-array work, linear in the terms."""
    starts = offsets[:-1].astype(np.int64)
    counts = np.diff(offsets.astype(np.int64))
    order = np.argsort(-counts, kind="stable")
    starts, counts = starts[order], counts[order]
    sums = np.zeros((segments, *shape), dtype=dtype)
    longest = int(counts[0]) if segments else 0
    # active[k]: how many rows have more than k terms (counts sorted descending)
    active = np.searchsorted(-counts, -np.arange(longest), side="left")
    for k in range(longest):
        rows = int(active[k])
        for term in terms_of(starts[:rows] + k):
            sums[:rows] += term
    result = np.empty_like(sums)
    result[order] = sums
    return result


def _segment_max(terms: np.ndarray, offsets: np.ndarray, segments: int) -> np.ndarray:
    result = np.full((segments, *terms.shape[1:]), -np.inf, dtype=terms.dtype)
    starts = offsets[:-1].astype(np.int64)
    nonempty = np.diff(offsets.astype(np.int64)) > 0
    if np.any(nonempty):
        result[nonempty] = np.maximum.reduceat(terms, starts[nonempty], axis=0)
    return result


def to_dense(a: SparseArray) -> np.ndarray:
    """Stored values in place, zeros elsewhere (exact: no rounding)."""
    (grid_rows, grid_cols), (bm, bn) = a.grid, a.block
    dense = np.zeros((grid_rows, grid_cols, bm, bn), dtype=a.values.dtype)
    dense[a.block_rows(), a.indices.astype(np.int64)] = a.blocks()
    return np.ascontiguousarray(dense.transpose(0, 2, 1, 3).reshape(a.shape))


def spmm(a: SparseArray, b: np.ndarray, element_type: Attribute) -> np.ndarray:
    """`a @ b` for a dense matrix (K x N) or vector (K): f32 products and sums,
    one rounding."""
    grid_rows, grid_cols = a.grid
    columns = np.asarray(b, dtype=np.float32).reshape(
        b.shape[0], math.prod(b.shape[1:])
    )
    n = columns.shape[1]
    b_blocks = columns.reshape(grid_cols, a.block[1], n)
    gathered = b_blocks[a.indices.astype(np.int64)]  # nnz x bn x n
    blocks = a.blocks().astype(np.float32)  # nnz x bm x bn

    def terms_of(entries: np.ndarray) -> Iterator[np.ndarray]:
        # a block's columns one after another: the k order of its mmad
        for column in range(a.block[1]):
            yield blocks[entries, :, column, None] * gathered[entries, column, None, :]

    with np.errstate(all="ignore"):
        sums = _segment_sum(terms_of, a.offsets, grid_rows, (a.block[0], n))
    result = sums.reshape(a.shape[0], n).reshape(a.shape[0], *b.shape[1:])
    return round_to_element_type(result, element_type)


def sddmm(
    mask: SparseArray,
    lhs: np.ndarray,
    rhs: np.ndarray,
    transpose_b: bool,
    element_type: Attribute,
) -> SparseArray:
    """`(lhs @ rhs)` at the mask's stored entries, the mask's pattern kept."""
    (grid_rows, grid_cols), (bm, bn) = mask.grid, mask.block
    k = lhs.shape[1]
    right = np.asarray(rhs, dtype=np.float32)
    if not transpose_b:
        right = right.T  # N x K: row j of it is column j of rhs
    left_blocks = np.asarray(lhs, dtype=np.float32).reshape(grid_rows, bm, k)
    right_blocks = right.reshape(grid_cols, bn, k)
    with np.errstate(all="ignore"):
        values = ordered_matmul(
            left_blocks[mask.block_rows()],
            right_blocks[mask.indices.astype(np.int64)].transpose(0, 2, 1),
        )
    rounded = round_to_element_type(values, element_type)
    return mask.with_values(rounded)


def sparse_softmax(a: SparseArray, element_type: Attribute) -> SparseArray:
    """Softmax of each row over its stored values (f32, one rounding)."""
    grid_rows = a.grid[0]
    values = a.blocks().astype(np.float32)  # nnz x bm x bn
    rows = a.block_rows()
    with np.errstate(all="ignore"):
        row_max = _segment_max(values.max(axis=2), a.offsets, grid_rows)  # gr x bm
        shifted = np.exp(values - row_max[rows][:, :, None])
        block_sums = shifted.sum(axis=2)  # nnz x bm
        row_sum = _segment_sum(
            lambda entries: (block_sums[entries],), a.offsets, grid_rows, (a.block[0],)
        )
        result = shifted / row_sum[rows][:, :, None]
    return a.with_values(round_to_element_type(result, element_type))


def gather(source: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """`source[indices]` along the first dimension; an index outside
    `[0, rows)` raises ValueError naming it (no wrap-around)."""
    rows = source.shape[0]
    positions = np.asarray(indices).astype(np.int64)
    bad = (positions < 0) | (positions >= rows)
    if np.any(bad):
        at = np.unravel_index(int(np.argmax(bad)), positions.shape)
        raise ValueError(
            f"index {positions[at]} at {tuple(int(i) for i in at)} is outside "
            f"[0, {rows}) (the rows of the source)"
        )
    return np.ascontiguousarray(source[positions])
