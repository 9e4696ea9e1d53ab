// tile.select prints in its custom form (one type when all four operands have
// it, else one per operand; the result type follows) with broadcast operands and
// an f32 compare selecting i32 values, and survives a round trip through the
// generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s

// CHECK-LABEL: func.func @select
func.func @select(%a: !tile.tile<64x128xf16, ub, valid = [?, 120]>, %m: !tile.tile<64x1xf16, ub, valid = [?, 1]>, %x: !tile.tile<8x64xf32, ub>, %i: !tile.tile<8x64xi32, ub>, %r: !tile.tile<1x64xi32, ub>) {
  // CHECK: %{{.*}} = tile.select gt %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !tile.tile<64x128xf16, ub, valid = [?, 120]>{{$}}
  %0 = tile.select gt %a, %a, %a, %a : !tile.tile<64x128xf16, ub, valid = [?, 120]>
  // CHECK: tile.select le %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !tile.tile<64x128xf16, ub, valid = [?, 120]>, !tile.tile<64x1xf16, ub, valid = [?, 1]>, !tile.tile<64x128xf16, ub, valid = [?, 120]>, !tile.tile<64x128xf16, ub, valid = [?, 120]>
  %1 = tile.select le %a, %m, %a, %0 : !tile.tile<64x128xf16, ub, valid = [?, 120]>, !tile.tile<64x1xf16, ub, valid = [?, 1]>, !tile.tile<64x128xf16, ub, valid = [?, 120]>, !tile.tile<64x128xf16, ub, valid = [?, 120]>
  // CHECK: tile.select eq %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !tile.tile<8x64xf32, ub>, !tile.tile<8x64xf32, ub>, !tile.tile<8x64xi32, ub>, !tile.tile<1x64xi32, ub>
  %2 = tile.select eq %x, %x, %i, %r : !tile.tile<8x64xf32, ub>, !tile.tile<8x64xf32, ub>, !tile.tile<8x64xi32, ub>, !tile.tile<1x64xi32, ub>
  // CHECK: tile.select ne
  %3 = tile.select ne %2, %2, %2, %2 : !tile.tile<8x64xi32, ub>
  // CHECK: tile.select lt
  %4 = tile.select lt %x, %x, %x, %x : !tile.tile<8x64xf32, ub>
  // CHECK: tile.select ge
  %5 = tile.select ge %x, %x, %x, %x : !tile.tile<8x64xf32, ub>
  func.return
}
