// spmv is spmm with one column (the vector and the result get a unit dim);
// to_dense stores zero tiles over each block row then scatters the stored
// blocks at their column; gather reads each index on the scalar unit and copies
// the source row it names (gather-run=1: runs of consecutive indices are not
// merged, gather_runs.mlir). Each nest has a remark.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b gather-run=1 index-prefetch=false nnz-balance=false}' 2>&1 | filecheck %s

// CHECK: remark: tv-sparse-to-tile: tv.spmv by rows, 1 column a tile: per stored entry a gathered row of the rhs multiply-accumulated in f32 in UB
// CHECK: remark: tv-sparse-to-tile: to_dense by 2-row blocks: zero tiles of 32 columns, then each stored block scattered
// CHECK: remark: tv-sparse-to-tile: gather by rows, 40 columns a tile (runs of consecutive indices not merged: gather-run=1 or fewer indices than a run)

// CHECK-LABEL: func.func @spmv(%a_offsets: memref<9xi32>, %a_indices: memref<?xi32>, %a_values: memref<?xf32>, %x: memref<16xf32>, %out: memref<8xf32>)
// CHECK:   %[[X:.*]] = memref.expand_shape %x {{.*}} : memref<16xf32> into memref<16x1xf32>
// CHECK:   %[[OUT:.*]] = memref.expand_shape %out {{.*}} : memref<8xf32> into memref<8x1xf32>
// CHECK:   scf.for %[[ROW:.*]] =
// CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (!tile.tile<1x1xf32, ub>)
// CHECK:       memref.load %a_indices[%[[J]]]
// CHECK:       %[[COL:.*]] = arith.index_cast
// CHECK:       tile.load %[[X]][%[[COL]], %{{.*}}] : memref<16x1xf32> -> !tile.tile<1x1xf32, ub>
// CHECK:     tile.store %{{.*}}, %[[OUT]][%[[ROW]], %{{.*}}]

// CHECK-LABEL: func.func @dense(%a_offsets: memref<5xi32>, %a_indices: memref<?xi32>, %a_values: memref<?x2x16xf16>, %out: memref<8x32xf16>)
// CHECK:   scf.for %[[BR:.*]] =
// CHECK:     %[[ROW0:.*]] = arith.muli %[[BR]]
// CHECK:     tile.fill {{.*}} -> !tile.tile<2x32xf16, ub>
// CHECK:     tile.store %{{.*}}, %out[%[[ROW0]], %{{.*}}]
// CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:       memref.load %a_indices[%[[J]]]
// CHECK:       %[[COL:.*]] = arith.index_cast
// CHECK:       %[[BLOCK:.*]] = tile.load %a_values[%[[J]], %{{.*}}, %{{.*}}] : memref<?x2x16xf16> -> !tile.tile<2x16xf16, ub>
// CHECK:       %[[AT:.*]] = arith.muli %[[COL]]
// CHECK:       tile.store %[[BLOCK]], %out[%[[ROW0]], %[[AT]]]

// CHECK-LABEL: func.func @gather(%x: memref<50x40xf16>, %idx: memref<6xi32>, %out: memref<6x40xf16>)
// CHECK:   scf.for %[[I:.*]] =
// CHECK:     %[[RAW:.*]] = memref.load %idx[%[[I]]] : memref<6xi32>
// CHECK:     %[[ROW:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK:     %[[COPY:.*]] = tile.load %x[%[[ROW]], %{{.*}}] : memref<50x40xf16> -> !tile.tile<1x48xf16, ub, valid = [1, 40]>
// CHECK:     tile.store %[[COPY]], %out[%[[I]], %{{.*}}]

func.func @spmv(%a: !tv.tensor<8x16xf32, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %x: !tv.tensor<16xf32>) -> !tv.tensor<8xf32> {
  %c = tv.spmv %a, %x : !tv.tensor<8x16xf32, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16xf32> -> !tv.tensor<8xf32>
  func.return %c : !tv.tensor<8xf32>
}

func.func @dense(%a: !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32, block = [2, 16]>>) -> !tv.tensor<8x32xf16> {
  %c = tv.to_dense %a : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32, block = [2, 16]>> -> !tv.tensor<8x32xf16>
  func.return %c : !tv.tensor<8x32xf16>
}

func.func @gather(%x: !tv.tensor<50x40xf16>, %idx: !tv.tensor<6xi32>) -> !tv.tensor<6x40xf16> {
  %g = tv.gather %x[%idx] : !tv.tensor<50x40xf16>, !tv.tensor<6xi32> -> !tv.tensor<6x40xf16>
  func.return %g : !tv.tensor<6x40xf16>
}
