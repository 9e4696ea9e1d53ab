// tv-to-tile alone does not lower the sparse ops: it names the op and the pass
// to run first (pypto-lower runs tv-sparse-to-tile before it).
// RUN: pypto-opt %s --split-input-file --verify-diagnostics -p 'tv-to-tile{target=ascend910b}'

func.func @gather(%x: !tv.tensor<16x32xf16>, %i: !tv.tensor<4xi32>) -> !tv.tensor<4x32xf16> {
  // expected-error @+1 {{tv-to-tile cannot lower 'tv.gather': run tv-sparse-to-tile first (docs/sparse.md)}}
  %0 = tv.gather %x[%i] : !tv.tensor<16x32xf16>, !tv.tensor<4xi32> -> !tv.tensor<4x32xf16>
  func.return %0 : !tv.tensor<4x32xf16>
}

// -----

func.func @spmm(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, %b: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> {
  // expected-error @+1 {{tv-to-tile cannot lower 'tv.spmm': run tv-sparse-to-tile first (docs/sparse.md)}}
  %0 = tv.spmm %a, %b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %0 : !tv.tensor<64x32xf16>
}
