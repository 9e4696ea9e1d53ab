// ascend_hw.mmad refuses operands outside l0a/l0b/l0c, non-fractal layouts,
// illegal type combinations and sizes larger than its buffers.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'ascend_hw.mmad' op lhs must be in l0a, got l1
func.func @f(%a: !ascend_hw.buf<16x16xf16, l1, nz>, %b: !ascend_hw.buf<16x16xf16, l0b, nz>, %c: !ascend_hw.buf<16x16xf32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 16, k = 16} : !ascend_hw.buf<16x16xf16, l1, nz>, !ascend_hw.buf<16x16xf16, l0b, nz> -> !ascend_hw.buf<16x16xf32, l0c, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op rhs must be in l0b, got l0a
func.func @f(%a: !ascend_hw.buf<16x16xf16, l0a, nz>, %b: !ascend_hw.buf<16x16xf16, l0a, nz>, %c: !ascend_hw.buf<16x16xf32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 16, k = 16} : !ascend_hw.buf<16x16xf16, l0a, nz>, !ascend_hw.buf<16x16xf16, l0a, nz> -> !ascend_hw.buf<16x16xf32, l0c, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op accumulator must be in l0c, got ub
func.func @f(%a: !ascend_hw.buf<16x16xf16, l0a, nz>, %b: !ascend_hw.buf<16x16xf16, l0b, nz>, %c: !ascend_hw.buf<16x16xf32, ub>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 16, k = 16} : !ascend_hw.buf<16x16xf16, l0a, nz>, !ascend_hw.buf<16x16xf16, l0b, nz> -> !ascend_hw.buf<16x16xf32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op lhs must be nz, got !ascend_hw.buf<16x16xf16, l0a>
func.func @f(%a: !ascend_hw.buf<16x16xf16, l0a>, %b: !ascend_hw.buf<16x16xf16, l0b, nz>, %c: !ascend_hw.buf<16x16xf32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 16, k = 16} : !ascend_hw.buf<16x16xf16, l0a>, !ascend_hw.buf<16x16xf16, l0b, nz> -> !ascend_hw.buf<16x16xf32, l0c, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op inputs must both be one of f16, bf16, f32, i8, got f16 and bf16
func.func @f(%a: !ascend_hw.buf<16x16xf16, l0a, nz>, %b: !ascend_hw.buf<16x16xbf16, l0b, nz>, %c: !ascend_hw.buf<16x16xf32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 16, k = 16} : !ascend_hw.buf<16x16xf16, l0a, nz>, !ascend_hw.buf<16x16xbf16, l0b, nz> -> !ascend_hw.buf<16x16xf32, l0c, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op inputs must both be one of f16, bf16, f32, i8, got i32 and i32
func.func @f(%a: !ascend_hw.buf<16x8xi32, l0a, nz>, %b: !ascend_hw.buf<8x8xi32, l0b, nz>, %c: !ascend_hw.buf<16x8xi32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 8, k = 8} : !ascend_hw.buf<16x8xi32, l0a, nz>, !ascend_hw.buf<8x8xi32, l0b, nz> -> !ascend_hw.buf<16x8xi32, l0c, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op i8 inputs accumulate in i32, got f32
func.func @f(%a: !ascend_hw.buf<16x32xi8, l0a, nz>, %b: !ascend_hw.buf<32x32xi8, l0b, nz>, %c: !ascend_hw.buf<16x32xf32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 32, k = 32} : !ascend_hw.buf<16x32xi8, l0a, nz>, !ascend_hw.buf<32x32xi8, l0b, nz> -> !ascend_hw.buf<16x32xf32, l0c, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op m, n, k must be positive, got 16, 0, 16
func.func @f(%a: !ascend_hw.buf<16x16xf16, l0a, nz>, %b: !ascend_hw.buf<16x16xf16, l0b, nz>, %c: !ascend_hw.buf<16x16xf32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 0, k = 16} : !ascend_hw.buf<16x16xf16, l0a, nz>, !ascend_hw.buf<16x16xf16, l0b, nz> -> !ascend_hw.buf<16x16xf32, l0c, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op k = 32 exceeds !ascend_hw.buf<16x16xf16, l0a, nz>
func.func @f(%a: !ascend_hw.buf<16x16xf16, l0a, nz>, %b: !ascend_hw.buf<32x16xf16, l0b, nz>, %c: !ascend_hw.buf<16x16xf32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 16, k = 32} : !ascend_hw.buf<16x16xf16, l0a, nz>, !ascend_hw.buf<32x16xf16, l0b, nz> -> !ascend_hw.buf<16x16xf32, l0c, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.mmad' op n = 32 exceeds !ascend_hw.buf<16x16xf32, l0c, nz>
func.func @f(%a: !ascend_hw.buf<16x16xf16, l0a, nz>, %b: !ascend_hw.buf<16x32xf16, l0b, nz>, %c: !ascend_hw.buf<16x16xf32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 16, n = 32, k = 16} : !ascend_hw.buf<16x16xf16, l0a, nz>, !ascend_hw.buf<16x32xf16, l0b, nz> -> !ascend_hw.buf<16x16xf32, l0c, nz>
  func.return
}
