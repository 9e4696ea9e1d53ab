// The tile type refuses malformed parameters with a diagnostic.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: valid extent 9 of dim 0 is outside [1, 8]
func.func @f(%t: !tile.tile<8x8xf16, ub, valid = [9, 8]>) {
  func.return
}

// -----

// CHECK: valid extent 0 of dim 1 is outside [1, 8]
func.func @f(%t: !tile.tile<8x8xf16, ub, valid = [8, 0]>) {
  func.return
}

// -----

// CHECK: tile valid shape has 1 dims but the shape has 2
func.func @f(%t: !tile.tile<8x8xf16, ub, valid = [8]>) {
  func.return
}

// -----

// CHECK: tile shapes are static; use valid = [...] for ?
func.func @f(%t: !tile.tile<?x8xf16, ub>) {
  func.return
}

// -----

// CHECK: tile element type must be one of f16, bf16, f32, i8, i16, i32, got f64
func.func @f(%t: !tile.tile<8x8xf64, ub>) {
  func.return
}

// -----

// CHECK: ub tiles use the nd layout
func.func @f(%t: !tile.tile<16x16xf16, ub, layout = nz>) {
  func.return
}

// -----

// CHECK: l0a tiles use the nz layout
func.func @f(%t: !tile.tile<16x16xf16, l0a, layout = nd>) {
  func.return
}

// -----

// CHECK: nz tiles are two-dimensional
func.func @f(%t: !tile.tile<2x16x16xf16, l1, layout = nz>) {
  func.return
}

// -----

// CHECK: nz tile shape 16x8 is not made of 16x16 fractals for f16
func.func @f(%t: !tile.tile<16x8xf16, l0b>) {
  func.return
}

// -----

// One-byte elements: a fractal row of 32 bytes holds 32 of them.
// CHECK: nz tile shape 16x32 is not made of 32x32 fractals for i8
func.func @f(%t: !tile.tile<16x32xi8, l0a>) {
  func.return
}

// -----

// CHECK: `pad` is given twice
func.func @f(%t: !tile.tile<8x8xf16, ub, pad = zero, pad = min>) {
  func.return
}

// -----

// CHECK: Expected one of 'l0a', 'l0b', 'l0c', 'l1', 'ub'
func.func @f(%t: !tile.tile<8x8xf16, gm>) {
  func.return
}

// -----

// CHECK: Expected one of 'max', 'min', 'zero'
func.func @f(%t: !tile.tile<8x8xf16, ub, pad = nan>) {
  func.return
}
