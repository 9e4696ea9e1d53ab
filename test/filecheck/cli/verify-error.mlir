// A verifier failure names the op that failed (MLIR's `'name' op` prefix), at
// the line and column where the op starts, and the exit status is 1.
// RUN: bash -c 'pypto-opt %s --split-input-file; echo "exit=$?"' 2>&1 | filecheck %s --strict-whitespace

func.func @wrong_return(%a: i32) -> i64 {
  %0 = arith.addi %a, %a : i32
  func.return %0 : i32
}

// CHECK: verify-error.mlir:7:3: error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK-NEXT: {{^}}  func.return %0 : i32{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}

// -----

// An explicit location wins over the parse position.
func.func @explicit_loc(%a: i32) -> i64 {
  func.return %a : i32 loc("kernel.py":12:5)
}

// CHECK: kernel.py:12:5: error: 'func.return' op Expected arguments

// -----

// The last op of a block that needs a terminator is reported.
func.func @no_terminator() {
    %0 = "test.op"() : () -> i32
}

// CHECK: verify-error.mlir:27:5: error: 'test.op' op Operation test.op terminates block in single-block region but is not a terminator
// CHECK-NEXT: {{^}}    %0 = "test.op"() : () -> i32{{$}}
// CHECK-NEXT: {{^}}    ^{{$}}

// -----

// An empty block that needs a terminator is reported at the op owning it.
"test.op"() ({
^bb0:
}) : () -> ()

// CHECK: verify-error.mlir:37:1: error: 'test.op' op contains empty block in single-block region that expects at least a terminator
// CHECK: exit=1
