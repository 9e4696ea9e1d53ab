// A matmul that accumulates writes its accumulator's buffer: the l0c tile of the
// first K step lives until the store of the last one, in every copy of the
// body. Two copies of a 32x32 f32 accumulator (8192 bytes) do not fit tiny's
// l0c (4096), so the loop keeps one copy per trip (counting the first step's
// tile only up to the next matmul, the model let two copies fit).
// RUN: pypto-opt %s --verify-diagnostics -p 'tile-pipeline{stages=2 target=tiny max_cores=1}' | filecheck %s

// CHECK:      scf.for
// CHECK-COUNT-3: tile.matmul
// CHECK-NOT:  tile.matmul
// CHECK:      tile.store
// CHECK-NEXT: }
func.func @f(%a: memref<64x48xf16>, %b: memref<48x32xf16>, %out: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  // expected-remark @+1 {{tile-pipeline: 1 stage(s) instead of 2: 2 stages need 8192 bytes of l0c, target has 4096}}
  scf.for %i = %c0 to %c64 step %c32 {
    %a0 = tile.load %a[%i, %c0] : memref<64x48xf16> -> !tile.tile<32x16xf16, l1, layout = nz>
    %b0 = tile.load %b[%c0, %c0] : memref<48x32xf16> -> !tile.tile<16x32xf16, l1, layout = nz>
    %a1 = tile.load %a[%i, %c16] : memref<64x48xf16> -> !tile.tile<32x16xf16, l1, layout = nz>
    %b1 = tile.load %b[%c16, %c0] : memref<48x32xf16> -> !tile.tile<16x32xf16, l1, layout = nz>
    %a2 = tile.load %a[%i, %c32] : memref<64x48xf16> -> !tile.tile<32x16xf16, l1, layout = nz>
    %b2 = tile.load %b[%c32, %c0] : memref<48x32xf16> -> !tile.tile<16x32xf16, l1, layout = nz>
    %l0a0 = tile.move %a0 : !tile.tile<32x16xf16, l1, layout = nz> -> !tile.tile<32x16xf16, l0a>
    %l0b0 = tile.move %b0 : !tile.tile<16x32xf16, l1, layout = nz> -> !tile.tile<16x32xf16, l0b>
    %c = tile.matmul %l0a0, %l0b0 : !tile.tile<32x16xf16, l0a>, !tile.tile<16x32xf16, l0b> -> !tile.tile<32x32xf32, l0c>
    %l0a1 = tile.move %a1 : !tile.tile<32x16xf16, l1, layout = nz> -> !tile.tile<32x16xf16, l0a>
    %l0b1 = tile.move %b1 : !tile.tile<16x32xf16, l1, layout = nz> -> !tile.tile<16x32xf16, l0b>
    %d = tile.matmul %l0a1, %l0b1, %c : !tile.tile<32x16xf16, l0a>, !tile.tile<16x32xf16, l0b> -> !tile.tile<32x32xf32, l0c>
    %l0a2 = tile.move %a2 : !tile.tile<32x16xf16, l1, layout = nz> -> !tile.tile<32x16xf16, l0a>
    %l0b2 = tile.move %b2 : !tile.tile<16x32xf16, l1, layout = nz> -> !tile.tile<16x32xf16, l0b>
    %e = tile.matmul %l0a2, %l0b2, %d : !tile.tile<32x16xf16, l0a>, !tile.tile<16x32xf16, l0b> -> !tile.tile<32x32xf32, l0c>
    tile.store %e, %out[%i, %c0] : !tile.tile<32x32xf32, l0c> -> memref<64x32xf32>
  }
  func.return
}
