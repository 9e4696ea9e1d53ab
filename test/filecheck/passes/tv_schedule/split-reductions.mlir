// split-reductions: a reduction of an argument whose kept dims give the cores
// too little work is split along its first reduced dim into ranges (a
// tv.reshape view, no copy), each reduced to an f32 partial (a GM workspace),
// then combined by a second nest after the sync_all the GM dependence puts
// between them, where the tiling model estimates it faster. Refused: a
// reduction the estimate finds faster in one nest (a row sum with a row per
// core and more), a reduced extent with no whole ranges (97 is prime), a
// computed input (not contiguous in GM), integers, dynamic dims.
// RUN: pypto-opt %s --split-input-file -p 'tv-schedule{target=ascend910b}' --verify-diagnostics | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tv-schedule{target=ascend910b split-reductions=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'tv-schedule{target=ascend910b},tv-to-tile' 2>&1 >/dev/null | filecheck %s --check-prefix=TILE

// OFF-NOT: split tv.
// OFF-NOT: tv.reshape

// CHECK-LABEL: func.func @column_sum
// CHECK:       %[[V:.*]] = tv.reshape %x {{.*}} to !tv.tensor<64x16x768xf16>
// CHECK-NEXT:  %[[W:.*]] = tv.cast %[[V]] {{.*}} to !tv.tensor<64x16x768xf32>
// CHECK-NEXT:  %[[P:.*]] = tv.reduce_sum %[[W]] [1] {{.*}} -> !tv.tensor<64x768xf32>
// CHECK-NEXT:  %[[Q:.*]] = tv.reduce_sum %[[P]] [0] {{.*}} -> !tv.tensor<768xf32>
// CHECK-NEXT:  %[[S:.*]] = tv.cast %[[Q]] {{.*}} to !tv.tensor<768xf16>
// CHECK-NEXT:  func.return %[[S]]
// TILE: remark: tiled tv.cast, tv.reduce_sum as one loop nest over 64x16x768: ub tiles 16x768, reduced dims [1] kept whole in ub
// TILE: remark: tiled tv.reduce_sum, tv.cast as one loop nest over 64x768:
func.func @column_sum(%x: !tv.tensor<1024x768xf16>) -> !tv.tensor<768xf16> {
  // expected-remark@below {{split tv.reduce_sum over 1024x768 along dim 0 into 64 ranges of 16: partial results (f32) to a GM workspace, combined by a second nest after a sync_all (estimated 12527 cycles, 20230 in one nest)}}
  // expected-remark@below {{group 0 (row: tv.cast, tv.reduce_sum) over 64x16x768: phase 0 of 2}}
  // expected-remark@below {{group 1 (row: tv.reduce_sum, tv.cast) over 64x768: phase 1 of 2}}
  %s = tv.reduce_sum %x [0] : !tv.tensor<1024x768xf16> -> !tv.tensor<768xf16>
  func.return %s : !tv.tensor<768xf16>
}

// -----

// A full sum keeps the other reduced dim in the partials (a scalar partial
// per range would go to the cores in shares of 8: a 32-byte GM block).
// CHECK-LABEL: func.func @full_sum
// CHECK:       tv.reshape %x {{.*}} to !tv.tensor<64x32x512xf16>
// CHECK:       tv.reduce_sum {{.*}} [1] {{.*}} -> !tv.tensor<64x512xf32>
// CHECK-NEXT:  tv.reduce_sum {{.*}} [0, 1] keepdims {{.*}} -> !tv.tensor<1x1xf32>
func.func @full_sum(%x: !tv.tensor<2048x512xf16>) -> !tv.tensor<1x1xf16> {
  // expected-remark@below {{split tv.reduce_sum over 2048x512 along dim 0 into 64 ranges of 32, other reduced dims kept in the partials: partial results (f32) to a GM workspace}}
  // expected-remark@below {{group 0}}
  // expected-remark@below {{group 1}}
  %s = tv.reduce_sum %x [0, 1] keepdims : !tv.tensor<2048x512xf16> -> !tv.tensor<1x1xf16>
  func.return %s : !tv.tensor<1x1xf16>
}

// -----

// Max needs no wider workspace (exact in the element type).
// CHECK-LABEL: func.func @column_max
// CHECK:       tv.reshape
// CHECK-NOT:   tv.cast
// CHECK:       tv.reduce_max {{.*}} -> !tv.tensor<{{[0-9]+}}x40xf16>
func.func @column_max(%x: !tv.tensor<999x40xf16>) -> !tv.tensor<40xf16> {
  // expected-remark@below {{split tv.reduce_max over 999x40 along dim 0 into}}
  // expected-remark@below {{group 0}}
  // expected-remark@below {{group 1}}
  %s = tv.reduce_max %x [0] : !tv.tensor<999x40xf16> -> !tv.tensor<40xf16>
  func.return %s : !tv.tensor<40xf16>
}

// -----

// CHECK-LABEL: func.func @refused
// CHECK-NOT:   tv.reshape
func.func @refused(%x: !tv.tensor<1024x768xf16>, %p: !tv.tensor<97x768xf16>, %i: !tv.tensor<1024x768xi32>, %d: !tv.tensor<?x768xf16>) -> (!tv.tensor<1024xf16>, !tv.tensor<768xf16>, !tv.tensor<768xf16>, !tv.tensor<768xi32>, !tv.tensor<768xf16>) {
  // expected-remark@below {{tv.reduce_sum over 1024x768 not split along dim 1: estimated}}
  // expected-remark@below {{group 0}}
  %rows = tv.reduce_sum %x [1] : !tv.tensor<1024x768xf16> -> !tv.tensor<1024xf16>
  // expected-remark@below {{tv.reduce_sum over 97x768 not split along dim 0: estimated}}
  // expected-remark@below {{group 1}}
  %prime = tv.reduce_sum %p [0] : !tv.tensor<97x768xf16> -> !tv.tensor<768xf16>
  %e = tv.exp %x : !tv.tensor<1024x768xf16>
  // expected-remark@below {{tv.reduce_sum over 1024x768 not split: its input is computed, not a function argument (contiguous in GM)}}
  // expected-remark@below {{group 2}}
  // expected-remark@below {{not fused with tv.reduce_sum (sharing %x): they reduce different dims}}
  %computed = tv.reduce_sum %e [0] : !tv.tensor<1024x768xf16> -> !tv.tensor<768xf16>
  // expected-remark@below {{tv.reduce_sum over 1024x768 not split: its elements are not floats}}
  // expected-remark@below {{group 3}}
  %ints = tv.reduce_sum %i [0] : !tv.tensor<1024x768xi32> -> !tv.tensor<768xi32>
  // expected-remark@below {{tv.reduce_sum over ?x768 not split: its input has a dynamic dim}}
  // expected-remark@below {{group 4}}
  %dynamic = tv.reduce_sum %d [0] : !tv.tensor<?x768xf16> -> !tv.tensor<768xf16>
  func.return %rows, %prime, %computed, %ints, %dynamic : !tv.tensor<1024xf16>, !tv.tensor<768xf16>, !tv.tensor<768xf16>, !tv.tensor<768xi32>, !tv.tensor<768xf16>
}
