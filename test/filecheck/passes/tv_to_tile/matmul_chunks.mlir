// L1 chunks deeper than the cube step (matmul-tile-sizes=M1,N1,K1,M0,N0,K0):
// each chunk of K1 = 64 is loaded into l1 once and feeds K1 / K0 = 2 cube steps
// through windows along K (`tile.move ... window`). The moves of step s + 1 come
// before the matmul of step s, so that two steps' l0a/l0b tiles are live at once.
// The first chunk starts the accumulator; the full chunks are a loop; K = 200
// leaves a chunk of 8 that needs one step (a static tail, no tile-peel-tails).
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny matmul-tile-sizes=16,16,64,16,16,32}' | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny matmul-tile-sizes=16,16,64,16,16,32}' --verify-diagnostics -o /dev/null
// Refusals: K1 must be a multiple of K0.
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny matmul-tile-sizes=16,16,48,16,16,32}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=DEPTH

func.func @deep(%a: !tv.tensor<16x200xf16>, %b: !tv.tensor<200x16xf16>) -> !tv.tensor<16x16xf16> {
  // expected-remark@below {{tiled tv.matmul 16x16x200: L1 blocks 16x16x64, L0 base blocks 16x16x32, 1 accumulator(s) in l0c; double-buffered}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<16x200xf16>, !tv.tensor<200x16xf16> -> !tv.tensor<16x16xf16>
  func.return %c : !tv.tensor<16x16xf16>
}

// CHECK-LABEL: func.func @deep(
// CHECK:         %[[A:.*]] = tile.load %a[%[[C0:.*]], %[[C0]]] : memref<16x200xf16> -> !tile.tile<16x64xf16, l1, layout = nz, pad = zero>
// CHECK-NEXT:    %[[B:.*]] = tile.load %b[%[[C0]], %[[C0]]] : memref<200x16xf16> -> !tile.tile<64x16xf16, l1, layout = nz, pad = zero>
// CHECK-NEXT:    %[[A0:.*]] = tile.move %[[A]] window [0, 0] : !tile.tile<16x64xf16, l1, layout = nz, pad = zero> -> !tile.tile<16x32xf16, l0a, pad = zero>
// CHECK-NEXT:    %[[B0:.*]] = tile.move %[[B]] window [0, 0] : !tile.tile<64x16xf16, l1, layout = nz, pad = zero> -> !tile.tile<32x16xf16, l0b, pad = zero>
// CHECK-NEXT:    %[[A1:.*]] = tile.move %[[A]] window [0, 32] : !tile.tile<16x64xf16, l1, layout = nz, pad = zero> -> !tile.tile<16x32xf16, l0a, pad = zero>
// CHECK-NEXT:    %[[B1:.*]] = tile.move %[[B]] window [32, 0] : !tile.tile<64x16xf16, l1, layout = nz, pad = zero> -> !tile.tile<32x16xf16, l0b, pad = zero>
// CHECK-NEXT:    %[[P0:.*]] = tile.matmul %[[A0]], %[[B0]] : {{.*}} -> !tile.tile<16x16xf32, l0c>
// CHECK-NEXT:    %[[P1:.*]] = tile.matmul %[[A1]], %[[B1]], %[[P0]] : {{.*}} -> !tile.tile<16x16xf32, l0c>
// CHECK:         %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[X:.*]] = %[[P1]]) -> (!tile.tile<16x16xf32, l0c>) {
// CHECK-NEXT:      tile.load %a[%[[C0]], %[[K]]] : memref<16x200xf16> -> !tile.tile<16x64xf16, l1, layout = nz, pad = zero>
// CHECK-NEXT:      tile.load %b[%[[K]], %[[C0]]] : memref<200x16xf16> -> !tile.tile<64x16xf16, l1, layout = nz, pad = zero>
// CHECK-COUNT-4:   tile.move
// CHECK-NEXT:      %[[Q:.*]] = tile.matmul %{{.*}}, %{{.*}}, %[[X]]
// CHECK-NEXT:      %[[Q1:.*]] = tile.matmul %{{.*}}, %{{.*}}, %[[Q]]
// CHECK-NEXT:      scf.yield %[[Q1]] : !tile.tile<16x16xf32, l0c>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[TA:.*]] = tile.load %a[%[[C0]], %{{.*}}] : memref<16x200xf16> -> !tile.tile<16x64xf16, l1, valid = [16, 8], layout = nz, pad = zero>
// CHECK-NEXT:    %[[TB:.*]] = tile.load %b[%{{.*}}, %[[C0]]] : memref<200x16xf16> -> !tile.tile<64x16xf16, l1, valid = [8, 16], layout = nz, pad = zero>
// CHECK-NEXT:    tile.move %[[TA]] window [0, 0] : !tile.tile<16x64xf16, l1, valid = [16, 8], layout = nz, pad = zero> -> !tile.tile<16x32xf16, l0a, valid = [16, 8], pad = zero>
// CHECK-NEXT:    tile.move %[[TB]] window [0, 0] : !tile.tile<64x16xf16, l1, valid = [8, 16], layout = nz, pad = zero> -> !tile.tile<32x16xf16, l0b, valid = [8, 16], pad = zero>
// CHECK-NEXT:    %[[LAST:.*]] = tile.matmul %{{.*}}, %{{.*}}, %[[R]]
// CHECK-NEXT:    tile.store %[[LAST]], %out[%[[C0]], %[[C0]]] : !tile.tile<16x16xf32, l0c> -> memref<16x16xf16>

// DEPTH: error: matmul-tile-sizes: the L1 depth k1 = 48 is not a multiple of k0 = 32
// DEPTH: exit=1
