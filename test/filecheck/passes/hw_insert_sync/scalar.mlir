// Scalar reads and data-dependent addresses (docs/sparse.md). A load_scalar of
// a ub index buffer runs on S: it waits for the DMA that wrote the buffer
// (mte2 -> s) and the next DMA into it waits for the last read (s -> mte2). A
// GM window at an address read at run time is an affine expression of that
// value: two windows of the same value a row apart are disjoint (no flag), two
// of different values may meet (a flag).
// RUN: pypto-opt %s -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @index_tile
// CHECK:         ascend_hw.dma_load %idx[%c0] -> %ids
// CHECK-NEXT:    ascend_hw.set_flag mte2 -> s, 0
// CHECK-NEXT:    ascend_hw.wait_flag mte2 -> s, 0
// CHECK-NEXT:    scf.for %j = %c0 to %c8 step %c1 {
// CHECK-NEXT:      ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:      %col = ascend_hw.load_scalar %ids[%j]
// CHECK-NEXT:      ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:      ascend_hw.dma_load %x[%col, %c0] -> %row
// CHECK-NEXT:      ascend_hw.set_flag mte2 -> mte3, 0
// CHECK-NEXT:      ascend_hw.wait_flag mte2 -> mte3, 0
// CHECK-NEXT:      ascend_hw.dma_store %row -> %out[%j, %c0]
// CHECK-NEXT:    }
// CHECK-NEXT:    ascend_hw.set_flag s -> mte2, 0
// CHECK-NEXT:    ascend_hw.wait_flag s -> mte2, 0
// CHECK-NEXT:    ascend_hw.dma_load %idx[%c8] -> %ids

// CHECK-LABEL: func.func @scatter
// CHECK:         ascend_hw.dma_store %a -> %y[%i, %c0]
// CHECK-NEXT:    ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:    ascend_hw.dma_load %y[%i1, %c0] -> %b
// CHECK-NEXT:    ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:    ascend_hw.dma_load %y[%j, %c0] -> %b
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @index_tile(%idx: memref<64xi32>, %x: memref<32x64xf32>, %out: memref<64x64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %ids = ascend_hw.alloc [0, 32) : !ascend_hw.buf<8xi32, ub>
    %row = ascend_hw.alloc [256, 512) : !ascend_hw.buf<1x64xf32, ub>
    ascend_hw.dma_load %idx[%c0] -> %ids {bursts = 1, burst_bytes = 32} : memref<64xi32> -> !ascend_hw.buf<8xi32, ub>
    scf.for %j = %c0 to %c8 step %c1 {
      %col = ascend_hw.load_scalar %ids[%j] : !ascend_hw.buf<8xi32, ub> -> index
      ascend_hw.dma_load %x[%col, %c0] -> %row {bursts = 1, burst_bytes = 256} : memref<32x64xf32> -> !ascend_hw.buf<1x64xf32, ub>
      ascend_hw.dma_store %row -> %out[%j, %c0] {bursts = 1, burst_bytes = 256} : !ascend_hw.buf<1x64xf32, ub> -> memref<64x64xf32>
    }
    ascend_hw.dma_load %idx[%c8] -> %ids {bursts = 1, burst_bytes = 32} : memref<64xi32> -> !ascend_hw.buf<8xi32, ub>
    func.return
  }
  func.func @scatter(%idx: memref<8xindex>, %y: memref<32x64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = ascend_hw.alloc [0, 256) : !ascend_hw.buf<1x64xf32, ub>
    %b = ascend_hw.alloc [256, 512) : !ascend_hw.buf<1x64xf32, ub>
    %i = ascend_hw.load_scalar %idx[%c0] : memref<8xindex> -> index
    %j = ascend_hw.load_scalar %idx[%c1] : memref<8xindex> -> index
    %i1 = arith.addi %i, %c1 : index
    ascend_hw.dma_store %a -> %y[%i, %c0] {bursts = 1, burst_bytes = 256} : !ascend_hw.buf<1x64xf32, ub> -> memref<32x64xf32>
    ascend_hw.dma_load %y[%i1, %c0] -> %b {bursts = 1, burst_bytes = 256} : memref<32x64xf32> -> !ascend_hw.buf<1x64xf32, ub>
    ascend_hw.dma_load %y[%j, %c0] -> %b {bursts = 1, burst_bytes = 256} : memref<32x64xf32> -> !ascend_hw.buf<1x64xf32, ub>
    func.return
  }
}
