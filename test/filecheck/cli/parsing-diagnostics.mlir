// --parsing-diagnostics is xdsl-opt's flag: a parse error is printed to stdout in
// xDSL's layout (location, line, carets, message) where the chunk's output would
// be, and the chunk counts as a success. Errors other than parse errors (here a
// verifier failure) are diagnostics on stderr as usual. A second span (the
// earlier declaration) is numbered from the start of the file.
// RUN: bash -c 'pypto-opt %s --split-input-file --parsing-diagnostics; echo "exit=$?"' 2>/dev/null | filecheck %s
// RUN: bash -c 'pypto-opt %s --split-input-file --parsing-diagnostics; echo "exit=$?"' 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not pypto-opt %s --split-input-file --parsing-diagnostics -o %t 2>/dev/null
// RUN: filecheck %s --check-prefix=FILE < %t

"test.op"(abc) : () -> ()

// -----

func.func @fine() {
  func.return
}

// -----

func.func @bad() {
  %0 = arith.constant 1 : i32
  func.return %0 : i32
}

// -----

  %x = arith.constant : i32

// -----

"test.op"() ({
^a:
  "test.op"() : () -> ()
^a:
  "test.op"() : () -> ()
}) : () -> ()

// CHECK:      parsing-diagnostics.mlir:11:11
// CHECK-NEXT: "test.op"(abc) : () -> ()
// CHECK-NEXT:           ^^^
// CHECK-NEXT:           operand expected
// CHECK:      // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @fine() {
// CHECK:      // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: parsing-diagnostics.mlir:28:23
// CHECK-NEXT:   %x = arith.constant : i32
// CHECK-NEXT:                       ^
// CHECK-NEXT:                       {{.+}}
// CHECK:      // -----
// CHECK-NEXT: parsing-diagnostics.mlir:35:1
// CHECK-NEXT: ^a:
// CHECK-NEXT: ^^
// CHECK-NEXT: re-declaration of block 'a'
// CHECK-NEXT: originally declared here:
// CHECK-NEXT: parsing-diagnostics.mlir:33:1
// CHECK-NEXT: ^a:
// CHECK-NEXT: ^^
// CHECK:      exit=1

// ERR-NOT: operand expected
// ERR:     parsing-diagnostics.mlir:23:3: error: 'func.return' op
// ERR-NOT: error:

// FILE:      parsing-diagnostics.mlir:11:11
// FILE:      // -----
// FILE-NEXT: builtin.module {
