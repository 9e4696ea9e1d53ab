// CSR spmm with divided rows (divide-rows, default on where the cost model
// takes it): the stored entries are split evenly over the row groups (rows
// weigh 16 entries from a resident slice, 3 with rows of b from GM), a row
// longer than 1/16 of a share divided where a share ends. A core sums its part
// of such a row into its slot of an f32 workspace (2 rows a group: a row begun
// by an earlier group, a row ended by a later one) instead of the result; a
// second core loop (after the sync_all tile-to-hw puts between the two) has
// the group where the row begins add the parts and store it once. Refused
// when a row of all K entries would cost less than the combine, or a result
// row is less than a 32-byte GM block (spmv), or the offsets are not in ub.
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b divide-rows=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=ascend910b sparse-divide-rows=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b resident-b=false b-ranges=false}' 2>&1 | filecheck %s --check-prefix=GM

// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: 12 row groups x 2 slices
// CHECK-SAME: the stored entries split evenly over the 12 row groups, a row longer than 1/16 of a share divided where a share ends, its partial sums added by the core where it begins after a sync_all (the sum of such a row in another order: within the error bound; a row of up to 1024 entries estimated at 24576 cycles on one core, the combine at {{[0-9]+}})
// CHECK: func.func @spmm(
// CHECK:   %[[WS:.*]] = memref.alloc() : memref<24x128xf32>
// CHECK:   scf.for %[[CORE:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     tile.gather
// CHECK:     %[[PARTIAL:.*]] = arith.ori
// CHECK:     scf.if %[[PARTIAL]] {
// CHECK:       tile.store %{{.*}}, %[[WS]][%{{.*}}, %{{.*}}] : !tile.tile<1x64xf32, ub> -> memref<24x128xf32>
// CHECK:     } else {
// CHECK:       tile.store %{{.*}}, %out[%{{.*}}, %{{.*}}] : !tile.tile<1x64xf16, ub> -> memref<1024x128xf16>
// CHECK:   } {pypto.core_loop}
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     scf.if %{{.*}} {
// CHECK:       %[[MINE:.*]] = tile.load %[[WS]][%{{.*}}, %{{.*}}] : memref<24x128xf32> -> !tile.tile<1x64xf32, ub>
// CHECK:       %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MINE]])
// CHECK:         tile.load %[[WS]]
// CHECK:         tile.add
// CHECK:       %[[CAST:.*]] = tile.cast %[[SUM]]
// CHECK:       tile.store %[[CAST]], %out
// CHECK:   } {pypto.core_loop}
// CHECK:   memref.dealloc %[[WS]]

// With the rows of b from GM (resident-b=false) there are 24 row groups.
// GM-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// GM-SAME: rows of b gathered from GM (resident-b=false)
// GM-SAME: the stored entries split evenly over the 24 row groups
// GM: memref.alloc() : memref<48x128xf32>

// OFF: a row is never divided (spmm-divide-rows=false)
// OFF-NOT: memref<24x128xf32>
func.func @spmm(%a: !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, %b: !tv.tensor<1024x128xf16>) -> !tv.tensor<1024x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, !tv.tensor<1024x128xf16> -> !tv.tensor<1024x128xf16>
  func.return %c : !tv.tensor<1024x128xf16>
}

// -----

// -----

// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: a row is never divided (a row of up to 80 entries estimated at {{[0-9]+}} cycles on one core, the combine at {{[0-9]+}})
// CHECK-NOT: memref.alloc
func.func @short_rows(%a: !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>, %b: !tv.tensor<80x32xf16>) -> !tv.tensor<40x32xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<40x80xf16, #tv.csr<rows = 40, cols = 80, nnz = ?, index = i32>>, !tv.tensor<80x32xf16> -> !tv.tensor<40x32xf16>
  func.return %c : !tv.tensor<40x32xf16>
}

// -----

// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmv by rows
// CHECK-SAME: a row is never divided (a row of the result is less than a 32-byte GM block, which cores would share)
func.func @spmv(%a: !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, %x: !tv.tensor<1024xf16>) -> !tv.tensor<1024xf16> {
  %c = tv.spmv %a, %x : !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, !tv.tensor<1024xf16> -> !tv.tensor<1024xf16>
  func.return %c : !tv.tensor<1024xf16>
}

// -----

// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: a row is never divided (the offsets are not in ub: each core's second search would read them from GM)
func.func @i16_offsets(%a: !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i16>>, %b: !tv.tensor<1024x128xf16>) -> !tv.tensor<1024x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i16>>, !tv.tensor<1024x128xf16> -> !tv.tensor<1024x128xf16>
  func.return %c : !tv.tensor<1024x128xf16>
}
