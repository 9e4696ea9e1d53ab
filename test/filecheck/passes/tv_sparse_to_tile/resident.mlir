// CSR spmm with a resident slice of b (resident-b, default on, chosen by the
// cost model): the static loop over the cores covers row groups x column
// slices of b; each core loads its K x width slice of b into ub once, finds
// its group's rows by the nnz-balanced search, and gathers each entry's row of
// the slice on chip (tile.gather at the entry's position in the index window)
// instead of a DMA from GM. A group whose entries fit one window of 2048 (and
// nnz >= 2048) loads them once; else per-row windows of 64; fewer than 64
// entries: GM reads, rows of b from GM.
// (gather-runs=false where a GM row gather is checked entry by entry: the runs are gather_runs_csr.mlir.)
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b resident-b=false gather-runs=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=ascend910b sparse-resident-b=false sparse-gather-runs=false}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: b kept in ub as 2 column slice(s) of 64, its rows gathered on chip (tile.gather): 12 row groups x 2 slices, a group's entries in one window when they fit; the cost model's estimates: rows of b from GM {{[0-9]+}} + {{[0-9.]+}} x nnz cycles, from a resident slice {{[0-9]+}} + {{[0-9.]+}} x nnz
// CHECK: func.func @spmm(
// CHECK:   %[[NNZ:.*]] = memref.dim %a_indices
// CHECK:   scf.for %[[CORE:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     %[[SLICE:.*]] = arith.remui %[[CORE]]
// CHECK:     %[[FIRST:.*]] = arith.muli %[[SLICE]]
// CHECK:     %[[B:.*]] = tile.load %b[%{{.*}}, %[[FIRST]]] : memref<1024x128xf16> -> !tile.tile<1024x64xf16, ub>
// CHECK:     %[[ENOUGH:.*]] = arith.cmpi sge, %[[NNZ]], %{{.*}}
// CHECK:     scf.if %[[ENOUGH]] {
// CHECK:       %[[FITS:.*]] = arith.andi
// CHECK:       scf.if %[[FITS]] {
// CHECK:         %[[IDS:.*]] = tile.load %a_indices[%{{.*}}] : memref<?xi32> -> !tile.tile<2048xi32, ub>
// CHECK:         scf.for
// CHECK:           scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:             %[[K:.*]] = arith.subi %[[P]]
// CHECK:             tile.extract %{{.*}}[%[[K]]] : !tile.tile<2048xf32, ub> -> f32
// CHECK:             tile.gather %[[B]][%[[IDS]], %[[K]]] : !tile.tile<1024x64xf16, ub>, !tile.tile<2048xi32, ub> -> !tile.tile<1x64xf16, ub>
// CHECK:           tile.store %{{.*}}, %out[%{{.*}}, %[[FIRST]]] : !tile.tile<1x64xf16, ub> -> memref<64x128xf16>
// CHECK:       } else {
// CHECK:         tile.load %a_indices[%{{.*}}] : memref<?xi32> -> !tile.tile<64xi32, ub>
// CHECK:         tile.gather %[[B]]
// CHECK:     } else {
// CHECK:       memref.load %a_indices
// CHECK:       tile.load %b[%{{.*}}, %[[FIRST]]] : memref<1024x128xf16> -> !tile.tile<1x64xf16, ub>
// CHECK:   } {pypto.core_loop}

// OFF: rows of b gathered from GM (resident-b=false)
// OFF-NOT: tile.gather
func.func @spmm(%a: !tv.tensor<64x1024xf16, #tv.csr<rows = 64, cols = 1024, nnz = ?, index = i32>>, %b: !tv.tensor<1024x128xf16>) -> !tv.tensor<64x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<64x1024xf16, #tv.csr<rows = 64, cols = 1024, nnz = ?, index = i32>>, !tv.tensor<1024x128xf16> -> !tv.tensor<64x128xf16>
  func.return %c : !tv.tensor<64x128xf16>
}

// -----

// Rows of b of 8 f16 (16 bytes) are not whole 32-byte ub blocks: no slice.
// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: rows of b gathered from GM (a resident slice of b needs prefetched i32 indices, the balanced split and a slice of whole 32-byte rows that fits in ub)
// CHECK-NOT: tile.gather %{{.*}} : !tile.tile<64x
func.func @narrow(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, %b: !tv.tensor<64x8xf16>) -> !tv.tensor<64x8xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, !tv.tensor<64x8xf16> -> !tv.tensor<64x8xf16>
  func.return %c : !tv.tensor<64x8xf16>
}

// -----

// 4096 deep: the slices are 16 columns (8 slices x 3 row groups), and each
// entry's chain on 8 slices costs more than one GM gather of 128 columns: the
// cost model keeps the rows of b in GM.
// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: rows of b gathered from GM, the cost model's estimates: rows of b from GM {{[0-9]+}} + 3.71 x nnz cycles, from a resident slice {{[0-9]+}} + 8.00 x nnz
// (tile.gather of a run's 8 rows only: gather-runs)
// CHECK-NOT: tile.gather %{{.*}} : !tile.tile<4096x
func.func @deep(%a: !tv.tensor<64x4096xf16, #tv.csr<rows = 64, cols = 4096, nnz = ?, index = i32>>, %b: !tv.tensor<4096x128xf16>) -> !tv.tensor<64x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<64x4096xf16, #tv.csr<rows = 64, cols = 4096, nnz = ?, index = i32>>, !tv.tensor<4096x128xf16> -> !tv.tensor<64x128xf16>
  func.return %c : !tv.tensor<64x128xf16>
}
