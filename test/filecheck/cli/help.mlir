// `pypto-opt --help` lists the flags, then pypto-mlir's passes and pipelines with
// their options, then the names of xDSL's passes.
// RUN: pypto-opt --help | filecheck %s

// CHECK: usage: pypto-opt
// CHECK: --verify-diagnostics
// CHECK: --mlir-print-ir-before-all
// CHECK: --mlir-print-ir-after-all
// CHECK: --mlir-print-ir-before PASS
// CHECK: --mlir-print-ir-after PASS
// CHECK: --mlir-timing
// CHECK: --debug
// CHECK: A pass pipeline (-p) is a comma-separated list of passes
// CHECK: passes of pypto-mlir:
// CHECK: pypto-set-target Set the module's pypto.target
// CHECK: pipelines of pypto-mlir:
// CHECK-NEXT: pypto-cleanup Simplify IR: canonicalize, then remove common subexpressions and dead code.
// CHECK-NEXT: cse: bool = true
// The testing aid is a plugin of the tests (test/plugin), not a pass of pypto-mlir.
// CHECK: passes of plugin 'pypto_mlir_testing':
// CHECK-NEXT: pypto-test-diagnostics Testing aid
// CHECK: passes of xDSL
// CHECK: canonicalize,
// CHECK: cse,
