// tv-schedule: two outputs of the same inputs over one iteration space are one
// group (one pypto.group number), so tv-to-tile builds one nest that loads %a
// and %b once and stores both results; a remark per merge and per group.
// fuse-siblings=false keeps one group per output.
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b}' --verify-diagnostics | filecheck %s
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b},tv-to-tile' 2>/dev/null | filecheck %s --check-prefix=TILE
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b fuse-siblings=false}' 2>/dev/null | filecheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @sum_diff
// CHECK:       tv.add %a, %b {pypto.group = 0 : i64
// CHECK-NEXT:  tv.sub %a, %b {pypto.group = 0 : i64
// TILE-LABEL:  func.func @sum_diff
// TILE:        scf.for
// TILE-COUNT-2: tile.load
// TILE-NOT:    tile.load
// TILE:        tile.add
// TILE:        tile.store %{{.*}}, %out0
// TILE:        tile.sub
// TILE:        tile.store %{{.*}}, %out1
// TILE-NOT:    scf.for
// TILE:        func.return
// OFF-LABEL:   func.func @sum_diff
// OFF:         tv.add %a, %b {pypto.group = 0 : i64
// OFF-NEXT:    tv.sub %a, %b {pypto.group = 1 : i64
func.func @sum_diff(%a: !tv.tensor<512x512xf16>, %b: !tv.tensor<512x512xf16>) -> (!tv.tensor<512x512xf16>, !tv.tensor<512x512xf16>) {
  %s = tv.add %a, %b : !tv.tensor<512x512xf16>, !tv.tensor<512x512xf16> -> !tv.tensor<512x512xf16>
  // expected-remark@below {{fused tv.add with its sibling tv.sub: one nest reads %a, %b once}}
  // expected-remark@below {{group 0 (map: tv.add, tv.sub) over 512x512: phase 0 of 1, reads 1048576 bytes of GM, writes 1048576, 2 output(s); split over up to 24 cores}}
  %d = tv.sub %a, %b : !tv.tensor<512x512xf16>, !tv.tensor<512x512xf16> -> !tv.tensor<512x512xf16>
  func.return %s, %d : !tv.tensor<512x512xf16>, !tv.tensor<512x512xf16>
}

// Siblings of a producer/consumer group: the max/min pair and a row sum of
// their product fuse into one ROW group with a dynamic row count.
// CHECK-LABEL: func.func @max_min_sum
// CHECK:       tv.max %a, %b {pypto.group = 0 : i64
// CHECK-NEXT:  tv.min %a, %b {pypto.group = 0 : i64
// CHECK-NEXT:  tv.mul {{.*}} {pypto.group = 0 : i64
// CHECK-NEXT:  tv.reduce_sum {{.*}} {pypto.group = 0 : i64
func.func @max_min_sum(%a: !tv.tensor<?x64xf32>, %b: !tv.tensor<?x64xf32>) -> (!tv.tensor<?x64xf32>, !tv.tensor<?x1xf32>) {
  %hi = tv.max %a, %b : !tv.tensor<?x64xf32>, !tv.tensor<?x64xf32> -> !tv.tensor<?x64xf32>
  %lo = tv.min %a, %b : !tv.tensor<?x64xf32>, !tv.tensor<?x64xf32> -> !tv.tensor<?x64xf32>
  %p = tv.mul %hi, %lo : !tv.tensor<?x64xf32>, !tv.tensor<?x64xf32> -> !tv.tensor<?x64xf32>
  // expected-remark@below {{group 0 (row: tv.max, tv.min, tv.mul, tv.reduce_sum) over ?x64: phase 0 of 1, GM traffic dynamic, 2 output(s); split over up to 24 cores}}
  // expected-remark@below {{tv.reduce_sum over ?x64 not split: its input is computed, not a function argument (contiguous in GM)}}
  %r = tv.reduce_sum %p [1] keepdims : !tv.tensor<?x64xf32> -> !tv.tensor<?x1xf32>
  func.return %hi, %r : !tv.tensor<?x64xf32>, !tv.tensor<?x1xf32>
}
