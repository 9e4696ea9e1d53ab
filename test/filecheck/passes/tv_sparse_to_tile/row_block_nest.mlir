// The CSR row nest with a resident slice of b stores its result rows by
// blocks too (row-block, default 4): 1024 x 1024 x 128 f16, 12 row groups x 2
// slices of 64. A core's rows are consecutive: the first and last, which a
// divided-rows share may cut (their sums go to the workspace), alone; the
// rows between by blocks of 4, each row's f32 sum written into a 4 x 64 ub
// block (tile.insert_rows), the block cast and stored with one DMA; the rows
// after the last whole block one at a time. row-block=0: one DMA a row.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b row-block=0}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-row-block=0}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK: b kept in ub as 2 column slice(s) of 64
// CHECK-SAME: result rows stored 4 at a time from a ub block (the most of row-block=4 that fits in ub double-buffered beside the slice)
// CHECK: tile.store %{{.*}}, %out[%{{.*}}, %{{.*}}] : !tile.tile<1x64xf16, ub> -> memref<1024x128xf16>
// CHECK: %[[EMPTY:.*]] = tile.fill %{{.*}} : f32 -> !tile.tile<4x64xf32, ub>
// CHECK: tile.gather
// CHECK: %[[R0:.*]] = tile.insert_rows %{{.*}}, %[[EMPTY]][%{{.*}}] : !tile.tile<1x64xf32, ub>, !tile.tile<4x64xf32, ub>
// CHECK: %[[R1:.*]] = tile.insert_rows %{{.*}}, %[[R0]][%{{.*}}] : !tile.tile<1x64xf32, ub>, !tile.tile<4x64xf32, ub>
// CHECK: %[[R2:.*]] = tile.insert_rows %{{.*}}, %[[R1]][%{{.*}}] : !tile.tile<1x64xf32, ub>, !tile.tile<4x64xf32, ub>
// CHECK: %[[R3:.*]] = tile.insert_rows %{{.*}}, %[[R2]][%{{.*}}] : !tile.tile<1x64xf32, ub>, !tile.tile<4x64xf32, ub>
// CHECK: %[[HALF:.*]] = tile.cast %[[R3]] : !tile.tile<4x64xf32, ub> -> !tile.tile<4x64xf16, ub>
// CHECK: tile.store %[[HALF]], %out[%{{.*}}, %{{.*}}] : !tile.tile<4x64xf16, ub> -> memref<1024x128xf16>

// OFF: result rows stored one at a time (row-block=0)
// OFF-NOT: insert_rows
func.func @spmm(%a: !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, %b: !tv.tensor<1024x128xf16>) -> !tv.tensor<1024x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, !tv.tensor<1024x128xf16> -> !tv.tensor<1024x128xf16>
  func.return %c : !tv.tensor<1024x128xf16>
}
