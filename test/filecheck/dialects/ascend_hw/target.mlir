// Capacities are checked only when the module names a target; alignments,
// repeat and event limits come from the named target, else from ascend910b.
// RUN: sed -e "s|INPUTS|%S/Inputs|" %s | pypto-opt --split-input-file | filecheck %s

// Without a target nothing bounds the offset: 1 MiB of UB is accepted.
// CHECK-LABEL: builtin.module {
// CHECK: ascend_hw.alloc [1048576, 1179648) : !ascend_hw.buf<64x1024xf16, ub>
builtin.module {
  func.func @no_target() {
    %a = ascend_hw.alloc [1048576, 1179648) : !ascend_hw.buf<64x1024xf16, ub>
    func.return
  }
}

// -----

// The tiny target's 4 KiB of UB and 2 KiB of L0A hold these exactly.
// CHECK-LABEL: builtin.module attributes {pypto.target = "tiny"}
// CHECK: ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<1024xf16, ub>
// CHECK: ascend_hw.alloc [0, 2048) : !ascend_hw.buf<32x32xf16, l0a, nz>
builtin.module attributes {pypto.target = "tiny"} {
  func.func @fits() {
    %a = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<1024xf16, ub>
    %b = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<32x32xf16, l0a, nz>
    func.return
  }
}

// -----

// A target file given by path: its own limits apply.
// CHECK-LABEL: func.func @narrow
// CHECK: ascend_hw.alloc [128, 160) : !ascend_hw.buf<16xf16, l1>
// CHECK: ascend_hw.vadd {{.*}} {repeat = 100 : i64}
// CHECK: ascend_hw.set_flag mte2 -> v, 3
builtin.module attributes {pypto.target = "INPUTS/narrow.toml"} {
  func.func @narrow(%a: !ascend_hw.buf<100x128xf16, ub>) {
    %l = ascend_hw.alloc [128, 160) : !ascend_hw.buf<16xf16, l1>
    ascend_hw.vadd %a, %a -> %a {repeat = 100} : !ascend_hw.buf<100x128xf16, ub>, !ascend_hw.buf<100x128xf16, ub> -> !ascend_hw.buf<100x128xf16, ub>
    ascend_hw.set_flag mte2 -> v, 3
    func.return
  }
}
