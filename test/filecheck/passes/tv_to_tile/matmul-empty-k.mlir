// A matmul over an empty contraction dimension (K = 0) is a located error
// naming the cause: the tiling model found no tiling ("even one 16x16 fractal
// does not fit", which was not the reason). An empty M lowers (no work).
// RUN: not pypto-opt %s -p 'pypto-lower{target=tiny}' 2>&1 | filecheck %s

// CHECK-NOT: internal error
// CHECK: matmul-empty-k.mlir:[[# @LINE + 2]]:3: error: tv-to-tile cannot lower a matmul over an empty contraction dimension (K = 0: its result is zeros)
func.func @mm(%x: !tv.tensor<16x0xf16>, %y: !tv.tensor<0x16xf16>) -> !tv.tensor<16x16xf16> {
  %1 = tv.matmul %x, %y acc(f32) : !tv.tensor<16x0xf16>, !tv.tensor<0x16xf16> -> !tv.tensor<16x16xf16>
  func.return %1 : !tv.tensor<16x16xf16>
}
