// Row reductions of integer tiles (vreduce takes f16/f32 only): each row is folded
// with vmax/vadd/vmin into one 32-byte block (columns [h, w) onto [0, w - h), h
// the half rounded up to a block), the blocks are transposed by a gather, and the
// rows of the transpose (one per column of a block) are combined pairwise; the
// last combination writes the [rows, 1] result.
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b},hw-coalesce-dma' | filecheck %s

// 40 i16 columns: 40 -> 32 (8 combined, 24 copied) -> 16; 16 rows of the
// transpose -> 8 -> 4 -> 2 -> 1.
// CHECK-LABEL: func.func @rows
// CHECK:       ascend_hw.dma_load %x[{{.*}}] -> %[[X:[0-9]+]]
// CHECK:       ascend_hw.vmax %[[X]], %{{.*}} -> %[[F:[0-9]+]] {repeat = 4 : i64, mask = 8 : i64
// CHECK:       ascend_hw.vcopy %[[X]] -> %[[F]] {repeat = 4 : i64, mask = #ascend_hw.mask<0xffffff00>
// CHECK:       ascend_hw.vmax %[[F]], %{{.*}} -> %[[F]] {repeat = 4 : i64, mask = 16 : i64
// CHECK:       ascend_hw.vgather %[[F]], %{{.*}} -> %[[T:[0-9]+]] {repeat = 16 : i64, mask = 4 : i64
// CHECK:       ascend_hw.vmax %[[T]], %{{.*}} -> %[[T]] {repeat = 8 : i64, mask = 4 : i64
// CHECK:       ascend_hw.vmax %[[T]], %{{.*}} -> %[[T]] {repeat = 4 : i64, mask = 4 : i64
// CHECK:       ascend_hw.vmax %[[T]], %{{.*}} -> %[[T]] {repeat = 2 : i64, mask = 4 : i64
// CHECK:       ascend_hw.vmax %[[T]], %{{.*}} -> %[[M:[0-9]+]] {mask = 4 : i64} : !ascend_hw.buf<256xi16, ub>, !ascend_hw.buf<240xi16, ub> -> !ascend_hw.buf<4x1xi16, ub>
// CHECK-NEXT:  ascend_hw.dma_store %[[M]] -> %out
func.func @rows(%x: memref<4x40xi16>, %out: memref<4x1xi16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<4x40xi16> -> !tile.tile<4x48xi16, ub, valid = [4, 40]>
  %m = tile.reduce_max %t, axis = 1 : !tile.tile<4x48xi16, ub, valid = [4, 40]> -> !tile.tile<4x1xi16, ub>
  tile.store %m, %out[%c0, %c0] : !tile.tile<4x1xi16, ub> -> memref<4x1xi16>
  func.return
}
