// The tv.select verifier names the operand and the rule it breaks.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics

func.func @compared_types(%a: !tv.tensor<4xf32>, %b: !tv.tensor<4xf16>) {
  // expected-error @+1 {{the lhs and rhs of tv.select have element types f32 and f16; insert a tv.cast}}
  %r = tv.select lt %a, %b, %a, %a : !tv.tensor<4xf32>, !tv.tensor<4xf16>, !tv.tensor<4xf32>, !tv.tensor<4xf32> -> !tv.tensor<4xf32>
  func.return
}

// -----

func.func @selected_types(%a: !tv.tensor<4xf32>, %b: !tv.tensor<4xi32>) {
  // expected-error @+1 {{the on_true and on_false of tv.select have element types f32 and i32; insert a tv.cast}}
  %r = tv.select lt %a, %a, %a, %b : !tv.tensor<4xf32>, !tv.tensor<4xf32>, !tv.tensor<4xf32>, !tv.tensor<4xi32> -> !tv.tensor<4xf32>
  func.return
}

// -----

func.func @widths(%a: !tv.tensor<4xf16>, %b: !tv.tensor<4xf32>) {
  // expected-error @+1 {{the compared type f16 and the selected type f32 differ in width (a 16-bit compare gives 128 lane bits a repeat, a 32-bit one 64); cast one side (tv.cast) so both are 16- or both 32-bit}}
  %r = tv.select lt %a, %a, %b, %b : !tv.tensor<4xf16>, !tv.tensor<4xf16>, !tv.tensor<4xf32>, !tv.tensor<4xf32> -> !tv.tensor<4xf32>
  func.return
}

// -----

func.func @bf16_counts_as_32_bit(%a: !tv.tensor<4xbf16>, %b: !tv.tensor<4xf16>) {
  // expected-error @+1 {{the compared type bf16 and the selected type f16 differ in width}}
  %r = tv.select lt %a, %a, %b, %b : !tv.tensor<4xbf16>, !tv.tensor<4xbf16>, !tv.tensor<4xf16>, !tv.tensor<4xf16> -> !tv.tensor<4xf16>
  func.return
}

// -----

func.func @element_type(%a: !tv.tensor<4xi8>) {
  // expected-error @+1 {{the compared operands must have element type f16, bf16, f32, i32, got i8}}
  %r = tv.select lt %a, %a, %a, %a : !tv.tensor<4xi8>, !tv.tensor<4xi8>, !tv.tensor<4xi8>, !tv.tensor<4xi8> -> !tv.tensor<4xi8>
  func.return
}

// -----

func.func @shapes(%a: !tv.tensor<4x8xf32>, %b: !tv.tensor<4x3xf32>) {
  // expected-error @+1 {{shapes 4x8 and 4x3 are not broadcast-compatible}}
  %r = tv.select lt %a, %a, %a, %b : !tv.tensor<4x8xf32>, !tv.tensor<4x8xf32>, !tv.tensor<4x8xf32>, !tv.tensor<4x3xf32> -> !tv.tensor<4x8xf32>
  func.return
}

// -----

func.func @result(%a: !tv.tensor<4x8xf32>, %b: !tv.tensor<4x1xf32>) {
  // expected-error @+1 {{result type !tv.tensor<4x1xf32> does not match the expected type !tv.tensor<4x8xf32>}}
  %r = tv.select lt %a, %b, %b, %b : !tv.tensor<4x8xf32>, !tv.tensor<4x1xf32>, !tv.tensor<4x1xf32>, !tv.tensor<4x1xf32> -> !tv.tensor<4x1xf32>
  func.return
}

// -----

func.func @sparse(%a: !tv.tensor<8x8xf32, #tv.csr<rows = 8, cols = 8, nnz = 4, index = i32>>, %b: !tv.tensor<8x8xf32>) {
  // expected-error @+1 {{the lhs of tv.select must be a dense tensor}}
  %r = tv.select lt %a, %b, %b, %b : !tv.tensor<8x8xf32, #tv.csr<rows = 8, cols = 8, nnz = 4, index = i32>>, !tv.tensor<8x8xf32>, !tv.tensor<8x8xf32>, !tv.tensor<8x8xf32> -> !tv.tensor<8x8xf32>
  func.return
}

// -----

func.func @predicate(%a: !tv.tensor<4xf32>) {
  // expected-error @+1 {{Expected `lt`, `le`, `gt`, `ge`, `eq`, or `ne`.}}
  %r = tv.select lesser %a, %a, %a, %a : !tv.tensor<4xf32>, !tv.tensor<4xf32>, !tv.tensor<4xf32>, !tv.tensor<4xf32> -> !tv.tensor<4xf32>
  func.return
}
