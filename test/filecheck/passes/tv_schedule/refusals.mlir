// tv-schedule leaves apart groups that share an input but cannot be one nest,
// with a remark saying why: their iteration spaces differ, they reduce
// different dims, one is a matmul, or one reads the other's result through a
// group in between. A function with ops tv-to-tile cannot tile is left alone.
// RUN: pypto-opt %s --split-input-file -p 'tv-schedule{target=ascend910b}' --verify-diagnostics | filecheck %s

// CHECK-LABEL: func.func @spaces
// CHECK:       tv.exp %a {pypto.group = 0 : i64
// CHECK:       tv.exp %v {pypto.group = 1 : i64
func.func @spaces(%a: !tv.tensor<64x128xf16>) -> (!tv.tensor<64x128xf16>, !tv.tensor<32x128xf16>) {
  // expected-remark@below {{group 0 (map: tv.exp) over 64x128: phase 0 of 1}}
  %e = tv.exp %a : !tv.tensor<64x128xf16>
  %v = tv.view %a[0, 0][32, 128][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<32x128xf16>
  // expected-remark@below {{group 1 (map: tv.exp) over 32x128: phase 0 of 1}}
  %f = tv.exp %v : !tv.tensor<32x128xf16>
  func.return %e, %f : !tv.tensor<64x128xf16>, !tv.tensor<32x128xf16>
}

// -----

// CHECK-LABEL: func.func @reductions
// CHECK:       tv.reduce_sum %a [1] {pypto.group = 0 : i64
// CHECK-NEXT:  tv.reduce_sum %a [0] {pypto.group = 1 : i64
func.func @reductions(%a: !tv.tensor<64x128xf32>) -> (!tv.tensor<64xf32>, !tv.tensor<128xf32>) {
  // expected-remark@below {{group 0 (row: tv.reduce_sum) over 64x128}}
  // expected-remark@below {{tv.reduce_sum over 64x128 not split along dim 1: estimated}}
  %r = tv.reduce_sum %a [1] : !tv.tensor<64x128xf32> -> !tv.tensor<64xf32>
  // expected-remark@below {{not fused with tv.reduce_sum (sharing %a): they reduce different dims}}
  // expected-remark@below {{group 1 (row: tv.reduce_sum) over 64x128}}
  // expected-remark@below {{tv.reduce_sum over 64x128 not split along dim 0: estimated}}
  %c = tv.reduce_sum %a [0] : !tv.tensor<64x128xf32> -> !tv.tensor<128xf32>
  func.return %r, %c : !tv.tensor<64xf32>, !tv.tensor<128xf32>
}

// -----

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: !tv.tensor<64x64xf16>, %b: !tv.tensor<64x64xf16>) -> (!tv.tensor<64x64xf16>, !tv.tensor<64x64xf16>) {
  // expected-remark@below {{group 0 (matmul: tv.matmul) over 64x64: phase 0 of 1}}
  %m = tv.matmul %a, %b acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark@below {{not fused with tv.matmul (sharing %a, %b): a matmul nest takes no sibling}}
  // expected-remark@below {{group 1 (map: tv.add) over 64x64: phase 0 of 1}}
  %s = tv.add %a, %b : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  func.return %m, %s : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16>
}

// -----

// %d reads %a and the matmul's result %m, which reads %e (and goes to GM for
// the second matmul): %d depends on %e's group through the matmul, so the two
// stay apart (the matmul runs between them).
// CHECK-LABEL: func.func @through
// CHECK:       tv.exp %a {pypto.group = 0 : i64
// CHECK:       tv.add %a, %m {pypto.group = 2 : i64
func.func @through(%a: !tv.tensor<64x64xf16>, %b: !tv.tensor<64x64xf16>) -> (!tv.tensor<64x64xf16>, !tv.tensor<64x64xf16>) {
  // expected-remark@below {{group 0 (map: tv.exp) over 64x64: phase 0 of 3}}
  %e = tv.exp %a : !tv.tensor<64x64xf16>
  // expected-remark@below {{group 1 (matmul: tv.matmul) over 64x64: phase 1 of 3}}
  %m = tv.matmul %e, %b acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark@below {{not fused with tv.exp (sharing %a): one depends on the other}}
  // expected-remark@below {{group 2 (map: tv.add) over 64x64: phase 2 of 3}}
  %d = tv.add %a, %m : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark@below {{not fused with tv.matmul (sharing %b): a matmul nest takes no sibling}}
  // expected-remark@below {{not fused with tv.add (sharing %m): a matmul nest takes no sibling}}
  // expected-remark@below {{group 3 (matmul: tv.matmul) over 64x64: phase 2 of 3}}
  %n = tv.matmul %m, %b acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  func.return %d, %n : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16>
}
