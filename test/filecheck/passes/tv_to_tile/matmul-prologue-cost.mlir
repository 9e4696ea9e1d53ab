// Prologue fusion by cost (tv-to-tile's prologue-fusion, passes/matmul_model.py
// fused_prologue_cycles / prologue_nest_cycles): a computed operand is kept in
// the matmul's nest only when that is estimated faster than its own nest over
// the cores, a sync_all and the matmul's best blocks (A panels allowed again);
// the remark gives both estimates. exp(w) of B recomputed for each of 16 block
// rows of 4096x512x256 is estimated slower (simulated: 41250 cycles fused,
// 31239 as two nests), relu(x) of A at 512^3 faster (11338 vs 15128).
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=ascend910b prologue-fusion=false}' 2>&1 | filecheck %s --check-prefix=OFF

// OFF-NOT: remark: prologue
// OFF-NOT: fused prologue

// CHECK:       remark: prologue tv.exp not fused: two nests are estimated faster ([[FUSED:[0-9]+]] cycles with the operand computed on each block in the matmul's nest, [[SPLIT:[0-9]+]] with a nest of its own over the cores, a sync_all and the matmul's best blocks)
// CHECK-LABEL: func.func @exp_rhs
// CHECK:       memref.alloc() : memref<512x256xf16>
// CHECK:       tile.exp
// CHECK:       tile.store
// CHECK:       tile.matmul
func.func @exp_rhs(%x: !tv.tensor<4096x512xf16>, %w: !tv.tensor<512x256xf16>) -> !tv.tensor<4096x256xf16> {
  %s = tv.exp %w : !tv.tensor<512x256xf16>
  %m = tv.matmul %x, %s acc(f32) : !tv.tensor<4096x512xf16>, !tv.tensor<512x256xf16> -> !tv.tensor<4096x256xf16>
  func.return %m : !tv.tensor<4096x256xf16>
}

// -----

// CHECK:       remark: prologue kept in the matmul's nest: estimated {{[0-9]+}} cycles with the operand computed on each block in the matmul's nest, {{[0-9]+}} with a nest of its own
// CHECK-LABEL: func.func @relu_lhs
// CHECK-NOT:   memref.alloc
// CHECK:       tile.relu
// CHECK:       tile.matmul
func.func @relu_lhs(%x: !tv.tensor<512x512xf16>, %w: !tv.tensor<512x512xf16>) -> !tv.tensor<512x512xf16> {
  %r = tv.relu %x : !tv.tensor<512x512xf16>
  %m = tv.matmul %r, %w acc(f32) : !tv.tensor<512x512xf16>, !tv.tensor<512x512xf16> -> !tv.tensor<512x512xf16>
  func.return %m : !tv.tensor<512x512xf16>
}
