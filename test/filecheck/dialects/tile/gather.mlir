// tile.gather (rows of a ub tile at run-time indices read from an index tile,
// docs/sparse.md) prints in its custom form and survives a round trip through
// the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s
// RUN: pypto-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @gather
// CHECK-NEXT: %row = tile.gather %b[%cols, %k] : !tile.tile<1024x64xf16, ub>, !tile.tile<64xi32, ub> -> !tile.tile<1x64xf16, ub>
// CHECK-NEXT: %rows = tile.gather %c[%ids, %k] : !tile.tile<32x8xf32, ub, valid = [32, 5]>, !tile.tile<16xi16, ub> -> !tile.tile<4x8xf32, ub, valid = [4, 5]>
// GENERIC: "tile.gather"(%{{.*}}, %{{.*}}, %{{.*}}) : (!tile.tile<1024x64xf16, ub>, !tile.tile<64xi32, ub>, index) -> !tile.tile<1x64xf16, ub>
func.func @gather(%b: !tile.tile<1024x64xf16, ub>, %cols: !tile.tile<64xi32, ub>, %c: !tile.tile<32x8xf32, ub, valid = [32, 5]>, %ids: !tile.tile<16xi16, ub>, %k: index) -> (!tile.tile<1x64xf16, ub>, !tile.tile<4x8xf32, ub, valid = [4, 5]>) {
  %row = tile.gather %b[%cols, %k] : !tile.tile<1024x64xf16, ub>, !tile.tile<64xi32, ub> -> !tile.tile<1x64xf16, ub>
  %rows = tile.gather %c[%ids, %k] : !tile.tile<32x8xf32, ub, valid = [32, 5]>, !tile.tile<16xi16, ub> -> !tile.tile<4x8xf32, ub, valid = [4, 5]>
  func.return %row, %rows : !tile.tile<1x64xf16, ub>, !tile.tile<4x8xf32, ub, valid = [4, 5]>
}
