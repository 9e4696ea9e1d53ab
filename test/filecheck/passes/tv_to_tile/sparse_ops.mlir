// The sparse ops have no lowering below tv yet: pypto-lower stops at each with
// an error naming the op and the missing lowering (never an internal error).
// RUN: pypto-opt %s --split-input-file --verify-diagnostics -p 'pypto-lower{target=ascend910b}'

func.func @gather(%x: !tv.tensor<16x32xf16>, %i: !tv.tensor<4xi32>) -> !tv.tensor<4x32xf16> {
  // expected-error @+1 {{tv-to-tile cannot lower 'tv.gather': the sparse lowering it needs does not exist yet (docs/sparse.md)}}
  %0 = tv.gather %x[%i] : !tv.tensor<16x32xf16>, !tv.tensor<4xi32> -> !tv.tensor<4x32xf16>
  func.return %0 : !tv.tensor<4x32xf16>
}

// -----

func.func @assemble(%o: !tv.tensor<5xi32>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?xf16>, %b: !tv.tensor<8x4xf16>) -> !tv.tensor<4x4xf16> {
  // expected-error @+1 {{tv-to-tile cannot lower 'tv.assemble': the sparse lowering it needs does not exist yet (docs/sparse.md)}}
  %s = tv.assemble %o, %i, %v : !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>>
  %0 = tv.spmm %s, %b : !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>>, !tv.tensor<8x4xf16> -> !tv.tensor<4x4xf16>
  func.return %0 : !tv.tensor<4x4xf16>
}

// -----

func.func @spmm(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, %b: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> {
  // expected-error @+1 {{tv-to-tile cannot lower 'tv.spmm': the sparse lowering it needs does not exist yet (docs/sparse.md)}}
  %0 = tv.spmm %a, %b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %0 : !tv.tensor<64x32xf16>
}

// -----

func.func @attention(%m: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, %q: !tv.tensor<64x32xf16>, %k: !tv.tensor<64x32xf16>) -> !tv.tensor<64x64xf16> {
  // expected-error @+1 {{tv-to-tile cannot lower 'tv.sddmm'}}
  %s = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, !tv.tensor<64x32xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>
  %p = tv.sparse_softmax %s : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>
  %d = tv.to_dense %p : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>> -> !tv.tensor<64x64xf16>
  func.return %d : !tv.tensor<64x64xf16>
}
