// tile-to-hw moves a GM window whose rows are not contiguous (here 4 rows of 20
// f16 in rows of 40) one row per DMA, into the row's place in the tile's buffer;
// hw-coalesce-dma forms the burst descriptor (4 bursts of 40 bytes, GM gap 40,
// each burst padded to 64 bytes, a UB row), so that its gain shows when it is off
// (pypto-lower{coalesce-dma=false}). A window that is contiguous on both sides
// is one DMA already; a contiguous tile stored into rows of 40 is 4 again.
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b}' | filecheck %s
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b},hw-coalesce-dma' | filecheck %s --check-prefix=MERGED

func.func @f(%x: memref<4x40xf16>, %y: memref<4x16xf16>, %out: memref<4x40xf16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<4x40xf16> -> !tile.tile<4x32xf16, ub, valid = [4, 20]>
  tile.store %t, %out[%c0, %c0] : !tile.tile<4x32xf16, ub, valid = [4, 20]> -> memref<4x40xf16>
  %u = tile.load %y[%c0, %c0] : memref<4x16xf16> -> !tile.tile<4x16xf16, ub>
  tile.store %u, %out[%c0, %c0] : !tile.tile<4x16xf16, ub> -> memref<4x40xf16>
  func.return
}

// CHECK-LABEL: func.func @f(
// CHECK:         %[[T:.*]] = ascend_hw.alloc [0, 256) : !ascend_hw.buf<4x32xf16, ub>
// CHECK:         %[[R1:.*]] = ascend_hw.subview %[[T]][%[[ONE:.*]], %[[C0:.*]]] : !ascend_hw.buf<4x32xf16, ub> -> !ascend_hw.buf<96xf16, ub>
// CHECK:         ascend_hw.dma_load %x[%[[C0]], %[[C0]]] -> %[[T]] {bursts = 1 : i64, burst_bytes = 40 : i64} : memref<4x40xf16> -> !ascend_hw.buf<4x32xf16, ub>
// CHECK-NEXT:    ascend_hw.dma_load %x[%[[ONE]], %[[C0]]] -> %[[R1]] {bursts = 1 : i64, burst_bytes = 40 : i64}
// CHECK-COUNT-2: ascend_hw.dma_load %x
// CHECK-COUNT-4: ascend_hw.dma_store %{{.*}} -> %out
// A window contiguous in GM and UB is one DMA; its store is 4 rows again.
// CHECK:         ascend_hw.dma_load %y[%[[C0]], %[[C0]]] -> %{{.*}} {bursts = 1 : i64, burst_bytes = 128 : i64}
// CHECK-COUNT-4: ascend_hw.dma_store %{{.*}} -> %out

// MERGED-LABEL: func.func @f(
// MERGED-NOT:     ascend_hw.subview
// MERGED:         ascend_hw.dma_load %x[%[[C0:.*]], %[[C0]]] -> %{{.*}} {bursts = 4 : i64, burst_bytes = 40 : i64, src_gap = 40 : i64}
// MERGED-NEXT:    ascend_hw.dma_store %{{.*}} -> %out[%[[C0]], %[[C0]]] {bursts = 4 : i64, burst_bytes = 40 : i64, dst_gap = 40 : i64}
// MERGED-NEXT:    ascend_hw.dma_load %y[%[[C0]], %[[C0]]] -> %{{.*}} {bursts = 1 : i64, burst_bytes = 128 : i64}
// MERGED-NEXT:    ascend_hw.dma_store %{{.*}} -> %out[%[[C0]], %[[C0]]] {bursts = 4 : i64, burst_bytes = 32 : i64, dst_gap = 48 : i64}
