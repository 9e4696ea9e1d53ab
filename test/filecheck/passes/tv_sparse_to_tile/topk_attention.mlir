// Top-k attention (`softmax(q[:, None] @ k[idx].mT * s) @ v[idx]`, the
// frontend's ops) as one nest per query row (fuse-topk-attention, default on):
// q's row and the index row loaded into ub, the indices read by tile.extract.
// topk-gather-run=1 (the default): a loop over the k indices, each key row one
// load, its score (f32 multiply, row sum) written into a 1 x k tile by
// tile.insert; the scores rounded and scaled in f16, the softmax in f32; a loop
// over the value rows, each multiplied by its probability (a scalar) and added
// into a 1 x d f32 accumulator; one store of the output row; no GM temporary.
// topk-gather-run=4: groups of 4 checked for a run (idx[j + t] == idx[j] + t):
// a run is one 4-row load, else 4 one-row loads (loops of one trip or none,
// selected); each run of values weighted by a 4 x 1 column of probabilities
// and summed over its rows (reduce_sum axis 0). topk-gather-run=0 is refused.
// fuse-topk-attention=false, and k and d not fitting in ub (the tiny target,
// d = 256), keep the unfused lowering with a remark; a chain whose scores are
// also returned is not matched (unfused, no remark).
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b topk-gather-run=4}' 2>&1 | filecheck %s --check-prefix=RUNS
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-topk-gather-run=4}' 2>&1 | filecheck %s --check-prefix=RUNS-REMARK
// RUN: not pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b topk-gather-run=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b fuse-topk-attention=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-fuse-topk-attention=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny}' 2>&1 | filecheck %s --check-prefix=TINY

// CHECK: remark: tv-sparse-to-tile: fused top-k attention (S=16, k=8, d=32) as one nest per query row over the cores: the index row in ub, the k key rows and value rows gathered GM -> ub, each row its own DMA (topk-gather-run=1: tile-pipeline prefetches single rows, not the loads of a run, which sit in loops of 0/1 trips); the scores on the vector unit (f32 multiply and row sum; the cube would need the k gathered rows as one tile, which no tile op builds), the scale 0.0880127 and the softmax in ub; one store per output row, no GM temporary; estimated {{[0-9]+}} cycles of MTE2 a core (one L2-hit DMA per row)

// CHECK-LABEL: func.func @topk(%q: memref<16x32xf16>, %k: memref<64x32xf16>, %v: memref<64x32xf16>, %idx: memref<16x8xi32>, %out: memref<16x32xf16>)
// CHECK-NOT:   memref.alloc
// CHECK:       scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:         tile.load %q[%[[I]], %{{.*}}] : memref<16x32xf16> -> !tile.tile<1x32xf16, ub>
// CHECK:         %[[IDX:.*]] = tile.load %idx[%[[I]], %{{.*}}] : memref<16x8xi32> -> !tile.tile<1x16xi32, ub, valid = [1, 8]>
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK:           %[[ROW:.*]] = tile.extract %[[IDX]][%{{.*}}, %[[J]]]
// CHECK:           tile.load %k[%[[ROW]], %{{.*}}] : memref<64x32xf16> -> !tile.tile<1x32xf16, ub>
// CHECK:           tile.reduce_sum %{{.*}}, axis = 1 : !tile.tile<1x32xf32, ub> -> !tile.tile<1x1xf32, ub>
// CHECK:           tile.insert %{{.*}}, %[[ACC]][%{{.*}}, %[[J]]]
// CHECK:         tile.mul %{{.*}}, %{{.*}} : !tile.tile<1x16xf16, ub, valid = [1, 8]>, f16
// CHECK:         tile.reduce_max
// CHECK:         tile.exp
// CHECK:         tile.div
// CHECK:         scf.for
// CHECK:           tile.load %v[%{{.*}}, %{{.*}}] : memref<64x32xf16> -> !tile.tile<1x32xf16, ub>
// CHECK:           tile.mul %{{.*}}, %{{.*}} : !tile.tile<1x32xf32, ub>, f32
// CHECK:         tile.store %{{.*}}, %out[%[[I]], %{{.*}}] : !tile.tile<1x32xf16, ub> -> memref<16x32xf16>
// CHECK-NOT:     tile.store
// CHECK:       func.return

// CHECK-LABEL: func.func @scores_returned
// CHECK:         tile.store %{{.*}}, %{{.*}} : !tile.tile<4x32xf16, ub> -> memref<16x8x32xf16>

// RUNS: remark: tv-sparse-to-tile: fused top-k attention (S=16, k=8, d=32) as one nest per query row over the cores: the index row in ub, the k key rows and value rows gathered GM -> ub, 4 consecutive indices as one DMA (else row by row; not prefetched);
// RUNS-LABEL: func.func @topk(
// RUNS-NOT:   memref.alloc
// RUNS:       %[[IDX:.*]] = tile.load %idx
// RUNS:       scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// RUNS:         %[[R0:.*]] = tile.extract %[[IDX]][%{{.*}}, %[[J]]]
// RUNS-COUNT-3: tile.extract %[[IDX]]
// RUNS-COUNT-3: arith.cmpi eq
// RUNS:         %[[TRIPS:.*]] = arith.select
// RUNS:         scf.for %{{.*}} = %{{.*}} to %[[TRIPS]] step
// RUNS:           tile.load %k[%[[R0]], %{{.*}}] : memref<64x32xf16> -> !tile.tile<4x32xf16, ub>
// RUNS:           tile.reduce_sum %{{.*}}, axis = 1 : !tile.tile<4x32xf32, ub> -> !tile.tile<4x1xf32, ub>
// RUNS-COUNT-4:   tile.insert
// RUNS:         %[[REST:.*]] = arith.select
// RUNS:         scf.for %{{.*}} = %{{.*}} to %[[REST]] step
// RUNS:           tile.load %k[%{{.*}}, %{{.*}}] : memref<64x32xf16> -> !tile.tile<1x32xf16, ub>
// RUNS:       tile.reduce_max
// RUNS:       scf.for
// RUNS:           tile.load %v[%{{.*}}, %{{.*}}] : memref<64x32xf16> -> !tile.tile<4x32xf16, ub>
// RUNS:           tile.reduce_sum %{{.*}}, axis = 0 : !tile.tile<4x32xf32, ub> -> !tile.tile<1x32xf32, ub>
// RUNS:           tile.load %v[%{{.*}}, %{{.*}}] : memref<64x32xf16> -> !tile.tile<1x32xf16, ub>
// RUNS:       tile.store %{{.*}}, %out
// RUNS-NOT:   tile.store
// RUNS:       func.return

// RUNS-REMARK: remark: tv-sparse-to-tile: fused top-k attention (S=16, k=8, d=32) {{.*}} 4 consecutive indices as one DMA
// RUNS-REMARK: remark: tile-pipeline: not pipelined: it carries values and its bounds are only known at run time

// ZERO: error: tv-sparse-to-tile: topk-gather-run must be >= 1, got 0

// OFF: remark: tv-sparse-to-tile: top-k attention not fused: fuse-topk-attention=false; the gathers go to GM temporaries (unfused)
// OFF: remark: tv-sparse-to-tile: gather by rows

// TINY: remark: tv-sparse-to-tile: fused top-k attention (S=16, k=8, d=32)
// TINY: remark: tv-sparse-to-tile: top-k attention not fused: k = 8 scores and d = 256 columns need 5312 bytes of ub (the gathered rows double-buffered), target 'tiny' holds 4096; the gathers go to GM temporaries (unfused); no dense fallback: estimated mask nest {{[0-9]+}} (8 index rows a load, 17 scalar cycles an index, rows pipelined), flash nest not estimated: no flash-attention nest (no blocks fit, or not f16)

func.func @topk(%q: !tv.tensor<16x32xf16>, %k: !tv.tensor<64x32xf16>, %v: !tv.tensor<64x32xf16>, %idx: !tv.tensor<16x8xi32>) -> !tv.tensor<16x32xf16> {
  %0 = tv.reshape %q : !tv.tensor<16x32xf16> to !tv.tensor<16x1x32xf16>
  %1 = tv.gather %k[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %2 = tv.transpose %1 [0, 2, 1] : !tv.tensor<16x8x32xf16> -> !tv.tensor<16x32x8xf16>
  %3 = tv.matmul %0, %2 acc(f32) : !tv.tensor<16x1x32xf16>, !tv.tensor<16x32x8xf16> -> !tv.tensor<16x1x8xf16>
  %4 = arith.constant 8.801270e-02 : f16
  %5 = tv.mul %3, %4 : !tv.tensor<16x1x8xf16>, f16 -> !tv.tensor<16x1x8xf16>
  %6 = tv.softmax %5 axis = 2 : !tv.tensor<16x1x8xf16>
  %7 = tv.gather %v[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %8 = tv.matmul %6, %7 acc(f32) : !tv.tensor<16x1x8xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x32xf16>
  %9 = tv.view %8[0, 0, 0] [16, 1, 32] [1, 1, 1] : !tv.tensor<16x1x32xf16> to !tv.tensor<16x32xf16>
  func.return %9 : !tv.tensor<16x32xf16>
}

func.func @wide(%q: !tv.tensor<16x256xf16>, %k: !tv.tensor<64x256xf16>, %v: !tv.tensor<64x256xf16>, %idx: !tv.tensor<16x8xi32>) -> !tv.tensor<16x256xf16> {
  %0 = tv.reshape %q : !tv.tensor<16x256xf16> to !tv.tensor<16x1x256xf16>
  %1 = tv.gather %k[%idx] : !tv.tensor<64x256xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x256xf16>
  %3 = tv.matmul %0, %1 transpose_b acc(f32) : !tv.tensor<16x1x256xf16>, !tv.tensor<16x8x256xf16> -> !tv.tensor<16x1x8xf16>
  %6 = tv.softmax %3 axis = 2 : !tv.tensor<16x1x8xf16>
  %7 = tv.gather %v[%idx] : !tv.tensor<64x256xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x256xf16>
  %8 = tv.matmul %6, %7 acc(f32) : !tv.tensor<16x1x8xf16>, !tv.tensor<16x8x256xf16> -> !tv.tensor<16x1x256xf16>
  %9 = tv.view %8[0, 0, 0] [16, 1, 256] [1, 1, 1] : !tv.tensor<16x1x256xf16> to !tv.tensor<16x256xf16>
  func.return %9 : !tv.tensor<16x256xf16>
}

func.func @scores_returned(%q: !tv.tensor<16x32xf16>, %k: !tv.tensor<64x32xf16>, %v: !tv.tensor<64x32xf16>, %idx: !tv.tensor<16x8xi32>) -> (!tv.tensor<16x32xf16>, !tv.tensor<16x1x8xf16>) {
  %0 = tv.reshape %q : !tv.tensor<16x32xf16> to !tv.tensor<16x1x32xf16>
  %1 = tv.gather %k[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %3 = tv.matmul %0, %1 transpose_b acc(f32) : !tv.tensor<16x1x32xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x8xf16>
  %6 = tv.softmax %3 axis = 2 : !tv.tensor<16x1x8xf16>
  %7 = tv.gather %v[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<16x8xi32> -> !tv.tensor<16x8x32xf16>
  %8 = tv.matmul %6, %7 acc(f32) : !tv.tensor<16x1x8xf16>, !tv.tensor<16x8x32xf16> -> !tv.tensor<16x1x32xf16>
  %9 = tv.view %8[0, 0, 0] [16, 1, 32] [1, 1, 1] : !tv.tensor<16x1x32xf16> to !tv.tensor<16x32xf16>
  func.return %9, %3 : !tv.tensor<16x32xf16>, !tv.tensor<16x1x8xf16>
}
