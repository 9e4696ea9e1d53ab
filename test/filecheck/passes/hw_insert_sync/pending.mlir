// The hardware holds one pending set per pipe pair and event: a loop's next set
// must come after this iteration's wait. Here each iteration works on its own
// row of the tiles, so no buffer dependency crosses iterations and nothing would
// keep the loads (MTE2) from running ahead of the vector unit and setting
// mte2 -> v twice. The pass orders this iteration's store before the next load,
// which bounds both mte2 -> v (wait, vexp, store, load, set) and v -> mte3.
// RUN: pypto-opt %s -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @slots
// CHECK:      scf.for
// CHECK-NEXT:   %a = ascend_hw.subview
// CHECK-NEXT:   %b = ascend_hw.subview
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %x[%i, %c0] -> %a
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.vexp %a -> %b
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.dma_store %b -> %z[%i, %c0]
// CHECK-NEXT: }
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @slots(%x: memref<8x1024xf16>, %z: memref<8x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %in = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<8x1024xf16, ub>
    %out = ascend_hw.alloc [16384, 32768) : !ascend_hw.buf<8x1024xf16, ub>
    scf.for %i = %c0 to %c8 step %c1 {
      %a = ascend_hw.subview %in[%i, %c0] : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      %b = ascend_hw.subview %out[%i, %c0] : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<8x1024xf16> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.vexp %a -> %b {repeat = 8} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<1024xf16, ub>
      ascend_hw.dma_store %b -> %z[%i, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<1024xf16, ub> -> memref<8x1024xf16>
    }
    func.return
  }
}
