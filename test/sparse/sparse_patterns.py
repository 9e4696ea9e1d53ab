"""Sparsity patterns the sparse tests run on, as scipy arrays (float32 values)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp


def _from_mask(mask: np.ndarray, rng: np.random.Generator) -> sp.csr_array:
    values = rng.standard_normal(mask.shape).astype(np.float32)
    return sp.csr_array(np.where(mask, values, 0.0).astype(np.float32))


def random_density(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    return _from_mask(rng.random(shape) < 0.3, rng)


def empty_rows(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    mask = rng.random(shape) < 0.5
    mask[::2] = False
    return _from_mask(mask, rng)


def all_empty(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    return sp.csr_array(shape, dtype=np.float32)


def one_dense_row(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    mask = np.zeros(shape, dtype=bool)
    mask[shape[0] // 2] = True
    return _from_mask(mask, rng)


def single_nonzero(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    mask = np.zeros(shape, dtype=bool)
    mask[shape[0] - 1, shape[1] // 3] = True
    return _from_mask(mask, rng)


def full(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    """nnz = rows x cols (every entry stored, none zero)."""
    values = rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return sp.csr_array(values)


def power_law(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    """Row lengths ~ Zipf: a few long rows, many short or empty ones."""
    lengths = np.minimum(rng.zipf(1.6, shape[0]) - 1, shape[1])
    mask = np.zeros(shape, dtype=bool)
    for row, length in enumerate(lengths):
        mask[row, rng.choice(shape[1], size=length, replace=False)] = True
    return _from_mask(mask, rng)


def banded(shape: tuple[int, int], rng: np.random.Generator) -> sp.csr_array:
    """Rows of 1 to 20 consecutive columns around the diagonal (clipped):
    runs of consecutive column indices of every length, some longer than a
    group of 8 and crossing groups."""
    rows, cols = shape
    mask = np.zeros(shape, dtype=bool)
    for row in range(rows):
        width = min(cols, int(rng.integers(1, 21)))
        first = min(max(0, row * cols // rows - width // 2), cols - width)
        mask[row, first : first + width] = True
    return _from_mask(mask, rng)


PATTERNS: dict[str, Callable[[tuple[int, int], np.random.Generator], sp.csr_array]] = {
    "random": random_density,
    "empty_rows": empty_rows,
    "all_empty": all_empty,
    "one_dense_row": one_dense_row,
    "single_nonzero": single_nonzero,
    "full": full,
    "power_law": power_law,
}

ODD_SHAPES: tuple[tuple[int, int], ...] = ((1, 1), (7, 13), (33, 5), (64, 96))


def block_pattern(
    shape: tuple[int, int],
    block: tuple[int, int],
    rng: np.random.Generator,
    density: float = 0.4,
) -> sp.bsr_array:
    """A BSR array with about `density` of its blocks stored (dense inside)."""
    grid = (shape[0] // block[0], shape[1] // block[1])
    stored = rng.random(grid) < density
    mask = np.kron(stored, np.ones(block, dtype=bool))
    values = rng.standard_normal(shape).astype(np.float32)
    return sp.bsr_array(np.where(mask, values, 0.0).astype(np.float32), blocksize=block)


def softmax_rows(a: sp.csr_array | sp.bsr_array) -> np.ndarray:
    """Row softmax over the stored entries (the dense form, 0 where not
    stored), in float64: the reference of pto.softmax on a sparse tensor."""
    csr = sp.csr_array(a)  # BSR -> CSR keeps every entry of the stored blocks
    dense = np.zeros(a.shape)
    for row in range(a.shape[0]):
        start, end = csr.indptr[row], csr.indptr[row + 1]
        if start == end:
            continue
        values = csr.data[start:end].astype(np.float64)
        weights = np.exp(values - values.max())
        dense[row, csr.indices[start:end]] = weights / weights.sum()
    return dense


def masked_softmax(
    stored: np.ndarray, q: np.ndarray, k: np.ndarray, scale: float
) -> np.ndarray:
    """softmax(q @ k.T * scale) over the stored positions of each row, 0
    elsewhere and in empty rows, in float64: dense masked attention."""
    product = q.astype(np.float64) @ k.T.astype(np.float64)
    scores = np.where(stored, product * scale, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True, initial=-1e30))
    sums = weights.sum(axis=1, keepdims=True)
    return np.divide(weights, sums, out=np.zeros_like(weights), where=sums > 0)
