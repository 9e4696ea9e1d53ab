// Nested loops (a k-loop inside an m-loop, as tile-to-hw makes for matmul).
// The outer loop orders its own accesses against the inner loop's as against
// one node. The inner loop's nd2nz of B and its mmad wait for the outer
// load_l0 of B and mmad through the inner loop's own flags: set at the top of
// its body (mte1 -> mte2, 1 and m -> mte1, 1), they order the work before the
// loop in its first iteration as they order the previous iteration's in the
// others, so they need no prologue or drain and the outer body no flag of its
// own for them (a flag there would run even when the inner loop runs no
// iteration). Its nd2nz of A waits for the outer load_l0 of A (mte1 -> mte2,
// 0): the inner flag for A is set after its load_l0 of A, before that of B,
// and stays loop-carried with a prologue and drain.
// RUN: pypto-opt %s -p hw-insert-sync | filecheck %s

// CHECK-LABEL: func.func @mm
// CHECK:      %acc = ascend_hw.alloc
// CHECK-NEXT: ascend_hw.set_flag mte1 -> mte2, 2
// CHECK-NEXT: scf.for %m
// CHECK-NEXT:   ascend_hw.set_flag mte1 -> mte2, 0
// CHECK-NEXT:   ascend_hw.set_flag m -> mte1, 0
// CHECK-NEXT:   ascend_hw.set_flag fix -> m, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte1 -> mte2, 0
// CHECK-NEXT:   ascend_hw.nd2nz %a[%m, %c0] -> %a1
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> mte1, 0
// CHECK-NEXT:   ascend_hw.nd2nz %b[%c0, %c0] -> %b1
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> mte1, 1
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> mte1, 0
// CHECK-NEXT:   ascend_hw.wait_flag m -> mte1, 0
// CHECK-NEXT:   ascend_hw.load_l0 %a1
// CHECK-NEXT:   ascend_hw.set_flag mte1 -> mte2, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte2 -> mte1, 1
// CHECK-NEXT:   ascend_hw.load_l0 %b1
// CHECK-NEXT:   ascend_hw.set_flag mte1 -> m, 0
// CHECK-NEXT:   ascend_hw.wait_flag mte1 -> m, 0
// CHECK-NEXT:   ascend_hw.wait_flag fix -> m, 0
// CHECK-NEXT:   ascend_hw.mmad %a0, %b0 -> %acc {m = 32 : i64, n = 128 : i64, k = 64 : i64}
// CHECK-NEXT:   ascend_hw.wait_flag mte1 -> mte2, 0
// CHECK-NEXT:   scf.for %k
// CHECK-NEXT:     ascend_hw.set_flag mte1 -> mte2, 1
// CHECK-NEXT:     ascend_hw.set_flag m -> mte1, 1
// CHECK-NEXT:     ascend_hw.wait_flag mte1 -> mte2, 2
// CHECK-NEXT:     ascend_hw.nd2nz %a[%m, %k] -> %a1
// CHECK-NEXT:     ascend_hw.set_flag mte2 -> mte1, 0
// CHECK-NEXT:     ascend_hw.wait_flag mte1 -> mte2, 1
// CHECK-NEXT:     ascend_hw.nd2nz %b[%k, %c0] -> %b1
// CHECK-NEXT:     ascend_hw.set_flag mte2 -> mte1, 2
// CHECK-NEXT:     ascend_hw.wait_flag mte2 -> mte1, 0
// CHECK-NEXT:     ascend_hw.wait_flag m -> mte1, 1
// CHECK-NEXT:     ascend_hw.load_l0 %a1
// CHECK-NEXT:     ascend_hw.set_flag mte1 -> mte2, 2
// CHECK-NEXT:     ascend_hw.wait_flag mte2 -> mte1, 2
// CHECK-NEXT:     ascend_hw.load_l0 %b1
// CHECK-NEXT:     ascend_hw.set_flag mte1 -> m, 1
// CHECK-NEXT:     ascend_hw.wait_flag mte1 -> m, 1
// CHECK-NEXT:     ascend_hw.mmad %a0, %b0 -> %acc {m = 32 : i64, n = 128 : i64, k = 64 : i64, accumulate}
// CHECK-NEXT:   }
// CHECK-NEXT:   ascend_hw.set_flag m -> fix, 0
// CHECK-NEXT:   ascend_hw.wait_flag m -> fix, 0
// CHECK-NEXT:   ascend_hw.fixpipe %acc
// CHECK-NEXT: }
// CHECK-NEXT: ascend_hw.wait_flag mte1 -> mte2, 2
// CHECK-NEXT: func.return
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @mm(%a: memref<128x256xf16>, %b: memref<256x128xf16>, %c: memref<128x128xf32>) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %a1 = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x64xf16, l1, nz>
    %b1 = ascend_hw.alloc [4096, 20480) : !ascend_hw.buf<64x128xf16, l1, nz>
    %a0 = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x64xf16, l0a, nz>
    %b0 = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<64x128xf16, l0b, nz>
    %acc = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<32x128xf32, l0c, nz>
    scf.for %m = %c0 to %c128 step %c32 {
      ascend_hw.nd2nz %a[%m, %c0] -> %a1[%c0, %c0] {rows = 32, cols = 64} : memref<128x256xf16> -> !ascend_hw.buf<32x64xf16, l1, nz>
      ascend_hw.nd2nz %b[%c0, %c0] -> %b1[%c0, %c0] {rows = 64, cols = 128} : memref<256x128xf16> -> !ascend_hw.buf<64x128xf16, l1, nz>
      ascend_hw.load_l0 %a1[%c0, %c0] -> %a0[%c0, %c0] {rows = 32, cols = 64} : !ascend_hw.buf<32x64xf16, l1, nz> -> !ascend_hw.buf<32x64xf16, l0a, nz>
      ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 64, cols = 128} : !ascend_hw.buf<64x128xf16, l1, nz> -> !ascend_hw.buf<64x128xf16, l0b, nz>
      ascend_hw.mmad %a0, %b0 -> %acc {m = 32, n = 128, k = 64} : !ascend_hw.buf<32x64xf16, l0a, nz>, !ascend_hw.buf<64x128xf16, l0b, nz> -> !ascend_hw.buf<32x128xf32, l0c, nz>
      scf.for %k = %c64 to %c256 step %c64 {
        ascend_hw.nd2nz %a[%m, %k] -> %a1[%c0, %c0] {rows = 32, cols = 64} : memref<128x256xf16> -> !ascend_hw.buf<32x64xf16, l1, nz>
        ascend_hw.nd2nz %b[%k, %c0] -> %b1[%c0, %c0] {rows = 64, cols = 128} : memref<256x128xf16> -> !ascend_hw.buf<64x128xf16, l1, nz>
        ascend_hw.load_l0 %a1[%c0, %c0] -> %a0[%c0, %c0] {rows = 32, cols = 64} : !ascend_hw.buf<32x64xf16, l1, nz> -> !ascend_hw.buf<32x64xf16, l0a, nz>
        ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 64, cols = 128} : !ascend_hw.buf<64x128xf16, l1, nz> -> !ascend_hw.buf<64x128xf16, l0b, nz>
        ascend_hw.mmad %a0, %b0 -> %acc {m = 32, n = 128, k = 64, accumulate} : !ascend_hw.buf<32x64xf16, l0a, nz>, !ascend_hw.buf<64x128xf16, l0b, nz> -> !ascend_hw.buf<32x128xf32, l0c, nz>
      }
      ascend_hw.fixpipe %acc[%c0, %c0] -> %c[%m, %c0] {rows = 32, cols = 128} : !ascend_hw.buf<32x128xf32, l0c, nz> -> memref<128x128xf32>
    }
    func.return
  }
}
