// Element-wise ops on the stored values of a sparse tensor (disassemble, ops,
// assemble) by windows of the values array (passes/sparse_values.py): a loop
// over windows of `values-window` entries split over the cores by a
// pypto.core_loop, the run-time rest on the last core: one more window ending
// at nnz (overlapping its last one) when nnz >= the window, else static pieces
// of powers of two; a window that is not whole GM blocks keeps them on one core.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b values-window=16}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b values-window=16},tv-to-tile' 2>&1 | filecheck %s --check-prefix=TILED
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b values-window=6}' 2>&1 | filecheck %s --check-prefix=ODD
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s --check-prefix=AUTO
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-values-window=16}' 2>&1 | filecheck %s --check-prefix=LOWER
// RUN: not pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b values-window=-1}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: remark: tv-sparse-to-tile: 2 dense ops outlined for tv-to-tile, by windows of 16 stored entries (one tile each, split over 24 cores; the rest of the run-time count on the last core: one more window ending at the last entry, or static pieces of powers of two when there are fewer entries than a window)
// CHECK: remark: tv-sparse-to-tile: 1 dense op outlined for tv-to-tile, by windows of 16 stored entries (one tile each, split over 24 cores;
// CHECK: func.func @csr(
// CHECK:   scf.for %[[CORE:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK:       func.call @csr__dense0(%{{.*}}) {pypto.outlined} : (!tv.tensor<16xf16>) -> !tv.tensor<16xf16>
// CHECK:     arith.cmpi eq, %[[CORE]]
// CHECK:     scf.if
// CHECK:       %[[SHIFT:.*]] = arith.andi
// CHECK:       scf.if %[[SHIFT]] {
// CHECK:         %[[START:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:         memref.subview %a_values[%[[START]]] [16] [1]
// CHECK:         func.call @csr__dense1(%{{.*}}) {pypto.outlined} : (!tv.tensor<16xf16>) -> !tv.tensor<16xf16>
// CHECK:       } else {
// CHECK:         func.call @csr__dense2(%{{.*}}) {pypto.outlined} : (!tv.tensor<8xf16>) -> !tv.tensor<8xf16>
// CHECK:         func.call @csr__dense3(%{{.*}}) {pypto.outlined} : (!tv.tensor<4xf16>) -> !tv.tensor<4xf16>
// CHECK:         func.call @csr__dense4(%{{.*}}) {pypto.outlined} : (!tv.tensor<2xf16>) -> !tv.tensor<2xf16>
// CHECK:         func.call @csr__dense5(%{{.*}}) {pypto.outlined} : (!tv.tensor<1xf16>) -> !tv.tensor<1xf16>
// CHECK-NOT:   func.call
// CHECK:   } {pypto.core_loop}
// CHECK: func.func @csr__dense0(%{{.*}}: !tv.tensor<16xf16>) -> !tv.tensor<16xf16>
// CHECK:   tv.exp
// CHECK:   tv.add
// CHECK: func.func @bsr(
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       memref.subview %a_values[%{{.*}}, 0, 0] [16, 16, 16] [1, 1, 1]
// CHECK:       func.call @bsr__dense0(%{{.*}}) {pypto.outlined} : (!tv.tensor<16x16x16xf16>) -> !tv.tensor<16x16x16xf16>

// TILED: func.func @csr(
// TILED-NOT: func.call
// TILED: tile.load %{{.*}} : memref<16xf16, strided<[1], offset: ?>> -> !tile.tile<16xf16, ub>
// TILED: tile.exp
// TILED: tile.add
// TILED: tile.store
// TILED: } {pypto.core_loop}

// ODD: remark: tv-sparse-to-tile: 2 dense ops outlined for tv-to-tile, by windows of 6 stored entries (one tile each, on one core (a window is not whole 32-byte GM blocks: two cores would write one);
// ODD: func.func @csr(
// ODD-NOT: pypto.core_loop
// ODD:   func.call @csr__dense0(%{{.*}}) {pypto.outlined} : (!tv.tensor<6xf16>)
// ODD:   func.call @csr__dense1(%{{.*}}) {pypto.outlined} : (!tv.tensor<6xf16>)
// ODD:   func.call @csr__dense2(%{{.*}}) {pypto.outlined} : (!tv.tensor<4xf16>)
// ODD:   func.call @csr__dense3(%{{.*}}) {pypto.outlined} : (!tv.tensor<2xf16>)
// ODD:   func.call @csr__dense4(%{{.*}}) {pypto.outlined} : (!tv.tensor<1xf16>)
// ODD: func.func @csr__dense0

// AUTO: by windows of 1024 stored entries
// AUTO: by windows of 4 stored entries (one tile each, split over 24 cores

// LOWER: remark: tv-sparse-to-tile: 2 dense ops outlined for tv-to-tile, by windows of 16 stored entries
// LOWER: ascend_hw.

// BAD: error: tv-sparse-to-tile: values-window must be >= 0, got -1

func.func @csr(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>) -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>> {
  %0, %1, %2 = tv.disassemble %a : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>> -> !tv.tensor<65xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16>
  %c = arith.constant 1.000000e+00 : f16
  %3 = tv.exp %2 : !tv.tensor<?xf16>
  %4 = tv.add %3, %c : !tv.tensor<?xf16>, f16 -> !tv.tensor<?xf16>
  %5 = tv.assemble %0, %1, %4 : !tv.tensor<65xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>
  func.return %5 : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>
}

func.func @bsr(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>) -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>> {
  %0, %1, %2 = tv.disassemble %a : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>> -> !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?x16x16xf16>
  %3 = tv.exp %2 : !tv.tensor<?x16x16xf16>
  %4 = tv.assemble %0, %1, %3 : !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?x16x16xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  func.return %4 : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
}
