// A pass that fails reports the error at the op it names (or, from inside a
// rewrite pattern, at the op the pattern was applied to), with exit status 1.
// Remarks and warnings are printed the same way and do not fail the run.
// RUN: bash -c 'pypto-opt %s --split-input-file -p pypto-test-diagnostics 2>&1 >/dev/null; echo "exit=$?"' | filecheck %s --strict-whitespace

func.func @remarks(%a: i32) -> i32 {
  %0 = arith.addi %a, %a {test.diagnostic = "remark: tile sizes 64x128"} : i32
  %1 = arith.muli %0, %0 {test.diagnostic = "warning: slow path", test.note = "because of this"} : i32
  func.return %1 : i32
}

// CHECK: pass-errors.mlir:7:3: remark: tile sizes 64x128
// CHECK-NEXT: {{^}}  %0 = arith.addi %a, %a {test.diagnostic = "remark: tile sizes 64x128"} : i32{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NEXT: pass-errors.mlir:8:3: warning: slow path
// CHECK-NEXT: {{^}}  %1 = arith.muli
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NEXT: pass-errors.mlir:8:3: note: because of this

// -----

func.func @fails() {
  %c = arith.constant {test.diagnostic = "error: tile does not fit in ub"} 1 : i32
  func.return
}

// CHECK: pass-errors.mlir:23:3: error: tile does not fit in ub
// CHECK-NEXT: {{^}}  %c = arith.constant

// -----

func.func @fails_in_pattern() {
  scf.execute_region {
    "test.op"() {test.diagnostic = "pattern-error: cannot lower this"} : () -> ()
    scf.yield
  }
  func.return
}

// CHECK: pass-errors.mlir:34:5: error: cannot lower this
// CHECK-NEXT: {{^}}    "test.op"() {test.diagnostic = "pattern-error: cannot lower this"} : () -> (){{$}}
// CHECK-NEXT: {{^}}    ^{{$}}
// CHECK: exit=1
