// The vector ops (elementwise, cast, reductions, broadcast, fill, pad, transpose,
// valid_dim) refuse tiles outside ub, unsupported element types and shapes that
// do not agree.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'tile.exp' op expects its operand in ub, got l1
func.func @f(%t: !tile.tile<16x16xf16, l1>) {
  %e = tile.exp %t : !tile.tile<16x16xf16, l1>
  func.return
}

// -----

// CHECK: 'tile.exp' op does not support element type i32 for its operand (expected f16, f32)
func.func @f(%t: !tile.tile<16x16xi32, ub>) {
  %e = tile.exp %t : !tile.tile<16x16xi32, ub>
  func.return
}

// -----

// bf16 only converts on the vector unit: cast to f32 first.
// CHECK: 'tile.sigmoid' op does not support element type bf16 for its operand (expected f16, f32)
func.func @f(%t: !tile.tile<16x16xbf16, ub>) {
  %e = tile.sigmoid %t : !tile.tile<16x16xbf16, ub>
  func.return
}

// -----

// CHECK: 'tile.abs' op does not support element type i8 for its operand (expected f16, f32, i16, i32)
func.func @f(%t: !tile.tile<16x32xi8, ub>) {
  %e = tile.abs %t : !tile.tile<16x32xi8, ub>
  func.return
}

// -----

// An elementwise result defines only the valid region, so it carries no pad.
// CHECK: 'tile.relu' op result type must be !tile.tile<16x16xf16, ub>, got !tile.tile<16x16xf16, ub, pad = zero>
func.func @f(%t: !tile.tile<16x16xf16, ub, pad = zero>) {
  %e = "tile.relu"(%t) : (!tile.tile<16x16xf16, ub, pad = zero>) -> !tile.tile<16x16xf16, ub, pad = zero>
  func.return
}

// -----

// CHECK: 'tile.add' op needs at least one tile operand
func.func @f(%a: f16, %b: f16) {
  %e = "tile.add"(%a, %b) : (f16, f16) -> !tile.tile<16x16xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.mul' op operands have different element types (!tile.tile<16x16xf16, ub>, f32)
func.func @f(%t: !tile.tile<16x16xf16, ub>, %s: f32) {
  %e = tile.mul %t, %s : !tile.tile<16x16xf16, ub>, f32
  func.return
}

// -----

// CHECK: 'tile.add' op operands disagree in dim 1: 64 (valid 64) vs 32 (valid 32); dims must match or one must be 1
func.func @f(%a: !tile.tile<16x64xf16, ub>, %b: !tile.tile<16x32xf16, ub>) {
  %e = tile.add %a, %b : !tile.tile<16x64xf16, ub>, !tile.tile<16x32xf16, ub>
  func.return
}

// -----

// Same physical shape, different valid extents.
// CHECK: 'tile.sub' op operands disagree in dim 0: 16 (valid ?) vs 16 (valid 16); dims must match or one must be 1
func.func @f(%a: !tile.tile<16x64xf16, ub, valid = [?, 64]>, %b: !tile.tile<16x64xf16, ub>) {
  %e = tile.sub %a, %b : !tile.tile<16x64xf16, ub, valid = [?, 64]>, !tile.tile<16x64xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.max' op operands have ranks 2 and 1
func.func @f(%a: !tile.tile<16x64xf16, ub>, %b: !tile.tile<64xf16, ub>) {
  %e = tile.max %a, %b : !tile.tile<16x64xf16, ub>, !tile.tile<64xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.div' op does not support element type i32 for its operands (expected f16, f32)
func.func @f(%a: !tile.tile<16x16xi32, ub>) {
  %e = tile.div %a, %a : !tile.tile<16x16xi32, ub>
  func.return
}

// -----

// CHECK: 'tile.min' op expects tile operands in ub, got l0c
func.func @f(%a: !tile.tile<16x16xf32, l0c>) {
  %e = tile.min %a, %a : !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// CHECK: 'tile.add' op result type must be !tile.tile<16x64xf32, ub>, got !tile.tile<16x1xf32, ub>
func.func @f(%a: !tile.tile<16x64xf32, ub>, %b: !tile.tile<16x1xf32, ub>) {
  %e = "tile.add"(%a, %b) : (!tile.tile<16x64xf32, ub>, !tile.tile<16x1xf32, ub>) -> !tile.tile<16x1xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.cast' op takes a rounding mode only for float -> integer
func.func @f(%t: !tile.tile<16x16xf32, ub>) {
  %e = tile.cast %t round floor : !tile.tile<16x16xf32, ub> -> !tile.tile<16x16xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.cast' op result type must be !tile.tile<16x16xf16, ub>, got !tile.tile<16x32xf16, ub>
func.func @f(%t: !tile.tile<16x16xf32, ub>) {
  %e = tile.cast %t : !tile.tile<16x16xf32, ub> -> !tile.tile<16x32xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.cast' op expects its operand in ub, got l1
func.func @f(%t: !tile.tile<16x16xf32, l1>) {
  %e = tile.cast %t : !tile.tile<16x16xf32, l1> -> !tile.tile<16x16xf16, l1>
  func.return
}

// -----

// CHECK: 'tile.reduce_sum' op axis 2 is out of range for rank 2
func.func @f(%t: !tile.tile<16x16xf32, ub>) {
  %e = tile.reduce_sum %t, axis = 2 : !tile.tile<16x16xf32, ub> -> !tile.tile<16x16xf32, ub>
  func.return
}

// -----

// Reductions keep the reduced dim with extent 1.
// CHECK: 'tile.reduce_max' op result type must be !tile.tile<16x1xf32, ub, valid = [?, 1]>, got !tile.tile<16x1xf32, ub>
func.func @f(%t: !tile.tile<16x16xf32, ub, valid = [?, 16]>) {
  %e = tile.reduce_max %t, axis = 1 : !tile.tile<16x16xf32, ub, valid = [?, 16]> -> !tile.tile<16x1xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.reduce_min' op does not support element type i8 for its operand (expected f16, f32, i16, i32)
func.func @f(%t: !tile.tile<16x32xi8, ub>) {
  %e = tile.reduce_min %t, axis = 1 : !tile.tile<16x32xi8, ub> -> !tile.tile<16x1xi8, ub>
  func.return
}

// -----

// CHECK: 'tile.broadcast' op dim 0 must be kept or broadcast from 1: source 16 (valid 16), result 32 (valid 32)
func.func @f(%t: !tile.tile<16x1xf32, ub>) {
  %e = tile.broadcast %t : !tile.tile<16x1xf32, ub> -> !tile.tile<32x64xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.broadcast' op dim 1 must be kept or broadcast from 1: source 1 (valid ?), result 64 (valid 64)
func.func @f(%t: !tile.tile<16x1xf32, ub, valid = [16, ?]>) {
  %e = tile.broadcast %t : !tile.tile<16x1xf32, ub, valid = [16, ?]> -> !tile.tile<16x64xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.broadcast' op expects 1 valid-extent operand(s), one per ? in the result's broadcast dims, got 0
func.func @f(%t: !tile.tile<16x1xf32, ub>) {
  %e = tile.broadcast %t : !tile.tile<16x1xf32, ub> -> !tile.tile<16x64xf32, ub, valid = [16, ?]>
  func.return
}

// -----

// CHECK: 'tile.broadcast' op result must keep the element type
func.func @f(%t: !tile.tile<16x1xf32, ub>) {
  %e = tile.broadcast %t : !tile.tile<16x1xf32, ub> -> !tile.tile<16x64xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.broadcast' op result cannot have a pad value; use tile.pad
func.func @f(%t: !tile.tile<16x1xf32, ub>) {
  %e = tile.broadcast %t : !tile.tile<16x1xf32, ub> -> !tile.tile<16x64xf32, ub, pad = zero>
  func.return
}

// -----

// CHECK: 'tile.broadcast' op result must keep the rank
func.func @f(%t: !tile.tile<16x1xf32, ub>) {
  %e = tile.broadcast %t : !tile.tile<16x1xf32, ub> -> !tile.tile<2x16x64xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.fill' op value has type f16, the tile holds f32
func.func @f(%v: f16) {
  %e = tile.fill %v : f16 -> !tile.tile<16x16xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.fill' op expects 2 valid-extent operand(s), one per ? in the result's valid shape, got 1
func.func @f(%v: f32, %n: index) {
  %e = tile.fill %v valid [%n] : f32 -> !tile.tile<16x16xf32, ub, valid = [?, ?]>
  func.return
}

// -----

// CHECK: 'tile.fill' op expects its result in ub, got l0c
func.func @f(%v: f32) {
  %e = tile.fill %v : f32 -> !tile.tile<16x16xf32, l0c>
  func.return
}

// -----

// CHECK: 'tile.pad' op result must have a pad value
func.func @f(%t: !tile.tile<16x16xf32, ub>) {
  %e = tile.pad %t : !tile.tile<16x16xf32, ub> -> !tile.tile<16x16xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.pad' op result type must be !tile.tile<16x16xf32, ub, valid = [?, 16], pad = zero>, got !tile.tile<16x16xf32, ub, pad = zero>
func.func @f(%t: !tile.tile<16x16xf32, ub, valid = [?, 16]>) {
  %e = tile.pad %t : !tile.tile<16x16xf32, ub, valid = [?, 16]> -> !tile.tile<16x16xf32, ub, pad = zero>
  func.return
}

// -----

// CHECK: 'tile.transpose' op takes a 2-D tile
func.func @f(%t: !tile.tile<2x16x16xf32, ub>) {
  %e = tile.transpose %t : !tile.tile<2x16x16xf32, ub> -> !tile.tile<16x16x2xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.transpose' op result type must be !tile.tile<32x16xf32, ub, valid = [32, ?]>, got !tile.tile<16x32xf32, ub, valid = [?, 32]>
func.func @f(%t: !tile.tile<16x32xf32, ub, valid = [?, 32]>) {
  %e = tile.transpose %t : !tile.tile<16x32xf32, ub, valid = [?, 32]> -> !tile.tile<16x32xf32, ub, valid = [?, 32]>
  func.return
}

// -----

// CHECK: 'tile.valid_dim' op dim 2 is out of range for rank 2
func.func @f(%t: !tile.tile<16x32xf32, ub>) {
  %e = tile.valid_dim %t, 2 : !tile.tile<16x32xf32, ub>
  func.return
}
