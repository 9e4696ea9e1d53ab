// --split-input-file processes each `// -----` chunk on its own: a failing chunk
// prints its error (with the line number in this file) and no output, the others
// print theirs, and the exit status is 1 if any chunk failed. Each chunk's output
// is written before the next chunk runs, so with 2>&1 an error comes after the
// `// -----` that precedes its chunk (as with mlir-opt and xdsl-opt).
// RUN: bash -c 'pypto-opt %s --split-input-file; echo "exit=$?"' 2>&1 | filecheck %s

func.func @first() {
  func.return
}

// -----

func.func @second() {
  %0 = arith.constant 1 : i32
  func.return %0 : i32
}

// -----

func.func @third() {
  func.return
}

// CHECK: func.func @first
// CHECK: // -----
// CHECK-NEXT: split-input-file.mlir:16:3: error: 'func.return' op
// CHECK: // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT: func.func @third
// CHECK: exit=1
