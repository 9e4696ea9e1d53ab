// A row reduction of rows longer than a repeat (64 f32 lanes) reduces row by
// row when that issues fewer instructions (each pays the vector start-up): a
// vreduce of each row's whole repeats into a row of partials, one vreduce of
// the rows of partials; a partial last repeat of every row is one more vreduce
// over the rows, combined at the end. 8 rows of 1024: 9 instructions instead of
// 16 vreduce and 15 combines by column chunk. 200 rows of 130 stay by chunk.
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=ascend910b}' | filecheck %s

func.func @rows(%x: memref<8x1024xf32>, %out: memref<8x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<8x1024xf32> -> !tile.tile<8x1024xf32, ub>
  %m = tile.reduce_max %t, axis = 1 : !tile.tile<8x1024xf32, ub> -> !tile.tile<8x1xf32, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<8x1xf32, ub> -> memref<8x1xf32>
  func.return
}

// CHECK-LABEL: func.func @rows
// CHECK:         ascend_hw.dma_load
// CHECK-COUNT-8: ascend_hw.vreduce_max %{{.*}} -> %{{.*}} {repeat = 16 : i64, rep_stride = array<i64: 8>}
// CHECK-NEXT:    ascend_hw.vreduce_max %[[P:.*]] -> %{{.*}} {repeat = 8 : i64, mask = 16 : i64, rep_stride = array<i64: 2>} : !ascend_hw.buf<{{.*}}xf32, ub> -> !ascend_hw.buf<8x1xf32, ub>
// CHECK-NEXT:    ascend_hw.dma_store

// -----

func.func @tail(%x: memref<4x300xf32>, %out: memref<4x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<4x300xf32> -> !tile.tile<4x304xf32, ub, valid = [4, 300]>
  %s = tile.reduce_sum %t, axis = 1 : !tile.tile<4x304xf32, ub, valid = [4, 300]> -> !tile.tile<4x1xf32, ub>
  tile.store %s, %out[%c0, %c0] : !tile.tile<4x1xf32, ub> -> memref<4x1xf32>
  func.return
}

// CHECK-LABEL: func.func @tail
// CHECK-COUNT-4: ascend_hw.vreduce_sum %{{.*}} -> %{{.*}} {repeat = 4 : i64, rep_stride = array<i64: 8>}
// CHECK-NEXT:    ascend_hw.vreduce_sum %{{.*}} -> %[[D:.*]] {repeat = 4 : i64, mask = 4 : i64, rep_stride = array<i64: 1>}
// CHECK:         ascend_hw.vreduce_sum %{{.*}} -> %[[T:.*]] {repeat = 4 : i64, mask = 44 : i64, rep_stride = array<i64: 38>}
// CHECK-NEXT:    ascend_hw.vadd %[[D]], %[[T]] -> %[[D]] {mask = 4 : i64}

// -----

func.func @chunks(%x: memref<200x130xf32>, %out: memref<200x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<200x130xf32> -> !tile.tile<200x136xf32, ub, valid = [200, 130]>
  %s = tile.reduce_sum %t, axis = 1 : !tile.tile<200x136xf32, ub, valid = [200, 130]> -> !tile.tile<200x1xf32, ub>
  tile.store %s, %out[%c0, %c0] : !tile.tile<200x1xf32, ub> -> memref<200x1xf32>
  func.return
}

// CHECK-LABEL: func.func @chunks
// CHECK-COUNT-3: ascend_hw.vreduce_sum %{{.*}} -> %{{.*}} {repeat = 200 : i64
// CHECK:         ascend_hw.vadd

// -----

// The same rule for a row broadcast against long rows: one vsub per row over
// its 16 repeats (the statistic's block read with strides 0) instead of one per
// column chunk down the 8 rows.
func.func @centre(%x: memref<8x1024xf32>, %out: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<8x1024xf32> -> !tile.tile<8x1024xf32, ub>
  %m = tile.reduce_max %t, axis = 1 : !tile.tile<8x1024xf32, ub> -> !tile.tile<8x1xf32, ub>
  %d = tile.sub %t, %m : !tile.tile<8x1024xf32, ub>, !tile.tile<8x1xf32, ub>
  tile.store %d, %out[%c0, %c0] : !tile.tile<8x1024xf32, ub> -> memref<8x1024xf32>
  func.return
}

// CHECK-LABEL: func.func @centre
// CHECK:         ascend_hw.vbrcb
// CHECK-COUNT-8: ascend_hw.vsub %{{.*}}, %{{.*}} -> %{{.*}} {repeat = 16 : i64, blk_stride = array<i64: 1, 0, 1>, rep_stride = array<i64: 8, 0, 8>}
// CHECK-NOT:     ascend_hw.vsub
