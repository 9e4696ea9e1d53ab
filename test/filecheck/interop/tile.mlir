// The generic form of tile IR goes through upstream MLIR (which does not know the
// dialect) and back unchanged: op names, tile types, properties (operand segment
// sizes, enum attributes, unit attributes) and regions survive.
// REQUIRES: mlir-opt
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | pypto-opt | filecheck %s

// CHECK-LABEL: func.func @softmax_rows
func.func @softmax_rows(%x: memref<100x1000xf32>, %out: memref<100x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  // CHECK: scf.for
  scf.for %i = %c0 to %c100 step %c64 {
    %left = arith.subi %c100, %i : index
    %rows = arith.minsi %left, %c64 : index
    // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] valid [%{{.*}}] : memref<100x1000xf32> -> !tile.tile<64x1024xf32, ub, valid = [?, 1000]>
    %t = tile.load %x[%i, %c0] valid [%rows] : memref<100x1000xf32> -> !tile.tile<64x1024xf32, ub, valid = [?, 1000]>
    // CHECK: tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
    %m = tile.reduce_max %t, axis = 1 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
    // CHECK: tile.sub %{{.*}}, %{{.*}} : !tile.tile<64x1024xf32, ub, valid = [?, 1000]>, !tile.tile<64x1xf32, ub, valid = [?, 1]>
    %d = tile.sub %t, %m : !tile.tile<64x1024xf32, ub, valid = [?, 1000]>, !tile.tile<64x1xf32, ub, valid = [?, 1]>
    // CHECK: tile.exp %{{.*}} : !tile.tile<64x1024xf32, ub, valid = [?, 1000]>
    %e = tile.exp %d : !tile.tile<64x1024xf32, ub, valid = [?, 1000]>
    // CHECK: tile.reduce_sum %{{.*}}, axis = 1
    %s = tile.reduce_sum %e, axis = 1 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
    // CHECK: tile.div %{{.*}}, %{{.*}} : !tile.tile<64x1024xf32, ub, valid = [?, 1000]>, !tile.tile<64x1xf32, ub, valid = [?, 1]>
    %y = tile.div %e, %s : !tile.tile<64x1024xf32, ub, valid = [?, 1000]>, !tile.tile<64x1xf32, ub, valid = [?, 1]>
    // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> memref<100x1000xf32>
    tile.store %y, %out[%i, %c0] : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> memref<100x1000xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @cube
func.func @cube(%a: memref<64x40xf16>, %b: memref<40x128xf16>, %c: memref<64x128xf16>, %t: !tile.tile<16x16xf32, ub>) {
  %c0 = arith.constant 0 : index
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x40xf16> -> !tile.tile<64x48xf16, l1, valid = [64, 40], layout = nz, pad = zero>
  %a1 = tile.load %a[%c0, %c0] : memref<64x40xf16> -> !tile.tile<64x48xf16, l1, valid = [64, 40], layout = nz, pad = zero>
  %b1 = tile.load %b[%c0, %c0] : memref<40x128xf16> -> !tile.tile<48x128xf16, l1, valid = [40, 128], layout = nz, pad = zero>
  // CHECK: tile.move %{{.*}} : !tile.tile<64x48xf16, l1, valid = [64, 40], layout = nz, pad = zero> -> !tile.tile<64x48xf16, l0a, valid = [64, 40], pad = zero>
  %a0 = tile.move %a1 : !tile.tile<64x48xf16, l1, valid = [64, 40], layout = nz, pad = zero> -> !tile.tile<64x48xf16, l0a, valid = [64, 40], pad = zero>
  %b0 = tile.move %b1 : !tile.tile<48x128xf16, l1, valid = [40, 128], layout = nz, pad = zero> -> !tile.tile<48x128xf16, l0b, valid = [40, 128], pad = zero>
  // CHECK: tile.move %{{.*}} transpose : !tile.tile<48x128xf16, l1, valid = [40, 128], layout = nz, pad = zero> -> !tile.tile<128x48xf16, l0a, valid = [128, 40], pad = zero>
  %bt = tile.move %b1 transpose : !tile.tile<48x128xf16, l1, valid = [40, 128], layout = nz, pad = zero> -> !tile.tile<128x48xf16, l0a, valid = [128, 40], pad = zero>
  // CHECK: %[[ACC:.*]] = tile.matmul %{{.*}}, %{{.*}} : {{.*}} -> !tile.tile<64x128xf32, l0c>
  %acc = tile.matmul %a0, %b0 : !tile.tile<64x48xf16, l0a, valid = [64, 40], pad = zero>, !tile.tile<48x128xf16, l0b, valid = [40, 128], pad = zero> -> !tile.tile<64x128xf32, l0c>
  // CHECK: tile.matmul %{{.*}}, %{{.*}}, %[[ACC]] : {{.*}} -> !tile.tile<64x128xf32, l0c>
  %acc2 = tile.matmul %a0, %b0, %acc : !tile.tile<64x48xf16, l0a, valid = [64, 40], pad = zero>, !tile.tile<48x128xf16, l0b, valid = [40, 128], pad = zero> -> !tile.tile<64x128xf32, l0c>
  // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !tile.tile<64x128xf32, l0c> -> memref<64x128xf16>
  tile.store %acc2, %c[%c0, %c0] : !tile.tile<64x128xf32, l0c> -> memref<64x128xf16>
  // CHECK: tile.cast %{{.*}} round ceil : !tile.tile<16x16xf32, ub> -> !tile.tile<16x16xi32, ub>
  %i = tile.cast %t round ceil : !tile.tile<16x16xf32, ub> -> !tile.tile<16x16xi32, ub>
  // CHECK: tile.valid_dim %{{.*}}, 1 : !tile.tile<16x16xf32, ub>
  %v = tile.valid_dim %t, 1 : !tile.tile<16x16xf32, ub>
  func.return
}
