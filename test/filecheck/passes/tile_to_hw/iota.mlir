// tile.iota lowers to a vdup per lane of row 0's first 32-byte block, vadds
// doubling the filled lanes (8 -> 16 -> 32 -> 64), then one vcopy of row 0 to
// the other rows (a repeat a row, row 0 read again: source stride 0); as the
// lane positions of a computed mask it feeds vmins and vcmps eq (i32 lanes
// compare for eq only: lt is not min == limit; the limit is a tile.fill of a
// run-time number: its scalar, the fill writes nothing) and vselect.
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b}' | filecheck %s

// CHECK-LABEL: func.func @mask
// CHECK-COUNT-8: ascend_hw.vdup %{{.*}} -> %[[COL:.*]] {mask = #ascend_hw.mask<0x{{[0-9a-f]+}}>} : i32
// CHECK:         ascend_hw.vadds %[[COL]], %{{.*}} {mask = 8 : i64}
// CHECK:         ascend_hw.vadds %[[COL]], %{{.*}} {mask = 16 : i64}
// CHECK:         ascend_hw.vadds %[[COL]], %{{.*}} {mask = 32 : i64}
// CHECK:         ascend_hw.vcopy %[[COL]] -> %{{.*}} {repeat = 7 : i64, blk_stride = array<i64: 1, 1>, rep_stride = array<i64: 0, 8>}
// CHECK-NOT:     ascend_hw.vdup %n
// CHECK:         ascend_hw.vmins %[[COL]], %n -> %[[LEAST:.*]] {repeat = 8 : i64}
// CHECK:         ascend_hw.vcmps eq %[[LEAST]], %n -> %[[BITS:.*]] {repeat = 8 : i64}
// CHECK:         ascend_hw.vselect %[[BITS]],
func.func @mask(%v: memref<8x64xf32>, %len: index, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%c0, %c0] : memref<8x64xf32> -> !tile.tile<8x64xf32, ub>
  %col = tile.iota : !tile.tile<8x64xi32, ub>
  %n = arith.index_cast %len : index to i32
  %lim = tile.fill %n : i32 -> !tile.tile<8x64xi32, ub>
  %z = arith.constant 0.0 : f32
  %zero = tile.fill %z : f32 -> !tile.tile<8x64xf32, ub>
  %m = tile.select lt %col, %lim, %t, %zero : !tile.tile<8x64xi32, ub>, !tile.tile<8x64xi32, ub>, !tile.tile<8x64xf32, ub>, !tile.tile<8x64xf32, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<8x64xf32, ub> -> memref<8x64xf32>
  func.return
}
