// Vector ops only touch ub, take legal element types, repeat counts, masks and
// strides, and stay inside their buffers.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'ascend_hw.vadd' op vector operands must be in ub, got l1 (!ascend_hw.buf<64x128xf16, l1>)
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %b: !ascend_hw.buf<64x128xf16, l1>) {
  ascend_hw.vadd %a, %b -> %a : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, l1> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vmul' op buffers must have one element type, got f16, f32, f16
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %b: !ascend_hw.buf<64x128xf32, ub>) {
  ascend_hw.vmul %a, %b -> %a : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf32, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vdiv' op buffer element type must be one of f16, f32, got i32
func.func @f(%a: !ascend_hw.buf<64xi32, ub>) {
  ascend_hw.vdiv %a, %a -> %a : !ascend_hw.buf<64xi32, ub>, !ascend_hw.buf<64xi32, ub> -> !ascend_hw.buf<64xi32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vadd' op buffer element type must be one of f16, f32, i16, i32, got bf16
func.func @f(%a: !ascend_hw.buf<128xbf16, ub>) {
  ascend_hw.vadd %a, %a -> %a : !ascend_hw.buf<128xbf16, ub>, !ascend_hw.buf<128xbf16, ub> -> !ascend_hw.buf<128xbf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vexp' op buffer element type must be one of f16, f32, got i16
func.func @f(%a: !ascend_hw.buf<128xi16, ub>) {
  ascend_hw.vexp %a -> %a : !ascend_hw.buf<128xi16, ub> -> !ascend_hw.buf<128xi16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vadd' op repeat must be in 1..255 (vector.max_repeat of target ascend910b), got 256
func.func @f(%a: !ascend_hw.buf<65536xf16, ub>) {
  ascend_hw.vadd %a, %a -> %a {repeat = 256} : !ascend_hw.buf<65536xf16, ub>, !ascend_hw.buf<65536xf16, ub> -> !ascend_hw.buf<65536xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vexp' op repeat must be in 1..255 (vector.max_repeat of target ascend910b), got 0
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vexp %a -> %a {repeat = 0} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vadd' op mask must enable 1..64 lanes (of 64 per repeat), got 65
func.func @f(%a: !ascend_hw.buf<64xf32, ub>) {
  ascend_hw.vadd %a, %a -> %a {mask = 65} : !ascend_hw.buf<64xf32, ub>, !ascend_hw.buf<64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vadd' op mask must enable 1..128 lanes (of 128 per repeat), got 0
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vadd %a, %a -> %a {mask = 0} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vabs' op mask 0x10000000000000000 enables lanes beyond the 64 of a repeat
func.func @f(%a: !ascend_hw.buf<64xf32, ub>) {
  ascend_hw.vabs %a -> %a {mask = #ascend_hw.mask<0x10000000000000000>} : !ascend_hw.buf<64xf32, ub> -> !ascend_hw.buf<64xf32, ub>
  func.return
}

// -----

// CHECK: a lane mask is a non-zero 128-bit pattern, got 0x0
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vabs %a -> %a {mask = #ascend_hw.mask<0>} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vbrcb' op this op has no lane mask
func.func @f(%a: !ascend_hw.buf<8xf16, ub>, %b: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vbrcb %a -> %b {mask = 8} : !ascend_hw.buf<8xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vadd' op blk_stride needs 3 i64 entries (one per lane-addressed operand), got array<i64: 1, 1>
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vadd %a, %a -> %a {blk_stride = array<i64: 1, 1>} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vexp' op rep_stride needs 2 i64 entries (one per lane-addressed operand), got array<i32: 8, 8>
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vexp %a -> %a {rep_stride = array<i32: 8, 8>} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vexp' op rep_stride entries must be non-negative, got array<i64: 8, -8>
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vexp %a -> %a {rep_stride = array<i64: 8, -8>} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// 65 contiguous repeats of 256 bytes need 16640 bytes; the buffer has 16384.
// CHECK: 'ascend_hw.vadd' op 65 repeats touch 16640 bytes of operand #0 !ascend_hw.buf<64x128xf16, ub>, which has 16384
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vadd %a, %a -> %a {repeat = 65} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// A 100-lane tail of one row fits 200 bytes; a stride of 2 blocks doubles the reach.
// CHECK: 'ascend_hw.vexp' op 1 repeats touch 392 bytes of operand #1 !ascend_hw.buf<100xf16, ub>, which has 200
func.func @f(%a: !ascend_hw.buf<100xf16, ub>) {
  ascend_hw.vexp %a -> %a {mask = 100} : !ascend_hw.buf<100xf16, ub> -> !ascend_hw.buf<100xf16, ub>
  ascend_hw.vexp %a -> %a {mask = 100, blk_stride = array<i64: 1, 2>} : !ascend_hw.buf<100xf16, ub> -> !ascend_hw.buf<100xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vadds' op scalar must be f16 like the buffers, got f32
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %s: f32) {
  ascend_hw.vadds %a, %s -> %a : !ascend_hw.buf<64x128xf16, ub>, f32 -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vdup' op scalar must be f16 like dst, got f32
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %s: f32) {
  ascend_hw.vdup %s -> %a : f32 -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vcast' op cannot convert f16 to bf16
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %b: !ascend_hw.buf<64x128xbf16, ub>) {
  ascend_hw.vcast rint %a -> %b : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xbf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vcast' op f32 -> f16 takes round mode rint or round or floor or ceil or trunc or odd, got none
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %b: !ascend_hw.buf<64x128xf32, ub>) {
  ascend_hw.vcast none %b -> %a : !ascend_hw.buf<64x128xf32, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vcast' op f16 -> f32 takes round mode none, got rint
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %b: !ascend_hw.buf<64x128xf32, ub>) {
  ascend_hw.vcast rint %a -> %b : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vreduce_sum' op dst_stride must be positive, got 0
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %r: !ascend_hw.buf<64xf16, ub>) {
  ascend_hw.vreduce_sum %a -> %r {dst_stride = 0} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vblock_reduce_max' op 9 repeats of 8 results need 144 bytes of !ascend_hw.buf<64xf16, ub>, which has 128
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %r: !ascend_hw.buf<64xf16, ub>) {
  ascend_hw.vblock_reduce_max %a -> %r {repeat = 9} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vblock_reduce_max' op reduces whole repeats: takes no lane mask
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %r: !ascend_hw.buf<64xf16, ub>) {
  ascend_hw.vblock_reduce_max %a -> %r {mask = 64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vblock_reduce_min' op writes its results packed: dst_stride must be 1, got 2
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %r: !ascend_hw.buf<64xf16, ub>) {
  ascend_hw.vblock_reduce_min %a -> %r {dst_stride = 2} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vreduce_max' op 64 results with dst_stride 2 need 254 bytes of !ascend_hw.buf<64xf16, ub>, which has 128
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %r: !ascend_hw.buf<64xf16, ub>) {
  ascend_hw.vreduce_max %a -> %r {repeat = 64, dst_stride = 2} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vbrcb' op 2 repeats read 32 bytes of !ascend_hw.buf<8xf16, ub>, which has 16
func.func @f(%a: !ascend_hw.buf<8xf16, ub>, %b: !ascend_hw.buf<64x128xf16, ub>) {
  ascend_hw.vbrcb %a -> %b {repeat = 2} : !ascend_hw.buf<8xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vbrcb' op buffer element type must be one of f16, bf16, f32, i16, i32, got i8
func.func @f(%a: !ascend_hw.buf<256xi8, ub>) {
  ascend_hw.vbrcb %a -> %a : !ascend_hw.buf<256xi8, ub> -> !ascend_hw.buf<256xi8, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vcmp' op dst is a bit buffer of i8, got i16
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %m: !ascend_hw.buf<64xi16, ub>) {
  ascend_hw.vcmp lt %a, %a -> %m : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xi16, ub>
  func.return
}

// -----

// 64 repeats of 128 lanes are 8192 bits: 1024 bytes.
// CHECK: 'ascend_hw.vcmp' op dst needs 1024 bytes for 8192 lane bits, !ascend_hw.buf<512xi8, ub> has 512
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %m: !ascend_hw.buf<512xi8, ub>) {
  ascend_hw.vcmp le %a, %a -> %m {repeat = 64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<512xi8, ub>
  func.return
}

// -----

// The vector unit compares int32 lanes for equality only (PTO-ISA TCMP, A2A3).
// CHECK: 'ascend_hw.vcmp' op compares i32 lanes with lt: the vector unit compares int32 for eq only
func.func @f(%a: !ascend_hw.buf<64xi32, ub>, %m: !ascend_hw.buf<32xi8, ub>) {
  ascend_hw.vcmp lt %a, %a -> %m : !ascend_hw.buf<64xi32, ub>, !ascend_hw.buf<64xi32, ub> -> !ascend_hw.buf<32xi8, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vcmps' op compares i32 lanes with ne: the vector unit compares int32 for eq only
func.func @f(%a: !ascend_hw.buf<64xi32, ub>, %s: i32, %m: !ascend_hw.buf<32xi8, ub>) {
  ascend_hw.vcmps ne %a, %s -> %m : !ascend_hw.buf<64xi32, ub>, i32 -> !ascend_hw.buf<32xi8, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vcmp' op compared element type must be one of f16, f32, i32, got i16
func.func @f(%a: !ascend_hw.buf<128xi16, ub>, %m: !ascend_hw.buf<32xi8, ub>) {
  ascend_hw.vcmp eq %a, %a -> %m : !ascend_hw.buf<128xi16, ub>, !ascend_hw.buf<128xi16, ub> -> !ascend_hw.buf<32xi8, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vcmps' op scalar must be f16 like src, got i32
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %m: !ascend_hw.buf<32xi8, ub>, %s: i32) {
  ascend_hw.vcmps gt %a, %s -> %m : !ascend_hw.buf<64x128xf16, ub>, i32 -> !ascend_hw.buf<32xi8, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vselect' op cond needs 32 bytes for 256 lane bits, !ascend_hw.buf<16xi8, ub> has 16
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %m: !ascend_hw.buf<16xi8, ub>) {
  ascend_hw.vselect %m, %a, %a -> %a {repeat = 2} : !ascend_hw.buf<16xi8, ub>, !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.vgather' op offsets element type must be one of i32, got i16
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %o: !ascend_hw.buf<128xi16, ub>) {
  ascend_hw.vgather %a, %o -> %a : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<128xi16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// -----

// The last enabled lane of the second repeat is lane 128 + 9: 138 offsets of 4 bytes.
// CHECK: 'ascend_hw.vgather' op 2 repeats read 552 bytes of offsets !ascend_hw.buf<128xi32, ub>, which has 512
func.func @f(%a: !ascend_hw.buf<64x128xf16, ub>, %o: !ascend_hw.buf<128xi32, ub>) {
  ascend_hw.vgather %a, %o -> %a {repeat = 2, mask = 10} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<128xi32, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}
