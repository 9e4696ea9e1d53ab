// S issues every instruction in program order and holds that issue at its own
// waits, so a set fires no earlier than S issued it: a loop flag's wait that
// the flags order before S at the next set's place is consumed before that set
// fires, and needs no flag back (never two pending sets). A flag into S needs
// none at all. This is about when a set fires, not about the data: the race
// detector's happens-before does not carry S's waits to other pipes, so the
// data dependencies are ordered as before. docs/hw_insert_sync.md, "Sets issued
// by S".
// RUN: pypto-opt %s -p hw-insert-sync | filecheck %s
// RUN: pypto-opt %s -p hw-insert-sync --verify-diagnostics -o /dev/null
// RUN: pypto-opt %s -p 'hw-insert-sync{scalar-issue=false}' 2>&1 | filecheck %s --check-prefix=OFF

// Each iteration works on its own rows: no buffer dependency crosses
// iterations. The wait of mte2 -> v is ordered before S by v -> s, and S issues
// the next load's mte2 -> v set after that wait.
// CHECK-LABEL: func.func @through_s
// CHECK:       scf.for
// CHECK-NEXT:    %a = ascend_hw.subview
// CHECK-NEXT:    %b = ascend_hw.subview
// CHECK-NEXT:    ascend_hw.dma_load %x[%i, %c0] -> %a
// CHECK-NEXT:    ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:    ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:    ascend_hw.vexp %a -> %b
// CHECK-NEXT:    ascend_hw.set_flag v -> s, 0
// CHECK-NEXT:    ascend_hw.wait_flag v -> s, 0
// CHECK-NEXT:    %s = ascend_hw.load_scalar %b[%c0]
// CHECK-NEXT:  }

// The same in a branch of a loop of run-time bounds: no flag back at the loop
// level for the flags of the branch.
// CHECK-LABEL: func.func @branch
// CHECK:       scf.for
// CHECK-NEXT:    %a = ascend_hw.subview
// CHECK-NEXT:    %b = ascend_hw.subview
// CHECK-NEXT:    scf.if %c {
// CHECK-NEXT:      ascend_hw.dma_load %x[%i, %c0] -> %a
// CHECK-NEXT:      ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:      ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:      ascend_hw.vexp %a -> %b
// CHECK-NEXT:      ascend_hw.set_flag v -> s, 0
// CHECK-NEXT:      ascend_hw.wait_flag v -> s, 0
// CHECK-NEXT:      %s = ascend_hw.load_scalar %b[%c0]
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// Off, each flag gets its flag back: s -> v for v -> s, v -> mte2 for
// mte2 -> v.
// OFF-NOT:     (scalar-issue)
// OFF-LABEL:   func.func @through_s
// OFF:           ascend_hw.set_flag s -> v, 0
// OFF-NEXT:      ascend_hw.wait_flag v -> mte2, 0
// OFF-NEXT:      ascend_hw.dma_load %x[%i, %c0] -> %a
// OFF:           ascend_hw.set_flag v -> mte2, 0
// OFF-LABEL:   func.func @branch
// OFF:           ascend_hw.set_flag v -> mte2, 0
// OFF-NEXT:      ascend_hw.set_flag s -> v, 0
// OFF-NEXT:      ascend_hw.wait_flag v -> mte2, 0
// OFF-NEXT:      ascend_hw.wait_flag s -> v, 0
// OFF-NEXT:      scf.if %c {
// OFF-NOT:     (scalar-issue)
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @through_s(%x: memref<8x64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %out = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x64xf32, ub>
    %in = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x64xf32, ub>
    scf.for %i = %c0 to %c8 step %c1 {
      %a = ascend_hw.subview %in[%i, %c0] : !ascend_hw.buf<8x64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
      %b = ascend_hw.subview %out[%i, %c0] : !ascend_hw.buf<8x64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
      ascend_hw.dma_load %x[%i, %c0] -> %a {bursts = 1, burst_bytes = 256} : memref<8x64xf32> -> !ascend_hw.buf<64xf32, ub>
      // expected-remark @+1 {{hw-insert-sync: no v -> mte2 flag back after this wait: S issues the next mte2 -> v set only after a wait that follows it (scalar-issue)}}
      ascend_hw.vexp %a -> %b : !ascend_hw.buf<64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
      // expected-remark @+1 {{hw-insert-sync: no s -> v flag back after this wait: S issues the next v -> s set only after a wait that follows it (scalar-issue)}}
      %s = ascend_hw.load_scalar %b[%c0] : !ascend_hw.buf<64xf32, ub> -> f32
    }
    func.return
  }
  func.func @branch(%x: memref<8x64xf32>, %n: index, %c: i1) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %out = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x64xf32, ub>
    %in = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x64xf32, ub>
    scf.for %i = %c0 to %n step %c1 {
      %a = ascend_hw.subview %in[%i, %c0] : !ascend_hw.buf<8x64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
      %b = ascend_hw.subview %out[%i, %c0] : !ascend_hw.buf<8x64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
      // expected-remark @+2 {{hw-insert-sync: no v -> mte2 flag back after the waits in this scf.if: S issues the next mte2 -> v set only after a wait that follows it (scalar-issue)}}
      // expected-remark @+1 {{hw-insert-sync: no s -> v flag back after the waits in this scf.if: S issues the next v -> s set only after a wait that follows it (scalar-issue)}}
      scf.if %c {
        ascend_hw.dma_load %x[%i, %c0] -> %a {bursts = 1, burst_bytes = 256} : memref<8x64xf32> -> !ascend_hw.buf<64xf32, ub>
        ascend_hw.vexp %a -> %b : !ascend_hw.buf<64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
        %s = ascend_hw.load_scalar %b[%c0] : !ascend_hw.buf<64xf32, ub> -> f32
      }
    }
    func.return
  }
}
