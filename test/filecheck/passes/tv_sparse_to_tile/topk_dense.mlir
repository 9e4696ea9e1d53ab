// The dense fallback of top-k attention (topk-dense-fallback, default auto:
// the cost model chooses). At S=256 k=64 N=256 the estimate of the mask nest
// and the flash nest is below the fused gather nest's (one L2-hit DMA per
// gathered row): an S x N f16 mask temporary, built per block of 4 query rows
// (their index rows one load; the rows unrolled, so that tile-to-hw splits the
// blocks over the cores): an i32 row filled with 0, each index read by
// tile.extract and marked 1 (tile.insert); the row's sum, read back on the
// scalar unit, below k means a key named twice: then (a loop of 0/1 trips) a
// second pass counts (extract, addi, insert); the counts cast to f32, ln
// (0 -> -inf, 1 -> 0), cast to f16, stored (topk-mask-pipeline, default on:
// row r + 1 marked before row r's sum is read back, each row's zeros a fill
// of its own (pypto.mask_row, not CSE'd) two rows ahead); then
// softmax(q @ k.T * s + mask) @ v outlined for tv-to-tile, which fuses it into
// its flash-attention nest; the temporary released. At S=16 k=8 N=64 the
// gathers are estimated cheaper: the fused nest, with a remark giving both
// estimates. topk-dense-fallback=never keeps the gathers, =always takes the
// fallback where it applies (tiny: no flash blocks fit, so the estimate says
// so and tv-to-tile lowers the attention unfused); N = 56 keys (not a multiple
// of the 16-column unit) is refused, and so is an unknown mode.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b}' 2>&1 | filecheck %s --check-prefix=LOWER
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b topk-dense-fallback=never}' 2>&1 | filecheck %s --check-prefix=NEVER
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-topk-dense-fallback=never}' 2>&1 | filecheck %s --check-prefix=NEVER
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b topk-dense-fallback=always}' 2>&1 | filecheck %s --check-prefix=ALWAYS
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny topk-dense-fallback=always}' 2>&1 | filecheck %s --check-prefix=TINY
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b topk-mask-pipeline=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-topk-mask-pipeline=false}' 2>&1 | filecheck %s --check-prefix=OFF-LOWER
// RUN: not pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b topk-dense-fallback=yes}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: remark: tv-sparse-to-tile: top-k attention (S=256, k=64, d=32) by its dense fallback: an 256x256 additive mask (ln of each key's count in the query's index row: 0 named once, -inf not named) built on the scalar unit into a GM temporary, then softmax(q @ k.T * s + mask) @ v outlined for tv-to-tile (its flash-attention nest where the blocks fit); estimated {{[0-9]+}} cycles: mask nest {{[0-9]+}} (4 index rows a load, 17 scalar cycles an index, rows pipelined), flash nest {{[0-9]+}}; the gather nest 85888 (one L2-hit DMA per gathered row)
// CHECK: remark: tv-sparse-to-tile: fused top-k attention (S=16, k=8, d=32)
// CHECK: remark: tv-sparse-to-tile: top-k attention (S=16, k=8, d=32): no dense fallback: estimated {{[0-9]+}} cycles: mask nest {{[0-9]+}} (1 index rows a load, 17 scalar cycles an index, rows pipelined), flash nest {{[0-9]+}}; the gather nest 976 (one L2-hit DMA per gathered row)
// CHECK: remark: tv-sparse-to-tile: top-k attention (S=16, k=8, d=32): no dense fallback: N = 56 keys is not a multiple of 16: an index past N would land in the count row's padding, unchecked

// CHECK-LABEL: func.func @dense(%q: memref<256x32xf16>, %k: memref<256x32xf16>, %v: memref<256x32xf16>, %idx: memref<256x64xi32>, %out: memref<256x32xf16>)
// CHECK:         %[[MASK:.*]] = memref.alloc() : memref<256x256xf16>
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[IDS:.*]] = tile.load %idx[%[[B]], %{{.*}}] : memref<256x64xi32> -> !tile.tile<4x64xi32, ub>
// CHECK:           %[[Z0:.*]] = tile.fill %{{.*}} {pypto.mask_row = 0 : i64} : i32 -> !tile.tile<1x256xi32, ub>
// CHECK:           %[[Z1:.*]] = tile.fill %{{.*}} {pypto.mask_row = 1 : i64} : i32 -> !tile.tile<1x256xi32, ub>
// CHECK:           %[[MARKS:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.*]] = %[[Z0]])
// CHECK:             %[[KEY:.*]] = tile.extract %[[IDS]][%{{.*}}, %[[J]]] : !tile.tile<4x64xi32, ub> -> index
// CHECK:             tile.insert %{{.*}}, %[[M]][%{{.*}}, %[[KEY]]] : index, !tile.tile<1x256xi32, ub>
// CHECK:           tile.reduce_sum %{{.*}}, axis = 1 : !tile.tile<1x256xf32, ub> -> !tile.tile<1x1xf32, ub>
// CHECK:           %[[SUM0:.*]] = tile.cast %{{.*}} : !tile.tile<1x1xf32, ub> -> !tile.tile<1x1xi32, ub>
// Row 1 is marked before row 0's sum is read back, and row 2's zeros are
// filled before both: three count rows in flight.
// CHECK:           %[[Z2:.*]] = tile.fill %{{.*}} {pypto.mask_row = 2 : i64}
// CHECK:           %[[MARKS1:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[Z1]])
// CHECK:           tile.reduce_sum
// CHECK:           %[[NAMED:.*]] = tile.extract %[[SUM0]][%{{.*}}, %{{.*}}] : !tile.tile<1x1xi32, ub> -> index
// CHECK:           %[[REPEATS:.*]] = arith.cmpi ult, %[[NAMED]], %{{.*}} : index
// CHECK:           %[[TRIPS:.*]] = arith.select %[[REPEATS]]
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[TRIPS]] step %{{.*}} iter_args(%{{.*}} = %[[MARKS]])
// CHECK:             scf.for %[[J2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %{{.*}})
// CHECK:               %[[KEY2:.*]] = tile.extract %[[IDS]][%{{.*}}, %[[J2]]] : !tile.tile<4x64xi32, ub> -> index
// CHECK:               %[[OLD:.*]] = tile.extract %[[C]][%{{.*}}, %[[KEY2]]] : !tile.tile<1x256xi32, ub> -> index
// CHECK:               %[[NEW:.*]] = arith.addi %[[OLD]], %{{.*}} : index
// CHECK:               tile.insert %[[NEW]], %[[C]][%{{.*}}, %[[KEY2]]] : index, !tile.tile<1x256xi32, ub>
// CHECK:           tile.cast %{{.*}} : !tile.tile<1x256xi32, ub> -> !tile.tile<1x256xf32, ub>
// CHECK:           tile.log %{{.*}} : !tile.tile<1x256xf32, ub>
// CHECK:           %[[ROW:.*]] = tile.cast %{{.*}} : !tile.tile<1x256xf32, ub> -> !tile.tile<1x256xf16, ub>
// CHECK:           tile.store %[[ROW]], %[[MASK]][%[[B]], %{{.*}}] : !tile.tile<1x256xf16, ub> -> memref<256x256xf16>
// CHECK:           tile.fill %{{.*}} {pypto.mask_row = 3 : i64}
// CHECK:           scf.for %{{.*}} iter_args(%{{.*}} = %[[Z2]])
// CHECK:           scf.for %{{.*}} iter_args(%{{.*}} = %[[MARKS1]])
// CHECK-COUNT-3:   tile.store %{{.*}}, %[[MASK]]
// CHECK-NOT:       tile.fill %{{.*}} {pypto.mask_row
// CHECK:         }
// CHECK:         func.call @dense__dense0(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {pypto.outlined}
// CHECK:         memref.dealloc %[[MASK]] : memref<256x256xf16>
// CHECK:       func.func @dense__dense0(%0: !tv.tensor<256x32xf16>, %1: !tv.tensor<256x32xf16>, %2: !tv.tensor<256x256xf16>, %3: !tv.tensor<256x32xf16>) -> !tv.tensor<256x32xf16> attributes {pypto.outlined}
// CHECK:         tv.matmul %0, %1 transpose_b acc(f32) : !tv.tensor<256x32xf16>, !tv.tensor<256x32xf16> -> !tv.tensor<256x256xf16>
// CHECK:         tv.mul
// CHECK:         tv.add %{{.*}}, %2 : !tv.tensor<256x256xf16>
// CHECK:         tv.softmax %{{.*}} axis = 1 : !tv.tensor<256x256xf16>
// CHECK:         tv.matmul %{{.*}}, %3 acc(f32)
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     memref.alloc
// CHECK:         tile.load %k

// LOWER: remark: tv-sparse-to-tile: top-k attention (S=256, k=64, d=32) by its dense fallback
// LOWER: remark: fused attention (tv.matmul, tv.mul, tv.add, tv.softmax, tv.matmul) as one nest over 256x256

// NEVER: remark: tv-sparse-to-tile: fused top-k attention (S=256, k=64, d=32)
// NEVER: remark: tv-sparse-to-tile: top-k attention (S=256, k=64, d=32): no dense fallback: topk-dense-fallback=never

// ALWAYS: remark: tv-sparse-to-tile: top-k attention (S=256, k=64, d=32) by its dense fallback
// ALWAYS: remark: tv-sparse-to-tile: top-k attention (S=16, k=8, d=32) by its dense fallback: {{.*}} (topk-dense-fallback=always); estimated {{.*}}; the gather nest 976
// ALWAYS: remark: tv-sparse-to-tile: top-k attention (S=16, k=8, d=32): no dense fallback: N = 56 keys

// TINY: remark: tv-sparse-to-tile: top-k attention (S=16, k=8, d=32) by its dense fallback: {{.*}} (topk-dense-fallback=always); estimated mask nest {{[0-9]+}} (8 index rows a load, 17 scalar cycles an index, rows pipelined), flash nest not estimated: no flash-attention nest (no blocks fit, or not f16); the gather nest 167168

// topk-mask-pipeline=false: each row's zeros filled (one fill, CSE'd later)
// right before its marks, after the previous row's store; the estimate is
// one chain a row.
// OFF: remark: tv-sparse-to-tile: top-k attention (S=256, k=64, d=32) by its dense fallback: {{.*}}; estimated {{[0-9]+}} cycles: mask nest {{[0-9]+}} (4 index rows a load, 17 scalar cycles an index), flash nest
// OFF-LABEL: func.func @dense(
// OFF-NOT:     pypto.mask_row
// OFF:         %[[IDS:.*]] = tile.load %idx
// OFF:         %[[Z0:.*]] = tile.fill %{{.*}} : i32 -> !tile.tile<1x256xi32, ub>
// OFF:         scf.for %{{.*}} iter_args(%{{.*}} = %[[Z0]])
// OFF:         tile.reduce_sum
// OFF:         tile.extract %{{.*}} : !tile.tile<1x1xi32, ub> -> index
// OFF:         tile.store
// OFF-NEXT:    %[[Z1:.*]] = tile.fill %{{.*}} : i32 -> !tile.tile<1x256xi32, ub>
// OFF-NEXT:    scf.for %{{.*}} iter_args(%{{.*}} = %[[Z1]])
// OFF-LABEL: func.func @dense__dense0(

// OFF-LOWER: remark: tv-sparse-to-tile: top-k attention (S=256, k=64, d=32) by its dense fallback: {{.*}} (4 index rows a load, 17 scalar cycles an index), flash nest
// OFF-LOWER-NOT: rows pipelined

// BAD: error: tv-sparse-to-tile: topk-dense-fallback must be one of auto, always, never, got 'yes'

func.func @dense(%q: !tv.tensor<256x32xf16>, %k: !tv.tensor<256x32xf16>, %v: !tv.tensor<256x32xf16>, %idx: !tv.tensor<256x64xi32>) -> !tv.tensor<256x32xf16> {
  %0 = tv.reshape %q : !tv.tensor<256x32xf16> to !tv.tensor<256x1x32xf16>
  %1 = tv.gather %k[%idx] : !tv.tensor<256x32xf16>, !tv.tensor<256x64xi32> -> !tv.tensor<256x64x32xf16>
  %3 = tv.matmul %0, %1 transpose_b acc(f32) : !tv.tensor<256x1x32xf16>, !tv.tensor<256x64x32xf16> -> !tv.tensor<256x1x64xf16>
  %4 = arith.constant 8.801270e-02 : f16
  %5 = tv.mul %3, %4 : !tv.tensor<256x1x64xf16>, f16 -> !tv.tensor<256x1x64xf16>
  %6 = tv.softmax %5 axis = 2 : !tv.tensor<256x1x64xf16>
  %7 = tv.gather %v[%idx] : !tv.tensor<256x32xf16>, !tv.tensor<256x64xi32> -> !tv.tensor<256x64x32xf16>
  %8 = tv.matmul %6, %7 acc(f32) : !tv.tensor<256x1x64xf16>, !tv.tensor<256x64x32xf16> -> !tv.tensor<256x1x32xf16>
  %9 = tv.view %8[0, 0, 0] [256, 1, 32] [1, 1, 1] : !tv.tensor<256x1x32xf16> to !tv.tensor<256x32xf16>
  func.return %9 : !tv.tensor<256x32xf16>
}

func.func @small(%q: !tv.tensor<16x32xf16>, %k: !tv.tensor<64x32xf16>, %v: !tv.tensor<64x32xf16>, %idx: !tv.tensor<16x8xi32>) -> !tv.tensor<16x32xf16> {
  %0 = tv.reshape %q : !tv.tensor<16x32xf16> to !tv.tensor<16x1x32xf16>
  %1 = tv.gather %k[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %3 = tv.matmul %0, %1 transpose_b acc(f32) : !tv.tensor<16x1x32xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x8xf16>
  %6 = tv.softmax %3 axis = 2 : !tv.tensor<16x1x8xf16>
  %7 = tv.gather %v[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %8 = tv.matmul %6, %7 acc(f32) : !tv.tensor<16x1x8xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x32xf16>
  %9 = tv.view %8[0, 0, 0] [16, 1, 32] [1, 1, 1] : !tv.tensor<16x1x32xf16> to !tv.tensor<16x32xf16>
  func.return %9 : !tv.tensor<16x32xf16>
}

func.func @odd_keys(%q: !tv.tensor<16x32xf16>, %k: !tv.tensor<56x32xf16>, %v: !tv.tensor<56x32xf16>, %idx: !tv.tensor<16x8xi32>) -> !tv.tensor<16x32xf16> {
  %0 = tv.reshape %q : !tv.tensor<16x32xf16> to !tv.tensor<16x1x32xf16>
  %1 = tv.gather %k[%idx] : !tv.tensor<56x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %3 = tv.matmul %0, %1 transpose_b acc(f32) : !tv.tensor<16x1x32xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x8xf16>
  %6 = tv.softmax %3 axis = 2 : !tv.tensor<16x1x8xf16>
  %7 = tv.gather %v[%idx] : !tv.tensor<56x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %8 = tv.matmul %6, %7 acc(f32) : !tv.tensor<16x1x8xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x32xf16>
  %9 = tv.view %8[0, 0, 0] [16, 1, 32] [1, 1, 1] : !tv.tensor<16x1x32xf16> to !tv.tensor<16x32xf16>
  func.return %9 : !tv.tensor<16x32xf16>
}
