// CSR softmax over the cores (nnz-balance, the default, on a target of more
// than one core): a pypto.core_loop in which each core takes whole blocks of
// 64 entries of the values (whole 32-byte GM blocks), finds the rows they lie
// in by binary searches of the offsets (loaded into ub), and per row computes
// the max and the sum of exp over the whole row (a row straddling two cores:
// by both) and writes the quotients of its own entries only, by windows of 8
// then one by one. A core without entries does nothing (scf.if). This is
// masked-window=0; the masked windows (the default) are csr_softmax_masked.mlir.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny masked-window=0}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny sparse-nnz-balance=false}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK: remark: tv-sparse-to-tile: sparse_softmax by rows: the max and the quotients over windows of 8 entries (one DMA each way), the rest of a row and the sum of exp entry by entry (in entry order); the entries split over 2 cores in whole blocks of 64 (a row straddling two cores: its max and sum computed by both, its quotients written by each for its entries)
// CHECK: scf.for
// CHECK:   tile.load %a_offsets
// CHECK:   scf.if
// CHECK:     scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK:       %[[START:.*]] = tile.extract
// CHECK:       %[[END:.*]] = tile.extract
// CHECK:       arith.cmpi slt, %[[START]], %{{.*}} : index
// CHECK:       %[[LO:.*]] = arith.select
// CHECK:       scf.for %{{.*}} = %[[START]] to %{{.*}} step %{{.*}} iter_args
// CHECK:         tile.reduce_max
// CHECK:       scf.for %{{.*}} = %[[START]] to %[[END]] step %{{.*}} iter_args
// CHECK:         tile.exp
// CHECK:       scf.for %[[J:.*]] = %[[LO]] to %{{.*}} step
// CHECK:         tile.div
// CHECK:         tile.store %{{.*}}, %{{.*}}[%{{.*}}, %[[J]]] : !tile.tile<1x16xf16, ub, valid = [1, 8]>
// CHECK: } {pypto.core_loop}

// OFF: remark: tv-sparse-to-tile: sparse_softmax by rows: the max and the quotients over windows of 8 entries (one DMA each way), the rest of a row and the sum of exp entry by entry (in entry order)
// OFF-NOT: the entries split
func.func @softmax(%a: !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>) -> !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>> {
  %p = tv.sparse_softmax %a : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
  func.return %p : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
}
