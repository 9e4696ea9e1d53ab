// split-reductions leaves a reduction of an empty input alone (its estimate
// once divided by the zero extent: an internal error found by the fuzzer);
// tv-to-tile then refuses the reduction over an empty dimension.
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b}' --verify-diagnostics
// RUN: not pypto-opt %s -p 'pypto-lower{target=tiny}' 2>&1 | filecheck %s

// CHECK: remark: tv.reduce_sum over 0x8 not split: its input is empty
// CHECK: error: tv-to-tile cannot tile a reduction over an empty dimension
// CHECK-NOT: internal error
func.func @empty(%x: !tv.tensor<0x8xf32>) -> !tv.tensor<8xf32> {
  // expected-remark@below {{tv.reduce_sum over 0x8 not split: its input is empty}}
  // expected-remark@below {{group 0}}
  %r = tv.reduce_sum %x [0] : !tv.tensor<0x8xf32> -> !tv.tensor<8xf32>
  func.return %r : !tv.tensor<8xf32>
}
