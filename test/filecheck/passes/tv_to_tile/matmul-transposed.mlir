// The cube moves only 16-bit operands transposed into L0 (tile.move transpose,
// the hardware's fractal transpose). An f32 or i8 matmul operand with a
// transpose flag is transposed in UB by a nest of its own into a GM temporary,
// which the matmul then reads as stored.
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' 2>/dev/null | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK:       %[[BT:.*]] = memref.alloc() : memref<24x32xf32>
// CHECK:       %[[B:.*]] = tile.load %b[{{.*}}] : memref<32x24xf32> -> !tile.tile<32x24xf32, ub>
// CHECK-NEXT:  %[[T:.*]] = tile.transpose %[[B]] : !tile.tile<32x24xf32, ub> -> !tile.tile<24x32xf32, ub>
// CHECK-NEXT:  tile.store %[[T]], %[[BT]]
// CHECK:       tile.load %[[BT]][{{.*}}] : memref<24x32xf32> -> !tile.tile<32x16xf32, l1
// CHECK-NOT:   transpose
// CHECK:       tile.matmul
func.func @f32(%a: !tv.tensor<16x24xf32>, %b: !tv.tensor<32x24xf32>) -> !tv.tensor<16x32xf32> {
  %c = tv.matmul %a, %b transpose_b acc(f32) : !tv.tensor<16x24xf32>, !tv.tensor<32x24xf32> -> !tv.tensor<16x32xf32>
  func.return %c : !tv.tensor<16x32xf32>
}

// -----

// A transpose that tv's canonicalization would fold into an i8 matmul's flag
// stays a transpose nest.
// CHECK-LABEL: func.func @i8
// CHECK:       memref.alloc() : memref<64x32xi8>
// CHECK:       tile.transpose
// CHECK:       tile.matmul
func.func @i8(%a: !tv.tensor<32x64xi8>, %b: !tv.tensor<32x64xi8>) -> !tv.tensor<32x32xi32> {
  %t = tv.transpose %b [1, 0] : !tv.tensor<32x64xi8> -> !tv.tensor<64x32xi8>
  %c = tv.matmul %a, %t acc(i32) : !tv.tensor<32x64xi8>, !tv.tensor<64x32xi8> -> !tv.tensor<32x32xi32>
  func.return %c : !tv.tensor<32x32xi32>
}

// -----

// f16 keeps the flag: the move into L0B transposes.
// CHECK-LABEL: func.func @f16
// CHECK-NOT:   tile.transpose
// CHECK-NOT:   memref.alloc
// CHECK:       tile.move %{{.*}} transpose
func.func @f16(%a: !tv.tensor<16x24xf16>, %b: !tv.tensor<32x24xf16>) -> !tv.tensor<16x32xf16> {
  %c = tv.matmul %a, %b transpose_b acc(f32) : !tv.tensor<16x24xf16>, !tv.tensor<32x24xf16> -> !tv.tensor<16x32xf16>
  func.return %c : !tv.tensor<16x32xf16>
}
