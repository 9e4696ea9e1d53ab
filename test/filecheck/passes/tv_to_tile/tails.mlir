// Tails: a dim the step does not divide gets a dynamic valid extent
// min(step, size - i) (arith.subi, cmpi slt, select); a tensor smaller than one
// tile is one tile with a static valid shape (columns padded to the 32-byte UB
// alignment); a `?` dim is read with memref.dim. Nothing outside the tensor is
// read or written: every load and store spans the valid extents only.
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny tile-sizes=8,32}' | filecheck %s

func.func @prime(%x: !tv.tensor<37x45xf32>) -> !tv.tensor<37x45xf32> {
  %y = tv.exp %x : !tv.tensor<37x45xf32>
  func.return %y : !tv.tensor<37x45xf32>
}

// CHECK-LABEL: func.func @prime(%x: memref<37x45xf32>, %out: memref<37x45xf32>) {
// CHECK-DAG:     %[[M:.*]] = arith.constant 37 : index
// CHECK-DAG:     %[[TM:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[N:.*]] = arith.constant 45 : index
// CHECK-DAG:     %[[TN:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         scf.for %[[I:.*]] = %[[C0]] to %[[M]] step %[[TM]] {
// CHECK-NEXT:      %[[LEFT:.*]] = arith.subi %[[M]], %[[I]] : index
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[LEFT]], %[[TM]] : index
// CHECK-NEXT:      %[[VI:.*]] = arith.select %[[LT]], %[[LEFT]], %[[TM]] : index
// CHECK-NEXT:      scf.for %[[J:.*]] = %[[C0]] to %[[N]] step %[[TN]] {
// CHECK:             %[[VJ:.*]] = arith.select
// CHECK-NEXT:        %[[T:.*]] = tile.load %x[%[[I]], %[[J]]] valid [%[[VI]], %[[VJ]]] : memref<37x45xf32> -> !tile.tile<8x32xf32, ub, valid = [?, ?]>
// CHECK-NEXT:        %[[E:.*]] = tile.exp %[[T]] : !tile.tile<8x32xf32, ub, valid = [?, ?]>
// CHECK-NEXT:        tile.store %[[E]], %out[%[[I]], %[[J]]] : !tile.tile<8x32xf32, ub, valid = [?, ?]> -> memref<37x45xf32>

func.func @small(%x: !tv.tensor<3x7xf32>) -> !tv.tensor<3x7xf32> {
  %y = tv.exp %x : !tv.tensor<3x7xf32>
  func.return %y : !tv.tensor<3x7xf32>
}

// CHECK-LABEL: func.func @small(%x: memref<3x7xf32>, %out: memref<3x7xf32>) {
// CHECK-NOT:     scf.for
// CHECK:         tile.load %x[%{{.*}}, %{{.*}}] : memref<3x7xf32> -> !tile.tile<3x8xf32, ub, valid = [3, 7]>
// CHECK:         tile.store %{{.*}}, %out[%{{.*}}, %{{.*}}] : !tile.tile<3x8xf32, ub, valid = [3, 7]> -> memref<3x7xf32>

func.func @one(%x: !tv.tensor<1xf16>) -> !tv.tensor<1xf16> {
  %y = tv.exp %x : !tv.tensor<1xf16>
  func.return %y : !tv.tensor<1xf16>
}

// CHECK-LABEL: func.func @one(%x: memref<1xf16>, %out: memref<1xf16>) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[T:.*]] = tile.load %x[%[[C0]]] : memref<1xf16> -> !tile.tile<1xf16, ub>
// CHECK-NEXT:    tile.exp %[[T]] : !tile.tile<1xf16, ub>
// CHECK-NEXT:    tile.store

func.func @dynamic(%x: !tv.tensor<?x64xf32>) -> !tv.tensor<?x64xf32> {
  %y = tv.exp %x : !tv.tensor<?x64xf32>
  func.return %y : !tv.tensor<?x64xf32>
}

// The 64 columns are two whole steps of 32: their valid extent is static.
// CHECK-LABEL: func.func @dynamic(%x: memref<?x64xf32>, %out: memref<?x64xf32>) {
// CHECK:         %[[ROWS:.*]] = memref.dim %x, %{{.*}} : memref<?x64xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[ROWS]] step %{{.*}} {
// CHECK:           %[[VI:.*]] = arith.select
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        tile.load %x[%[[I]], %[[J]]] valid [%[[VI]]] : memref<?x64xf32> -> !tile.tile<8x32xf32, ub, valid = [?, 32]>
