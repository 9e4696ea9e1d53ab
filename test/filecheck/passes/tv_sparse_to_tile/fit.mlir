// Tiles that do not fit the target: 64x64 blocks take the row nest instead of
// the cube on tiny (the remark says why); a block that to_dense moves through
// UB and cannot fit there is a located error, not an internal one.
// RUN: not pypto-opt %s --split-input-file -p 'tv-sparse-to-tile{target=tiny}' 2>&1 | filecheck %s

// CHECK: fit.mlir:[[# @LINE + 3]]:3: remark: tv-sparse-to-tile: tv.spmm by rows, 64 columns a tile: per stored entry a gathered row of the rhs multiply-accumulated in f32 in UB (64x64 blocks do not fit the cube's memories)
// CHECK-NOT: tile.matmul
func.func @spmm(%a: !tv.tensor<128x128xf16, #tv.csr<rows = 128, cols = 128, nnz = ?, index = i32, block = [64, 64]>>, %b: !tv.tensor<128x64xf16>) -> !tv.tensor<128x64xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<128x128xf16, #tv.csr<rows = 128, cols = 128, nnz = ?, index = i32, block = [64, 64]>>, !tv.tensor<128x64xf16> -> !tv.tensor<128x64xf16>
  func.return %c : !tv.tensor<128x64xf16>
}

// -----

// CHECK: fit.mlir:[[# @LINE + 2]]:3: error: tv-sparse-to-tile: no tile of 16 columns fits in ub of target 'tiny' (double-buffered)
func.func @dense(%a: !tv.tensor<128x128xf16, #tv.csr<rows = 128, cols = 128, nnz = ?, index = i32, block = [64, 64]>>) -> !tv.tensor<128x128xf16> {
  %c = tv.to_dense %a : !tv.tensor<128x128xf16, #tv.csr<rows = 128, cols = 128, nnz = ?, index = i32, block = [64, 64]>> -> !tv.tensor<128x128xf16>
  func.return %c : !tv.tensor<128x128xf16>
}
