// Bufferization: tensor arguments become memrefs of the same shape, results
// trailing memref arguments (%out, or %out0, %out1, ...); `?` sizes are read with
// memref.dim and `tv.dim` becomes that size. A `tv.view` is a strided
// memref.subview that the next nest loads from; a transpose of a GM tensor is a
// load of the transposed window and a tile.transpose in UB. A result that is an
// argument or a view is copied by a nest of its own. Scalars stay scalars.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' | filecheck %s

func.func @views(%x: !tv.tensor<20x30xf32>, %i: index) -> (!tv.tensor<5x7xf32>, !tv.tensor<20x30xf32>) {
  %v = tv.view %x[%i, 3][5, 7][2, 3] : !tv.tensor<20x30xf32> to !tv.tensor<5x7xf32>
  %e = tv.exp %v : !tv.tensor<5x7xf32>
  func.return %e, %x : !tv.tensor<5x7xf32>, !tv.tensor<20x30xf32>
}

// CHECK-LABEL: func.func @views(%x: memref<20x30xf32>, %i: index, %out0: memref<5x7xf32>, %out1: memref<20x30xf32>) {
// CHECK-NEXT:    %[[V:.*]] = memref.subview %x[%i, 3] [5, 7] [2, 3] : memref<20x30xf32> to memref<5x7xf32, strided<[60, 3], offset: ?>>
// CHECK:         %[[T:.*]] = tile.load %[[V]][%[[C0:.*]], %[[C0]]] : memref<5x7xf32, strided<[60, 3], offset: ?>> -> !tile.tile<5x8xf32, ub, valid = [5, 7]>
// CHECK-NEXT:    %[[E:.*]] = tile.exp %[[T]]
// CHECK-NEXT:    tile.store %[[E]], %out0
// CHECK:         %[[C:.*]] = tile.load %x[%{{.*}}, %{{.*}}] : memref<20x30xf32> -> !tile.tile<20x32xf32, ub, valid = [20, 30]>
// CHECK-NEXT:    tile.store %[[C]], %out1
// CHECK-NEXT:    func.return

func.func @dynamic(%x: !tv.tensor<?x?xf16>) -> (!tv.tensor<?x?xf16>, index) {
  %t = tv.transpose %x [1, 0] : !tv.tensor<?x?xf16> -> !tv.tensor<?x?xf16>
  %n = tv.dim %t, 0 : !tv.tensor<?x?xf16>
  func.return %t, %n : !tv.tensor<?x?xf16>, index
}

// CHECK-LABEL: func.func @dynamic(%x: memref<?x?xf16>, %out: memref<?x?xf16>) -> index {
// CHECK:         %[[ROWS:.*]] = memref.dim %x, %{{.*}} : memref<?x?xf16>
// CHECK:         %[[COLS:.*]] = memref.dim %x, %{{.*}} : memref<?x?xf16>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[COLS]] step %{{.*}} {
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %[[ROWS]] step %{{.*}} {
// CHECK:             %[[T:.*]] = tile.load %x[%[[J]], %[[I]]] valid [%{{.*}}, %{{.*}}] : memref<?x?xf16> -> !tile.tile<[[N:[0-9]+]]x[[M:[0-9]+]]xf16, ub, valid = [?, ?]>
// CHECK-NEXT:        %[[TT:.*]] = tile.transpose %[[T]] : !tile.tile<[[N]]x[[M]]xf16, ub, valid = [?, ?]> -> !tile.tile<[[M]]x[[N]]xf16, ub, valid = [?, ?]>
// CHECK-NEXT:        tile.store %[[TT]], %out[%[[I]], %[[J]]]
// CHECK:         func.return %[[COLS]] : index
