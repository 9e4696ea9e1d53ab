// tile.valid_dim folds: a static extent becomes a constant, a `?` is followed
// back through the ops that copy it to the `valid` operand that created it.
// RUN: pypto-opt %s -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @valid_dim
// CHECK-SAME: (%{{.*}}: memref<100x1000xf16>, %{{.*}}: index, %[[R:[a-z0-9]+]]: index, %[[C:[a-z0-9]+]]: index, %[[ARG:[a-z0-9]+]]: !tile.tile<8x8xf32, ub, valid = [?, ?]>)
// CHECK-DAG: %[[C1000:.*]] = arith.constant 1000 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[A0:.*]] = tile.valid_dim %[[ARG]], 0 : !tile.tile<8x8xf32, ub, valid = [?, ?]>
// CHECK-DAG: %[[A1:.*]] = tile.valid_dim %[[ARG]], 1 : !tile.tile<8x8xf32, ub, valid = [?, ?]>
// CHECK-NOT: tile.load
// CHECK: func.return %[[C]], %[[R]], %[[R]], %[[C1000]], %[[C1]], %[[A0]], %[[A1]], %[[R]], %[[R]]
func.func @valid_dim(%x: memref<100x1000xf16>, %i: index, %r: index, %c: index,
                     %arg: !tile.tile<8x8xf32, ub, valid = [?, ?]>)
    -> (index, index, index, index, index, index, index, index, index) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%i, %c0] valid [%r] : memref<100x1000xf16> -> !tile.tile<64x1008xf16, ub, valid = [?, 1000]>
  %e = tile.exp %t : !tile.tile<64x1008xf16, ub, valid = [?, 1000]>
  %f = tile.cast %e : !tile.tile<64x1008xf16, ub, valid = [?, 1000]> -> !tile.tile<64x1008xf32, ub, valid = [?, 1000]>
  %m = tile.reduce_max %f, axis = 1 : !tile.tile<64x1008xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
  %b = tile.broadcast %m valid [%c] : !tile.tile<64x1xf32, ub, valid = [?, 1]> -> !tile.tile<64x1024xf32, ub, valid = [?, ?]>
  %tr = tile.transpose %b : !tile.tile<64x1024xf32, ub, valid = [?, ?]> -> !tile.tile<1024x64xf32, ub, valid = [?, ?]>
  %s = tile.sub %m, %f : !tile.tile<64x1xf32, ub, valid = [?, 1]>, !tile.tile<64x1008xf32, ub, valid = [?, 1000]>
  %d0 = tile.valid_dim %tr, 0 : !tile.tile<1024x64xf32, ub, valid = [?, ?]>
  %d1 = tile.valid_dim %tr, 1 : !tile.tile<1024x64xf32, ub, valid = [?, ?]>
  %d2 = tile.valid_dim %s, 0 : !tile.tile<64x1008xf32, ub, valid = [?, 1000]>
  %d3 = tile.valid_dim %s, 1 : !tile.tile<64x1008xf32, ub, valid = [?, 1000]>
  %d4 = tile.valid_dim %m, 1 : !tile.tile<64x1xf32, ub, valid = [?, 1]>
  %d5 = tile.valid_dim %arg, 0 : !tile.tile<8x8xf32, ub, valid = [?, ?]>
  %a2 = tile.exp %arg : !tile.tile<8x8xf32, ub, valid = [?, ?]>
  %d6 = tile.valid_dim %a2, 1 : !tile.tile<8x8xf32, ub, valid = [?, ?]>
  // Through the cube: m from lhs, n from rhs (here a transposed move of the same
  // l1 tile, so n is its valid rows).
  %a1 = tile.load %x[%i, %c0] valid [%r, %c] : memref<100x1000xf16> -> !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero>
  %a0 = tile.move %a1 : !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<64x64xf16, l0a, valid = [?, ?], pad = zero>
  %b0 = tile.move %a1 transpose : !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<64x64xf16, l0b, valid = [?, ?], pad = zero>
  %mm = tile.matmul %a0, %b0 : !tile.tile<64x64xf16, l0a, valid = [?, ?], pad = zero>, !tile.tile<64x64xf16, l0b, valid = [?, ?], pad = zero> -> !tile.tile<64x64xf32, l0c, valid = [?, ?]>
  %d7 = tile.valid_dim %mm, 0 : !tile.tile<64x64xf32, l0c, valid = [?, ?]>
  %d8 = tile.valid_dim %mm, 1 : !tile.tile<64x64xf32, l0c, valid = [?, ?]>
  func.return %d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7, %d8 : index, index, index, index, index, index, index, index, index
}
