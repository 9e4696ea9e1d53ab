// CSR softmax over the cores with masked windows (masked-window=64, the
// default; passes/csr_masked_softmax.py): per core, once, the lane positions
// (tile.iota) and a -inf pad; if nnz >= 64, the rows carry the window of
// quotients being filled, that window's values and its position (-1: none).
// Per row: the max and sum in one pass over whole windows of 64 entries from
// the grid window holding the row's first entry, the first one the carried
// values when the row starts in the carried window (a loop of one trip or
// none that loads it otherwise), the others loaded from min(pos, nnz - 64);
// each window's lanes outside the row set to -inf by two tile.selects of the
// positions against the bounds (ge, lt), the max raised and the sum rescaled
// by exp(old max - new max). Then the row's quotients over its grid windows
// from e0 (the first one's values the stats' first, else loaded), each merged
// into the carried window from the row's first lane on (select ge) and stored
// when the row ends at or past its end (entries are contiguous: the next row
// starts in the carried window, and the core's last row ends at or past its
// last entry: no store after the rows); the core's entries past its whole
// windows exactly by the entry windows. nnz < 64: the exact nest
// (csr_softmax_split.mlir). A masked-window that is not whole 32-byte blocks
// of the values and f32 (16 for f16) is refused.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny}' 2>&1 | filecheck %s
// RUN: pypto-opt %s --verify-diagnostics -p 'tv-sparse-to-tile{target=tiny masked-window=24}'

// CHECK: remark: tv-sparse-to-tile: sparse_softmax by rows in whole windows of 64 entries with computed masks
// CHECK: scf.for
// CHECK:   scf.if
// CHECK:     %[[NNZ_OK:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK:     scf.if %[[NNZ_OK]] {
// CHECK:       %[[COL:.*]] = tile.iota : !tile.tile<1x64xi32, ub>
// CHECK:       %[[PAD:.*]] = tile.fill %{{.*}} : f32 -> !tile.tile<1x1xf32, ub>
// CHECK:       %[[EMPTY:.*]] = tile.fill %{{.*}} : f32 -> !tile.tile<1x64xf32, ub>
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CARRIED:.*]] = %[[EMPTY]], %[[VALUES:.*]] = %[[EMPTY]], %[[HELD:.*]] = %{{.*}}) -> (!tile.tile<1x64xf32, ub>, !tile.tile<1x64xf32, ub>, index) {
// CHECK:         %[[REUSE:.*]] = arith.cmpi eq, %[[BEGIN:.*]], %[[HELD]] : index
// CHECK:         %[[TRIPS:.*]] = arith.select %[[REUSE]], %{{.*}}, %{{.*}} : index
// CHECK:         %[[FIRST:.*]] = scf.for %{{.*}} = %{{.*}} to %[[TRIPS]] step %{{.*}} iter_args(%{{.*}} = %[[VALUES]]) -> (!tile.tile<1x64xf32, ub>) {
// CHECK:           tile.load %{{.*}} -> !tile.tile<1x64xf16, ub>
// CHECK:         tile.select ge %[[COL]], %{{.*}}, %[[FIRST]], %[[PAD]]
// CHECK:         tile.select lt %[[COL]], %{{.*}}, %{{.*}}, %[[PAD]]
// CHECK:         tile.reduce_max
// CHECK:         tile.reduce_sum
// CHECK:         %[[MAX:.*]], %[[SUM:.*]] = scf.for %[[POS:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:           tile.load %{{.*}} -> !tile.tile<1x64xf16, ub>
// CHECK:           tile.select ge %[[COL]], %{{.*}}, %{{.*}}, %[[PAD]]
// CHECK:           tile.select lt %[[COL]], %{{.*}}, %{{.*}}, %[[PAD]]
// CHECK:           tile.reduce_max
// CHECK:           tile.max
// CHECK:           tile.exp
// CHECK:           tile.reduce_sum
// CHECK:           tile.mul
// CHECK:           tile.add
// CHECK:         scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[IN:.*]] = %[[CARRIED]], %{{.*}} = %[[FIRST]]) -> (!tile.tile<1x64xf32, ub>, !tile.tile<1x64xf32, ub>) {
// CHECK:           %[[V:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[FIRST]])
// CHECK:             tile.load %{{.*}}[%{{.*}}, %[[G]]] : memref<1x?xf16, strided<[1, 1]>> -> !tile.tile<1x64xf16, ub>
// CHECK:           tile.sub %[[V]], %[[MAX]]
// CHECK:           tile.div %{{.*}}, %[[SUM]] : !tile.tile<1x64xf32, ub>, !tile.tile<1x1xf32, ub>
// CHECK:           %[[MERGED:.*]] = tile.select ge %[[COL]], %{{.*}}, %{{.*}}, %[[IN]] : !tile.tile<1x64xi32, ub>, !tile.tile<1x1xi32, ub>, !tile.tile<1x64xf32, ub>, !tile.tile<1x64xf32, ub>
// CHECK:           scf.if
// CHECK:             tile.store %{{.*}}, %{{.*}}[%{{.*}}, %[[G]]] : !tile.tile<1x64xf16, ub>
// CHECK:           scf.yield %[[MERGED]], %[[V]]
// CHECK:         scf.for
// CHECK:           tile.store %{{.*}} : !tile.tile<1x16xf16, ub, valid = [1, 8]>
// CHECK:         scf.for
// CHECK:           tile.store %{{.*}} : !tile.tile<1x1xf16, ub>
// CHECK:       }
// CHECK-NOT:   tile.store
// CHECK:     } else {
// CHECK-NOT:   tile.select
// CHECK:     }
// CHECK: } {pypto.core_loop}

func.func @softmax(%a: !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>) -> !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>> {
  // expected-error @+1 {{tv-sparse-to-tile: masked-window must be 0 or a positive multiple of 16 (whole 32-byte blocks of f16 and f32), got 24}}
  %p = tv.sparse_softmax %a : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
  func.return %p : !tv.tensor<8x32xf16, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
}
