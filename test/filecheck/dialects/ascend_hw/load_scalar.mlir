// ascend_hw.load_scalar (the scalar unit reads GM or UB, docs/sparse.md) prints
// in its custom form and survives a round trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s
// RUN: pypto-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @load_scalar
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %a = ascend_hw.alloc [0, 256) : !ascend_hw.buf<64xi32, ub>
// CHECK-NEXT: %start = ascend_hw.load_scalar %off[%r] : memref<?xindex> -> index
// CHECK-NEXT: %v = ascend_hw.load_scalar %val[%start] : memref<?xf16> -> f16
// CHECK-NEXT: %col = ascend_hw.load_scalar %idx[%c0] : memref<16xi32> -> index
// CHECK-NEXT: %j = ascend_hw.load_scalar %a[%c0] : !ascend_hw.buf<64xi32, ub> -> index
// CHECK-NEXT: %k = ascend_hw.load_scalar %idx[%c0] : memref<16xi32> -> i32
// GENERIC: "ascend_hw.load_scalar"(%{{.*}}, %{{.*}}) : (memref<?xindex>, index) -> index
// GENERIC: "ascend_hw.load_scalar"(%{{.*}}, %{{.*}}) : (!ascend_hw.buf<64xi32, ub>, index) -> index
func.func @load_scalar(%off: memref<?xindex>, %val: memref<?xf16>, %idx: memref<16xi32>, %r: index) -> (index, f16, index, index) {
  %c0 = arith.constant 0 : index
  %a = ascend_hw.alloc [0, 256) : !ascend_hw.buf<64xi32, ub>
  %start = ascend_hw.load_scalar %off[%r] : memref<?xindex> -> index
  %v = ascend_hw.load_scalar %val[%start] : memref<?xf16> -> f16
  %col = ascend_hw.load_scalar %idx[%c0] : memref<16xi32> -> index
  %j = ascend_hw.load_scalar %a[%c0] : !ascend_hw.buf<64xi32, ub> -> index
  %k = ascend_hw.load_scalar %idx[%c0] : memref<16xi32> -> i32
  func.return %start, %v, %col, %j : index, f16, index, index
}
