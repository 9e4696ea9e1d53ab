// late-invariants: layernorm's gamma and beta rows do not vary along the loop
// over row blocks. When each core runs at most one iteration of it (128 rows
// in 6-row tiles: 22 tiles for 24 cores), loading them before the loop saves
// no load and delays the first x tile behind two GM round trips on MTE2;
// tv-to-tile loads them in the loop after x instead (their latency overlaps
// the statistics' vector work). With more iterations than cores (4096 rows)
// or late-invariants=false they are loaded once before the loop (4096x256:
// 64 tiles for 24 cores).
// RUN: pypto-opt %s --split-input-file -p 'tv-schedule{target=ascend910b},tv-to-tile' 2>&1 | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tv-schedule{target=ascend910b},tv-to-tile{late-invariants=false}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK: remark: tiled {{.*}} over 128x768: ub tiles 6x768, {{.*}}; loop-invariant tiles loaded in the loop after the varying ones (no core runs two iterations)
// CHECK-LABEL: func.func @layernorm
// CHECK:       scf.for
// CHECK:       tile.load %x
// CHECK:       tile.load %{{.*}} : memref<1x768xf16>
// OFF-NOT:     loop-invariant tiles loaded in the loop
// OFF-LABEL:   func.func @layernorm
// OFF:         tile.load %{{.*}} : memref<1x768xf16>
// OFF:         scf.for
// OFF:         tile.load %x
func.func @layernorm(%x: !tv.tensor<128x768xf16>, %gamma: !tv.tensor<768xf16>) -> !tv.tensor<128x768xf16> {
  %0 = tv.cast %x : !tv.tensor<128x768xf16> to !tv.tensor<128x768xf32>
  %1 = tv.reduce_sum %0 [1] keepdims : !tv.tensor<128x768xf32> -> !tv.tensor<128x1xf32>
  %4 = tv.sub %0, %1 : !tv.tensor<128x768xf32>, !tv.tensor<128x1xf32> -> !tv.tensor<128x768xf32>
  %12 = tv.cast %gamma : !tv.tensor<768xf16> to !tv.tensor<768xf32>
  %13 = tv.mul %4, %12 : !tv.tensor<128x768xf32>, !tv.tensor<768xf32> -> !tv.tensor<128x768xf32>
  %16 = tv.cast %13 : !tv.tensor<128x768xf32> to !tv.tensor<128x768xf16>
  func.return %16 : !tv.tensor<128x768xf16>
}

// -----

// CHECK-NOT:   loop-invariant tiles loaded in the loop
// CHECK-LABEL: func.func @many_rows
// CHECK:       tile.load %{{.*}} : memref<1x256xf16>
// CHECK:       scf.for
// CHECK:       tile.load %x
func.func @many_rows(%x: !tv.tensor<4096x256xf16>, %gamma: !tv.tensor<256xf16>) -> !tv.tensor<4096x256xf16> {
  %13 = tv.mul %x, %gamma : !tv.tensor<4096x256xf16>, !tv.tensor<256xf16> -> !tv.tensor<4096x256xf16>
  func.return %13 : !tv.tensor<4096x256xf16>
}
