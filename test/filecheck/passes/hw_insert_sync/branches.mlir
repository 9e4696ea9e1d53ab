// scf.if: flags between instructions of one branch stay in the branch; the
// loop orders the whole if against the ops around it (the add after it waits
// for the load in the else branch, mte2 -> v, 1).
// RUN: pypto-opt %s -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @branches
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %x[%i, %c0] -> %t
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   %small = arith.cmpi
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   scf.if %small {
// CHECK-NEXT:     ascend_hw.vexp %t -> %u
// CHECK-NEXT:   } else {
// CHECK-NEXT:     ascend_hw.vabs %t -> %u
// CHECK-NEXT:     ascend_hw.set_flag v -> mte3, 1
// CHECK-NEXT:     ascend_hw.wait_flag v -> mte3, 1
// CHECK-NEXT:     ascend_hw.dma_store %u -> %z[%i, %c0]
// CHECK-NEXT:     ascend_hw.set_flag mte3 -> mte2, 1
// CHECK-NEXT:     ascend_hw.wait_flag mte3 -> mte2, 1
// CHECK-NEXT:     ascend_hw.dma_load %z[%i, %c0] -> %u
// CHECK-NEXT:   }
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 1
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 1
// CHECK-NEXT:   ascend_hw.vrelu %u -> %t
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.dma_store %t -> %z[%i, %c0]
// CHECK-NEXT: }
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @branches(%x: memref<64x1024xf16>, %z: memref<64x1024xf16>, %n: index) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %t = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<8x1024xf16, ub>
    %u = ascend_hw.alloc [16384, 32768) : !ascend_hw.buf<8x1024xf16, ub>
    scf.for %i = %c0 to %c64 step %c8 {
      ascend_hw.dma_load %x[%i, %c0] -> %t {bursts = 1, burst_bytes = 16384} : memref<64x1024xf16> -> !ascend_hw.buf<8x1024xf16, ub>
      %small = arith.cmpi ult, %i, %n : index
      scf.if %small {
        ascend_hw.vexp %t -> %u {repeat = 64} : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<8x1024xf16, ub>
      } else {
        ascend_hw.vabs %t -> %u {repeat = 64} : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<8x1024xf16, ub>
        ascend_hw.dma_store %u -> %z[%i, %c0] {bursts = 1, burst_bytes = 16384} : !ascend_hw.buf<8x1024xf16, ub> -> memref<64x1024xf16>
        ascend_hw.dma_load %z[%i, %c0] -> %u {bursts = 1, burst_bytes = 16384} : memref<64x1024xf16> -> !ascend_hw.buf<8x1024xf16, ub>
      }
      ascend_hw.vrelu %u -> %t {repeat = 64} : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<8x1024xf16, ub>
      ascend_hw.dma_store %t -> %z[%i, %c0] {bursts = 1, burst_bytes = 16384} : !ascend_hw.buf<8x1024xf16, ub> -> memref<64x1024xf16>
    }
    func.return
  }
}
