// Every op of a nest has the location of the tv op it implements (loads: the op
// that reads the tile; the loops and stores: the group's root), so that a later
// pass refusing one of them reports the kernel's line, not the function.
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=tiny}' --print-debuginfo 2>/dev/null | filecheck %s

func.func @f(%x: !tv.tensor<200x8xf32>, %b: !tv.tensor<8xf32>) -> !tv.tensor<200x8xf32> {
  %e = tv.exp %x : !tv.tensor<200x8xf32>
  %y = tv.add %e, %b : !tv.tensor<200x8xf32>, !tv.tensor<8xf32> -> !tv.tensor<200x8xf32>
  func.return %y : !tv.tensor<200x8xf32>
}

// CHECK-LABEL: func.func @f
// CHECK:      memref.expand_shape {{.*}} loc("{{.*}}locations.mlir":8:3)
// CHECK:      tile.load %{{.*}} -> !tile.tile<1x8xf32, ub> loc("{{.*}}locations.mlir":8:3)
// CHECK:      scf.for
// CHECK:        tile.load %x{{.*}} loc("{{.*}}locations.mlir":7:3)
// CHECK-NEXT:   tile.exp {{.*}} loc("{{.*}}locations.mlir":7:3)
// CHECK-NEXT:   tile.add {{.*}} loc("{{.*}}locations.mlir":8:3)
// CHECK-NEXT:   tile.store {{.*}} loc("{{.*}}locations.mlir":8:3)
// CHECK:      } loc("{{.*}}locations.mlir":8:3)

// -----

// A returned view is copied by a nest of its own, located at the view.
// CHECK-LABEL: func.func @view
func.func @view(%x: !tv.tensor<20x30xf32>) -> !tv.tensor<5x7xf32> {
  // CHECK:       tile.load {{.*}} loc("{{.*}}locations.mlir":[[# @LINE + 2]]:3)
  // CHECK-NEXT:  tile.store {{.*}} loc("{{.*}}locations.mlir":[[# @LINE + 1]]:3)
  %v = tv.view %x[4, 3][5, 7][2, 3] : !tv.tensor<20x30xf32> to !tv.tensor<5x7xf32>
  func.return %v : !tv.tensor<5x7xf32>
}
