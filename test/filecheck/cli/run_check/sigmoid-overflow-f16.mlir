// tile-to-hw evaluates x * sigmoid(x) (as silu) in f16 as x / (1 + e^-x):
// e^-x overflows f16 for x < -11.09, so the result flushes to 0 where the
// tv reference has up to 1.7e-4. Cast to f32 (whose ulps alone would allow
// 2e-5), the output passes only because the error bound counts that flush
// (op_facts `exponent`): 209 elements failed before, at 1.6x the tolerance.
// RUN: pypto-run %s --check --random 1 | filecheck %s

// CHECK: result0  f32[77x133]
// CHECK-NEXT: vs tv reference: {{.*}}: ok
// CHECK: check: ok
func.func @f(%x: !tv.tensor<77x40xf16>, %w: !tv.tensor<40x133xf16>) -> !tv.tensor<77x133xf32> {
  %c = arith.constant 8.0 : f16
  %xs = tv.mul %x, %c : !tv.tensor<77x40xf16>, f16 -> !tv.tensor<77x40xf16>
  %s = tv.matmul %xs, %w acc(f32) : !tv.tensor<77x40xf16>, !tv.tensor<40x133xf16> -> !tv.tensor<77x133xf16>
  %g = tv.sigmoid %s : !tv.tensor<77x133xf16>
  %y = tv.mul %s, %g : !tv.tensor<77x133xf16>, !tv.tensor<77x133xf16> -> !tv.tensor<77x133xf16>
  %o = tv.cast %y : !tv.tensor<77x133xf16> to !tv.tensor<77x133xf32>
  func.return %o : !tv.tensor<77x133xf32>
}
