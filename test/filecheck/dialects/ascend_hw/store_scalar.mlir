// ascend_hw.store_scalar (the scalar unit writes one element of a ub buffer,
// tile.insert's instruction, docs/sparse.md) prints in its custom form and
// survives a round trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s
// RUN: pypto-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @store_scalar
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %a = ascend_hw.alloc [0, 256) : !ascend_hw.buf<64xi32, ub>
// CHECK-NEXT: %b = ascend_hw.alloc [256, 512) : !ascend_hw.buf<1x64xf32, ub>
// CHECK-NEXT: ascend_hw.store_scalar %j, %a[%j] : index, !ascend_hw.buf<64xi32, ub>
// CHECK-NEXT: ascend_hw.store_scalar %v, %b[%c0, %j] : f32, !ascend_hw.buf<1x64xf32, ub>
// CHECK-NEXT: ascend_hw.store_scalar %k, %a[%c0] : i32, !ascend_hw.buf<64xi32, ub>
// GENERIC: "ascend_hw.store_scalar"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (f32, !ascend_hw.buf<1x64xf32, ub>, index, index) -> ()
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @store_scalar(%v: f32, %j: index, %k: i32) {
    %c0 = arith.constant 0 : index
    %a = ascend_hw.alloc [0, 256) : !ascend_hw.buf<64xi32, ub>
    %b = ascend_hw.alloc [256, 512) : !ascend_hw.buf<1x64xf32, ub>
    ascend_hw.store_scalar %j, %a[%j] : index, !ascend_hw.buf<64xi32, ub>
    ascend_hw.store_scalar %v, %b[%c0, %j] : f32, !ascend_hw.buf<1x64xf32, ub>
    ascend_hw.store_scalar %k, %a[%c0] : i32, !ascend_hw.buf<64xi32, ub>
    func.return
  }
}
