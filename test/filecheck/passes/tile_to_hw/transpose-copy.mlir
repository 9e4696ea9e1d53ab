// A transpose of a row [1, N] or a column [N, 1] is a copy: both are N
// contiguous elements in UB (no offset table, no gather).
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=tiny}' | filecheck %s

// CHECK-LABEL: func.func @row
// CHECK-NOT:   vgather
// CHECK:       ascend_hw.dma_load %x[{{.*}}] -> %[[ROW:.*]] {bursts = 1 : i64, burst_bytes = 8 : i64}
// CHECK-NEXT:  ascend_hw.vcopy %[[ROW]] -> %[[COL:.*]] {mask = 2 : i64} : !ascend_hw.buf<1x8xf32, ub> -> !ascend_hw.buf<8x1xf32, ub>
// CHECK-NEXT:  ascend_hw.dma_store %[[COL]] -> %out[{{.*}}] {bursts = 1 : i64, burst_bytes = 8 : i64}
func.func @row(%x: memref<1x2xf32>, %out: memref<2x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<1x2xf32> -> !tile.tile<1x8xf32, ub, valid = [1, 2]>
  %u = tile.transpose %t : !tile.tile<1x8xf32, ub, valid = [1, 2]> -> !tile.tile<8x1xf32, ub, valid = [2, 1]>
  tile.store %u, %out[%c0, %c0] : !tile.tile<8x1xf32, ub, valid = [2, 1]> -> memref<2x1xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @column
// CHECK-NOT:   vgather
// CHECK:       ascend_hw.vcopy %{{.*}} -> %{{.*}} {mask = 5 : i64} : !ascend_hw.buf<16x1xf16, ub> -> !ascend_hw.buf<1x16xf16, ub>
func.func @column(%x: memref<5x1xf16>, %out: memref<1x5xf16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<5x1xf16> -> !tile.tile<16x1xf16, ub, valid = [5, 1]>
  %u = tile.transpose %t : !tile.tile<16x1xf16, ub, valid = [5, 1]> -> !tile.tile<1x16xf16, ub, valid = [1, 5]>
  tile.store %u, %out[%c0, %c0] : !tile.tile<1x16xf16, ub, valid = [1, 5]> -> memref<1x5xf16>
  func.return
}
