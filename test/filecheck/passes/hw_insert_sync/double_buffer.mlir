// The double-buffered vector add of examples/hw with its flags recomputed: the
// ping and pong tiles get different event ids, so loading one overlaps adding
// and storing the other. Per iteration: 6 flags (12 ops), as many as the
// hand-written kernel; the ping tile's store-before-reload flag is loop-carried
// (prologue before the loop, drain after it), the pong tile's is set at the top
// of the next iteration.
// RUN: pypto-opt %S/../../../../examples/hw/vadd_double.mlir -p hw-strip-sync,hw-insert-sync | filecheck %s

// CHECK:      %yb = ascend_hw.alloc
// CHECK-NEXT: ascend_hw.set_flag mte3 -> mte2, 1
// CHECK-NEXT: scf.for %row = %first to %last step %c32 {
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 1
// CHECK-NEXT:   ascend_hw.dma_load %x[%row, %c0] -> %xa
// CHECK-NEXT:   ascend_hw.dma_load %y[%row, %c0] -> %ya
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.vadd %xa, %ya -> %xa
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.dma_store %xa -> %z[%row, %c0]
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 1
// CHECK-NEXT:   %next = arith.addi %row, %c16 : index
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %x[%next, %c0] -> %xb
// CHECK-NEXT:   ascend_hw.dma_load %y[%next, %c0] -> %yb
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 1
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 1
// CHECK-NEXT:   ascend_hw.vadd %xb, %yb -> %xb
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 1
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 1
// CHECK-NEXT:   ascend_hw.dma_store %xb -> %z[%next, %c0]
// CHECK-NEXT: }
// CHECK-NEXT: ascend_hw.wait_flag mte3 -> mte2, 1
// CHECK-NEXT: func.return
