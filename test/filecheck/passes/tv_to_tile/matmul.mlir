// Matmul on two levels: L1 blocks of fa x fb L0 base blocks (here 32x32 blocks
// of 16x16x32 base blocks, asked for with matmul-tile-sizes=M1,N1,M0,N0,K0),
// one l0c accumulator per base block, K accumulated in l0c (the first K step
// without an accumulator, the rest in an scf.for carrying them). A K tail makes
// the l1 tiles zero-padded (pad = zero, kept by the moves to l0a/l0b). Whole L1
// blocks come first; the M and N rests use single base blocks with tails.
// Results leave l0c through the fixpipe, f32 -> f16.
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny matmul-tile-sizes=32,32,16,16,32}' | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' --split-input-file --verify-diagnostics

func.func @gemm(%a: !tv.tensor<40x70xf16>, %b: !tv.tensor<70x45xf16>) -> !tv.tensor<40x45xf16> {
  // expected-remark@below {{tiled tv.matmul 40x45x70: L1 blocks 16x16x80, L0 base blocks 16x16x80, 1 accumulator(s) in l0c; double-buffered}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<40x70xf16>, !tv.tensor<70x45xf16> -> !tv.tensor<40x45xf16>
  func.return %c : !tv.tensor<40x45xf16>
}

// CHECK-LABEL: func.func @gemm(%a: memref<40x70xf16>, %b: memref<70x45xf16>, %out: memref<40x45xf16>) {
// The whole 32x32 L1 block: two A and two B base blocks in l1, each moved to
// l0a/l0b once, four matmuls.
// CHECK:         %[[A0:.*]] = tile.load %a[%[[C0:.*]], %[[C0]]] : memref<40x70xf16> -> !tile.tile<16x32xf16, l1, layout = nz, pad = zero>
// CHECK-NEXT:    %[[A1:.*]] = tile.load %a[%[[C16:.*]], %[[C0]]] : memref<40x70xf16> -> !tile.tile<16x32xf16, l1, layout = nz, pad = zero>
// CHECK-NEXT:    %[[B0:.*]] = tile.load %b[%[[C0]], %[[C0]]] : memref<70x45xf16> -> !tile.tile<32x16xf16, l1, layout = nz, pad = zero>
// CHECK-NEXT:    %[[B1:.*]] = tile.load %b[%[[C0]], %[[C16]]] : memref<70x45xf16> -> !tile.tile<32x16xf16, l1, layout = nz, pad = zero>
// CHECK-NEXT:    %[[L0A:.*]] = tile.move %[[A0]] : !tile.tile<16x32xf16, l1, layout = nz, pad = zero> -> !tile.tile<16x32xf16, l0a, pad = zero>
// CHECK-NEXT:    %[[L0A1:.*]] = tile.move %[[A1]] : !tile.tile<16x32xf16, l1, layout = nz, pad = zero> -> !tile.tile<16x32xf16, l0a, pad = zero>
// CHECK-NEXT:    %[[L0B:.*]] = tile.move %[[B0]] : !tile.tile<32x16xf16, l1, layout = nz, pad = zero> -> !tile.tile<32x16xf16, l0b, pad = zero>
// CHECK-NEXT:    %[[L0B1:.*]] = tile.move %[[B1]] : !tile.tile<32x16xf16, l1, layout = nz, pad = zero> -> !tile.tile<32x16xf16, l0b, pad = zero>
// CHECK-NEXT:    %[[P00:.*]] = tile.matmul %[[L0A]], %[[L0B]] : !tile.tile<16x32xf16, l0a, pad = zero>, !tile.tile<32x16xf16, l0b, pad = zero> -> !tile.tile<16x16xf32, l0c>
// CHECK-NEXT:    tile.matmul %[[L0A]], %[[L0B1]]
// CHECK-NEXT:    tile.matmul %[[L0A1]], %[[L0B]]
// CHECK-NEXT:    tile.matmul %[[L0A1]], %[[L0B1]]
// CHECK:         %[[R0:.*]], %[[R1:.*]], %{{.*}}, %{{.*}} = scf.for %[[K:.*]] = %[[C32:.*]] to %[[C70:.*]] step %[[C32]] iter_args(%[[X:.*]] = %[[P00]], {{.*}}) -> (!tile.tile<16x16xf32, l0c>, !tile.tile<16x16xf32, l0c>, !tile.tile<16x16xf32, l0c>, !tile.tile<16x16xf32, l0c>) {
// CHECK:           %[[VK:.*]] = arith.select
// CHECK-NEXT:      tile.load %a[%[[C0]], %[[K]]] valid [%[[VK]]] : memref<40x70xf16> -> !tile.tile<16x32xf16, l1, valid = [16, ?], layout = nz, pad = zero>
// CHECK:           tile.matmul %{{.*}}, %{{.*}}, %[[X]] : !tile.tile<16x32xf16, l0a, valid = [16, ?], pad = zero>, !tile.tile<32x16xf16, l0b, valid = [?, 16], pad = zero> -> !tile.tile<16x16xf32, l0c>
// CHECK:           scf.yield
// CHECK:         tile.store %[[R0]], %out[%[[C0]], %[[C0]]] : !tile.tile<16x16xf32, l0c> -> memref<40x45xf16>
// CHECK-NEXT:    tile.store %[[R1]], %out[%[[C0]], %[[C16]]] : !tile.tile<16x16xf32, l0c> -> memref<40x45xf16>
// The N rest (13 columns) and the M rest (8 rows) in single base blocks.
// CHECK:         tile.load %b[%[[C0]], %[[C32]]] : memref<70x45xf16> -> !tile.tile<32x16xf16, l1, valid = [32, 13], layout = nz, pad = zero>
// CHECK:         tile.store {{.*}} : !tile.tile<16x16xf32, l0c, valid = [16, 13]> -> memref<40x45xf16>
// CHECK:         tile.load %a[%[[C32]], %[[C0]]] : memref<40x70xf16> -> !tile.tile<16x32xf16, l1, valid = [8, 32], layout = nz, pad = zero>
// CHECK:         tile.store {{.*}} : !tile.tile<16x16xf32, l0c, valid = [8, 16]> -> memref<40x45xf16>
// CHECK:         tile.store {{.*}} : !tile.tile<16x16xf32, l0c, valid = [8, 13]> -> memref<40x45xf16>
// CHECK-NEXT:    func.return

// -----

// Transposed operands load as stored and transpose on the way into l0a/l0b.
func.func @gemm_tt(%a: !tv.tensor<32x16xf16>, %b: !tv.tensor<16x32xf16>) -> !tv.tensor<16x16xf32> {
  // expected-remark@below {{tiled tv.matmul 16x16x32: L1 blocks 16x16x32, L0 base blocks 16x16x32}}
  %c = tv.matmul %a, %b transpose_a transpose_b acc(f32) : !tv.tensor<32x16xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<16x16xf32>
  func.return %c : !tv.tensor<16x16xf32>
}

// CHECK-LABEL: func.func @gemm_tt(%a: memref<32x16xf16>, %b: memref<16x32xf16>, %out: memref<16x16xf32>) {
// CHECK:         %[[A:.*]] = tile.load %a[%[[C0:.*]], %[[C0]]] : memref<32x16xf16> -> !tile.tile<32x16xf16, l1, layout = nz>
// CHECK-NEXT:    %[[B:.*]] = tile.load %b[%[[C0]], %[[C0]]] : memref<16x32xf16> -> !tile.tile<16x32xf16, l1, layout = nz>
// CHECK-NEXT:    %[[A0:.*]] = tile.move %[[A]] transpose : !tile.tile<32x16xf16, l1, layout = nz> -> !tile.tile<16x32xf16, l0a>
// CHECK-NEXT:    %[[B0:.*]] = tile.move %[[B]] transpose : !tile.tile<16x32xf16, l1, layout = nz> -> !tile.tile<32x16xf16, l0b>
// CHECK-NEXT:    %[[C:.*]] = tile.matmul %[[A0]], %[[B0]] : !tile.tile<16x32xf16, l0a>, !tile.tile<32x16xf16, l0b> -> !tile.tile<16x16xf32, l0c>
// CHECK-NEXT:    tile.store %[[C]], %out[%[[C0]], %[[C0]]] : !tile.tile<16x16xf32, l0c> -> memref<16x16xf32>
