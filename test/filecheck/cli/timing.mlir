// --mlir-timing prints MLIR's execution time report to stderr: parsing, each
// pass (a pipeline's member passes separately), verification, output.
// RUN: pypto-opt %s -p pypto-cleanup --mlir-timing 2>&1 >/dev/null | filecheck %s

func.func @f(%a: i32) -> i32 {
  func.return %a : i32
}

// CHECK: ===-------------------------------------------------------------------------===
// CHECK-NEXT: ... Execution time report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT: Total Execution Time: {{[0-9]+\.[0-9][0-9][0-9][0-9]}} seconds
// CHECK-EMPTY:
// CHECK-NEXT: ----Wall Time----  ----Name----
// CHECK-NEXT: {{[0-9]+\.[0-9][0-9][0-9][0-9]}} ({{ *[0-9]+\.[0-9]}}%)  Parser
// CHECK-NEXT: Verifier
// CHECK-NEXT: CanonicalizePass
// CHECK-NEXT: CommonSubexpressionElimination
// CHECK-NEXT: DeadCodeElimination
// CHECK-NEXT: Output
// CHECK-NEXT: Rest
// CHECK-NEXT: (100.0%)  Total
