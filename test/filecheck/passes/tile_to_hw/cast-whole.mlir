// A cast that is one vcast has no intermediates: the region at once (128
// repeats of 64 f32 in one instruction), not in the chunks casts.mlir shows
// for conversions through intermediates.
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b}' | filecheck %s

// CHECK-LABEL: func.func @widen
// CHECK:       ascend_hw.vcast none %{{.*}} -> %{{.*}} {repeat = 128 : i64} : !ascend_hw.buf<8x1024xf16, ub> -> !ascend_hw.buf<8x1024xf32, ub>
// CHECK-NOT:   ascend_hw.vcast
func.func @widen(%x: memref<8x1024xf16>, %out: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<8x1024xf16> -> !tile.tile<8x1024xf16, ub>
  %u = tile.cast %t : !tile.tile<8x1024xf16, ub> -> !tile.tile<8x1024xf32, ub>
  tile.store %u, %out[%c0, %c0] : !tile.tile<8x1024xf32, ub> -> memref<8x1024xf32>
  func.return
}
