// Straight-line code: the vector add waits for both loads with one flag set
// after the second load (MTE2 completes in order), and the store waits for it.
// RUN: pypto-opt %s -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @add
// CHECK:      ascend_hw.dma_load %x[%c0, %c0] -> %a
// CHECK-NEXT: ascend_hw.dma_load %y[%c0, %c0] -> %b
// CHECK-NEXT: ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.vadd %a, %b -> %c
// CHECK-NEXT: ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT: ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT: ascend_hw.dma_store %c -> %z[%c0, %c0]
// CHECK-NEXT: func.return
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @add(%x: memref<64x128xf16>, %y: memref<64x128xf16>, %z: memref<64x128xf16>) {
    %c0 = arith.constant 0 : index
    %a = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<64x128xf16, ub>
    %b = ascend_hw.alloc [16384, 32768) : !ascend_hw.buf<64x128xf16, ub>
    %c = ascend_hw.alloc [32768, 49152) : !ascend_hw.buf<64x128xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %a {bursts = 1, burst_bytes = 16384} : memref<64x128xf16> -> !ascend_hw.buf<64x128xf16, ub>
    ascend_hw.dma_load %y[%c0, %c0] -> %b {bursts = 1, burst_bytes = 16384} : memref<64x128xf16> -> !ascend_hw.buf<64x128xf16, ub>
    ascend_hw.vadd %a, %b -> %c {repeat = 64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
    ascend_hw.dma_store %c -> %z[%c0, %c0] {bursts = 1, burst_bytes = 16384} : !ascend_hw.buf<64x128xf16, ub> -> memref<64x128xf16>
    func.return
  }
}
