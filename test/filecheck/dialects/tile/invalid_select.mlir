// The tile.select verifier names the operand and the rule it breaks.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics

func.func @space(%a: !tile.tile<16x16xf16, l1>, %b: !tile.tile<16x16xf16, ub>) {
  // expected-error @+1 {{expects its lhs in ub, got l1}}
  %r = tile.select lt %a, %b, %b, %b : !tile.tile<16x16xf16, l1>, !tile.tile<16x16xf16, ub>, !tile.tile<16x16xf16, ub>, !tile.tile<16x16xf16, ub>
  func.return
}

// -----

func.func @bf16(%a: !tile.tile<16x16xbf16, ub>) {
  // expected-error @+1 {{does not support element type bf16 for its lhs (expected f16, f32, i32)}}
  %r = tile.select lt %a, %a, %a, %a : !tile.tile<16x16xbf16, ub>
  func.return
}

// -----

func.func @compared(%a: !tile.tile<16x16xf32, ub>, %b: !tile.tile<16x16xi32, ub>) {
  // expected-error @+1 {{its lhs and rhs have element types f32 and i32}}
  %r = tile.select lt %a, %b, %a, %a : !tile.tile<16x16xf32, ub>, !tile.tile<16x16xi32, ub>, !tile.tile<16x16xf32, ub>, !tile.tile<16x16xf32, ub>
  func.return
}

// -----

func.func @widths(%a: !tile.tile<16x16xf32, ub>, %b: !tile.tile<16x16xf16, ub>) {
  // expected-error @+1 {{the compared type f32 and the selected type f16 differ in width (a 16-bit compare gives 128 lane bits a repeat, a 32-bit one 64)}}
  %r = tile.select lt %a, %a, %b, %b : !tile.tile<16x16xf32, ub>, !tile.tile<16x16xf32, ub>, !tile.tile<16x16xf16, ub>, !tile.tile<16x16xf16, ub>
  func.return
}

// -----

func.func @broadcast(%a: !tile.tile<16x16xf32, ub>, %b: !tile.tile<16x8xf32, ub>) {
  // expected-error @+1 {{its on_false against the result: operands disagree in dim 1: 8 (valid 8) vs 16 (valid 16); dims must match or one must be 1}}
  %r = tile.select lt %a, %a, %a, %b : !tile.tile<16x16xf32, ub>, !tile.tile<16x16xf32, ub>, !tile.tile<16x16xf32, ub>, !tile.tile<16x8xf32, ub>
  func.return
}

// -----

func.func @valid(%a: !tile.tile<16x16xf32, ub>, %b: !tile.tile<16x16xf32, ub, valid = [8, 16]>) {
  // expected-error @+1 {{its rhs against the result: operands disagree in dim 0: 16 (valid 8) vs 16 (valid 16)}}
  %r = tile.select lt %a, %b, %a, %a : !tile.tile<16x16xf32, ub>, !tile.tile<16x16xf32, ub, valid = [8, 16]>, !tile.tile<16x16xf32, ub>, !tile.tile<16x16xf32, ub>
  func.return
}
