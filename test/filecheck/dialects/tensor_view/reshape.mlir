// tv.reshape prints in its custom form and survives a round trip through the
// generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: pypto-opt %s --print-op-generic | pypto-opt | filecheck %s

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: !tv.tensor<4x8xf16>, %y: !tv.tensor<64x128xf32>) {
  // CHECK: tv.reshape %{{.*}} : !tv.tensor<4x8xf16> to !tv.tensor<32xf16>
  %0 = tv.reshape %x : !tv.tensor<4x8xf16> to !tv.tensor<32xf16>
  // CHECK: tv.reshape %{{.*}} : !tv.tensor<4x8xf16> to !tv.tensor<2x2x8xf16>
  %1 = tv.reshape %x : !tv.tensor<4x8xf16> to !tv.tensor<2x2x8xf16>
  // a view of whole rows is contiguous
  %rows = tv.view %y[8, 0] [16, 128] [1, 1] : !tv.tensor<64x128xf32> to !tv.tensor<16x128xf32>
  // CHECK: tv.reshape %{{.*}} : !tv.tensor<16x128xf32> to !tv.tensor<2048xf32>
  %2 = tv.reshape %rows : !tv.tensor<16x128xf32> to !tv.tensor<2048xf32>
  func.return
}
