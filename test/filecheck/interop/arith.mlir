// arith ops survive pypto-opt -> upstream mlir-opt -> pypto-opt.
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | pypto-opt | filecheck %s
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect | filecheck %s --check-prefix=MLIR

func.func @arith(%a: i32, %b: i32, %x: f16, %y: f32, %i: index) -> f32 {
  %c = arith.constant 7 : i32
  %f = arith.constant 1.5 : f32
  %0 = arith.addi %a, %c : i32
  %1 = arith.muli %0, %b : i32
  %2 = arith.divsi %1, %c : i32
  %3 = arith.cmpi slt, %2, %a : i32
  %4 = arith.select %3, %1, %2 : i32
  %5 = arith.extf %x : f16 to f32
  %6 = arith.mulf %5, %y fastmath<fast> : f32
  %7 = arith.maximumf %6, %f : f32
  %8 = arith.index_cast %i : index to i32
  %9 = arith.sitofp %8 : i32 to f32
  %10 = arith.addf %7, %9 : f32
  func.return %10 : f32
}

// CHECK: %{{.*}} = arith.constant 7 : i32
// CHECK-NEXT: %{{.*}} = arith.constant 1.500000e+00 : f32
// CHECK-NEXT: %{{.*}} = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %{{.*}} = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %{{.*}} = arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %{{.*}} = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %{{.*}} = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %{{.*}} = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: %{{.*}} = arith.mulf %{{.*}}, %{{.*}} fastmath<fast> : f32
// CHECK-NEXT: %{{.*}} = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %{{.*}} = arith.index_cast %{{.*}} : index to i32
// CHECK-NEXT: %{{.*}} = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT: %{{.*}} = arith.addf %{{.*}}, %{{.*}} : f32

// MLIR: arith.cmpi slt
// MLIR: arith.mulf %{{.*}}, %{{.*}} fastmath<fast> : f32
// MLIR: arith.maximumf
