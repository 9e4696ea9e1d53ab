// Mistakes in -p are reported at their place in the pipeline text, shown under the
// name <pass-pipeline>, with exit status 1.
// RUN: bash -c 'pypto-opt %s -p no-such-pass; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNKNOWN --strict-whitespace
// RUN: bash -c 'pypto-opt %s -p "cse,pypto-cleanup{fast=1}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OPTION --strict-whitespace
// RUN: bash -c 'pypto-opt %s -p "pypto-cleanup{cse=maybe}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: bash -c 'pypto-opt %s -p "scf-parallel-loop-tiling{parallel-loop-tile-sizes=4,x}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=LIST
// RUN: bash -c 'pypto-opt %s -p "pypto-cleanup{cse}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOVALUE
// RUN: bash -c 'pypto-opt %s -p memref-stream-tile-outer-loops; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=REQUIRED
// RUN: bash -c 'pypto-opt %s -p "cse dce"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: bash -c 'pypto-opt %s -p "cse;dce"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CHAR
// RUN: bash -c 'pypto-opt %s -p "cse{"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNCLOSED
// RUN: bash -c 'pypto-opt %s --mlir-print-ir-after=no-such-pass; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=PRINT
// RUN: bash -c 'pypto-opt %s --mlir-print-ir-before=pypto-cleanup; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=PRINT-PIPELINE

// UNKNOWN: <pass-pipeline>:1:1: error: 'no-such-pass' does not refer to a registered pass or pass pipeline
// UNKNOWN-NEXT: {{^}}no-such-pass{{$}}
// UNKNOWN-NEXT: {{^}}^~~~~~~~~~~~{{$}}
// UNKNOWN-NEXT: exit=1

// OPTION: <pass-pipeline>:1:19: error: pass 'pypto-cleanup' has no option 'fast' (its options: cse)
// OPTION-NEXT: {{^}}cse,pypto-cleanup{fast=1}{{$}}
// OPTION-NEXT: {{^}}                  ^~~~{{$}}
// OPTION-NEXT: exit=1

// VALUE: <pass-pipeline>:1:15: error: invalid value 'maybe' for option 'cse' of pass 'pypto-cleanup': expected bool
// VALUE: exit=1

// LIST: <pass-pipeline>:1:26: error: invalid value '4,x' for option 'parallel-loop-tile-sizes' of pass 'scf-parallel-loop-tiling': expected tuple[int, ...]
// LIST: exit=1

// NOVALUE: <pass-pipeline>:1:15: error: option 'cse' of pass 'pypto-cleanup' needs a value: expected bool
// NOVALUE: exit=1

// REQUIRED: <pass-pipeline>:1:1: error: pass 'memref-stream-tile-outer-loops' requires option 'target-rank'
// REQUIRED: exit=1

// SYNTAX: <pass-pipeline>:1:4: error: expected ',' between passes, got ' '
// SYNTAX: exit=1

// CHAR: <pass-pipeline>:1:4: error: unexpected character in pass pipeline
// CHAR: exit=1

// UNCLOSED: <pass-pipeline>:1:5: error: expected an option name, got end of pipeline
// UNCLOSED: exit=1

// PRINT: pypto-opt: error: --mlir-print-ir-after: 'no-such-pass' does not refer to a registered pass
// PRINT-NEXT: exit=1

// PRINT-PIPELINE: pypto-opt: error: --mlir-print-ir-before: 'pypto-cleanup' is a pipeline; name one of its passes
// PRINT-PIPELINE-NEXT: exit=1
