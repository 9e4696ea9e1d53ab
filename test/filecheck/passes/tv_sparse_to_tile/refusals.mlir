// What tv-sparse-to-tile does not lower yet is a located error naming the op,
// never an internal error: sddmm forms without a nest (CSR without transpose_b,
// block-CSR off the cube), an assemble of index arrays not taken from one
// disassembled tensor, dense ops on index arrays, a tensor returned twice.
// Dense ops beside sparse ones are lowered (sparse_outline.mlir).
// RUN: pypto-opt %s --split-input-file --verify-diagnostics -p 'tv-sparse-to-tile{target=ascend910b}'

func.func @csr_sddmm(%m: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, %q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>) -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>> {
  // expected-error @+1 {{tv-sparse-to-tile lowers a CSR tv.sddmm with transpose_b only (the rhs as rows, gathered by the column indices)}}
  %s = tv.sddmm %m, %q, %k : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>
  func.return %s : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>
}

// -----

func.func @bsr_sddmm_k(%m: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, %q: !tv.tensor<64x40xf16>, %k: !tv.tensor<64x40xf16>) -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>> {
  // expected-error @+1 {{tv-sparse-to-tile lowers a block-CSR tv.sddmm on the cube: K = 40 is not a multiple of the 16-element fractal}}
  %s = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<64x40xf16>, !tv.tensor<64x40xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  func.return %s : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
}

// -----

func.func @bsr_sddmm_f32(%m: !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, %q: !tv.tensor<64x32xf32>, %k: !tv.tensor<64x32xf32>) -> !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>> {
  // expected-error @+1 {{tv-sparse-to-tile lowers a block-CSR tv.sddmm on the cube: the cube path takes f16/bf16 blocks, not f32}}
  %s = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<64x32xf32>, !tv.tensor<64x32xf32> -> !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  func.return %s : !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
}

// -----

func.func @assemble(%o: !tv.tensor<5xi32>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?xf16>, %b: !tv.tensor<8x4xf16>) -> !tv.tensor<4x4xf16> {
  // expected-error @+1 {{tv-sparse-to-tile lowers a tv.assemble of the offsets and indices of one disassembled sparse tensor only (the values may be computed)}}
  %s = tv.assemble %o, %i, %v : !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>>
  %0 = tv.spmm %s, %b : !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>>, !tv.tensor<8x4xf16> -> !tv.tensor<4x4xf16>
  func.return %0 : !tv.tensor<4x4xf16>
}

// -----

func.func @index_arrays(%a: !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>>) -> !tv.tensor<?xi32> {
  %o, %i, %v = tv.disassemble %a : !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>> -> !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16>
  // expected-error @+1 {{tv-sparse-to-tile: dense ops on the index arrays of a sparse tensor are not lowered (its values may be computed)}}
  %j = tv.neg %i : !tv.tensor<?xi32>
  func.return %j : !tv.tensor<?xi32>
}

// -----

func.func @returns_buffers(%a: !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>>) -> !tv.tensor<?xf16> {
  %o, %i, %v = tv.disassemble %a : !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>> -> !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16>
  // expected-error @+1 {{tv-sparse-to-tile: a function on sparse tensors returns a value no op computes (an argument's buffers)}}
  func.return %v : !tv.tensor<?xf16>
}

// -----

func.func @twice(%a: !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>>) -> (!tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>) {
  %d = tv.to_dense %a : !tv.tensor<4x8xf16, #tv.csr<rows = 4, cols = 8, nnz = ?, index = i32>> -> !tv.tensor<4x8xf16>
  // expected-error @+1 {{tv-sparse-to-tile: a function on sparse tensors returns a tensor twice}}
  func.return %d, %d : !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>
}
