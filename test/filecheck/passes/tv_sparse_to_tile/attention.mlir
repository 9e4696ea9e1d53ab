// Block-sparse attention softmax(sddmm(mask, q, k.T) * s) @ v with a block-CSR
// mask (the scale as the frontend spells it: disassemble, tv.mul of the values
// by a scalar, assemble) becomes one flash-attention nest per block row
// (passes/sparse_attention.py): the Q rows loaded once; a loop of run-time
// bounds over the stored blocks (the column index read on the scalar unit
// addresses the K and V blocks), the scores on the cube (the next block's
// computed during this one's softmax), kept and scaled in f32, online
// softmax (running max, sums on the cube, accumulator rescaled a block later)
// in ub, P @ V on the cube; an empty block row stores zeros. No GM temporary.
// tv-sparse-to-tile once with its defaults, checked by CHECK, SHARE and COLUMN.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b}' > %t.tile 2>&1
// RUN: filecheck %s < %t.tile
// fuse-attention=false: one nest per op through GM temporaries, the scale a
// nest of its own over the stored blocks; pypto-lower forwards it as
// sparse-fuse-attention (checked through pypto-lower, with the other forwarded
// options, by attention-forwarding.mlir, a slow test: `make test-all`).
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b fuse-attention=false}' 2>&1 | filecheck %s --check-prefix=OFF
// attention-cube-sum=false: the row sums by row reductions on the vector unit;
// attention-defer-update=false (pypto-lower: sparse-attention-defer-update):
// each block's update right after its product.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b attention-cube-sum=false}' 2>&1 | filecheck %s --check-prefix=VEC
// attention-scale-fold=false (pypto-lower: attention-scale-fold): the scores
// moved to ub in f16 and scaled in f16, as the reference rounds them.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b attention-scale-fold=false}' 2>&1 | filecheck %s --check-prefix=F16
// The fused nest lowers to ascend_hw: the scalar unit reads offsets and indices.
// The whole lowering once, checked by HW, SYNC and BLOCK below.
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b}' > %t.hw 2>&1
// RUN: filecheck %s --check-prefix=HW < %t.hw

!mask = !tv.tensor<128x128xf16, #tv.csr<rows = 128, cols = 128, nnz = ?, index = i32, block = [64, 64]>>
!csr = !tv.tensor<128x128xf16, #tv.csr<rows = 128, cols = 128, nnz = ?, index = i32>>
!big = !tv.tensor<2048x2048xf16, #tv.csr<rows = 2048, cols = 2048, nnz = ?, index = i32, block = [64, 64]>>

// The remarks come first: the fused chain, then the two refused below.
// CHECK: attention.mlir:[[# @LINE + 10]]:3: remark: tv-sparse-to-tile: fused block-sparse attention (tv.sddmm, tv.mul, tv.sparse_softmax, tv.spmm) as one nest per block row of 64: per stored 64x64 block, K^T and V to the cube, online softmax in UB, row sums on the cube (p @ ones); the scores kept in f32, scaled in f32; each block's update of the sums and the accumulator after the next block's softmax; the scores and the probabilities stay on chip (no GM temporary); empty block rows store zeros
// CHECK: attention.mlir:[[# @LINE + 97]]:3: remark: tv-sparse-to-tile: block-sparse attention not fused: the scores or the probabilities are also read elsewhere or returned (the fused nest keeps them on chip)
// CHECK: attention.mlir:[[# @LINE + 104]]:3: remark: tv-sparse-to-tile: block-sparse attention not fused: the mask is CSR (the fused nest takes block-CSR blocks on the cube)
func.func @attention(%mask: !mask, %q: !tv.tensor<128x64xf16>, %k: !tv.tensor<128x64xf16>, %v: !tv.tensor<128x64xf16>) -> !tv.tensor<128x64xf16> {
  %s = tv.sddmm %mask, %q, %k transpose_b : !mask, !tv.tensor<128x64xf16>, !tv.tensor<128x64xf16> -> !mask
  %o, %i, %vals = tv.disassemble %s : !mask -> !tv.tensor<3xi32>, !tv.tensor<?xi32>, !tv.tensor<?x64x64xf16>
  %c = arith.constant 8.801270e-02 : f16
  %scaled = tv.mul %vals, %c : !tv.tensor<?x64x64xf16>, f16 -> !tv.tensor<?x64x64xf16>
  %t = tv.assemble %o, %i, %scaled : !tv.tensor<3xi32>, !tv.tensor<?xi32>, !tv.tensor<?x64x64xf16> -> !mask
  %p = tv.sparse_softmax %t : !mask
  %out = tv.spmm %p, %v : !mask, !tv.tensor<128x64xf16> -> !tv.tensor<128x64xf16>
  func.return %out : !tv.tensor<128x64xf16>
}

// CHECK-LABEL: func.func @attention(%mask_offsets: memref<3xi32>, %mask_indices: memref<?xi32>, %mask_values: memref<?x64x64xf16>, %q: memref<128x64xf16>, %k: memref<128x64xf16>, %v: memref<128x64xf16>, %out: memref<128x64xf16>)
// CHECK-NOT: memref.alloc
// CHECK:   scf.for %[[BR:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     %[[Q:.*]] = tile.load %q[%{{.*}}, %{{.*}}] : memref<128x64xf16> -> !tile.tile<64x64xf16, l1, layout = nz>
// CHECK:     %[[ONES:.*]] = tile.move %{{.*}} : !tile.tile<64x16xf16, l1, layout = nz> -> !tile.tile<64x16xf16, l0b>
// CHECK:     %[[START:.*]] = arith.index_cast
// CHECK:     %[[END:.*]] = arith.index_cast
// CHECK:     %[[NONEMPTY:.*]] = arith.cmpi slt, %[[START]], %[[END]] : index
// CHECK:     scf.if %[[NONEMPTY]] {
// CHECK:       %[[QA:.*]] = tile.move %[[Q]] : {{.*}} -> !tile.tile<64x64xf16, l0a>
// The first block's scores before the loop; each iteration computes the next
// block's (carried) after its own softmax.
// CHECK:       memref.load %mask_indices[%[[START]]]
// CHECK:       tile.matmul %[[QA]]
// CHECK:       %[[LAST:.*]] = arith.subi %[[END]], %{{.*}} : index
// CHECK:       %[[M:.*]], %[[L:.*]], %[[A:.*]], %[[PS:.*]], %[[PO:.*]], %[[PC:.*]], %[[S:.*]] = scf.for %[[J:.*]] = %[[START]] to %[[LAST]] step %{{.*}} iter_args(%[[IM:.*]] = %{{.*}}, %[[IL:.*]] = %{{.*}}, %[[IA:.*]] = %{{.*}}, %[[IPS:.*]] = %{{.*}}, %[[IPO:.*]] = %{{.*}}, %[[IPC:.*]] = %{{.*}}, %[[IS:.*]] = %{{.*}}) -> (!tile.tile<64x1xf32, ub>, !tile.tile<64x1xf32, ub>, !tile.tile<64x64xf32, ub>, !tile.tile<64x1xf32, ub>, !tile.tile<64x64xf32, ub>, !tile.tile<64x1xf32, ub>, !tile.tile<64x64xf32, ub>)
// The next block's K, then this block's V (with the deferred update the next
// scores are needed before this block's product).
// CHECK:         %[[NEXT:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK:         memref.load %mask_indices[%[[NEXT]]]
// CHECK:         %[[K:.*]] = tile.load %k[%{{.*}}, %{{.*}}] : memref<128x64xf16> -> !tile.tile<64x64xf16, l1, layout = nz>
// CHECK:         %[[COL:.*]] = arith.index_cast
// CHECK:         %[[ROW:.*]] = arith.muli %[[COL]], %{{.*}} : index
// CHECK:         %[[V:.*]] = tile.load %v[%[[ROW]], %{{.*}}] : memref<128x64xf16> -> !tile.tile<64x64xf16, l1, layout = nz>
// CHECK:         %[[SC:.*]] = tile.mul %[[IS]], %{{.*}} : !tile.tile<64x64xf32, ub>, f32
// CHECK:         tile.reduce_max %[[SC]], axis = 1
// CHECK:         %[[NEW:.*]] = tile.max %[[IM]], %{{.*}} : !tile.tile<64x1xf32, ub>
// CHECK:         %[[C:.*]] = tile.exp %{{.*}} : !tile.tile<64x1xf32, ub>
// CHECK:         %[[E:.*]] = tile.exp %{{.*}} : !tile.tile<64x64xf32, ub>
// CHECK:         %[[KT:.*]] = tile.move %[[K]] transpose : {{.*}} -> !tile.tile<64x64xf16, l0b>
// CHECK:         %[[NS:.*]] = tile.matmul %[[QA]], %[[KT]]
// CHECK:         %[[NSU:.*]] = tile.move %[[NS]] : !tile.tile<64x64xf32, l0c> -> !tile.tile<64x64xf32, ub>
// CHECK:         tile.cast %[[E]] : !tile.tile<64x64xf32, ub> -> !tile.tile<64x64xf16, ub>
// The previous block's update, after this block's softmax:
// CHECK:         %[[SUMS:.*]] = tile.add %{{.*}}, %[[IPS]] : !tile.tile<64x1xf32, ub>
// CHECK:         tile.mul %[[IA]], %[[IPC]]
// CHECK:         %[[ACC:.*]] = tile.add %{{.*}}, %[[IPO]] : !tile.tile<64x64xf32, ub>
// CHECK:         %[[P:.*]] = tile.move %{{.*}} : !tile.tile<64x64xf16, l1, layout = nz> -> !tile.tile<64x64xf16, l0a>
// CHECK:         tile.matmul %[[P]], %[[ONES]] : !tile.tile<64x64xf16, l0a>, !tile.tile<64x16xf16, l0b> -> !tile.tile<64x16xf32, l0c>
// CHECK:         %[[VB:.*]] = tile.move %[[V]] : {{.*}} -> !tile.tile<64x64xf16, l0b>
// CHECK:         tile.matmul %[[P]], %[[VB]]
// CHECK:         scf.yield %[[NEW]], %[[SUMS]], %[[ACC]], %{{.*}}, %{{.*}}, %[[C]], %[[NSU]]
// The last block, then its update and the quotient.
// CHECK:       tile.mul %[[S]], %{{.*}} : !tile.tile<64x64xf32, ub>, f32
// CHECK:       tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<64x16xf32, ub> -> !tile.tile<64x1xf32, ub>
// CHECK:       tile.mul %{{.*}}, %{{.*}} : !tile.tile<64x64xf32, ub>, !tile.tile<64x1xf32, ub>
// CHECK:       tile.store %{{.*}}, %out
// CHECK:     } else {
// CHECK:       tile.fill {{.*}} -> !tile.tile<64x64xf16, ub>
// CHECK:       tile.store

// OFF-NOT: fused block-sparse
// OFF: remark: tv-sparse-to-tile: the scale of a sparse tensor (tv.mul of its values by a scalar) by 64x64 stored blocks, each multiplied in UB
// OFF-LABEL: func.func @attention(
// OFF-COUNT-3: memref.alloc
// OFF-NOT: memref.alloc
// OFF-LABEL: func.func @probabilities_returned(
// OFF-REMARK-NOT: fused block-sparse
// OFF-REMARK: remark: tv-sparse-to-tile: the scale of a sparse tensor

// VEC: remark: tv-sparse-to-tile: fused block-sparse attention {{.*}} online softmax in UB, row sums on the vector unit; the scores kept in f32, scaled in f32; each block's update of the sums and the accumulator after the next block's softmax; the scores
// VEC-LABEL: func.func @attention(
// VEC: tile.reduce_sum %{{.*}}, axis = 1 : !tile.tile<64x64xf32, ub> -> !tile.tile<64x1xf32, ub>

// NOW: remark: tv-sparse-to-tile: fused block-sparse attention {{.*}} row sums on the cube (p @ ones); the scores kept in f32, scaled in f32; the scores and

// F16: remark: tv-sparse-to-tile: fused block-sparse attention {{.*}} row sums on the cube (p @ ones); each block's update
// F16-LABEL: func.func @attention(
// F16: tile.move %{{.*}} : !tile.tile<64x64xf32, l0c> -> !tile.tile<64x64xf16, ub>
// F16: tile.mul %{{.*}}, %c : !tile.tile<64x64xf16, ub>, f16

// HW: func.func @attention(
// HW: ascend_hw.load_scalar %mask_offsets
// HW: ascend_hw.load_scalar %mask_indices
// HW: ascend_hw.mmad

// Not fused, each with a remark saying why (the chain keeps its nests): the
// probabilities also returned; a CSR mask.
// CHECK-LABEL: func.func @probabilities_returned(
// CHECK-COUNT-1: memref.alloc
// CHECK-NOT: memref.alloc
func.func @probabilities_returned(%mask: !mask, %q: !tv.tensor<128x64xf16>, %k: !tv.tensor<128x64xf16>, %v: !tv.tensor<128x64xf16>) -> (!tv.tensor<128x64xf16>, !mask) {
  %s = tv.sddmm %mask, %q, %k transpose_b : !mask, !tv.tensor<128x64xf16>, !tv.tensor<128x64xf16> -> !mask
  %p = tv.sparse_softmax %s : !mask
  %out = tv.spmm %p, %v : !mask, !tv.tensor<128x64xf16> -> !tv.tensor<128x64xf16>
  func.return %out, %p : !tv.tensor<128x64xf16>, !mask
}

// CHECK-LABEL: func.func @csr(
func.func @csr(%mask: !csr, %q: !tv.tensor<128x64xf16>, %k: !tv.tensor<128x64xf16>, %v: !tv.tensor<128x64xf16>) -> !tv.tensor<128x64xf16> {
  %s = tv.sddmm %mask, %q, %k transpose_b : !csr, !tv.tensor<128x64xf16>, !tv.tensor<128x64xf16> -> !csr
  %p = tv.sparse_softmax %s : !csr
  %out = tv.spmm %p, %v : !csr, !tv.tensor<128x64xf16> -> !tv.tensor<128x64xf16>
  func.return %out : !tv.tensor<128x64xf16>
}

// With more block rows than cores (32 on 24), attention-block-split
// (pypto-lower: sparse-attention-block-split, default on) splits the stored
// blocks evenly over the cores, a block row weighing 4 blocks more than its
// stored ones: a static loop over the cores (pypto.core_loop), each loading the
// offsets into ub and searching them for its share, then a loop of run-time
// bounds over its block rows, a row divided between cores storing its partial
// max, sum and accumulator to the core's slot of three GM workspaces instead
// of its output; then a second core loop (after the sync_all tile-to-hw puts
// between them) where the core a divided row begins in merges the partials
// (a loop of run-time bounds over the later cores) and stores the row.
// attention-block-split=false: attention-balance splits whole block rows by
// stored blocks (one core loop, no workspace). With at most one block row a
// core (the functions above) or both off: the static loop over the block rows
// that tile-to-hw splits by count.
// RUN: filecheck %s --check-prefix=SHARE < %t.tile
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b attention-block-split=false}' 2>&1 | filecheck %s --check-prefix=BAL
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b attention-balance=false attention-block-split=false}' 2>&1 | filecheck %s --check-prefix=COUNT-NEST
// RUN: filecheck %s --check-prefix=SYNC < %t.hw
// SHARE: attention.mlir:{{[0-9]+}}:3: remark: tv-sparse-to-tile: fused block-sparse attention {{.*}}; block rows split over the cores by count (2 block rows, 24 cores: one block row a core at most, shorter than dividing rows and combining them after a sync_all)
// SHARE: attention.mlir:[[# @LINE + 45]]:3: remark: tv-sparse-to-tile: fused block-sparse attention {{.*}}; the stored blocks split evenly over 24 cores, a block row weighing 4 blocks more than its stored ones and divided where a core's share ends
// BAL: attention.mlir:[[# @LINE + 44]]:3: remark: tv-sparse-to-tile: fused block-sparse attention {{.*}}; block rows split over 24 cores by stored blocks (each core searches the offsets, loaded into ub, for its first block row; a block row weighs 1 block more than its stored ones; attention-block-split=false: whole block rows)
// COUNT: attention.mlir:[[# @LINE + 43]]:3: remark: tv-sparse-to-tile: fused block-sparse attention {{.*}}; block rows split over the cores by count (attention-balance=false, attention-block-split=false)
// SHARE-LABEL: func.func @balanced(
// SHARE:   %[[MAX:.*]] = memref.alloc() : memref<3072x1xf32>
// SHARE:   %[[SUM:.*]] = memref.alloc() : memref<3072x1xf32>
// SHARE:   %[[ACC:.*]] = memref.alloc() : memref<3072x64xf32>
// SHARE:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// SHARE:     tile.load %mask_offsets[%{{.*}}] : memref<33xi32> -> !tile.tile<40xi32, ub, valid = [33]>
// SHARE:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// SHARE:           tile.store %{{.*}}, %[[MAX]]
// SHARE:           tile.store %{{.*}}, %[[SUM]]
// SHARE:           tile.store %{{.*}}, %[[ACC]]
// SHARE:         } else {
// SHARE:           tile.store %{{.*}}, %out
// SHARE:   } {pypto.core_loop}
// SHARE:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// SHARE:     tile.load %mask_offsets
// SHARE:     scf.if
// SHARE:       tile.load %[[MAX]]
// SHARE:       scf.for {{.*}} iter_args
// SHARE:         tile.load %[[MAX]]
// SHARE:         tile.exp
// SHARE:       tile.store %{{.*}}, %out
// SHARE:   } {pypto.core_loop}
// SHARE:   memref.dealloc %[[MAX]]
// BAL-LABEL: func.func @balanced(
// BAL-NOT: memref.alloc
// BAL:   scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// BAL:     %[[TABLE:.*]] = tile.load %mask_offsets[%{{.*}}] : memref<33xi32> -> !tile.tile<40xi32, ub, valid = [33]>
// BAL:     tile.extract %[[TABLE]]
// BAL:     scf.for %[[BR:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// BAL:       tile.load %q
// BAL:   } {pypto.core_loop}
// BAL-NOT: pypto.core_loop
// COUNT-NEST-LABEL: func.func @balanced(
// COUNT-NEST-NOT: pypto.core_loop
// SYNC-LABEL: func.func @balanced(
// SYNC:   ascend_hw.block_idx
// SYNC:   ascend_hw.sync_all
// SYNC-NOT: ascend_hw.sync_all
// SYNC:   func.return
func.func @balanced(%mask: !big, %q: !tv.tensor<2048x64xf16>, %k: !tv.tensor<2048x64xf16>, %v: !tv.tensor<2048x64xf16>) -> !tv.tensor<2048x64xf16> {
  %s = tv.sddmm %mask, %q, %k transpose_b : !big, !tv.tensor<2048x64xf16>, !tv.tensor<2048x64xf16> -> !big
  %p = tv.sparse_softmax %s : !big
  %out = tv.spmm %p, %v : !big, !tv.tensor<2048x64xf16> -> !tv.tensor<2048x64xf16>
  func.return %out : !tv.tensor<2048x64xf16>
}

// The row maxima of a block's f32 scores, 8 rows a repeat (tile-to-hw's
// block-reduce): the 8 block maxima of each row, then their maximum; the ONES
// equal columns of the row sums to one by a vmax of their two blocks first.
// RUN: filecheck %s --check-prefix=BLOCK < %t.hw
// BLOCK: remark: tile-to-hw: 64 rows of 64 f32 reduced by 32-byte blocks, 8 rows a repeat (vblock_reduce_max then vblock_reduce_max)
// BLOCK: remark: tile-to-hw: 64 rows of 16 f32 reduced by 32-byte blocks, 8 rows a repeat (vmax then vblock_reduce_max)
// BLOCK: func.func @attention(
// BLOCK: ascend_hw.vblock_reduce_max %{{.*}} {repeat = 64 : i64} : !ascend_hw.buf<64x64xf32, ub> -> !ascend_hw.buf<512xf32, ub>
// BLOCK-NEXT: ascend_hw.vblock_reduce_max %{{.*}} {repeat = 8 : i64} : !ascend_hw.buf<512xf32, ub> -> !ascend_hw.buf<64x1xf32, ub>

// attention-sum-column (default on; pypto-lower: sparse-attention-sum-column):
// each block's row sums from the cube (ONES equal columns) reduced to one
// column before they are added, so the running sums are one column; off:
// ONES columns, reduced once at the end of the row.
// RUN: filecheck %s --check-prefix=COLUMN < %t.tile
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b attention-sum-column=false}' 2>&1 | filecheck %s --check-prefix=NO-COLUMN
// COLUMN: remark: tv-sparse-to-tile: fused block-sparse attention {{.*}}; each block's row sums reduced to one column before the rescale (~33 cycles with tile-to-hw's block-reduce, ~456 without; a one-column rescale saves ~150)
// COLUMN-LABEL: func.func @attention(
// COLUMN: tile.matmul %{{.*}}, %{{.*}} : !tile.tile<64x64xf16, l0a>, !tile.tile<64x16xf16, l0b> -> !tile.tile<64x16xf32, l0c>
// COLUMN-NEXT: %[[SU:.*]] = tile.move %{{.*}} : !tile.tile<64x16xf32, l0c> -> !tile.tile<64x16xf32, ub>
// COLUMN-NEXT: tile.reduce_max %[[SU]], axis = 1 : !tile.tile<64x16xf32, ub> -> !tile.tile<64x1xf32, ub>
// NO-COLUMN-NOT: reduced to one column
// NO-COLUMN: remark: tv-sparse-to-tile: fused block-sparse attention
// NO-COLUMN-LABEL: func.func @attention(
// NO-COLUMN: scf.for {{.*}} -> (!tile.tile<64x1xf32, ub>, !tile.tile<64x16xf32, ub>, !tile.tile<64x64xf32, ub>, !tile.tile<64x16xf32, ub>,
// NO-COLUMN: tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<64x16xf32, ub> -> !tile.tile<64x1xf32, ub>
// NO-COLUMN-NEXT: tile.fill
// NO-COLUMN-REMARK-NOT: reduced to one column
// NO-COLUMN-REMARK: remark: tv-sparse-to-tile: fused block-sparse attention
