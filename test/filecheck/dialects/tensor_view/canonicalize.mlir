// The tv canonicalization patterns, applied by the stock canonicalize pass.
// RUN: pypto-opt %s -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @double_transpose_is_identity
// CHECK-NEXT:    func.return %arg0 : !tv.tensor<4x8xf16>
func.func @double_transpose_is_identity(%arg0: !tv.tensor<4x8xf16>) -> !tv.tensor<4x8xf16> {
  %0 = tv.transpose %arg0 [1, 0] : !tv.tensor<4x8xf16> -> !tv.tensor<8x4xf16>
  %1 = tv.transpose %0 [1, 0] : !tv.tensor<8x4xf16> -> !tv.tensor<4x8xf16>
  func.return %1 : !tv.tensor<4x8xf16>
}

// Result dimension i of the composition is x's dimension p1[p2[i]].
// CHECK-LABEL: func.func @double_transpose_composes
// CHECK-NEXT:    %[[T:.*]] = tv.transpose %arg0 [2, 1, 0] : !tv.tensor<2x3x4xf32> -> !tv.tensor<4x3x2xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @double_transpose_composes(%arg0: !tv.tensor<2x3x4xf32>) -> !tv.tensor<4x3x2xf32> {
  %0 = tv.transpose %arg0 [1, 2, 0] : !tv.tensor<2x3x4xf32> -> !tv.tensor<3x4x2xf32>
  %1 = tv.transpose %0 [1, 0, 2] : !tv.tensor<3x4x2xf32> -> !tv.tensor<4x3x2xf32>
  func.return %1 : !tv.tensor<4x3x2xf32>
}

// CHECK-LABEL: func.func @identity_transpose
// CHECK-NEXT:    func.return %arg0
func.func @identity_transpose(%arg0: !tv.tensor<2x3xf32>) -> !tv.tensor<2x3xf32> {
  %0 = tv.transpose %arg0 [0, 1] : !tv.tensor<2x3xf32> -> !tv.tensor<2x3xf32>
  func.return %0 : !tv.tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mul_by_one
// CHECK-NEXT:    func.return %arg0, %arg0, %arg0, %arg1 : !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>, !tv.tensor<4xi8>
func.func @mul_by_one(%arg0: !tv.tensor<4x8xf16>, %arg1: !tv.tensor<4xi8>)
    -> (!tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>, !tv.tensor<4xi8>) {
  %one = arith.constant 1.0 : f32
  %one_h = arith.constant 1.0 : f16
  %one_i = arith.constant 1 : i8
  %0 = tv.mul %arg0, %one : !tv.tensor<4x8xf16>, f32 -> !tv.tensor<4x8xf16>
  %1 = tv.mul %one_h, %arg0 : f16, !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
  %ones = tv.fill %one : f32 -> !tv.tensor<8xf16>
  %2 = tv.mul %arg0, %ones : !tv.tensor<4x8xf16>, !tv.tensor<8xf16> -> !tv.tensor<4x8xf16>
  %3 = tv.mul %arg1, %one_i : !tv.tensor<4xi8>, i8 -> !tv.tensor<4xi8>
  func.return %0, %1, %2, %3 : !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>, !tv.tensor<4xi8>
}

// A one that broadcasts x to a larger shape is not an identity; two is not one.
// CHECK-LABEL: func.func @mul_kept
// CHECK:         tv.mul %arg0, %{{.*}} : !tv.tensor<8xf16>, !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
// CHECK:         tv.mul %arg0, %{{.*}} : !tv.tensor<8xf16>, f32 -> !tv.tensor<8xf16>
func.func @mul_kept(%arg0: !tv.tensor<8xf16>) -> (!tv.tensor<4x8xf16>, !tv.tensor<8xf16>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %ones = tv.fill %one : f32 -> !tv.tensor<4x8xf16>
  %0 = tv.mul %arg0, %ones : !tv.tensor<8xf16>, !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
  %1 = tv.mul %arg0, %two : !tv.tensor<8xf16>, f32 -> !tv.tensor<8xf16>
  func.return %0, %1 : !tv.tensor<4x8xf16>, !tv.tensor<8xf16>
}

// CHECK-LABEL: func.func @div_by_one
// CHECK-NEXT:    func.return %arg0
func.func @div_by_one(%arg0: !tv.tensor<?x8xbf16>) -> !tv.tensor<?x8xbf16> {
  %one = arith.constant 1.0 : bf16
  %0 = tv.div %arg0, %one : !tv.tensor<?x8xbf16>, bf16 -> !tv.tensor<?x8xbf16>
  func.return %0 : !tv.tensor<?x8xbf16>
}

// x + -0.0 and x - 0.0 are x for every float x; x + 0.0 is not (-0.0 + 0.0 = +0.0).
// CHECK-LABEL: func.func @add_sub_zero
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[KEPT:.*]] = tv.add %arg0, %[[Z]]
// CHECK-NEXT:    func.return %arg0, %arg0, %[[KEPT]], %arg1
func.func @add_sub_zero(%arg0: !tv.tensor<8xf32>, %arg1: !tv.tensor<8xi32>)
    -> (!tv.tensor<8xf32>, !tv.tensor<8xf32>, !tv.tensor<8xf32>, !tv.tensor<8xi32>) {
  %neg_zero = arith.constant -0.0 : f32
  %zero = arith.constant 0.0 : f32
  %zero_i = arith.constant 0 : i32
  %0 = tv.add %arg0, %neg_zero : !tv.tensor<8xf32>, f32 -> !tv.tensor<8xf32>
  %1 = tv.sub %arg0, %zero : !tv.tensor<8xf32>, f32 -> !tv.tensor<8xf32>
  %2 = tv.add %arg0, %zero : !tv.tensor<8xf32>, f32 -> !tv.tensor<8xf32>
  %3 = tv.add %zero_i, %arg1 : i32, !tv.tensor<8xi32> -> !tv.tensor<8xi32>
  func.return %0, %1, %2, %3 : !tv.tensor<8xf32>, !tv.tensor<8xf32>, !tv.tensor<8xf32>, !tv.tensor<8xi32>
}

// CHECK-LABEL: func.func @cast_to_same_type
// CHECK-NEXT:    func.return %arg0
func.func @cast_to_same_type(%arg0: !tv.tensor<4xf16>) -> !tv.tensor<4xf16> {
  %0 = tv.cast %arg0 : !tv.tensor<4xf16> to !tv.tensor<4xf16>
  func.return %0 : !tv.tensor<4xf16>
}

// f32 holds every f16 exactly, so f16 -> f32 -> f16 is the identity; f32 -> f16
// -> f32 rounds and stays.
// CHECK-LABEL: func.func @cast_round_trip
// CHECK-NEXT:    %[[A:.*]] = tv.cast %arg1 : !tv.tensor<4xf32> to !tv.tensor<4xf16>
// CHECK-NEXT:    %[[B:.*]] = tv.cast %[[A]] : !tv.tensor<4xf16> to !tv.tensor<4xf32>
// CHECK-NEXT:    func.return %arg0, %[[B]]
func.func @cast_round_trip(%arg0: !tv.tensor<4xf16>, %arg1: !tv.tensor<4xf32>) -> (!tv.tensor<4xf16>, !tv.tensor<4xf32>) {
  %0 = tv.cast %arg0 : !tv.tensor<4xf16> to !tv.tensor<4xf32>
  %1 = tv.cast %0 : !tv.tensor<4xf32> to !tv.tensor<4xf16>
  %2 = tv.cast %arg1 : !tv.tensor<4xf32> to !tv.tensor<4xf16>
  %3 = tv.cast %2 : !tv.tensor<4xf16> to !tv.tensor<4xf32>
  func.return %1, %3 : !tv.tensor<4xf16>, !tv.tensor<4xf32>
}

// Offsets compose as o1 + o2 * s1, strides as s1 * s2.
// CHECK-LABEL: func.func @view_of_view
// CHECK-NEXT:    %[[V:.*]] = tv.view %arg0[10, 7] [4, 3] [2, 6] : !tv.tensor<64x128xf16> to !tv.tensor<4x3xf16>
// CHECK-NEXT:    %[[R:.*]] = tv.view %arg0[12, 1] [1, 8] [1, 2] : !tv.tensor<64x128xf16> to !tv.tensor<8xf16>
// CHECK-NEXT:    func.return %[[V]], %[[R]]
func.func @view_of_view(%arg0: !tv.tensor<64x128xf16>) -> (!tv.tensor<4x3xf16>, !tv.tensor<8xf16>) {
  %0 = tv.view %arg0[8, 1][16, 32][1, 2] : !tv.tensor<64x128xf16> to !tv.tensor<16x32xf16>
  %1 = tv.view %0[2, 3][4, 3][2, 3] : !tv.tensor<16x32xf16> to !tv.tensor<4x3xf16>
  %2 = tv.view %0[4, 0][1, 8][1, 1] : !tv.tensor<16x32xf16> to !tv.tensor<8xf16>
  func.return %1, %2 : !tv.tensor<4x3xf16>, !tv.tensor<8xf16>
}

// A view of a rank-reducing view, or with dynamic operands, stays.
// CHECK-LABEL: func.func @view_of_view_kept
// CHECK-NEXT:    tv.view %arg0[3, 0] [1, 128]
// CHECK-NEXT:    tv.view %{{.*}}[4] [8] [1]
// CHECK-NEXT:    tv.view %arg0[%arg1, 0] [16, 128]
// CHECK-NEXT:    tv.view %{{.*}}[0, 0] [8, 8]
func.func @view_of_view_kept(%arg0: !tv.tensor<64x128xf16>, %arg1: index) -> (!tv.tensor<8xf16>, !tv.tensor<8x8xf16>) {
  %0 = tv.view %arg0[3, 0][1, 128][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<128xf16>
  %1 = tv.view %0[4][8][1] : !tv.tensor<128xf16> to !tv.tensor<8xf16>
  %2 = tv.view %arg0[%arg1, 0][16, 128][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16x128xf16>
  %3 = tv.view %2[0, 0][8, 8][1, 1] : !tv.tensor<16x128xf16> to !tv.tensor<8x8xf16>
  func.return %1, %3 : !tv.tensor<8xf16>, !tv.tensor<8x8xf16>
}

// CHECK-LABEL: func.func @identity_view
// CHECK-NEXT:    func.return %arg0
func.func @identity_view(%arg0: !tv.tensor<4x8xf16>) -> !tv.tensor<4x8xf16> {
  %0 = tv.view %arg0[0, 0][4, 8][1, 1] : !tv.tensor<4x8xf16> to !tv.tensor<4x8xf16>
  func.return %0 : !tv.tensor<4x8xf16>
}

// CHECK-LABEL: func.func @transpose_into_matmul
// CHECK-NEXT:    %[[M:.*]] = tv.matmul %arg0, %arg1 transpose_b acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<64x16xf32>
// CHECK-NEXT:    %[[N:.*]] = tv.matmul %arg2, %arg1 transpose_a transpose_b acc(f32) : !tv.tensor<32x64xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<64x16xf16>
// CHECK-NEXT:    func.return %[[M]], %[[N]]
func.func @transpose_into_matmul(%arg0: !tv.tensor<64x32xf16>, %arg1: !tv.tensor<16x32xf16>, %arg2: !tv.tensor<32x64xf16>)
    -> (!tv.tensor<64x16xf32>, !tv.tensor<64x16xf16>) {
  %bt = tv.transpose %arg1 [1, 0] : !tv.tensor<16x32xf16> -> !tv.tensor<32x16xf16>
  %0 = tv.matmul %arg0, %bt acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x16xf16> -> !tv.tensor<64x16xf32>
  %at = tv.transpose %arg2 [1, 0] : !tv.tensor<32x64xf16> -> !tv.tensor<64x32xf16>
  %1 = tv.matmul %at, %arg1 transpose_b acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<64x16xf16>
  func.return %0, %1 : !tv.tensor<64x16xf32>, !tv.tensor<64x16xf16>
}

// CHECK-LABEL: func.func @static_dim
// CHECK-NEXT:    %[[D:.*]] = tv.dim %arg0, 0
// CHECK-NEXT:    %[[C:.*]] = arith.constant 8 : index
// CHECK-NEXT:    func.return %[[D]], %[[C]]
func.func @static_dim(%arg0: !tv.tensor<?x8xf16>) -> (index, index) {
  %0 = tv.dim %arg0, 0 : !tv.tensor<?x8xf16>
  %1 = tv.dim %arg0, 1 : !tv.tensor<?x8xf16>
  func.return %0, %1 : index, index
}

// CHECK-LABEL: func.func @unit_reduce
// CHECK-NEXT:    %[[R:.*]] = tv.reduce_sum %arg0 [1] keepdims : !tv.tensor<4x8xf16> -> !tv.tensor<4x1xf16>
// CHECK-NEXT:    func.return %arg1, %[[R]]
func.func @unit_reduce(%arg0: !tv.tensor<4x8xf16>, %arg1: !tv.tensor<4x1xf16>) -> (!tv.tensor<4x1xf16>, !tv.tensor<4x1xf16>) {
  %0 = tv.reduce_max %arg1 [1] keepdims : !tv.tensor<4x1xf16> -> !tv.tensor<4x1xf16>
  %1 = tv.reduce_sum %arg0 [1] keepdims : !tv.tensor<4x8xf16> -> !tv.tensor<4x1xf16>
  func.return %0, %1 : !tv.tensor<4x1xf16>, !tv.tensor<4x1xf16>
}

// Unused tv ops are pure and disappear.
// CHECK-LABEL: func.func @dead
// CHECK-NEXT:    func.return
func.func @dead(%arg0: !tv.tensor<4x8xf16>) {
  %0 = tv.exp %arg0 : !tv.tensor<4x8xf16>
  %1 = tv.matmul %arg0, %arg0 transpose_b acc(f32) : !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16> -> !tv.tensor<4x4xf16>
  func.return
}
