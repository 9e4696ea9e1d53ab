// tile.cast between every pair of element types, rounding once as tv.cast does:
// vcast pairs directly; exact widenings then one conversion; float -> narrow int
// through i32 with a clamp; int -> narrow int keeps the low bits (i32 -> i16: a
// 16-bit gather of the low halfwords; i16 -> i8: x - 256 floor((x + 128) / 256),
// exact in f32, then f16 -> i8); i32 -> bf16 corrects the ties of trunc_f32(x).
// The region is converted in chunks whose intermediates take at most 1/32 of UB
// (or a repeat: 64 f32 on tiny).
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=ascend910b}' | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=tiny}' | filecheck %s --check-prefix=CHUNK

// CHECK-LABEL: func.func @wrap
// CHECK:       ascend_hw.dma_load %x[{{.*}}] -> %[[X:[0-9]+]]
// CHECK-NEXT:  ascend_hw.vcast none %[[X]] -> %[[A:[0-9]+]] {repeat = 2 : i64} : !ascend_hw.buf<4x32xi16, ub> -> !ascend_hw.buf<128xf32, ub>
// CHECK-NEXT:  ascend_hw.vadds %[[A]], %{{.*}} -> %[[B:[0-9]+]] {repeat = 2 : i64}
// CHECK-NEXT:  ascend_hw.vmuls %[[B]], %{{.*}} -> %[[B]] {repeat = 2 : i64}
// CHECK-NEXT:  ascend_hw.vcast floor %[[B]] -> %[[Q:[0-9]+]] {repeat = 2 : i64} : !ascend_hw.buf<128xf32, ub> -> !ascend_hw.buf<128xi32, ub>
// CHECK-NEXT:  ascend_hw.vcast rint %[[Q]] -> %[[B]] {repeat = 2 : i64}
// CHECK-NEXT:  ascend_hw.vmuls %[[B]], %{{.*}} -> %[[B]] {repeat = 2 : i64}
// CHECK-NEXT:  ascend_hw.vadd %[[A]], %[[B]] -> %[[B]] {repeat = 2 : i64}
// CHECK-NEXT:  ascend_hw.vcast rint %[[B]] -> %[[H:[0-9]+]] {repeat = 2 : i64} : !ascend_hw.buf<128xf32, ub> -> !ascend_hw.buf<256xf16, ub>
// CHECK-NEXT:  ascend_hw.vcast trunc %[[H]] -> %[[Y:[0-9]+]] : !ascend_hw.buf<256xf16, ub> -> !ascend_hw.buf<4x32xi8, ub>
// CHECK-NEXT:  ascend_hw.dma_store %[[Y]] -> %out
// On tiny, two chunks of 64 elements (2 rows each):
// CHUNK-LABEL: func.func @wrap
// CHUNK:       ascend_hw.vcast none %[[X:[0-9]+]] -> %[[A:[0-9]+]] : !ascend_hw.buf<4x32xi16, ub> -> !ascend_hw.buf<64xf32, ub>
// CHUNK:       ascend_hw.vcast trunc %{{.*}} -> %{{.*}} {mask = 64 : i64} : !ascend_hw.buf<128xf16, ub> -> !ascend_hw.buf<4x32xi8, ub>
// CHUNK:       ascend_hw.vcast none %{{.*}} -> %[[A]] : !ascend_hw.buf<64xi16, ub> -> !ascend_hw.buf<64xf32, ub>
// CHUNK:       ascend_hw.vcast trunc %{{.*}} -> %{{.*}} {mask = 64 : i64} : !ascend_hw.buf<128xf16, ub> -> !ascend_hw.buf<64xi8, ub>
// CHUNK-NEXT:  ascend_hw.dma_store
func.func @wrap(%x: memref<4x32xi16>, %out: memref<4x32xi8>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<4x32xi16> -> !tile.tile<4x32xi16, ub>
  %u = tile.cast %t : !tile.tile<4x32xi16, ub> -> !tile.tile<4x32xi8, ub>
  tile.store %u, %out[%c0, %c0] : !tile.tile<4x32xi8, ub> -> memref<4x32xi8>
  func.return
}

// -----

// 200 i32 -> i16: two gathers of (up to) 128 halfwords, 4 bytes apart.
// CHECK-LABEL: func.func @low_halves
// CHECK:       ascend_hw.vgather %[[HALVES:[0-9]+]], %[[TABLE:[0-9]+]] -> %[[Y:[0-9]+]] : !ascend_hw.buf<416xi16, ub>, !ascend_hw.buf<128xi32, ub> -> !ascend_hw.buf<208xi16, ub>
// CHECK:       ascend_hw.vgather %{{.*}}, %[[TABLE]] -> %{{.*}} {mask = 72 : i64}
// CHECK-NEXT:  ascend_hw.dma_store %[[Y]] -> %out
func.func @low_halves(%x: memref<200xi32>, %out: memref<200xi16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<200xi32> -> !tile.tile<208xi32, ub, valid = [200]>
  %u = tile.cast %t : !tile.tile<208xi32, ub, valid = [200]> -> !tile.tile<208xi16, ub, valid = [200]>
  tile.store %u, %out[%c0] : !tile.tile<208xi16, ub, valid = [200]> -> memref<200xi16>
  func.return
}

// -----

// f32 -> i16 (floor): f32 -> i32 saturates, the clamp to the i16 range, the low halves.
// CHECK-LABEL: func.func @clamp
// CHECK:       ascend_hw.vcast floor %{{.*}} -> %[[I:[0-9]+]] {mask = 16 : i64} : !ascend_hw.buf<16xf32, ub> -> !ascend_hw.buf<16xi32, ub>
// CHECK-NEXT:  ascend_hw.vmaxs %[[I]], %{{.*}} -> %[[I]] {mask = 16 : i64}
// CHECK-NEXT:  ascend_hw.vmins %[[I]], %{{.*}} -> %[[I]] {mask = 16 : i64}
// CHECK:       ascend_hw.vgather %{{.*}} -> %{{.*}} {mask = 16 : i64} : !ascend_hw.buf<32xi16, ub>, !ascend_hw.buf<128xi32, ub> -> !ascend_hw.buf<16xi16, ub>
func.func @clamp(%x: memref<16xf32>, %out: memref<16xi16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<16xf32> -> !tile.tile<16xf32, ub>
  %u = tile.cast %t round floor : !tile.tile<16xf32, ub> -> !tile.tile<16xi16, ub>
  tile.store %u, %out[%c0] : !tile.tile<16xi16, ub> -> memref<16xi16>
  func.return
}

// -----

// CHECK-LABEL: func.func @i32_to_bf16
// CHECK:       ascend_hw.vcast trunc %{{.*}} -> %{{.*}} {mask = 16 : i64} : !ascend_hw.buf<16xi32, ub> -> !ascend_hw.buf<16xf32, ub>
// CHECK:       ascend_hw.vcast round %{{.*}} -> %{{.*}} {mask = 16 : i64} : !ascend_hw.buf<16xf32, ub> -> !ascend_hw.buf<16xbf16, ub>
// CHECK:       ascend_hw.vcast rint %{{.*}} -> %{{.*}} {mask = 16 : i64} : !ascend_hw.buf<16xf32, ub> -> !ascend_hw.buf<16xbf16, ub>
// CHECK:       ascend_hw.vcast rint %{{.*}} -> %[[Y:[0-9]+]] {mask = 16 : i64} : !ascend_hw.buf<16xf32, ub> -> !ascend_hw.buf<16xbf16, ub>
// CHECK-NEXT:  ascend_hw.dma_store %[[Y]] -> %out
func.func @i32_to_bf16(%x: memref<16xi32>, %out: memref<16xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<16xi32> -> !tile.tile<16xi32, ub>
  %u = tile.cast %t : !tile.tile<16xi32, ub> -> !tile.tile<16xbf16, ub>
  tile.store %u, %out[%c0] : !tile.tile<16xbf16, ub> -> memref<16xbf16>
  func.return
}
