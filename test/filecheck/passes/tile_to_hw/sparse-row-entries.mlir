// The multi-core split of loops over the stored entries of a row
// (pypto.row_entries, set by tv-sparse-to-tile): a store at an entry of block
// row %br moves with %br (the canonical form: rows own disjoint, increasing
// entry ranges), so the block rows are split over the cores when every entry
// is whole 32-byte blocks (a 16x16 f32 block); a CSR entry of 4 bytes would
// let two cores write one block, so that loop stays on one core (the CSR
// softmax of sparse-nnz-balance=false; by default it splits itself by whole
// blocks of entries, tv_sparse_to_tile/csr_softmax_split.mlir).
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-nnz-balance=false}' 2>&1 | filecheck %s

// CHECK-LABEL: func.func @block_softmax
// CHECK-SAME: ascend_hw.block_dim = 4
// CHECK: ascend_hw.block_idx
// CHECK-LABEL: func.func @csr_softmax
// CHECK-SAME: ascend_hw.block_dim = 1
// CHECK-NOT: ascend_hw.block_idx
// CHECK: func.return

func.func @block_softmax(%a: !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>) -> !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>> {
  %p = tv.sparse_softmax %a : !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  func.return %p : !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
}

func.func @csr_softmax(%a: !tv.tensor<8x32xf32, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>) -> !tv.tensor<8x32xf32, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>> {
  %p = tv.sparse_softmax %a : !tv.tensor<8x32xf32, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
  func.return %p : !tv.tensor<8x32xf32, #tv.csr<rows = 8, cols = 32, nnz = ?, index = i32>>
}
