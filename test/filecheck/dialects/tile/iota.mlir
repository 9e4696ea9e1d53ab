// tile.iota (the lane positions of a computed mask) prints in its custom form,
// with the operands of its `?` extents, and survives a round trip through the
// generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s

// CHECK-LABEL: func.func @iota
func.func @iota(%n: index) {
  // CHECK: %{{.*}} = tile.iota : !tile.tile<8x64xi32, ub>
  %a = tile.iota : !tile.tile<8x64xi32, ub>
  // CHECK: %{{.*}} = tile.iota valid [%{{.*}}] : !tile.tile<4x64xi32, ub, valid = [4, ?]>
  %b = tile.iota valid [%n] : !tile.tile<4x64xi32, ub, valid = [4, ?]>
  func.return
}
