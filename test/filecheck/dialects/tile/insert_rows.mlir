// tile.insert_rows (rows of a ub tile written into another at a run-time row,
// the block stores of the CSR spmm, docs/sparse.md) prints in its custom form
// and survives a round trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s
// RUN: pypto-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @insert_rows
// CHECK-NEXT: %a = tile.insert_rows %row, %block[%r] : !tile.tile<1x128xf32, ub>, !tile.tile<16x128xf32, ub>
// CHECK-NEXT: %b = tile.insert_rows %pair, %narrow[%r] : !tile.tile<2x16xf16, ub, valid = [2, 5]>, !tile.tile<8x16xf16, ub, valid = [?, 5]>
// GENERIC: "tile.insert_rows"(%{{.*}}, %{{.*}}, %{{.*}}) : (!tile.tile<1x128xf32, ub>, !tile.tile<16x128xf32, ub>, index) -> !tile.tile<16x128xf32, ub>
func.func @insert_rows(%row: !tile.tile<1x128xf32, ub>, %block: !tile.tile<16x128xf32, ub>, %pair: !tile.tile<2x16xf16, ub, valid = [2, 5]>, %narrow: !tile.tile<8x16xf16, ub, valid = [?, 5]>, %r: index) -> (!tile.tile<16x128xf32, ub>, !tile.tile<8x16xf16, ub, valid = [?, 5]>) {
  %a = tile.insert_rows %row, %block[%r] : !tile.tile<1x128xf32, ub>, !tile.tile<16x128xf32, ub>
  %b = tile.insert_rows %pair, %narrow[%r] : !tile.tile<2x16xf16, ub, valid = [2, 5]>, !tile.tile<8x16xf16, ub, valid = [?, 5]>
  func.return %a, %b : !tile.tile<16x128xf32, ub>, !tile.tile<8x16xf16, ub, valid = [?, 5]>
}
