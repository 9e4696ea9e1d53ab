// What hw-insert-sync refuses, with the op it names. IR that already has flags
// is refused rather than merged with new ones (run hw-strip-sync first); loops
// other than scf.for are not analysed; flags that must all be live at once
// cannot share the target's event ids.
// RUN: sed -e "s|INPUTS|%S/Inputs|" %s | not pypto-opt --split-input-file -p hw-insert-sync 2>&1 | filecheck %s

// CHECK: <stdin>:[[# @LINE + 5]]:3: error: hw-insert-sync expects IR without set_flag, wait_flag and pipe_barrier; run hw-strip-sync first to recompute them
func.func @synchronised(%x: memref<64x128xf16>) {
  %c0 = arith.constant 0 : index
  %a = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.dma_load %x[%c0, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.set_flag mte2 -> v, 0
  ascend_hw.wait_flag mte2 -> v, 0
  ascend_hw.vexp %a -> %a {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
  func.return
}

// -----

// CHECK: <stdin>:[[# @LINE + 5]]:3: error: hw-insert-sync handles ascend_hw instructions in scf.for and scf.if, not in 'scf.while'
func.func @while(%x: memref<64x128xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %a = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
  %r = scf.while (%i = %c0) : (index) -> index {
    %more = arith.cmpi ult, %i, %n : index
    scf.condition(%more) %i : index
  } do {
  ^bb0(%j: index):
    ascend_hw.dma_load %x[%j, %c0] -> %a {bursts = 1, burst_bytes = 2048} : memref<64x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
    ascend_hw.vexp %a -> %a {repeat = 8} : !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
    %next = arith.addi %j, %c8 : index
    scf.yield %next : index
  }
  func.return
}

// -----

// With one event id, the flag from the load of %a to its use, live across the
// loop (which may run zero times), and the loop's own load -> vexp flag cannot
// share it (a pipe_barrier would not help: the spans overlap).
// CHECK: <stdin>:[[# @LINE + 11]]:7: error: more than 1 mte2 -> v flags are live at once here; target one_event has 1 event ids per pipe pair (sync.event_ids)
builtin.module attributes {pypto.target = "INPUTS/one_event.toml"} {
  func.func @exhausted(%x: memref<64x128xf16>, %n: index) {
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
    func.return
  }
}
