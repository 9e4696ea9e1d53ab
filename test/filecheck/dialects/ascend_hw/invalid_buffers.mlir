// The buffer type, alloc and subview refuse what the hardware cannot hold.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: buffer shape must be non-empty with positive sizes, got [0, 16]
func.func @f(%a: !ascend_hw.buf<0x16xf16, ub>) {
  func.return
}

// -----

// CHECK: buffer element type must be one of f16, bf16, f32, i8, i16, i32, got f64
func.func @f(%a: !ascend_hw.buf<16xf64, ub>) {
  func.return
}

// -----

// CHECK: a buffer lives in an on-chip memory; GM operands are memrefs
func.func @f(%a: !ascend_hw.buf<16xf16, gm>) {
  func.return
}

// -----

// CHECK: an nz buffer is 2-D, got shape [256]
func.func @f(%a: !ascend_hw.buf<256xf16, l1, nz>) {
  func.return
}

// -----

// CHECK: Expected `gm`, `l1`, `l0a`, `l0b`, `l0c`, or `ub`.
func.func @f(%a: !ascend_hw.buf<16xf16, l2>) {
  func.return
}

// -----

// CHECK: 'ascend_hw.alloc' op offset 16 of a buffer in ub must be a non-negative multiple of 32 (alignment of ub on target ascend910b)
func.func @f() {
  %a = ascend_hw.alloc [16, 48) : !ascend_hw.buf<16xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.alloc' op offset 256 of a buffer in l0a must be a non-negative multiple of 512 (alignment of l0a on target ascend910b)
func.func @f() {
  %a = ascend_hw.alloc [256, 768) : !ascend_hw.buf<16x16xf16, l0a, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.alloc' op buffer !ascend_hw.buf<16x8xf16, l1, nz> is not made of 16x16 nz fractals (target ascend910b)
func.func @f() {
  %a = ascend_hw.alloc [0, 256) : !ascend_hw.buf<16x8xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.alloc' op buffer [131072, 262144) does not fit ub of target ascend910b (196608 bytes)
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @f() {
    %a = ascend_hw.alloc [131072, 262144) : !ascend_hw.buf<64x1024xf16, ub>
    func.return
  }
}

// -----

// CHECK: byte range end 66 is not offset 0 plus the 64 bytes of !ascend_hw.buf<32xf16, ub>
func.func @f() {
  %a = ascend_hw.alloc [0, 66) : !ascend_hw.buf<32xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.alloc' op cannot load target 'no_such_chip': no_such_chip: no such target file
builtin.module attributes {pypto.target = "no_such_chip"} {
  func.func @f() {
    %a = ascend_hw.alloc [0, 64) : !ascend_hw.buf<32xf16, ub>
    func.return
  }
}

// -----

// CHECK: 'ascend_hw.alloc' op pypto.target must be a string, got 3 : i64
builtin.module attributes {pypto.target = 3} {
  func.func @f() {
    %a = ascend_hw.alloc [0, 64) : !ascend_hw.buf<32xf16, ub>
    func.return
  }
}

// -----

// CHECK: 'ascend_hw.subview' op subview stays in ub, got a result in l1
func.func @f(%a: !ascend_hw.buf<64x64xf16, ub>, %i: index) {
  %r = ascend_hw.subview %a[%i, %i] : !ascend_hw.buf<64x64xf16, ub> -> !ascend_hw.buf<64xf16, l1>
  func.return
}

// -----

// CHECK: 'ascend_hw.subview' op subview keeps the element type f16, got f32
func.func @f(%a: !ascend_hw.buf<64x64xf16, ub>, %i: index) {
  %r = ascend_hw.subview %a[%i, %i] : !ascend_hw.buf<64x64xf16, ub> -> !ascend_hw.buf<64xf32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.subview' op subview of a 2-D buffer needs 2 indices, got 1
func.func @f(%a: !ascend_hw.buf<64x64xf16, ub>, %i: index) {
  %r = ascend_hw.subview %a[%i] : !ascend_hw.buf<64x64xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.subview' op subview result !ascend_hw.buf<65x64xf16, ub> (8320 bytes) is larger than its source !ascend_hw.buf<64x64xf16, ub> (8192 bytes)
func.func @f(%a: !ascend_hw.buf<64x64xf16, ub>, %i: index) {
  %r = ascend_hw.subview %a[%i, %i] : !ascend_hw.buf<64x64xf16, ub> -> !ascend_hw.buf<65x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.subview' op subview result !ascend_hw.buf<8x16xf16, l1, nz> is not made of 16x16 nz fractals (target ascend910b)
func.func @f(%a: !ascend_hw.buf<64x64xf16, l1, nz>, %i: index) {
  %r = ascend_hw.subview %a[%i, %i] : !ascend_hw.buf<64x64xf16, l1, nz> -> !ascend_hw.buf<8x16xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.subview' op subview index [64, 0] is outside the source shape [64, 64]
func.func @f(%a: !ascend_hw.buf<64x64xf16, ub>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r = ascend_hw.subview %a[%c64, %c0] : !ascend_hw.buf<64x64xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.subview' op subview bytes [4096, 8320) run past the 8192 bytes of the source
func.func @f(%a: !ascend_hw.buf<64x64xf16, ub>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %r = ascend_hw.subview %a[%c32, %c0] : !ascend_hw.buf<64x64xf16, ub> -> !ascend_hw.buf<33x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.subview' op subview starts at byte 2 of the source, not a multiple of 32 (alignment of ub on target ascend910b)
func.func @f(%a: !ascend_hw.buf<64x64xf16, ub>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = ascend_hw.subview %a[%c0, %c1] : !ascend_hw.buf<64x64xf16, ub> -> !ascend_hw.buf<16xf16, ub>
  func.return
}
