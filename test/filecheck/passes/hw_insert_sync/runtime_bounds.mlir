// Loops of run-time bounds (the entry loops of a sparse row, bounds read with
// load_scalar): the pass assumes no trip count for them, so a flag at the row
// level would run even when the loop runs no iteration. docs/hw_insert_sync.md,
// "Loops of run-time bounds".
// RUN: pypto-opt %s -p hw-insert-sync | filecheck %s
// RUN: pypto-opt %s -p hw-insert-sync --verify-diagnostics -o /dev/null
// RUN: pypto-opt %s -p 'hw-insert-sync{runtime-loops=false}' 2>&1 | filecheck %s --check-prefix=OFF

// Off, both functions get a row-level v -> mte2 flag before the entry loop and
// its flag back (mte2 -> v, set after the loop, waited before the row's vadd),
// with the loop's own v -> mte2 flag carried around it (prologue and drain).
// OFF-NOT:     remark
// OFF-LABEL:   func.func @rides
// OFF:         ascend_hw.set_flag mte2 -> v, 0
// OFF-NEXT:    ascend_hw.set_flag v -> mte2, 1
// OFF-NEXT:    scf.for %r
// OFF:           ascend_hw.wait_flag mte2 -> v, 0
// OFF-NEXT:      ascend_hw.vadd %t, %t -> %acc
// OFF-NEXT:      ascend_hw.set_flag v -> mte2, 0
// OFF-NEXT:      ascend_hw.wait_flag v -> mte2, 0
// OFF-NEXT:      scf.for %e
// OFF-NEXT:        ascend_hw.wait_flag v -> mte2, 1
// OFF:             ascend_hw.set_flag v -> mte2, 1
// OFF-NEXT:      }
// OFF-NEXT:      ascend_hw.set_flag v -> mte3, 0
// OFF-NEXT:      ascend_hw.set_flag mte2 -> v, 0
// OFF-LABEL:   func.func @stays
// OFF:           ascend_hw.set_flag mte2 -> v, 0
// OFF-NOT:       remark

// @rides: the loads of %t in the entry loop wait for the row's vector work on
// %t through the loop's own v -> mte2 flag, set at the top of its body: in the
// first iteration it orders the work before the loop, in the others the
// previous iteration's vadd. No flag at the row level, no prologue or drain.
// CHECK-LABEL: func.func @rides
// CHECK-NOT:     set_flag v -> mte2
// CHECK:         scf.for %r = %c0 to %c4 step %c1 {
// CHECK-NEXT:      ascend_hw.set_flag mte3 -> v, 0
// CHECK-NOT:       flag v -> mte2
// CHECK:           scf.for %e = %lo to %hi step %c1 {
// CHECK-NEXT:        ascend_hw.set_flag v -> mte2, 0
// CHECK-NEXT:        ascend_hw.wait_flag v -> mte2, 0
// CHECK-NEXT:        ascend_hw.dma_load %x[%e, %c0] -> %t
// CHECK-NEXT:        ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:        ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:        ascend_hw.vadd %acc, %t -> %acc
// CHECK-NEXT:      }
// CHECK-NEXT:      ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:      ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:      ascend_hw.dma_store %acc -> %out[%r, %c0]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// @stays: the loop's v -> mte2 flag is set after its vadd, before its vmuls
// (setting it at the top would hold the next load for the vmuls), so the row
// waits for its own vadd before the loop (v -> mte2, 0). When the loop runs no
// iteration nothing orders that wait before the next row's set, yet no flag
// back (mte2 -> v) is needed: mte2's last work before the wait is a load of an
// earlier row, which that row's mte2 -> v flag orders before the vector unit.
// CHECK-LABEL: func.func @stays
// CHECK:         ascend_hw.set_flag v -> mte2, 1
// CHECK-NEXT:    scf.for %r = %c0 to %c4 step %c1 {
// CHECK-NEXT:      ascend_hw.set_flag mte3 -> v, 0
// CHECK:           ascend_hw.vadd %t, %t -> %acc
// CHECK-NEXT:      ascend_hw.set_flag v -> mte2, 0
// CHECK-NEXT:      ascend_hw.wait_flag v -> mte2, 0
// CHECK-NEXT:      scf.for %e = %lo to %hi step %c1 {
// CHECK-NEXT:        ascend_hw.wait_flag v -> mte2, 1
// CHECK-NEXT:        ascend_hw.dma_load %x[%e, %c0] -> %t
// CHECK-NEXT:        ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:        ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:        ascend_hw.vadd %acc, %t -> %acc
// CHECK-NEXT:        ascend_hw.set_flag v -> mte2, 1
// CHECK-NEXT:        ascend_hw.vmuls %acc, %two -> %acc
// CHECK-NEXT:      }
// CHECK-NEXT:      ascend_hw.set_flag v -> mte3, 0
// CHECK-NEXT:      ascend_hw.wait_flag v -> mte3, 0
// CHECK-NEXT:      ascend_hw.dma_store %acc -> %out[%r, %c0]
// CHECK-NEXT:    }
// CHECK-NEXT:    ascend_hw.wait_flag v -> mte2, 1
// CHECK-NEXT:    func.return
// @remainder: a remainder loop of `len remui 2` trips inside the row loop is a
// branch: the v -> mte2 ordering of one row's vadd before the next row's load
// is the row loop's flag (set at the top of its body, waited before the
// branch) instead of a flag carried around the remainder loop with a prologue
// and drain (OFF); as many flags, but the row loop's orders one row's run of
// the branch against any later row's.
// CHECK-LABEL: func.func @remainder
// CHECK:         scf.for %r = %c0 to %c4 step %c1 {
// CHECK-NEXT:      ascend_hw.set_flag mte3 -> v, 0
// CHECK-NEXT:      ascend_hw.set_flag v -> mte2, 0
// CHECK:           ascend_hw.wait_flag v -> mte2, 0
// CHECK-NEXT:      scf.for %e = %lo to %mid step %c1 {
// CHECK-NEXT:        ascend_hw.dma_load %x[%e, %c0] -> %t
// CHECK-NEXT:        ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:        ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:        ascend_hw.vadd %acc, %t -> %acc
// CHECK-NEXT:      }
// OFF-LABEL:   func.func @remainder
// OFF:         ascend_hw.set_flag v -> mte2, 0
// OFF-NEXT:    scf.for %r
// OFF:           scf.for %e = %lo to %mid step %c1 {
// OFF-NEXT:        ascend_hw.wait_flag v -> mte2, 0
// OFF:             ascend_hw.set_flag v -> mte2, 0
// OFF-NEXT:      }
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @rides(%offsets: memref<5xi32>, %x: memref<?x16xf16>, %out: memref<4x16xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.000000e+00 : f16
    %acc = ascend_hw.alloc [0, 32) : !ascend_hw.buf<1x16xf16, ub>
    %t = ascend_hw.alloc [32, 64) : !ascend_hw.buf<1x16xf16, ub>
    scf.for %r = %c0 to %c4 step %c1 {
      %lo32 = ascend_hw.load_scalar %offsets[%r] : memref<5xi32> -> i32
      %lo = arith.index_cast %lo32 : i32 to index
      %r1 = arith.addi %r, %c1 : index
      %hi32 = ascend_hw.load_scalar %offsets[%r1] : memref<5xi32> -> i32
      %hi = arith.index_cast %hi32 : i32 to index
      ascend_hw.vdup %zero -> %t {mask = 16} : f16 -> !ascend_hw.buf<1x16xf16, ub>
      ascend_hw.vadd %t, %t -> %acc {mask = 16} : !ascend_hw.buf<1x16xf16, ub>, !ascend_hw.buf<1x16xf16, ub> -> !ascend_hw.buf<1x16xf16, ub>
      // expected-remark @+1 {{hw-insert-sync: the loop's v -> mte2 flag is set at the top of its body: its first iteration also waits for the work before the loop, instead of a flag outside that runs even when the loop runs no iteration (runtime-loops)}}
      scf.for %e = %lo to %hi step %c1 {
        ascend_hw.dma_load %x[%e, %c0] -> %t {bursts = 1, burst_bytes = 32} : memref<?x16xf16> -> !ascend_hw.buf<1x16xf16, ub>
        ascend_hw.vadd %acc, %t -> %acc {mask = 16} : !ascend_hw.buf<1x16xf16, ub>, !ascend_hw.buf<1x16xf16, ub> -> !ascend_hw.buf<1x16xf16, ub>
      }
      ascend_hw.dma_store %acc -> %out[%r, %c0] {bursts = 1, burst_bytes = 32} : !ascend_hw.buf<1x16xf16, ub> -> memref<4x16xf16>
    }
    func.return
  }
  func.func @stays(%offsets: memref<5xi32>, %x: memref<?x16xf16>, %out: memref<4x16xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.000000e+00 : f16
    %two = arith.constant 2.000000e+00 : f16
    %acc = ascend_hw.alloc [0, 32) : !ascend_hw.buf<1x16xf16, ub>
    %t = ascend_hw.alloc [32, 64) : !ascend_hw.buf<1x16xf16, ub>
    scf.for %r = %c0 to %c4 step %c1 {
      %lo32 = ascend_hw.load_scalar %offsets[%r] : memref<5xi32> -> i32
      %lo = arith.index_cast %lo32 : i32 to index
      %r1 = arith.addi %r, %c1 : index
      %hi32 = ascend_hw.load_scalar %offsets[%r1] : memref<5xi32> -> i32
      %hi = arith.index_cast %hi32 : i32 to index
      ascend_hw.vdup %zero -> %t {mask = 16} : f16 -> !ascend_hw.buf<1x16xf16, ub>
      ascend_hw.vadd %t, %t -> %acc {mask = 16} : !ascend_hw.buf<1x16xf16, ub>, !ascend_hw.buf<1x16xf16, ub> -> !ascend_hw.buf<1x16xf16, ub>
      scf.for %e = %lo to %hi step %c1 {
        // expected-remark @+1 {{hw-insert-sync: no mte2 -> v flag back after this v -> mte2 wait: mte2 ran nothing since its last flag that is not ordered before the next set (runtime-loops)}}
        ascend_hw.dma_load %x[%e, %c0] -> %t {bursts = 1, burst_bytes = 32} : memref<?x16xf16> -> !ascend_hw.buf<1x16xf16, ub>
        ascend_hw.vadd %acc, %t -> %acc {mask = 16} : !ascend_hw.buf<1x16xf16, ub>, !ascend_hw.buf<1x16xf16, ub> -> !ascend_hw.buf<1x16xf16, ub>
        ascend_hw.vmuls %acc, %two -> %acc {mask = 16} : !ascend_hw.buf<1x16xf16, ub>, f16 -> !ascend_hw.buf<1x16xf16, ub>
      }
      ascend_hw.dma_store %acc -> %out[%r, %c0] {bursts = 1, burst_bytes = 32} : !ascend_hw.buf<1x16xf16, ub> -> memref<4x16xf16>
    }
    func.return
  }
  func.func @remainder(%offsets: memref<5xi32>, %x: memref<?x16xf16>, %out: memref<4x16xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.000000e+00 : f16
    %acc = ascend_hw.alloc [0, 32) : !ascend_hw.buf<1x16xf16, ub>
    %t = ascend_hw.alloc [32, 64) : !ascend_hw.buf<1x16xf16, ub>
    scf.for %r = %c0 to %c4 step %c1 {
      %lo32 = ascend_hw.load_scalar %offsets[%r] : memref<5xi32> -> i32
      %lo = arith.index_cast %lo32 : i32 to index
      %r1 = arith.addi %r, %c1 : index
      %hi32 = ascend_hw.load_scalar %offsets[%r1] : memref<5xi32> -> i32
      %hi = arith.index_cast %hi32 : i32 to index
      %len = arith.subi %hi, %lo : index
      %odd = arith.remui %len, %c2 : index
      %mid = arith.addi %lo, %odd : index
      ascend_hw.vdup %zero -> %acc {mask = 16} : f16 -> !ascend_hw.buf<1x16xf16, ub>
      // expected-remark @+1 {{hw-insert-sync: this loop runs at most once: a branch, what one run of it orders against the next is placed in the loop around it (runtime-loops)}}
      scf.for %e = %lo to %mid step %c1 {
        // expected-remark @+1 {{hw-insert-sync: no mte2 -> v flag back after this v -> mte2 wait: mte2 ran nothing since its last flag that is not ordered before the next set (runtime-loops)}}
        ascend_hw.dma_load %x[%e, %c0] -> %t {bursts = 1, burst_bytes = 32} : memref<?x16xf16> -> !ascend_hw.buf<1x16xf16, ub>
        ascend_hw.vadd %acc, %t -> %acc {mask = 16} : !ascend_hw.buf<1x16xf16, ub>, !ascend_hw.buf<1x16xf16, ub> -> !ascend_hw.buf<1x16xf16, ub>
      }
      ascend_hw.dma_store %acc -> %out[%r, %c0] {bursts = 1, burst_bytes = 32} : !ascend_hw.buf<1x16xf16, ub> -> memref<4x16xf16>
    }
    func.return
  }
}
