// What hw-insert-sync refuses, with the op it names. IR that already has flags
// is refused rather than merged with new ones (run hw-strip-sync first); loops
// other than scf.for are not analysed. (Running out of event ids is not a reason:
// events.mlir.)
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
