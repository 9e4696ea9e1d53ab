// Fusion: an elementwise chain with broadcast operands (a row vector through a
// rank-expanding memref.expand_shape, a [M, 1] column, a scalar) is one loop nest
// with one load per input and one store per result, also when a value is both a
// result and used further; a tile that does not change along a loop is computed
// before it. A matmul result feeding another matmul goes through a
// GM temporary (memref.alloc, deallocated before the return); the elementwise
// epilogue of the first matmul runs in ub after the move out of l0c.
// (late-invariants=false: with two row blocks for 24 cores the bias row would
// be loaded in the loop after x, late-invariants.mlir.) The matmuls' K chunks
// run in order (matmul-l2-order=false): their staggering for the L2 is
// matmul-l2-order.mlir's subject.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b late-invariants=false matmul-l2-order=false}' --verify-diagnostics | filecheck %s

func.func @bias_gelu(%x: !tv.tensor<64x256xf16>, %b: !tv.tensor<256xf16>, %scale: !tv.tensor<64x1xf16>, %s: f16) -> (!tv.tensor<64x256xf16>, !tv.tensor<64x256xf32>) {
  %a = tv.add %x, %b : !tv.tensor<64x256xf16>, !tv.tensor<256xf16> -> !tv.tensor<64x256xf16>
  %g = tv.gelu %a : !tv.tensor<64x256xf16>
  %m = tv.mul %g, %scale : !tv.tensor<64x256xf16>, !tv.tensor<64x1xf16> -> !tv.tensor<64x256xf16>
  %y = tv.sub %m, %s : !tv.tensor<64x256xf16>, f16 -> !tv.tensor<64x256xf16>
  // expected-remark@below {{tiled tv.add, tv.gelu, tv.mul, tv.sub, tv.cast as one loop nest over 64x256: ub tiles 32x256}}
  %w = tv.cast %y : !tv.tensor<64x256xf16> to !tv.tensor<64x256xf32>
  func.return %y, %w : !tv.tensor<64x256xf16>, !tv.tensor<64x256xf32>
}

// CHECK-LABEL: func.func @bias_gelu(%x: memref<64x256xf16>, %b: memref<256xf16>, %scale: memref<64x1xf16>, %s: f16, %out0: memref<64x256xf16>, %out1: memref<64x256xf32>) {
// The bias row does not change from one row block to the next: it is loaded
// once, before the loop.
// CHECK:         %[[ROW:.*]] = memref.expand_shape %b {{\[}}[0 : i64, 1 : i64]] output_shape [1, 256] : memref<256xf16> into memref<1x256xf16>
// CHECK-NEXT:    %[[B:.*]] = tile.load %[[ROW]][%[[C0:.*]], %[[C0]]] : memref<1x256xf16> -> !tile.tile<1x256xf16, ub>
// CHECK:         scf.for %[[I:.*]] = %[[C0]] to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[X:.*]] = tile.load %x[%[[I]], %[[C0]]] : memref<64x256xf16> -> !tile.tile<32x256xf16, ub>
// CHECK-NEXT:      %[[A:.*]] = tile.add %[[X]], %[[B]] : !tile.tile<32x256xf16, ub>, !tile.tile<1x256xf16, ub>
// CHECK-NEXT:      %[[G:.*]] = tile.gelu %[[A]] : !tile.tile<32x256xf16, ub>
// CHECK-NEXT:      %[[SC:.*]] = tile.load %scale[%[[I]], %[[C0]]] : memref<64x1xf16> -> !tile.tile<32x1xf16, ub>
// CHECK-NEXT:      %[[M:.*]] = tile.mul %[[G]], %[[SC]] : !tile.tile<32x256xf16, ub>, !tile.tile<32x1xf16, ub>
// CHECK-NEXT:      %[[Y:.*]] = tile.sub %[[M]], %s : !tile.tile<32x256xf16, ub>, f16
// CHECK-NEXT:      tile.store %[[Y]], %out0[%[[I]], %[[C0]]] : !tile.tile<32x256xf16, ub> -> memref<64x256xf16>
// CHECK-NEXT:      %[[W:.*]] = tile.cast %[[Y]] : !tile.tile<32x256xf16, ub> -> !tile.tile<32x256xf32, ub>
// CHECK-NEXT:      tile.store %[[W]], %out1[%[[I]], %[[C0]]] : !tile.tile<32x256xf32, ub> -> memref<64x256xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

func.func @ffn(%x: !tv.tensor<128x256xf16>, %w1: !tv.tensor<256x512xf16>, %w2: !tv.tensor<512x256xf16>) -> !tv.tensor<128x256xf16> {
  %h = tv.matmul %x, %w1 acc(f32) : !tv.tensor<128x256xf16>, !tv.tensor<256x512xf16> -> !tv.tensor<128x512xf16>
  // expected-remark-re@below {{tiled tv.matmul 128x512x256: L1 blocks {{[0-9]+}}x{{[0-9]+}}x256, L0 base blocks {{[0-9]+}}x{{[0-9]+}}x128, 1 accumulator(s) in l0c, epilogue tv.silu in ub; double-buffered}}
  %s = tv.silu %h : !tv.tensor<128x512xf16>
  // expected-remark@below {{tiled tv.matmul 128x256x512: L1 blocks}}
  %y = tv.matmul %s, %w2 acc(f32) : !tv.tensor<128x512xf16>, !tv.tensor<512x256xf16> -> !tv.tensor<128x256xf16>
  func.return %y : !tv.tensor<128x256xf16>
}

// CHECK-LABEL: func.func @ffn(%x: memref<128x256xf16>, %w1: memref<256x512xf16>, %w2: memref<512x256xf16>, %out: memref<128x256xf16>) {
// CHECK-NEXT:    %[[H:.*]] = memref.alloc() : memref<128x512xf16>
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// K = 256 is one L1 chunk of two cube steps of 128: the second accumulates
// into the first (a loop of one trip is not emitted).
// CHECK:           %[[P:.*]] = tile.matmul %{{.*}}, %{{.*}} : {{.*}} -> !tile.tile<[[BLOCK:.*]]xf32, l0c>
// CHECK:           %[[ACC:.*]] = tile.matmul %{{.*}}, %{{.*}}, %[[P]] : {{.*}} -> !tile.tile<[[BLOCK]]xf32, l0c>
// CHECK-NEXT:      %[[U:.*]] = tile.move %[[ACC]] : !tile.tile<[[BLOCK]]xf32, l0c> -> !tile.tile<[[BLOCK]]xf16, ub>
// CHECK-NEXT:      %[[S:.*]] = tile.silu %[[U]] : !tile.tile<[[BLOCK]]xf16, ub>
// CHECK-NEXT:      tile.store %[[S]], %[[H]][%{{.*}}, %{{.*}}] : !tile.tile<[[BLOCK]]xf16, ub> -> memref<128x512xf16>
// CHECK-NEXT:    }
// CHECK:         scf.for
// CHECK:           tile.load %[[H]][%{{.*}}, %{{.*}}] : memref<128x512xf16> -> !tile.tile<{{.*}}xf16, l1, layout = nz>
// CHECK:           tile.store %{{.*}}, %out[%{{.*}}, %{{.*}}] : !tile.tile<{{.*}}xf32, l0c> -> memref<128x256xf16>
// CHECK:         memref.dealloc %[[H]] : memref<128x512xf16>
// CHECK-NEXT:    func.return

// A value read by several results' nests makes those nests one (they share the
// frame and do not depend on each other through another nest): exp(x) is loaded
// and computed once, not written to GM.
func.func @dag(%x: !tv.tensor<37x45xf16>) -> (!tv.tensor<37x45xf16>, !tv.tensor<37x45xf16>, !tv.tensor<37x1xf16>) {
  %e = tv.exp %x : !tv.tensor<37x45xf16>
  %c = arith.constant 2.0 : f16
  %a = tv.mul %e, %c : !tv.tensor<37x45xf16>, f16 -> !tv.tensor<37x45xf16>
  %b = tv.add %e, %x : !tv.tensor<37x45xf16>
  // expected-remark@below {{tiled tv.exp, tv.mul, tv.add, tv.reduce_sum as one loop nest over 37x45}}
  %s = tv.reduce_sum %e [1] keepdims : !tv.tensor<37x45xf16> -> !tv.tensor<37x1xf16>
  func.return %a, %b, %s : !tv.tensor<37x45xf16>, !tv.tensor<37x45xf16>, !tv.tensor<37x1xf16>
}

// CHECK-LABEL: func.func @dag(
// CHECK-NOT:     memref.alloc
// CHECK:         %[[X:.*]] = tile.load %x
// CHECK-NEXT:    %[[E:.*]] = tile.exp %[[X]]
// CHECK-NEXT:    %[[A:.*]] = tile.mul %[[E]], %c
// CHECK-NEXT:    tile.store %[[A]], %out0
// CHECK-NEXT:    %[[B:.*]] = tile.add %[[E]], %[[X]]
// CHECK-NEXT:    tile.store %[[B]], %out1
// CHECK-NEXT:    %[[S:.*]] = tile.reduce_sum %[[E]], axis = 1
// CHECK-NEXT:    tile.store %[[S]], %out2
// CHECK-NEXT:    func.return

// `q @ transpose(k)` reads k as stored: the transpose becomes the matmul's
// transpose_b (a move with transpose into l0b), not a transposed copy in GM.
func.func @scores(%q: !tv.tensor<32x64xf16>, %k: !tv.tensor<48x64xf16>) -> !tv.tensor<32x48xf32> {
  %kt = tv.transpose %k [1, 0] : !tv.tensor<48x64xf16> -> !tv.tensor<64x48xf16>
  // expected-remark@below {{tiled tv.matmul 32x48x64}}
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<32x64xf16>, !tv.tensor<64x48xf16> -> !tv.tensor<32x48xf32>
  func.return %s : !tv.tensor<32x48xf32>
}

// CHECK-LABEL: func.func @scores(
// CHECK-NOT:     memref.alloc
// CHECK:         %[[K:.*]] = tile.load %k[{{.*}}] : memref<48x64xf16> -> !tile.tile<[[N:[0-9]+]]x64xf16, l1, layout = nz>
// CHECK:         tile.move %[[K]] transpose : !tile.tile<[[N]]x64xf16, l1, layout = nz> -> !tile.tile<64x[[N]]xf16, l0b>
