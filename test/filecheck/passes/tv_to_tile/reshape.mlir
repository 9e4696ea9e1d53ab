// tv-to-tile lowers tv.reshape without a copy: the operand's GM buffer seen
// with the new shape (collapse_shape to one dim, expand_shape to the result);
// a reshape of a strided GM view is refused (reshape-invalid.mlir).
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=tiny}' 2>/dev/null | filecheck %s

// A computed tensor: stored once to a GM temporary, read back reshaped.
// CHECK-LABEL: func.func @computed
// CHECK:         %[[TMP:.*]] = memref.alloc() : memref<6x40xf32>
// CHECK:         tile.store %{{.*}}, %[[TMP]]
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[TMP]] {{\[}}[0 : i64, 1 : i64]] : memref<6x40xf32> into memref<240xf32>
// CHECK-NEXT:    %[[R:.*]] = memref.expand_shape %[[FLAT]] {{\[}}[0 : i64, 1 : i64]] output_shape [12, 20] : memref<240xf32> into memref<12x20xf32>
// CHECK:         tile.load %[[R]]
// CHECK-NOT:     tv.
func.func @computed(%x: !tv.tensor<6x40xf32>) -> !tv.tensor<12x20xf32> {
  %e = tv.exp %x : !tv.tensor<6x40xf32>
  %r = tv.reshape %e : !tv.tensor<6x40xf32> to !tv.tensor<12x20xf32>
  %y = tv.add %r, %r : !tv.tensor<12x20xf32>
  func.return %y : !tv.tensor<12x20xf32>
}

// -----

// A contiguous view of an argument keeps its offset in the layout.
// CHECK-LABEL: func.func @rows
// CHECK:         %[[V:.*]] = memref.subview %x[2, 0] [4, 16] [1, 1] : memref<8x16xf16> to memref<4x16xf16, strided<[16, 1], offset: 32>>
// CHECK-NEXT:    %[[FLAT:.*]] = memref.collapse_shape %[[V]] {{.*}} into memref<64xf16, strided<[1], offset: 32>>
// CHECK-NEXT:    %{{.*}} = memref.expand_shape %[[FLAT]] {{.*}} output_shape [2, 32] : memref<64xf16, strided<[1], offset: 32>> into memref<2x32xf16, strided<[32, 1], offset: 32>>
func.func @rows(%x: !tv.tensor<8x16xf16>) -> !tv.tensor<2x32xf16> {
  %v = tv.view %x[2, 0] [4, 16] [1, 1] : !tv.tensor<8x16xf16> to !tv.tensor<4x16xf16>
  %r = tv.reshape %v : !tv.tensor<4x16xf16> to !tv.tensor<2x32xf16>
  %y = tv.relu %r : !tv.tensor<2x32xf16>
  func.return %y : !tv.tensor<2x32xf16>
}
