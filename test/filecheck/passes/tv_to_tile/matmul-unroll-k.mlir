// Unrolled K chunks (tv-to-tile's matmul-unroll-k, on by default): for auto
// tiles with a static K of 2 to 32 L1 chunks and no A panel or K split, a
// block's chunks are straight-line code, each chunk's A and B tiles loaded one
// chunk ahead of the previous chunk's cube steps; the remark says so. There is
// then no loop entry or exit inside a block, where hw-insert-sync would make the
// next load wait for all of the loop's L0 moves. With matmul-unroll-k=false the
// chunks after the first are a loop. Refused (a loop, no remark about it): a
// dynamic K, a single chunk, two chunks that do not fit L1 together,
// explicit matmul-tile-sizes.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' --split-input-file 2>/dev/null | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' --split-input-file --verify-diagnostics -o /dev/null
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b matmul-unroll-k=false}' --split-input-file 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b matmul-tile-sizes=64,256,64}' --split-input-file 2>&1 | filecheck %s --check-prefix=EXPLICIT

func.func @unrolled(%a: !tv.tensor<512x1024xf16>, %b: !tv.tensor<1024x512xf16>) -> !tv.tensor<512x512xf16> {
  // expected-remark@below {{K chunks staggered for the l2: block (i, j) starts at chunk (i + j) mod 4 (estimated 22312 cycles in order); K loop unrolled (4 chunks)}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<512x1024xf16>, !tv.tensor<1024x512xf16> -> !tv.tensor<512x512xf16>
  func.return %c : !tv.tensor<512x512xf16>
}

// CHECK-LABEL: func.func @unrolled(
// CHECK:         %[[A0:.*]] = tile.load %a[%{{.*}}, %[[K0:.*]]] : memref<512x1024xf16> -> !tile.tile<64x256xf16, l1, layout = nz>
// CHECK-NEXT:    %[[B0:.*]] = tile.load %b[%[[K0]], %{{.*}}]
// CHECK:         %[[A1:.*]] = tile.load %a[%{{.*}}, %[[K1:.*]]]
// CHECK-NEXT:    %[[B1:.*]] = tile.load %b[%[[K1]], %{{.*}}]
// CHECK-NEXT:    tile.move %[[A0]] window [0, 0]
// CHECK-NEXT:    tile.move %[[B0]] window [0, 0]
// CHECK:         tile.move %[[A0]] window [0, 192]
// CHECK:         %[[A2:.*]] = tile.load %a
// CHECK-NEXT:    %[[B2:.*]] = tile.load %b
// CHECK-NEXT:    tile.move %[[A1]] window [0, 0]
// CHECK:         %[[A3:.*]] = tile.load %a
// CHECK-NEXT:    %[[B3:.*]] = tile.load %b
// CHECK-NEXT:    tile.move %[[A2]] window [0, 0]
// CHECK:         tile.move %[[A3]] window [0, 192]
// CHECK-NOT:     iter_args
// CHECK:         tile.store
// CHECK-NOT:     tile.load
// CHECK:         func.return

// OFF: remark: tiled tv.matmul 512x512x1024
// OFF-NOT: K loop unrolled
// OFF: scf.for {{.*}} iter_args

// EXPLICIT-NOT: K loop unrolled
// EXPLICIT: scf.for {{.*}} iter_args

// -----

// A dynamic K: a loop of chunks one cube step deep.
func.func @dynamic(%a: !tv.tensor<512x?xf16>, %b: !tv.tensor<?x512xf16>) -> !tv.tensor<512x512xf16> {
  // expected-remark-re@below {{tiled tv.matmul 512x512x?: L1 blocks {{[^;]*}}; double-buffered; {{[0-9]+}}x{{[0-9]+}} L1 block(s) over {{[0-9]+}} core(s), estimated {{[0-9]+}} cycles{{$}}}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<512x?xf16>, !tv.tensor<?x512xf16> -> !tv.tensor<512x512xf16>
  func.return %c : !tv.tensor<512x512xf16>
}

// CHECK-LABEL: func.func @dynamic(
// CHECK:         scf.for {{.*}} iter_args
