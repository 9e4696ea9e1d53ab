// tile.gather gathers whole 32-byte rows of a 2-d ub tile (16/32-bit
// elements) at i16/i32 indices of a 1-d ub tile, no more rows than it holds.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'tile.gather' op expects its source in ub, got l1
func.func @f(%b: !tile.tile<64x16xf16, l1>, %i: !tile.tile<8xi32, ub>, %k: index) -> !tile.tile<1x16xf16, ub> {
  %r = tile.gather %b[%i, %k] : !tile.tile<64x16xf16, l1>, !tile.tile<8xi32, ub> -> !tile.tile<1x16xf16, ub>
  func.return %r : !tile.tile<1x16xf16, ub>
}

// -----

// CHECK: 'tile.gather' op does not support element type f32 for its indices (expected i16, i32)
func.func @f(%b: !tile.tile<64x16xf16, ub>, %i: !tile.tile<8xf32, ub>, %k: index) -> !tile.tile<1x16xf16, ub> {
  %r = tile.gather %b[%i, %k] : !tile.tile<64x16xf16, ub>, !tile.tile<8xf32, ub> -> !tile.tile<1x16xf16, ub>
  func.return %r : !tile.tile<1x16xf16, ub>
}

// -----

// CHECK: 'tile.gather' op does not support element type i8 for its source
func.func @f(%b: !tile.tile<64x32xi8, ub>, %i: !tile.tile<8xi32, ub>, %k: index) -> !tile.tile<1x32xi8, ub> {
  %r = tile.gather %b[%i, %k] : !tile.tile<64x32xi8, ub>, !tile.tile<8xi32, ub> -> !tile.tile<1x32xi8, ub>
  func.return %r : !tile.tile<1x32xi8, ub>
}

// -----

// CHECK: 'tile.gather' op result must be !tile.tile<2x16xf16, ub>, got !tile.tile<2x8xf16, ub>
func.func @f(%b: !tile.tile<64x16xf16, ub>, %i: !tile.tile<8xi32, ub>, %k: index) -> !tile.tile<2x8xf16, ub> {
  %r = tile.gather %b[%i, %k] : !tile.tile<64x16xf16, ub>, !tile.tile<8xi32, ub> -> !tile.tile<2x8xf16, ub>
  func.return %r : !tile.tile<2x8xf16, ub>
}

// -----

// CHECK: 'tile.gather' op gathers 16 rows, but the index tile holds 8
func.func @f(%b: !tile.tile<64x16xf16, ub>, %i: !tile.tile<8xi32, ub>, %k: index) -> !tile.tile<16x16xf16, ub> {
  %r = tile.gather %b[%i, %k] : !tile.tile<64x16xf16, ub>, !tile.tile<8xi32, ub> -> !tile.tile<16x16xf16, ub>
  func.return %r : !tile.tile<16x16xf16, ub>
}

// -----

// CHECK: 'tile.gather' op source rows of 8 x 2 bytes are not whole 32-byte blocks (ub's alignment)
func.func @f(%b: !tile.tile<64x8xf16, ub>, %i: !tile.tile<8xi32, ub>, %k: index) -> !tile.tile<1x8xf16, ub> {
  %r = tile.gather %b[%i, %k] : !tile.tile<64x8xf16, ub>, !tile.tile<8xi32, ub> -> !tile.tile<1x8xf16, ub>
  func.return %r : !tile.tile<1x8xf16, ub>
}

// -----

// CHECK: 'tile.gather' op indices [6, 8) are outside the index tile's shape [7]
func.func @f(%b: !tile.tile<64x16xf16, ub>, %i: !tile.tile<7xi32, ub>) -> !tile.tile<2x16xf16, ub> {
  %c6 = arith.constant 6 : index
  %r = tile.gather %b[%i, %c6] : !tile.tile<64x16xf16, ub>, !tile.tile<7xi32, ub> -> !tile.tile<2x16xf16, ub>
  func.return %r : !tile.tile<2x16xf16, ub>
}

// -----

// CHECK: 'tile.gather' op gathers rows of a 2-d source at a 1-d index tile
func.func @f(%b: !tile.tile<64x16xf16, ub>, %i: !tile.tile<2x8xi32, ub>, %k: index) -> !tile.tile<1x16xf16, ub> {
  %r = tile.gather %b[%i, %k] : !tile.tile<64x16xf16, ub>, !tile.tile<2x8xi32, ub> -> !tile.tile<1x16xf16, ub>
  func.return %r : !tile.tile<1x16xf16, ub>
}
