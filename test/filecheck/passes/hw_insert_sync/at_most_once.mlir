// A loop that runs at most once per run needs no flag carried to a next
// iteration, like the branch of an scf.if: its bounds at most one step apart
// (`%n remui 2` steps of a loop tile-pipeline split at run time), or its
// `pypto.max_trips` at most 1 (a core's chunk after tile-to-hw's multi-core
// split). The same loop with two trips waits at its top for the previous
// iteration's store (loops.mlir, @single_buffered).
// RUN: pypto-opt %s --split-input-file -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @remainder
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.dma_load
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.vexp
// CHECK-NEXT:   ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:   ascend_hw.dma_store
// CHECK-NEXT: }
// CHECK-NEXT: func.return
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @remainder(%x: memref<256x1024xf16>, %z: memref<256x1024xf16>, %lb: index, %n: index) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %rest = arith.remui %n, %c2 : index
    %len = arith.muli %rest, %c16 : index
    %ub = arith.addi %lb, %len : index
    %xt = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    scf.for %row = %lb to %ub step %c16 {
      ascend_hw.dma_load %x[%row, %c0] -> %xt {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.vexp %xt -> %xt {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_store %xt -> %z[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
    }
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @one_trip_per_core
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.dma_load
// CHECK-NOT:  mte3 -> mte2
// CHECK:      } {pypto.max_trips = 1 : i64}
// CHECK-NEXT: func.return

// With two trips per core, the flag is carried:
// CHECK-LABEL: func.func @two_trips_per_core
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @one_trip_per_core(%x: memref<256x1024xf16>, %z: memref<256x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %core = ascend_hw.block_idx
    %lb = arith.muli %core, %c16 : index
    %ub = arith.addi %lb, %c16 : index
    %xt = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    scf.for %row = %lb to %ub step %c16 {
      ascend_hw.dma_load %x[%row, %c0] -> %xt {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.vexp %xt -> %xt {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_store %xt -> %z[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
    } {pypto.max_trips = 1 : i64}
    func.return
  }
  func.func @two_trips_per_core(%x: memref<256x1024xf16>, %z: memref<256x1024xf16>, %n: index) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %core = ascend_hw.block_idx
    %lb = arith.muli %core, %c16 : index
    %ub = arith.addi %lb, %n : index
    %xt = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    scf.for %row = %lb to %ub step %c16 {
      ascend_hw.dma_load %x[%row, %c0] -> %xt {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.vexp %xt -> %xt {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_store %xt -> %z[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
    } {pypto.max_trips = 2 : i64}
    func.return
  }
}
