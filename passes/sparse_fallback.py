"""The dense fallback of CSR spmm: the cost model that chooses it
(docs/sparse.md, *The dense fallback*).

`nnz` is a run-time size, so the choice is made when the kernel runs: the
model gives the count of stored entries from which densifying the matrix
(`to_dense` into a GM temporary, then tv-to-tile's matmul on the cube) is
estimated faster than the row nest, and the kernel compares `nnz` (its last
row offset) with it. Both estimates are those of the busiest core, from the
target's instruction costs (`pypto_mlir.targets.cost`) and the matmul model
(`matmul_model.matmul_cycles`), with the stored entries spread evenly over the
cores the rows are split over:

- row nest, per stored entry and column tile (a chain, nothing overlaps: the
  accumulator is carried): the scalar read of its column index (a DataCache
  miss every line of indices), the 1x1 DMA of its value, the DMA of the
  gathered row of b (GM reads at the L2's hit latency on a target with an L2),
  the f32 casts, mul and add; per row, two offset reads and
  the store of its row tile (offsets and indices are read through the
  DataCache, a miss per line);
- dense path: `to_dense` (per row the zero tiles stored, per entry its index
  read and a 1x1 load and store) then the matmul's estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pypto_mlir.targets import Target, cost

from .matmul_model import MatmulRequest, auto_matmul_tiling, matmul_cycles

INDEX_BYTES = 8
"""Bytes of an index read by the scalar unit (`memref<?xindex>`: int64)."""


@dataclass(frozen=True)
class FallbackCosts:
    """Estimated cycles of the busiest core: `sparse + sparse_per_entry * nnz`
    against `dense + dense_per_entry * nnz`."""

    sparse: float
    sparse_per_entry: float
    dense: float
    dense_per_entry: float
    matmul: float
    """The matmul's part of `dense`."""

    def threshold(self) -> int | None:
        """The fewest stored entries for which the dense path is estimated
        faster; None: never."""
        slope = self.sparse_per_entry - self.dense_per_entry
        if slope <= 0:
            return None
        return max(0, math.ceil((self.dense - self.sparse) / slope))

    def text(self, threshold: int) -> str:
        return (
            f"row nest {self.sparse:.0f} + {self.sparse_per_entry:.2f} x nnz "
            f"cycles, to_dense and matmul {self.dense:.0f} + "
            f"{self.dense_per_entry:.2f} x nnz (matmul {self.matmul:.0f})"
        )


def spmm_fallback_costs(
    target: Target,
    shape: tuple[int, int, int],
    element_type: str,
    element_bytes: int,
    cols: int,
    dense_cols: int,
    fractal: int,
) -> FallbackCosts | None:
    """The costs of CSR spmm `(m x k) @ (k x n)` by the row nest with row tiles
    of `cols` columns and by its dense fallback (`to_dense` with tiles of
    `dense_cols`); None when no matmul tiling fits."""
    m, k, n = shape
    cores = max(1, min(target.cores, m))
    rows = math.ceil(m / cores)
    tiles = math.ceil(n / cols)
    scalar = target.scalar
    index_read = (
        (scalar.dcache_line // INDEX_BYTES - 1) * scalar.dcache_hit + scalar.gm_load
    ) / (scalar.dcache_line // INDEX_BYTES)

    def dma(path: tuple[str, str], length: int) -> int:
        """A GM read hits the L2 when the target has one (b's rows are
        gathered again and again; a line holds many values), as the matmul
        model assumes for shared panels."""
        return cost.l2_hit_dma_cycles(target, path, 1, length)

    def vector(op: str, elements: int, dtype: str) -> int:
        return cost.vector_cycles_for(target, op, elements, dtype)

    width = min(cols, n)
    per_entry = tiles * (
        index_read
        + dma(("gm", "ub"), element_bytes)
        + dma(("gm", "ub"), width * element_bytes)
        + vector("cast", width, "f32")
        + vector("cast", 1, "f32")
        + vector("mul", width, "f32")
        + vector("add", width, "f32")
    )
    per_row = 2 * index_read + tiles * (
        vector("dup", width, "f32")
        + vector("cast", width, element_type)
        + dma(("ub", "gm"), width * element_bytes)
    )
    dense_row = 2 * index_read + math.ceil(k / dense_cols) * (
        vector("dup", min(dense_cols, k), element_type)
        + dma(("ub", "gm"), min(dense_cols, k) * element_bytes)
    )
    dense_entry = (
        index_read + dma(("gm", "ub"), element_bytes) + dma(("ub", "gm"), element_bytes)
    )
    request = MatmulRequest(
        m=m,
        n=n,
        k=k,
        in_bytes=element_bytes,
        acc_bytes=4,
        fractal=fractal,
        epilogue=None,
        in_type=element_type,
        out_bytes=element_bytes,
        cores=target.cores,
    )
    tiling = auto_matmul_tiling(target, request)
    if tiling is None:
        return None
    matmul = matmul_cycles(target, request, tiling)
    return FallbackCosts(
        sparse=rows * per_row,
        sparse_per_entry=per_entry / cores,
        dense=rows * dense_row + matmul,
        dense_per_entry=dense_entry / cores,
        matmul=matmul,
    )
