// Swish fuses into one loop: one load, the chain of vector ops, one store; the
// product x * sigmoid(x) is one tile.silu (fewer vector steps than a sigmoid
// and a product). The tile sizes come from the target: UB holds the live tiles
// twice (double buffering), 192 KiB on ascend910b, 4 KiB on tiny; a remark
// shows them.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' --verify-diagnostics | filecheck %s --check-prefix=A2
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' 2>&1 | filecheck %s --check-prefix=TINY

func.func @swish(%x: !tv.tensor<4096x1024xf16>) -> !tv.tensor<4096x1024xf16> {
  %s = tv.sigmoid %x : !tv.tensor<4096x1024xf16>
  // expected-remark@below {{tiled tv.sigmoid, tv.mul as one loop nest over 4096x1024: ub tiles 16x1024; 65536 bytes live of 196608 in ub (double-buffered)}}
  %y = tv.mul %x, %s : !tv.tensor<4096x1024xf16>
  func.return %y : !tv.tensor<4096x1024xf16>
}

// A2:      builtin.module attributes {pypto.target = "ascend910b"} {
// A2-NEXT:   func.func @swish(%x: memref<4096x1024xf16>, %out: memref<4096x1024xf16>) {
// A2-DAG:      %[[C0:.*]] = arith.constant 0 : index
// A2-DAG:      %[[ROWS:.*]] = arith.constant 4096 : index
// A2-DAG:      %[[STEP:.*]] = arith.constant 16 : index
// A2:          scf.for %[[I:.*]] = %[[C0]] to %[[ROWS]] step %[[STEP]] {
// A2-NEXT:       %[[T:.*]] = tile.load %x[%[[I]], %[[C0]]] : memref<4096x1024xf16> -> !tile.tile<16x1024xf16, ub>
// A2-NEXT:       %[[Y:.*]] = tile.silu %[[T]] : !tile.tile<16x1024xf16, ub>
// A2-NEXT:       tile.store %[[Y]], %out[%[[I]], %[[C0]]] : !tile.tile<16x1024xf16, ub> -> memref<4096x1024xf16>
// A2-NEXT:     }
// A2-NEXT:     func.return
// A2-NOT:    scf.for

// On tiny, two live 1x512 f16 tiles (2048 bytes) twice fit the 4 KiB UB; a
// row of 1024 does not, so the nest loops over rows and column blocks.
// TINY:      remark: tiled tv.sigmoid, tv.mul as one loop nest over 4096x1024: ub tiles 1x512; 2048 bytes live of 4096 in ub (double-buffered)
// TINY:      builtin.module attributes {pypto.target = "tiny"}
// TINY:        scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// TINY-NEXT:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// TINY-NEXT:       %[[T:.*]] = tile.load %x[%[[I]], %[[J]]] : memref<4096x1024xf16> -> !tile.tile<1x512xf16, ub>
// TINY-NEXT:       tile.silu %[[T]] : !tile.tile<1x512xf16, ub>
// TINY-NEXT:       tile.store
// TINY-NEXT:     }
// TINY-NEXT:   }
