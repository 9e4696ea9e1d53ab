// tile.select against a tile.fill: the compare reads the fill's scalar, a
// vcmps of the other compared operand (same repeats, mask and strides as the
// vcmp it replaces), and the fill writes nothing when no other op reads it.
// @rhs: lane positions (an iota) against a [1, 1] fill of a run-time i32: no
// vdup of %n and no vbrcb of a splat; i32 lanes compare for eq only, so ge is
// vmins of the positions and %n, then vcmps eq of the minima and %n. @lhs: the fill on the left,
// the compare mirrored (lt -> gt). @shared: the fill also feeds an add, so its
// vdup stays (the add reads it) and the select still takes the scalar.
// @vector: a loaded rhs keeps the vcmp. @padded: lt of i32 is not ge (vmins,
// vcmps eq, the select the other way). A partly valid fill with a
// pad value (@padded): the select reads its valid columns alone (they agree with the
// result's), so vcmps too, and neither the scalar nor the pad is written.
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b}' | filecheck %s

// CHECK-LABEL: func.func @rhs
// CHECK-NOT:   ascend_hw.vdup %n
// CHECK-NOT:   ascend_hw.vbrcb
// CHECK:       ascend_hw.vmins %[[COL:.*]], %n -> %[[LEAST:.*]] {repeat = 8 : i64}
// CHECK-NEXT:  ascend_hw.vcmps eq %[[LEAST]], %n -> %[[BITS:.*]] {repeat = 8 : i64} : !ascend_hw.buf<8x64xi32, ub>, i32 -> !ascend_hw.buf<64xi8, ub>
// CHECK-NEXT:  ascend_hw.vselect %[[BITS]], %{{.*}}, %{{.*}} -> %{{.*}} {repeat = 8 : i64}
// CHECK-NOT:   ascend_hw.vcmp
func.func @rhs(%v: memref<8x64xf32>, %lo: memref<1xi32>, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%c0, %c0] : memref<8x64xf32> -> !tile.tile<8x64xf32, ub>
  %n = memref.load %lo[%c0] : memref<1xi32>
  %col = tile.iota : !tile.tile<8x64xi32, ub>
  %first = tile.fill %n : i32 -> !tile.tile<1x1xi32, ub>
  %z = arith.constant 0.0 : f32
  %zero = tile.fill %z : f32 -> !tile.tile<8x64xf32, ub>
  %m = tile.select ge %col, %first, %t, %zero : !tile.tile<8x64xi32, ub>, !tile.tile<1x1xi32, ub>, !tile.tile<8x64xf32, ub>, !tile.tile<8x64xf32, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<8x64xf32, ub> -> memref<8x64xf32>
  func.return
}

// CHECK-LABEL: func.func @lhs
// CHECK-NOT:   ascend_hw.vdup
// CHECK:       ascend_hw.vcmps gt %[[T:.*]], %x -> %[[BITS:.*]] {mask = 64 : i64} : !ascend_hw.buf<2x32xf16, ub>, f16 -> !ascend_hw.buf<32xi8, ub>
// CHECK-NEXT:  ascend_hw.vselect %[[BITS]], %[[T]], %[[U:.*]] -> %{{.*}} {mask = 64 : i64}
func.func @lhs(%v: memref<2x32xf16>, %w: memref<2x32xf16>, %s: memref<1xf16>, %out: memref<2x32xf16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%c0, %c0] : memref<2x32xf16> -> !tile.tile<2x32xf16, ub>
  %u = tile.load %w[%c0, %c0] : memref<2x32xf16> -> !tile.tile<2x32xf16, ub>
  %x = memref.load %s[%c0] : memref<1xf16>
  %fx = tile.fill %x : f16 -> !tile.tile<2x32xf16, ub>
  %m = tile.select lt %fx, %t, %t, %u : !tile.tile<2x32xf16, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<2x32xf16, ub> -> memref<2x32xf16>
  func.return
}

// CHECK-LABEL: func.func @shared
// CHECK:       ascend_hw.vdup %x -> %[[FX:.*]] {mask = 64 : i64}
// CHECK:       ascend_hw.vcmps le %[[T:.*]], %x -> %[[BITS:.*]] {mask = 64 : i64}
// CHECK-NEXT:  ascend_hw.vselect %[[BITS]], %[[T]], %[[FX]] -> %{{.*}} {mask = 64 : i64}
func.func @shared(%v: memref<2x32xf16>, %s: memref<1xf16>, %out: memref<2x32xf16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%c0, %c0] : memref<2x32xf16> -> !tile.tile<2x32xf16, ub>
  %x = memref.load %s[%c0] : memref<1xf16>
  %fx = tile.fill %x : f16 -> !tile.tile<2x32xf16, ub>
  %m = tile.select le %t, %fx, %t, %fx : !tile.tile<2x32xf16, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<2x32xf16, ub> -> memref<2x32xf16>
  func.return
}

// CHECK-LABEL: func.func @vector
// CHECK-NOT:   ascend_hw.vcmps
// CHECK:       ascend_hw.vcmp eq %{{.*}}, %{{.*}} -> %{{.*}} {repeat = 4 : i64}
func.func @vector(%v: memref<4x64xi32>, %w: memref<4x64xi32>, %out: memref<4x64xi32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %v[%c0, %c0] : memref<4x64xi32> -> !tile.tile<4x64xi32, ub>
  %u = tile.load %w[%c0, %c0] : memref<4x64xi32> -> !tile.tile<4x64xi32, ub>
  %m = tile.select eq %t, %u, %u, %t : !tile.tile<4x64xi32, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<4x64xi32, ub> -> memref<4x64xi32>
  func.return
}

// CHECK-LABEL: func.func @padded
// CHECK-NOT:   ascend_hw.vdup
// CHECK:       ascend_hw.vmins %[[T:.*]], %n -> %[[LEAST:.*]] {mask = 40 : i64}
// CHECK-NEXT:  ascend_hw.vcmps eq %[[LEAST]], %n -> %{{.*}} {mask = 40 : i64}
func.func @padded(%v: memref<1x64xi32>, %lo: memref<1xi32>, %out: memref<1x64xi32>) {
  %c0 = arith.constant 0 : index
  %c40 = arith.constant 40 : index
  %t = tile.load %v[%c0, %c0] valid [%c40] : memref<1x64xi32> -> !tile.tile<1x64xi32, ub, valid = [1, ?]>
  %n = memref.load %lo[%c0] : memref<1xi32>
  %f = tile.fill %n valid [%c40] : i32 -> !tile.tile<1x64xi32, ub, valid = [1, ?], pad = max>
  %m = tile.select lt %t, %f, %t, %t : !tile.tile<1x64xi32, ub, valid = [1, ?]>, !tile.tile<1x64xi32, ub, valid = [1, ?], pad = max>, !tile.tile<1x64xi32, ub, valid = [1, ?]>, !tile.tile<1x64xi32, ub, valid = [1, ?]>
  tile.store %m, %out[%c0, %c0] : !tile.tile<1x64xi32, ub, valid = [1, ?]> -> memref<1x64xi32>
  func.return
}
