// GM accesses conflict by byte window of one memref (kernel arguments do not
// alias). An in-place kernel that stores the rows it loaded never reads them
// again: no mte3 -> mte2 flag, the next load overlaps the store. When the next
// iteration's rows overlap the stored ones, the store must precede the load
// (and that flag also orders the other carried dependencies). A store through a
// memref view is assumed to touch all of the memref.
// RUN: pypto-opt %s --split-input-file -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @in_place
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.set_flag v -> mte2, 0
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> v, 0
// CHECK-NEXT:   ascend_hw.vexp
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.dma_store
// CHECK-NEXT: }
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @in_place(%x: memref<256x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c256 = arith.constant 256 : index
    %t = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    %u = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<16x1024xf16, ub>
    scf.for %row = %c0 to %c256 step %c16 {
      ascend_hw.dma_load %x[%row, %c0] -> %t {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.vexp %t -> %u {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_store %u -> %x[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
    }
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @overlapping
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.vexp
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.dma_store
// CHECK-NEXT: }
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @overlapping(%x: memref<256x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c240 = arith.constant 240 : index
    %t = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    %u = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<16x1024xf16, ub>
    scf.for %row = %c0 to %c240 step %c8 {
      ascend_hw.dma_load %x[%row, %c0] -> %t {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.vexp %t -> %u {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_store %u -> %x[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
    }
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @view
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @view(%x: memref<256x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c256 = arith.constant 256 : index
    %t = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    %u = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<16x1024xf16, ub>
    %v = memref.subview %x[0, 0] [256, 1024] [1, 1] : memref<256x1024xf16> to memref<256x1024xf16, strided<[1024, 1]>>
    scf.for %row = %c0 to %c256 step %c16 {
      ascend_hw.dma_load %x[%row, %c0] -> %t {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.vexp %t -> %u {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_store %u -> %v[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16, strided<[1024, 1]>>
    }
    func.return
  }
}
