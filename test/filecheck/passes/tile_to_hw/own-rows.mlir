// A loop that stores rows of a GM tensor and loads them back is split over
// the cores when every access of that tensor stays within the iteration's own
// rows [iv, iv + step) (multicore_split's _own_rows: the top-k mask rows a
// flash query block builds, then reads, passes/topk_overlap.py); the core's
// store -> load order is hw-insert-sync's. Loading the next iteration's rows
// (another core's) keeps the loop on one core.
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=tiny}' | filecheck %s

// CHECK-LABEL: func.func @own
// CHECK-SAME:      attributes {ascend_hw.block_dim = 2 : i64}
// CHECK:         ascend_hw.block_idx
// CHECK-NOT:     ascend_hw.sync_all
// CHECK:         ascend_hw.dma_store %{{.*}} -> %{{.*}}[%{{.*}}, %{{.*}}] {{.*}} -> memref<32x64xf32>
// CHECK:         ascend_hw.dma_load %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}} {{.*}} : memref<32x64xf32> -> !ascend_hw.buf<16x64xf32, ub>
func.func @own(%x: memref<32x64xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<32x64xf32>
  scf.for %i = %c0 to %c32 step %c16 {
    %a = tile.load %x[%i, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
    %r = tile.relu %a : !tile.tile<8x64xf32, ub>
    tile.store %r, %t[%i, %c0] : !tile.tile<8x64xf32, ub> -> memref<32x64xf32>
    %j = arith.addi %i, %c8 : index
    %b = tile.load %x[%j, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
    %s = tile.relu %b : !tile.tile<8x64xf32, ub>
    tile.store %s, %t[%j, %c0] : !tile.tile<8x64xf32, ub> -> memref<32x64xf32>
    %m = tile.load %t[%i, %c0] : memref<32x64xf32> -> !tile.tile<16x64xf32, ub>
    %e = tile.exp %m : !tile.tile<16x64xf32, ub>
    tile.store %e, %out[%i, %c0] : !tile.tile<16x64xf32, ub> -> memref<32x64xf32>
  }
  memref.dealloc %t : memref<32x64xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @next
// CHECK-NOT:     ascend_hw.block_idx
// CHECK:         scf.for
func.func @next(%x: memref<48x64xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<48x64xf32>
  scf.for %i = %c0 to %c32 step %c16 {
    %a = tile.load %x[%i, %c0] : memref<48x64xf32> -> !tile.tile<16x64xf32, ub>
    tile.store %a, %t[%i, %c0] : !tile.tile<16x64xf32, ub> -> memref<48x64xf32>
    %j = arith.addi %i, %c16 : index
    %m = tile.load %t[%j, %c0] : memref<48x64xf32> -> !tile.tile<16x64xf32, ub>
    tile.store %m, %out[%i, %c0] : !tile.tile<16x64xf32, ub> -> memref<32x64xf32>
  }
  memref.dealloc %t : memref<48x64xf32>
  func.return
}
