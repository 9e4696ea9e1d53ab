// Row fusion (tv-to-tile's row-fusion, passes/matmul_fusion.py): a softmax or
// reduction along the rows of a matmul result runs in the matmul's nest, on
// base blocks spanning whole rows, after the move out of l0c: no GM temporary.
// What it refuses keeps two nests and says why. Whether it pays is an estimate
// (matmul-row-fusion-cost.mlir); here, without tv-schedule's balance, the row
// nest would take few cores and fusion wins.
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' --verify-diagnostics | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b row-fusion=false}' 2>&1 | filecheck %s --check-prefix=OFF

// OFF-NOT: into the nest of tv.matmul

// CHECK-LABEL: func.func @softmax
// CHECK-NOT:  memref.alloc
// CHECK:      tile.matmul {{.*}} -> !tile.tile<16x512xf32, l0c>
// CHECK:      tile.move {{.*}} -> !tile.tile<16x512xf16, ub>
// CHECK:      tile.reduce_max
// CHECK:      tile.reduce_sum
// CHECK:      tile.store {{.*}}, %out
func.func @softmax(%q: !tv.tensor<128x64xf16>, %k: !tv.tensor<64x512xf16>) -> !tv.tensor<128x512xf16> {
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<128x64xf16>, !tv.tensor<64x512xf16> -> !tv.tensor<128x512xf16>
  // expected-remark @+3 {{fused tv.softmax into the nest of tv.matmul: its rows of 512 are reduced in ub after the move out of l0c (no GM round trip)}}
  // expected-remark @+2 {{rows reduced in the matmul's nest: estimated 7876 cycles with whole-row blocks and the rows reduced in their nest, 9075 with the matmul's best blocks, a sync_all and a row nest over the cores}}
  // expected-remark @+1 {{tiled tv.matmul 128x512x64: L1 blocks 16x512x64, L0 base blocks 16x512x32, 1 accumulator(s) in l0c, epilogue tv.softmax in ub}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<128x512xf16>
  func.return %p : !tv.tensor<128x512xf16>
}

// -----

// A bias, then a row sum and the biased result both returned, at odd sizes.
// CHECK-LABEL: func.func @bias_row_sum
// CHECK-NOT:  memref.alloc
// CHECK:      tile.matmul
// CHECK:      tile.add
// CHECK:      tile.store {{.*}}, %out0
// CHECK:      tile.reduce_sum
// CHECK:      tile.store {{.*}} -> memref<77x1xf16>
func.func @bias_row_sum(%a: !tv.tensor<77x40xf16>, %b: !tv.tensor<40x133xf16>, %c: !tv.tensor<133xf16>) -> (!tv.tensor<77x133xf16>, !tv.tensor<77xf16>) {
  %m = tv.matmul %a, %b acc(f32) : !tv.tensor<77x40xf16>, !tv.tensor<40x133xf16> -> !tv.tensor<77x133xf16>
  %y = tv.add %m, %c : !tv.tensor<77x133xf16>, !tv.tensor<133xf16> -> !tv.tensor<77x133xf16>
  // expected-remark @+3 {{fused tv.reduce_sum into the nest of tv.matmul: its rows of 133 are reduced in ub}}
  // expected-remark @+2 {{rows reduced in the matmul's nest: estimated 4236 cycles}}
  // expected-remark @+1 {{tiled tv.matmul 77x133x40: L1 blocks 16x144x48, L0 base blocks 16x144x48, 1 accumulator(s) in l0c, epilogue tv.add, tv.reduce_sum in ub}}
  %s = tv.reduce_sum %y [1] : !tv.tensor<77x133xf16> -> !tv.tensor<77xf16>
  func.return %y, %s : !tv.tensor<77x133xf16>, !tv.tensor<77xf16>
}

// -----

// A column sum: the blocks span whole rows, not whole columns.
// CHECK-LABEL: func.func @column_sum
// CHECK:      memref.alloc
func.func @column_sum(%a: !tv.tensor<64x32xf16>, %b: !tv.tensor<32x64xf16>) -> !tv.tensor<64xf16> {
  // expected-remark @+1 {{tiled tv.matmul 64x64x32}}
  %m = tv.matmul %a, %b acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+2 {{tv.reduce_sum not fused with tv.matmul: it reduces dims [0], not only the rows of the result (the matmul's blocks span whole rows, not whole columns)}}
  // expected-remark @+1 {{tiled tv.reduce_sum as one loop nest}}
  %s = tv.reduce_sum %m [0] : !tv.tensor<64x64xf16> -> !tv.tensor<64xf16>
  func.return %s : !tv.tensor<64xf16>
}

// -----

// Rows of a dynamic length.
// CHECK-LABEL: func.func @dynamic
// CHECK:      memref.alloc
func.func @dynamic(%a: !tv.tensor<64x32xf16>, %b: !tv.tensor<32x?xf16>) -> !tv.tensor<64x?xf16> {
  // expected-remark @+1 {{tiled tv.matmul 64x?x32}}
  %m = tv.matmul %a, %b acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x?xf16> -> !tv.tensor<64x?xf16>
  // expected-remark @+2 {{tv.softmax not fused with tv.matmul: the rows have a dynamic length (a block must hold a whole row)}}
  // expected-remark @+1 {{tiled tv.softmax as one loop nest}}
  %p = tv.softmax %m axis = 1 : !tv.tensor<64x?xf16>
  func.return %p : !tv.tensor<64x?xf16>
}

// -----

// Rows too long for one block: 8192 f32 accumulators of 16 rows need 512 KiB
// of l0c; the softmax becomes a nest of its own.
// CHECK-LABEL: func.func @long_rows
// CHECK:      memref.alloc
func.func @long_rows(%a: !tv.tensor<32x32xf16>, %b: !tv.tensor<32x8192xf16>) -> !tv.tensor<32x8192xf16> {
  // expected-remark @+1 {{tiled tv.matmul 32x8192x32}}
  %m = tv.matmul %a, %b acc(f32) : !tv.tensor<32x32xf16>, !tv.tensor<32x8192xf16> -> !tv.tensor<32x8192xf16>
  // expected-remark @+3 {{fused tv.softmax into the nest of tv.matmul}}
  // expected-remark @+2 {{epilogue tv.softmax not fused with tv.matmul: no base block spanning whole rows of 8192 fits target 'ascend910b' (l0c holds its f32 accumulators, ub the epilogue's tiles); the result goes through GM}}
  // expected-remark @+1 {{tiled tv.softmax as one loop nest over 32x8192}}
  %p = tv.softmax %m axis = 1 : !tv.tensor<32x8192xf16>
  func.return %p : !tv.tensor<32x8192xf16>
}
