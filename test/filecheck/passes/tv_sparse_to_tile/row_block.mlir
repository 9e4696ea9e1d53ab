// The row ranges' partial rows stored by blocks (row-block, default 4): the
// rows a core computes are consecutive, so each f32 partial row is written into
// a ub block tile at its row in the block (tile.insert_rows; the block's rows
// one after another, so that its loop carries nothing and is pipelined) and
// the block goes to the GM workspace with one DMA; the rows after the last
// whole block one at a time. The block holds as many rows as fit in ub
// double-buffered beside the range of b and the chunk of indices and values
// (the chunk first), and at most a chunk's block of rows.
// 1024 x 1024 x 128 with resident-b=false: 2 ranges of 512 x 12 row groups,
// blocks of 4 rows. row-block=0 or 1 (pypto-lower's sparse-row-block): every
// row its own DMA. At 4096 deep no block fits beside the range and the chunk
// (b_ranges.mlir).
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b resident-b=false}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b resident-b=false row-block=2}' 2>&1 | filecheck %s --check-prefix=TWO
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b resident-b=false row-block=0}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b resident-b=false row-block=1}' 2>&1 | filecheck %s --check-prefix=OFF1
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-resident-b=false sparse-row-block=0}' 2>&1 | filecheck %s --check-prefix=LOWER
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-resident-b=false}' 2>&1 | filecheck %s --check-prefix=LOWERON
// RUN: not pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b row-block=-1}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: partial rows stored 4 at a time from a ub block (the most of row-block=4 that fits in ub double-buffered beside the range and a block's chunk); the offsets in ub, indices and values per block in a chunk of 1024
// CHECK: scf.for
// CHECK:   %[[EMPTY:.*]] = tile.fill %{{.*}} : f32 -> !tile.tile<4x128xf32, ub>
// CHECK:   tile.gather
// CHECK:   %[[R0:.*]] = tile.insert_rows %{{.*}}, %[[EMPTY]][%{{.*}}] : !tile.tile<1x128xf32, ub>, !tile.tile<4x128xf32, ub>
// CHECK:   tile.gather
// CHECK:   %[[R1:.*]] = tile.insert_rows %{{.*}}, %[[R0]][%{{.*}}] : !tile.tile<1x128xf32, ub>, !tile.tile<4x128xf32, ub>
// CHECK:   tile.gather
// CHECK:   %[[R2:.*]] = tile.insert_rows %{{.*}}, %[[R1]][%{{.*}}] : !tile.tile<1x128xf32, ub>, !tile.tile<4x128xf32, ub>
// CHECK:   tile.gather
// CHECK:   %[[R3:.*]] = tile.insert_rows %{{.*}}, %[[R2]][%{{.*}}] : !tile.tile<1x128xf32, ub>, !tile.tile<4x128xf32, ub>
// CHECK:   tile.store %[[R3]], %{{.*}} : !tile.tile<4x128xf32, ub> -> memref<2048x128xf32>
// CHECK: scf.for
// CHECK:   tile.gather
// CHECK:   tile.store %{{.*}} : !tile.tile<1x128xf32, ub> -> memref<2048x128xf32>

// TWO: partial rows stored 2 at a time from a ub block (the most of row-block=2 that fits in ub double-buffered beside the range and a block's chunk)
// TWO: tile.insert_rows %{{.*}} : !tile.tile<1x128xf32, ub>, !tile.tile<2x128xf32, ub>

// OFF: partial rows stored one at a time (row-block=0); the offsets in ub, indices and values per block in a chunk of 1024
// OFF-NOT: tile.insert_rows
// OFF: tile.store %{{.*}} : !tile.tile<1x128xf32, ub> -> memref<2048x128xf32>
// OFF-NOT: tile.insert_rows
// OFF1: partial rows stored one at a time (row-block=1)
// LOWER: partial rows stored one at a time (row-block=0)
// LOWER-NOT: ascend_hw.buf<4x128xf32, ub>
// LOWERON: partial rows stored 4 at a time
// LOWERON: ascend_hw.dma_store %{{.*}} {bursts = 1 : i64, burst_bytes = 2048 : i64} : !ascend_hw.buf<4x128xf32, ub> -> memref<2048x128xf32>
// BAD: error: tv-sparse-to-tile: row-block must be >= 0, got -1
func.func @spmm(%a: !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, %b: !tv.tensor<1024x128xf16>) -> !tv.tensor<1024x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, !tv.tensor<1024x128xf16> -> !tv.tensor<1024x128xf16>
  func.return %c : !tv.tensor<1024x128xf16>
}
