// Every tv op and the tv types print in their custom form and survive a round
// trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s

// CHECK-LABEL: func.func @types
// CHECK-SAME: %{{.*}}: !tv.tensor<4096x1024xf16>
// CHECK-SAME: %{{.*}}: !tv.tensor<?x1024xbf16>
// CHECK-SAME: %{{.*}}: !tv.tensor<f32>
// CHECK-SAME: %{{.*}}: !tv.tensor<2x3x4xi8>
// CHECK-SAME: %{{.*}}: !tv.tensor<8xi16>
// CHECK-SAME: %{{.*}}: !tv.tensor<8x0xi32>
// CHECK-SAME: %{{.*}}: !tv.tensor<4096x1024xf16, #tv.csr<rows = 4096, cols = 1024, nnz = 8192, index = i32>>
// CHECK-SAME: %{{.*}}: !tv.tensor<?x64xf32, #tv.csr<rows = ?, cols = 64, nnz = ?, index = i64>>
func.func @types(%a: !tv.tensor<4096x1024xf16>, %b: !tv.tensor<?x1024xbf16>,
                 %c: !tv.tensor<f32>, %d: !tv.tensor<2x3x4xi8>,
                 %e: !tv.tensor<8xi16>, %f: !tv.tensor<8x0xi32>,
                 %g: !tv.tensor<4096x1024xf16, #tv.csr<rows = 4096, cols = 1024, nnz = 8192, index = i32>>,
                 %h: !tv.tensor<?x64xf32, #tv.csr<rows = ?, cols = 64, nnz = ?, index = i64>>) {
  func.return
}

// CHECK-LABEL: func.func @view
func.func @view(%x: !tv.tensor<64x128xf16>, %i: index, %n: index, %d: !tv.tensor<?x128xf16>) {
  // CHECK: tv.view %{{.*}}[0, 0] [16, 128] [1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16x128xf16>
  %0 = tv.view %x[0, 0][16, 128][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<16x128xf16>
  // CHECK: tv.view %{{.*}}[%{{.*}}, 8] [%{{.*}}, 32] [1, 2] : !tv.tensor<64x128xf16> to !tv.tensor<?x32xf16>
  %1 = tv.view %x[%i, 8][%n, 32][1, 2] : !tv.tensor<64x128xf16> to !tv.tensor<?x32xf16>
  // CHECK: tv.view %{{.*}}[3, 0] [1, 128] [1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<128xf16>
  %2 = tv.view %x[3, 0][1, 128][1, 1] : !tv.tensor<64x128xf16> to !tv.tensor<128xf16>
  // CHECK: tv.view %{{.*}}[0, 0] [4, 4] [%{{.*}}, %{{.*}}] : !tv.tensor<?x128xf16> to !tv.tensor<4x4xf16>
  %3 = tv.view %d[0, 0][4, 4][%i, %n] : !tv.tensor<?x128xf16> to !tv.tensor<4x4xf16>
  func.return
}

// CHECK-LABEL: func.func @dim_fill
func.func @dim_fill(%d: !tv.tensor<?x128xf16>, %s: f32, %h: f16, %k: i8) {
  // CHECK: %[[N:.*]] = tv.dim %{{.*}}, 0 : !tv.tensor<?x128xf16>
  %n = tv.dim %d, 0 : !tv.tensor<?x128xf16>
  // CHECK: tv.fill %{{.*}} : f32 -> !tv.tensor<4x8xf16>
  %0 = tv.fill %s : f32 -> !tv.tensor<4x8xf16>
  // CHECK: tv.fill %{{.*}}[%[[N]]] : f16 -> !tv.tensor<?x128xf16>
  %1 = tv.fill %h[%n] : f16 -> !tv.tensor<?x128xf16>
  // CHECK: tv.fill %{{.*}} : i8 -> !tv.tensor<i8>
  %2 = tv.fill %k : i8 -> !tv.tensor<i8>
  func.return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: !tv.tensor<4x8xf16>, %y: !tv.tensor<?x8xbf16>, %z: !tv.tensor<8xi32>) {
  // CHECK: tv.neg %{{.*}} : !tv.tensor<4x8xf16>
  %0 = tv.neg %x : !tv.tensor<4x8xf16>
  // CHECK: tv.neg %{{.*}} : !tv.tensor<8xi32>
  %1 = tv.neg %z : !tv.tensor<8xi32>
  // CHECK: tv.abs %{{.*}} : !tv.tensor<8xi32>
  %2 = tv.abs %z : !tv.tensor<8xi32>
  // CHECK: tv.exp %{{.*}} : !tv.tensor<?x8xbf16>
  %3 = tv.exp %y : !tv.tensor<?x8xbf16>
  // CHECK: tv.log %{{.*}} : !tv.tensor<4x8xf16>
  %4 = tv.log %x : !tv.tensor<4x8xf16>
  // CHECK: tv.sqrt %{{.*}} : !tv.tensor<4x8xf16>
  %5 = tv.sqrt %x : !tv.tensor<4x8xf16>
  // CHECK: tv.rsqrt %{{.*}} : !tv.tensor<4x8xf16>
  %6 = tv.rsqrt %x : !tv.tensor<4x8xf16>
  // CHECK: tv.reciprocal %{{.*}} : !tv.tensor<4x8xf16>
  %7 = tv.reciprocal %x : !tv.tensor<4x8xf16>
  // CHECK: tv.relu %{{.*}} : !tv.tensor<8xi32>
  %8 = tv.relu %z : !tv.tensor<8xi32>
  // CHECK: tv.sigmoid %{{.*}} : !tv.tensor<4x8xf16>
  %9 = tv.sigmoid %x : !tv.tensor<4x8xf16>
  // CHECK: tv.tanh %{{.*}} : !tv.tensor<4x8xf16>
  %10 = tv.tanh %x : !tv.tensor<4x8xf16>
  // CHECK: tv.gelu %{{.*}} : !tv.tensor<4x8xf16>
  %11 = tv.gelu %x : !tv.tensor<4x8xf16>
  // CHECK: tv.silu %{{.*}} : !tv.tensor<4x8xf16>
  %12 = tv.silu %x : !tv.tensor<4x8xf16>
  func.return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: !tv.tensor<4x8xf16>, %row: !tv.tensor<8xf16>, %col: !tv.tensor<4x1xf16>,
                  %d: !tv.tensor<?x8xf16>, %s: f32, %i: !tv.tensor<4x8xi8>, %k: i8) {
  // CHECK: tv.add %{{.*}}, %{{.*}} : !tv.tensor<4x8xf16>{{$}}
  %0 = tv.add %x, %x : !tv.tensor<4x8xf16>
  // CHECK: tv.sub %{{.*}}, %{{.*}} : !tv.tensor<4x8xf16>, !tv.tensor<8xf16> -> !tv.tensor<4x8xf16>
  %1 = tv.sub %x, %row : !tv.tensor<4x8xf16>, !tv.tensor<8xf16> -> !tv.tensor<4x8xf16>
  // CHECK: tv.mul %{{.*}}, %{{.*}} : !tv.tensor<4x1xf16>, !tv.tensor<8xf16> -> !tv.tensor<4x8xf16>
  %2 = tv.mul %col, %row : !tv.tensor<4x1xf16>, !tv.tensor<8xf16> -> !tv.tensor<4x8xf16>
  // CHECK: tv.div %{{.*}}, %{{.*}} : !tv.tensor<4x8xf16>, f32 -> !tv.tensor<4x8xf16>
  %3 = tv.div %x, %s : !tv.tensor<4x8xf16>, f32 -> !tv.tensor<4x8xf16>
  // CHECK: tv.max %{{.*}}, %{{.*}} : f32, !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
  %4 = tv.max %s, %x : f32, !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
  // CHECK: tv.min %{{.*}}, %{{.*}} : !tv.tensor<?x8xf16>, !tv.tensor<4x1xf16> -> !tv.tensor<4x8xf16>
  %5 = tv.min %d, %col : !tv.tensor<?x8xf16>, !tv.tensor<4x1xf16> -> !tv.tensor<4x8xf16>
  // CHECK: tv.add %{{.*}}, %{{.*}} : !tv.tensor<?x8xf16>, !tv.tensor<8xf16> -> !tv.tensor<?x8xf16>
  %6 = tv.add %d, %row : !tv.tensor<?x8xf16>, !tv.tensor<8xf16> -> !tv.tensor<?x8xf16>
  // CHECK: tv.mul %{{.*}}, %{{.*}} : !tv.tensor<4x8xi8>, i8 -> !tv.tensor<4x8xi8>
  %7 = tv.mul %i, %k : !tv.tensor<4x8xi8>, i8 -> !tv.tensor<4x8xi8>
  // CHECK: tv.add %{{.*}}, %{{.*}} {note = "kept"} : !tv.tensor<4x8xf16>{{$}}
  %8 = tv.add %x, %x {note = "kept"} : !tv.tensor<4x8xf16>
  func.return
}

// CHECK-LABEL: func.func @cast
func.func @cast(%x: !tv.tensor<4x8xf16>, %d: !tv.tensor<?xi8>) {
  // CHECK: tv.cast %{{.*}} : !tv.tensor<4x8xf16> to !tv.tensor<4x8xf32>
  %0 = tv.cast %x : !tv.tensor<4x8xf16> to !tv.tensor<4x8xf32>
  // CHECK: tv.cast %{{.*}} : !tv.tensor<?xi8> to !tv.tensor<?xbf16>
  %1 = tv.cast %d : !tv.tensor<?xi8> to !tv.tensor<?xbf16>
  func.return
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: !tv.tensor<64x256xf16>, %b: !tv.tensor<256x128xf16>, %bt: !tv.tensor<128x256xf16>,
                  %at: !tv.tensor<256x64xf16>, %q: !tv.tensor<4x64x32xbf16>, %k: !tv.tensor<4x?x32xbf16>,
                  %i: !tv.tensor<16x32xi8>, %j: !tv.tensor<32x8xi8>) {
  // CHECK: tv.matmul %{{.*}}, %{{.*}} acc(f32) : !tv.tensor<64x256xf16>, !tv.tensor<256x128xf16> -> !tv.tensor<64x128xf16>
  %0 = tv.matmul %a, %b acc(f32) : !tv.tensor<64x256xf16>, !tv.tensor<256x128xf16> -> !tv.tensor<64x128xf16>
  // CHECK: tv.matmul %{{.*}}, %{{.*}} transpose_b acc(f32) : !tv.tensor<64x256xf16>, !tv.tensor<128x256xf16> -> !tv.tensor<64x128xf32>
  %1 = tv.matmul %a, %bt transpose_b acc(f32) : !tv.tensor<64x256xf16>, !tv.tensor<128x256xf16> -> !tv.tensor<64x128xf32>
  // CHECK: tv.matmul %{{.*}}, %{{.*}} transpose_a transpose_b acc(f32) : !tv.tensor<256x64xf16>, !tv.tensor<128x256xf16> -> !tv.tensor<64x128xf16>
  %2 = tv.matmul %at, %bt transpose_a transpose_b acc(f32) : !tv.tensor<256x64xf16>, !tv.tensor<128x256xf16> -> !tv.tensor<64x128xf16>
  // CHECK: tv.matmul %{{.*}}, %{{.*}} transpose_b acc(f32) : !tv.tensor<4x64x32xbf16>, !tv.tensor<4x?x32xbf16> -> !tv.tensor<4x64x?xbf16>
  %3 = tv.matmul %q, %k transpose_b acc(f32) : !tv.tensor<4x64x32xbf16>, !tv.tensor<4x?x32xbf16> -> !tv.tensor<4x64x?xbf16>
  // CHECK: tv.matmul %{{.*}}, %{{.*}} acc(i32) : !tv.tensor<16x32xi8>, !tv.tensor<32x8xi8> -> !tv.tensor<16x8xi32>
  %4 = tv.matmul %i, %j acc(i32) : !tv.tensor<16x32xi8>, !tv.tensor<32x8xi8> -> !tv.tensor<16x8xi32>
  func.return
}

// CHECK-LABEL: func.func @reduce
func.func @reduce(%x: !tv.tensor<4x8x16xf16>, %d: !tv.tensor<?x8xi32>) {
  // CHECK: tv.reduce_sum %{{.*}} [2] : !tv.tensor<4x8x16xf16> -> !tv.tensor<4x8xf16>
  %0 = tv.reduce_sum %x [2] : !tv.tensor<4x8x16xf16> -> !tv.tensor<4x8xf16>
  // CHECK: tv.reduce_sum %{{.*}} [0, 2] keepdims : !tv.tensor<4x8x16xf16> -> !tv.tensor<1x8x1xf16>
  %1 = tv.reduce_sum %x [0, 2] keepdims : !tv.tensor<4x8x16xf16> -> !tv.tensor<1x8x1xf16>
  // CHECK: tv.reduce_max %{{.*}} [0, 1, 2] : !tv.tensor<4x8x16xf16> -> !tv.tensor<f16>
  %2 = tv.reduce_max %x [0, 1, 2] : !tv.tensor<4x8x16xf16> -> !tv.tensor<f16>
  // CHECK: tv.reduce_min %{{.*}} [1] keepdims : !tv.tensor<?x8xi32> -> !tv.tensor<?x1xi32>
  %3 = tv.reduce_min %d [1] keepdims : !tv.tensor<?x8xi32> -> !tv.tensor<?x1xi32>
  func.return
}

// CHECK-LABEL: func.func @softmax_transpose
func.func @softmax_transpose(%x: !tv.tensor<2x4x8xf32>, %d: !tv.tensor<?x8xf16>) {
  // CHECK: tv.softmax %{{.*}} axis = 2 : !tv.tensor<2x4x8xf32>
  %0 = tv.softmax %x axis = 2 : !tv.tensor<2x4x8xf32>
  // CHECK: tv.softmax %{{.*}} axis = 0 : !tv.tensor<?x8xf16>
  %1 = tv.softmax %d axis = 0 : !tv.tensor<?x8xf16>
  // CHECK: tv.transpose %{{.*}} [2, 0, 1] : !tv.tensor<2x4x8xf32> -> !tv.tensor<8x2x4xf32>
  %2 = tv.transpose %x [2, 0, 1] : !tv.tensor<2x4x8xf32> -> !tv.tensor<8x2x4xf32>
  // CHECK: tv.transpose %{{.*}} [1, 0] : !tv.tensor<?x8xf16> -> !tv.tensor<8x?xf16>
  %3 = tv.transpose %d [1, 0] : !tv.tensor<?x8xf16> -> !tv.tensor<8x?xf16>
  func.return
}

// The level-1 example of the design document.
// CHECK-LABEL: func.func @swish
// CHECK-NEXT:    %[[S:.*]] = tv.sigmoid %[[X:.*]] : !tv.tensor<4096x1024xf16>
// CHECK-NEXT:    %[[Y:.*]] = tv.mul %[[X]], %[[S]] : !tv.tensor<4096x1024xf16>
// CHECK-NEXT:    func.return %[[Y]] : !tv.tensor<4096x1024xf16>
func.func @swish(%x: !tv.tensor<4096x1024xf16>) -> !tv.tensor<4096x1024xf16> {
  %s = tv.sigmoid %x : !tv.tensor<4096x1024xf16>
  %y = tv.mul %x, %s : !tv.tensor<4096x1024xf16>
  func.return %y : !tv.tensor<4096x1024xf16>
}
