// The DMA ops refuse missing paths, mismatched bytes, misaligned bursts and
// windows that run outside their buffers or memrefs.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'ascend_hw.dma_load' op bursts and burst_bytes must be positive, got 0 and 64
func.func @f(%x: memref<64x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.dma_load %x[%i, %i] -> %a {bursts = 0, burst_bytes = 64} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_load' op gaps must be non-negative, got src_gap -2, dst_gap 0
func.func @f(%x: memref<64x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.dma_load %x[%i, %i] -> %a {bursts = 2, burst_bytes = 64, src_gap = -2} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_load' op a DMA copies bytes: element types must match, got f32 and f16
func.func @f(%x: memref<64x64xf32>, %i: index, %a: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.dma_load %x[%i, %i] -> %a {bursts = 1, burst_bytes = 64} : memref<64x64xf32> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_load' op burst_bytes 63 is not a whole number of f16 elements
func.func @f(%x: memref<64x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.dma_load %x[%i, %i] -> %a {bursts = 1, burst_bytes = 63} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_load' op target ascend910b has no DMA path gm -> l0a (it has gm -> ub, gm -> l1, l1 -> l0a, l1 -> l0b, l1 -> ub, ub -> gm, ub -> l1, l0c -> gm, l0c -> l1, l0c -> ub)
func.func @f(%x: memref<64x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, l0a, nz>) {
  ascend_hw.dma_load %x[%i, %i] -> %a {bursts = 1, burst_bytes = 512} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, l0a, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_load' op destination gap 16 must be a multiple of 32 bytes (alignment of ub on target ascend910b)
func.func @f(%x: memref<64x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.dma_load %x[%i, %i] -> %a {bursts = 2, burst_bytes = 64, dst_gap = 16} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// 65 bursts of 100 bytes land 128 bytes apart in UB: 8292 bytes, the buffer has 8192.
// CHECK: 'ascend_hw.dma_load' op 65 bursts of 100 bytes with pitch 128 cover 8292 bytes, more than the 8192 bytes of destination !ascend_hw.buf<64x64xf16, ub>
func.func @f(%x: memref<128x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.dma_load %x[%i, %i] -> %a {bursts = 65, burst_bytes = 100, src_gap = 28} : memref<128x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_load' op source memref<64x64xf16> needs 2 indices, got 1
func.func @f(%x: memref<64x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.dma_load %x[%i] -> %a {bursts = 1, burst_bytes = 128} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_load' op source origin [64, 0] is outside memref<64x64xf16>
func.func @f(%x: memref<64x64xf16>, %a: !ascend_hw.buf<64x64xf16, ub>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  ascend_hw.dma_load %x[%c64, %c0] -> %a {bursts = 1, burst_bytes = 128} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// Rows 32..64 of a 64-row view: one row too many. The view's strides decide where it ends, whatever its offset.
// CHECK: 'ascend_hw.dma_load' op source window of 8320 bytes from [32, 0] runs past the end of memref<64x64xf16, strided<[128, 1], offset: ?>>
func.func @f(%x: memref<64x64xf16, strided<[128, 1], offset: ?>>, %a: !ascend_hw.buf<64x64xf16, ub>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  ascend_hw.dma_load %x[%c32, %c0] -> %a {bursts = 33, burst_bytes = 128, src_gap = 128} : memref<64x64xf16, strided<[128, 1], offset: ?>> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_store' op l0c is read by fixpipe, not by dma_store
func.func @f(%x: memref<64x64xf32>, %i: index, %c: !ascend_hw.buf<64x64xf32, l0c, nz>) {
  ascend_hw.dma_store %c -> %x[%i, %i] {bursts = 1, burst_bytes = 512} : !ascend_hw.buf<64x64xf32, l0c, nz> -> memref<64x64xf32>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_store' op target ascend910b has no DMA path l1 -> gm
func.func @f(%x: memref<64x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, l1>) {
  ascend_hw.dma_store %a -> %x[%i, %i] {bursts = 1, burst_bytes = 512} : !ascend_hw.buf<64x64xf16, l1> -> memref<64x64xf16>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_store' op source gap 8 must be a multiple of 32 bytes (alignment of ub on target ascend910b)
func.func @f(%x: memref<64x64xf16>, %i: index, %a: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.dma_store %a -> %x[%i, %i] {bursts = 2, burst_bytes = 64, src_gap = 8} : !ascend_hw.buf<64x64xf16, ub> -> memref<64x64xf16>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_store' op destination window of 2048 bytes from [63, 0] runs past the end of memref<64x64xf16>
func.func @f(%x: memref<64x64xf16>, %a: !ascend_hw.buf<64x64xf16, ub>) {
  %c0 = arith.constant 0 : index
  %c63 = arith.constant 63 : index
  ascend_hw.dma_store %a -> %x[%c63, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<64x64xf16, ub> -> memref<64x64xf16>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_copy' op l0c is read by fixpipe, not by dma_copy
func.func @f(%c: !ascend_hw.buf<16x16xf32, l0c, nz>, %u: !ascend_hw.buf<16x16xf32, ub>) {
  ascend_hw.dma_copy %c -> %u {bursts = 1, burst_bytes = 1024} : !ascend_hw.buf<16x16xf32, l0c, nz> -> !ascend_hw.buf<16x16xf32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_copy' op burst_bytes 256 of an on-chip copy must be a multiple of 512 (alignment of l0a on target ascend910b)
func.func @f(%l: !ascend_hw.buf<32x16xf16, l1, nz>, %a: !ascend_hw.buf<32x16xf16, l0a, nz>) {
  ascend_hw.dma_copy %l -> %a {bursts = 1, burst_bytes = 256} : !ascend_hw.buf<32x16xf16, l1, nz> -> !ascend_hw.buf<32x16xf16, l0a, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_copy' op target ascend910b has no DMA path ub -> l0a
func.func @f(%u: !ascend_hw.buf<32x16xf16, ub>, %a: !ascend_hw.buf<32x16xf16, l0a, nz>) {
  ascend_hw.dma_copy %u -> %a {bursts = 1, burst_bytes = 1024} : !ascend_hw.buf<32x16xf16, ub> -> !ascend_hw.buf<32x16xf16, l0a, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.dma_copy' op 2 bursts of 1024 bytes with pitch 1536 cover 2560 bytes, more than the 2048 bytes of source !ascend_hw.buf<64x16xf16, l1, nz>
func.func @f(%l: !ascend_hw.buf<64x16xf16, l1, nz>, %a: !ascend_hw.buf<64x16xf16, l0a, nz>) {
  ascend_hw.dma_copy %l -> %a {bursts = 2, burst_bytes = 1024, src_gap = 512} : !ascend_hw.buf<64x16xf16, l1, nz> -> !ascend_hw.buf<64x16xf16, l0a, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op rows and cols must be positive, got 0 and 16
func.func @f(%x: memref<64x64xf16>, %i: index, %l: !ascend_hw.buf<64x64xf16, l1, nz>) {
  ascend_hw.nd2nz %x[%i, %i] -> %l[%i, %i] {rows = 0, cols = 16} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op source must be in gm, got l1
func.func @f(%y: !ascend_hw.buf<64x64xf16, l1>, %i: index, %l: !ascend_hw.buf<64x64xf16, l1, nz>) {
  ascend_hw.nd2nz %y[%i, %i] -> %l[%i, %i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf16, l1> -> !ascend_hw.buf<64x64xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op destination must be in l1, got ub
func.func @f(%x: memref<64x64xf16>, %i: index, %u: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.nd2nz %x[%i, %i] -> %u[%i, %i] {rows = 16, cols = 16} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op destination must be nz, got !ascend_hw.buf<64x64xf16, l1>
func.func @f(%x: memref<64x64xf16>, %i: index, %l: !ascend_hw.buf<64x64xf16, l1>) {
  ascend_hw.nd2nz %x[%i, %i] -> %l[%i, %i] {rows = 16, cols = 16} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, l1>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op element types must match: f32 -> f16
func.func @f(%x: memref<64x64xf32>, %i: index, %l: !ascend_hw.buf<64x64xf16, l1, nz>) {
  ascend_hw.nd2nz %x[%i, %i] -> %l[%i, %i] {rows = 16, cols = 16} : memref<64x64xf32> -> !ascend_hw.buf<64x64xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op source memref must have at least 2 dims
func.func @f(%x: memref<64xf16>, %i: index, %l: !ascend_hw.buf<64x64xf16, l1, nz>) {
  ascend_hw.nd2nz %x[%i] -> %l[%i, %i] {rows = 1, cols = 16} : memref<64xf16> -> !ascend_hw.buf<64x64xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op destination needs 2 indices, got 1
func.func @f(%x: memref<64x64xf16>, %i: index, %l: !ascend_hw.buf<64x64xf16, l1, nz>) {
  ascend_hw.nd2nz %x[%i, %i] -> %l[%i] {rows = 16, cols = 16} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op source block 32x16 at [48, 0] does not fit memref<64x64xf16>
func.func @f(%x: memref<64x64xf16>, %l: !ascend_hw.buf<64x64xf16, l1, nz>) {
  %c0 = arith.constant 0 : index
  %c48 = arith.constant 48 : index
  ascend_hw.nd2nz %x[%c48, %c0] -> %l[%c0, %c0] {rows = 32, cols = 16} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.nd2nz' op destination block at [0, 8] does not start on a 16x16 fractal boundary of !ascend_hw.buf<64x64xf16, l1, nz>
func.func @f(%x: memref<64x64xf16>, %l: !ascend_hw.buf<64x64xf16, l1, nz>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  ascend_hw.nd2nz %x[%c0, %c0] -> %l[%c0, %c8] {rows = 16, cols = 16} : memref<64x64xf16> -> !ascend_hw.buf<64x64xf16, l1, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.load_l0' op destination must be in l0a, l0b, got ub
func.func @f(%l: !ascend_hw.buf<64x64xf16, l1, nz>, %i: index, %u: !ascend_hw.buf<64x64xf16, ub>) {
  ascend_hw.load_l0 %l[%i, %i] -> %u[%i, %i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf16, l1, nz> -> !ascend_hw.buf<64x64xf16, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.load_l0' op source and destination must be nz, got nd -> nz
func.func @f(%l: !ascend_hw.buf<64x64xf16, l1>, %i: index, %a: !ascend_hw.buf<64x64xf16, l0a, nz>) {
  ascend_hw.load_l0 %l[%i, %i] -> %a[%i, %i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf16, l1> -> !ascend_hw.buf<64x64xf16, l0a, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.load_l0' op element types must match: f16 -> bf16
func.func @f(%l: !ascend_hw.buf<64x64xf16, l1, nz>, %i: index, %a: !ascend_hw.buf<64x64xbf16, l0a, nz>) {
  ascend_hw.load_l0 %l[%i, %i] -> %a[%i, %i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf16, l1, nz> -> !ascend_hw.buf<64x64xbf16, l0a, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.load_l0' op only 16-bit fractals transpose, got f32
func.func @f(%l: !ascend_hw.buf<64x64xf32, l1, nz>, %i: index, %a: !ascend_hw.buf<64x64xf32, l0b, nz>) {
  ascend_hw.load_l0 %l[%i, %i] -> %a[%i, %i] {rows = 16, cols = 16, transpose} : !ascend_hw.buf<64x64xf32, l1, nz> -> !ascend_hw.buf<64x64xf32, l0b, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.load_l0' op rows and cols must be whole 16x16 fractals, got a 16x24 block
func.func @f(%l: !ascend_hw.buf<64x64xf16, l1, nz>, %i: index, %a: !ascend_hw.buf<64x64xf16, l0a, nz>) {
  ascend_hw.load_l0 %l[%i, %i] -> %a[%i, %i] {rows = 16, cols = 24} : !ascend_hw.buf<64x64xf16, l1, nz> -> !ascend_hw.buf<64x64xf16, l0a, nz>
  func.return
}

// -----

// A transposed 32x64 destination block reads 64x32 of the source.
// CHECK: 'ascend_hw.load_l0' op source block 64x32 at [32, 0] does not fit !ascend_hw.buf<64x64xf16, l1, nz>
func.func @f(%l: !ascend_hw.buf<64x64xf16, l1, nz>, %a: !ascend_hw.buf<64x64xf16, l0b, nz>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  ascend_hw.load_l0 %l[%c32, %c0] -> %a[%c0, %c0] {rows = 32, cols = 64, transpose} : !ascend_hw.buf<64x64xf16, l1, nz> -> !ascend_hw.buf<64x64xf16, l0b, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.fixpipe' op source must be in l0c, got ub
func.func @f(%u: !ascend_hw.buf<64x64xf32, ub>, %i: index, %x: memref<64x64xf32>) {
  ascend_hw.fixpipe %u[%i, %i] -> %x[%i, %i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf32, ub> -> memref<64x64xf32>
  func.return
}

// -----

// CHECK: 'ascend_hw.fixpipe' op source must be an nz accumulator, got !ascend_hw.buf<64x64xf32, l0c>
func.func @f(%c: !ascend_hw.buf<64x64xf32, l0c>, %i: index, %x: memref<64x64xf32>) {
  ascend_hw.fixpipe %c[%i, %i] -> %x[%i, %i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf32, l0c> -> memref<64x64xf32>
  func.return
}

// -----

// CHECK: 'ascend_hw.fixpipe' op f32, i32 accumulators convert to f32/f16/bf16: cannot write f32 as i8
func.func @f(%c: !ascend_hw.buf<64x64xf32, l0c, nz>, %i: index, %x: memref<64x64xi8>) {
  ascend_hw.fixpipe %c[%i, %i] -> %x[%i, %i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf32, l0c, nz> -> memref<64x64xi8>
  func.return
}

// -----

// CHECK: 'ascend_hw.fixpipe' op target ascend910b has no DMA path l0c -> l0a
func.func @f(%c: !ascend_hw.buf<64x64xf32, l0c, nz>, %i: index, %a: !ascend_hw.buf<64x64xf32, l0a, nz>) {
  ascend_hw.fixpipe %c[%i, %i] -> %a[%i, %i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf32, l0c, nz> -> !ascend_hw.buf<64x64xf32, l0a, nz>
  func.return
}

// -----

// CHECK: 'ascend_hw.fixpipe' op destination buffer must be 2-D, got !ascend_hw.buf<4096xf32, ub>
func.func @f(%c: !ascend_hw.buf<64x64xf32, l0c, nz>, %i: index, %u: !ascend_hw.buf<4096xf32, ub>) {
  ascend_hw.fixpipe %c[%i, %i] -> %u[%i] {rows = 16, cols = 16} : !ascend_hw.buf<64x64xf32, l0c, nz> -> !ascend_hw.buf<4096xf32, ub>
  func.return
}

// -----

// CHECK: 'ascend_hw.fixpipe' op destination block 64x64 at [0, 32] does not fit memref<64x64xf16>
func.func @f(%c: !ascend_hw.buf<64x64xf32, l0c, nz>, %x: memref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  ascend_hw.fixpipe %c[%c0, %c0] -> %x[%c0, %c32] {rows = 64, cols = 64} : !ascend_hw.buf<64x64xf32, l0c, nz> -> memref<64x64xf16>
  func.return
}
