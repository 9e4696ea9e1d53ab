// Loop nests that communicate through GM run on all cores: tile-to-hw cuts the
// function into phases where an op reads GM that an earlier op of its phase
// writes (a temporary, an output read back) or writes GM such an op reads, puts
// an ascend_hw.sync_all between two phases, and splits each phase over the
// cores on its own. The function's block_dim is the most cores a phase uses; a
// phase of fewer clamps block_idx (minui) so that the other cores get empty
// chunks, and a phase that cannot be split runs on core 0. Every core reaches
// every barrier.
// RUN: pypto-opt %s --split-input-file -p 'tile-peel-tails,tile-to-hw{target=tiny}' | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tile-peel-tails,tile-to-hw{target=ascend910b max_cores=4}' | filecheck %s --check-prefix=FOUR

// The second nest reads the rows of the temporary in reverse order, so on two
// cores each reads what the other wrote. First nest: 4 units of 8 rows; second:
// 2 units of 16. On tiny both use the 2 cores; with 4 cores the second phase
// uses 2: cores 2 and 3 are its "core 2", whose chunk [32, 32) is empty.
// CHECK-LABEL: func.func @exchange
// CHECK-SAME:      attributes {ascend_hw.block_dim = 2 : i64}
// CHECK:         %[[T:.*]] = memref.alloc() : memref<32x64xf32>
// CHECK-NEXT:    %[[CORE:.*]] = ascend_hw.block_idx
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C8:.*]] {
// CHECK:           ascend_hw.dma_store %{{.*}} -> %[[T]][%{{.*}}, %{{.*}}]
// CHECK-NEXT:    }
// CHECK-NEXT:    ascend_hw.sync_all
// CHECK-NOT:     arith.minui
// CHECK:         %[[LO:.*]] = arith.muli %[[CORE]], %[[C16:.*]] : index
// CHECK:         scf.for %{{.*}} = %[[LO]] to %{{.*}} step %[[C16]] {
// CHECK:           ascend_hw.dma_load %[[T]][%{{.*}}, %{{.*}}]
// CHECK:           ascend_hw.dma_store %{{.*}} -> %out
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[T]] : memref<32x64xf32>
// CHECK-NEXT:    func.return
// FOUR-LABEL: func.func @exchange
// FOUR-SAME:      attributes {ascend_hw.block_dim = 4 : i64}
// FOUR:         %[[CORE:.*]] = ascend_hw.block_idx
// FOUR:         scf.for
// FOUR:         ascend_hw.sync_all
// FOUR-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// FOUR-NEXT:    %[[MINE:.*]] = arith.minui %[[CORE]], %[[TWO]] : index
// FOUR-NEXT:    %[[NEXT:.*]] = arith.addi %[[MINE]], %{{.*}} : index
// FOUR-NEXT:    %[[LO:.*]] = arith.muli %[[MINE]], %[[C16:.*]] : index
// FOUR-NEXT:    %[[FULL:.*]] = arith.cmpi slt, %[[NEXT]], %[[TWO]] : index
// FOUR-NEXT:    %[[END:.*]] = arith.select %[[FULL]], %[[NEXT]], %[[TWO]] : index
// FOUR-NEXT:    %[[HI:.*]] = arith.muli %[[END]], %[[C16]] : index
// FOUR-NEXT:    scf.for %{{.*}} = %[[LO]] to %[[HI]] step %[[C16]] {
func.func @exchange(%x: memref<32x64xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<32x64xf32>
  scf.for %i = %c0 to %c32 step %c8 {
    %a = tile.load %x[%i, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
    %r = tile.relu %a : !tile.tile<8x64xf32, ub>
    tile.store %r, %t[%i, %c0] : !tile.tile<8x64xf32, ub> -> memref<32x64xf32>
  }
  scf.for %i = %c0 to %c32 step %c16 {
    %k = arith.subi %c16, %i : index
    %a = tile.load %t[%k, %c0] : memref<32x64xf32> -> !tile.tile<16x64xf32, ub>
    %e = tile.exp %a : !tile.tile<16x64xf32, ub>
    tile.store %e, %out[%i, %c0] : !tile.tile<16x64xf32, ub> -> memref<32x64xf32>
  }
  memref.dealloc %t : memref<32x64xf32>
  func.return
}

// -----

// An output read back: the second nest reads what the first stored in %y.
// CHECK-LABEL: func.func @read_back
// CHECK-SAME:      attributes {ascend_hw.block_dim = 2 : i64}
// CHECK:         scf.for
// CHECK:           ascend_hw.dma_store %{{.*}} -> %y
// CHECK:         ascend_hw.sync_all
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      arith.subi
// CHECK-NEXT:      ascend_hw.dma_load %y
// CHECK:           ascend_hw.dma_store %{{.*}} -> %z
// CHECK-NOT:     ascend_hw.sync_all
// FOUR-LABEL: func.func @read_back
// FOUR-SAME:      attributes {ascend_hw.block_dim = 4 : i64}
// FOUR-COUNT-1:  ascend_hw.sync_all
// FOUR-NOT:      arith.minui
func.func @read_back(%x: memref<32x64xf32>, %y: memref<32x64xf32>, %z: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c32 step %c8 {
    %a = tile.load %x[%i, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
    %r = tile.relu %a : !tile.tile<8x64xf32, ub>
    tile.store %r, %y[%i, %c0] : !tile.tile<8x64xf32, ub> -> memref<32x64xf32>
  }
  scf.for %i = %c0 to %c32 step %c8 {
    %k = arith.subi %c24, %i : index
    %a = tile.load %y[%k, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
    %e = tile.exp %a : !tile.tile<8x64xf32, ub>
    tile.store %e, %z[%i, %c0] : !tile.tile<8x64xf32, ub> -> memref<32x64xf32>
  }
  func.return
}

// -----

// A phase that is no loop runs on core 0 (every core still reaches the barrier).
// CHECK-LABEL: func.func @single
// CHECK-SAME:      attributes {ascend_hw.block_dim = 2 : i64}
// CHECK:         %[[CORE:.*]] = ascend_hw.block_idx
// CHECK:         scf.for
// CHECK:         ascend_hw.sync_all
// CHECK-NEXT:    %[[FIRST:.*]] = arith.cmpi eq, %[[CORE]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK-NEXT:      ascend_hw.dma_load %{{.*}}[%{{.*}}, %{{.*}}]
// CHECK-NEXT:      ascend_hw.vexp
// CHECK-NEXT:      ascend_hw.dma_store %{{.*}} -> %out
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc
func.func @single(%x: memref<32x64xf32>, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<32x64xf32>
  scf.for %i = %c0 to %c32 step %c8 {
    %a = tile.load %x[%i, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
    %r = tile.relu %a : !tile.tile<8x64xf32, ub>
    tile.store %r, %t[%i, %c0] : !tile.tile<8x64xf32, ub> -> memref<32x64xf32>
  }
  %a = tile.load %t[%c24, %c0] : memref<32x64xf32> -> !tile.tile<8x64xf32, ub>
  %e = tile.exp %a : !tile.tile<8x64xf32, ub>
  tile.store %e, %out[%c0, %c0] : !tile.tile<8x64xf32, ub> -> memref<8x64xf32>
  memref.dealloc %t : memref<32x64xf32>
  func.return
}

// -----

// When no phase can be split (each is one tile of work), nothing is: one core,
// no barrier.
// CHECK-LABEL: func.func @nothing_to_split
// CHECK-SAME:      attributes {ascend_hw.block_dim = 1 : i64}
// CHECK-NOT:     ascend_hw.sync_all
// CHECK-NOT:     ascend_hw.block_idx
// CHECK:         func.return
func.func @nothing_to_split(%x: memref<8x64xf32>, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<8x64xf32>
  %a = tile.load %x[%c0, %c0] : memref<8x64xf32> -> !tile.tile<8x64xf32, ub>
  %r = tile.relu %a : !tile.tile<8x64xf32, ub>
  tile.store %r, %t[%c0, %c0] : !tile.tile<8x64xf32, ub> -> memref<8x64xf32>
  %b = tile.load %t[%c0, %c0] : memref<8x64xf32> -> !tile.tile<8x64xf32, ub>
  %e = tile.exp %b : !tile.tile<8x64xf32, ub>
  tile.store %e, %out[%c0, %c0] : !tile.tile<8x64xf32, ub> -> memref<8x64xf32>
  memref.dealloc %t : memref<8x64xf32>
  func.return
}
