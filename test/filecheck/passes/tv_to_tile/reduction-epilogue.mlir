// An elementwise op on a reduction's result alone (read by nothing else) runs
// in the reduction's nest, on the reduced tile, instead of in a nest of its
// own after it (tv_fusion's reduction epilogue): one nest, one store. A
// reduction result also read elsewhere keeps its own nest.
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' 2>&1 | filecheck %s

// CHECK: remark: tiled tv.reduce_sum, tv.cast as one loop nest over 64x768:
// CHECK-LABEL: func.func @sum_then_cast
// CHECK:       tile.reduce_sum
// CHECK:       tile.cast
// CHECK:       tile.store
// CHECK-NOT:   tile.store
// CHECK:       func.return
func.func @sum_then_cast(%x: !tv.tensor<64x768xf32>) -> !tv.tensor<768xf16> {
  %s = tv.reduce_sum %x [0] : !tv.tensor<64x768xf32> -> !tv.tensor<768xf32>
  %c = tv.cast %s : !tv.tensor<768xf32> to !tv.tensor<768xf16>
  func.return %c : !tv.tensor<768xf16>
}

// -----

// CHECK: remark: tiled tv.reduce_sum as one loop nest over 64x768:
// CHECK: remark: tiled tv.cast as one loop nest over 768:
// CHECK-LABEL: func.func @sum_returned_too
func.func @sum_returned_too(%x: !tv.tensor<64x768xf32>) -> (!tv.tensor<768xf32>, !tv.tensor<768xf16>) {
  %s = tv.reduce_sum %x [0] : !tv.tensor<64x768xf32> -> !tv.tensor<768xf32>
  %c = tv.cast %s : !tv.tensor<768xf32> to !tv.tensor<768xf16>
  func.return %s, %c : !tv.tensor<768xf32>, !tv.tensor<768xf16>
}
