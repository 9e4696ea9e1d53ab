// An explicit loc(unknown) is kept, as mlir-opt keeps it; an op without a loc()
// gets the position where it starts.
// RUN: pypto-opt %s --print-debuginfo | filecheck %s

func.func @f() {
  %0 = arith.constant 1 : i32 loc(unknown)
  %1 = arith.constant 2 : i32
  func.return
} loc(unknown)

// CHECK:      func.func @f() {
// CHECK-NEXT:   %0 = arith.constant 1 : i32 loc(unknown)
// CHECK-NEXT:   %1 = arith.constant 2 : i32 loc("{{.*}}unknown-location.mlir":7:3)
// CHECK-NEXT:   func.return loc("{{.*}}unknown-location.mlir":8:3)
// CHECK-NEXT: } loc(unknown)
