// Tiles that fit the module's target verify; without a target nothing is checked.
// invalid_target.mlir has the tiles that do not fit.
// RUN: pypto-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: builtin.module {
// CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xf32> -> !tile.tile<64x64xf32, ub>
builtin.module {
  func.func @no_target(%x: memref<64x64xf32>) {
    %c0 = arith.constant 0 : index
    %t = tile.load %x[%c0, %c0] : memref<64x64xf32> -> !tile.tile<64x64xf32, ub>
    func.return
  }
}

// -----

// CHECK-LABEL: builtin.module attributes {pypto.target = "ascend910b"}
// CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xf32> -> !tile.tile<64x64xf32, ub>
// CHECK: tile.matmul
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @fits(%x: memref<64x64xf32>, %a: !tile.tile<128x128xf16, l0a>, %b: !tile.tile<128x128xf16, l0b>) {
    %c0 = arith.constant 0 : index
    %t = tile.load %x[%c0, %c0] : memref<64x64xf32> -> !tile.tile<64x64xf32, ub>
    // 128x128xf32 = 64 KiB of L0C's 128 KiB; a row statistic [64, 1] is one contiguous vector.
    %c = tile.matmul %a, %b : !tile.tile<128x128xf16, l0a>, !tile.tile<128x128xf16, l0b> -> !tile.tile<128x128xf32, l0c>
    %m = tile.reduce_max %t, axis = 1 : !tile.tile<64x64xf32, ub> -> !tile.tile<64x1xf32, ub>
    func.return
  }
}

// -----

// A padded physical shape with a valid shape is the way to hold 7 columns.
// CHECK-LABEL: builtin.module attributes {pypto.target = "ascend910b"}
// CHECK: tile.exp %{{.*}} : !tile.tile<64x8xf32, ub, valid = [64, 7]>
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @aligned(%t: !tile.tile<64x8xf32, ub, valid = [64, 7]>) {
    %e = tile.exp %t : !tile.tile<64x8xf32, ub, valid = [64, 7]>
    func.return
  }
}

