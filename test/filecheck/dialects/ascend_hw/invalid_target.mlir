// What fits the default target can break a smaller one: the named target's
// capacities, alignments, repeat and event limits apply.
// RUN: sed -e "s|INPUTS|%S/Inputs|" %s | not pypto-opt --split-input-file 2>&1 | filecheck %s

// CHECK: 'ascend_hw.alloc' op buffer [2048, 4112) does not fit ub of target tiny (4096 bytes)
builtin.module attributes {pypto.target = "tiny"} {
  func.func @f() {
    %a = ascend_hw.alloc [2048, 4112) : !ascend_hw.buf<1032xf16, ub>
    func.return
  }
}

// -----

// CHECK: 'ascend_hw.alloc' op buffer [0, 4096) does not fit l0b of target tiny (2048 bytes)
builtin.module attributes {pypto.target = "tiny"} {
  func.func @f() {
    %a = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<64x32xf16, l0b, nz>
    func.return
  }
}

// -----

// CHECK: 'ascend_hw.alloc' op offset 32 of a buffer in l1 must be a non-negative multiple of 128 (alignment of l1 on target narrow)
builtin.module attributes {pypto.target = "INPUTS/narrow.toml"} {
  func.func @f() {
    %l = ascend_hw.alloc [32, 64) : !ascend_hw.buf<16xf16, l1>
    func.return
  }
}

// -----

// CHECK: 'ascend_hw.vadd' op repeat must be in 1..100 (vector.max_repeat of target narrow), got 101
builtin.module attributes {pypto.target = "INPUTS/narrow.toml"} {
  func.func @f(%a: !ascend_hw.buf<101x128xf16, ub>) {
    ascend_hw.vadd %a, %a -> %a {repeat = 101} : !ascend_hw.buf<101x128xf16, ub>, !ascend_hw.buf<101x128xf16, ub> -> !ascend_hw.buf<101x128xf16, ub>
    func.return
  }
}

// -----

// CHECK: 'ascend_hw.wait_flag' op event id must be in 0..3 (sync.event_ids of target narrow), got 4
builtin.module attributes {pypto.target = "INPUTS/narrow.toml"} {
  func.func @f() {
    ascend_hw.wait_flag mte2 -> v, 4
    func.return
  }
}

// -----

// CHECK: 'ascend_hw.alloc' op cannot load target '{{.*}}/Inputs/missing.toml': {{.*}}no such target file
builtin.module attributes {pypto.target = "INPUTS/missing.toml"} {
  func.func @f() {
    %l = ascend_hw.alloc [0, 32) : !ascend_hw.buf<16xf16, l1>
    func.return
  }
}
