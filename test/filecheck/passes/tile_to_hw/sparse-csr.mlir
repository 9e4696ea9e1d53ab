// CSR kernels as the sparse lowering writes them at the tile level
// (docs/sparse.md, *The tile level*), lowered to ascend_hw: offsets and column
// indices read on the scalar unit (`memref.load` -> `load_scalar`), the row loop
// split over the cores, the loop over a row's entries kept as a loop of
// run-time bounds, the row of B gathered by a DMA at the address read, and the
// flags of hw-insert-sync around the scalar reads.
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{start-level=tile target=ascend910b}' | filecheck %s

// spmm: out[r, :] = sum over the entries p of row r of val[p] * b[idx[p], :].
// CHECK-LABEL: func.func @spmm
// CHECK-SAME: attributes {ascend_hw.block_dim = 8 : i64}
// CHECK:      %[[CORE:.*]] = ascend_hw.block_idx
// CHECK:      scf.for %r = %[[CORE]] to %{{.*}} step %c1 {
// CHECK:        %start = ascend_hw.load_scalar %off[%r] : memref<9xindex> -> index
// CHECK:        %end = ascend_hw.load_scalar %off[%r1] : memref<9xindex> -> index
// CHECK:        ascend_hw.vdup %zero -> %[[ACC:.*]] : f32
// CHECK:        scf.for %p = %start to %end step %c1 {
// CHECK-NEXT:     %col = ascend_hw.load_scalar %idx[%p] : memref<?xindex> -> index
// CHECK-NEXT:     %v = ascend_hw.load_scalar %val[%p] : memref<?xf32> -> f32
// CHECK-NEXT:     ascend_hw.wait_flag v -> mte2, 0
// CHECK-NEXT:     ascend_hw.dma_load %b[%col, %c0] -> %[[ROW:.*]] {bursts = 1 : i64, burst_bytes = 256 : i64} : memref<16x64xf32>
// CHECK-NEXT:     ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT:     ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT:     ascend_hw.vmuls %[[ROW]], %v -> %[[ROW]]
// CHECK-NEXT:     ascend_hw.vadd %[[ACC]], %[[ROW]] -> %[[ACC]]
// CHECK-NEXT:     ascend_hw.set_flag v -> mte2, 0
// CHECK-NEXT:   }
// CHECK:        ascend_hw.dma_store %[[ACC]] -> %out[%r, %c0]
// CHECK:      } {pypto.max_trips = 1 : i64}
func.func @spmm(%off: memref<9xindex>, %idx: memref<?xindex>, %val: memref<?xf32>, %b: memref<16x64xf32>, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c8 step %c1 {
    %start = memref.load %off[%r] : memref<9xindex>
    %r1 = arith.addi %r, %c1 : index
    %end = memref.load %off[%r1] : memref<9xindex>
    %init = tile.fill %zero : f32 -> !tile.tile<1x64xf32, ub>
    %acc = scf.for %p = %start to %end step %c1 iter_args(%a = %init) -> (!tile.tile<1x64xf32, ub>) {
      %col = memref.load %idx[%p] : memref<?xindex>
      %v = memref.load %val[%p] : memref<?xf32>
      %row = tile.load %b[%col, %c0] : memref<16x64xf32> -> !tile.tile<1x64xf32, ub>
      %s = tile.mul %row, %v : !tile.tile<1x64xf32, ub>, f32
      %a2 = tile.add %a, %s : !tile.tile<1x64xf32, ub>
      scf.yield %a2 : !tile.tile<1x64xf32, ub>
    }
    tile.store %acc, %out[%r, %c0] : !tile.tile<1x64xf32, ub> -> memref<8x64xf32>
  }
  func.return
}

// -----

// spmv with the column indices of a row read 8 at a time into ub (an i32 tile)
// and taken out with tile.extract: a scalar read of ub after the DMA that
// wrote it, ordered by an mte2 -> s flag, and the next chunk's DMA after the
// last read of this one by an s -> mte2 flag.
// CHECK-LABEL: func.func @spmv_prefetch
// CHECK:      ascend_hw.set_flag s -> mte2, 0
// CHECK:      scf.for %q = %start to %end step %c8 {
// CHECK-NEXT:   ascend_hw.wait_flag s -> mte2, 0
// CHECK-NEXT:   ascend_hw.dma_load %idx[%q] -> %[[IDS:.*]] {bursts = 1 : i64, burst_bytes = 32 : i64} : memref<?xi32> -> !ascend_hw.buf<8xi32, ub>
// CHECK-NEXT:   ascend_hw.set_flag mte2 -> s, 0
// CHECK:        ascend_hw.wait_flag mte2 -> s, 0
// CHECK-NEXT:   scf.for %j = %c0 to %count step %c1 {
// CHECK-NEXT:     %col = ascend_hw.load_scalar %[[IDS]][%j] : !ascend_hw.buf<8xi32, ub> -> index
// CHECK:          ascend_hw.dma_load %x[%col] -> %{{.*}} {bursts = 1 : i64, burst_bytes = 4 : i64} : memref<24xf32>
// CHECK:        ascend_hw.set_flag v -> mte2, 1
// CHECK-NEXT:   }
// CHECK-NEXT:   ascend_hw.set_flag s -> mte2, 0
// CHECK-NEXT: }
func.func @spmv_prefetch(%off: memref<17xindex>, %idx: memref<?xi32>, %val: memref<?xf32>, %x: memref<24xf32>, %y: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c16 step %c1 {
    %start = memref.load %off[%r] : memref<17xindex>
    %r1 = arith.addi %r, %c1 : index
    %end = memref.load %off[%r1] : memref<17xindex>
    %init = tile.fill %zero : f32 -> !tile.tile<8xf32, ub, valid = [1]>
    %acc = scf.for %q = %start to %end step %c8 iter_args(%a = %init) -> (!tile.tile<8xf32, ub, valid = [1]>) {
      %chunk = tile.load %idx[%q] : memref<?xi32> -> !tile.tile<8xi32, ub>
      %left = arith.subi %end, %q : index
      %short = arith.cmpi slt, %left, %c8 : index
      %count = arith.select %short, %left, %c8 : index
      %a3 = scf.for %j = %c0 to %count step %c1 iter_args(%b = %a) -> (!tile.tile<8xf32, ub, valid = [1]>) {
        %col = tile.extract %chunk[%j] : !tile.tile<8xi32, ub> -> index
        %p = arith.addi %q, %j : index
        %v = memref.load %val[%p] : memref<?xf32>
        %xe = tile.load %x[%col] : memref<24xf32> -> !tile.tile<8xf32, ub, valid = [1]>
        %s = tile.mul %xe, %v : !tile.tile<8xf32, ub, valid = [1]>, f32
        %b2 = tile.add %b, %s : !tile.tile<8xf32, ub, valid = [1]>
        scf.yield %b2 : !tile.tile<8xf32, ub, valid = [1]>
      }
      scf.yield %a3 : !tile.tile<8xf32, ub, valid = [1]>
    }
    tile.store %acc, %y[%r] : !tile.tile<8xf32, ub, valid = [1]> -> memref<16xf32>
  }
  func.return
}

// -----

// A top-level loop of run-time bounds (rows from an argument) is not split
// over the cores: its chunks are unknown at compile time. It runs on one core,
// pipelined by tile-pipeline (a remainder loop, then two rows per trip).
// CHECK-LABEL: func.func @gather_rows
// CHECK-SAME: attributes {ascend_hw.block_dim = 1 : i64}
// CHECK-NOT:  ascend_hw.block_idx
// CHECK:      scf.for %p = %lo to %{{.*}} step %c1 {
// CHECK:        %col = ascend_hw.load_scalar %idx[%p] : memref<64xindex> -> index
// CHECK:        ascend_hw.dma_load %x[%col, %c0]
// CHECK:      scf.for %{{.*}} = %{{.*}} to %hi step %{{.*}} {
// CHECK-COUNT-2: ascend_hw.load_scalar %idx
func.func @gather_rows(%idx: memref<64xindex>, %x: memref<32x64xf32>, %out: memref<64x64xf32>, %lo: index, %hi: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %p = %lo to %hi step %c1 {
    %col = memref.load %idx[%p] : memref<64xindex>
    %row = tile.load %x[%col, %c0] : memref<32x64xf32> -> !tile.tile<1x64xf32, ub>
    tile.store %row, %out[%p, %c0] : !tile.tile<1x64xf32, ub> -> memref<64x64xf32>
  }
  func.return
}
