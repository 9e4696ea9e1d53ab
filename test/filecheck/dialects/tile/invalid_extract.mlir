// tile.extract reads i16/i32 (as index) and f16/f32 (as themselves) ub tiles at
// one index per dim, inside the shape.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'tile.extract' op expects its source in ub, got l1
func.func @f(%t: !tile.tile<64xi32, l1>, %j: index) -> index {
  %v = tile.extract %t[%j] : !tile.tile<64xi32, l1> -> index
  func.return %v : index
}

// -----

// CHECK: 'tile.extract' op does not support element type i8 for its source (expected i16, i32, f16, f32)
func.func @f(%t: !tile.tile<64xi8, ub>, %j: index) -> index {
  %v = tile.extract %t[%j] : !tile.tile<64xi8, ub> -> index
  func.return %v : index
}

// -----

// CHECK: 'tile.extract' op reads a f32 element as f32, not index
func.func @f(%t: !tile.tile<64xf32, ub>, %j: index) -> index {
  %v = tile.extract %t[%j] : !tile.tile<64xf32, ub> -> index
  func.return %v : index
}

// -----

// CHECK: 'tile.extract' op expects 2 indices for !tile.tile<8x8xi32, ub>, got 1
func.func @f(%t: !tile.tile<8x8xi32, ub>, %j: index) -> index {
  %v = tile.extract %t[%j] : !tile.tile<8x8xi32, ub> -> index
  func.return %v : index
}

// -----

// CHECK: 'tile.extract' op index 64 of dim 0 is outside the tile's shape [64]
func.func @f(%t: !tile.tile<64xi32, ub>) -> index {
  %c64 = arith.constant 64 : index
  %v = tile.extract %t[%c64] : !tile.tile<64xi32, ub> -> index
  func.return %v : index
}
