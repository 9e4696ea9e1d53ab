// tv IR in generic form is plain upstream IR: mlir-opt parses it as
// unregistered ops, types and attributes and prints it back, and pypto-opt reads
// that output into the same custom-form IR.
// REQUIRES: mlir-opt
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | pypto-opt | filecheck %s
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect | filecheck %s --check-prefix=MLIR

// MLIR: func.func @all_ops(%{{.*}}: !tv.tensor<64x128xf16>
// MLIR-SAME: !tv.tensor<?x128xf16, #tv.csr<rows = ?, cols = 128, nnz = ?, index = i32>>
// MLIR: "tv.view"(%{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>, static_offsets = array<i64: -9223372036854775808, 0>, static_sizes = array<i64: 16, 128>, static_strides = array<i64: 1, 1>}>
// MLIR: "tv.matmul"(%{{.*}}, %{{.*}}) <{acc_type = f32, transpose_b}>
// MLIR: "tv.reduce_sum"(%{{.*}}) <{axes = array<i64: 1>, keepdims}>
// MLIR: "tv.softmax"(%{{.*}}) <{axis = 1 : i64}>

// CHECK-LABEL: func.func @all_ops
// CHECK-SAME: (%[[X:.*]]: !tv.tensor<64x128xf16>, %[[W:.*]]: !tv.tensor<32x128xf16>, %[[D:.*]]: !tv.tensor<?x128xf16>, %[[I:.*]]: index, %[[S:.*]]: f32, %[[SP:.*]]: !tv.tensor<?x128xf16, #tv.csr<rows = ?, cols = 128, nnz = ?, index = i32>>)
// CHECK-NEXT: %[[V:.*]] = tv.view %[[X]][%[[I]], 0] [16, 128] [1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16x128xf16>
// CHECK-NEXT: %[[N:.*]] = tv.dim %[[D]], 0 : !tv.tensor<?x128xf16>
// CHECK-NEXT: %[[F:.*]] = tv.fill %[[S]][%[[N]]] : f32 -> !tv.tensor<?x128xf16>
// CHECK-NEXT: %[[G:.*]] = tv.gelu %[[V]] : !tv.tensor<16x128xf16>
// CHECK-NEXT: %[[A:.*]] = tv.add %[[G]], %[[S]] : !tv.tensor<16x128xf16>, f32 -> !tv.tensor<16x128xf16>
// CHECK-NEXT: %[[M:.*]] = tv.matmul %[[A]], %[[W]] transpose_b acc(f32) : !tv.tensor<16x128xf16>, !tv.tensor<32x128xf16> -> !tv.tensor<16x32xf32>
// CHECK-NEXT: %[[C:.*]] = tv.cast %[[M]] : !tv.tensor<16x32xf32> to !tv.tensor<16x32xf16>
// CHECK-NEXT: %[[R:.*]] = tv.reduce_sum %[[C]] [1] keepdims : !tv.tensor<16x32xf16> -> !tv.tensor<16x1xf16>
// CHECK-NEXT: %[[B:.*]] = tv.div %[[C]], %[[R]] : !tv.tensor<16x32xf16>, !tv.tensor<16x1xf16> -> !tv.tensor<16x32xf16>
// CHECK-NEXT: %[[SM:.*]] = tv.softmax %[[B]] axis = 1 : !tv.tensor<16x32xf16>
// CHECK-NEXT: %[[T:.*]] = tv.transpose %[[SM]] [1, 0] : !tv.tensor<16x32xf16> -> !tv.tensor<32x16xf16>
// CHECK-NEXT: %[[MX:.*]] = tv.reduce_max %[[T]] [0, 1] : !tv.tensor<32x16xf16> -> !tv.tensor<f16>
// CHECK-NEXT: func.return %[[MX]], %[[F]] : !tv.tensor<f16>, !tv.tensor<?x128xf16>
func.func @all_ops(%x: !tv.tensor<64x128xf16>, %w: !tv.tensor<32x128xf16>, %d: !tv.tensor<?x128xf16>,
                   %i: index, %s: f32,
                   %sp: !tv.tensor<?x128xf16, #tv.csr<rows = ?, cols = 128, nnz = ?, index = i32>>)
    -> (!tv.tensor<f16>, !tv.tensor<?x128xf16>) {
  %v = tv.view %x[%i, 0][16, 128][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16x128xf16>
  %n = tv.dim %d, 0 : !tv.tensor<?x128xf16>
  %f = tv.fill %s[%n] : f32 -> !tv.tensor<?x128xf16>
  %g = tv.gelu %v : !tv.tensor<16x128xf16>
  %a = tv.add %g, %s : !tv.tensor<16x128xf16>, f32 -> !tv.tensor<16x128xf16>
  %m = tv.matmul %a, %w transpose_b acc(f32) : !tv.tensor<16x128xf16>, !tv.tensor<32x128xf16> -> !tv.tensor<16x32xf32>
  %c = tv.cast %m : !tv.tensor<16x32xf32> to !tv.tensor<16x32xf16>
  %r = tv.reduce_sum %c [1] keepdims : !tv.tensor<16x32xf16> -> !tv.tensor<16x1xf16>
  %b = tv.div %c, %r : !tv.tensor<16x32xf16>, !tv.tensor<16x1xf16> -> !tv.tensor<16x32xf16>
  %sm = tv.softmax %b axis = 1 : !tv.tensor<16x32xf16>
  %t = tv.transpose %sm [1, 0] : !tv.tensor<16x32xf16> -> !tv.tensor<32x16xf16>
  %mx = tv.reduce_max %t [0, 1] : !tv.tensor<32x16xf16> -> !tv.tensor<f16>
  func.return %mx, %f : !tv.tensor<f16>, !tv.tensor<?x128xf16>
}
