// A graph region (equivalence.graph's, as builtin.module's) may use a value
// before the op that defines it: no dominance error, as in MLIR and xdsl-opt.
// RUN: pypto-opt %s | filecheck %s

%a = "test.op"() : () -> index
%g = equivalence.graph -> index {
  %c = equivalence.class %r : index
  %r = "test.op"(%a) : (index) -> index
  equivalence.yield %c : index
}

// CHECK:      %c = equivalence.class %r : index
// CHECK-NEXT: %r = "test.op"(%a) : (index) -> index
