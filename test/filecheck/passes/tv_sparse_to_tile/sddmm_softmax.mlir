// sparse_softmax: per row, three passes over the stored entries (running max,
// sum of exp in entry order, quotients stored to the result's values); the
// result is its values buffer only (%out: memref<?xf16>), the pattern is the
// operand's. Block-CSR sddmm on the cube: per block row the q rows once, per
// stored block the k rows moved transposed into L0B and one matmul.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s

// CHECK: remark: tv-sparse-to-tile: sparse_softmax by rows: max, sum of exp and the quotients over the stored entries, in three passes (1 column a tile)
// CHECK: remark: tv-sparse-to-tile: tv.sddmm of 16x16 blocks on the cube, K = 64 in one step: the q rows of a block row are loaded once, only the stored blocks are computed

// CHECK-LABEL: func.func @softmax(%a_offsets: memref<9xi32>, %a_indices: memref<?xi32>, %a_values: memref<?xf16>, %out: memref<?xf16>)
// CHECK:   %[[RESULT:.*]] = memref.expand_shape %out {{.*}} : memref<?xf16> into memref<?x1x1xf16>
// CHECK:   scf.for
// CHECK:     memref.load %a_offsets
// CHECK:     %[[START:.*]] = arith.index_cast
// CHECK:     memref.load %a_offsets
// CHECK:     %[[END:.*]] = arith.index_cast
// CHECK:     %[[MAX:.*]] = scf.for %{{.*}} = %[[START]] to %[[END]] {{.*}} -> (!tile.tile<1x1xf32, ub>)
// CHECK:       tile.reduce_max
// CHECK:       tile.max
// CHECK:     %[[SUM:.*]] = scf.for %{{.*}} = %[[START]] to %[[END]] {{.*}} -> (!tile.tile<1x1xf32, ub>)
// CHECK:       tile.sub %{{.*}}, %[[MAX]]
// CHECK:       tile.exp
// CHECK:       tile.reduce_sum
// CHECK:     scf.for %[[J:.*]] = %[[START]] to %[[END]]
// CHECK:       tile.div %{{.*}}, %[[SUM]]
// CHECK:       tile.store %{{.*}}, %[[RESULT]][%[[J]], %{{.*}}, %{{.*}}]

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

func.func @softmax(%a: !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>) -> !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>> {
  %p = tv.sparse_softmax %a : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
  func.return %p : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
}

func.func @sddmm(%m: !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>, %q: !tv.tensor<32x64xf16>, %k: !tv.tensor<32x64xf16>) -> !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>> {
  %s = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<32x64xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>
  func.return %s : !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>
}
