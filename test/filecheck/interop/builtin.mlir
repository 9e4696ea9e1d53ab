// builtin types and attributes survive pypto-opt -> upstream mlir-opt -> pypto-opt.
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | pypto-opt | filecheck %s
// upstream MLIR reads them as its own builtin types and attributes:
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect | filecheck %s --check-prefix=MLIR

builtin.module attributes {pypto.target = "ascend910b", test.dict = {a = 1 : i64, b = [2 : i32, "s"]}} {
  builtin.module @inner {
  }
  func.func @types(%t: tensor<4x?xf16>, %m: memref<16x32xf32, strided<[64, 1], offset: 8>>,
                   %v: vector<8xbf16>, %u: memref<?xi8, 1>, %i: index, %c: complex<f32>) {
    %0 = builtin.unrealized_conversion_cast %i : index to i64
    "test.op"() {dense = dense<[1.5, 2.0]> : tensor<2xf32>, arr = array<i64: 1, 2, 3>, unit, f = 0.25 : f64} : () -> ()
    func.return
  }
}

// CHECK: builtin.module attributes {pypto.target = "ascend910b", test.dict = {a = 1 : i64, b = [2 : i32, "s"]}} {
// CHECK-NEXT: builtin.module @inner {
// CHECK: func.func @types(%{{.*}}: tensor<4x?xf16>, %{{.*}}: memref<16x32xf32, strided<[64, 1], offset: 8>>, %{{.*}}: vector<8xbf16>, %{{.*}}: memref<?xi8, 1 : i64>, %{{.*}}: index, %{{.*}}: complex<f32>) {
// CHECK-NEXT: %{{.*}} = builtin.unrealized_conversion_cast %{{.*}} : index to i64
// CHECK-NEXT: "test.op"() {arr = array<i64: 1, 2, 3>, dense = dense<[1.500000e+00, 2.000000e+00]> : tensor<2xf32>, f = 2.500000e-01 : f64, unit} : () -> ()

// MLIR: module attributes {pypto.target = "ascend910b"
// MLIR: module @inner {
// MLIR: func.func @types(%arg0: tensor<4x?xf16>, %arg1: memref<16x32xf32, strided<[64, 1], offset: 8>>, %arg2: vector<8xbf16>, %arg3: memref<?xi8, 1>, %arg4: index, %arg5: complex<f32>)
// MLIR: builtin.unrealized_conversion_cast %arg4 : index to i64
