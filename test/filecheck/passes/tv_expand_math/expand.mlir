// tv-expand-math rewrites tv.sin, tv.cos and tv.erf into f32 tv ops (the steps
// of pypto_mlir/op_facts.py), casting f16/bf16 operands to f32 and back, and
// leaves every other op as it is.
// RUN: pypto-opt %s --split-input-file -p tv-expand-math | filecheck %s

// erf: clamp to [-4, 4], x P(x^2) / Q(x^2).
// CHECK-LABEL: func.func @erf
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:    %[[C0:.*]] = tv.min %x, %[[FOUR]] : !tv.tensor<4x8xf32>, f32 -> !tv.tensor<4x8xf32>
// CHECK-NEXT:    %[[MINUS_FOUR:.*]] = arith.constant -4.000000e+00 : f32
// CHECK-NEXT:    %[[C:.*]] = tv.max %[[C0]], %[[MINUS_FOUR]] : !tv.tensor<4x8xf32>, f32 -> !tv.tensor<4x8xf32>
// CHECK-NEXT:    %[[X2:.*]] = tv.mul %[[C]], %[[C]] : !tv.tensor<4x8xf32>
// CHECK:         %[[PX:.*]] = tv.mul %[[C]], %{{.*}} : !tv.tensor<4x8xf32>
// CHECK:         %y = tv.div %[[PX]], %{{.*}} : !tv.tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : !tv.tensor<4x8xf32>
// CHECK-NOT:     tv.erf
func.func @erf(%x: !tv.tensor<4x8xf32>) -> !tv.tensor<4x8xf32> {
  %y = tv.erf %x : !tv.tensor<4x8xf32>
  func.return %y : !tv.tensor<4x8xf32>
}

// -----

// sin of f16: computed in f32, rounded once to f16. k = round(x 2/pi) by the
// rounding of an f32 addition of 1.5 * 2^23; r = x - k pi/2 in three parts.
// CHECK-LABEL: func.func @sin
// CHECK-NEXT:    %[[X:.*]] = tv.cast %x : !tv.tensor<?x13xf16> to !tv.tensor<?x13xf32>
// CHECK-NEXT:    %[[TWO_OVER_PI:.*]] = arith.constant 0.636619747 : f32
// CHECK-NEXT:    %[[Y:.*]] = tv.mul %[[X]], %[[TWO_OVER_PI]]
// CHECK-NEXT:    %[[ROUND:.*]] = arith.constant 0x4B400000 : f32
// CHECK-NEXT:    %[[K0:.*]] = tv.add %[[Y]], %[[ROUND]]
// CHECK-NEXT:    %[[UNROUND:.*]] = arith.constant 0xCB400000 : f32
// CHECK-NEXT:    %[[K:.*]] = tv.add %[[K0]], %[[UNROUND]]
// CHECK-NEXT:    %[[PI_2_HIGH:.*]] = arith.constant 1.5703125 : f32
// CHECK-NEXT:    %[[T1:.*]] = tv.mul %[[K]], %[[PI_2_HIGH]]
// CHECK-NEXT:    %{{.*}} = tv.sub %[[X]], %[[T1]] : !tv.tensor<?x13xf32>
// CHECK-NOT:     tv.sin
// CHECK:         %s = tv.cast %{{.*}} : !tv.tensor<?x13xf32> to !tv.tensor<?x13xf16>
// CHECK-NEXT:    func.return %s : !tv.tensor<?x13xf16>
func.func @sin(%x: !tv.tensor<?x13xf16>) -> !tv.tensor<?x13xf16> {
  %s = tv.sin %x : !tv.tensor<?x13xf16>
  func.return %s : !tv.tensor<?x13xf16>
}

// -----

// cos is sin's steps with the quadrant of k + 1.
// CHECK-LABEL: func.func @cos
// CHECK:         %k = tv.add %x, %x : !tv.tensor<16xbf16>
// CHECK-NOT:     tv.cos
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %{{.*}} = tv.add %{{.*}}, %[[ONE]] : !tv.tensor<16xf32>, f32 -> !tv.tensor<16xf32>
// CHECK:         %c = tv.cast %{{.*}} : !tv.tensor<16xf32> to !tv.tensor<16xbf16>
func.func @cos(%x: !tv.tensor<16xbf16>) -> !tv.tensor<16xbf16> {
  %k = tv.add %x, %x : !tv.tensor<16xbf16>
  %c = tv.cos %k : !tv.tensor<16xbf16>
  func.return %c : !tv.tensor<16xbf16>
}

// -----

// Other ops are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    %e = tv.exp %x : !tv.tensor<8xf32>
// CHECK-NEXT:    %t = tv.tanh %e : !tv.tensor<8xf32>
// CHECK-NEXT:    func.return %t : !tv.tensor<8xf32>
func.func @untouched(%x: !tv.tensor<8xf32>) -> !tv.tensor<8xf32> {
  %e = tv.exp %x : !tv.tensor<8xf32>
  %t = tv.tanh %e : !tv.tensor<8xf32>
  func.return %t : !tv.tensor<8xf32>
}
