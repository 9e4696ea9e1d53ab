// Files that cannot be read or written give `FILE: error: ...` and exit 1.
// RUN: bash -c 'pypto-opt %t.missing.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: bash -c 'pypto-opt %S; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DIR
// RUN: printf 'func.func @f() {\n  \377\n}\n' > %t.binary.mlir
// RUN: bash -c 'pypto-opt %t.binary.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UTF8
// RUN: bash -c 'pypto-opt %s -o %S; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OUT

// MISSING: file-errors.mlir.tmp.missing.mlir: error: cannot open input file: No such file or directory
// MISSING-NEXT: exit=1

// DIR: cli: error: cannot open input file: Is a directory
// DIR-NEXT: exit=1

// UTF8: file-errors.mlir.tmp.binary.mlir:2:3: error: input is not valid UTF-8 (byte 0xff)
// UTF8-NEXT: exit=1

// OUT: cli: error: cannot open output file: Is a directory
// OUT-NEXT: exit=1
