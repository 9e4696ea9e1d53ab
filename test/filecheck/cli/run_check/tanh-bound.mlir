// tile-to-hw evaluates tanh as 2 / (1 + e^-2x) - 1, rounding in the element
// type at every step, so near 0 it is accurate in absolute terms only: the
// error bound of --check counts the last step's rounding at |tanh x| + 1. An
// f16 tanh of small values, cast to f32 (whose ulps alone would allow 1e-7),
// passes within that bound.
// RUN: pypto-run %s --check --random 1 | filecheck %s

// CHECK: result0  f32[39x1]
// CHECK-NEXT: vs tv reference: {{.*}}: ok
// CHECK: check: ok
func.func @f(%x: !tv.tensor<39x13xf16>) -> !tv.tensor<39x1xf32> {
  %c = arith.constant 0.01 : f16
  %s = tv.mul %x, %c : !tv.tensor<39x13xf16>, f16 -> !tv.tensor<39x13xf16>
  %m = tv.reduce_max %s [1] keepdims : !tv.tensor<39x13xf16> -> !tv.tensor<39x1xf16>
  %t = tv.tanh %m : !tv.tensor<39x1xf16>
  %y = tv.cast %t : !tv.tensor<39x1xf16> to !tv.tensor<39x1xf32>
  func.return %y : !tv.tensor<39x1xf32>
}
