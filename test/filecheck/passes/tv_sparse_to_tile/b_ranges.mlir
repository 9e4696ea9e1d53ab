// CSR spmm over row ranges of b (b-ranges, default on where it fits and the
// pipe estimates at 1 % density say it is faster than the row nest): the cores
// are 6 row ranges of b (683 rows x 128 columns f16 = 171 KiB in ub, no room
// for the offsets' table) x 4 row groups. Core c loads its range once (from
// min(k0, 4096 - 683), inside b); per block of 8 rows of its group, the
// block's offsets and a chunk of 512 indices and values (when the block's
// entries fit; else per-row windows of 64), the indices shifted by the tile's
// first row (tile.sub); per row its run of entries in the range found by two
// binary searches, their rows gathered from the range on chip, the f32 partial
// row stored to a GM workspace, one DMA a row (a block of rows to store at
// once, row-block, does not fit beside the range and the chunk here:
// row_block.mlir). A second core loop (after tile-to-hw's
// sync_all) adds the 6 partials of its rows 32 rows at a time and stores them.
// (gather-runs=false where a GM row gather is checked entry by entry: the runs are gather_runs_csr.mlir.)
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b b-ranges=false gather-runs=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=ascend910b sparse-b-ranges=false sparse-gather-runs=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b index-prefetch=false}' 2>&1 | filecheck %s --check-prefix=NOPREFETCH
// RUN: pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=ascend910b b-ranges-density=0.5}' 2>&1 | filecheck %s --check-prefix=DENSE
// RUN: not pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b b-ranges-density=0.0}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: b split into 6 row ranges of 683 kept in ub, 6 ranges x 4 row groups, each core's partial rows added after a sync_all 32 rows at a time; partial rows stored one at a time (row-block=4: no block of 2 rows fits in ub beside the range); the offsets loaded per block of 8 rows, indices and values per block in a chunk of 512; the pipe estimates at 1% density (167772 entries): row ranges {{[0-9]+}} (MTE3), rows of b from GM {{[0-9]+}} (MTE2)
// CHECK: func.func @spmm(
// CHECK:   %[[WS:.*]] = memref.alloc() : memref<24576x128xf32>
// CHECK:   scf.for %[[CORE:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     %[[RANGE:.*]] = arith.remui %[[CORE]]
// CHECK:     %[[K0:.*]] = arith.muli %[[RANGE]]
// CHECK:     %[[LESS:.*]] = arith.cmpi slt, %[[K0]]
// CHECK:     %[[ROW0:.*]] = arith.select %[[LESS]], %[[K0]]
// CHECK:     %[[B:.*]] = tile.load %b[%[[ROW0]], %{{.*}}] : memref<4096x128xf16> -> !tile.tile<683x128xf16, ub>
// CHECK:     %[[SHIFT:.*]] = arith.index_cast %[[ROW0]] : index to i32
// CHECK:     scf.if
// CHECK:       scf.for
// CHECK:         tile.load %a_offsets[%{{.*}}] : memref<4097xi32> -> !tile.tile<16xi32, ub>
// CHECK:         scf.if
// CHECK:           %[[IDS:.*]] = tile.load %a_indices[%{{.*}}] : memref<?xi32> -> !tile.tile<512xi32, ub>
// CHECK:           %[[SHIFTED:.*]] = tile.sub %[[IDS]], %[[SHIFT]] : !tile.tile<512xi32, ub>, i32
// CHECK:           scf.for
// CHECK:             tile.fill
// CHECK:             tile.extract %[[SHIFTED]]
// CHECK:             tile.gather %[[B]][%[[SHIFTED]], %{{.*}}] : !tile.tile<683x128xf16, ub>, !tile.tile<512xi32, ub> -> !tile.tile<1x128xf16, ub>
// CHECK:             tile.store %{{.*}}, %[[WS]][%{{.*}}, %{{.*}}] : !tile.tile<1x128xf32, ub> -> memref<24576x128xf32>
// CHECK:         } else {
// CHECK:           tile.load %a_indices[%{{.*}}] : memref<?xi32> -> !tile.tile<64xi32, ub>
// CHECK:           tile.gather %[[B]]
// CHECK:     } else {
// CHECK:       memref.load %a_indices
// CHECK:       tile.load %b[%{{.*}}, %{{.*}}] : memref<4096x128xf16> -> !tile.tile<1x128xf16, ub>
// CHECK:   } {pypto.core_loop}
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     scf.for
// CHECK:       tile.load %[[WS]][%{{.*}}, %{{.*}}] : memref<24576x128xf32> -> !tile.tile<32x128xf32, ub>
// CHECK-COUNT-5: tile.add
// CHECK:       tile.cast %{{.*}} : !tile.tile<32x128xf32, ub> -> !tile.tile<32x128xf16, ub>
// CHECK:       tile.store %{{.*}}, %out[%{{.*}}, %{{.*}}] : !tile.tile<32x128xf16, ub> -> memref<4096x128xf16>
// CHECK:   } {pypto.core_loop}
// CHECK:   memref.dealloc %[[WS]]

// Estimated at 50 % (b-ranges-density=0.5): blocks of one row (a row of 2048
// entries does not fit a chunk of 512: its windows then), still taken; the
// partial rows then one a DMA.
// DENSE: b split into 6 row ranges of 683 kept in ub, 6 ranges x 4 row groups, each core's partial rows added after a sync_all 32 rows at a time; partial rows stored one at a time (row-block=4: a block of rows sharing a chunk is one row); the offsets loaded per block of 1 rows, indices and values per block in a chunk of 512; the pipe estimates at 50% density (8388608 entries)
// BAD: error: tv-sparse-to-tile: b-ranges-density must be in (0, 1], got 0
// OFF: row ranges of b off (b-ranges=false)
// OFF-NOT: tile.sub
// NOPREFETCH: rows of b gathered from GM (a resident slice of b needs prefetched i32 indices, the balanced split and a slice of whole 32-byte rows that fits in ub){{.*}}; no row ranges of b (they need prefetched i32 indices, the balanced split, rows of b of whole 32-byte blocks and a range that fits in ub)
func.func @spmm(%a: !tv.tensor<4096x4096xf16, #tv.csr<rows = 4096, cols = 4096, nnz = ?, index = i32>>, %b: !tv.tensor<4096x128xf16>) -> !tv.tensor<4096x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<4096x4096xf16, #tv.csr<rows = 4096, cols = 4096, nnz = ?, index = i32>>, !tv.tensor<4096x128xf16> -> !tv.tensor<4096x128xf16>
  func.return %c : !tv.tensor<4096x128xf16>
}

// -----

// 1024 deep: the resident column slices (resident.mlir) are kept.
// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: row ranges of b a resident column slice kept; the pipe estimates at 1% density (10486 entries): row ranges {{[0-9]+}} (S), rows of b from GM {{[0-9]+}} (MTE2)
// OFF: row ranges of b off (b-ranges=false)
func.func @shallow(%a: !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, %b: !tv.tensor<1024x128xf16>) -> !tv.tensor<1024x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<1024x1024xf16, #tv.csr<rows = 1024, cols = 1024, nnz = ?, index = i32>>, !tv.tensor<1024x128xf16> -> !tv.tensor<1024x128xf16>
  func.return %c : !tv.tensor<1024x128xf16>
}

// -----

// 64 rows 4096 deep: each core stores a partial for every row of its group,
// more than the row nest's gathers at 1 %: not taken.
// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: row ranges of b not taken; the pipe estimates at 1% density (2621 entries)
// (no range of b in ub; the rows of b a tile of 8 at most: gather-runs)
// CHECK-NOT: memref<4096x128xf16> -> !tile.tile<{{[0-9][0-9]+}}x128xf16
func.func @short(%a: !tv.tensor<64x4096xf16, #tv.csr<rows = 64, cols = 4096, nnz = ?, index = i32>>, %b: !tv.tensor<4096x128xf16>) -> !tv.tensor<64x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<64x4096xf16, #tv.csr<rows = 64, cols = 4096, nnz = ?, index = i32>>, !tv.tensor<4096x128xf16> -> !tv.tensor<64x128xf16>
  func.return %c : !tv.tensor<64x128xf16>
}

// -----

// Rows of b of 8 f16 (16 bytes) are not whole 32-byte ub blocks.
// CHECK-LABEL: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK-SAME: no row ranges of b (they need prefetched i32 indices, the balanced split, rows of b of whole 32-byte blocks and a range that fits in ub)
func.func @narrow(%a: !tv.tensor<64x4096xf16, #tv.csr<rows = 64, cols = 4096, nnz = ?, index = i32>>, %b: !tv.tensor<4096x8xf16>) -> !tv.tensor<64x8xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<64x4096xf16, #tv.csr<rows = 64, cols = 4096, nnz = ?, index = i32>>, !tv.tensor<4096x8xf16> -> !tv.tensor<64x8xf16>
  func.return %c : !tv.tensor<64x8xf16>
}
