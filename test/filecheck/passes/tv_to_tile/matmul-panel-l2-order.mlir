// A panels with staggered K chunks (tv-to-tile's matmul-panels and
// matmul-l2-order, both on by default): on a target with an L2, when the
// model's estimate says so, the A panel of block row i is loaded chunk by
// chunk, one l1 tile per K chunk, starting at chunk i mod chunks and wrapping
// around K; each block of the row loads its B chunks in the same order, so the
// cores running other block rows read other chunks of B at the same time (in
// order they all wait for the fill of the same lines). The remark gives the
// estimate with the chunks in order. With matmul-l2-order=false the panel is
// one tile of all of K, loaded at K = 0. Refused (as staggering alone): a target
// without an L2 (tiny), a K that is not whole chunks.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' 2>/dev/null | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' --verify-diagnostics -o /dev/null
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b matmul-l2-order=false}' 2>&1 | filecheck %s --check-prefix=OFF

func.func @panel(%a: !tv.tensor<1024x1024xf16>, %b: !tv.tensor<1024x1024xf16>) -> !tv.tensor<1024x1024xf16> {
  // expected-remark@below {{tiled tv.matmul 1024x1024x1024: L1 blocks 128x256x256, L0 base blocks 128x256x64, 1 accumulator(s) in l0c; double-buffered; 8x4 L1 block(s) over 16 core(s), estimated 40182 cycles; K chunks staggered for the l2: block row i starts at chunk i mod 4, its panel loaded chunk by chunk in that order (estimated 41129 cycles in order); A panel 128x1024 kept in l1 across a core's blocks of a row (262144 bytes; estimated 42886 cycles without)}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<1024x1024xf16>, !tv.tensor<1024x1024xf16> -> !tv.tensor<1024x1024xf16>
  func.return %c : !tv.tensor<1024x1024xf16>
}

// CHECK-LABEL: func.func @panel(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[CHUNK:.*]] = arith.remui %[[ROW]], %{{.*}} : index
// CHECK-NEXT:      %[[SHIFT:.*]] = arith.muli %[[CHUNK]], %{{.*}} : index
// CHECK-NEXT:      %[[S0:.*]] = arith.addi %[[SHIFT]], %{{.*}} : index
// CHECK-NEXT:      %[[K0:.*]] = arith.remui %[[S0]], %{{.*}} : index
// CHECK-NEXT:      %[[P0:.*]] = tile.load %a[%[[I]], %[[K0]]] : memref<1024x1024xf16> -> !tile.tile<128x256xf16, l1, layout = nz>
// CHECK-COUNT-3:   tile.load %a[%[[I]], %{{.*}}] : memref<1024x1024xf16> -> !tile.tile<128x256xf16, l1, layout = nz>
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[T0:.*]] = arith.addi %[[SHIFT]], %{{.*}} : index
// CHECK-NEXT:        %[[B0K:.*]] = arith.remui %[[T0]], %{{.*}} : index
// CHECK-NEXT:        %[[B0:.*]] = tile.load %b[%[[B0K]], %[[J]]] : memref<1024x1024xf16> -> !tile.tile<256x256xf16, l1, layout = nz>
// CHECK:             tile.move %[[P0]] window [0, 0]
// CHECK-NEXT:        tile.move %[[B0]] window [0, 0]
// CHECK-NOT:         tile.load %a
// CHECK:             tile.store

// OFF: remark: tiled tv.matmul 1024x1024x1024
// OFF-NOT: staggered
// OFF: tile.load %a[%{{.*}}, %{{.*}}] : memref<1024x1024xf16> -> !tile.tile<128x1024xf16, l1, layout = nz>
// OFF-NOT: arith.remui
