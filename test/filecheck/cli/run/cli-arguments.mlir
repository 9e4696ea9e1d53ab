// Bad command lines are argparse's usage errors (exit status 2); unreadable,
// malformed or invalid files are located diagnostics (exit status 1).
// RUN: bash -c 'pypto-run %s --no-such-flag; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: bash -c 'pypto-run %s --inputs a.npz --random 1; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: bash -c 'pypto-run %s --random x; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SEED
// RUN: bash -c 'pypto-run %s --report xml; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: bash -c 'pypto-run; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOFILE
// RUN: pypto-run --version | filecheck %s --check-prefix=VERSION
// RUN: pypto-run --help | filecheck %s --check-prefix=HELP
// RUN: bash -c 'pypto-run %t.missing.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: bash -c 'pypto-run %S/Inputs/parse-error.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=PARSE
// RUN: bash -c 'pypto-run %S/Inputs/verify-error.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: bash -c 'pypto-run %s --output %S; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OUTPUT

func.func @f(%x: !tv.tensor<4xf32>) -> !tv.tensor<4xf32> {
  func.return %x : !tv.tensor<4xf32>
}

// FLAG: usage: pypto-run
// FLAG: pypto-run: error: unrecognized arguments: --no-such-flag
// FLAG-NEXT: exit=2
// BOTH: pypto-run: error: argument --random: not allowed with argument --inputs
// BOTH-NEXT: exit=2
// SEED: pypto-run: error: argument --random: invalid int value: 'x'
// SEED-NEXT: exit=2
// REPORT: pypto-run: error: argument --report: invalid choice: 'xml'
// REPORT-NEXT: exit=2
// NOFILE: pypto-run: error: the following arguments are required: FILE
// NOFILE-NEXT: exit=2
// VERSION: pypto-run {{[0-9.]+}} built on xdsl version 0.75.0
// HELP: usage: pypto-run
// HELP: Input arrays are named arg0, arg1, ...

// MISSING: cli-arguments.mlir.tmp.missing.mlir: error: cannot open input file: No such file or directory
// MISSING-NEXT: exit=1

// PARSE:      parse-error.mlir:3:1: error: Operation tv.bogus is not registered
// PARSE-NEXT: }
// PARSE-NEXT: ^
// PARSE-NEXT: exit=1

// VERIFY:      verify-error.mlir:2:3: error: 'tv.reduce_sum' op axis 1 is out of range for rank 1
// VERIFY-NEXT:   %s = tv.reduce_sum
// VERIFY-NEXT:   ^
// VERIFY-NEXT: exit=1

// OUTPUT: run: error: cannot open output file: Is a directory
// OUTPUT-NEXT: exit=1
