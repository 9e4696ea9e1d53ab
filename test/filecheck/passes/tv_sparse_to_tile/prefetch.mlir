// CSR spmm with index prefetch and the nnz-balanced core split (the defaults):
// a static loop over the cores (pypto.core_loop: tile-to-hw gives each core one
// trip), the offsets loaded into ub once per core, each core's first and last
// row found by a binary search of ub reads for the row whose middle reaches
// c / cores of the work (entries + 3 per row), then an scf.if
// on nnz >= 64: per row the window of 64 column indices (i32) and values from
// min(start, nnz - 64) loaded into ub, the values cast to f32 once, each entry
// taken out with tile.extract; a row longer than a window loads the next ones
// in a loop. With fewer entries than a window: the GM reads per entry. (The
// rows of b from GM: resident-b=false; the resident slice is resident.mlir.)
// (gather-runs=false where a GM row gather is checked entry by entry: the runs are gather_runs_csr.mlir.)
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b resident-b=false gather-runs=false}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b index-prefetch=false}' 2>&1 | filecheck %s --check-prefix=NOPREFETCH
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b nnz-balance=false}' 2>&1 | filecheck %s --check-prefix=NOBALANCE
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-index-prefetch=false sparse-nnz-balance=false}' 2>&1 | filecheck %s --check-prefix=LOWER

// CHECK: remark: tv-sparse-to-tile: tv.spmm by rows, 48 columns a tile: per stored entry a gathered row of the rhs multiply-accumulated in f32 in UB; column indices and values prefetched into ub in windows of 64 entries (a matrix of fewer entries reads them from GM); rows split over 24 cores by stored entries (each core searches the offsets, loaded into ub, for its first row)
// CHECK: func.func @spmm(%a_offsets: memref<9xi32>, %a_indices: memref<?xi32>, %a_values: memref<?xf16>, %b: memref<16x48xf16>, %out: memref<8x48xf16>)
// CHECK:   %[[NNZ:.*]] = memref.dim %a_indices
// CHECK:   scf.for %[[CORE:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     %[[TABLE:.*]] = tile.load %a_offsets[%{{.*}}] : memref<9xi32> -> !tile.tile<16xi32, ub, valid = [9]>
// CHECK:     arith.addi %[[NNZ]], %{{.*}}
// CHECK:     arith.muli %[[CORE]], %{{.*}}
// CHECK:     tile.extract %[[TABLE]][%{{.*}}] : !tile.tile<16xi32, ub, valid = [9]> -> index
// CHECK:     %[[ENOUGH:.*]] = arith.cmpi sge, %[[NNZ]], %{{.*}}
// CHECK:     scf.if %[[ENOUGH]] {
// CHECK:       scf.for %[[ROW:.*]] = %[[LO:[0-9]+]] to %[[HI:[0-9]+]] step %{{.*}} {
// CHECK:         %[[START:.*]] = tile.extract %[[TABLE]][%[[ROW]]]
// CHECK:         %[[END:.*]] = tile.extract %[[TABLE]]
// CHECK:         %[[LAST:.*]] = arith.subi %[[NNZ]], %{{.*}}
// CHECK:         %[[BASE:.*]] = arith.select %{{.*}}, %[[START]], %[[LAST]]
// CHECK:         %[[IDS:.*]] = tile.load %a_indices[%[[BASE]]] : memref<?xi32> -> !tile.tile<64xi32, ub>
// CHECK:         %[[VALS:.*]] = tile.load %a_values[%[[BASE]]] : memref<?xf16> -> !tile.tile<64xf16, ub>
// CHECK:         %[[VALS32:.*]] = tile.cast %[[VALS]] : !tile.tile<64xf16, ub> -> !tile.tile<64xf32, ub>
// CHECK:         tile.fill
// CHECK:         scf.for %[[P:.*]] = %[[START]] to %{{.*}} step %{{.*}} iter_args
// CHECK:           %[[K:.*]] = arith.subi %[[P]], %[[BASE]]
// CHECK:           %[[COL:.*]] = tile.extract %[[IDS]][%[[K]]] : !tile.tile<64xi32, ub> -> index
// CHECK:           %[[V:.*]] = tile.extract %[[VALS32]][%[[K]]] : !tile.tile<64xf32, ub> -> f32
// CHECK:           tile.load %b[%[[COL]], %{{.*}}]
// CHECK:           tile.mul %{{.*}}, %[[V]] : !tile.tile<1x48xf32, ub>, f32
// CHECK:           tile.add
// CHECK:         scf.for %[[Q:.*]] = %{{.*}} to %[[END]] step %{{.*}} iter_args
// CHECK:           tile.load %a_indices[%{{.*}}] : memref<?xi32> -> !tile.tile<64xi32, ub>
// CHECK:           scf.for
// CHECK:         tile.store %{{.*}}, %out[%[[ROW]], %{{.*}}]
// CHECK:     } else {
// CHECK:       scf.for %{{.*}} = %[[LO]] to %[[HI]] step
// CHECK:         memref.load %a_indices
// CHECK:   } {pypto.core_loop}

// NOPREFETCH: column indices and values read from GM per entry (index-prefetch=false); rows split over 24 cores by stored entries
// NOPREFETCH: scf.for
// NOPREFETCH-NOT: scf.if
// NOPREFETCH: } {pypto.core_loop}

// NOBALANCE: column indices and values prefetched into ub in windows of 64 entries (a matrix of fewer entries reads them from GM); rows split over the cores by count (nnz-balance=false)
// NOBALANCE-NOT: pypto.core_loop
// NOBALANCE: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// NOBALANCE:   scf.if
// NOBALANCE:     tile.load %a_indices
// NOBALANCE:   } else {
// NOBALANCE:     memref.load %a_indices

// LOWER: column indices and values read from GM per entry (index-prefetch=false); rows split over the cores by count (nnz-balance=false)

func.func @spmm(%a: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<16x48xf16>) -> !tv.tensor<8x48xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x48xf16> -> !tv.tensor<8x48xf16>
  func.return %c : !tv.tensor<8x48xf16>
}
