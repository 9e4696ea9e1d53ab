// The tile model counts, besides the tiles, the UB scratch tile-to-hw's
// instructions need (here the f16 copies of an i8 transpose and its gather's
// offset table). On tiny even the smallest aligned square (two 32x32 i8 tiles
// and their copies) does not fit, so the nest takes one row at a time: a column
// of the source, gathered from GM, is a row of the result.
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' --verify-diagnostics | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' 2>&1 | filecheck %s --check-prefix=A2

// CHECK:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:   %[[COLUMN:.*]] = tile.load %x[%{{.*}}, %[[J]]] : memref<17x16xi8> -> !tile.tile<32x1xi8, ub, valid = [17, 1]>
// CHECK-NEXT:   %[[ROW:.*]] = tile.transpose %[[COLUMN]] : !tile.tile<32x1xi8, ub, valid = [17, 1]> -> !tile.tile<1x32xi8, ub, valid = [1, 17]>
// CHECK-NEXT:   tile.store %[[ROW]], %out[%[[J]], %{{.*}}]
// A2:         remark: tiled tv.transpose as one loop nest over 16x17: ub tiles 32x32 (step 16x17)
func.func @transpose(%x: !tv.tensor<17x16xi8>) -> !tv.tensor<16x17xi8> {
  // expected-remark @+1 {{tiled tv.transpose as one loop nest over 16x17: ub tiles 1x32 (step 1x17)}}
  %t = tv.transpose %x [1, 0] : !tv.tensor<17x16xi8> -> !tv.tensor<16x17xi8>
  func.return %t : !tv.tensor<16x17xi8>
}

// The transposed load tile (32x32 f16, its dims swapped against the result's)
// counts in full: with the result and the i8 cast the square does not fit tiny.
func.func @transpose_cast(%x: !tv.tensor<25x16xf16>) -> !tv.tensor<16x25xi8> {
  %t = tv.transpose %x [1, 0] : !tv.tensor<25x16xf16> -> !tv.tensor<16x25xf16>
  // expected-remark @+1 {{tiled tv.transpose, tv.cast as one loop nest over 16x25: ub tiles 1x32 (step 1x25)}}
  %c = tv.cast %t : !tv.tensor<16x25xf16> to !tv.tensor<16x25xi8>
  func.return %c : !tv.tensor<16x25xi8>
}
