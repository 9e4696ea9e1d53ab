// load_scalar reads one element of GM or UB of an index, integer or float type,
// integers as index or their own type, at one index per dim inside the memref or buffer.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'ascend_hw.load_scalar' op the source must be in gm, ub, got l1
func.func @f(%a: !ascend_hw.buf<64xi32, l1>, %j: index) -> index {
  %v = ascend_hw.load_scalar %a[%j] : !ascend_hw.buf<64xi32, l1> -> index
  func.return %v : index
}

// -----

// CHECK: 'ascend_hw.load_scalar' op load_scalar reads index, i16, i32, f16, f32 elements, got i8
func.func @f(%x: memref<64xi8>, %j: index) -> index {
  %v = ascend_hw.load_scalar %x[%j] : memref<64xi8> -> index
  func.return %v : index
}

// -----

// CHECK: 'ascend_hw.load_scalar' op a i32 element is read as index, i32, not i16
func.func @f(%x: memref<64xi32>, %j: index) -> i16 {
  %v = ascend_hw.load_scalar %x[%j] : memref<64xi32> -> i16
  func.return %v : i16
}

// -----

// CHECK: 'ascend_hw.load_scalar' op a f32 element is read as f32, not index
func.func @f(%x: memref<64xf32>, %j: index) -> index {
  %v = ascend_hw.load_scalar %x[%j] : memref<64xf32> -> index
  func.return %v : index
}

// -----

// CHECK: 'ascend_hw.load_scalar' op source origin [64] is outside memref<64xindex>
func.func @f(%x: memref<64xindex>) -> index {
  %c64 = arith.constant 64 : index
  %v = ascend_hw.load_scalar %x[%c64] : memref<64xindex> -> index
  func.return %v : index
}

// -----

// CHECK: 'ascend_hw.load_scalar' op index [8] is outside !ascend_hw.buf<8xi32, ub>
func.func @f() -> index {
  %c8 = arith.constant 8 : index
  %a = ascend_hw.alloc [0, 32) : !ascend_hw.buf<8xi32, ub>
  %v = ascend_hw.load_scalar %a[%c8] : !ascend_hw.buf<8xi32, ub> -> index
  func.return %v : index
}

// -----

// CHECK: 'ascend_hw.load_scalar' op source memref<8x8xindex> needs 2 indices, got 1
func.func @f(%x: memref<8x8xindex>, %j: index) -> index {
  %v = ascend_hw.load_scalar %x[%j] : memref<8x8xindex> -> index
  func.return %v : index
}
