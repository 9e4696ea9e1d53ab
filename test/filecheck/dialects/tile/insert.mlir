// tile.insert (a scalar write of one element of a ub tile, the counterpart of
// tile.extract, docs/sparse.md) prints in its custom form and survives a round
// trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s
// RUN: pypto-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @insert
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %a = tile.insert %v, %row[%c0, %j] : f32, !tile.tile<1x64xf32, ub>
// CHECK-NEXT: %b = tile.insert %h, %halves[%j] : f16, !tile.tile<64xf16, ub, valid = [?]>
// CHECK-NEXT: %c = tile.insert %j, %ids[%j] : index, !tile.tile<64xi32, ub>
// CHECK-NEXT: %d = tile.insert %j, %rows[%c0, %j] : index, !tile.tile<2x16xi16, ub>
// GENERIC: "tile.insert"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (f32, !tile.tile<1x64xf32, ub>, index, index) -> !tile.tile<1x64xf32, ub>
func.func @insert(%row: !tile.tile<1x64xf32, ub>, %halves: !tile.tile<64xf16, ub, valid = [?]>, %ids: !tile.tile<64xi32, ub>, %rows: !tile.tile<2x16xi16, ub>, %v: f32, %h: f16, %j: index) -> (!tile.tile<1x64xf32, ub>, !tile.tile<64xf16, ub, valid = [?]>, !tile.tile<64xi32, ub>, !tile.tile<2x16xi16, ub>) {
  %c0 = arith.constant 0 : index
  %a = tile.insert %v, %row[%c0, %j] : f32, !tile.tile<1x64xf32, ub>
  %b = tile.insert %h, %halves[%j] : f16, !tile.tile<64xf16, ub, valid = [?]>
  %c = tile.insert %j, %ids[%j] : index, !tile.tile<64xi32, ub>
  %d = tile.insert %j, %rows[%c0, %j] : index, !tile.tile<2x16xi16, ub>
  func.return %a, %b, %c, %d : !tile.tile<1x64xf32, ub>, !tile.tile<64xf16, ub, valid = [?]>, !tile.tile<64xi32, ub>, !tile.tile<2x16xi16, ub>
}
