// The key step's decisions (docs/tiling.md, *Attention*): with a mask, the
// mask blocks of a group of key blocks are loaded with their K and V blocks
// (attention-prefetch: K, mask, V per block, before the group's scores), not
// right before each block's softmax; with key blocks of 64 (an f32 row is one
// vector repeat), the row maxima come from the f32 scores (attention-f32-max:
// the same values, reduced by blocks) rather than from the f16 ones. Each
// switchable off, also through pypto-lower (without the f32 maxima the
// estimate may take other key blocks: NARROW checks the f16 reduction of
// whatever it takes).
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b attention-prefetch=false}' 2>&1 | filecheck %s --check-prefix=LATE
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b attention-prefetch=false}' --mlir-print-ir-after=tv-to-tile 2>&1 | filecheck %s --check-prefix=LATE
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b attention-f32-max=false}' 2>&1 | filecheck %s --check-prefix=NARROW
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b attention-f32-max=false}' --mlir-print-ir-after=tv-to-tile 2>&1 | filecheck %s --check-prefix=NARROW

// CHECK:      remark: fused attention {{.*}} key blocks of 64, {{.*}}; row maxima from the f32 scores by blocks; masks loaded with the K and V blocks
// CHECK:      tile.load %k
// CHECK-NEXT: tile.load %mask
// CHECK-NEXT: tile.load %v
// CHECK-NEXT: tile.load %k
// CHECK-NEXT: tile.load %mask
// CHECK-NEXT: tile.load %v
// CHECK-NOT:  tile.load
// CHECK:      tile.matmul
// CHECK:      tile.add
// CHECK:      tile.cast %{{.*}} : !tile.tile<16x64xf16, ub> -> !tile.tile<16x64xf32, ub>
// CHECK-NEXT: tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<16x64xf32, ub> -> !tile.tile<16x1xf32, ub>

// LATE-NOT:   masks loaded
// LATE:       tile.load %k
// LATE-NEXT:  tile.load %v
// LATE-NEXT:  tile.load %k
// LATE-NEXT:  tile.load %v
// LATE:       tile.matmul
// LATE:       tile.load %mask
// LATE-NEXT:  tile.add

// NARROW-NOT: row maxima from the f32
// NARROW:     masks loaded with the K and V blocks
// NARROW:     tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<16x[[KEYS:[0-9]+]]xf16, ub> -> !tile.tile<16x1xf16, ub>
// NARROW-NOT: tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<16x[[KEYS]]xf32, ub>
func.func @attention(%q: !tv.tensor<192x64xf16>, %k: !tv.tensor<192x64xf16>, %v: !tv.tensor<192x64xf16>, %mask: !tv.tensor<192x192xf16>) -> !tv.tensor<192x64xf16> {
  %kt = tv.transpose %k [1, 0] : !tv.tensor<192x64xf16> -> !tv.tensor<64x192xf16>
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<192x64xf16>, !tv.tensor<64x192xf16> -> !tv.tensor<192x192xf16>
  %c = arith.constant 8.801270e-02 : f16
  %x = tv.mul %s, %c : !tv.tensor<192x192xf16>, f16 -> !tv.tensor<192x192xf16>
  %m = tv.add %x, %mask : !tv.tensor<192x192xf16>
  %p = tv.softmax %m axis = 1 : !tv.tensor<192x192xf16>
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<192x192xf16>, !tv.tensor<192x64xf16> -> !tv.tensor<192x64xf16>
  func.return %o : !tv.tensor<192x64xf16>
}
