// Epilogues of sparse products (passes/sparse_epilogue.py): element-wise ops
// that read only an spmm's result (with a bias row, a tensor of its shape or
// scalars) are applied to its row tiles in UB before the one store: CSR row
// nest, BSR on the cube (moved from L0C to UB, the empty block rows' zeros
// too), and inside the dense fallback's matmul function (tiny). Refused, with
// a remark: a product read twice, an operand of another shape; a chain stops
// at a value read twice.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=tiny}' 2>&1 | filecheck %s --check-prefix=TINY
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b sparse-fuse-epilogue=false}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK: remark: tv-sparse-to-tile: tv.add, tv.relu fused into the rows of tv.spmm in UB before its one store (the product never goes to GM)
// CHECK: remark: tv-sparse-to-tile: tv.mul, tv.add fused into the rows of tv.spmm in UB before its one store
// CHECK: remark: tv-sparse-to-tile: no epilogue fused into tv.spmm (the product is read more than once): the element-wise ops read its result from GM
// CHECK: remark: tv-sparse-to-tile: no epilogue fused into tv.spmm ('tv.add' also reads a dense value of shape 8x1 (a row of 32, or the product's shape, is fused)): the element-wise ops read its result from GM
// CHECK: remark: tv-sparse-to-tile: tv.add fused into the rows of tv.spmm in UB before its one store

// CHECK: func.func @csr_bias_relu(
// CHECK-NOT: func.call
// CHECK:   memref.expand_shape %bias {{.*}} into memref<1x32xf16>
// CHECK:   %[[ROW:.*]] = tile.cast %{{.*}} : !tile.tile<1x32xf32, ub> -> !tile.tile<1x32xf16, ub>
// CHECK:   %[[B:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<1x32xf16> -> !tile.tile<1x32xf16, ub>
// CHECK:   %[[SUM:.*]] = tile.add %[[ROW]], %[[B]]
// CHECK:   %[[Y:.*]] = tile.relu %[[SUM]]
// CHECK:   tile.store %[[Y]], %out[
// CHECK: func.func @bsr_scale_bias(
// CHECK-NOT: func.call
// CHECK:   scf.if
// CHECK:     %[[ACC:.*]] = tile.move %{{.*}} : !tile.tile<32x32xf32, l0c> -> !tile.tile<32x32xf16, ub>
// CHECK:     %[[M:.*]] = tile.mul %[[ACC]], %s
// CHECK:     %[[C:.*]] = tile.load %c[
// CHECK:     %[[R:.*]] = tile.add %[[M]], %[[C]] : !tile.tile<32x32xf16, ub>
// CHECK:     tile.store %[[R]], %out[
// CHECK:   } else {
// CHECK:     %[[Z:.*]] = tile.fill
// CHECK:     %[[ZM:.*]] = tile.mul %[[Z]], %s
// CHECK:     tile.add %[[ZM]]
// CHECK:     tile.store
// CHECK: func.func @read_twice(
// CHECK:   func.call @read_twice__dense0
// CHECK: func.func @read_twice__dense0(
// CHECK:   tv.add
// CHECK:   tv.relu
// CHECK: func.func @column_bias(
// CHECK:   func.call @column_bias__dense
// CHECK: func.func @chain_stops(
// CHECK:   tile.add
// CHECK:   tile.store %{{.*}}, %[[T:.*]][
// CHECK:   func.call @chain_stops__dense{{.*}}
// CHECK: func.func @chain_stops__dense{{.*}}(
// CHECK:   tv.relu
// CHECK:   tv.exp

// TINY: remark: tv-sparse-to-tile: tv.add, tv.relu fused into the rows of tv.spmm
// TINY: remark: tv-sparse-to-tile: dense fallback when nnz >=
// TINY: func.func @csr_bias_relu(
// TINY:   scf.if
// TINY:     func.call @csr_bias_relu__dense0(
// TINY:   } else {
// TINY:     tile.relu
// TINY: func.func @csr_bias_relu__dense0(%{{.*}}: !tv.tensor<8x16xf16>, %{{.*}}: !tv.tensor<16x32xf16>, %bias: !tv.tensor<32xf16>)
// TINY:   tv.matmul
// TINY:   tv.add
// TINY:   tv.relu

// OFF: remark: tv-sparse-to-tile: no epilogue fused into tv.spmm (fuse-epilogue=false)
// Unfused, the spmm's pypto.core_loop is still split over the 24 cores: the
// dense nest after it is a later phase, after a barrier (tile-to-hw).
// OFF: func.func @csr_bias_relu({{.*}}attributes {ascend_hw.block_dim = 24 : i64}
// OFF:   ascend_hw.block_idx
// OFF:   ascend_hw.sync_all

!csr = !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
!bsr = !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [32, 32]>>

func.func @csr_bias_relu(%a: !csr, %b: !tv.tensor<16x32xf16>, %bias: !tv.tensor<32xf16>) -> !tv.tensor<8x32xf16> {
  %p = tv.spmm %a, %b : !csr, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
  %y = tv.add %p, %bias : !tv.tensor<8x32xf16>, !tv.tensor<32xf16> -> !tv.tensor<8x32xf16>
  %r = tv.relu %y : !tv.tensor<8x32xf16>
  func.return %r : !tv.tensor<8x32xf16>
}

func.func @bsr_scale_bias(%a: !bsr, %b: !tv.tensor<64x32xf16>, %c: !tv.tensor<64x32xf16>, %s: f16) -> !tv.tensor<64x32xf16> {
  %p = tv.spmm %a, %b : !bsr, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  %m = tv.mul %p, %s : !tv.tensor<64x32xf16>, f16 -> !tv.tensor<64x32xf16>
  %y = tv.add %m, %c : !tv.tensor<64x32xf16>
  func.return %y : !tv.tensor<64x32xf16>
}

func.func @read_twice(%a: !csr, %b: !tv.tensor<16x32xf16>, %bias: !tv.tensor<32xf16>) -> (!tv.tensor<8x32xf16>, !tv.tensor<8x32xf16>) {
  %p = tv.spmm %a, %b : !csr, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
  %y = tv.add %p, %bias : !tv.tensor<8x32xf16>, !tv.tensor<32xf16> -> !tv.tensor<8x32xf16>
  %r = tv.relu %y : !tv.tensor<8x32xf16>
  func.return %p, %r : !tv.tensor<8x32xf16>, !tv.tensor<8x32xf16>
}

func.func @column_bias(%a: !csr, %b: !tv.tensor<16x32xf16>, %bias: !tv.tensor<8x1xf16>) -> !tv.tensor<8x32xf16> {
  %p = tv.spmm %a, %b : !csr, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
  %y = tv.add %p, %bias : !tv.tensor<8x32xf16>, !tv.tensor<8x1xf16> -> !tv.tensor<8x32xf16>
  func.return %y : !tv.tensor<8x32xf16>
}

func.func @chain_stops(%a: !csr, %b: !tv.tensor<16x32xf16>, %bias: !tv.tensor<1x32xf16>) -> (!tv.tensor<8x32xf16>, !tv.tensor<8x32xf16>) {
  %p = tv.spmm %a, %b : !csr, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
  %y = tv.add %p, %bias : !tv.tensor<8x32xf16>, !tv.tensor<1x32xf16> -> !tv.tensor<8x32xf16>
  %r = tv.relu %y : !tv.tensor<8x32xf16>
  %e = tv.exp %y : !tv.tensor<8x32xf16>
  func.return %r, %e : !tv.tensor<8x32xf16>, !tv.tensor<8x32xf16>
}
