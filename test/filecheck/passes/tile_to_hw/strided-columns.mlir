// Column tiles [M, 1] are contiguous in UB; from a GM column (a matrix's column,
// rows `s` elements apart) they are gathered like strided rows: the DMA writes
// 32-byte aligned bursts into a UB staging buffer (the column's whole span, or one
// element per block when that is smaller), a vgather packs them. A column whose
// GM elements are contiguous is one burst.
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=tiny}' | filecheck %s

// Rows 3 elements apart: the span of 5 elements (52 bytes) is one burst.
// CHECK-LABEL: func.func @span
// CHECK:       %[[COL:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<5x1xf32, ub>
// CHECK:       %[[STAGE:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<16xf32, ub>
// CHECK:       ascend_hw.dma_load %v[%{{.*}}, %{{.*}}] -> %[[STAGE]] {bursts = 1 : i64, burst_bytes = 52 : i64}
// CHECK:       ascend_hw.vgather %[[STAGE]], %{{.*}} -> %[[COL]] {mask = 5 : i64}
// CHECK-NEXT:  ascend_hw.vexp %[[COL]] -> %[[COL]] {mask = 5 : i64}
// CHECK-NEXT:  ascend_hw.dma_store %[[COL]] -> %out[{{.*}}] {bursts = 1 : i64, burst_bytes = 20 : i64}
func.func @span(%x: memref<5x3xf32>, %out: memref<5x1xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.subview %x[0, 1] [5, 1] [1, 1] : memref<5x3xf32> to memref<5x1xf32, strided<[3, 1], offset: 1>>
  %t = tile.load %v[%c0, %c0] : memref<5x1xf32, strided<[3, 1], offset: 1>> -> !tile.tile<5x1xf32, ub>
  %e = tile.exp %t : !tile.tile<5x1xf32, ub>
  tile.store %e, %out[%c0, %c0] : !tile.tile<5x1xf32, ub> -> memref<5x1xf32>
  func.return
}

// -----

// Rows 100 elements apart: one 4-byte burst per element, into a block each.
// CHECK-LABEL: func.func @spread
// CHECK:       %[[STAGE:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<40xf32, ub>
// CHECK:       ascend_hw.dma_load %v[%{{.*}}, %{{.*}}] -> %[[STAGE]] {bursts = 5 : i64, burst_bytes = 4 : i64, src_gap = 396 : i64}
// CHECK:       ascend_hw.vgather %[[STAGE]], %{{.*}} -> %{{.*}} {mask = 5 : i64}
func.func @spread(%x: memref<5x100xf32>, %out: memref<5x1xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.subview %x[0, 7] [5, 1] [1, 1] : memref<5x100xf32> to memref<5x1xf32, strided<[100, 1], offset: 7>>
  %t = tile.load %v[%c0, %c0] : memref<5x1xf32, strided<[100, 1], offset: 7>> -> !tile.tile<5x1xf32, ub>
  tile.store %t, %out[%c0, %c0] : !tile.tile<5x1xf32, ub> -> memref<5x1xf32>
  func.return
}

// -----

// `x[:, ::2]` of a 2x1 tensor: the innermost stride does not matter for one
// column, whose two elements are contiguous in GM: one burst.
// CHECK-LABEL: func.func @contiguous
// CHECK-NOT:   vgather
// CHECK:       ascend_hw.dma_load %v[%{{.*}}, %{{.*}}] -> %{{.*}} {bursts = 1 : i64, burst_bytes = 8 : i64}
// CHECK-NOT:   vgather
func.func @contiguous(%x: memref<2x1xf32>, %out: memref<2x1xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.subview %x[0, 0] [2, 1] [1, 2] : memref<2x1xf32> to memref<2x1xf32, strided<[1, 2]>>
  %t = tile.load %v[%c0, %c0] : memref<2x1xf32, strided<[1, 2]>> -> !tile.tile<2x1xf32, ub>
  tile.store %t, %out[%c0, %c0] : !tile.tile<2x1xf32, ub> -> memref<2x1xf32>
  func.return
}
