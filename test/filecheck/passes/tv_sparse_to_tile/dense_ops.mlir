// Dense ops beside sparse ones: tv-sparse-to-tile moves each run of dense ops
// into a dense function (pypto.outlined) called at its place, bridging GM
// buffers and tensors with unrealized casts; ops on the stored values of a
// sparse tensor (a + s: disassemble, add, assemble; a plain scale a * s is
// sparse_attention.py's scale nest) are called per window of the values array
// (passes/sparse_values.py), split over the cores, the run-time rest in static
// pieces on the last core. tv-to-tile tiles the outlined functions and inlines them.
// The spmm's bias and relu are outlined here with fuse-epilogue=false (by
// default they are fused into the spmm's rows: epilogue.mlir).
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b fuse-epilogue=false}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b fuse-epilogue=false},tv-to-tile' 2>&1 | filecheck %s --check-prefix=TILED

// CHECK: remark: tv-sparse-to-tile: no epilogue fused into tv.spmm (fuse-epilogue=false): the element-wise ops read its result from GM
// CHECK: remark: tv-sparse-to-tile: 1 dense op outlined for tv-to-tile, by windows of 1024 stored entries (one tile each, split over 24 cores; the rest of the run-time count on the last core: one more window ending at the last entry, or static pieces of powers of two when there are fewer entries than a window)
// CHECK: remark: tv-sparse-to-tile: tv.spmm by rows
// CHECK: remark: tv-sparse-to-tile: 2 dense ops outlined for tv-to-tile, on GM buffers of the sparse nests
// CHECK: func.func @f(%a_offsets: memref<9xi32>, %a_indices: memref<?xi32>, %a_values: memref<?xf16>, %b: memref<16x32xf16>, %c: memref<8x32xf16>, %out: memref<8x32xf16>)
// CHECK:   %[[SCALED:.*]] = memref.alloc(%{{.*}}) : memref<?xf16>
// CHECK:   %[[NNZ:.*]] = memref.dim %a_values
// CHECK:   %[[WINDOWS:.*]] = arith.divui %[[NNZ]], %[[W:.*]] : index
// CHECK:   %[[WHOLE:.*]] = arith.muli %[[WINDOWS]], %[[W]] : index
// CHECK:   scf.for %[[CORE:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %[[W]]
// CHECK:       %[[TO:.*]] = memref.subview %[[SCALED]][%[[P]]] [1024] [1]
// CHECK:       %[[FROM:.*]] = memref.subview %a_values[%[[P]]] [1024] [1]
// CHECK:       %[[T:.*]] = builtin.unrealized_conversion_cast %[[FROM]] : memref<1024xf16, strided<[1], offset: ?>> to !tv.tensor<1024xf16>
// CHECK:       %[[R:.*]] = func.call @f__dense0(%[[T]]) {pypto.outlined} : (!tv.tensor<1024xf16>) -> !tv.tensor<1024xf16>
// CHECK:       %[[M:.*]] = builtin.unrealized_conversion_cast %[[R]]
// CHECK:       "memref.copy"(%[[M]], %[[TO]])
// CHECK:     %[[LAST:.*]] = arith.cmpi eq, %[[CORE]], %{{.*}} : index
// CHECK:     scf.if %[[LAST]] {
// CHECK:       %[[REST:.*]] = arith.subi %[[NNZ]], %[[WHOLE]] : index
// CHECK:       scf.if
// CHECK:         func.call @f__dense1(%{{.*}}) {pypto.outlined} : (!tv.tensor<1024xf16>) -> !tv.tensor<1024xf16>
// CHECK:       } else {
// CHECK:         memref.subview %a_values[%{{.*}}] [512] [1]
// CHECK:         func.call @f__dense2(%{{.*}}) {pypto.outlined} : (!tv.tensor<512xf16>) -> !tv.tensor<512xf16>
// CHECK:         func.call @f__dense11(%{{.*}}) {pypto.outlined} : (!tv.tensor<1xf16>) -> !tv.tensor<1xf16>
// CHECK:   } {pypto.core_loop}
// CHECK:   %[[PRODUCT:.*]] = memref.alloc() : memref<8x32xf16>
// CHECK:   memref.expand_shape %[[SCALED]]
// CHECK:   %[[P0:.*]] = builtin.unrealized_conversion_cast %[[PRODUCT]] : memref<8x32xf16> to !tv.tensor<8x32xf16>
// CHECK:   %[[C:.*]] = builtin.unrealized_conversion_cast %c : memref<8x32xf16> to !tv.tensor<8x32xf16>
// CHECK:   %[[Y:.*]] = func.call @f__dense12(%[[P0]], %[[C]]) {pypto.outlined}
// CHECK:   %[[YM:.*]] = builtin.unrealized_conversion_cast %[[Y]] : !tv.tensor<8x32xf16> to memref<8x32xf16>
// CHECK:   "memref.copy"(%[[YM]], %out)
// CHECK:   memref.dealloc %[[SCALED]]
// CHECK:   memref.dealloc %[[PRODUCT]]
// CHECK: func.func @f__dense0(%{{.*}}: !tv.tensor<1024xf16>) -> !tv.tensor<1024xf16> attributes {pypto.outlined}
// CHECK:   arith.constant 5.000000e-01 : f16
// CHECK:   tv.add %{{.*}}, %{{.*}} : !tv.tensor<1024xf16>, f16 -> !tv.tensor<1024xf16>
// CHECK: func.func @f__dense12(%{{.*}}: !tv.tensor<8x32xf16>, %c: !tv.tensor<8x32xf16>) -> !tv.tensor<8x32xf16> attributes {pypto.outlined}
// CHECK:   tv.add
// CHECK:   tv.relu

// TILED: remark: tiled tv.add, tv.relu as one loop nest over 8x32
// TILED: func.func @f(
// TILED-NOT: func.call
// TILED-NOT: unrealized_conversion_cast
// TILED-NOT: memref.copy
// TILED: tile.add %{{.*}}, %{{.*}} : !tile.tile<{{.*}}>, f16
// TILED: tile.relu
// TILED: tile.store %{{.*}}, %out
// TILED-NOT: func.func

func.func @f(%a: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<16x32xf16>, %c: !tv.tensor<8x32xf16>) -> !tv.tensor<8x32xf16> {
  %0, %1, %2 = tv.disassemble %a : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>> -> !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16>
  %3 = arith.constant 5.000000e-01 : f16
  %4 = tv.add %2, %3 : !tv.tensor<?xf16>, f16 -> !tv.tensor<?xf16>
  %5 = tv.assemble %0, %1, %4 : !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  %6 = tv.spmm %5, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
  %7 = tv.add %6, %c : !tv.tensor<8x32xf16>
  %8 = tv.relu %7 : !tv.tensor<8x32xf16>
  func.return %8 : !tv.tensor<8x32xf16>
}
