// 8-bit tiles on the vector unit, which moves 16/32-bit elements only: a fill is a
// vdup of the byte twice (an i16 pattern, `arith.extui` + `arith.muli` for a scalar
// known at run time) over a halfword view; a transpose converts to f16 and back
// (exact) around the gather; a gathered load (a strided view, a column) stages one
// element per zeroed 32-byte block, gathers the halfwords that start with them and
// wraps those (unsigned bytes) to i8. The f16 copies span the valid rows only.
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=ascend910b}' | filecheck %s

// -7 is 0xf9: the halfword 0xf9f9 = -1543.
// CHECK-LABEL: func.func @fill
// CHECK-DAG:   %[[HALVES:[0-9]+]] = ascend_hw.alloc [0, 192) : !ascend_hw.buf<96xi16, ub>
// CHECK-DAG:   %[[PATTERN:[0-9]+]] = arith.constant -1543 : i16
// CHECK:       ascend_hw.vdup %[[PATTERN]] -> %[[HALVES]] {repeat = 3 : i64, mask = 20 : i64, blk_stride = array<i64: 1>, rep_stride = array<i64: 2>}
func.func @fill(%out: memref<3x40xi8>) {
  %c0 = arith.constant 0 : index
  %c = arith.constant -7 : i8
  %t = tile.fill %c : i8 -> !tile.tile<3x64xi8, ub, valid = [3, 40]>
  tile.store %t, %out[%c0, %c0] : !tile.tile<3x64xi8, ub, valid = [3, 40]> -> memref<3x40xi8>
  func.return
}

// -----

// CHECK-LABEL: func.func @fill_scalar
// CHECK:       %[[WIDE:[0-9]+]] = arith.extui %s : i8 to i16
// CHECK-NEXT:  %[[PATTERN:[0-9]+]] = arith.muli %[[WIDE]], %{{.*}} : i16
// CHECK-NEXT:  ascend_hw.vdup %[[PATTERN]] -> %{{.*}} {mask = 3 : i64} : i16 -> !ascend_hw.buf<3xi16, ub>
func.func @fill_scalar(%s: i8, %out: memref<5x1xi8>) {
  %c0 = arith.constant 0 : index
  %t = tile.fill %s : i8 -> !tile.tile<5x1xi8, ub>
  tile.store %t, %out[%c0, %c0] : !tile.tile<5x1xi8, ub> -> memref<5x1xi8>
  func.return
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK:       ascend_hw.vcast none %[[X:[0-9]+]] -> %[[WIDE:[0-9]+]] {mask = 64 : i64} : !ascend_hw.buf<32x32xi8, ub> -> !ascend_hw.buf<64xf16, ub>
// CHECK:       ascend_hw.vgather %[[WIDE]], %{{.*}} -> %[[T:[0-9]+]] {repeat = 16 : i64, mask = 2 : i64
// CHECK:       ascend_hw.vgather
// CHECK-NEXT:  ascend_hw.vcast trunc %[[T]] -> %{{.*}} {repeat = 32 : i64, mask = 2 : i64{{.*}}} : !ascend_hw.buf<1024xf16, ub> -> !ascend_hw.buf<32x32xi8, ub>
func.func @transpose(%x: memref<2x32xi8>, %out: memref<32x2xi8>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<2x32xi8> -> !tile.tile<32x32xi8, ub, valid = [2, 32]>
  %u = tile.transpose %t : !tile.tile<32x32xi8, ub, valid = [2, 32]> -> !tile.tile<32x32xi8, ub, valid = [32, 2]>
  tile.store %u, %out[%c0, %c0] : !tile.tile<32x32xi8, ub, valid = [32, 2]> -> memref<32x2xi8>
  func.return
}

// -----

// CHECK-LABEL: func.func @column
// CHECK:       ascend_hw.vdup %{{.*}} -> %[[ZEROS:[0-9]+]] {mask = 96 : i64} : i16 -> !ascend_hw.buf<96xi16, ub>
// CHECK-NEXT:  ascend_hw.dma_load %v[{{.*}}] -> %{{.*}} {bursts = 6 : i64, burst_bytes = 1 : i64, src_gap = 9 : i64}
// CHECK:       ascend_hw.vgather %[[ZEROS]], %{{.*}} -> %[[H:[0-9]+]] {mask = 6 : i64} : !ascend_hw.buf<96xi16, ub>, !ascend_hw.buf<128xi32, ub> -> !ascend_hw.buf<6xi16, ub>
// CHECK-NEXT:  ascend_hw.vcast none %[[H]] -> %{{.*}} {mask = 6 : i64} : !ascend_hw.buf<6xi16, ub> -> !ascend_hw.buf<6xf32, ub>
// CHECK:       ascend_hw.vcast trunc %{{.*}} -> %[[Y:[0-9]+]] {mask = 6 : i64} : !ascend_hw.buf<12xf16, ub> -> !ascend_hw.buf<6x1xi8, ub>
// CHECK-NEXT:  ascend_hw.dma_store %[[Y]] -> %out
func.func @column(%x: memref<6x10xi8>, %out: memref<6x1xi8>) {
  %c0 = arith.constant 0 : index
  %v = memref.subview %x[0, 3] [6, 1] [1, 1] : memref<6x10xi8> to memref<6x1xi8, strided<[10, 1], offset: 3>>
  %t = tile.load %v[%c0, %c0] : memref<6x1xi8, strided<[10, 1], offset: 3>> -> !tile.tile<6x1xi8, ub>
  tile.store %t, %out[%c0, %c0] : !tile.tile<6x1xi8, ub> -> memref<6x1xi8>
  func.return
}
