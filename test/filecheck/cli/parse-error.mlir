// Malformed IR: the parse error names file, line and column, shows the source
// line with a caret under the place, and the exit status is 1.
// RUN: bash -c 'pypto-opt %s; echo "exit=$?"' 2>&1 | filecheck %s --strict-whitespace
// An op used before it is defined, read from standard input:
// RUN: echo '%%0 = arith.addi %%1, %%1 : i32' > %t.undefined
// RUN: bash -c 'pypto-opt < %t.undefined; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=STDIN
// An input of comments only is an empty module, as in MLIR:
// RUN: echo '// nothing' > %t.empty
// RUN: bash -c 'pypto-opt < %t.empty; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EMPTY

func.func @f() {
  %0 = arith.constant : i32
  func.return
}

// CHECK: parse-error.mlir:12:23: error: attribute expected
// CHECK-NEXT: {{^}}  %0 = arith.constant : i32{{$}}
// CHECK-NEXT: {{^}}                      ^{{$}}
// CHECK-NEXT: exit=1

// STDIN: <stdin>:2:1: error: values used but not defined: [%1]
// STDIN: exit=1

// EMPTY: builtin.module {
// EMPTY-NEXT: }
// EMPTY: exit=0

// A function cut short (no closing brace): the error says what it found.
// RUN: printf 'func.func @f() {\n  func.return\n' > %t.truncated
// RUN: bash -c 'pypto-opt %t.truncated; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TRUNCATED
// TRUNCATED: .truncated:3:1: error: unexpected end of input in block definition
// TRUNCATED: exit=1
