// Event ids. Flags of one pipe pair share an id when one's wait is ordered
// before the other's set (@reuse: the second load -> vexp flag reuses id 0). With
// fewer ids than live flags (the one_event target has a single id per pipe pair),
// the pass falls back in turn to: merging two flags of one block into one that
// covers both (@squeeze: the add waits for both loads); keeping flags inside
// their iteration (@iteration_local: the loop-carried vadd -> reload flags become
// one set at the top of the body); a `pipe_barrier all` before a set, which
// orders every earlier wait before it (@iteration_local, @fence); a flag through
// a third pipe, which waits where the consumer did and sets at once (@relay,
// @nine_live on ascend910b); a `pipe_barrier all` in place of the flag when every
// third pipe is taken too (@barrier). It never refuses a kernel for want of ids.
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

// -----

// The flag from the load of %a to its use is live across the loop (which may
// run zero times), so the loop's own load -> vexp flag cannot share its id: it
// goes through MTE1, which no instruction uses.
// CHECK-LABEL: func.func @relay
// CHECK:      ascend_hw.dma_load %x[%c0, %c0] -> %a
// CHECK-NEXT: ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT: scf.for
// CHECK:        ascend_hw.dma_load %x[%i, %c0] -> %b
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> mte1, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> mte1, 0
// CHECK-NEXT:   ascend_hw.set_flag mte1 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte1 -> v, 0
// CHECK-NEXT:   ascend_hw.vexp %b -> %c
// CHECK-NEXT: }
// CHECK-NEXT: ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.vexp %a -> %c
builtin.module attributes {pypto.target = "INPUTS/one_event.toml"} {
  func.func @relay(%x: memref<64x128xf16>, %z: memref<64x128xf16>, %n: index) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %a = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
    %b = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
    %c = ascend_hw.alloc [4096, 6144) : !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    scf.for %i = %c8 to %n step %c8 {
      ascend_hw.dma_load %x[%i, %c0] -> %b {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vexp %b -> %c {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    }
    ascend_hw.vexp %a -> %c {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_store %c -> %z[%c0, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    func.return
  }
}

// -----

// Nine mte2 -> v flags live at once on ascend910b (8 ids per pipe pair): the
// eight of the outer body take every id, and MTE2 may run a whole inner loop
// ahead of V, so the inner loop's flag can share none; it goes through MTE1.
// CHECK-LABEL: func.func @nine_live
// CHECK:      scf.for %j
// CHECK:        ascend_hw.dma_load %x[%r, %c0] -> %b0
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> mte1, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> mte1, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte3 -> v, 1
// CHECK-NEXT:   ascend_hw.set_flag mte1 -> v, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte1 -> v, 0
// CHECK-NEXT:   ascend_hw.vabs %b0 -> %tmp
// CHECK:      ascend_hw.dma_load %x[%i, %c0] -> %b8
// CHECK-NEXT: ascend_hw.set_flag mte2 -> v, 7
// CHECK-NOT:  pipe_barrier
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @nine_live(%x: memref<64x128xf16>, %z: memref<64x128xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %b0 = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
    %b1 = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
    %b2 = ascend_hw.alloc [4096, 6144) : !ascend_hw.buf<8x128xf16, ub>
    %b3 = ascend_hw.alloc [6144, 8192) : !ascend_hw.buf<8x128xf16, ub>
    %b4 = ascend_hw.alloc [8192, 10240) : !ascend_hw.buf<8x128xf16, ub>
    %b5 = ascend_hw.alloc [10240, 12288) : !ascend_hw.buf<8x128xf16, ub>
    %b6 = ascend_hw.alloc [12288, 14336) : !ascend_hw.buf<8x128xf16, ub>
    %b7 = ascend_hw.alloc [14336, 16384) : !ascend_hw.buf<8x128xf16, ub>
    %b8 = ascend_hw.alloc [16384, 18432) : !ascend_hw.buf<8x128xf16, ub>
    %acc = ascend_hw.alloc [18432, 20480) : !ascend_hw.buf<8x128xf16, ub>
    %tmp = ascend_hw.alloc [20480, 22528) : !ascend_hw.buf<8x128xf16, ub>
    scf.for %i = %c0 to %c64 step %c16 {
      scf.for %j = %c0 to %c16 step %c8 {
        %r = arith.addi %i, %j : index
        ascend_hw.dma_load %x[%r, %c0] -> %b0 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
        ascend_hw.vabs %b0 -> %tmp {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
        ascend_hw.dma_store %tmp -> %z[%r, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
      }
      ascend_hw.dma_load %x[%i, %c0] -> %b1 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %b2 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %b3 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %b4 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %b5 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %b6 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %b7 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %b8 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vabs %b1 -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %b2, %acc -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %b3, %acc -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %b4, %acc -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %b5, %acc -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %b6, %acc -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %b7, %acc -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %b8, %acc -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.vadd %tmp, %acc -> %acc {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      ascend_hw.dma_store %acc -> %z[%i, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    }
    func.return
  }
}

// -----

// Each loop reloads its tile after the loops inside it read theirs: the v ->
// mte2 flag of every level is live across the levels inside it. One id: the
// first level takes it, the next four go through MTE1, M, FIX and S (MTE3's v ->
// mte3 id is held at the end), and the innermost flag is a barrier.
// CHECK-LABEL: func.func @barrier
// CHECK:      scf.for %i2
// CHECK-NEXT:   ascend_hw.set_flag v -> mte1, 0
// CHECK-NEXT:   ascend_hw.wait_flag v -> mte1, 0
// CHECK-NEXT:   ascend_hw.set_flag mte1 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte1 -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %x[%c0, %c0] -> %t2
// CHECK:            scf.for %i5
// CHECK-NEXT:         ascend_hw.set_flag v -> s, 0
// CHECK-NEXT:         ascend_hw.wait_flag v -> s, 0
// CHECK-NEXT:         ascend_hw.set_flag s -> mte2, 0
// CHECK-NEXT:         ascend_hw.wait_flag s -> mte2, 0
// CHECK-NEXT:         ascend_hw.dma_load %x[%c0, %c0] -> %t5
// CHECK-NEXT:         scf.for %i6
// CHECK-NEXT:           ascend_hw.pipe_barrier all
// CHECK-NEXT:           ascend_hw.dma_load %x[%c0, %c0] -> %t6
builtin.module attributes {pypto.target = "INPUTS/one_event.toml"} {
  func.func @barrier(%x: memref<64x128xf16>, %z: memref<64x128xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %t0 = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
    %t1 = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
    %t2 = ascend_hw.alloc [4096, 6144) : !ascend_hw.buf<8x128xf16, ub>
    %t3 = ascend_hw.alloc [6144, 8192) : !ascend_hw.buf<8x128xf16, ub>
    %t4 = ascend_hw.alloc [8192, 10240) : !ascend_hw.buf<8x128xf16, ub>
    %t5 = ascend_hw.alloc [10240, 12288) : !ascend_hw.buf<8x128xf16, ub>
    %t6 = ascend_hw.alloc [12288, 14336) : !ascend_hw.buf<8x128xf16, ub>
    %u = ascend_hw.alloc [14336, 16384) : !ascend_hw.buf<8x128xf16, ub>
    %zero = arith.constant 0.0 : f16
    ascend_hw.vdup %zero -> %u {repeat = 8} : f16 -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_load %x[%c0, %c0] -> %t0 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    scf.for %i1 = %c0 to %c2 step %c1 {
      ascend_hw.dma_load %x[%c0, %c0] -> %t1 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
      scf.for %i2 = %c0 to %c2 step %c1 {
        ascend_hw.dma_load %x[%c0, %c0] -> %t2 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
        scf.for %i3 = %c0 to %c2 step %c1 {
          ascend_hw.dma_load %x[%c0, %c0] -> %t3 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
          scf.for %i4 = %c0 to %c2 step %c1 {
            ascend_hw.dma_load %x[%c0, %c0] -> %t4 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
            scf.for %i5 = %c0 to %c2 step %c1 {
              ascend_hw.dma_load %x[%c0, %c0] -> %t5 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
              scf.for %i6 = %c0 to %c2 step %c1 {
                ascend_hw.dma_load %x[%c0, %c0] -> %t6 {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
                ascend_hw.vadd %t6, %u -> %u {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
              }
              ascend_hw.vadd %t5, %u -> %u {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
            }
            ascend_hw.vadd %t4, %u -> %u {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
          }
          ascend_hw.vadd %t3, %u -> %u {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
        }
        ascend_hw.vadd %t2, %u -> %u {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
      }
      ascend_hw.vadd %t1, %u -> %u {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    }
    ascend_hw.vadd %t0, %u -> %u {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.dma_store %u -> %z[%c0, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<64x128xf16>
    func.return
  }
}
