// Every tv verifier rejects malformed IR with a message naming the problem.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{!tv.tensor element type must be one of f16, bf16, f32, i8, i16, i32, got f64}}
func.func @bad_element_type(%x: !tv.tensor<4xf64>) {
  func.return
}

// -----

// expected-error @+1 {{a #tv.csr tensor must have rank 2, got rank 1}}
func.func @csr_rank(%x: !tv.tensor<8xf16, #tv.csr<rows = 8, cols = 8, nnz = 4, index = i32>>) {
  func.return
}

// -----

// expected-error @+1 {{#tv.csr cols = 16 does not match the tensor dimension 8}}
func.func @csr_shape(%x: !tv.tensor<8x8xf16, #tv.csr<rows = 8, cols = 16, nnz = 4, index = i32>>) {
  func.return
}

// -----

// expected-error @+1 {{#tv.csr index type must be one of i16, i32, i64, got i8}}
func.func @csr_index(%x: !tv.tensor<8x8xf16, #tv.csr<rows = 8, cols = 8, nnz = 4, index = i8>>) {
  func.return
}

// -----

// expected-error @+1 {{#tv.csr nnz = 65 exceeds rows * cols = 64}}
func.func @csr_nnz(%x: !tv.tensor<8x8xf16, #tv.csr<rows = 8, cols = 8, nnz = 65, index = i32>>) {
  func.return
}

// -----

// expected-error @+1 {{!tv.tensor encoding must be #tv.csr, got "dense"}}
func.func @other_encoding(%x: !tv.tensor<8x8xf16, "dense">) {
  func.return
}

// -----

func.func @sparse_operand(%x: !tv.tensor<8x8xf16, #tv.csr<rows = 8, cols = 8, nnz = ?, index = i32>>) {
  // expected-error @+1 {{the operand of tv.exp must be a dense tensor}}
  %0 = tv.exp %x : !tv.tensor<8x8xf16, #tv.csr<rows = 8, cols = 8, nnz = ?, index = i32>>
  func.return
}

// -----

func.func @view_rank(%x: !tv.tensor<64x128xf16>) {
  // expected-error @+1 {{expected 2 sizes for a rank-2 source, got 1}}
  %0 = tv.view %x[0, 0][16][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16xf16>
  func.return
}

// -----

func.func @view_bounds(%x: !tv.tensor<64x128xf16>) {
  // expected-error @+1 {{dimension 1 is out of bounds: offset 8 + (size 64 - 1) * stride 2 = 134 >= 128}}
  %0 = tv.view %x[0, 8][16, 64][1, 2] : !tv.tensor<64x128xf16> to !tv.tensor<16x64xf16>
  func.return
}

// -----

func.func @view_offset_past_end(%x: !tv.tensor<64x128xf16>, %n: index) {
  // expected-error @+1 {{dimension 0 is out of bounds: offset 65 exceeds the source size 64}}
  %0 = tv.view %x[65, 0][%n, 8][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<?x8xf16>
  func.return
}

// -----

func.func @view_stride(%x: !tv.tensor<64x128xf16>) {
  // expected-error @+1 {{stride 0 of dimension 0 must be at least 1}}
  %0 = tv.view %x[0, 0][16, 8][0, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16x8xf16>
  func.return
}

// -----

func.func @view_result_shape(%x: !tv.tensor<64x128xf16>) {
  // expected-error @+1 {{result shape 16x4 is not the sizes 16x8 with some static unit dimensions dropped}}
  %0 = tv.view %x[0, 0][16, 8][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16x4xf16>
  func.return
}

// -----

func.func @view_element_type(%x: !tv.tensor<64x128xf16>) {
  // expected-error @+1 {{result element type f32 differs from the source element type f16}}
  %0 = tv.view %x[0, 0][16, 8][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16x8xf32>
  func.return
}

// -----

func.func @dim_index(%x: !tv.tensor<?x8xf16>) {
  // expected-error @+1 {{dimension index 2 is out of range for rank 2}}
  %0 = tv.dim %x, 2 : !tv.tensor<?x8xf16>
  func.return
}

// -----

func.func @fill_sizes(%s: f32) {
  // expected-error @+1 {{expected 1 dynamic size operands for the '?' dimensions of !tv.tensor<?x8xf16>, got 0}}
  %0 = tv.fill %s : f32 -> !tv.tensor<?x8xf16>
  func.return
}

// -----

func.func @fill_scalar_type(%s: i32) {
  // expected-error @+1 {{a scalar operand of a f16 tensor must have a float type (f16, bf16, f32), got i32}}
  %0 = tv.fill %s : i32 -> !tv.tensor<4xf16>
  func.return
}

// -----

func.func @unary_integer(%x: !tv.tensor<4xi32>) {
  // expected-error @+1 {{tv.exp expects a float tensor (f16, bf16, f32), got !tv.tensor<4xi32>}}
  %0 = tv.exp %x : !tv.tensor<4xi32>
  func.return
}

// -----

func.func @broadcast(%x: !tv.tensor<4x8xf16>, %y: !tv.tensor<3xf16>) {
  // expected-error @+1 {{shapes 4x8 and 3 are not broadcast-compatible: dimension 1 of the result is 8 in one and 3 in the other}}
  %0 = tv.add %x, %y : !tv.tensor<4x8xf16>, !tv.tensor<3xf16> -> !tv.tensor<4x8xf16>
  func.return
}

// -----

func.func @broadcast_result(%x: !tv.tensor<4x8xf16>, %y: !tv.tensor<8xf16>) {
  // expected-error @+1 {{result type !tv.tensor<8xf16> does not match the expected type !tv.tensor<4x8xf16>}}
  %0 = tv.mul %x, %y : !tv.tensor<4x8xf16>, !tv.tensor<8xf16> -> !tv.tensor<8xf16>
  func.return
}

// -----

func.func @binary_element_types(%x: !tv.tensor<4xf16>, %y: !tv.tensor<4xf32>) {
  // expected-error @+1 {{operand element types differ: f16 and f32; insert a tv.cast}}
  %0 = tv.sub %x, %y : !tv.tensor<4xf16>, !tv.tensor<4xf32> -> !tv.tensor<4xf16>
  func.return
}

// -----

func.func @binary_scalars(%a: f32, %b: f32) {
  // expected-error @+1 {{tv.max needs at least one tensor operand; use arith for scalars}}
  %0 = tv.max %a, %b : f32, f32 -> !tv.tensor<4xf32>
  func.return
}

// -----

func.func @integer_scalar(%x: !tv.tensor<4xi8>, %s: i32) {
  // expected-error @+1 {{a scalar operand of a i8 tensor must have type i8, got i32}}
  %0 = tv.add %x, %s : !tv.tensor<4xi8>, i32 -> !tv.tensor<4xi8>
  func.return
}

// -----

func.func @integer_div(%x: !tv.tensor<4xi32>) {
  // expected-error @+1 {{tv.div expects float operands (f16, bf16, f32), got i32}}
  %0 = tv.div %x, %x : !tv.tensor<4xi32>
  func.return
}

// -----

func.func @cast_shape(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{tv.cast changes only the element type, but the shape changes from 4x8 to 8x4}}
  %0 = tv.cast %x : !tv.tensor<4x8xf16> to !tv.tensor<8x4xf32>
  func.return
}

// -----

func.func @matmul_contraction(%a: !tv.tensor<64x32xf16>, %b: !tv.tensor<16x32xf16>) {
  // expected-error @+1 {{contraction dimensions differ: 32 (lhs 64x32) and 16 (rhs 16x32)}}
  %0 = tv.matmul %a, %b acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<64x32xf16>
  func.return
}

// -----

func.func @matmul_rank(%a: !tv.tensor<32xf16>, %b: !tv.tensor<32x16xf16>) {
  // expected-error @+1 {{matmul operands must have rank >= 2, got 32 and 32x16}}
  %0 = tv.matmul %a, %b acc(f32) : !tv.tensor<32xf16>, !tv.tensor<32x16xf16> -> !tv.tensor<16xf16>
  func.return
}

// -----

func.func @matmul_batch(%a: !tv.tensor<2x8x4xf16>, %b: !tv.tensor<3x4x8xf16>) {
  // expected-error @+1 {{batch dimension 0 differs: 2 (lhs) and 3 (rhs)}}
  %0 = tv.matmul %a, %b acc(f32) : !tv.tensor<2x8x4xf16>, !tv.tensor<3x4x8xf16> -> !tv.tensor<2x8x8xf16>
  func.return
}

// -----

func.func @matmul_acc(%a: !tv.tensor<8x4xf16>, %b: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{f16 inputs accumulate in f32, got acc(f16)}}
  %0 = tv.matmul %a, %b acc(f16) : !tv.tensor<8x4xf16>, !tv.tensor<4x8xf16> -> !tv.tensor<8x8xf16>
  func.return
}

// -----

func.func @matmul_int_result(%a: !tv.tensor<8x4xi8>, %b: !tv.tensor<4x8xi8>) {
  // expected-error @+1 {{the result of a i8 matmul must have element type i32, got i8}}
  %0 = tv.matmul %a, %b acc(i32) : !tv.tensor<8x4xi8>, !tv.tensor<4x8xi8> -> !tv.tensor<8x8xi8>
  func.return
}

// -----

func.func @matmul_element_type(%a: !tv.tensor<8x4xi32>, %b: !tv.tensor<4x8xi32>) {
  // expected-error @+1 {{tv.matmul supports f16, bf16, f32, i8 inputs, got i32}}
  %0 = tv.matmul %a, %b acc(i32) : !tv.tensor<8x4xi32>, !tv.tensor<4x8xi32> -> !tv.tensor<8x8xi32>
  func.return
}

// -----

func.func @matmul_result(%a: !tv.tensor<8x4xf16>, %b: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{result type !tv.tensor<8x4xf16> does not match the expected type !tv.tensor<8x8xf16>}}
  %0 = tv.matmul %a, %b acc(f32) : !tv.tensor<8x4xf16>, !tv.tensor<4x8xf16> -> !tv.tensor<8x4xf16>
  func.return
}

// -----

func.func @reduce_axis(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = tv.reduce_sum %x [2] : !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
  func.return
}

// -----

func.func @reduce_order(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{axes must be strictly increasing, got [1, 0]}}
  %0 = tv.reduce_max %x [1, 0] : !tv.tensor<4x8xf16> -> !tv.tensor<f16>
  func.return
}

// -----

func.func @reduce_no_axes(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{tv.reduce_min needs at least one axis}}
  %0 = tv.reduce_min %x [] : !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
  func.return
}

// -----

func.func @reduce_result(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{result type !tv.tensor<4xf16> does not match the expected type !tv.tensor<4x1xf16>}}
  %0 = tv.reduce_sum %x [1] keepdims : !tv.tensor<4x8xf16> -> !tv.tensor<4xf16>
  func.return
}

// -----

func.func @reduce_empty(%x: !tv.tensor<4x0xf16>) {
  // expected-error @+1 {{tv.reduce_max of an empty dimension 1 has no value}}
  %0 = tv.reduce_max %x [1] : !tv.tensor<4x0xf16> -> !tv.tensor<4xf16>
  func.return
}

// -----

func.func @softmax_axis(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = tv.softmax %x axis = 2 : !tv.tensor<4x8xf16>
  func.return
}

// -----

func.func @softmax_integer(%x: !tv.tensor<4x8xi32>) {
  // expected-error @+1 {{tv.softmax expects a float tensor, got !tv.tensor<4x8xi32>}}
  %0 = tv.softmax %x axis = 1 : !tv.tensor<4x8xi32>
  func.return
}

// -----

func.func @transpose_permutation(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{[0, 0] is not a permutation of the 2 dimensions of the operand}}
  %0 = tv.transpose %x [0, 0] : !tv.tensor<4x8xf16> -> !tv.tensor<4x4xf16>
  func.return
}

// -----

func.func @transpose_result(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{result type !tv.tensor<4x8xf16> does not match the expected type !tv.tensor<8x4xf16>}}
  %0 = tv.transpose %x [1, 0] : !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
  func.return
}
