// tile.insert writes i16/i32 (from an index) and f16/f32 (from themselves) ub
// tiles at one index per dim, inside the shape; the result is the tile's type.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'tile.insert' op expects its destination in ub, got l1
func.func @f(%t: !tile.tile<64xf32, l1>, %v: f32, %j: index) -> !tile.tile<64xf32, l1> {
  %r = tile.insert %v, %t[%j] : f32, !tile.tile<64xf32, l1>
  func.return %r : !tile.tile<64xf32, l1>
}

// -----

// CHECK: 'tile.insert' op does not support element type i8 for its destination (expected i16, i32, f16, f32)
func.func @f(%t: !tile.tile<64xi8, ub>, %j: index) -> !tile.tile<64xi8, ub> {
  %r = tile.insert %j, %t[%j] : index, !tile.tile<64xi8, ub>
  func.return %r : !tile.tile<64xi8, ub>
}

// -----

// CHECK: 'tile.insert' op writes a f32 element from f32, not f16
func.func @f(%t: !tile.tile<64xf32, ub>, %v: f16, %j: index) -> !tile.tile<64xf32, ub> {
  %r = tile.insert %v, %t[%j] : f16, !tile.tile<64xf32, ub>
  func.return %r : !tile.tile<64xf32, ub>
}

// -----

// CHECK: 'tile.insert' op expects 2 indices for !tile.tile<8x8xf32, ub>, got 1
func.func @f(%t: !tile.tile<8x8xf32, ub>, %v: f32, %j: index) -> !tile.tile<8x8xf32, ub> {
  %r = tile.insert %v, %t[%j] : f32, !tile.tile<8x8xf32, ub>
  func.return %r : !tile.tile<8x8xf32, ub>
}

// -----

// CHECK: 'tile.insert' op index 64 of dim 0 is outside the tile's shape [64]
func.func @f(%t: !tile.tile<64xf32, ub>, %v: f32) -> !tile.tile<64xf32, ub> {
  %c64 = arith.constant 64 : index
  %r = tile.insert %v, %t[%c64] : f32, !tile.tile<64xf32, ub>
  func.return %r : !tile.tile<64xf32, ub>
}

// -----

// CHECK: 'tile.insert' op result 'result' at position 0 does not verify
func.func @f(%t: !tile.tile<64xf32, ub>, %v: f32, %j: index) -> !tile.tile<64xf16, ub> {
  %r = "tile.insert"(%v, %t, %j) : (f32, !tile.tile<64xf32, ub>, index) -> !tile.tile<64xf16, ub>
  func.return %r : !tile.tile<64xf16, ub>
}
