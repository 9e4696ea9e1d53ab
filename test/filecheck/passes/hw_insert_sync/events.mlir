// Event ids. Flags of one pipe pair share an id when one's wait is ordered
// before the other's set (@reuse: the second load -> vexp flag reuses id 0). With
// fewer ids than live flags (the one_event target has a single id per pipe pair),
// the pass falls back in turn to: merging two flags of one block into one that
// covers both (@squeeze: the add waits for both loads); keeping flags inside
// their iteration (@iteration_local: the loop-carried vadd -> reload flags become
// one set at the top of the body); a `pipe_barrier all` before a set, which
// orders every earlier wait before it (@iteration_local, @fence).
// RUN: sed -e "s|INPUTS|%S/Inputs|" %s | pypto-opt --split-input-file -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @reuse
// CHECK:      ascend_hw.dma_load %x[%c0, %c0] -> %a
// CHECK-NEXT: ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.vexp %a -> %b
// CHECK-NEXT: ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT: ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT: ascend_hw.dma_store %b -> %z[%c0, %c0]
// CHECK-NEXT: ascend_hw.set_flag mte3 -> mte2, 0
// CHECK-NEXT: ascend_hw.wait_flag mte3 -> mte2, 0
// CHECK-NEXT: ascend_hw.dma_load %x[%c8, %c0] -> %b
// CHECK-NEXT: ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.vexp %b -> %a
// CHECK-NEXT: ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT: ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT: ascend_hw.dma_store %a -> %z[%c8, %c0]
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @reuse(%x: memref<64x128xf16>, %z: memref<64x128xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %a = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
    %b = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.vexp %a -> %b {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_store %b -> %z[%c0, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    ascend_hw.dma_load %x[%c8, %c0] -> %b {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.vexp %b -> %a {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_store %a -> %z[%c8, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @squeeze
// CHECK:      ascend_hw.dma_load %x[%c0, %c0] -> %a
// CHECK-NEXT: ascend_hw.dma_load %x[%c8, %c0] -> %b
// CHECK-NEXT: ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.vexp %a -> %c
// CHECK-NEXT: ascend_hw.vadd %b, %c -> %c
builtin.module attributes {pypto.target = "INPUTS/one_event.toml"} {
  func.func @squeeze(%x: memref<64x128xf16>, %z: memref<64x128xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %a = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
    %b = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
    %c = ascend_hw.alloc [4096, 6144) : !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_load %x[%c8, %c0] -> %b {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.vexp %a -> %c {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.vadd %b, %c -> %c {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_store %c -> %z[%c0, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @iteration_local
// CHECK:      scf.for
// CHECK-NEXT:   %j = arith.addi
// CHECK-NEXT:   ascend_hw.set_flag v -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %x[%i, %c0] -> %a
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.vadd %a, %c -> %c
// CHECK-NEXT:   ascend_hw.dma_load %x[%j, %c0] -> %b
// CHECK-NEXT:   ascend_hw.pipe_barrier all
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:   ascend_hw.vadd %b, %c -> %c
// CHECK-NEXT: }
builtin.module attributes {pypto.target = "INPUTS/one_event.toml"} {
  func.func @iteration_local(%x: memref<64x128xf16>, %z: memref<64x128xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %a = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
    %b = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
    %c = ascend_hw.alloc [4096, 6144) : !ascend_hw.buf<8x128xf16, ub>
    %d = ascend_hw.alloc [6144, 8192) : !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %c {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    scf.for %i = %c0 to %c64 step %c16 {
      %j = arith.addi %i, %c8 : index
      ascend_hw.dma_load %x[%i, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %a, %c -> %c {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_load %x[%j, %c0] -> %b {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %b, %c -> %c {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    }
    ascend_hw.dma_store %c -> %z[%c0, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @fence
// CHECK:      scf.for
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %x[%i, %c0] -> %c
// CHECK-NEXT:   ascend_hw.pipe_barrier all
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> v, 0
builtin.module attributes {pypto.target = "INPUTS/one_event.toml"} {
  func.func @fence(%x: memref<64x128xf16>, %z: memref<64x128xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %a = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
    %b = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
    %c = ascend_hw.alloc [4096, 6144) : !ascend_hw.buf<8x128xf16, ub>
    %d = ascend_hw.alloc [6144, 8192) : !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.vexp %a -> %b {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_store %b -> %z[%c0, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    scf.for %i = %c8 to %c64 step %c8 {
      ascend_hw.dma_load %x[%i, %c0] -> %c {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vexp %c -> %d {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_store %d -> %z[%i, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    }
    func.return
  }
}
