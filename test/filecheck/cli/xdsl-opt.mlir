// Stock xdsl-opt sees pypto-mlir's dialects and passes through the xdsl.universe
// entry point.
// RUN: xdsl-opt %s -p pypto-cleanup | filecheck %s

func.func @f(%x: !tv.tensor<64x128xf16>) -> !tv.tensor<64x128xf16> {
  %s = tv.sigmoid %x : !tv.tensor<64x128xf16>
  %y = tv.mul %x, %s : !tv.tensor<64x128xf16>
  func.return %y : !tv.tensor<64x128xf16>
}

// CHECK: %s = tv.sigmoid %x : !tv.tensor<64x128xf16>
// CHECK-NEXT: %y = tv.mul %x, %s : !tv.tensor<64x128xf16>
