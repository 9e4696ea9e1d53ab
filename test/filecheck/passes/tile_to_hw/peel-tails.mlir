// tile-peel-tails: a loop whose range is not a multiple of its step and whose
// body makes tiles with dynamic extents keeps its full iterations, and its last
// iteration follows as straight-line code; index arithmetic folds from the loop
// bounds, so every extent becomes a constant (in the loop min(8, 20 - i) = 8,
// in the tail 4) and tile.valid_dim folds away.
// RUN: pypto-opt %s --split-input-file -p tile-peel-tails | filecheck %s

// CHECK-LABEL: func.func @rows
// CHECK-DAG:     %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[SIXTEEN:.*]] = arith.constant 16 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[SIXTEEN]] step %[[EIGHT]] {
// CHECK-NEXT:      %[[T:.*]] = tile.load %x[%[[I]], %{{.*}}] valid [%[[EIGHT]]] : memref<20x16xf32> -> !tile.tile<8x16xf32, ub, valid = [?, 16]>
// CHECK-NEXT:      tile.store %[[T]], %out[%[[I]], %{{.*}}]
// CHECK-NEXT:      tile.store %[[T]], %out[%[[EIGHT]], %{{.*}}]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[U:.*]] = tile.load %x[%[[SIXTEEN]], %{{.*}}] valid [%[[FOUR]]]
// CHECK-NEXT:    tile.store %[[U]], %out[%[[SIXTEEN]], %{{.*}}]
// CHECK-NEXT:    tile.store %[[U]], %out[%[[FOUR]], %{{.*}}]
// CHECK-NEXT:    func.return
func.func @rows(%x: memref<20x16xf32>, %out: memref<20x16xf32>) {
  %c0 = arith.constant 0 : index
  %rows = arith.constant 20 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %rows step %c8 {
    %left = arith.subi %rows, %i : index
    %lt = arith.cmpi slt, %left, %c8 : index
    %vi = arith.select %lt, %left, %c8 : index
    %t = tile.load %x[%i, %c0] valid [%vi] : memref<20x16xf32> -> !tile.tile<8x16xf32, ub, valid = [?, 16]>
    tile.store %t, %out[%i, %c0] : !tile.tile<8x16xf32, ub, valid = [?, 16]> -> memref<20x16xf32>
    // valid_dim folds to the extent: the row this tile's row count names.
    %n = tile.valid_dim %t, 0 : !tile.tile<8x16xf32, ub, valid = [?, 16]>
    tile.store %t, %out[%n, %c0] : !tile.tile<8x16xf32, ub, valid = [?, 16]> -> memref<20x16xf32>
  }
  func.return
}

// -----

// A range that divides by the step needs no peeling; arith.minsi folds too.
// CHECK-LABEL: func.func @divisible
// CHECK:         %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[EIGHT]] {
// CHECK-NEXT:      tile.load %x[%[[I]], %{{.*}}] valid [%[[EIGHT]]]
// CHECK-NOT:     tile.load
func.func @divisible(%x: memref<24x16xf32>, %out: memref<24x16xf32>) {
  %c0 = arith.constant 0 : index
  %rows = arith.constant 24 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %rows step %c8 {
    %left = arith.subi %rows, %i : index
    %vi = arith.minsi %c8, %left : index
    %t = tile.load %x[%i, %c0] valid [%vi] : memref<24x16xf32> -> !tile.tile<8x16xf32, ub, valid = [?, 16]>
    tile.store %t, %out[%i, %c0] : !tile.tile<8x16xf32, ub, valid = [?, 16]> -> memref<24x16xf32>
  }
  func.return
}

// -----

// Loops without dynamic tiles are left alone, whatever their range.
// CHECK-LABEL: func.func @static
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      tile.load
// CHECK-NEXT:      tile.store
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @static(%x: memref<20x16xf32>, %out: memref<20x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  scf.for %i = %c0 to %c7 step %c3 {
    %t = tile.load %x[%i, %c0] : memref<20x16xf32> -> !tile.tile<1x16xf32, ub>
    tile.store %t, %out[%i, %c0] : !tile.tile<1x16xf32, ub> -> memref<20x16xf32>
  }
  func.return
}
