// A rank-0 bf16 output (a sum over every dim) is written back from the
// simulator's GM like any other: bf16 arrays are float32 arrays of bf16 values,
// converted to bit patterns and back, also when they have no dims.
// RUN: pypto-run %s --check | filecheck %s
// RUN: pypto-run %s --check --target tiny | filecheck %s

// CHECK: result0  bf16[]
// CHECK-NEXT: vs tv reference: {{.*}}: ok
// CHECK: check: ok (1 of 1 outputs within tolerance of the tv reference)
func.func @f(%x: !tv.tensor<13x3xbf16>, %s: !tv.tensor<bf16>) -> !tv.tensor<bf16> {
  %t = tv.reduce_sum %x [0, 1] : !tv.tensor<13x3xbf16> -> !tv.tensor<bf16>
  %y = tv.add %t, %s : !tv.tensor<bf16>
  func.return %y : !tv.tensor<bf16>
}
