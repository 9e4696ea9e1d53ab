// tile-to-hw's matmul-grid (on by default, forwarded by pypto-lower), when the
// matmul block rows are fewer than the cores: among the grids that give the
// busiest core the fewest blocks on the fewest cores, the one with the fewest
// block rows a core, with a remark. 1024^3 in 128 x 256 blocks (8 x 4) on
// ascend910b: 16 cores with two blocks each either way; 8 x 2 gives each core
// one block row, whose A panel it loads once, where 4 x 4 gave it two. With
// matmul-grid=false: 4 x 4, no remark.
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b}' 2>&1 >/dev/null | filecheck %s
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b matmul-grid=false}' 2>&1 >/dev/null | filecheck %s --check-prefix=OFF

func.func @rows(%a: !tv.tensor<1024x1024xf16>, %b: !tv.tensor<1024x1024xf16>) -> !tv.tensor<1024x1024xf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<1024x1024xf16>, !tv.tensor<1024x1024xf16> -> !tv.tensor<1024x1024xf16>
  func.return %c : !tv.tensor<1024x1024xf16>
}

// CHECK: remark: matmul block rows 8 x columns 4 split over a 8x2 grid of cores: 1 block row(s) a core instead of 2, the same blocks a core (tile-to-hw matmul-grid)

// OFF: remark: tiled tv.matmul 1024x1024x1024
// OFF-NOT: grid of cores
