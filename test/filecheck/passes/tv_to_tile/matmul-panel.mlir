// A panels (tv-to-tile's matmul-panels, on by default): when the model's
// estimate says so, the A rows of an L1 block row are loaded into l1 once, all
// of K in one tile (whole chunks, zero-padded past K = 100), before the loop over
// the row's blocks; per block only B is loaded, one chunk ahead of the cube
// steps that use the previous one, and the moves take windows of the panel
// along K. With matmul-panels=false A is loaded per block and chunk, inside the
// loop over N. A transposed A (stored [k, m]) never gets a panel.
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' --verify-diagnostics -o /dev/null
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny matmul-panels=false}' | filecheck %s --check-prefix=OFF

func.func @chunks(%a: !tv.tensor<64x100xf16>, %b: !tv.tensor<100x200xf16>) -> !tv.tensor<64x200xf16> {
  // expected-remark@below {{tiled tv.matmul 64x200x100: L1 blocks 32x32x48, L0 base blocks 32x32x16, 1 accumulator(s) in l0c; double-buffered; 2x7 L1 block(s) over 2 core(s), estimated 43698 cycles; A panel 32x100 kept in l1 across a core's blocks of a row (9216 bytes; estimated 75672 cycles without)}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<64x100xf16>, !tv.tensor<100x200xf16> -> !tv.tensor<64x200xf16>
  func.return %c : !tv.tensor<64x200xf16>
}

// CHECK-LABEL: func.func @chunks(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[P:.*]] = tile.load %a[%[[I]], %{{.*}}] : memref<64x100xf16> -> !tile.tile<32x144xf16, l1, valid = [32, 100], layout = nz, pad = zero>
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:         tile.load %a
// CHECK:             %[[B0:.*]] = tile.load %b[%{{.*}}, %[[J]]] {{.*}} -> !tile.tile<48x32xf16, l1, valid = [48, ?], layout = nz, pad = zero>
// CHECK-NEXT:        %[[B1:.*]] = tile.load %b[%{{.*}}, %[[J]]] {{.*}} -> !tile.tile<48x32xf16, l1, valid = [48, ?], layout = nz, pad = zero>
// CHECK-NEXT:        tile.move %[[P]] window [0, 0] : {{.*}} -> !tile.tile<32x16xf16, l0a, pad = zero>
// CHECK-NEXT:        tile.move %[[B0]] window [0, 0]
// CHECK:             tile.move %[[P]] window [0, 48] :
// CHECK:             tile.move %[[P]] window [0, 96] : {{.*}} -> !tile.tile<32x16xf16, l0a, valid = [32, 4], pad = zero>
// CHECK-NOT:         tile.load %a
// CHECK:             tile.store

// OFF-LABEL: func.func @chunks(
// OFF:         scf.for
// OFF-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// OFF:             tile.load %a[{{.*}}] : memref<64x100xf16> -> !tile.tile<32x48xf16, l1, layout = nz, pad = zero>
// OFF-NEXT:        tile.load %b
// OFF-NOT:         x144xf16

func.func @transposed(%a: !tv.tensor<100x64xf16>, %b: !tv.tensor<100x200xf16>) -> !tv.tensor<64x200xf16> {
  %at = tv.transpose %a [1, 0] : !tv.tensor<100x64xf16> -> !tv.tensor<64x100xf16>
  // expected-remark@below {{tiled tv.matmul 64x200x100: L1 blocks}}
  %c = tv.matmul %at, %b acc(f32) : !tv.tensor<64x100xf16>, !tv.tensor<100x200xf16> -> !tv.tensor<64x200xf16>
  func.return %c : !tv.tensor<64x200xf16>
}

// CHECK-LABEL: func.func @transposed(
// CHECK-NOT:     x144xf16
// CHECK:         func.return
