// A prologue that does not fit ub next to the matmul's blocks (tiny's 4 KiB
// against a 16x128 f16 A chunk, given by matmul-tile-sizes) is computed by a
// nest of its own, the operand through GM, with a remark saying why.
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny matmul-tile-sizes=16,16,128,16,16,32}' --verify-diagnostics | filecheck %s
// RUN: pypto-run %s --check --target tiny --lower-options 'matmul-tile-sizes=16,16,128,16,16,32' | filecheck %s --check-prefix=SIM

// CHECK:      %[[T:.*]] = memref.alloc() : memref<32x128xf16>
// CHECK:      tile.relu
// CHECK:      tile.store %{{.*}}, %[[T]]
// CHECK:      tile.load %[[T]]
// CHECK:      tile.matmul
// SIM: check: ok
func.func @f(%x: !tv.tensor<32x128xf16>, %w: !tv.tensor<128x16xf16>) -> !tv.tensor<32x16xf16> {
  // expected-remark @+1 {{tiled tv.relu as one loop nest over 32x128}}
  %r = tv.relu %x : !tv.tensor<32x128xf16>
  // expected-remark @+3 {{fused prologue tv.relu into the nest of tv.matmul}}
  // expected-remark @+2 {{prologue tv.relu not fused: matmul-tile-sizes 16,16,128,16,16,32: ub needs 8192 bytes but ub of target 'tiny' holds 4096 bytes}}
  // expected-remark @+1 {{tiled tv.matmul 32x16x128}}
  %m = tv.matmul %r, %w acc(f32) : !tv.tensor<32x128xf16>, !tv.tensor<128x16xf16> -> !tv.tensor<32x16xf16>
  func.return %m : !tv.tensor<32x16xf16>
}
