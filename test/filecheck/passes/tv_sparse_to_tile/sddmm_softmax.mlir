// sparse_softmax: per (block) row, three passes over the stored blocks, each
// one bm x bn tile (the elementwise max of the blocks then one row reduction,
// sum of exp in entry order, quotients
// stored to the result's values); the entry loops are marked
// pypto.row_entries (tile-to-hw splits the rows over the cores); the result
// is its values buffer only (%out: memref<?xf16>), the pattern is the
// operand's (entry-window=1: CSR entries one by one, csr_softmax_windows.mlir
// has the windows; nnz-balance=false: the one-core form, csr_softmax_split.mlir
// has the split). Block-CSR sddmm on the cube: per block row the q rows once, per
// stored block the k rows moved transposed into L0B and one matmul.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b entry-window=1 nnz-balance=false}' 2>&1 | filecheck %s

// CHECK: remark: tv-sparse-to-tile: sparse_softmax by 1-row blocks: row max, sum of exp and the quotients over the stored blocks in three passes, each block one 1x1 tile; one core (a block is not whole 32-byte GM blocks: two cores would write one)
// CHECK: remark: tv-sparse-to-tile: sparse_softmax by 16-row blocks: row max, sum of exp and the quotients over the stored blocks in three passes, each block one 16x16 tile; the block rows split over the cores
// CHECK: remark: tv-sparse-to-tile: tv.sddmm of 16x16 blocks on the cube, K = 64 in one step: the q rows of a block row are loaded once, only the stored blocks are computed

// CHECK-LABEL: func.func @softmax(%a_offsets: memref<9xi32>, %a_indices: memref<?xi32>, %a_values: memref<?xf16>, %out: memref<?xf16>)
// CHECK:   %[[RESULT:.*]] = memref.expand_shape %out {{.*}} : memref<?xf16> into memref<?x1x1xf16>
// CHECK:   scf.for
// CHECK:     memref.load %a_offsets
// CHECK:     %[[START:.*]] = arith.index_cast
// CHECK:     memref.load %a_offsets
// CHECK:     %[[END:.*]] = arith.index_cast
// CHECK:     %[[MOST:.*]] = scf.for %{{.*}} = %[[START]] to %[[END]] {{.*}} -> (!tile.tile<1x1xf16, ub>)
// CHECK:       tile.max
// CHECK:     } {pypto.row_entries}
// CHECK:     %[[WIDE:.*]] = tile.cast %[[MOST]]
// CHECK:     %[[MAX:.*]] = tile.reduce_max %[[WIDE]]
// CHECK:     %[[SUM:.*]] = scf.for %{{.*}} = %[[START]] to %[[END]] {{.*}} -> (!tile.tile<1x1xf32, ub>)
// CHECK:       tile.sub %{{.*}}, %[[MAX]]
// CHECK:       tile.exp
// CHECK:       tile.reduce_sum
// CHECK:     scf.for %[[J:.*]] = %[[START]] to %[[END]]
// CHECK:       tile.div %{{.*}}, %[[SUM]]
// CHECK:       tile.store %{{.*}}, %[[RESULT]][%[[J]], %{{.*}}, %{{.*}}]
// CHECK:     } {pypto.row_entries}

// CHECK-LABEL: func.func @block_softmax(%a_offsets: memref<3xi32>, %a_indices: memref<?xi32>, %a_values: memref<?x16x16xf32>, %out: memref<?x16x16xf32>)
// CHECK:     %[[MOST:.*]] = scf.for {{.*}} -> (!tile.tile<16x16xf32, ub>)
// CHECK:       %[[BLOCK:.*]] = tile.load %a_values[%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x16x16xf32> -> !tile.tile<16x16xf32, ub>
// CHECK:       tile.max %{{.*}}, %[[BLOCK]] : !tile.tile<16x16xf32, ub>
// CHECK:     } {pypto.row_entries}
// CHECK:     %[[MAX:.*]] = tile.reduce_max %[[MOST]], axis = 1 : !tile.tile<16x16xf32, ub> -> !tile.tile<16x1xf32, ub>
// CHECK:     %[[SUM:.*]] = scf.for {{.*}} -> (!tile.tile<16x1xf32, ub>)
// CHECK:       tile.sub %{{.*}}, %[[MAX]] : !tile.tile<16x16xf32, ub>, !tile.tile<16x1xf32, ub>
// CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:       tile.div %{{.*}}, %[[SUM]] : !tile.tile<16x16xf32, ub>, !tile.tile<16x1xf32, ub>
// CHECK:       tile.store %{{.*}}, %out[%[[J]], %{{.*}}, %{{.*}}] : !tile.tile<16x16xf32, ub> -> memref<?x16x16xf32>
// CHECK:     } {pypto.row_entries}

// CHECK-LABEL: func.func @sddmm(%m_offsets: memref<3xi32>, %m_indices: memref<?xi32>, %m_values: memref<?x16x16xf16>, %q: memref<32x64xf16>, %k: memref<32x64xf16>, %out: memref<?x16x16xf16>)
// CHECK:   scf.for
// CHECK:     tile.load %q{{.*}} -> !tile.tile<16x64xf16, l1, layout = nz>
// CHECK:     %[[A:.*]] = tile.move {{.*}} -> !tile.tile<16x64xf16, l0a>
// CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:       memref.load %m_indices[%[[J]]]
// CHECK:       tile.load %k{{.*}} -> !tile.tile<16x64xf16, l1, layout = nz>
// CHECK:       %[[B:.*]] = tile.move %{{.*}} transpose : {{.*}} -> !tile.tile<64x16xf16, l0b>
// CHECK:       %[[S:.*]] = tile.matmul %[[A]], %[[B]]
// CHECK:       tile.store %[[S]], %out[%[[J]], %{{.*}}, %{{.*}}] : !tile.tile<16x16xf32, l0c> -> memref<?x16x16xf16>
// CHECK:     } {pypto.row_entries}

func.func @softmax(%a: !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>) -> !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>> {
  %p = tv.sparse_softmax %a : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
  func.return %p : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
}

func.func @block_softmax(%a: !tv.tensor<32x64xf32, #tv.csr<rows = 32, cols = 64, nnz = ?, index = i32, block = [16, 16]>>) -> !tv.tensor<32x64xf32, #tv.csr<rows = 32, cols = 64, nnz = ?, index = i32, block = [16, 16]>> {
  %p = tv.sparse_softmax %a : !tv.tensor<32x64xf32, #tv.csr<rows = 32, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  func.return %p : !tv.tensor<32x64xf32, #tv.csr<rows = 32, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
}

func.func @sddmm(%m: !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>, %q: !tv.tensor<32x64xf16>, %k: !tv.tensor<32x64xf16>) -> !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>> {
  %s = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<32x64xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>
  func.return %s : !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>
}
