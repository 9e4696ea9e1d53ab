// Regions that may be graph regions are not checked for dominance, as in MLIR:
// those of unregistered ops (`mayBeGraphRegion`), of `test.graph_region` and of
// xDSL's catch-all `test.op` (xDSL's own cse/dce tests use them). A function
// body still is.
// RUN: pypto-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics | filecheck %s

// CHECK: "foo.region"() ({
// CHECK-NEXT: %0 = "foo.op"(%1) : (i32) -> i32
"foo.region"() ({
  %0 = "foo.op"(%1) : (i32) -> (i32)
  %1 = "foo.op"(%0) : (i32) -> (i32)
  "foo.end"() : () -> ()
}) : () -> ()

// -----

// CHECK: "test.op"() ({
"test.op"() ({
  %0 = "test.pureop"(%1) : (i32) -> (i32)
  %1 = "test.pureop"(%0) : (i32) -> (i32)
  "test.termop"() : () -> ()
}) : () -> ()

// -----

// CHECK: "test.graph_region"() ({
"test.graph_region"() ({
  %0 = arith.addi %1, %1 : i32
  %1 = arith.constant 1 : i32
}) : () -> ()

// -----

func.func @cycle_in_a_function(%a: i32) -> i32 {
  // expected-error @+1 {{operand #1 does not dominate this use}}
  %0 = arith.addi %a, %1 : i32
  // expected-note @+1 {{operand defined here}}
  %1 = arith.addi %0, %a : i32
  func.return %1 : i32
}
