// A scale whose reciprocal is not exact (/ sqrt(32) = / 5.656): folded into
// the exponent's f32 argument (s * 0.1768 in f32, the row maximum of the
// unscaled f16 scores times the same factor), no f16 division per key block;
// attention-scale-fold=false rounds s / c to f16 first, as tv does. With
// key blocks of 64 the row maximum is that of the f32 s * 0.1768 (the same
// value: rounding is monotonic; attention-f32-max).
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b attention-f32-max=false}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' 2>&1 | filecheck %s --check-prefix=WIDE
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b attention-scale-fold=false}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK:     remark: fused attention {{.*}}; the scale folded into the exponent (s * 0.17{{[0-9]*}} in f32, no f16 division)
// CHECK-NOT: tile.div %{{.*}}, %{{.*}} : !tile.tile<{{.*}}xf16, ub>, f16
// CHECK:     tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<{{.*}}xf16, ub>
// CHECK:     tile.mul %{{.*}}, %{{.*}} : !tile.tile<{{.*}}x1xf32, ub>, f32
// CHECK:     tile.exp
// WIDE:      tile.mul %{{.*}}, %{{.*}} : !tile.tile<16x64xf32, ub>, f32
// WIDE-NEXT: tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<16x64xf32, ub>
// WIDE-NOT:  tile.mul %{{.*}}, %{{.*}} : !tile.tile<{{.*}}x1xf32, ub>, f32
// WIDE:      tile.exp
// OFF-NOT:   the scale folded
// OFF:       tile.div %{{.*}}, %{{.*}} : !tile.tile<{{.*}}xf16, ub>, f16
func.func @attention(%q: !tv.tensor<64x32xf16>, %k: !tv.tensor<64x32xf16>, %v: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> {
  %s = tv.matmul %q, %k transpose_b acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x64xf16>
  %c = arith.constant 5.656250e+00 : f16
  %x = tv.div %s, %c : !tv.tensor<64x64xf16>, f16 -> !tv.tensor<64x64xf16>
  %p = tv.softmax %x axis = 1 : !tv.tensor<64x64xf16>
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %o : !tv.tensor<64x32xf16>
}
