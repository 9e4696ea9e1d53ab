// Memory planning: offsets aligned to the memory, space reused when lifetimes
// end, results computed in place over an operand that dies, carried values in
// one buffer, and a copy when the loop still needs the old value. Bank offsets
// are off here (first fit only; bank-offset.mlir shows them).
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=ascend910b bank-offset=false},hw-coalesce-dma' | filecheck %s

// %a dies at the exp, which computes in place; %c is live with %b, so it gets
// the next offset (16x16 f32 = 1024 bytes; offsets are multiples of 32); the add
// writes over %b. The [16, 1] row sums (64 bytes) take the space of %c, which
// died at the add.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[A:.*]] = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<16x16xf32, ub>
// CHECK-NEXT:    %[[C:.*]] = ascend_hw.alloc [1024, 2048) : !ascend_hw.buf<16x16xf32, ub>
// CHECK-NEXT:    %[[S:.*]] = ascend_hw.alloc [1024, 1088) : !ascend_hw.buf<16x1xf32, ub>
// CHECK-NOT:     ascend_hw.alloc
// 16 rows of 40 bytes into rows of 64: the UB pitch rounds 40 up to 64, no gap.
// CHECK:         ascend_hw.dma_load %x[{{.*}}] -> %[[A]] {bursts = 16 : i64, burst_bytes = 40 : i64}
// CHECK-NEXT:    ascend_hw.vexp %[[A]] -> %[[A]] {repeat = 16 : i64, mask = 10 : i64, blk_stride = array<i64: 1, 1>, rep_stride = array<i64: 2, 2>}
// CHECK-NEXT:    ascend_hw.dma_load %y[{{.*}}] -> %[[C]]
// CHECK-NEXT:    ascend_hw.vadd %[[A]], %[[C]] -> %[[A]]
// CHECK-NEXT:    ascend_hw.vreduce_sum %[[A]] -> %[[S]] {repeat = 16 : i64, mask = 10 : i64, rep_stride = array<i64: 2>}
// CHECK-NEXT:    ascend_hw.dma_store %[[S]] -> %s[{{.*}}] {bursts = 1 : i64, burst_bytes = 64 : i64}
// CHECK-NEXT:    ascend_hw.dma_store %[[A]] -> %out[{{.*}}] {bursts = 16 : i64, burst_bytes = 40 : i64}
func.func @chain(%x: memref<16x10xf32>, %y: memref<16x10xf32>, %out: memref<16x10xf32>, %s: memref<16x1xf32>) {
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : memref<16x10xf32> -> !tile.tile<16x16xf32, ub, valid = [16, 10]>
  %b = tile.exp %a : !tile.tile<16x16xf32, ub, valid = [16, 10]>
  %c = tile.load %y[%c0, %c0] : memref<16x10xf32> -> !tile.tile<16x16xf32, ub, valid = [16, 10]>
  %d = tile.add %b, %c : !tile.tile<16x16xf32, ub, valid = [16, 10]>
  %r = tile.reduce_sum %d, axis = 1 : !tile.tile<16x16xf32, ub, valid = [16, 10]> -> !tile.tile<16x1xf32, ub>
  tile.store %r, %s[%c0, %c0] : !tile.tile<16x1xf32, ub> -> memref<16x1xf32>
  tile.store %d, %out[%c0, %c0] : !tile.tile<16x16xf32, ub, valid = [16, 10]> -> memref<16x10xf32>
  func.return
}

// -----

// A running row maximum carried by the loop: init, block argument, the max
// computed in place and the loop result share one buffer; the loop drops it.
// CHECK-LABEL: func.func @carried
// CHECK-NEXT:    %[[ACC:.*]] = ascend_hw.alloc [0, 32) : !ascend_hw.buf<8x1xf32, ub>
// CHECK-NEXT:    %[[T:.*]] = ascend_hw.alloc [32, 1056) : !ascend_hw.buf<8x32xf32, ub>
// CHECK-NEXT:    %[[P:.*]] = ascend_hw.alloc [1056, 1088) : !ascend_hw.buf<8x1xf32, ub>
// CHECK:         ascend_hw.vdup %{{.*}} -> %[[ACC]] {mask = 8 : i64}
// CHECK-NEXT:    scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      ascend_hw.dma_load %x[{{.*}}] -> %[[T]]
// CHECK-NEXT:      ascend_hw.vreduce_max %[[T]] -> %[[P]] {repeat = 8 : i64, mask = 32 : i64, rep_stride = array<i64: 4>}
// CHECK-NEXT:      ascend_hw.vmax %[[ACC]], %[[P]] -> %[[ACC]] {mask = 8 : i64}
// CHECK-NEXT:    }
// CHECK-NEXT:    ascend_hw.dma_store %[[ACC]] -> %out
func.func @carried(%x: memref<8x128xf32>, %out: memref<8x1xf32>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %init = arith.constant 0xFF800000 : f32
  %acc0 = tile.fill %init : f32 -> !tile.tile<8x1xf32, ub>
  %acc = scf.for %j = %c0 to %c128 step %c32 iter_args(%a = %acc0) -> (!tile.tile<8x1xf32, ub>) {
    %t = tile.load %x[%c0, %j] : memref<8x128xf32> -> !tile.tile<8x32xf32, ub>
    %p = tile.reduce_max %t, axis = 1 : !tile.tile<8x32xf32, ub> -> !tile.tile<8x1xf32, ub>
    %n = tile.max %a, %p : !tile.tile<8x1xf32, ub>
    scf.yield %n : !tile.tile<8x1xf32, ub>
  }
  tile.store %acc, %out[%c0, %c0] : !tile.tile<8x1xf32, ub> -> memref<8x1xf32>
  func.return
}

// -----

// The old carried value is still read after the new one is computed, so the new
// one gets a buffer of its own (in place over %t) and is copied into the carried
// buffer at the end of each iteration. Until then the carried buffer is free
// once %old is dead: the product %m is computed there.
// CHECK-LABEL: func.func @copied
// CHECK-NEXT:    %[[OLD:.*]] = ascend_hw.alloc [0, 256) : !ascend_hw.buf<1x64xf32, ub>
// CHECK-NEXT:    %[[NEW:.*]] = ascend_hw.alloc [256, 512) : !ascend_hw.buf<1x64xf32, ub>
// CHECK:         ascend_hw.vdup %{{.*}} -> %[[OLD]]
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      ascend_hw.dma_load %x[{{.*}}] -> %[[NEW]]
// CHECK-NEXT:      ascend_hw.vadd %[[OLD]], %[[NEW]] -> %[[NEW]]
// CHECK-NEXT:      ascend_hw.vmul %[[OLD]], %[[NEW]] -> %[[OLD]]
// CHECK-NEXT:      ascend_hw.dma_store %[[OLD]] -> %out
// CHECK-NEXT:      ascend_hw.vcopy %[[NEW]] -> %[[OLD]]
// CHECK-NEXT:    }
func.func @copied(%x: memref<4x64xf32>, %out: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %s0 = tile.fill %zero : f32 -> !tile.tile<1x64xf32, ub>
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%old = %s0) -> (!tile.tile<1x64xf32, ub>) {
    %t = tile.load %x[%i, %c0] : memref<4x64xf32> -> !tile.tile<1x64xf32, ub>
    %new = tile.add %old, %t : !tile.tile<1x64xf32, ub>
    %m = tile.mul %old, %new : !tile.tile<1x64xf32, ub>
    tile.store %m, %out[%i, %c0] : !tile.tile<1x64xf32, ub> -> memref<4x64xf32>
    scf.yield %new : !tile.tile<1x64xf32, ub>
  }
  func.return
}

// -----

// Where the room allows, a tile goes to the bytes used longest ago rather than
// to the ones a tile has just left: %a1 takes fresh bytes (not %a0's), so its
// load need not wait for the store of %b0; %a3 takes %a1's (freed before
// %a2's). The room used stays what first fit needs (two tiles).
// CHECK-LABEL: func.func @spread
// CHECK-NEXT:    %[[P:.*]] = ascend_hw.alloc [0, 1024)
// CHECK-NEXT:    %[[Q:.*]] = ascend_hw.alloc [1024, 2048)
// CHECK-NOT:     ascend_hw.alloc
// CHECK:         ascend_hw.dma_load %x[{{.*}}] -> %[[P]]
// CHECK:         ascend_hw.dma_load %x[{{.*}}] -> %[[Q]]
// CHECK-NEXT:    ascend_hw.dma_load %x[{{.*}}] -> %[[P]]
// CHECK:         ascend_hw.dma_load %x[{{.*}}] -> %[[Q]]
func.func @spread(%x: memref<4x16x16xf32>, %out: memref<4x16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %a0 = tile.load %x[%c0, %c0, %c0] : memref<4x16x16xf32> -> !tile.tile<1x16x16xf32, ub>
  %b0 = tile.exp %a0 : !tile.tile<1x16x16xf32, ub>
  tile.store %b0, %out[%c0, %c0, %c0] : !tile.tile<1x16x16xf32, ub> -> memref<4x16x16xf32>
  %a1 = tile.load %x[%c1, %c0, %c0] : memref<4x16x16xf32> -> !tile.tile<1x16x16xf32, ub>
  %a2 = tile.load %x[%c2, %c0, %c0] : memref<4x16x16xf32> -> !tile.tile<1x16x16xf32, ub>
  %b1 = tile.exp %a1 : !tile.tile<1x16x16xf32, ub>
  tile.store %b1, %out[%c1, %c0, %c0] : !tile.tile<1x16x16xf32, ub> -> memref<4x16x16xf32>
  %b2 = tile.exp %a2 : !tile.tile<1x16x16xf32, ub>
  tile.store %b2, %out[%c2, %c0, %c0] : !tile.tile<1x16x16xf32, ub> -> memref<4x16x16xf32>
  %a3 = tile.load %x[%c3, %c0, %c0] : memref<4x16x16xf32> -> !tile.tile<1x16x16xf32, ub>
  %b3 = tile.exp %a3 : !tile.tile<1x16x16xf32, ub>
  tile.store %b3, %out[%c3, %c0, %c0] : !tile.tile<1x16x16xf32, ub> -> memref<4x16x16xf32>
  func.return
}
