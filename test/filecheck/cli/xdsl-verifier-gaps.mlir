// Ops whose xDSL 0.75 verifier raises a bare Exception or ValueError (an
// internal error) get MLIR's located verify error from a precheck
// (pypto_mlir/xdsl_verifier_gaps.py; scf.while: while-region-types.mlir).
// RUN: pypto-opt %s --split-input-file --verify-diagnostics

func.func @load_too_few_indices(%m: memref<4x4xf32>, %i: index) -> f32 {
  // expected-error @+1 {{'memref.load' op incorrect number of indices for load, expected 2 but got 1}}
  %0 = memref.load %m[%i] : memref<4x4xf32>
  func.return %0 : f32
}

// -----

func.func @store_too_many_indices(%m: memref<4xf32>, %i: index, %v: f32) {
  // expected-error @+1 {{'memref.store' op store index operand count not equal to memref rank}}
  "memref.store"(%v, %m, %i, %i) : (f32, memref<4xf32>, index, index) -> ()
  func.return
}

// -----

func.func @setup_values_without_names(%v: i32) {
  // expected-error @+1 {{'accfg.setup' op has 1 values for 0 parameter names}}
  %s = "accfg.setup"(%v) <{accelerator = "acc", param_names = [], operandSegmentSizes = array<i32: 1, 0>}> : (i32) -> !accfg.state<"acc">
  func.return
}

// -----

// expected-error @+1 {{'csl_wrapper.module' op layout block has 0 arguments after x, y, width, height for 1 parameters}}
"csl_wrapper.module"() <{width = 2 : i16, height = 2 : i16, target = "wse2", params = [#csl_wrapper.param<"z" default=1 : i16>]}> ({
^bb0(%x: i16, %y: i16, %w: i16, %h: i16):
  "csl_wrapper.yield"() <{fields = []}> : () -> ()
}, {
^bb0(%w: i16, %h: i16):
  "csl_wrapper.yield"() <{fields = []}> : () -> ()
}) : () -> ()
