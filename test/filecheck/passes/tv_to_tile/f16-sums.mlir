// tile-to-hw sums an f16 row of up to one repeat (128 lanes) in f32 and rounds
// once, as tv does; longer rows combine partial sums, and columns add rows
// pairwise, in the element type, where partial sums round and can overflow (an
// f16 column of 47 values of +-1000 whose sum is small). Those sums accumulate
// in f32: the tile is cast up first.
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' 2>/dev/null | filecheck %s

// CHECK-LABEL: func.func @column
// CHECK:       %[[X:.*]] = tile.load %x
// CHECK-NEXT:  %[[W:.*]] = tile.cast %[[X]] : !tile.tile<47x32xf16, ub> -> !tile.tile<47x32xf32, ub>
// CHECK-NEXT:  tile.reduce_sum %[[W]], axis = 0 : !tile.tile<47x32xf32, ub>
func.func @column(%x: !tv.tensor<47x32xf16>) -> !tv.tensor<32xf16> {
  %s = tv.reduce_sum %x [0] : !tv.tensor<47x32xf16> -> !tv.tensor<32xf16>
  func.return %s : !tv.tensor<32xf16>
}

// -----

// CHECK-LABEL: func.func @long_row
// CHECK:       tile.cast %{{.*}} -> !tile.tile<4x208xf32, ub, valid = [4, 200]>
// CHECK-NEXT:  tile.reduce_sum %{{.*}}, axis = 1 : !tile.tile<4x208xf32, ub, valid = [4, 200]>
func.func @long_row(%x: !tv.tensor<4x200xf16>) -> !tv.tensor<4xf16> {
  %s = tv.reduce_sum %x [1] : !tv.tensor<4x200xf16> -> !tv.tensor<4xf16>
  func.return %s : !tv.tensor<4xf16>
}

// -----

// One repeat: the vector reduction already sums in f32.
// CHECK-LABEL: func.func @short_row
// CHECK-NOT:   tile.cast
// CHECK:       tile.reduce_sum %{{.*}}, axis = 1 : !tile.tile<4x128xf16, ub>
func.func @short_row(%x: !tv.tensor<4x128xf16>) -> !tv.tensor<4xf16> {
  %s = tv.reduce_sum %x [1] : !tv.tensor<4x128xf16> -> !tv.tensor<4xf16>
  func.return %s : !tv.tensor<4xf16>
}
