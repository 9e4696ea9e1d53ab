// tile-pipeline unrolls a tile loop by `stages`: the loads of every copy first,
// then the computes, then the stores; trips mod stages iterations follow the
// loop as straight-line copies in the same order. Loops it cannot reorder are
// left alone.
// RUN: pypto-opt %s --split-input-file -p 'tile-pipeline{stages=2 target=ascend910b max_cores=1}' | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tile-pipeline{stages=3 target=ascend910b max_cores=1}' | filecheck %s --check-prefix=THREE
// On 24 cores tile-to-hw gives each core at most one trip of these top-level
// loops: a chunk of one trip has nothing to overlap, so nothing changes
// (split.mlir has a loop with more trips than cores).
// RUN: pypto-opt %s --split-input-file -p 'tile-pipeline{stages=2 target=ascend910b}' | filecheck %s --check-prefix=CORES
// CORES-LABEL: func.func @swish
// CORES:         scf.for %{{.*}} = %c0 to %c128 step %c16 {
// CORES-NEXT:      tile.load
// CORES-NEXT:      tile.sigmoid

// 8 trips: 4 iterations of two copies, no remainder.
// CHECK-LABEL: func.func @swish
// CHECK:         %[[UB:[0-9]+]] = arith.constant 128 : index
// CHECK:         %[[STEP:[0-9]+]] = arith.constant 32 : index
// CHECK:         scf.for %[[I:.*]] = %c0 to %[[UB]] step %[[STEP]] {
// CHECK-NEXT:      %[[K:.*]] = arith.constant 16 : index
// CHECK-NEXT:      %[[J:.*]] = arith.addi %[[I]], %[[K]] : index
// CHECK-NEXT:      %[[A:.*]] = tile.load %x[%[[I]], %c0]
// CHECK-NEXT:      %[[B:.*]] = tile.load %x[%[[J]], %c0]
// CHECK-NEXT:      %[[SA:.*]] = tile.sigmoid %[[A]]
// CHECK-NEXT:      %[[YA:.*]] = tile.mul %[[A]], %[[SA]]
// CHECK-NEXT:      %[[SB:.*]] = tile.sigmoid %[[B]]
// CHECK-NEXT:      %[[YB:.*]] = tile.mul %[[B]], %[[SB]]
// CHECK-NEXT:      tile.store %[[YA]], %out[%[[I]], %c0]
// CHECK-NEXT:      tile.store %[[YB]], %out[%[[J]], %c0]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// 3 stages: 2 iterations of three copies (0..96 step 48), then 2 straight-line
// copies at 96 and 112, loads first.
// THREE-LABEL: func.func @swish
// THREE:         %[[UB:[0-9]+]] = arith.constant 96 : index
// THREE:         %[[STEP:[0-9]+]] = arith.constant 48 : index
// THREE:         %[[R0:[0-9]+]] = arith.constant 96 : index
// THREE:         %[[R1:[0-9]+]] = arith.constant 112 : index
// THREE:         scf.for %{{.*}} = %{{.*}} to %[[UB]] step %[[STEP]] {
// THREE-COUNT-3:   tile.load
// THREE-COUNT-6:   tile.{{(sigmoid|mul)}}
// THREE-COUNT-3:   tile.store
// THREE-NEXT:    }
// THREE-NEXT:    tile.load %x[%[[R0]]
// THREE-NEXT:    tile.load %x[%[[R1]]
// THREE-COUNT-4: tile.{{(sigmoid|mul)}}
// THREE-NEXT:    tile.store %{{.*}}, %out[%[[R0]]
// THREE-NEXT:    tile.store %{{.*}}, %out[%[[R1]]
// THREE-NEXT:    func.return
func.func @swish(%x: memref<128x64xf16>, %out: memref<128x64xf16>) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c128 step %c16 {
    %t = tile.load %x[%i, %c0] : memref<128x64xf16> -> !tile.tile<16x64xf16, ub>
    %s = tile.sigmoid %t : !tile.tile<16x64xf16, ub>
    %y = tile.mul %t, %s : !tile.tile<16x64xf16, ub>
    tile.store %y, %out[%i, %c0] : !tile.tile<16x64xf16, ub> -> memref<128x64xf16>
  }
  func.return
}

// -----

// 3 trips with 2 stages: one iteration of two copies becomes straight-line
// code, then the last trip. Index arithmetic a load needs moves with the load.
// CHECK-LABEL: func.func @odd
// CHECK-NOT:     scf.for
// CHECK:         %[[I0:.*]] = arith.muli %{{.*}}, %c16 : index
// CHECK-NEXT:    tile.load %x[%[[I0]], %c0]
// CHECK-NEXT:    %[[I1:.*]] = arith.muli %{{.*}}, %c16 : index
// CHECK-NEXT:    tile.load %x[%[[I1]], %c0]
// CHECK-NEXT:    tile.exp
// CHECK-NEXT:    tile.exp
// CHECK-NEXT:    tile.store %{{.*}}, %out[%[[I0]], %c0]
// CHECK-NEXT:    tile.store %{{.*}}, %out[%[[I1]], %c0]
// CHECK-NEXT:    %[[I2:.*]] = arith.muli %{{.*}}, %c16 : index
// CHECK-NEXT:    tile.load %x[%[[I2]], %c0]
// CHECK-NEXT:    tile.exp
// CHECK-NEXT:    tile.store
// CHECK-NEXT:    func.return
// With 3 stages: three copies in one straight-line block.
// THREE-LABEL: func.func @odd
// THREE-NOT:     scf.for
// THREE-COUNT-3: tile.load
// THREE-COUNT-3: tile.exp
// THREE-COUNT-3: tile.store
// THREE-NEXT:    func.return
func.func @odd(%x: memref<48x32xf32>, %out: memref<48x32xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %k = %c0 to %c3 step %c1 {
    %i = arith.muli %k, %c16 : index
    %t = tile.load %x[%i, %c0] : memref<48x32xf32> -> !tile.tile<16x32xf32, ub>
    %e = tile.exp %t : !tile.tile<16x32xf32, ub>
    tile.store %e, %out[%i, %c0] : !tile.tile<16x32xf32, ub> -> memref<48x32xf32>
  }
  func.return
}

// -----

// Left alone: one trip; a tensor both loaded and stored (a later load could
// read an earlier store); a loop without loads.
// CHECK-LABEL: func.func @untouched
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      tile.load
// CHECK-NEXT:      tile.store
// CHECK-NEXT:    }
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      tile.load
// CHECK-NEXT:      tile.exp
// CHECK-NEXT:      tile.store
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// THREE-LABEL: func.func @untouched
// THREE-COUNT-2: tile.load
func.func @untouched(%x: memref<32x32xf32>, %out: memref<32x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c16 step %c16 {
    %t = tile.load %x[%i, %c0] : memref<32x32xf32> -> !tile.tile<16x32xf32, ub>
    tile.store %t, %out[%i, %c0] : !tile.tile<16x32xf32, ub> -> memref<32x32xf32>
  }
  scf.for %i = %c0 to %c32 step %c16 {
    %t = tile.load %x[%i, %c0] : memref<32x32xf32> -> !tile.tile<16x32xf32, ub>
    %e = tile.exp %t : !tile.tile<16x32xf32, ub>
    tile.store %e, %x[%i, %c0] : !tile.tile<16x32xf32, ub> -> memref<32x32xf32>
  }
  func.return
}
