// pypto-lower expands tv.sin before tiling: no tv.sin reaches tv-to-tile, and
// tile-to-hw, which has no sine instruction, is never asked for one.
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny}' | filecheck %s
// RUN: not pypto-opt %s -p 'pypto-set-target{target=tiny},tv-to-tile,tile-to-hw' 2>&1 | filecheck %s --check-prefix=UNEXPANDED

// CHECK-LABEL: func.func @rope
// CHECK-NOT:     tv.
// CHECK-NOT:     tile.
// CHECK:         ascend_hw.vmuls
// CHECK:         ascend_hw.vadds
// UNEXPANDED:    error: tile-to-hw cannot lower tile.sin
func.func @rope(%x: !tv.tensor<8x40xf32>) -> !tv.tensor<8x40xf32> {
  %s = tv.sin %x : !tv.tensor<8x40xf32>
  func.return %s : !tv.tensor<8x40xf32>
}
