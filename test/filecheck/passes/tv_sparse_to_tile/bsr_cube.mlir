// Block-CSR spmm on the cube: per block row, a non-empty row multiplies its
// stored blocks (L1 nz -> L0A) by the matching 16 rows of %b (L0B), the first
// without and the others with the L0C accumulator; an empty block row stores
// zeros. bsr-cube=false takes the vector row loop instead, with its reason.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny bsr-cube=false}' 2>&1 | filecheck %s --check-prefix=ROWS
// pypto-lower forwards bsr-cube and lowers to ascend_hw: the scalar unit reads
// the offsets and indices (ascend_hw.load_scalar, docs/sparse.md).
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny bsr-cube=false}' 2>&1 | filecheck %s --check-prefixes=ROWS,HW

// CHECK: remark: tv-sparse-to-tile: tv.spmm of 16x16 blocks on the cube, 32 columns a tile: the stored blocks of a block row accumulate in L0C; empty block rows store zeros
// CHECK: func.func @bsr(%a_offsets: memref<3xi32>, %a_indices: memref<?xi32>, %a_values: memref<?x16x16xf16>, %b: memref<32x48xf16>, %out: memref<32x48xf16>)
// CHECK:   scf.for %[[BR:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     memref.load %a_offsets[%[[BR]]]
// CHECK:     %[[START:.*]] = arith.index_cast
// CHECK:     memref.load %a_offsets
// CHECK:     %[[END:.*]] = arith.index_cast
// CHECK:     %[[NONEMPTY:.*]] = arith.cmpi slt, %[[START]], %[[END]] : index
// CHECK:     scf.if %[[NONEMPTY]] {
// CHECK:       memref.load %a_indices[%[[START]]]
// CHECK:       tile.load %a_values[%[[START]], %{{.*}}, %{{.*}}] : memref<?x16x16xf16> -> !tile.tile<16x16xf16, l1, layout = nz>
// CHECK:       tile.load %b[{{.*}}] valid [%{{.*}}] : memref<32x48xf16> -> !tile.tile<16x32xf16, l1, valid = [16, ?], layout = nz>
// CHECK:       %[[FIRST:.*]] = tile.matmul %{{.*}}, %{{.*}} : !tile.tile<16x16xf16, l0a>, !tile.tile<16x32xf16, l0b, valid = [16, ?]>
// CHECK:       %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %[[END]] step %{{.*}} iter_args(%[[ITER:.*]] = %[[FIRST]])
// CHECK:         tile.matmul %{{.*}}, %{{.*}}, %[[ITER]]
// CHECK:       tile.store %[[ACC]], %out{{.*}} : !tile.tile<16x32xf32, l0c, valid = [16, ?]> -> memref<32x48xf16>
// CHECK:     } else {
// CHECK:       tile.fill {{.*}} -> !tile.tile<16x32xf16, ub, valid = [16, ?]>
// CHECK:       tile.store

// ROWS: remark: tv-sparse-to-tile: tv.spmm by rows, {{[0-9]+}} columns a tile: per stored entry a gathered row of the rhs multiply-accumulated in f32 in UB (bsr-cube=false)
// ROWS-NOT: tile.matmul
// HW: ascend_hw.load_scalar %a_offsets
// HW: ascend_hw.load_scalar %a_indices

func.func @bsr(%a: !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>, %b: !tv.tensor<32x48xf16>) -> !tv.tensor<32x48xf16> {
  %0 = tv.spmm %a, %b : !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<32x48xf16> -> !tv.tensor<32x48xf16>
  func.return %0 : !tv.tensor<32x48xf16>
}
