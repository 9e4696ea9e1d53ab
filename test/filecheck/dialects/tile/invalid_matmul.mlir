// tile.matmul refuses operands outside l0a/l0b, mismatched K, partial K without
// zero padding, and wrong accumulator types.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'tile.matmul' op expects lhs in l0a, got l1
func.func @f(%a: !tile.tile<16x16xf16, l1, layout = nz>, %b: !tile.tile<16x16xf16, l0b>) {
  %c = tile.matmul %a, %b : !tile.tile<16x16xf16, l1, layout = nz>, !tile.tile<16x16xf16, l0b> -> !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// CHECK: 'tile.matmul' op expects rhs in l0b, got l0a
func.func @f(%a: !tile.tile<16x16xf16, l0a>, %b: !tile.tile<16x16xf16, l0a>) {
  %c = tile.matmul %a, %b : !tile.tile<16x16xf16, l0a>, !tile.tile<16x16xf16, l0a> -> !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// CHECK: 'tile.matmul' op does not support element type i32 for lhs (expected f16, bf16, f32, i8)
func.func @f(%a: !tile.tile<16x16xi32, l0a>, %b: !tile.tile<16x16xi32, l0b>) {
  %c = tile.matmul %a, %b : !tile.tile<16x16xi32, l0a>, !tile.tile<16x16xi32, l0b> -> !tile.tile<16x16xi32, l0c>
  func.return
}

// -----

// CHECK: 'tile.matmul' op operands have different element types (f16, bf16)
func.func @f(%a: !tile.tile<16x16xf16, l0a>, %b: !tile.tile<16x16xbf16, l0b>) {
  %c = tile.matmul %a, %b : !tile.tile<16x16xf16, l0a>, !tile.tile<16x16xbf16, l0b> -> !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// CHECK: 'tile.matmul' op K extents differ: lhs has 32 columns, rhs 16 rows
func.func @f(%a: !tile.tile<16x32xf16, l0a>, %b: !tile.tile<16x16xf16, l0b>) {
  %c = tile.matmul %a, %b : !tile.tile<16x32xf16, l0a>, !tile.tile<16x16xf16, l0b> -> !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// CHECK: 'tile.matmul' op valid K extents differ: lhs [?], rhs [20]
func.func @f(%a: !tile.tile<16x32xf16, l0a, valid = [16, ?], pad = zero>, %b: !tile.tile<32x16xf16, l0b, valid = [20, 16], pad = zero>) {
  %c = tile.matmul %a, %b : !tile.tile<16x32xf16, l0a, valid = [16, ?], pad = zero>, !tile.tile<32x16xf16, l0b, valid = [20, 16], pad = zero> -> !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// CHECK: 'tile.matmul' op a partial K extent needs both operands zero-padded (pad = zero): the cube reads whole fractals
func.func @f(%a: !tile.tile<16x32xf16, l0a, valid = [16, 20], pad = zero>, %b: !tile.tile<32x16xf16, l0b, valid = [20, 16]>) {
  %c = tile.matmul %a, %b : !tile.tile<16x32xf16, l0a, valid = [16, 20], pad = zero>, !tile.tile<32x16xf16, l0b, valid = [20, 16]> -> !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// f16 products accumulate in f32.
// CHECK: 'tile.matmul' op result type must be !tile.tile<16x16xf32, l0c>, got !tile.tile<16x16xf16, l0c>
func.func @f(%a: !tile.tile<16x16xf16, l0a>, %b: !tile.tile<16x16xf16, l0b>) {
  %c = tile.matmul %a, %b : !tile.tile<16x16xf16, l0a>, !tile.tile<16x16xf16, l0b> -> !tile.tile<16x16xf16, l0c>
  func.return
}

// -----

// The result's valid shape is [valid m of lhs, valid n of rhs].
// CHECK: 'tile.matmul' op result type must be !tile.tile<16x16xf32, l0c, valid = [?, 16]>, got !tile.tile<16x16xf32, l0c>
func.func @f(%a: !tile.tile<16x16xf16, l0a, valid = [?, 16]>, %b: !tile.tile<16x16xf16, l0b>) {
  %c = tile.matmul %a, %b : !tile.tile<16x16xf16, l0a, valid = [?, 16]>, !tile.tile<16x16xf16, l0b> -> !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// The accumulator has the result's type.
// CHECK: 'tile.matmul' op result 'result' at position 0 does not verify:
// CHECK-NEXT: attribute !tile.tile<16x16xf32, l0c, valid = [?, 16]> expected from variable 'T', but got !tile.tile<16x16xf32, l0c>
func.func @f(%a: !tile.tile<16x16xf16, l0a>, %b: !tile.tile<16x16xf16, l0b>, %acc: !tile.tile<16x16xf32, l0c, valid = [?, 16]>) {
  %c = "tile.matmul"(%a, %b, %acc) : (!tile.tile<16x16xf16, l0a>, !tile.tile<16x16xf16, l0b>, !tile.tile<16x16xf32, l0c, valid = [?, 16]>) -> !tile.tile<16x16xf32, l0c>
  func.return
}
