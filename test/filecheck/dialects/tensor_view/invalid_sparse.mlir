// The sparse encodings' and ops' verifiers reject malformed IR, naming the problem.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{#tv.csr rows = 24 is not a multiple of the block size 16}}
func.func @block_rows(%x: !tv.tensor<24x32xf16, #tv.csr<rows = 24, cols = 32, nnz = ?, index = i32, block = [16, 16]>>) {
  func.return
}

// -----

// expected-error @+1 {{#tv.csr block must be two sizes >= 1, got [0, 16]}}
func.func @block_zero(%x: !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [0, 16]>>) {
  func.return
}

// -----

// expected-error @+1 {{#tv.csr block must be two sizes >= 1, got [16]}}
func.func @block_rank(%x: !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = ?, index = i32, block = [16]>>) {
  func.return
}

// -----

// expected-error @+1 {{#tv.csr nnz = 5 exceeds the number of blocks = 4}}
func.func @block_nnz(%x: !tv.tensor<32x32xf16, #tv.csr<rows = 32, cols = 32, nnz = 5, index = i32, block = [16, 16]>>) {
  func.return
}

// -----

func.func @assemble_dtype(%o: !tv.tensor<9xi16>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?xf16>) {
  // expected-error @+1 {{the row offsets of tv.assemble must have element type i32, got i16}}
  %a = tv.assemble %o, %i, %v : !tv.tensor<9xi16>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  func.return
}

// -----

func.func @assemble_offsets(%o: !tv.tensor<8xi32>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?xf16>) {
  // expected-error @+1 {{the row offsets of tv.assemble must have shape 9 for}}
  %a = tv.assemble %o, %i, %v : !tv.tensor<8xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  func.return
}

// -----

func.func @assemble_lengths(%o: !tv.tensor<9xi32>, %i: !tv.tensor<5xi32>, %v: !tv.tensor<6xf16>) {
  // expected-error @+1 {{tv.assemble: the column indices (5) and values (6) must have the same length}}
  %a = tv.assemble %o, %i, %v : !tv.tensor<9xi32>, !tv.tensor<5xi32>, !tv.tensor<6xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  func.return
}

// -----

func.func @assemble_block_values(%o: !tv.tensor<5xi32>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?x16x8xf16>) {
  // expected-error @+1 {{the values of tv.assemble must have shape ?x16x16 for}}
  %a = tv.assemble %o, %i, %v : !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?x16x8xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  func.return
}

// -----

func.func @assemble_dynamic(%o: !tv.tensor<?xi32>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?xf16>) {
  // expected-error @+1 {{tv.assemble needs a static shape (the column count is not in the buffers), got ?x16}}
  %a = tv.assemble %o, %i, %v : !tv.tensor<?xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<?x16xf16, #tv.csr<rows = ?, cols = 16, nnz = ?, index = i32>>
  func.return
}

// -----

func.func @assemble_i64(%o: !tv.tensor<9xi32>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?xf16>) {
  // expected-error @+1 {{tv.assemble: a #tv.csr tensor with index = i64 has no index tensors (tensors hold i8, i16, i32)}}
  %a = tv.assemble %o, %i, %v : !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i64>>
  func.return
}

// -----

func.func @assemble_dense(%o: !tv.tensor<9xi32>, %i: !tv.tensor<?xi32>, %v: !tv.tensor<?xf16>) {
  // expected-error @+1 {{the result of tv.assemble must be a sparse (#tv.csr) tensor, got the dense !tv.tensor<8x16xf16>}}
  %a = tv.assemble %o, %i, %v : !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16>
  func.return
}

// -----

func.func @spmm_dense_lhs(%a: !tv.tensor<8x16xf16>, %b: !tv.tensor<16x32xf16>) {
  // expected-error @+1 {{the lhs of tv.spmm must be a sparse (#tv.csr) tensor, got the dense !tv.tensor<8x16xf16>}}
  %0 = tv.spmm %a, %b : !tv.tensor<8x16xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
  func.return
}

// -----

func.func @spmm_k(%a: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<24x32xf16>) {
  // expected-error @+1 {{contraction dimensions differ: 16 and 24}}
  %0 = tv.spmm %a, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<24x32xf16> -> !tv.tensor<8x32xf16>
  func.return
}

// -----

func.func @spmm_types(%a: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<16x32xf32>) {
  // expected-error @+1 {{operand element types differ: f16 and f32; insert a tv.cast}}
  %0 = tv.spmm %a, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x32xf32> -> !tv.tensor<8x32xf32>
  func.return
}

// -----

func.func @spmm_int(%a: !tv.tensor<8x16xi32, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<16x32xi32>) {
  // expected-error @+1 {{the lhs of tv.spmm must have a float element type (f16, bf16, f32), got i32}}
  %0 = tv.spmm %a, %b : !tv.tensor<8x16xi32, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x32xi32> -> !tv.tensor<8x32xi32>
  func.return
}

// -----

func.func @spmm_result(%a: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<16x32xf16>) {
  // expected-error @+1 {{result type !tv.tensor<8x16xf16> does not match the expected type !tv.tensor<8x32xf16>}}
  %0 = tv.spmm %a, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x32xf16> -> !tv.tensor<8x16xf16>
  func.return
}

// -----

func.func @spmv_rank(%a: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<16x1xf16>) {
  // expected-error @+1 {{the rhs of tv.spmv must be a vector (rank 1), got !tv.tensor<16x1xf16>}}
  %0 = tv.spmv %a, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x1xf16> -> !tv.tensor<8xf16>
  func.return
}

// -----

func.func @sddmm_columns(%m: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %q: !tv.tensor<8x32xf16>, %k: !tv.tensor<12x32xf16>) {
  // expected-error @+1 {{the mask's columns and the rhs columns differ: 16 and 12}}
  %0 = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<8x32xf16>, !tv.tensor<12x32xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  func.return
}

// -----

func.func @sddmm_result(%m: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %q: !tv.tensor<8x32xf16>, %k: !tv.tensor<16x32xf16>) {
  // expected-error @+1 {{does not match the expected type !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>}}
  %0 = tv.sddmm %m, %q, %k transpose_b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<8x32xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<8x16xf16>
  func.return
}

// -----

func.func @softmax_dense(%x: !tv.tensor<8x16xf16>) {
  // expected-error @+1 {{the operand of tv.sparse_softmax must be a sparse (#tv.csr) tensor}}
  %0 = tv.sparse_softmax %x : !tv.tensor<8x16xf16>
  func.return
}

// -----

func.func @to_dense_sparse_result(%x: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>) {
  // expected-error @+1 {{the result of tv.to_dense must be a dense tensor}}
  %0 = tv.to_dense %x : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  func.return
}

// -----

func.func @gather_index_type(%x: !tv.tensor<16x32xf16>, %i: !tv.tensor<4xf32>) {
  // expected-error @+1 {{the indices of tv.gather must have element type i16, i32, got f32}}
  %0 = tv.gather %x[%i] : !tv.tensor<16x32xf16>, !tv.tensor<4xf32> -> !tv.tensor<4x32xf16>
  func.return
}

// -----

func.func @gather_shape(%x: !tv.tensor<16x32xf16>, %i: !tv.tensor<4xi32>) {
  // expected-error @+1 {{result type !tv.tensor<4x16xf16> does not match the expected type !tv.tensor<4x32xf16>}}
  %0 = tv.gather %x[%i] : !tv.tensor<16x32xf16>, !tv.tensor<4xi32> -> !tv.tensor<4x16xf16>
  func.return
}

// -----

func.func @gather_sparse(%x: !tv.tensor<16x32xf16, #tv.csr<rows = 16, cols = 32, nnz = ?, index = i32>>, %i: !tv.tensor<4xi32>) {
  // expected-error @+1 {{the source of tv.gather must be a dense tensor}}
  %0 = tv.gather %x[%i] : !tv.tensor<16x32xf16, #tv.csr<rows = 16, cols = 32, nnz = ?, index = i32>>, !tv.tensor<4xi32> -> !tv.tensor<4x32xf16>
  func.return
}
