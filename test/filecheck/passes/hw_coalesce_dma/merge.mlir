// hw-coalesce-dma: DMAs whose bursts continue each other become one DMA, bursts
// with no gap on either side become one burst; anything else is left as it is.
// RUN: pypto-opt %s -p hw-coalesce-dma | filecheck %s

builtin.module attributes {pypto.target = "ascend910b"} {
  // Four row loads of consecutive GM rows into consecutive ub rows: one DMA of
  // four bursts, which have no gap on either side, so one burst of 8 KiB. The
  // row views and index arithmetic only the merged DMAs used are erased.
  // CHECK-LABEL: func.func @rows
  // CHECK-NEXT:    %c0 = arith.constant 0 : index
  // CHECK-NEXT:    %t = ascend_hw.alloc [0, 8192) : !ascend_hw.buf<4x1024xf16, ub>
  // CHECK-NEXT:    ascend_hw.dma_load %x[%i, %c0] -> %t {bursts = 1 : i64, burst_bytes = 8192 : i64} : memref<64x1024xf16> -> !ascend_hw.buf<4x1024xf16, ub>
  // CHECK-NEXT:    ascend_hw.vadd
  // CHECK-NEXT:    func.return
  func.func @rows(%x: memref<64x1024xf16>, %i: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %t = ascend_hw.alloc [0, 8192) : !ascend_hw.buf<4x1024xf16, ub>
    %r1 = ascend_hw.subview %t[%c1, %c0] : !ascend_hw.buf<4x1024xf16, ub> -> !ascend_hw.buf<1x1024xf16, ub>
    %r2 = ascend_hw.subview %t[%c2, %c0] : !ascend_hw.buf<4x1024xf16, ub> -> !ascend_hw.buf<1x1024xf16, ub>
    %r3 = ascend_hw.subview %t[%c3, %c0] : !ascend_hw.buf<4x1024xf16, ub> -> !ascend_hw.buf<1x1024xf16, ub>
    ascend_hw.dma_load %x[%i, %c0] -> %t {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<4x1024xf16, ub>
    %i1 = arith.addi %i, %c1 : index
    ascend_hw.dma_load %x[%i1, %c0] -> %r1 {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<1x1024xf16, ub>
    %i2 = arith.addi %i, %c2 : index
    ascend_hw.dma_load %x[%i2, %c0] -> %r2 {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<1x1024xf16, ub>
    %i3 = arith.addi %i, %c3 : index
    ascend_hw.dma_load %x[%i3, %c0] -> %r3 {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<1x1024xf16, ub>
    ascend_hw.vadd %t, %t -> %t {repeat = 32} : !ascend_hw.buf<4x1024xf16, ub>, !ascend_hw.buf<4x1024xf16, ub> -> !ascend_hw.buf<4x1024xf16, ub>
    func.return
  }

  // Column blocks x[i, 0:64] of every other row into consecutive 128 B ub rows:
  // one DMA of three bursts with a GM gap (the row stride minus the burst).
  // The first store is a multi-burst DMA and the next continues it at its
  // pitch: they join. The last one's ub row is not the next: it stays.
  // CHECK-LABEL: func.func @strided
  // CHECK:         ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 3 : i64, burst_bytes = 128 : i64, src_gap = 3968 : i64} : memref<64x1024xf16> -> !ascend_hw.buf<3x64xf16, ub>
  // CHECK-NEXT:    ascend_hw.dma_store %t -> %y[%c0, %c0] {bursts = 3 : i64, burst_bytes = 128 : i64, dst_gap = 1920 : i64} : !ascend_hw.buf<3x64xf16, ub> -> memref<64x1024xf16>
  // CHECK-NEXT:    ascend_hw.dma_store %t -> %y[%c3, %c0] {bursts = 1 : i64, burst_bytes = 128 : i64} : !ascend_hw.buf<3x64xf16, ub> -> memref<64x1024xf16>
  // CHECK-NEXT:    func.return
  func.func @strided(%x: memref<64x1024xf16>, %y: memref<64x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %t = ascend_hw.alloc [0, 384) : !ascend_hw.buf<3x64xf16, ub>
    %r1 = ascend_hw.subview %t[%c1, %c0] : !ascend_hw.buf<3x64xf16, ub> -> !ascend_hw.buf<1x64xf16, ub>
    %r2 = ascend_hw.subview %t[%c2, %c0] : !ascend_hw.buf<3x64xf16, ub> -> !ascend_hw.buf<1x64xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1, burst_bytes = 128} : memref<64x1024xf16> -> !ascend_hw.buf<3x64xf16, ub>
    ascend_hw.dma_load %x[%c2, %c0] -> %r1 {bursts = 1, burst_bytes = 128} : memref<64x1024xf16> -> !ascend_hw.buf<1x64xf16, ub>
    ascend_hw.dma_load %x[%c4, %c0] -> %r2 {bursts = 1, burst_bytes = 128} : memref<64x1024xf16> -> !ascend_hw.buf<1x64xf16, ub>
    ascend_hw.dma_store %t -> %y[%c0, %c0] {bursts = 2, burst_bytes = 128, dst_gap = 1920} : !ascend_hw.buf<3x64xf16, ub> -> memref<64x1024xf16>
    ascend_hw.dma_store %r2 -> %y[%c2, %c0] {bursts = 1, burst_bytes = 128} : !ascend_hw.buf<1x64xf16, ub> -> memref<64x1024xf16>
    ascend_hw.dma_store %t -> %y[%c3, %c0] {bursts = 1, burst_bytes = 128} : !ascend_hw.buf<3x64xf16, ub> -> memref<64x1024xf16>
    func.return
  }
}
