// tile.extract (a scalar read of an index or value tile, docs/sparse.md) prints in its
// custom form and survives a round trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s
// RUN: pypto-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @extract
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %col = tile.extract %ids[%j] : !tile.tile<64xi32, ub> -> index
// CHECK-NEXT: %row = tile.extract %rows[%c0, %j] : !tile.tile<2x16xi16, ub> -> index
// CHECK-NEXT: %v = tile.extract %vals[%j] : !tile.tile<64xf32, ub> -> f32
// CHECK-NEXT: %h = tile.extract %halves[%j] : !tile.tile<64xf16, ub> -> f16
// GENERIC: "tile.extract"(%{{.*}}, %{{.*}}) : (!tile.tile<64xi32, ub>, index) -> index
func.func @extract(%ids: !tile.tile<64xi32, ub>, %rows: !tile.tile<2x16xi16, ub>, %vals: !tile.tile<64xf32, ub>, %halves: !tile.tile<64xf16, ub>, %j: index) -> (index, index, f32, f16) {
  %c0 = arith.constant 0 : index
  %col = tile.extract %ids[%j] : !tile.tile<64xi32, ub> -> index
  %row = tile.extract %rows[%c0, %j] : !tile.tile<2x16xi16, ub> -> index
  %v = tile.extract %vals[%j] : !tile.tile<64xf32, ub> -> f32
  %h = tile.extract %halves[%j] : !tile.tile<64xf16, ub> -> f16
  func.return %col, %row, %v, %h : index, index, f32, f16
}
