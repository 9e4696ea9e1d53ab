// A top-level loop that tile-to-hw splits over the cores is not unrolled by
// tile-pipeline, which would make the split's units coarser (2 trips each):
// it is marked with the stages instead, and tile-to-hw unrolls each core's
// chunk after the split. 40 trips on ascend910b's 24 cores: chunks of 1 or 2
// trips; the odd trip runs first in a loop of its own (at most one trip), the
// pairs after it with the loads of both copies before the computes and the
// stores after them.
// RUN: pypto-opt %s -p 'tile-pipeline{target=ascend910b}' | filecheck %s --check-prefix=TILE
// RUN: pypto-opt %s -p 'tile-pipeline{target=ascend910b},tile-to-hw{target=ascend910b}' | filecheck %s

func.func @swish(%x: memref<640x64xf16>, %out: memref<640x64xf16>) {
  %c0 = arith.constant 0 : index
  %c640 = arith.constant 640 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c640 step %c16 {
    %t = tile.load %x[%i, %c0] : memref<640x64xf16> -> !tile.tile<16x64xf16, ub>
    %y = tile.silu %t : !tile.tile<16x64xf16, ub>
    tile.store %y, %out[%i, %c0] : !tile.tile<16x64xf16, ub> -> memref<640x64xf16>
  }
  func.return
}

// TILE:         scf.for %{{.*}} = %c0 to %c640 step %c16 {
// TILE-NEXT:      tile.load
// TILE-NEXT:      tile.silu
// TILE-NEXT:      tile.store
// TILE-NEXT:    } {pypto.pipeline_stages = 2 : i64}

// CHECK-LABEL: func.func @swish
// CHECK-SAME:      attributes {ascend_hw.block_dim = 20 : i64}
// CHECK:         %[[CORE:.*]] = ascend_hw.block_idx
// CHECK:         %[[TRIPS:.*]] = arith.divui %{{.*}}, %c16 : index
// CHECK-NEXT:    %[[ODD:.*]] = arith.remui %[[TRIPS]], %{{.*}} : index
// CHECK-NEXT:    %[[REST:.*]] = arith.muli %[[ODD]], %c16 : index
// CHECK-NEXT:    %[[PAIRS:.*]] = arith.addi %[[LO:.*]], %[[REST]] : index
// CHECK:         scf.for %[[I:.*]] = %[[LO]] to %[[PAIRS]] step %c16 {
// CHECK-NEXT:      ascend_hw.dma_load
// CHECK:           ascend_hw.dma_store
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %[[J:.*]] = %[[PAIRS]] to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[J1:.*]] = arith.addi %[[J]], %c16 : index
// CHECK-NEXT:      ascend_hw.dma_load %x[%[[J]], %c0]
// CHECK-NEXT:      ascend_hw.dma_load %x[%[[J1]], %c0]
// CHECK:           ascend_hw.dma_store %{{.*}} -> %out[%[[J]], %c0]
// CHECK-NEXT:      ascend_hw.dma_store %{{.*}} -> %out[%[[J1]], %c0]
// CHECK-NEXT:    }
// CHECK-NOT:     pypto.pipeline
