// Row fusion by cost: tv-to-tile estimates the fused nest (whole-row blocks,
// each block's reductions after its matmul on the vector unit, pipelined with
// the next block) against two nests (the matmul with its best blocks, a
// sync_all, the row nest as tiled for tv-schedule's cores, reading the result
// from the L2) and keeps the cheaper. 128x64x512 (bench_fusion): 8 whole-row
// blocks leave 16 cores idle and nothing overlaps the softmax: two nests
// (simulated 7603 cycles vs 8137 fused). 2048x128x512: fused (34772 vs 35688).
// RUN: pypto-opt %s --split-input-file -p 'tv-schedule{target=ascend910b},tv-to-tile{target=ascend910b}' --verify-diagnostics | filecheck %s

// CHECK-LABEL: func.func @small
// CHECK:      memref.alloc
// CHECK:      tile.matmul
// CHECK:      tile.reduce_max
func.func @small(%q: !tv.tensor<128x64xf16>, %k: !tv.tensor<64x512xf16>) -> !tv.tensor<128x512xf16> {
  // expected-remark @+2 {{group 0 (matmul: tv.matmul)}}
  // expected-remark @+1 {{tiled tv.matmul 128x512x64: L1 blocks 16x256x64}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<128x64xf16>, !tv.tensor<64x512xf16> -> !tv.tensor<128x512xf16>
  // expected-remark @+4 {{group 1 (row: tv.softmax)}}
  // expected-remark @+3 {{fused tv.softmax into the nest of tv.matmul}}
  // expected-remark @+2 {{epilogue tv.softmax not fused with tv.matmul: two nests are estimated faster (7876 cycles with whole-row blocks and the rows reduced in their nest, 6842 with the matmul's best blocks, a sync_all and a row nest over the cores); the result goes through GM}}
  // expected-remark @+1 {{tiled tv.softmax as one loop nest over 128x512: ub tiles 6x512, reduced dims [1] kept whole in ub; 25136 bytes live of 196608 in ub (double-buffered), sized for 24 cores by cost}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<128x512xf16>
  func.return %p : !tv.tensor<128x512xf16>
}

// -----

// CHECK-LABEL: func.func @large
// CHECK-NOT:  memref.alloc
// CHECK:      tile.matmul {{.*}} -> !tile.tile<16x512xf32, l0c>
// CHECK:      tile.reduce_max
func.func @large(%q: !tv.tensor<2048x128xf16>, %k: !tv.tensor<128x512xf16>) -> !tv.tensor<2048x512xf16> {
  // expected-remark @+1 {{group 0 (matmul: tv.matmul)}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<2048x128xf16>, !tv.tensor<128x512xf16> -> !tv.tensor<2048x512xf16>
  // expected-remark @+4 {{group 1 (row: tv.softmax)}}
  // expected-remark @+3 {{fused tv.softmax into the nest of tv.matmul}}
  // expected-remark @+2 {{rows reduced in the matmul's nest: estimated 28922 cycles with whole-row blocks and the rows reduced in their nest, 33173 with the matmul's best blocks, a sync_all and a row nest over the cores}}
  // expected-remark @+1 {{tiled tv.matmul 2048x512x128: L1 blocks 48x512x128}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<2048x512xf16>
  func.return %p : !tv.tensor<2048x512xf16>
}
