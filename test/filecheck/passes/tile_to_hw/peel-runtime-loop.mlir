// tile-peel-tails splits a loop of constant bounds whose last step is partial
// and leaves a loop of run-time bounds inside it alone (its ranges are
// unknown: nothing to fold); the full step (one trip, folded to straight-line
// code) and the peeled copy each keep their copy of the loop.
// RUN: pypto-opt %s -p tile-peel-tails | filecheck %s

// CHECK-LABEL: func.func @blocks_with_gathers
// CHECK:         %rows = arith.constant 8 : index
// CHECK-NEXT:    %t = tile.load %x[%c0, %c0] valid [%rows]
// CHECK-NEXT:    tile.store %t, %out[%c0, %c0]
// CHECK-NEXT:    scf.for %p = %lo to %hi step %c1 {
// CHECK-NEXT:      %col = memref.load %idx[%p] : memref<16xindex>
// CHECK-NEXT:      %row = tile.load %b[%col, %c0]
// CHECK-NEXT:      tile.store %row, %g[%p, %c0]
// CHECK-NEXT:    }
// CHECK-NEXT:    %rows_1 = arith.constant 4 : index
// CHECK-NEXT:    %t_1 = tile.load %x[%rows, %c0] valid [%rows_1]
// CHECK-NEXT:    tile.store %t_1, %out[%rows, %c0]
// CHECK-NEXT:    scf.for %p_1 = %lo to %hi step %c1 {
// CHECK-NEXT:      %col_1 = memref.load %idx[%p_1] : memref<16xindex>
func.func @blocks_with_gathers(%x: memref<12x64xf32>, %out: memref<12x64xf32>, %idx: memref<16xindex>, %b: memref<32x64xf32>, %g: memref<16x64xf32>, %lo: index, %hi: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  scf.for %i = %c0 to %c12 step %c8 {
    %left = arith.subi %c12, %i : index
    %short = arith.cmpi slt, %left, %c8 : index
    %rows = arith.select %short, %left, %c8 : index
    %t = tile.load %x[%i, %c0] valid [%rows] : memref<12x64xf32> -> !tile.tile<8x64xf32, ub, valid = [?, 64]>
    tile.store %t, %out[%i, %c0] : !tile.tile<8x64xf32, ub, valid = [?, 64]> -> memref<12x64xf32>
    scf.for %p = %lo to %hi step %c1 {
      %col = memref.load %idx[%p] : memref<16xindex>
      %row = tile.load %b[%col, %c0] : memref<32x64xf32> -> !tile.tile<1x64xf32, ub>
      tile.store %row, %g[%p, %c0] : !tile.tile<1x64xf32, ub> -> memref<16x64xf32>
    }
  }
  func.return
}
