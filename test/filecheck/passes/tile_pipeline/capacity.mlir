// When the buffers of `stages` copies would not fit a memory of the target,
// tile-pipeline uses fewer stages and says so; with one stage left the loop
// stays as it was. tiny has 4096 bytes of ub: two 16x32 f32 loads (2048 bytes
// each) plus a result do not fit, so the loop keeps one copy per trip.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics -p 'tile-pipeline{stages=2 target=tiny max_cores=1}' | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tile-pipeline{stages=4 target=tiny max_cores=1}' 2>/dev/null | filecheck %s --check-prefix=FOUR
// RUN: pypto-opt %s --split-input-file -p 'tile-pipeline{stages=4 target=tiny max_cores=1}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// CHECK-LABEL: func.func @too_big
// CHECK:         scf.for %{{.*}} = %c0 to %c64 step %c16 {
// CHECK-NEXT:      tile.load
// CHECK-NEXT:      tile.exp
// CHECK-NEXT:      tile.store
// CHECK-NEXT:    }
// REMARK:      capacity.mlir:[[# @LINE + 8]]:3: remark: tile-pipeline: 1 stage(s) instead of 4: 2 stages need 6144 bytes of ub, target has 4096
// FOUR-LABEL: func.func @too_big
// FOUR:         scf.for %{{.*}} = %c0 to %c64 step %c16 {
func.func @too_big(%x: memref<64x32xf32>, %out: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  // expected-remark@below {{2 stages need 6144 bytes of ub, target has 4096}}
  scf.for %i = %c0 to %c64 step %c16 {
    %t = tile.load %x[%i, %c0] : memref<64x32xf32> -> !tile.tile<16x32xf32, ub>
    %e = tile.exp %t : !tile.tile<16x32xf32, ub>
    tile.store %e, %out[%i, %c0] : !tile.tile<16x32xf32, ub> -> memref<64x32xf32>
  }
  func.return
}

// -----

// 16x16 f32 tiles (1024 bytes), an exp of an exp: 4 copies need 5120 bytes,
// 3 fit; 2 fit without a remark.
// CHECK-LABEL: func.func @fewer
// CHECK:         scf.for %{{.*}} = %c0 to %{{.*}} step %{{.*}} {
// CHECK-COUNT-2:   tile.load
// CHECK-NOT:       tile.load
// CHECK:         }
// REMARK:      capacity.mlir:[[# @LINE + 10]]:3: remark: tile-pipeline: 3 stage(s) instead of 4: 4 stages need 5120 bytes of ub, target has 4096
// FOUR-LABEL: func.func @fewer
// FOUR:         scf.for %{{.*}} = %c0 to %{{.*}} step %{{.*}} {
// FOUR-COUNT-3:   tile.load
// FOUR-NOT:       tile.load
// FOUR:         }
func.func @fewer(%x: memref<96x16xf32>, %out: memref<96x16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c96 = arith.constant 96 : index
  scf.for %i = %c0 to %c96 step %c16 {
    %t = tile.load %x[%i, %c0] : memref<96x16xf32> -> !tile.tile<16x16xf32, ub>
    %e = tile.exp %t : !tile.tile<16x16xf32, ub>
    %f = tile.exp %e : !tile.tile<16x16xf32, ub>
    tile.store %f, %out[%i, %c0] : !tile.tile<16x16xf32, ub> -> memref<96x16xf32>
  }
  func.return
}
