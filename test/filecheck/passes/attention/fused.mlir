// softmax(q @ k^T / sqrt(d)) @ v becomes one nest per query block: the scores
// (l0c -> ub), their scale (/ 8 as the exact * 0.125), an online softmax (row
// max and sum carried, the accumulator rescaled) and the product with V
// (probabilities ub -> l1 nz), with no GM temporary; the row sums come from
// the cube (p times a 64x16 block of ones, the estimate's choice here), the
// largest of their 16 equal columns divides at the end; the key blocks after
// the first two run in groups of four, their loads (K and V, 8) first; the
// row maxima of 64-key blocks from the scores' f32 copy (attention-f32-max).
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' --verify-diagnostics | filecheck %s

// CHECK-LABEL: func.func @attention
// CHECK-NOT:  memref.alloc
// CHECK:      scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:        tile.load %q[%[[ROW]], %{{.*}}] : memref<1024x64xf16> -> !tile.tile<{{.*}}x64xf16, l1, layout = nz>
// CHECK:        tile.move %{{.*}} -> !tile.tile<{{.*}}x64xf16, l0a>
// CHECK:        tile.load %k
// CHECK:        tile.load %v
// CHECK:        tile.move %{{.*}} transpose
// CHECK:        tile.matmul
// CHECK:        tile.move %{{.*}} : !tile.tile<{{.*}}xf32, l0c> -> !tile.tile<{{.*}}xf16, ub>
// CHECK-NOT:    tile.div
// CHECK:        tile.mul %{{.*}}, %{{.*}} : !tile.tile<{{.*}}xf16, ub>, f16
// CHECK:        tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<{{.*}}x64xf32, ub>
// CHECK:        tile.exp
// CHECK-NOT:    tile.reduce_sum
// CHECK:        tile.cast %{{.*}} -> !tile.tile<{{.*}}xf16, ub>
// CHECK:        tile.move %{{.*}} -> !tile.tile<{{.*}}xf16, l1, layout = nz>
// CHECK:        tile.matmul
// CHECK:        tile.matmul %{{.*}}, %{{.*}} : !tile.tile<{{.*}}, l0a>, !tile.tile<{{.*}}x16xf16, l0b> -> !tile.tile<{{.*}}x16xf32, l0c>
// CHECK:        scf.for %{{.*}} iter_args(
// CHECK-COUNT-8: tile.load
// CHECK:          tile.mul
// CHECK:          tile.add
// CHECK:          scf.yield
// CHECK:        tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<{{.*}}x16xf32, ub>
// CHECK:        tile.div
// CHECK:        tile.cast %{{.*}} -> !tile.tile<{{.*}}x64xf16, ub>
// CHECK:        tile.store %{{.*}}, %out[%[[ROW]], %{{.*}}]
// CHECK-NOT:  memref.dealloc
func.func @attention(%q: !tv.tensor<1024x64xf16>, %k: !tv.tensor<1024x64xf16>, %v: !tv.tensor<1024x64xf16>) -> !tv.tensor<1024x64xf16> {
  %kt = tv.transpose %k [1, 0] : !tv.tensor<1024x64xf16> -> !tv.tensor<64x1024xf16>
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<1024x64xf16>, !tv.tensor<64x1024xf16> -> !tv.tensor<1024x1024xf16>
  %c = arith.constant 8.000000e+00 : f16
  %x = tv.div %s, %c : !tv.tensor<1024x1024xf16>, f16 -> !tv.tensor<1024x1024xf16>
  %p = tv.softmax %x axis = 1 : !tv.tensor<1024x1024xf16>
  // expected-remark @+1 {{fused attention (tv.matmul, tv.div, tv.softmax, tv.matmul) as one nest over 1024x1024: query blocks of}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<1024x1024xf16>, !tv.tensor<1024x64xf16> -> !tv.tensor<1024x64xf16>
  func.return %o : !tv.tensor<1024x64xf16>
}

// -----

// An additive mask joins the nest (loaded per query and key block); heads are
// an outer loop; a partial key block zero-pads the probabilities and V.

// CHECK-LABEL: func.func @masked_heads
// CHECK-NOT:  memref.alloc
// CHECK:      scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:        tile.load %q[%[[H]],
// CHECK:        tile.load %mask
// CHECK:        tile.add
// CHECK:        tile.reduce_max
// CHECK:        tile.pad %{{.*}} zero
// CHECK:        tile.store %{{.*}}, %out[%[[H]],
func.func @masked_heads(%q: !tv.tensor<2x40x16xf16>, %k: !tv.tensor<2x40x16xf16>, %v: !tv.tensor<2x40x16xf16>, %mask: !tv.tensor<40x40xf16>) -> !tv.tensor<2x40x16xf16> {
  %kt = tv.transpose %k [0, 2, 1] : !tv.tensor<2x40x16xf16> -> !tv.tensor<2x16x40xf16>
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<2x40x16xf16>, !tv.tensor<2x16x40xf16> -> !tv.tensor<2x40x40xf16>
  %c = arith.constant 4.000000e+00 : f16
  %x = tv.div %s, %c : !tv.tensor<2x40x40xf16>, f16 -> !tv.tensor<2x40x40xf16>
  %y = tv.add %x, %mask : !tv.tensor<2x40x40xf16>, !tv.tensor<40x40xf16> -> !tv.tensor<2x40x40xf16>
  %p = tv.softmax %y axis = 2 : !tv.tensor<2x40x40xf16>
  // expected-remark @+1 {{fused attention (tv.matmul, tv.div, tv.add, tv.softmax, tv.matmul) as one nest over 2x40x40}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<2x40x40xf16>, !tv.tensor<2x40x16xf16> -> !tv.tensor<2x40x16xf16>
  func.return %o : !tv.tensor<2x40x16xf16>
}

// -----

// The softmax written out (`e = pto.exp(x - x.max(axis=-1, keepdims=True));
// e / e.sum(axis=-1, keepdims=True)`) and cast to f16 afterwards is the same
// softmax: one nest, evaluated online from x (no reduction of the spelled form
// is emitted as such, nothing goes to GM).

// CHECK-LABEL: func.func @spelled
// CHECK-NOT:  memref.alloc
// CHECK:        tile.reduce_max %{{.*}}, axis = 1
// CHECK:        tile.exp
// CHECK:        tile.matmul
// CHECK:        tile.matmul %{{.*}}, %{{.*}} : {{.*}} -> !tile.tile<{{.*}}x16xf32, l0c>
// CHECK:        tile.store
func.func @spelled(%q: !tv.tensor<2x64x32xf16>, %k: !tv.tensor<2x64x32xf16>, %v: !tv.tensor<2x64x32xf16>) -> !tv.tensor<2x64x32xf16> {
  %s = tv.matmul %q, %k transpose_b acc(f32) : !tv.tensor<2x64x32xf16>, !tv.tensor<2x64x32xf16> -> !tv.tensor<2x64x64xf16>
  %x = tv.cast %s : !tv.tensor<2x64x64xf16> to !tv.tensor<2x64x64xf32>
  %m = tv.reduce_max %x [2] keepdims : !tv.tensor<2x64x64xf32> -> !tv.tensor<2x64x1xf32>
  %d = tv.sub %x, %m : !tv.tensor<2x64x64xf32>, !tv.tensor<2x64x1xf32> -> !tv.tensor<2x64x64xf32>
  %e = tv.exp %d : !tv.tensor<2x64x64xf32>
  %t = tv.reduce_sum %e [2] keepdims : !tv.tensor<2x64x64xf32> -> !tv.tensor<2x64x1xf32>
  %p = tv.div %e, %t : !tv.tensor<2x64x64xf32>, !tv.tensor<2x64x1xf32> -> !tv.tensor<2x64x64xf32>
  %h = tv.cast %p : !tv.tensor<2x64x64xf32> to !tv.tensor<2x64x64xf16>
  // expected-remark @+1 {{fused attention (tv.matmul, tv.cast, tv.reduce_max, tv.sub, tv.exp, tv.reduce_sum, tv.div, tv.cast, tv.matmul) as one nest over 2x64x64}}
  %o = tv.matmul %h, %v acc(f32) : !tv.tensor<2x64x64xf16>, !tv.tensor<2x64x32xf16> -> !tv.tensor<2x64x32xf16>
  func.return %o : !tv.tensor<2x64x32xf16>
}
