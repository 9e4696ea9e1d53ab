// CSR to_dense by rows built in ub (entry-insert, the default): per row a zero
// tile of the row's columns, each stored value written at its column by
// tile.insert, the row stored with one DMA. With index prefetch (the default)
// the column indices and values come from windows of 64 entries loaded into
// ub at the row's first entry (nnz >= 64; else the GM reads per entry); with
// nnz-balance the rows are split over the cores by a core loop
// (pypto.core_loop). Refused (the plain nest: a DMA per entry) with
// entry-insert=false and when a row is more than one ub tile (tile-cols).
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny index-prefetch=false nnz-balance=false}' 2>&1 | filecheck %s --check-prefix=PLAIN
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny entry-insert=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny sparse-entry-insert=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny tile-cols=16}' 2>&1 | filecheck %s --check-prefix=WIDE

// CHECK: remark: tv-sparse-to-tile: to_dense by rows: each row a zero tile of 32 columns in ub, the stored values inserted at their columns (tile.insert), stored with one DMA; column indices and values prefetched into ub in windows of 64 entries (a matrix of fewer entries reads them from GM); rows split over 2 cores by stored entries (each core searches the offsets, loaded into ub, for its first row)
// CHECK: scf.for
// CHECK:   tile.load %a_offsets
// CHECK:   scf.if
// CHECK:     scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK:       %[[ZERO:.*]] = tile.fill %{{.*}} : f16 -> !tile.tile<1x32xf16, ub>
// CHECK:       %[[IDS:.*]] = tile.load %a_indices[%{{.*}}] : memref<?xi32> -> !tile.tile<64xi32, ub>
// CHECK:       %[[VALS:.*]] = tile.load %a_values[%{{.*}}] : memref<?xf16> -> !tile.tile<64xf16, ub>
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]])
// CHECK:         %[[COL:.*]] = tile.extract %[[IDS]][%{{.*}}] : !tile.tile<64xi32, ub> -> index
// CHECK:         %[[V:.*]] = tile.extract %[[VALS]][%{{.*}}] : !tile.tile<64xf16, ub> -> f16
// CHECK:         tile.insert %[[V]], %[[ACC]][%{{.*}}, %[[COL]]] : f16, !tile.tile<1x32xf16, ub>
// CHECK:       tile.store %{{.*}}, %out[%[[ROW]], %{{.*}}] : !tile.tile<1x32xf16, ub> -> memref<8x32xf16>
// CHECK:   } else {
// CHECK:       memref.load %a_values
// CHECK:       tile.insert
// CHECK: } {pypto.core_loop}

// PLAIN: remark: tv-sparse-to-tile: to_dense by rows: {{.*}}; column indices and values read from GM per entry (index-prefetch=false); rows split over the cores by count (nnz-balance=false)
// PLAIN: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// PLAIN-NOT: scf.if
// PLAIN-NOT: tile.extract
// PLAIN:   memref.load %a_indices
// PLAIN:   memref.load %a_values
// PLAIN:   tile.insert
// PLAIN:   tile.store %{{.*}}, %out[%[[ROW]], %{{.*}}]
// PLAIN-NOT: pypto.core_loop

// OFF: remark: tv-sparse-to-tile: to_dense not by rows built in ub: entry-insert=false
// OFF: remark: tv-sparse-to-tile: to_dense by 1-row blocks: zero tiles of 32 columns, then each stored block scattered
// OFF-NOT: tile.insert

// WIDE: remark: tv-sparse-to-tile: to_dense not by rows built in ub: a row of 32 columns is more than one ub tile (16)
// WIDE-NOT: tile.insert
func.func @f(%a: !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>) -> !tv.tensor<8x32xf16> {
  %c = tv.to_dense %a : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>> -> !tv.tensor<8x32xf16>
  func.return %c : !tv.tensor<8x32xf16>
}
