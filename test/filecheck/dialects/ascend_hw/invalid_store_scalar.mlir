// store_scalar writes one element of an nd ub buffer of an i16/i32 (from an
// index or its own type) or f16/f32 type, at one index per dim inside it.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'ascend_hw.store_scalar' op the destination must be in ub, got l1
func.func @f(%a: !ascend_hw.buf<64xf32, l1>, %v: f32, %j: index) {
  ascend_hw.store_scalar %v, %a[%j] : f32, !ascend_hw.buf<64xf32, l1>
  func.return
}

// -----

// CHECK: 'ascend_hw.store_scalar' op store_scalar writes i16, i32, f16, f32 elements, got i8
func.func @f(%a: !ascend_hw.buf<64xi8, ub>, %j: index) {
  ascend_hw.store_scalar %j, %a[%j] : index, !ascend_hw.buf<64xi8, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.store_scalar' op a f32 element is written from f32, not index
func.func @f(%a: !ascend_hw.buf<64xf32, ub>, %j: index) {
  ascend_hw.store_scalar %j, %a[%j] : index, !ascend_hw.buf<64xf32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.store_scalar' op destination !ascend_hw.buf<8x8xf32, ub> needs 2 indices, got 1
func.func @f(%a: !ascend_hw.buf<8x8xf32, ub>, %v: f32, %j: index) {
  ascend_hw.store_scalar %v, %a[%j] : f32, !ascend_hw.buf<8x8xf32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.store_scalar' op index [8] is outside !ascend_hw.buf<8xf32, ub>
func.func @f(%a: !ascend_hw.buf<8xf32, ub>, %v: f32) {
  %c8 = arith.constant 8 : index
  ascend_hw.store_scalar %v, %a[%c8] : f32, !ascend_hw.buf<8xf32, ub>
  func.return
}
