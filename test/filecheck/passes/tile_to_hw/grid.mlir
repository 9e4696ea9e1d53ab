// When the outer loop has fewer units than the target has cores and its body is
// again a parallel loop, the cores form a grid over both: here 3 row blocks x 3
// column blocks on 9 of ascend910b's 24 cores. block_idx / 3 picks the row
// chunk, block_idx mod 3 the column chunk.
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b},hw-coalesce-dma' | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK-SAME:      attributes {ascend_hw.block_dim = 9 : i64}
// CHECK:         %[[THREE:.*]] = arith.constant 3 : index
// CHECK:         %[[CORE:.*]] = ascend_hw.block_idx
// CHECK-NEXT:    %[[ROW:.*]] = arith.divsi %[[CORE]], %[[THREE]] : index
// CHECK-NEXT:    %[[COL:.*]] = arith.remsi %[[CORE]], %[[THREE]] : index
// Both chunks are computed once, before the loops.
// CHECK:         %[[NEXT_ROW:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK:         %[[NEXT_COL:.*]] = arith.addi %[[COL]], %{{.*}} : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        ascend_hw.dma_load %x[%[[I]], %[[J]]]
func.func @f(%x: memref<24x96xf32>, %out: memref<24x96xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %c96 = arith.constant 96 : index
  scf.for %i = %c0 to %c24 step %c8 {
    scf.for %j = %c0 to %c96 step %c32 {
      %t = tile.load %x[%i, %j] : memref<24x96xf32> -> !tile.tile<8x32xf32, ub>
      %r = tile.sqrt %t : !tile.tile<8x32xf32, ub>
      tile.store %r, %out[%i, %j] : !tile.tile<8x32xf32, ub> -> memref<24x96xf32>
    }
  }
  func.return
}
