// Row maxima and minima of rows of whole 32-byte blocks reduce 8 rows a vector
// repeat (vblock_reduce_max/min, vcgmax/vcgmin): rows of one block in one
// instruction; rows of one repeat of f32 (8 blocks of 8) to their 8 block
// partials, then those rows of one block; rows of two blocks take the larger
// (smaller) of each row's two blocks first. A remark gives both estimates.
// Sums (another rounding order), rows not of whole blocks, row counts not a
// multiple of 8, and block-reduce=false keep a vreduce repeat per row.
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=ascend910b block-reduce=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=ascend910b block-reduce=false}' 2>&1 | filecheck %s --check-prefix=OFF

func.func @repeat_rows(%x: memref<64x64xf32>, %out: memref<64x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<64x64xf32> -> !tile.tile<64x64xf32, ub>
  %m = tile.reduce_max %t, axis = 1 : !tile.tile<64x64xf32, ub> -> !tile.tile<64x1xf32, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<64x1xf32, ub> -> memref<64x1xf32>
  func.return
}

// CHECK: remark: tile-to-hw: 64 rows of 64 f32 reduced by 32-byte blocks, 8 rows a repeat (vblock_reduce_max then vblock_reduce_max): ~82 cycles instead of ~456 by a repeat per row (block-reduce=false)
// CHECK-LABEL: func.func @repeat_rows
// CHECK:         %[[P:.*]] = ascend_hw.alloc {{.*}} : !ascend_hw.buf<512xf32, ub>
// CHECK:         ascend_hw.vblock_reduce_max %{{.*}} -> %[[P]] {repeat = 64 : i64} : !ascend_hw.buf<64x64xf32, ub> -> !ascend_hw.buf<512xf32, ub>
// CHECK-NEXT:    ascend_hw.vblock_reduce_max %[[P]] -> %{{.*}} {repeat = 8 : i64} : !ascend_hw.buf<512xf32, ub> -> !ascend_hw.buf<64x1xf32, ub>
// CHECK-NOT:     vreduce
// OFF-NOT:       vblock_reduce
// OFF-LABEL:     func.func @repeat_rows
// OFF:           ascend_hw.vreduce_max %{{.*}} -> %{{.*}} {repeat = 64 : i64, rep_stride = array<i64: 8>}

// -----

func.func @block_rows(%x: memref<16x16xf16>, %out: memref<16x1xf16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<16x16xf16> -> !tile.tile<16x16xf16, ub>
  %m = tile.reduce_min %t, axis = 1 : !tile.tile<16x16xf16, ub> -> !tile.tile<16x1xf16, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<16x1xf16, ub> -> memref<16x1xf16>
  func.return
}

// CHECK: remark: tile-to-hw: 16 rows of 16 f16 reduced by 32-byte blocks, 8 rows a repeat (vblock_reduce_min)
// CHECK-LABEL: func.func @block_rows
// CHECK:         ascend_hw.vblock_reduce_min %{{.*}} -> %{{.*}} {repeat = 2 : i64} : !ascend_hw.buf<16x16xf16, ub> -> !ascend_hw.buf<16x1xf16, ub>
// OFF-LABEL:     func.func @block_rows
// OFF:           ascend_hw.vreduce_min

// -----

func.func @pair_rows(%x: memref<64x16xf32>, %out: memref<64x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<64x16xf32> -> !tile.tile<64x16xf32, ub>
  %m = tile.reduce_max %t, axis = 1 : !tile.tile<64x16xf32, ub> -> !tile.tile<64x1xf32, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<64x1xf32, ub> -> memref<64x1xf32>
  func.return
}

// CHECK: remark: tile-to-hw: 64 rows of 16 f32 reduced by 32-byte blocks, 8 rows a repeat (vmax then vblock_reduce_max)
// CHECK-LABEL: func.func @pair_rows
// CHECK:         %[[P:.*]] = ascend_hw.alloc {{.*}} : !ascend_hw.buf<512xf32, ub>
// CHECK:         %[[S:.*]] = ascend_hw.subview
// CHECK-NEXT:    ascend_hw.vmax %[[X:.*]], %[[S]] -> %[[P]] {repeat = 8 : i64, blk_stride = array<i64: 2, 2, 1>, rep_stride = array<i64: 16, 16, 8>}
// CHECK-NEXT:    ascend_hw.vblock_reduce_max %[[P]] -> %{{.*}} {repeat = 8 : i64} : !ascend_hw.buf<512xf32, ub> -> !ascend_hw.buf<64x1xf32, ub>
// OFF-LABEL:     func.func @pair_rows
// OFF:           ascend_hw.vreduce_max

// -----

// Refused: a sum, 12 rows (not a multiple of 8), f16 rows of 4 blocks.
func.func @kept(%x: memref<64x64xf32>, %y: memref<12x8xf32>, %z: memref<8x64xf16>, %o1: memref<64x1xf32>, %o2: memref<12x1xf32>, %o3: memref<8x1xf16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<64x64xf32> -> !tile.tile<64x64xf32, ub>
  %s = tile.reduce_sum %t, axis = 1 : !tile.tile<64x64xf32, ub> -> !tile.tile<64x1xf32, ub>
  tile.store %s, %o1[%c0, %c0] : !tile.tile<64x1xf32, ub> -> memref<64x1xf32>
  %u = tile.load %y[%c0, %c0] : memref<12x8xf32> -> !tile.tile<12x8xf32, ub>
  %m = tile.reduce_max %u, axis = 1 : !tile.tile<12x8xf32, ub> -> !tile.tile<12x1xf32, ub>
  tile.store %m, %o2[%c0, %c0] : !tile.tile<12x1xf32, ub> -> memref<12x1xf32>
  %w = tile.load %z[%c0, %c0] : memref<8x64xf16> -> !tile.tile<8x64xf16, ub>
  %n = tile.reduce_max %w, axis = 1 : !tile.tile<8x64xf16, ub> -> !tile.tile<8x1xf16, ub>
  tile.store %n, %o3[%c0, %c0] : !tile.tile<8x1xf16, ub> -> memref<8x1xf16>
  func.return
}

// CHECK-NOT: remark
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     vblock_reduce
// CHECK:         ascend_hw.vreduce_sum %{{.*}} {repeat = 64 : i64
// CHECK:         ascend_hw.vreduce_max %{{.*}} {repeat = 12 : i64
// CHECK:         ascend_hw.vreduce_max %{{.*}} {repeat = 8 : i64
