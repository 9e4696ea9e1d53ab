// The fusion refused on tiny (its 4 KiB UB holds no key step: 16x16 scores in
// f16 and f32, their exponent and three 16-wide accumulators), and switched
// off by the attention-fusion option: three nests, the scores through GM (with
// row-fusion=false; with it, the scores matmul and the softmax are one nest and
// only the probabilities go through GM: ROW).
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' 2>&1 | filecheck %s --check-prefix=TINY
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b attention-fusion=false row-fusion=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b attention-fusion=false row-fusion=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b attention-fusion=false}' 2>&1 | filecheck %s --check-prefix=ROW
// tv-to-tile once with its defaults, checked by ON and CUBE.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' > %t 2>&1
// RUN: filecheck %s --check-prefix=ON < %t

// TINY: remark: attention not fused: no query and key block fits target 'tiny'
// TINY: memref.alloc
// OFF-NOT: fused attention
// OFF: memref.alloc() : memref<32x32xf16>
// OFF: memref.alloc() : memref<32x32xf16>
// ROW: remark: fused tv.softmax into the nest of tv.matmul
// ROW: memref.alloc() : memref<32x32xf16>
// ROW-NOT: memref.alloc
// ON: remark: fused attention
// ON-NOT: memref.alloc
func.func @attention(%q: !tv.tensor<32x16xf16>, %k: !tv.tensor<32x16xf16>, %v: !tv.tensor<32x16xf16>) -> !tv.tensor<32x16xf16> {
  %kt = tv.transpose %k [1, 0] : !tv.tensor<32x16xf16> -> !tv.tensor<16x32xf16>
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<32x16xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<32x32xf16>
  %c = arith.constant 4.000000e+00 : f16
  %x = tv.div %s, %c : !tv.tensor<32x32xf16>, f16 -> !tv.tensor<32x32xf16>
  %p = tv.softmax %x axis = 1 : !tv.tensor<32x32xf16>
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<32x32xf16>, !tv.tensor<32x16xf16> -> !tv.tensor<32x16xf16>
  func.return %o : !tv.tensor<32x16xf16>
}

// The vector work of a key step: attention-cube-sum=false takes the row sums
// with a reduction on the vector unit and no block of ones;
// attention-scale-multiply=false keeps the division by the scale.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b attention-cube-sum=false}' 2>&1 | filecheck %s --check-prefix=VSUM
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b attention-scale-multiply=false}' --mlir-print-ir-after=tv-to-tile 2>&1 | filecheck %s --check-prefix=DIV
// RUN: filecheck %s --check-prefix=CUBE < %t
// VSUM:     remark: fused attention {{.*}} row sums on the vector unit
// VSUM-NOT: x16xf16, l0b>
// VSUM:     tile.reduce_sum
// DIV:      tile.div %{{.*}}, %{{.*}} : !tile.tile<{{.*}}xf16, ub>, f16
// CUBE:     remark: fused attention {{.*}} row sums on the cube
// CUBE:     tile.mul %{{.*}}, %{{.*}} : !tile.tile<{{.*}}xf16, ub>, f16
// CUBE-NOT: tile.reduce_sum
