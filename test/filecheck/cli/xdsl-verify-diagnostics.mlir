// --xdsl-verify-diagnostics is xdsl-opt's --verify-diagnostics, for test suites
// written for xdsl-opt: a failing verifier's or pass's exception is printed to
// stdout, as xDSL prints it (the message, then the module with the failing op
// marked), where the chunk's output would be, and the chunk counts as a success.
// Parse errors stay errors. It excludes MLIR's --verify-diagnostics.
// RUN: bash -c 'pypto-opt %s --split-input-file --xdsl-verify-diagnostics; echo "exit=$?"' 2>&1 | filecheck %s
// RUN: not pypto-opt %s --xdsl-verify-diagnostics --verify-diagnostics 2>&1 | filecheck %s --check-prefix=BOTH

func.func @bad() {
  %0 = arith.constant 1 : i32
  func.return %0 : i32
}

// -----

func.func @fine() {
  func.return
}

// -----

func.func @parse_error() {
  %x = arith.constant : i32
}

// CHECK:      Expected arguments to have the same types as the function output types: expected [], got [i32]
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      ^^^^^
// CHECK-NEXT: | Operation does not verify: Expected arguments to have the same types
// CHECK:      // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @fine() {
// CHECK:      // -----
// CHECK-NEXT: xdsl-verify-diagnostics.mlir:23:23: error:
// CHECK:      exit=1

// BOTH: pypto-opt: error: --verify-diagnostics and --xdsl-verify-diagnostics exclude each other
