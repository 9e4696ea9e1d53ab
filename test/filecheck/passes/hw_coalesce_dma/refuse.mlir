// hw-coalesce-dma leaves DMAs alone when a merge would not move exactly the same
// bytes or there is nothing to merge.
// RUN: pypto-opt %s -p hw-coalesce-dma | filecheck %s

builtin.module attributes {pypto.target = "ascend910b"} {
  // CHECK-LABEL: func.func @refusals
  // A lone DMA with GM gaps: nothing to merge.
  // CHECK:      ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 2 : i64, burst_bytes = 128 : i64, src_gap = 1920 : i64}
  // Two memrefs.
  // CHECK-NEXT: ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // CHECK-NEXT: ascend_hw.dma_load %z[%c1, %c0] -> %r1 {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // An instruction in between (the add reads the first row).
  // CHECK-NEXT: ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // CHECK-NEXT: ascend_hw.vadd
  // CHECK-NEXT: ascend_hw.dma_load %x[%c1, %c0] -> %r1 {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // GM rows whose distance is not known at compile time.
  // CHECK-NEXT: ascend_hw.dma_load %x[%i, %c0] -> %t {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // CHECK-NEXT: ascend_hw.dma_load %x[%j, %c0] -> %r1 {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // The same GM row twice (bursts would overlap on GM).
  // CHECK-NEXT: ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // CHECK-NEXT: ascend_hw.dma_load %x[%c0, %c0] -> %r1 {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // Consecutive GM bytes into ub rows with a gap between them: not one burst.
  // CHECK-NEXT: ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 2 : i64, burst_bytes = 1024 : i64, dst_gap = 1024 : i64}
  // Different burst lengths.
  // CHECK-NEXT: ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // CHECK-NEXT: ascend_hw.dma_load %x[%c1, %c0] -> %r1 {bursts = 1 : i64, burst_bytes = 1024 : i64}
  // A load and a store.
  // CHECK-NEXT: ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // CHECK-NEXT: ascend_hw.dma_store %r1 -> %x[%c1, %c0] {bursts = 1 : i64, burst_bytes = 2048 : i64}
  // CHECK-NEXT: func.return
  func.func @refusals(%x: memref<64x1024xf16>, %z: memref<64x1024xf16>, %i: index, %j: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<2x1024xf16, ub>
    %r1 = ascend_hw.subview %t[%c1, %c0] : !ascend_hw.buf<2x1024xf16, ub> -> !ascend_hw.buf<1x1024xf16, ub>
    %h = ascend_hw.subview %t[%c0, %c0] : !ascend_hw.buf<2x1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 2, burst_bytes = 128, src_gap = 1920} : memref<64x1024xf16> -> !ascend_hw.buf<2x1024xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<2x1024xf16, ub>
    ascend_hw.dma_load %z[%c1, %c0] -> %r1 {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<1x1024xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<2x1024xf16, ub>
    ascend_hw.vadd %h, %h -> %h {repeat = 8} : !ascend_hw.buf<1024xf16, ub>, !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
    ascend_hw.dma_load %x[%c1, %c0] -> %r1 {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<1x1024xf16, ub>
    ascend_hw.dma_load %x[%i, %c0] -> %t {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<2x1024xf16, ub>
    ascend_hw.dma_load %x[%j, %c0] -> %r1 {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<1x1024xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<2x1024xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %r1 {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<1x1024xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 2, burst_bytes = 1024, dst_gap = 1024} : memref<64x1024xf16> -> !ascend_hw.buf<2x1024xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<2x1024xf16, ub>
    ascend_hw.dma_load %x[%c1, %c0] -> %r1 {bursts = 1, burst_bytes = 1024} : memref<64x1024xf16> -> !ascend_hw.buf<1x1024xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t {bursts = 1, burst_bytes = 2048} : memref<64x1024xf16> -> !ascend_hw.buf<2x1024xf16, ub>
    ascend_hw.dma_store %r1 -> %x[%c1, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<1x1024xf16, ub> -> memref<64x1024xf16>
    func.return
  }
}
