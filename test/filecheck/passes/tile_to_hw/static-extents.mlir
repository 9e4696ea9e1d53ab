// tile-to-hw folds extents from loop bounds itself (as tile-peel-tails does):
// in a loop whose range divides by its step, min(8, 32 - i) is always 8 — also
// when the loop is then split over cores and its bounds become dynamic.
// RUN: pypto-opt %s -p 'tile-to-hw{target=tiny}' | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK-SAME:      attributes {ascend_hw.block_dim = 2 : i64}
// CHECK:         ascend_hw.block_idx
// CHECK:         scf.for
// CHECK-NEXT:      ascend_hw.dma_load %x[%{{.*}}, %{{.*}}] -> %{{.*}} {bursts = 1 : i64, burst_bytes = 512 : i64}
// CHECK-NEXT:      ascend_hw.dma_store %{{.*}} -> %out[%{{.*}}, %{{.*}}] {bursts = 1 : i64, burst_bytes = 512 : i64}
// CHECK-NEXT:    }
func.func @f(%x: memref<32x16xf32>, %out: memref<32x16xf32>) {
  %c0 = arith.constant 0 : index
  %rows = arith.constant 32 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %rows step %c8 {
    %left = arith.subi %rows, %i : index
    %vi = arith.minsi %c8, %left : index
    %t = tile.load %x[%i, %c0] valid [%vi] : memref<32x16xf32> -> !tile.tile<8x16xf32, ub, valid = [?, 16]>
    tile.store %t, %out[%i, %c0] : !tile.tile<8x16xf32, ub, valid = [?, 16]> -> memref<32x16xf32>
  }
  func.return
}
