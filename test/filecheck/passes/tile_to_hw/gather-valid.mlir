// tile.gather copies a source row's valid columns only: rows of 24 f16 DMAed
// into ub rows of 32 (a gather-runs tile of a CSR spmm of 24 columns) leave
// the padding unwritten, so the vcopy takes 24 lanes (mask = 24), not 32 (the
// simulator's UninitializedReadError when it read the padding).
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b}' | filecheck %s

func.func @f(%b: memref<80x24xf16>, %idx: memref<64xi32>, %out: memref<1x24xf16>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %t = tile.load %b[%c3, %c0] : memref<80x24xf16> -> !tile.tile<8x32xf16, ub, valid = [8, 24]>
  %i = tile.load %idx[%c0] : memref<64xi32> -> !tile.tile<64xi32, ub>
  %g = tile.gather %t[%i, %c3] : !tile.tile<8x32xf16, ub, valid = [8, 24]>, !tile.tile<64xi32, ub> -> !tile.tile<1x32xf16, ub, valid = [1, 24]>
  tile.store %g, %out[%c0, %c0] : !tile.tile<1x32xf16, ub, valid = [1, 24]> -> memref<1x24xf16>
  func.return
}

// CHECK-LABEL: func.func @f(
// CHECK:         %[[ROWS:.*]] = ascend_hw.alloc [0, 512) : !ascend_hw.buf<8x32xf16, ub>
// CHECK:         ascend_hw.dma_load %b[%c3, %c0] -> %[[ROWS]] {bursts = 1 : i64, burst_bytes = 48 : i64}
// CHECK:         %[[ROW:.*]] = ascend_hw.load_scalar %{{.*}}[%c3] : !ascend_hw.buf<64xi32, ub> -> index
// CHECK-NEXT:    %[[VIEW:.*]] = ascend_hw.subview %[[ROWS]][%[[ROW]], %c0] : !ascend_hw.buf<8x32xf16, ub> -> !ascend_hw.buf<32xf16, ub>
// CHECK-NEXT:    ascend_hw.vcopy %[[VIEW]] -> %{{.*}} {mask = 24 : i64} : !ascend_hw.buf<32xf16, ub> -> !ascend_hw.buf<1x32xf16, ub>
