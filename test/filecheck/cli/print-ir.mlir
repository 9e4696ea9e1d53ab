// --mlir-print-ir-{before,after}[-all] print the IR to stderr under MLIR's
// headers; a named pipeline is shown pass by pass.
// RUN: pypto-opt %s -p pypto-cleanup --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER-ALL
// RUN: pypto-opt %s -p pypto-cleanup --mlir-print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE-ALL
// RUN: pypto-opt %s -p pypto-cleanup --mlir-print-ir-before=cse --mlir-print-ir-after=cse,dce 2>&1 >/dev/null | filecheck %s --check-prefix=NAMED
// RUN: pypto-opt %s -p cse --mlir-print-ir-after=cse --print-op-generic 2>&1 >/dev/null | filecheck %s --check-prefix=GENERIC
// The output on stdout is unchanged by the dumps:
// RUN: pypto-opt %s -p pypto-cleanup --mlir-print-ir-after-all 2>/dev/null | filecheck %s --check-prefix=OUTPUT

func.func @twice(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}

// AFTER-ALL: // -----// IR Dump After CanonicalizePass (canonicalize) //----- //
// AFTER-ALL-NEXT: builtin.module {
// AFTER-ALL: %1 = arith.addi
// AFTER-ALL: // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// AFTER-ALL-NEXT: builtin.module {
// AFTER-ALL-NOT: %1 = arith.addi
// AFTER-ALL: // -----// IR Dump After DeadCodeElimination (dce) //----- //
// AFTER-ALL-NOT: IR Dump

// BEFORE-ALL: // -----// IR Dump Before CanonicalizePass (canonicalize) //----- //
// BEFORE-ALL: // -----// IR Dump Before CommonSubexpressionElimination (cse) //----- //
// BEFORE-ALL: // -----// IR Dump Before DeadCodeElimination (dce) //----- //
// BEFORE-ALL-NOT: IR Dump

// NAMED-NOT: CanonicalizePass
// NAMED: // -----// IR Dump Before CommonSubexpressionElimination (cse) //----- //
// NAMED: // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// NAMED: // -----// IR Dump After DeadCodeElimination (dce) //----- //
// NAMED-NOT: IR Dump

// GENERIC: // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// GENERIC-NEXT: "builtin.module"() ({

// OUTPUT-NOT: IR Dump
// OUTPUT: func.func @twice
// OUTPUT-NEXT: %0 = arith.addi
// OUTPUT-NEXT: %1 = arith.muli %0, %0 : i32
