// func ops survive pypto-opt -> upstream mlir-opt -> pypto-opt.
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | pypto-opt | filecheck %s
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect | filecheck %s --check-prefix=MLIR

func.func private @external(i32, f16) -> f16
func.func @caller(%a: i32, %b: f16) -> (f16, i32) attributes {pypto.kernel} {
  %r = func.call @external(%a, %b) : (i32, f16) -> f16
  func.return %r, %a : f16, i32
}
func.func @with_arg_attrs(%x: memref<8xf32> {pypto.gm}) {
  func.return
}

// CHECK: func.func private @external(i32, f16) -> f16
// CHECK-NEXT: func.func @caller(%{{.*}}: i32, %{{.*}}: f16) -> (f16, i32) attributes {pypto.kernel} {
// CHECK-NEXT: %{{.*}} = func.call @external(%{{.*}}, %{{.*}}) : (i32, f16) -> f16
// CHECK-NEXT: func.return %{{.*}}, %{{.*}} : f16, i32
// CHECK: func.func @with_arg_attrs(%{{.*}}: memref<8xf32> {pypto.gm})

// MLIR: func.func private @external(i32, f16) -> f16
// MLIR: func.func @caller(%arg0: i32, %arg1: f16) -> (f16, i32) attributes {pypto.kernel}
// MLIR: call @external(%arg0, %arg1) : (i32, f16) -> f16
// MLIR: return %{{.*}}, %arg0 : f16, i32
