// CSR spmm without index prefetch and without the nnz-balanced split: a sparse argument becomes offsets, indices and values memrefs; the
// row loop reads each row's range with memref.load, loops over its entries at
// run time, gathers the row of %b at the column index and accumulates in f32.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny tile-cols=16 dense-fallback=false index-prefetch=false nnz-balance=false}' 2>&1 | filecheck %s
// RUN: not pypto-opt %s -p 'tv-sparse-to-tile{target=tiny tile-cols=12}' 2>&1 | filecheck %s --check-prefix=ALIGN

// CHECK: remark: tv-sparse-to-tile: tv.spmm by rows, 16 columns a tile: per stored entry a gathered row of the rhs multiply-accumulated in f32 in UB
// CHECK: func.func @spmm(%a_offsets: memref<9xi32>, %a_indices: memref<?xi32>, %a_values: memref<?xf16>, %b: memref<16x40xf16>, %out: memref<8x40xf16>)
// CHECK:   %[[VALUES:.*]] = memref.expand_shape %a_values {{.*}} output_shape [%{{.*}}, 1, 1] : memref<?xf16> into memref<?x1x1xf16>
// CHECK:   scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     memref.load %a_offsets[%[[ROW]]] : memref<9xi32>
// CHECK:     %[[START:.*]] = arith.index_cast
// CHECK:     memref.load %a_offsets[%{{.*}}] : memref<9xi32>
// CHECK:     %[[END:.*]] = arith.index_cast
// CHECK:     scf.for %[[N0:.*]] = %{{.*}} to %{{.*}} step
// CHECK:       tile.fill %{{.*}} valid [%{{.*}}] : f32 -> !tile.tile<1x16xf32, ub, valid = [1, ?]>
// CHECK:       scf.for %[[J:.*]] = %[[START]] to %[[END]] step %{{.*}} iter_args
// CHECK:         memref.load %a_indices[%[[J]]] : memref<?xi32>
// CHECK:         %[[COL:.*]] = arith.index_cast
// CHECK:         tile.load %[[VALUES]][%[[J]], %{{.*}}, %{{.*}}] : memref<?x1x1xf16> -> !tile.tile<1x1xf16, ub>
// CHECK:         tile.load %b[%[[COL]], %[[N0]]] valid [%{{.*}}] : memref<16x40xf16> -> !tile.tile<1x16xf16, ub, valid = [1, ?]>
// CHECK:         tile.mul {{.*}} : !tile.tile<1x16xf32, ub, valid = [1, ?]>, !tile.tile<1x1xf32, ub>
// CHECK:         tile.add
// CHECK:       tile.cast {{.*}} -> !tile.tile<1x16xf16, ub, valid = [1, ?]>
// CHECK:       tile.store {{.*}}, %out[%[[ROW]], %[[N0]]]
// CHECK:   func.return

// ALIGN: error: tv-sparse-to-tile: tile-cols 12 is not a multiple of 16 (the alignment unit of the tiles)

func.func @spmm(%a: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<16x40xf16>) -> !tv.tensor<8x40xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x40xf16> -> !tv.tensor<8x40xf16>
  func.return %c : !tv.tensor<8x40xf16>
}
