// The outermost parallel tile loop is split over the target's cores in
// contiguous, balanced chunks (ascend_hw.block_idx), the function declares
// ascend_hw.block_dim, and the peeled tail runs on the last core.
// RUN: pypto-opt %s --split-input-file -p 'tile-peel-tails,tile-to-hw{target=tiny},hw-coalesce-dma' | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tile-peel-tails,tile-to-hw{target=ascend910b max_cores=4},hw-coalesce-dma' | filecheck %s --check-prefix=FOUR

// 100 rows in blocks of 8: 12 full blocks and a 4-row tail, 13 units. Rows are
// 256 bytes, so every block starts on a 32-byte block of GM: a unit is one
// iteration. tiny has 2 cores: core 0 runs iterations 0..6, core 1 7..11 and
// the tail. With 4 cores: 4 + 3 + 3 + 3 units. The loop says how many
// iterations a core runs at most (pypto.max_trips: 7, the longer chunk).
// CHECK-LABEL: func.func @rows
// CHECK-SAME:      attributes {ascend_hw.block_dim = 2 : i64}
// CHECK:         %[[CORE:.*]] = ascend_hw.block_idx
// CHECK-NEXT:    %[[SIX:.*]] = arith.constant 6 : index
// CHECK-NEXT:    %[[SHARE:.*]] = arith.muli %[[CORE]], %[[SIX]] : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LONGER:.*]] = arith.cmpi ult, %[[CORE]], %[[ONE]] : index
// CHECK-NEXT:    %[[BEFORE:.*]] = arith.select %[[LONGER]], %[[CORE]], %[[ONE]] : index
// CHECK-NEXT:    %[[START:.*]] = arith.addi %[[SHARE]], %[[BEFORE]] : index
// CHECK-NEXT:    %[[SEVEN:.*]] = arith.constant 7 : index
// CHECK-NEXT:    %[[LENGTH:.*]] = arith.select %[[LONGER]], %[[SEVEN]], %[[SIX]] : index
// CHECK-NEXT:    %[[END:.*]] = arith.addi %[[START]], %[[LENGTH]] : index
// CHECK-NEXT:    %[[LO:.*]] = arith.muli %[[START]], %[[EIGHT:.*]] : index
// CHECK-NEXT:    %[[TWELVE:.*]] = arith.constant 12 : index
// CHECK-NEXT:    %[[FULL:.*]] = arith.cmpi slt, %[[END]], %[[TWELVE]] : index
// CHECK-NEXT:    %[[CLAMPED:.*]] = arith.select %[[FULL]], %[[END]], %[[TWELVE]] : index
// CHECK-NEXT:    %[[HI:.*]] = arith.muli %[[CLAMPED]], %[[EIGHT]] : index
// CHECK-NEXT:    %[[LAST:.*]] = arith.cmpi eq, %[[CORE]], %[[ONE]] : index
// CHECK-NEXT:    scf.for %{{.*}} = %[[LO]] to %[[HI]] step %[[EIGHT]] {
// CHECK:           ascend_hw.dma_store
// CHECK-NEXT:    } {pypto.max_trips = 7 : i64}
// CHECK-NEXT:    scf.if %[[LAST]] {
// CHECK-NEXT:      ascend_hw.dma_load %x[%{{.*}}, %{{.*}}] -> %{{.*}} {bursts = 1 : i64, burst_bytes = 1024 : i64}
// CHECK:           ascend_hw.dma_store
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// FOUR-LABEL: func.func @rows
// FOUR-SAME:      attributes {ascend_hw.block_dim = 4 : i64}
func.func @rows(%x: memref<100x64xf32>, %out: memref<100x64xf32>) {
  %c0 = arith.constant 0 : index
  %rows = arith.constant 100 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %rows step %c8 {
    %left = arith.subi %rows, %i : index
    %lt = arith.cmpi slt, %left, %c8 : index
    %vi = arith.select %lt, %left, %c8 : index
    %t = tile.load %x[%i, %c0] valid [%vi] : memref<100x64xf32> -> !tile.tile<8x64xf32, ub, valid = [?, 64]>
    %r = tile.relu %t : !tile.tile<8x64xf32, ub, valid = [?, 64]>
    tile.store %r, %out[%i, %c0] : !tile.tile<8x64xf32, ub, valid = [?, 64]> -> memref<100x64xf32>
  }
  func.return
}

// -----

// Rows of 70 f16 are 140 bytes: a block of 4 rows (560 bytes) does not start on
// a 32-byte block of GM, two do (1120 bytes). Cores never share a block (the
// simulator reports that as a race), so a unit is two iterations: 16 rows in
// blocks of 4 are 2 units.
// CHECK-LABEL: func.func @unaligned_rows
// CHECK-SAME:      attributes {ascend_hw.block_dim = 2 : i64}
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK:         %[[CORE:.*]] = ascend_hw.block_idx
// CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %[[CORE]], %[[ONE]] : index
// CHECK-NEXT:    %[[FIRST:.*]] = arith.muli %[[CORE]], %[[TWO]] : index
// CHECK-NEXT:    %[[LO:.*]] = arith.muli %[[FIRST]], %[[STEP:.*]] : index
// CHECK-NEXT:    %[[LAST:.*]] = arith.muli %[[NEXT]], %[[TWO]] : index
// CHECK-NEXT:    %[[HI:.*]] = arith.muli %[[LAST]], %[[STEP]] : index
// CHECK-NEXT:    scf.for %{{.*}} = %[[LO]] to %[[HI]] step %[[STEP]] {
// FOUR-LABEL: func.func @unaligned_rows
// FOUR-SAME:      attributes {ascend_hw.block_dim = 2 : i64}
func.func @unaligned_rows(%x: memref<16x70xf16>, %out: memref<16x70xf16>) {
  %c0 = arith.constant 0 : index
  %rows = arith.constant 16 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %rows step %c4 {
    %t = tile.load %x[%i, %c0] : memref<16x70xf16> -> !tile.tile<4x80xf16, ub, valid = [4, 70]>
    %r = tile.abs %t : !tile.tile<4x80xf16, ub, valid = [4, 70]>
    tile.store %r, %out[%i, %c0] : !tile.tile<4x80xf16, ub, valid = [4, 70]> -> memref<16x70xf16>
  }
  func.return
}

// -----

// A loop whose iterations depend on each other (a carried tile) stays on one core.
// CHECK-LABEL: func.func @carried
// CHECK-SAME:      attributes {ascend_hw.block_dim = 1 : i64}
// CHECK-NOT:     ascend_hw.block_idx
func.func @carried(%x: memref<64x8xf32>, %out: memref<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %s0 = tile.fill %zero : f32 -> !tile.tile<1x8xf32, ub>
  %s = scf.for %i = %c0 to %c64 step %c8 iter_args(%acc = %s0) -> (!tile.tile<1x8xf32, ub>) {
    %t = tile.load %x[%i, %c0] : memref<64x8xf32> -> !tile.tile<8x8xf32, ub>
    %p = tile.reduce_sum %t, axis = 0 : !tile.tile<8x8xf32, ub> -> !tile.tile<1x8xf32, ub>
    %n = tile.add %acc, %p : !tile.tile<1x8xf32, ub>
    scf.yield %n : !tile.tile<1x8xf32, ub>
  }
  tile.store %s, %out[%c0, %c0] : !tile.tile<1x8xf32, ub> -> memref<1x8xf32>
  func.return
}
