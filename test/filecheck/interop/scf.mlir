// scf ops (loops with iteration values, conditionals, execute_region) survive
// pypto-opt -> upstream mlir-opt -> pypto-opt.
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | pypto-opt | filecheck %s
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect | filecheck %s --check-prefix=MLIR

func.func @loops(%n: index, %init: f32, %flag: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sum = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %init) -> (f32) {
    %next = scf.if %flag -> (f32) {
      %d = arith.addf %acc, %acc : f32
      scf.yield %d : f32
    } else {
      scf.yield %acc : f32
    }
    scf.yield %next : f32
  }
  %w = scf.while (%arg = %c0) : (index) -> index {
    %cond = arith.cmpi slt, %arg, %n : index
    scf.condition(%cond) %arg : index
  } do {
  ^bb0(%arg2: index):
    %inc = arith.addi %arg2, %c64 : index
    scf.yield %inc : index
  }
  scf.execute_region {
    scf.yield
  }
  func.return %sum : f32
}

// CHECK: %{{.*}} = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK-NEXT: %{{.*}} = scf.if %{{.*}} -> (f32) {
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : f32
// CHECK: %{{.*}} = scf.while (%{{.*}} = %{{.*}}) : (index) -> index {
// CHECK: scf.condition(%{{.*}}) %{{.*}} : index
// CHECK: } do {
// CHECK: scf.execute_region {

// MLIR: scf.for %arg3 = %{{.*}} to %arg0 step %{{.*}} iter_args(%arg4 = %arg1) -> (f32)
// MLIR: scf.if %arg2 -> (f32)
// MLIR: scf.while
// MLIR: scf.execute_region
