// x * sigmoid(x) is one tile.silu, in either order (x / (1 + exp(-x)) on the
// vector unit: one step fewer than a sigmoid and a product). A sigmoid that
// another op reads too stays a sigmoid (silu would compute its exp twice).
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' 2>/dev/null | filecheck %s

// CHECK-LABEL: func.func @swapped
// CHECK:         %[[T:.*]] = tile.load
// CHECK-NEXT:    %[[Y:.*]] = tile.silu %[[T]] : !tile.tile<64x128xf16, ub>
// CHECK-NEXT:    tile.store %[[Y]]
func.func @swapped(%x: !tv.tensor<64x128xf16>) -> !tv.tensor<64x128xf16> {
  %s = tv.sigmoid %x : !tv.tensor<64x128xf16>
  %y = tv.mul %s, %x : !tv.tensor<64x128xf16>
  func.return %y : !tv.tensor<64x128xf16>
}

// -----

// CHECK-LABEL: func.func @shared
// CHECK:         %[[S:.*]] = tile.sigmoid
// CHECK-NEXT:    %[[M:.*]] = tile.mul %{{.*}}, %[[S]]
// CHECK-NEXT:    tile.add %[[M]], %[[S]]
// CHECK-NOT:     tile.silu
func.func @shared(%x: !tv.tensor<64x128xf16>) -> !tv.tensor<64x128xf16> {
  %s = tv.sigmoid %x : !tv.tensor<64x128xf16>
  %m = tv.mul %x, %s : !tv.tensor<64x128xf16>
  %y = tv.add %m, %s : !tv.tensor<64x128xf16>
  func.return %y : !tv.tensor<64x128xf16>
}
