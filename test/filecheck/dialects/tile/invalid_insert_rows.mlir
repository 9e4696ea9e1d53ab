// tile.insert_rows writes whole, all-valid rows of the destination's element
// type and columns into a ub tile, inside its shape when the row is a constant.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'tile.insert_rows' op expects its destination in ub, got l1
func.func @f(%v: !tile.tile<1x16xf32, ub>, %t: !tile.tile<8x16xf32, l1>, %r: index) -> !tile.tile<8x16xf32, l1> {
  %x = tile.insert_rows %v, %t[%r] : !tile.tile<1x16xf32, ub>, !tile.tile<8x16xf32, l1>
  func.return %x : !tile.tile<8x16xf32, l1>
}

// -----

// CHECK: 'tile.insert_rows' op expects rows of the destination's element type and columns, all valid, got !tile.tile<1x16xf16, ub> for !tile.tile<8x16xf32, ub>
func.func @f(%v: !tile.tile<1x16xf16, ub>, %t: !tile.tile<8x16xf32, ub>, %r: index) -> !tile.tile<8x16xf32, ub> {
  %x = tile.insert_rows %v, %t[%r] : !tile.tile<1x16xf16, ub>, !tile.tile<8x16xf32, ub>
  func.return %x : !tile.tile<8x16xf32, ub>
}

// -----

// CHECK: 'tile.insert_rows' op expects rows of the destination's element type and columns, all valid, got !tile.tile<1x16xf32, ub, valid = [1, ?]> for !tile.tile<8x16xf32, ub>
func.func @f(%v: !tile.tile<1x16xf32, ub, valid = [1, ?]>, %t: !tile.tile<8x16xf32, ub>, %r: index) -> !tile.tile<8x16xf32, ub> {
  %x = tile.insert_rows %v, %t[%r] : !tile.tile<1x16xf32, ub, valid = [1, ?]>, !tile.tile<8x16xf32, ub>
  func.return %x : !tile.tile<8x16xf32, ub>
}

// -----

// CHECK: 'tile.insert_rows' op inserts 16 rows into a tile of 8
func.func @f(%v: !tile.tile<16x16xf32, ub>, %t: !tile.tile<8x16xf32, ub>, %r: index) -> !tile.tile<8x16xf32, ub> {
  %x = tile.insert_rows %v, %t[%r] : !tile.tile<16x16xf32, ub>, !tile.tile<8x16xf32, ub>
  func.return %x : !tile.tile<8x16xf32, ub>
}

// -----

// CHECK: 'tile.insert_rows' op rows of 4 x 4 bytes are not whole 32-byte blocks (ub's alignment)
func.func @f(%v: !tile.tile<1x4xf32, ub>, %t: !tile.tile<8x4xf32, ub>, %r: index) -> !tile.tile<8x4xf32, ub> {
  %x = tile.insert_rows %v, %t[%r] : !tile.tile<1x4xf32, ub>, !tile.tile<8x4xf32, ub>
  func.return %x : !tile.tile<8x4xf32, ub>
}

// -----

// CHECK: 'tile.insert_rows' op rows [7, 9) are outside the destination's shape [8, 16]
func.func @f(%v: !tile.tile<2x16xf32, ub>, %t: !tile.tile<8x16xf32, ub>) -> !tile.tile<8x16xf32, ub> {
  %c7 = arith.constant 7 : index
  %x = tile.insert_rows %v, %t[%c7] : !tile.tile<2x16xf32, ub>, !tile.tile<8x16xf32, ub>
  func.return %x : !tile.tile<8x16xf32, ub>
}

// -----

// CHECK: 'tile.insert_rows' op inserts rows of a 2-d tile into a 2-d tile, got !tile.tile<16xf32, ub> and !tile.tile<8x16xf32, ub>
func.func @f(%v: !tile.tile<16xf32, ub>, %t: !tile.tile<8x16xf32, ub>, %r: index) -> !tile.tile<8x16xf32, ub> {
  %x = tile.insert_rows %v, %t[%r] : !tile.tile<16xf32, ub>, !tile.tile<8x16xf32, ub>
  func.return %x : !tile.tile<8x16xf32, ub>
}
