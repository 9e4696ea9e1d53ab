// topk-mask-overlap (tv-sparse-to-tile; pypto-lower sparse-topk-mask-overlap,
// default off): the dense fallback's mask nest is marked, and tv-to-tile,
// once the outlined attention is inlined, moves its blocks into the flash
// nest's query-block loop (passes/topk_overlap.py): each query block of 16
// rows first loads its 16 index rows, marks and stores its 16 mask rows
// (their fills numbered 0..15 so that CSE keeps them apart), then loads q and
// its mask blocks. tile-to-hw splits that loop over the cores (it reads back
// only the rows it stores) with no sync_all; switched off, the mask nest is a
// loop of its own and a sync_all separates it from the flash nest.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b topk-dense-fallback=always topk-mask-overlap=true},tv-to-tile' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b topk-dense-fallback=always},tv-to-tile' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-topk-dense-fallback=always sparse-topk-mask-overlap=true}' 2>&1 | filecheck %s --check-prefix=LOWER
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-topk-dense-fallback=always}' 2>&1 | filecheck %s --check-prefix=OFF-LOWER

// CHECK: remark: tv-sparse-to-tile: top-k attention (S=32, k=4, d=32) by its dense fallback: {{.*}} mask nest {{[0-9]+}} (16 index rows a load, 17 scalar cycles an index, rows pipelined, in the flash nest query blocks), flash nest {{[0-9]+}}
// CHECK-LABEL: func.func @overlap(
// CHECK:         %[[MASK:.*]] = memref.alloc() : memref<32x64xf16>
// CHECK:         scf.for %[[QB:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// CHECK-NEXT:      tile.load %idx[%[[QB]], %{{.*}}] : memref<32x4xi32> -> !tile.tile<16x16xi32, ub, valid = [16, 4]>
// CHECK:           tile.fill %{{.*}} {pypto.mask_row = 0 : i64}
// CHECK:           tile.store %{{.*}}, %[[MASK]][%[[QB]], %{{.*}}] : !tile.tile<1x64xf16, ub> -> memref<32x64xf16>
// CHECK:           tile.fill %{{.*}} {pypto.mask_row = 15 : i64}
// CHECK:           tile.load %q[%[[QB]], %{{.*}}] : memref<32x32xf16> -> !tile.tile<16x32xf16, l1, layout = nz>
// CHECK:           tile.load %[[MASK]][%[[QB]], %{{.*}}] : memref<32x64xf16> -> !tile.tile<16x64xf16, ub>
// CHECK:           tile.store %{{.*}}, %out[%[[QB]], %{{.*}}]
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[MASK]]

// OFF-NOT: in the flash nest query blocks
// OFF-LABEL: func.func @overlap(
// OFF:         %[[MASK:.*]] = memref.alloc() : memref<32x64xf16>
// OFF:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// OFF-NEXT:      tile.load %idx[%[[B]], %{{.*}}]
// OFF-NOT:       tile.load %q
// OFF:           tile.store %{{.*}}, %[[MASK]]
// OFF:         scf.for %[[QB:.*]] = %{{.*}} to %{{.*}} step %{{[0-9]+}} {
// OFF-NEXT:      tile.load %q[%[[QB]], %{{.*}}]

// LOWER-LABEL: func.func @overlap(
// LOWER:         ascend_hw.block_idx
// LOWER-NOT:     ascend_hw.sync_all
// LOWER:         ascend_hw.dma_store %{{.*}} -> %{{.*}} : !ascend_hw.buf<1x64xf16, ub> -> memref<32x64xf16>
// LOWER-NOT:     ascend_hw.sync_all
// LOWER:         ascend_hw.dma_load %{{.*}} -> %{{.*}} : memref<32x64xf16> -> !ascend_hw.buf<16x64xf16, ub>
// LOWER-NOT:     ascend_hw.sync_all
// LOWER:         func.return

// OFF-LOWER-LABEL: func.func @overlap(
// OFF-LOWER:       ascend_hw.dma_store %{{.*}} -> %{{.*}} : !ascend_hw.buf<1x64xf16, ub> -> memref<32x64xf16>
// OFF-LOWER:       ascend_hw.sync_all
// OFF-LOWER:       ascend_hw.dma_load %{{.*}} -> %{{.*}} : memref<32x64xf16> -> !ascend_hw.buf<16x64xf16, ub>

func.func @overlap(%q: !tv.tensor<32x32xf16>, %k: !tv.tensor<64x32xf16>, %v: !tv.tensor<64x32xf16>, %idx: !tv.tensor<32x4xi32>) -> !tv.tensor<32x32xf16> {
  %0 = tv.reshape %q : !tv.tensor<32x32xf16> to !tv.tensor<32x1x32xf16>
  %1 = tv.gather %k[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<32x4xi32> -> !tv.tensor<32x4x32xf16>
  %2 = tv.matmul %0, %1 transpose_b acc(f32) : !tv.tensor<32x1x32xf16>, !tv.tensor<32x4x32xf16> -> !tv.tensor<32x1x4xf16>
  %3 = arith.constant 8.801270e-02 : f16
  %4 = tv.mul %2, %3 : !tv.tensor<32x1x4xf16>, f16 -> !tv.tensor<32x1x4xf16>
  %5 = tv.softmax %4 axis = 2 : !tv.tensor<32x1x4xf16>
  %6 = tv.gather %v[%idx] : !tv.tensor<64x32xf16>, !tv.tensor<32x4xi32> -> !tv.tensor<32x4x32xf16>
  %7 = tv.matmul %5, %6 acc(f32) : !tv.tensor<32x1x4xf16>, !tv.tensor<32x4x32xf16> -> !tv.tensor<32x1x32xf16>
  %8 = tv.view %7[0, 0, 0] [32, 1, 32] [1, 1, 1] : !tv.tensor<32x1x32xf16> to !tv.tensor<32x32xf16>
  func.return %8 : !tv.tensor<32x32xf16>
}
