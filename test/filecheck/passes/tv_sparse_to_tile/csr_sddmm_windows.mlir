// CSR sddmm by windows of 64 entries (entry-insert, the default): the values
// are split over the cores in whole windows (pypto.core_loop; a row may
// straddle two cores: sddmm has no row state); per window, its 64 column
// indices loaded into ub with one DMA (index-prefetch), the rows its entries
// lie in found by binary searches of the offsets, per row the row of q loaded
// once, per entry the gathered row of k, the dot product in f32, read back
// (tile.extract) and written into a 1x64 f32 tile (tile.insert); the window
// cast and stored with one DMA. The last nnz mod 64 entries (an scf.if) are
// stored one by one. entry-insert=false: the plain nest (a DMA per entry).
// (gather-runs=false where a GM row gather is checked entry by entry: the runs are gather_runs_csr.mlir.)
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny gather-runs=false}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny index-prefetch=false nnz-balance=false}' 2>&1 | filecheck %s --check-prefix=PLAIN
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny sparse-entry-insert=false}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK: remark: tv-sparse-to-tile: tv.sddmm by windows of 64 entries, 32 columns of K a tile: each dot product (a row of lhs times the gathered row of rhs, summed in f32) inserted into a 1x64 f32 tile (tile.insert), stored with one DMA; the window's column indices loaded into ub with one DMA; whole windows split over 2 cores
// CHECK: scf.for
// CHECK:   tile.load %m_offsets
// CHECK:   scf.for %[[W:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     %[[IDS:.*]] = tile.load %m_indices[%[[W]]] : memref<?xi32> -> !tile.tile<64xi32, ub>
// CHECK:     %[[ZERO:.*]] = tile.fill %{{.*}} : f32 -> !tile.tile<1x64xf32, ub>
// CHECK:     scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[ZERO]])
// CHECK:       tile.load %q[%[[R]], %{{.*}}] : memref<8x32xf16> -> !tile.tile<1x32xf16, ub>
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK:         %[[COL:.*]] = tile.extract %[[IDS]][%[[AT:.*]]] : !tile.tile<64xi32, ub> -> index
// CHECK:         tile.load %k[%[[COL]], %{{.*}}]
// CHECK:         tile.reduce_sum
// CHECK:         %[[DOT:.*]] = tile.extract %{{.*}} : !tile.tile<1x1xf32, ub> -> f32
// CHECK:         tile.insert %[[DOT]], %[[ACC]][%{{.*}}, %[[AT]]] : f32, !tile.tile<1x64xf32, ub>
// CHECK:     %[[OUT:.*]] = tile.cast %{{.*}} : !tile.tile<1x64xf32, ub> -> !tile.tile<1x64xf16, ub>
// CHECK:     tile.store %[[OUT]], %{{.*}}[%{{.*}}, %[[W]]] : !tile.tile<1x64xf16, ub>
// CHECK:   scf.if
// CHECK:         tile.store %{{.*}} : !tile.tile<1x1xf16, ub>
// CHECK: } {pypto.core_loop}

// PLAIN: remark: tv-sparse-to-tile: tv.sddmm by windows of 64 entries, {{.*}}; column indices read from GM per entry (index-prefetch=false); one core (nnz-balance=false)
// PLAIN-NOT: pypto.core_loop
// PLAIN-NOT: tile.load %m_indices
// PLAIN: memref.load %m_indices
// PLAIN: tile.insert

// OFF: remark: tv-sparse-to-tile: tv.sddmm by rows, 32 columns of K a tile: per stored entry a row of lhs times the gathered row of rhs, summed in f32, stored alone (entry-insert=false); one core
// OFF-NOT: ascend_hw.store_scalar
func.func @f(%m: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %q: !tv.tensor<8x32xf16>, %k: !tv.tensor<16x32xf16>) -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>> {
  %s = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<8x32xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  func.return %s : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
}
