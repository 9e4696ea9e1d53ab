// tile.sin, tile.cos and tile.erf print in their custom form and survive a
// round trip through the generic form; like tile.exp they take float ub tiles.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: pypto-opt %s --print-op-generic | pypto-opt | filecheck %s

// CHECK-LABEL: func.func @math
func.func @math(%t: !tile.tile<8x64xf32, ub, valid = [?, 60]>, %h: !tile.tile<16x16xf16, ub>) {
  // CHECK: tile.sin %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %0 = tile.sin %t : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.cos %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %1 = tile.cos %t : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.erf %{{.*}} : !tile.tile<16x16xf16, ub>
  %2 = tile.erf %h : !tile.tile<16x16xf16, ub>
  func.return
}
