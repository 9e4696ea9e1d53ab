// A window of an l1 tile moved to l0a/l0b is a load_l0 from the window's
// offsets (in the source's coordinates, also when transposed) of whole fractals:
// the last window of A has 4 of 16 valid columns, load_l0 reads the whole
// fractal column (zero-padded in l1), mmad multiplies k = 4.
// RUN: pypto-opt %s -p 'tile-to-hw{target=ascend910b}' | filecheck %s

func.func @f(%a: memref<16x36xf16>, %b: memref<16x36xf16>, %c: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %la = tile.load %a[%c0, %c0] : memref<16x36xf16> -> !tile.tile<16x48xf16, l1, valid = [16, 36], layout = nz, pad = zero>
  %lb = tile.load %b[%c0, %c0] : memref<16x36xf16> -> !tile.tile<16x48xf16, l1, valid = [16, 36], layout = nz, pad = zero>
  %a0 = tile.move %la window [0, 0] : !tile.tile<16x48xf16, l1, valid = [16, 36], layout = nz, pad = zero> -> !tile.tile<16x32xf16, l0a, pad = zero>
  %b0 = tile.move %lb window [0, 0] transpose : !tile.tile<16x48xf16, l1, valid = [16, 36], layout = nz, pad = zero> -> !tile.tile<32x16xf16, l0b, pad = zero>
  %a1 = tile.move %la window [0, 32] : !tile.tile<16x48xf16, l1, valid = [16, 36], layout = nz, pad = zero> -> !tile.tile<16x16xf16, l0a, valid = [16, 4], pad = zero>
  %b1 = tile.move %lb window [0, 32] transpose : !tile.tile<16x48xf16, l1, valid = [16, 36], layout = nz, pad = zero> -> !tile.tile<16x16xf16, l0b, valid = [4, 16], pad = zero>
  %p = tile.matmul %a0, %b0 : !tile.tile<16x32xf16, l0a, pad = zero>, !tile.tile<32x16xf16, l0b, pad = zero> -> !tile.tile<16x16xf32, l0c>
  %q = tile.matmul %a1, %b1, %p : !tile.tile<16x16xf16, l0a, valid = [16, 4], pad = zero>, !tile.tile<16x16xf16, l0b, valid = [4, 16], pad = zero> -> !tile.tile<16x16xf32, l0c>
  tile.store %q, %c[%c0, %c0] : !tile.tile<16x16xf32, l0c> -> memref<16x16xf32>
  func.return
}

// CHECK-LABEL: func.func @f(
// CHECK:         ascend_hw.load_l0 %[[LA:.*]][%[[C0:.*]], %[[C0]]] -> %{{.*}}[%[[C0]], %[[C0]]] {rows = 16 : i64, cols = 32 : i64} : !ascend_hw.buf<16x48xf16, l1, nz>
// CHECK-NEXT:    ascend_hw.load_l0 %[[LB:.*]][%[[C0]], %[[C0]]] -> %{{.*}}[%[[C0]], %[[C0]]] {rows = 32 : i64, cols = 16 : i64, transpose} : !ascend_hw.buf<16x48xf16, l1, nz>
// CHECK-NEXT:    ascend_hw.load_l0 %[[LA]][%[[C0]], %[[C32:.*]]] -> %{{.*}}[%[[C0]], %[[C0]]] {rows = 16 : i64, cols = 16 : i64} : !ascend_hw.buf<16x48xf16, l1, nz>
// CHECK-NEXT:    ascend_hw.load_l0 %[[LB]][%[[C0]], %[[C32]]] -> %{{.*}}[%[[C0]], %[[C0]]] {rows = 16 : i64, cols = 16 : i64, transpose} : !ascend_hw.buf<16x48xf16, l1, nz>
// CHECK-NEXT:    ascend_hw.mmad %{{.*}}, %{{.*}} -> %[[ACC:.*]] {m = 16 : i64, n = 16 : i64, k = 32 : i64}
// CHECK-NEXT:    ascend_hw.mmad %{{.*}}, %{{.*}} -> %[[ACC]] {m = 16 : i64, n = 16 : i64, k = 4 : i64, accumulate}
