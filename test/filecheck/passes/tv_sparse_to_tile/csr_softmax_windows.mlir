// CSR softmax with entry-window=8 (the default): per row, the max over
// windows of 8 entries (a 1x8 tile, one DMA) up to the last whole window,
// then entry by entry; the sum of exp entry by entry over the whole row (the
// reference's order); the quotients again by windows (one DMA each way),
// then entry by entry (nnz-balance=false: one core; the split over the cores
// is csr_softmax_split.mlir). Values and results are viewed as 1 x nnz. An
// entry-window of 0 is refused.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b nnz-balance=false}' 2>&1 | filecheck %s
// RUN: pypto-opt %s --verify-diagnostics -p 'tv-sparse-to-tile{target=ascend910b entry-window=0}'

// CHECK: remark: tv-sparse-to-tile: sparse_softmax by rows: the max and the quotients over windows of 8 entries (one DMA each way), the rest of a row and the sum of exp entry by entry (in entry order)
// CHECK-LABEL: func.func @softmax
// CHECK:   %[[VALUES:.*]] = memref.expand_shape %a_values {{.*}} into memref<1x?xf16, strided<[1, 1]>>
// CHECK:   %[[OUT:.*]] = memref.expand_shape %out {{.*}} into memref<1x?xf16, strided<[1, 1]>>
// CHECK:   scf.for
// CHECK:     memref.load %a_offsets
// CHECK:     %[[START:.*]] = arith.index_cast
// CHECK:     memref.load %a_offsets
// CHECK:     %[[END:.*]] = arith.index_cast
// CHECK:     %[[FULL:.*]] = arith.addi %[[START]], %{{.*}}
// CHECK:     %[[MOST:.*]] = scf.for %{{.*}} = %[[START]] to %[[FULL]] step %[[EIGHT:.*]] iter_args
// CHECK:       tile.load %[[VALUES]]{{.*}} -> !tile.tile<1x16xf16, ub, valid = [1, 8]>
// CHECK:     } {pypto.row_entries}
// CHECK:     %[[MAX:.*]] = scf.for %{{.*}} = %[[FULL]] to %[[END]] step %{{.*}} iter_args(%{{.*}} = %[[MOST]])
// CHECK:       tile.load %[[VALUES]]{{.*}} -> !tile.tile<1x1xf16, ub>
// CHECK:     %[[SUM:.*]] = scf.for %{{.*}} = %[[START]] to %[[END]] step
// CHECK:       tile.load %[[VALUES]]{{.*}} -> !tile.tile<1x1xf16, ub>
// CHECK:     scf.for %[[J:.*]] = %[[START]] to %[[FULL]] step %[[EIGHT]] {
// CHECK:       tile.div %{{.*}}, %[[SUM]] : !tile.tile<1x16xf32, ub, valid = [1, 8]>, !tile.tile<1x1xf32, ub>
// CHECK:       tile.store %{{.*}}, %[[OUT]][%{{.*}}, %[[J]]] : !tile.tile<1x16xf16, ub, valid = [1, 8]>
// CHECK:     scf.for %[[K:.*]] = %[[FULL]] to %[[END]] step
// CHECK:       tile.store %{{.*}}, %[[OUT]][%{{.*}}, %[[K]]] : !tile.tile<1x1xf16, ub>

func.func @softmax(%a: !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>) -> !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>> {
  // expected-error @+1 {{tv-sparse-to-tile: entry-window must be >= 1, got 0}}
  %p = tv.sparse_softmax %a : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
  func.return %p : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
}
