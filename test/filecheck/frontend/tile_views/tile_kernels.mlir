// The tile IR `@pto.tile_kernel` traces (Inputs/tile_kernels.py), one
// section per kernel, and that it lowers with pypto-lower{start-level=tile}.
// RUN: python %S/Inputs/tile_kernels.py swish swish@tiny fixed gemm row_sum vector_on_l1 too_big too_big@tiny | filecheck %s
// RUN: python %S/Inputs/tile_kernels.py swish | pypto-opt -p 'pypto-lower{start-level=tile}' | filecheck %s --check-prefix=HW

// HW:     func.func @swish
// HW:     ascend_hw.
// HW-NOT: tile.

// CHECK-LABEL: // kernel swish
// The article's Swish with tile views (pto.auto on both dims): the tile the
// tiling model chooses, sized for the cores by cost as tv-to-tile sizes the
// tensor-level Swish (16 of the 37 rows: a core's share of the output starts
// on a 32-byte GM block, so 2-row tiles of 180 bytes would go to the cores in
// shares of 8 tiles, 3 cores for 19 tiles; 16 rows of 1440 bytes split in
// single tiles), padded to the ub alignment with the real extent as valid
// shape, the rows' tail a run-time extent, one tile.silu, no loop for the dim
// of one tile.
// CHECK-NEXT: builtin.module attributes {pypto.target = "ascend910b"} {
// CHECK-NEXT:   func.func @swish(%x: memref<37x45xf16>, %out: memref<37x45xf16>) attributes {pypto.outputs = 1 : i64} {
// CHECK-NEXT:     %[[C37:.*]] = arith.constant 37 : index
// CHECK-NEXT:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:     scf.for %[[I:.*]] = %[[C0]] to %[[C37]] step %[[C16]] {
// CHECK-NEXT:       arith.subi
// CHECK-NEXT:       arith.cmpi slt
// CHECK-NEXT:       %[[ROWS:.*]] = arith.select
// CHECK-NEXT:       %[[T:.*]] = tile.load %x[%[[I]], %[[C0]]] valid [%[[ROWS]]] : memref<37x45xf16> -> !tile.tile<16x48xf16, ub, valid = [?, 45]>
// CHECK-NEXT:       %[[S:.*]] = tile.silu %[[T]] : !tile.tile<16x48xf16, ub, valid = [?, 45]>
// CHECK-NEXT:       tile.store %[[S]], %out[%[[I]], %[[C0]]] : !tile.tile<16x48xf16, ub, valid = [?, 45]> -> memref<37x45xf16>
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return

// CHECK-LABEL: // kernel swish@tiny
// tiny's 4 KiB UB: rows in steps, the last tile's rows a run-time tail.
// CHECK:      pypto.target = "tiny"
// CHECK:      scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:        arith.select
// CHECK:        tile.load %x[%[[I]], %{{.*}}] valid [%{{.*}}] : memref<37x45xf16> -> !tile.tile<{{[0-9]+}}x48xf16, ub, valid = [?, 45]>
// CHECK-NEXT:   tile.silu
// CHECK-NEXT:   tile.store

// CHECK-LABEL: // kernel fixed
// Fixed 16x32 tiles over 37x45: both dims loop, both tails are run-time extents.
// CHECK:      scf.for %[[I:.*]] = %[[C0:.*]] to %{{.*}} step %[[C16:.*]] {
// CHECK-NEXT:   arith.subi
// CHECK-NEXT:   arith.cmpi slt
// CHECK-NEXT:   %[[ROWS:.*]] = arith.select
// CHECK-NEXT:   scf.for %[[J:.*]] = %[[C0]] to %{{.*}} step %{{.*}} {
// CHECK:          %[[COLS:.*]] = arith.select
// CHECK-NEXT:     %[[T:.*]] = tile.load %x[%[[I]], %[[J]]] valid [%[[ROWS]], %[[COLS]]] : memref<37x45xf16> -> !tile.tile<16x32xf16, ub, valid = [?, ?]>
// CHECK-NEXT:     %[[S:.*]] = tile.sigmoid %[[T]]
// CHECK-NEXT:     %[[P:.*]] = tile.mul %[[T]], %[[S]]
// CHECK-NEXT:     %[[Y:.*]] = tile.add %[[P]], %{{.*}} : !tile.tile<16x32xf16, ub, valid = [?, ?]>, f16
// CHECK-NEXT:     tile.store %[[Y]], %out[%[[I]], %[[J]]]

// CHECK-LABEL: // kernel gemm
// A hand-tiled GEMM with explicit L1/L0 tiles: fold with init=None peels the
// first K block (it starts the L0C accumulator), the other K blocks run in an
// scf.for carrying it; L1 loads with a partial extent are zero-padded (the
// cube reads whole fractals); the store converts f32 to f16 in the fixpipe.
// CHECK:      func.func @gemm(%a: memref<37x70xf16>, %b: memref<70x45xf16>, %c: memref<37x45xf16>)
// CHECK:      scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:        %[[ROWS:.*]] = arith.select
// CHECK-NEXT:   %[[A1:.*]] = tile.load %a[%[[I]], %[[C0:.*]]] valid [%[[ROWS]]] : memref<37x70xf16> -> !tile.tile<32x32xf16, l1, valid = [?, 32], layout = nz, pad = zero>
// CHECK-NEXT:   %[[A0:.*]] = tile.move %[[A1]] : {{.*}} -> !tile.tile<32x32xf16, l0a, valid = [?, 32], pad = zero>
// CHECK-NEXT:   %[[B1:.*]] = tile.load %b[%[[C0]], %[[C0]]] : memref<70x45xf16> -> !tile.tile<32x48xf16, l1, valid = [32, 45], layout = nz, pad = zero>
// CHECK-NEXT:   %[[B0:.*]] = tile.move %[[B1]] : {{.*}} -> !tile.tile<32x48xf16, l0b, valid = [32, 45], pad = zero>
// CHECK-NEXT:   %[[FIRST:.*]] = tile.matmul %[[A0]], %[[B0]] : {{.*}} -> !tile.tile<32x48xf32, l0c, valid = [?, 45]>
// CHECK-NEXT:   %[[ACC:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[IN:.*]] = %[[FIRST]]) -> (!tile.tile<32x48xf32, l0c, valid = [?, 45]>) {
// CHECK:          tile.load %a[%[[I]], %[[K]]] valid [%[[ROWS]], %{{.*}}]
// CHECK:          tile.load %b[%[[K]], %[[C0]]] valid [%{{.*}}]
// CHECK:          %[[NEXT:.*]] = tile.matmul %{{.*}}, %{{.*}}, %[[IN]]
// CHECK-NEXT:     scf.yield %[[NEXT]]
// CHECK-NEXT:   }
// CHECK-NEXT:   tile.store %[[ACC]], %c[%[[I]], %[[C0]]] : !tile.tile<32x48xf32, l0c, valid = [?, 45]> -> memref<37x45xf16>

// CHECK-LABEL: // kernel row_sum
// A per-row sum carries a ub accumulator made by pto.full with a tail's valid extent.
// CHECK:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      scf.for %[[I:.*]] = {{.*}} {
// CHECK:        %[[ROWS:.*]] = arith.select
// CHECK-NEXT:   %[[INIT:.*]] = tile.fill %[[ZERO]] valid [%[[ROWS]]] : f32 -> !tile.tile<8x1xf32, ub, valid = [?, 1]>
// CHECK-NEXT:   %[[TOTAL:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (!tile.tile<8x1xf32, ub, valid = [?, 1]>) {
// CHECK:          %[[T:.*]] = tile.load %x[%[[I]], %[[J]]] valid [%[[ROWS]], %{{.*}}] : memref<37x45xf32> -> !tile.tile<8x16xf32, ub, valid = [?, ?]>
// CHECK-NEXT:     %[[R:.*]] = tile.reduce_sum %[[T]], axis = 1
// CHECK-NEXT:     %[[S:.*]] = tile.add %[[ACC]], %[[R]]
// CHECK-NEXT:     scf.yield %[[S]]
// CHECK:        tile.store %[[TOTAL]], %out[%[[I]], %{{.*}}] : !tile.tile<8x1xf32, ub, valid = [?, 1]> -> memref<37x1xf32>

// Mistakes are located errors at the author's line.
// CHECK-LABEL: // kernel vector_on_l1
// CHECK-NEXT: error: {{.*}}tile_kernels.py:{{[0-9]+}}: pto.exp: the tile f16[16x32] in l1 (valid [?, ?]) is not in ub: the vector unit computes on ub tiles
// CHECK-LABEL: // kernel too_big
// CHECK-NEXT: error: {{.*}}tile_kernels.py:{{[0-9]+}}: pto.load: the tile f16[256x1024] in ub needs 524288 bytes, but ub of ascend910b holds 196608 bytes
// CHECK-LABEL: // kernel too_big@tiny
// CHECK-NEXT: error: {{.*}}pto.load: the tile f16[256x1024] in ub needs 524288 bytes, but ub of tiny holds 4096 bytes
