// --verify-diagnostics with deliberately wrong expectations: each mismatch is
// reported with both sides, in MLIR's wording, and the exit status is 1. Chunks
// whose diagnostics match still pass and print their output.
// RUN: bash -c 'pypto-opt %s --split-input-file --verify-diagnostics -p pypto-test-diagnostics 2>&1 >/dev/null; echo "exit=$?"' | filecheck %s --strict-whitespace

// The expected text is not in the message: both sides are reported.
func.func @wrong_text(%a: i32) -> i64 {
  // expected-error @+1 {{this is not the message}}
  func.return %a : i32
}

// CHECK: verify-diagnostics-failing.mlir:9:3: error: unexpected error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK-NEXT: {{^}}  func.return %a : i32{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NEXT: verify-diagnostics-failing.mlir:8:6: error: expected error "this is not the message" was not produced
// CHECK-NEXT: {{^}}  // expected{{[-]}}error @+1 {{[{][{]}}this is not the message{{[}][}]}}{{$}}
// CHECK-NEXT: {{^}}     ^~~~~~~~~~~~~~~~~~~~~~~{{$}}

// -----

// The right message with the wrong kind.
func.func @wrong_kind(%a: i32) -> i32 {
  %0 = arith.addi %a, %a {test.diagnostic = "remark: tile sizes 64x128"} : i32
  // expected-warning @above {{tile sizes}}
  func.return %0 : i32
}

// CHECK: verify-diagnostics-failing.mlir:24:6: error: 'remark' diagnostic emitted when expecting a 'warning'
// CHECK-NEXT: {{^}}  // expected{{[-]}}warning @above

// -----

// The right message on the wrong line.
func.func @wrong_line(%a: i32) -> i32 {
  // expected-remark @+2 {{tile sizes}}
  %0 = arith.addi %a, %a {test.diagnostic = "remark: tile sizes 64x128"} : i32
  func.return %0 : i32
}

// CHECK: verify-diagnostics-failing.mlir:36:3: error: unexpected remark: tile sizes 64x128
// CHECK: verify-diagnostics-failing.mlir:35:6: error: expected remark "tile sizes" was not produced

// -----

// A diagnostic that nothing expects, and an expectation that nothing meets.
func.func @unexpected(%a: i32) -> i32 {
  %0 = arith.addi %a, %a {test.diagnostic = "warning: slow path"} : i32
  func.return %0 : i32
}

// expected-error @below {{an error that never comes}}
func.func @ok() {
  func.return
}

// CHECK: verify-diagnostics-failing.mlir:47:3: error: unexpected warning: slow path
// CHECK: verify-diagnostics-failing.mlir:51:4: error: expected error "an error that never comes" was not produced

// -----

// This chunk's expectation is met.
func.func @fine(%a: i32) -> i64 {
  func.return %a : i32 // expected-error {{got [i32]}}
}

// CHECK-NOT: : error:
// CHECK: exit=1
