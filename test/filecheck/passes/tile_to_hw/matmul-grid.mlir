// tile-to-hw's matmul-grid (on by default, forwarded by pypto-lower): matmul
// block rows that the cores do not divide evenly (5 rows of 32 x 32 blocks on
// tiny's 2 cores) are split over a grid of rows and columns when the busiest
// core gets fewer blocks (a 1 x 2 grid: 10 blocks each, not 12 by rows), with a
// remark; with matmul-grid=false the rows alone are split.
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=tiny matmul-panels=false}' 2>&1 >/dev/null | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=tiny matmul-panels=false matmul-grid=false}' 2>&1 >/dev/null | filecheck %s --check-prefix=OFF

func.func @grid(%a: !tv.tensor<160x64xf16>, %b: !tv.tensor<64x128xf16>) -> !tv.tensor<160x128xf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<160x64xf16>, !tv.tensor<64x128xf16> -> !tv.tensor<160x128xf16>
  func.return %c : !tv.tensor<160x128xf16>
}

// CHECK: remark: matmul block rows 5 x columns 4 split over a 1x2 grid of cores: 10 blocks on the busiest core instead of 12 by rows (tile-to-hw matmul-grid)

// OFF: remark: tiled tv.matmul 160x128x64
// OFF-NOT: grid of cores

// -----

// 4 block rows (128 rows): the 2 cores divide them evenly, rows alone.
func.func @even(%a: !tv.tensor<128x64xf16>, %b: !tv.tensor<64x128xf16>) -> !tv.tensor<128x128xf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<128x64xf16>, !tv.tensor<64x128xf16> -> !tv.tensor<128x128xf16>
  func.return %c : !tv.tensor<128x128xf16>
}

// CHECK: remark: tiled tv.matmul 128x128x64
// CHECK-NOT: grid of cores
