// gather-runs (the default): the CSR spmm row nest with the rows of b from GM
// (resident-b=false) and CSR sddmm (rows of k) check groups of 8 entries of a
// row (SparseNest.runs, the run detector the gather nest and top-k attention
// use too): the scalar unit compares idx[p + t] == idx[p] + t; a run loads its
// 8 rows with one DMA (a loop of 1 trip or none, selected by the compare: the
// loops carry the accumulator) and each entry takes its row of that tile on
// chip (spmm: tile.gather at the window's indices less the run's first, in
// entry order, so exact; sddmm: the 8 dot products by one multiply and row
// sum, inserted one by one); another group, and the last (hi - lo) mod 8
// entries, one row DMA an entry. gather-runs=false: a row DMA an entry. A
// column tile that does not divide N (tile-cols=16 of 40) refuses the runs.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b resident-b=false dense-fallback=false}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b resident-b=false dense-fallback=false gather-runs=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b resident-b=false dense-fallback=false tile-cols=16}' 2>&1 | filecheck %s --check-prefix=ODD
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-resident-b=false sparse-dense-fallback=false sparse-gather-runs=false}' 2>&1 | filecheck %s --check-prefix=LOWER

// CHECK: remark: tv-sparse-to-tile: tv.spmm by rows, {{.*}}; groups of 8 entries whose column indices are consecutive (compared on the scalar unit) gather their rows as one 8-row DMA (gather-runs)
// CHECK: remark: tv-sparse-to-tile: tv.spmm by rows, {{.*}}; groups of 8 entries whose column indices are consecutive (compared on the scalar unit) gather their rows as one 8-row DMA (gather-runs)
// CHECK: remark: tv-sparse-to-tile: tv.sddmm by windows of 64 entries, {{.*}}; rows of k: groups of 8 entries whose column indices are consecutive (compared on the scalar unit) gather their rows as one 8-row DMA (gather-runs)

// CHECK-LABEL: func.func @spmm(
// CHECK:       %[[IDS:.*]] = tile.load %a_indices[%{{.*}}] : memref<?xi32> -> !tile.tile<64xi32, ub>
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[EIGHT:.*]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (!tile.tile<1x32xf32, ub>) {
// CHECK:         %[[FIRST:.*]] = tile.extract %[[IDS]]
// CHECK-COUNT-7:   arith.cmpi eq
// CHECK:         %[[GROUPED:.*]] = arith.andi
// CHECK:         %[[TRIPS:.*]] = arith.select %[[GROUPED]], %{{.*}}, %{{.*}} : index
// CHECK:         %[[AFTER:.*]] = scf.for %{{.*}} = %{{.*}} to %[[TRIPS]] step %{{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (!tile.tile<1x32xf32, ub>) {
// CHECK:           %[[ROWS:.*]] = tile.load %b[%[[FIRST]], %{{.*}}] : memref<80x32xf16> -> !tile.tile<8x32xf16, ub>
// CHECK:           %[[SHIFT:.*]] = arith.index_cast %[[FIRST]] : index to i32
// CHECK:           %[[REL:.*]] = tile.sub %[[IDS]], %[[SHIFT]] : !tile.tile<64xi32, ub>, i32
// CHECK-COUNT-8:   tile.gather %[[ROWS]][%[[REL]], %{{.*}}] : !tile.tile<8x32xf16, ub>, !tile.tile<64xi32, ub> -> !tile.tile<1x32xf16, ub>
// CHECK:         %[[REST:.*]] = arith.select %[[GROUPED]], %{{.*}}, %[[EIGHT]] : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[REST]] step %{{.*}} iter_args(%{{.*}} = %[[AFTER]]) -> (!tile.tile<1x32xf32, ub>) {
// CHECK:           tile.load %b[%{{.*}}, %{{.*}}] : memref<80x32xf16> -> !tile.tile<1x32xf16, ub>

// CHECK-LABEL: func.func @sddmm(
// CHECK:         tile.load %k[%{{.*}}, %{{.*}}] : memref<80x32xf16> -> !tile.tile<8x32xf16, ub>
// CHECK:         %[[DOTS:.*]] = tile.reduce_sum %{{.*}}, axis = 1 : !tile.tile<8x32xf32, ub> -> !tile.tile<8x1xf32, ub>
// CHECK-COUNT-8:   tile.insert
// CHECK:         tile.load %k[%{{.*}}, %{{.*}}] : memref<80x32xf16> -> !tile.tile<1x32xf16, ub>

// OFF: remark: tv-sparse-to-tile: tv.spmm by rows, {{.*}}; one row DMA an entry (gather-runs=false)
// OFF: remark: tv-sparse-to-tile: tv.spmm by rows, {{.*}}; one row DMA an entry (gather-runs=false)
// OFF: remark: tv-sparse-to-tile: tv.sddmm by windows of 64 entries, {{.*}}; rows of k: one row DMA an entry (gather-runs=false)
// OFF-NOT: tile.gather
// OFF-NOT: x32xf16, ub> -> !tile.tile<8x

// ODD: remark: tv-sparse-to-tile: tv.spmm by rows, 16 columns a tile: {{.*}}; groups of 8 entries {{.*}} (gather-runs)
// ODD: remark: tv-sparse-to-tile: tv.spmm by rows, 16 columns a tile: {{.*}}; one row DMA an entry: runs refused, the column tiles of 16 do not divide the 40 columns (a run tile's tail is not supported)

// LOWER: remark: tv-sparse-to-tile: tv.spmm by rows, {{.*}}; one row DMA an entry (gather-runs=false)

func.func @spmm(%a: !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>, %b: !tv.tensor<80x32xf16>) -> !tv.tensor<40x32xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>, !tv.tensor<80x32xf16> -> !tv.tensor<40x32xf16>
  func.return %c : !tv.tensor<40x32xf16>
}
func.func @spmm_odd(%a: !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>, %b: !tv.tensor<80x40xf16>) -> !tv.tensor<40x40xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>, !tv.tensor<80x40xf16> -> !tv.tensor<40x40xf16>
  func.return %c : !tv.tensor<40x40xf16>
}
func.func @sddmm(%m: !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>, %q: !tv.tensor<40x32xf16>, %k: !tv.tensor<80x32xf16>) -> !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>> {
  %s = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>, !tv.tensor<40x32xf16>, !tv.tensor<80x32xf16> -> !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>
  func.return %s : !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>
}
