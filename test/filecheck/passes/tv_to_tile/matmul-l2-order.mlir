// Staggered K chunks (tv-to-tile's matmul-l2-order, on by default): on a target
// with an L2, when the model's estimate says so, L1 block (i, j) runs its K
// chunks from chunk (i + j) mod chunks on, wrapping around K, so that cores
// sharing an A row or a B column at the same time read different chunks and
// all but one hit the L2. The remark gives the estimate with the chunks in
// order, or when staggering could apply but the model keeps the chunks in order,
// the estimate staggered. With matmul-l2-order=false every block starts at K = 0.
// Refused (chunks in order, no remark about it): a target without an L2 (tiny),
// a K that is not whole chunks, a dynamic K. The K loop is kept a loop here
// (matmul-unroll-k=false) to show the rotated offsets in it; unrolled:
// matmul-unroll-k.mlir.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b matmul-unroll-k=false}' --split-input-file 2>/dev/null | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' --split-input-file --verify-diagnostics -o /dev/null
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b matmul-l2-order=false}' --split-input-file 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' --split-input-file 2>&1 | filecheck %s --check-prefix=TINY

func.func @staggered(%a: !tv.tensor<512x1024xf16>, %b: !tv.tensor<1024x512xf16>) -> !tv.tensor<512x512xf16> {
  // expected-remark@below {{tiled tv.matmul 512x512x1024: L1 blocks 64x256x256, L0 base blocks 64x256x64, 1 accumulator(s) in l0c; double-buffered; 8x2 L1 block(s) over 16 core(s), estimated 17643 cycles; K chunks staggered for the l2: block (i, j) starts at chunk (i + j) mod 4 (estimated 22312 cycles in order)}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<512x1024xf16>, !tv.tensor<1024x512xf16> -> !tv.tensor<512x512xf16>
  func.return %c : !tv.tensor<512x512xf16>
}

// CHECK-LABEL: func.func @staggered(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[ROW:.*]] = arith.divui %[[I]], %{{.*}} : index
// CHECK-NEXT:        %[[COL:.*]] = arith.divui %[[J]], %{{.*}} : index
// CHECK-NEXT:        %[[SUM:.*]] = arith.addi %[[ROW]], %[[COL]] : index
// CHECK-NEXT:        %[[CHUNK:.*]] = arith.remui %[[SUM]], %{{.*}} : index
// CHECK-NEXT:        %[[SHIFT:.*]] = arith.muli %[[CHUNK]], %{{.*}} : index
// CHECK-NEXT:        %[[FIRST:.*]] = arith.addi %[[SHIFT]], %{{.*}} : index
// CHECK-NEXT:        %[[K0:.*]] = arith.remui %[[FIRST]], %{{.*}} : index
// CHECK-NEXT:        tile.load %a[%[[I]], %[[K0]]] : memref<512x1024xf16> -> !tile.tile<64x256xf16, l1, layout = nz>
// CHECK-NEXT:        tile.load %b[%[[K0]], %[[J]]] : memref<1024x512xf16> -> !tile.tile<256x256xf16, l1, layout = nz>
// CHECK:             scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NEXT:          %[[NEXT:.*]] = arith.addi %[[SHIFT]], %[[P]] : index
// CHECK-NEXT:          %[[K:.*]] = arith.remui %[[NEXT]], %{{.*}} : index
// CHECK-NEXT:          tile.load %a[%[[I]], %[[K]]]
// CHECK-NEXT:          tile.load %b[%[[K]], %[[J]]]

// OFF: remark: tiled tv.matmul 512x512x1024
// OFF-NOT: K chunks staggered
// OFF-NOT: arith.remui

// TINY-NOT: K chunks staggered
// TINY-NOT: arith.remui

// -----

// K = 1000 is no whole number of chunks: in order.
func.func @partial(%a: !tv.tensor<512x1000xf16>, %b: !tv.tensor<1000x512xf16>) -> !tv.tensor<512x512xf16> {
  // expected-remark-re@below {{tiled tv.matmul 512x512x1000: L1 blocks {{[^;]*}}; double-buffered; 8x2 L1 block(s) over 16 core(s), estimated {{[0-9]+}} cycles}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<512x1000xf16>, !tv.tensor<1000x512xf16> -> !tv.tensor<512x512xf16>
  func.return %c : !tv.tensor<512x512xf16>
}

// CHECK-LABEL: func.func @partial(
// CHECK-NOT:     arith.remui
// CHECK:         func.return

// -----

// A dynamic K: chunks one cube step deep, in order.
func.func @dynamic(%a: !tv.tensor<512x?xf16>, %b: !tv.tensor<?x512xf16>) -> !tv.tensor<512x512xf16> {
  // expected-remark-re@below {{tiled tv.matmul 512x512x?: L1 blocks {{[^;]*}}; double-buffered; {{[0-9]+}}x{{[0-9]+}} L1 block(s) over {{[0-9]+}} core(s), estimated {{[0-9]+}} cycles}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<512x?xf16>, !tv.tensor<?x512xf16> -> !tv.tensor<512x512xf16>
  func.return %c : !tv.tensor<512x512xf16>
}

// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT:     arith.remui
// CHECK:         func.return

// -----

// Staggering could apply but the model estimates an A panel cheaper: the
// remark gives the staggered estimate.
func.func @in_order(%a: !tv.tensor<128x768xf16>, %b: !tv.tensor<768x3072xf16>) -> !tv.tensor<128x3072xf16> {
  // expected-remark@below {{estimated 13360 cycles; K chunks in order (estimated 13957 cycles staggered for the l2); A panel 64x768 kept in l1}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<128x768xf16>, !tv.tensor<768x3072xf16> -> !tv.tensor<128x3072xf16>
  func.return %c : !tv.tensor<128x3072xf16>
}

// CHECK-LABEL: func.func @in_order(
// CHECK-NOT:     arith.remui
// CHECK:         func.return
