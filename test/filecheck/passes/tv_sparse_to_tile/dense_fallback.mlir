// The dense fallback of CSR spmm: the cost model gives the count of stored
// entries from which to_dense and the dense matmul are estimated faster; the
// kernel reads nnz (the last row offset) and branches (scf.if, distributed
// into the nests' loops by tv-to-tile, the row nest's first, each loop split
// over all the cores: pypto.interleave_groups).
// On ascend910b the model finds none (the to_dense scatter costs more per
// entry than the row nest); f32 values have none (the cube takes f16/bf16).
// index-prefetch=false where the checks say "no scf.if" (the prefetching row
// nest branches on a matrix of fewer entries than a window), divide-rows=false
// there too (a divided row stores its partial sums under an scf.if).
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny index-prefetch=false divide-rows=false}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny dense-density=0.5}' 2>&1 | filecheck %s --check-prefix=OVERRIDE
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny dense-fallback=false index-prefetch=false divide-rows=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b index-prefetch=false}' 2>&1 | filecheck %s --check-prefix=NEVER
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny},tv-to-tile' 2>&1 | filecheck %s --check-prefix=TILED
// RUN: not pypto-opt %s -p 'tv-sparse-to-tile{target=tiny dense-density=2.0}' 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny sparse-dense-density=0.5}' 2>&1 | filecheck %s --check-prefix=OVERRIDE
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny sparse-dense-fallback=false sparse-index-prefetch=false sparse-divide-rows=false}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK: remark: tv-sparse-to-tile: dense fallback when nnz >= 9 (density 0.2197%, the cost model's; the model's: from nnz = 9): to_dense into a GM temporary and the dense matmul, else the row nest; estimated row nest 19800 + 1392.69 x nnz cycles, to_dense and matmul 24189 + 878.19 x nnz (matmul 4453)
// CHECK: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK: remark: tv-sparse-to-tile: no dense fallback for f32 values (the cube takes f16/bf16)
// CHECK: func.func @small(%a_offsets: memref<65xi32>
// CHECK:   %[[LAST:.*]] = arith.constant 64 : index
// CHECK:   %[[LOADED:.*]] = memref.load %a_offsets[%[[LAST]]] : memref<65xi32>
// CHECK:   %[[NNZ:.*]] = arith.index_cast %[[LOADED]] : i32 to index
// CHECK:   %[[THRESHOLD:.*]] = arith.constant 9 : index
// CHECK:   %[[DENSE:.*]] = arith.cmpi sge, %[[NNZ]], %[[THRESHOLD]] : index
// CHECK:   scf.if %[[DENSE]] {
// CHECK:     %[[A:.*]] = memref.alloc() : memref<64x64xf16>
// CHECK:     scf.for
// CHECK:     builtin.unrealized_conversion_cast %[[A]] : memref<64x64xf16> to !tv.tensor<64x64xf16>
// CHECK:     func.call @small__dense0
// CHECK:     "memref.copy"(%{{.*}}, %out)
// CHECK:     memref.dealloc %[[A]]
// CHECK:   } else {
// CHECK:     scf.for
// CHECK:   }{pypto.distribute}
// CHECK: func.func @small__dense0(%{{.*}}: !tv.tensor<64x64xf16>, %{{.*}}: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> attributes {pypto.outlined}
// CHECK:   tv.matmul
// CHECK: func.func @wide(
// CHECK-NOT: scf.if

// OVERRIDE: remark: tv-sparse-to-tile: dense fallback when nnz >= 2048 (density 50.0000%, dense-density 0.5; the model's: from nnz = 9)

// OFF-NOT: dense fallback
// OFF-NOT: scf.if

// NEVER: remark: tv-sparse-to-tile: no dense fallback: the row nest is estimated no slower at any nnz (row nest 1856 + 12.31 x nnz cycles, to_dense and matmul 5210 + 21.31 x nnz (matmul 3360); dense never)
// NEVER-NOT: scf.if

// TILED: func.func @small(
// TILED-SAME: attributes {pypto.interleave_groups}
// TILED:   %[[DENSE:.*]] = arith.cmpi sge
// TILED:   %[[SPARSE:.*]] = arith.xori %[[DENSE]], %{{.*}} : i1
// TILED:   scf.for
// TILED:     scf.if %[[SPARSE]] {
// TILED:   scf.for
// TILED:     scf.if %[[DENSE]] {
// TILED:   tile.matmul
// TILED-NOT: pypto.distribute
// TILED: func.func @wide(
// TILED-NOT: func.func @small__dense0

// RANGE: tv-sparse-to-tile: dense-density must be in [0, 1], got 2.0

func.func @small(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, %b: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %c : !tv.tensor<64x32xf16>
}
func.func @wide(%a: !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, %b: !tv.tensor<64x32xf32>) -> !tv.tensor<64x32xf32> {
  %c = tv.spmm %a, %b : !tv.tensor<64x64xf32, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, !tv.tensor<64x32xf32> -> !tv.tensor<64x32xf32>
  func.return %c : !tv.tensor<64x32xf32>
}
