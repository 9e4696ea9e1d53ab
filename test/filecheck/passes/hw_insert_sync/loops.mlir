// Dependencies carried around scf.for: the next iteration's load overwrites the
// tile this iteration's store reads (WAR). With no mte3 work before the loop,
// the flag is set at the top of each iteration and waited for right away (the
// set orders the previous iteration's store): no prologue or drain. With a store
// before the loop, the set goes right after the store in the body, the wait at
// the top of the next iteration, and the first set (prologue) before the first
// mte3 work, the last wait (drain) after the last.
// RUN: pypto-opt %s --split-input-file -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @single_buffered
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %x[%row, %c0] -> %xt
// CHECK-NEXT:   ascend_hw.dma_load %y[%row, %c0] -> %yt
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.vadd
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.dma_store %xt -> %z[%row, %c0]
// CHECK-NEXT: }
// CHECK-NEXT: func.return
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @single_buffered(%x: memref<256x1024xf16>, %y: memref<256x1024xf16>, %z: memref<256x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c256 = arith.constant 256 : index
    %xt = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    %yt = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<16x1024xf16, ub>
    scf.for %row = %c0 to %c256 step %c16 {
      ascend_hw.dma_load %x[%row, %c0] -> %xt {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_load %y[%row, %c0] -> %yt {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.vadd %xt, %yt -> %xt {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub>, !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_store %xt -> %z[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
    }
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @prologue_and_drain
// CHECK:      ascend_hw.vdup
// CHECK-NEXT: ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT: ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT: ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT: ascend_hw.dma_store %u -> %z[%c0, %c0]
// CHECK-NEXT: scf.for
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %x[%row, %c0] -> %t
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.vexp
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 1
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 1
// CHECK-NEXT:   ascend_hw.dma_store %t -> %z[%row, %c0]
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT: }
// CHECK-NEXT: ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT: func.return
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @prologue_and_drain(%x: memref<256x1024xf16>, %z: memref<256x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c256 = arith.constant 256 : index
    %zero = arith.constant 0.0 : f16
    %t = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    %u = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<16x1024xf16, ub>
    ascend_hw.vdup %zero -> %u {repeat = 128} : f16 -> !ascend_hw.buf<16x1024xf16, ub>
    ascend_hw.dma_store %u -> %z[%c0, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
    scf.for %row = %c16 to %c256 step %c16 {
      ascend_hw.dma_load %x[%row, %c0] -> %t {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.vexp %t -> %t {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_store %t -> %z[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
    }
    func.return
  }
}
