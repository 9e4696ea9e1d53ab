// balance-cores: a column sum of 1024x768 f16 fits UB as 16x768 tiles, one
// parallel iteration for one core; tv-schedule asks tv-to-tile to balance the
// tiles over the target's 24 cores, and the target's DMA cost picks 32-column
// tiles (24 parallel iterations) with more rows. balance-cores=false keeps
// the largest tiles; explicit tile-sizes are kept as given. (split-reductions
// would split the rows instead: split-reductions.mlir.)
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b split-reductions=false},tv-to-tile' 2>&1 >/dev/null | filecheck %s
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b balance-cores=false split-reductions=false},tv-to-tile' 2>&1 >/dev/null | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b split-reductions=false},tv-to-tile{tile-sizes=64,64}' 2>&1 >/dev/null | filecheck %s --check-prefix=EXPLICIT

// CHECK:    remark: tiled tv.reduce_sum as one loop nest over 1024x768: ub tiles {{[0-9]+}}x32, 1 pass(es) over reduced dims [0]; {{.*}}, sized for 24 cores by cost
// OFF:      remark: tiled tv.reduce_sum as one loop nest over 1024x768: ub tiles 16x768,
// OFF-NOT:  sized for
// EXPLICIT: remark: tiled tv.reduce_sum as one loop nest over 1024x768: ub tiles 64x64,
// EXPLICIT-NOT: sized for
func.func @column_sum(%x: !tv.tensor<1024x768xf16>) -> !tv.tensor<768xf16> {
  %s = tv.reduce_sum %x [0] : !tv.tensor<1024x768xf16> -> !tv.tensor<768xf16>
  func.return %s : !tv.tensor<768xf16>
}
