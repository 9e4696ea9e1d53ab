// K split over the cores (tv-to-tile's matmul-split-k, on by default): when
// M x N has fewer L1 blocks than the estimate wants cores, K = 512 is cut into
// ranges of 256; one loop runs the (range, block row) units u, each storing its
// f32 partial sums to rows u * 16 of a GM workspace [2 * 16, 48] (affine in u,
// so that tile-to-hw splits the loop over the cores); a second nest adds the
// ranges' sums per UB tile, casts them to f16 and stores the result. With
// matmul-split-k=false there is one K loop over all of K. A matmul with an
// epilogue is never split (its epilogue would need the whole sum).
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' --verify-diagnostics -o /dev/null
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny matmul-split-k=false}' | filecheck %s --check-prefix=OFF

func.func @split(%a: !tv.tensor<16x512xf16>, %b: !tv.tensor<512x48xf16>) -> !tv.tensor<16x48xf16> {
  // expected-remark@below {{tiled tv.matmul 16x48x512: L1 blocks 16x16x256, L0 base blocks 16x16x32, 1 accumulator(s) in l0c; double-buffered; 1x3 L1 block(s) over 2 core(s), estimated 21012 cycles; K split in 2 ranges of 256 (6 blocks for 2 cores), f32 partial sums combined in a second phase (estimated 4500 cycles of it; 22016 cycles without the split)}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<16x512xf16>, !tv.tensor<512x48xf16> -> !tv.tensor<16x48xf16>
  func.return %c : !tv.tensor<16x48xf16>
}

// CHECK-LABEL: func.func @split(
// CHECK:         %[[W:.*]] = memref.alloc() : memref<32x48xf32>
// CHECK:         scf.for %[[U:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[S:.*]] = arith.divui %[[U]], %{{.*}} : index
// CHECK-NEXT:      %[[R:.*]] = arith.remui %[[U]], %{{.*}} : index
// CHECK-NEXT:      %[[K:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK-NEXT:      %[[I:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.muli %[[U]], %{{.*}} : index
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[K0:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK-NEXT:        tile.load %a[%[[I]], %[[K0]]] : memref<16x512xf16> -> !tile.tile<16x256xf16, l1, layout = nz>
// CHECK-NEXT:        tile.load %b[%[[K0]], %[[J]]] : memref<512x48xf16> -> !tile.tile<256x16xf16, l1, layout = nz>
// CHECK:             tile.store %{{.*}}, %[[W]][%[[ROW]], %[[J]]] : !tile.tile<16x16xf32, l0c> -> memref<32x48xf32>
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[P0:.*]] = tile.load %[[W]][%[[C]], %{{.*}}] : memref<32x48xf32> -> !tile.tile<{{.*}}xf32, ub, valid = [{{.*}}, 48]>
// CHECK-NEXT:      %[[C1:.*]] = arith.addi %[[C]], %{{.*}} : index
// CHECK-NEXT:      %[[P1:.*]] = tile.load %[[W]][%[[C1]], %{{.*}}]
// CHECK-NEXT:      %[[SUM:.*]] = tile.add %[[P0]], %[[P1]]
// CHECK-NEXT:      %[[H:.*]] = tile.cast %[[SUM]] : {{.*}}xf32, ub{{.*}} -> !tile.tile<{{.*}}xf16, ub
// CHECK-NEXT:      tile.store %[[H]], %out[%[[C]], %{{.*}}]
// CHECK:         memref.dealloc %[[W]] : memref<32x48xf32>

// OFF-LABEL: func.func @split(
// OFF-NOT:     memref.alloc
// OFF-NOT:     tile.add
// OFF:         func.return

func.func @epilogue(%a: !tv.tensor<16x512xf16>, %b: !tv.tensor<512x48xf16>) -> !tv.tensor<16x48xf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<16x512xf16>, !tv.tensor<512x48xf16> -> !tv.tensor<16x48xf16>
  // expected-remark@below {{tiled tv.matmul 16x48x512: L1 blocks 16x16x256, L0 base blocks 16x16x32, 1 accumulator(s) in l0c, epilogue tv.relu in ub; double-buffered; 1x3 L1 block(s) over 2 core(s), estimated 22016 cycles}}
  %r = tv.relu %c : !tv.tensor<16x48xf16>
  func.return %r : !tv.tensor<16x48xf16>
}

// CHECK-LABEL: func.func @epilogue(
// CHECK-NOT:     memref.alloc
// CHECK:         tile.relu
// CHECK:         func.return
