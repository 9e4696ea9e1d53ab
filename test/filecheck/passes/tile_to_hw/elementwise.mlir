// A 2-D elementwise kernel with tails in both dims (20x40 f16 in 8x32 tiles):
// tile-peel-tails splits off the last row block and the last column block, and
// tile-to-hw gives every tile a UB buffer and covers each valid region exactly:
// full tiles contiguously (repeats of 128 lanes), the 8-column tail row by row
// (one repeat per row, repeat stride = the 64-byte row pitch, mask = 8 lanes).
// RUN: pypto-opt %s -p 'tile-peel-tails,tile-to-hw{target=ascend910b max_cores=1},hw-coalesce-dma' | filecheck %s

func.func @f(%x: memref<20x40xf16>, %out: memref<20x40xf16>) {
  %c0 = arith.constant 0 : index
  %rows = arith.constant 20 : index
  %cols = arith.constant 40 : index
  %tm = arith.constant 8 : index
  %tn = arith.constant 32 : index
  scf.for %i = %c0 to %rows step %tm {
    %vi_left = arith.subi %rows, %i : index
    %vi_lt = arith.cmpi slt, %vi_left, %tm : index
    %vi = arith.select %vi_lt, %vi_left, %tm : index
    scf.for %j = %c0 to %cols step %tn {
      %vj_left = arith.subi %cols, %j : index
      %vj_lt = arith.cmpi slt, %vj_left, %tn : index
      %vj = arith.select %vj_lt, %vj_left, %tn : index
      %t = tile.load %x[%i, %j] valid [%vi, %vj] : memref<20x40xf16> -> !tile.tile<8x32xf16, ub, valid = [?, ?]>
      %e = tile.exp %t : !tile.tile<8x32xf16, ub, valid = [?, ?]>
      %r = tile.add %e, %t : !tile.tile<8x32xf16, ub, valid = [?, ?]>
      tile.store %r, %out[%i, %j] : !tile.tile<8x32xf16, ub, valid = [?, ?]> -> memref<20x40xf16>
    }
  }
  func.return
}

// CHECK:      builtin.module attributes {pypto.target = "ascend910b"} {
// CHECK-NEXT:   func.func @f(%x: memref<20x40xf16>, %out: memref<20x40xf16>) attributes {ascend_hw.block_dim = 1 : i64} {
// Two tiles live at once (%t is still needed by the add), the add computes in place.
// %e starts 256 bytes past the first free offset (bank-offset): each repeat of
// the exp and the add then reads and writes the bank groups the other does not.
// In the loop over row blocks the full and the column-tail tiles get buffers of
// their own (%t2, %e2), so that the next iteration's load need not wait for this
// iteration's last store; the peeled row tail reuses %t and %e.
// CHECK-NEXT:     %[[T:.*]] = ascend_hw.alloc [0, 512) : !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT:     %[[E:.*]] = ascend_hw.alloc [768, 1280) : !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT:     %[[T2:.*]] = ascend_hw.alloc [1280, 1792) : !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT:     %[[E2:.*]] = ascend_hw.alloc [2048, 2560) : !ascend_hw.buf<8x32xf16, ub>
// CHECK-NOT:      ascend_hw.alloc
// CHECK:          scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// Full 8x32 tile: 8 bursts of 64 bytes, 16 bytes apart in GM, packed in UB.
// CHECK-NEXT:       ascend_hw.dma_load %x[%[[I]], %{{.*}}] -> %[[T]] {bursts = 8 : i64, burst_bytes = 64 : i64, src_gap = 16 : i64} : memref<20x40xf16> -> !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT:       ascend_hw.vexp %[[T]] -> %[[E]] {repeat = 2 : i64} : !ascend_hw.buf<8x32xf16, ub> -> !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT:       ascend_hw.vadd %[[E]], %[[T]] -> %[[E]] {repeat = 2 : i64} : !ascend_hw.buf<8x32xf16, ub>, !ascend_hw.buf<8x32xf16, ub> -> !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT:       ascend_hw.dma_store %[[E]] -> %out[%[[I]], %{{.*}}] {bursts = 8 : i64, burst_bytes = 64 : i64, dst_gap = 16 : i64} : !ascend_hw.buf<8x32xf16, ub> -> memref<20x40xf16>
// Column tail 8x8: 16-byte bursts land 64 bytes apart in UB (dst_gap = 64 - 32).
// CHECK-NEXT:       ascend_hw.dma_load %x[%[[I]], %{{.*}}] -> %[[T2]] {bursts = 8 : i64, burst_bytes = 16 : i64, src_gap = 64 : i64, dst_gap = 32 : i64}
// CHECK-NEXT:       ascend_hw.vexp %[[T2]] -> %[[E2]] {repeat = 8 : i64, mask = 8 : i64, blk_stride = array<i64: 1, 1>, rep_stride = array<i64: 2, 2>}
// CHECK-NEXT:       ascend_hw.vadd %[[E2]], %[[T2]] -> %[[E2]] {repeat = 8 : i64, mask = 8 : i64, blk_stride = array<i64: 1, 1, 1>, rep_stride = array<i64: 2, 2, 2>}
// CHECK-NEXT:       ascend_hw.dma_store %[[E2]] -> %out[%[[I]], %{{.*}}] {bursts = 8 : i64, burst_bytes = 16 : i64, src_gap = 32 : i64, dst_gap = 64 : i64}
// CHECK-NEXT:     }
// Row tail (4 rows), peeled: 4x32 is one full repeat, 4x8 four masked repeats.
// CHECK-NEXT:     ascend_hw.dma_load %x[%{{.*}}, %{{.*}}] -> %[[T]] {bursts = 4 : i64, burst_bytes = 64 : i64, src_gap = 16 : i64}
// CHECK-NEXT:     ascend_hw.vexp %[[T]] -> %[[E]] : !ascend_hw.buf<8x32xf16, ub> -> !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT:     ascend_hw.vadd %[[E]], %[[T]] -> %[[E]] : !ascend_hw.buf<8x32xf16, ub>, !ascend_hw.buf<8x32xf16, ub> -> !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT:     ascend_hw.dma_store %[[E]] -> %out[%{{.*}}, %{{.*}}] {bursts = 4 : i64, burst_bytes = 64 : i64, dst_gap = 16 : i64}
// CHECK-NEXT:     ascend_hw.dma_load %x[%{{.*}}, %{{.*}}] -> %[[T]] {bursts = 4 : i64, burst_bytes = 16 : i64, src_gap = 64 : i64, dst_gap = 32 : i64}
// CHECK-NEXT:     ascend_hw.vexp %[[T]] -> %[[E]] {repeat = 4 : i64, mask = 8 : i64, blk_stride = array<i64: 1, 1>, rep_stride = array<i64: 2, 2>}
// CHECK-NEXT:     ascend_hw.vadd %[[E]], %[[T]] -> %[[E]] {repeat = 4 : i64, mask = 8 : i64, blk_stride = array<i64: 1, 1, 1>, rep_stride = array<i64: 2, 2, 2>}
// CHECK-NEXT:     ascend_hw.dma_store %[[E]] -> %out[%{{.*}}, %{{.*}}] {bursts = 4 : i64, burst_bytes = 16 : i64, src_gap = 32 : i64, dst_gap = 64 : i64}
// CHECK-NEXT:     func.return
