// --verify-diagnostics (MLIR's semantics): every diagnostic matches a comment
// naming its kind and a substring of its message on its line, and every such
// comment is met; the run then succeeds and prints no diagnostic. Line numbers
// are those of the whole file, also with --split-input-file.
// RUN: bash -c 'pypto-opt %s --split-input-file --verify-diagnostics -p pypto-test-diagnostics 2>&1 >/dev/null; echo "exit=$?"' | filecheck %s
// CHECK-NOT: {{error|warning|remark|note}}
// CHECK: exit=0

// A verifier error on the comment's own line.
func.func @same_line(%a: i32) -> i64 {
  func.return %a : i32 // expected-error {{Expected arguments to have the same types}}
}

// -----

// @+N: N lines below the comment.
func.func @plus(%a: i32) -> i64 {
  // expected-error @+1 {{'func.return' op}}
  func.return %a : i32
}

// -----

// @-N: N lines above the comment.
func.func @minus(%a: i32) -> i64 {
  func.return %a : i32
  // expected-error @-1 {{got [i32]}}
}

// -----

// A parse error.
func.func @parse_error() {
  // expected-error @+1 {{attribute expected}}
  %0 = arith.constant : i32
  func.return
}

// -----

// Remarks, warnings and notes from a pass. @below is the next line that holds no
// designator, @above the previous one.
func.func @remarks(%a: i32) -> i32 {
  // expected-remark @below {{tile sizes 64x128}}
  %0 = arith.addi %a, %a {test.diagnostic = "remark: tile sizes 64x128"} : i32
  %1 = arith.muli %0, %0 {test.diagnostic = "warning: slow path", test.note = "because of this"} : i32
  // expected-warning @above {{slow path}}
  // expected-note @above {{because of this}}
  func.return %1 : i32
}

// -----

// A pass error, and a regular expression (-re: {{...}} groups are regexes).
func.func @pass_error() {
  // expected-error-re @below {{tile of {{[0-9]+}} bytes does not fit}}
  %c = arith.constant {test.diagnostic = "error: tile of 262144 bytes does not fit in ub"} 1 : i32
  func.return
}

// -----

// An error raised inside a rewrite pattern is located at the pattern's op.
func.func @pattern_error() {
  scf.execute_region {
    "test.op"() {test.diagnostic = "pattern-error: cannot lower this"} : () -> () // expected-error {{cannot lower this}}
    scf.yield
  }
  func.return
}
