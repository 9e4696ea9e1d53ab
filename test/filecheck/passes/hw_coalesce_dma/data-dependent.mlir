// hw-coalesce-dma on DMAs whose GM rows were read at run time (a gather of the
// rows of B at CSR column indices, docs/sparse.md): rows of one read value a
// row apart are consecutive and merge; rows of two values read separately may
// be anywhere and stay apart, as do DMAs across a scalar read (an instruction).
// RUN: pypto-opt %s -p hw-coalesce-dma | filecheck %s

builtin.module attributes {pypto.target = "ascend910b"} {
  // CHECK-LABEL: func.func @gather
  // CHECK:      %col = ascend_hw.load_scalar %idx[%c0]
  // CHECK-NEXT: %next = ascend_hw.load_scalar %idx[%c1]
  // CHECK-NEXT: ascend_hw.dma_load %b[%col, %c0] -> %t {bursts = 1 : i64, burst_bytes = 512 : i64}
  // CHECK-NEXT: ascend_hw.dma_load %b[%next, %c0] -> %r2 {bursts = 1 : i64, burst_bytes = 256 : i64}
  // CHECK-NEXT: %last = ascend_hw.load_scalar %idx[%c2]
  // CHECK-NEXT: ascend_hw.dma_load %b[%last, %c0] -> %r3 {bursts = 1 : i64, burst_bytes = 256 : i64}
  // CHECK-NEXT: func.return
  func.func @gather(%idx: memref<8xindex>, %b: memref<32x64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %t = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<4x64xf32, ub>
    %r1 = ascend_hw.subview %t[%c1, %c0] : !ascend_hw.buf<4x64xf32, ub> -> !ascend_hw.buf<1x64xf32, ub>
    %r2 = ascend_hw.subview %t[%c2, %c0] : !ascend_hw.buf<4x64xf32, ub> -> !ascend_hw.buf<1x64xf32, ub>
    %r3 = ascend_hw.subview %t[%c3, %c0] : !ascend_hw.buf<4x64xf32, ub> -> !ascend_hw.buf<1x64xf32, ub>
    %col = ascend_hw.load_scalar %idx[%c0] : memref<8xindex> -> index
    %next = ascend_hw.load_scalar %idx[%c1] : memref<8xindex> -> index
    %col1 = arith.addi %col, %c1 : index
    ascend_hw.dma_load %b[%col, %c0] -> %t {bursts = 1, burst_bytes = 256} : memref<32x64xf32> -> !ascend_hw.buf<4x64xf32, ub>
    ascend_hw.dma_load %b[%col1, %c0] -> %r1 {bursts = 1, burst_bytes = 256} : memref<32x64xf32> -> !ascend_hw.buf<1x64xf32, ub>
    ascend_hw.dma_load %b[%next, %c0] -> %r2 {bursts = 1, burst_bytes = 256} : memref<32x64xf32> -> !ascend_hw.buf<1x64xf32, ub>
    %last = ascend_hw.load_scalar %idx[%c2] : memref<8xindex> -> index
    ascend_hw.dma_load %b[%last, %c0] -> %r3 {bursts = 1, burst_bytes = 256} : memref<32x64xf32> -> !ascend_hw.buf<1x64xf32, ub>
    func.return
  }
}
